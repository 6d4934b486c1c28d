"""``mx.sym.contrib``: the ``_contrib_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""
