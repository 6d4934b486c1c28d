"""``mx.contrib.symbol`` (``mx.contrib.sym``): MXNet's second home of the contrib operators,
the very functions of ``mx.sym.contrib``; as in MXNet, only the registry's operators, not
``mx.sym.contrib``'s Python helpers."""
from ..symbol import contrib as _contrib
from ._operators import contrib_operator_names

__all__ = contrib_operator_names()
globals().update({_name: getattr(_contrib, _name) for _name in __all__})
