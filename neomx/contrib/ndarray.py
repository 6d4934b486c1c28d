"""``mx.contrib.ndarray`` (``mx.contrib.nd``): MXNet's second home of the contrib operators,
the very functions of ``mx.nd.contrib`` (``mx.contrib.nd.box_nms is mx.nd.contrib.box_nms``);
as in MXNet, only the registry's operators, not ``mx.nd.contrib``'s Python helpers."""
from ..ndarray import contrib as _contrib
from ._operators import contrib_operator_names

__all__ = contrib_operator_names()
globals().update({_name: getattr(_contrib, _name) for _name in __all__})
