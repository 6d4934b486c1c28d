"""``mx.sym.linalg``: the ``_linalg_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""
