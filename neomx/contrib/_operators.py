"""The names of the contrib operators, shared by ``mx.contrib.ndarray`` and ``mx.contrib.symbol``."""
from ..operator import registry

_PREFIX = '_contrib_'


def contrib_operator_names():
    """The public names (``box_nms``...) of the registry's ``_contrib_*`` operators, sorted."""
    return sorted(name[len(_PREFIX):] for name in registry.all_ops() if name.startswith(_PREFIX))
