"""``mx.sym.sparse``: the ``_sparse_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""
