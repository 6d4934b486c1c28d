"""``mx.sym.sparse``: the ``_sparse_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""
from .._op_fallback import fallback_to_op

__getattr__ = fallback_to_op(__package__, 'mx.sym.sparse')
