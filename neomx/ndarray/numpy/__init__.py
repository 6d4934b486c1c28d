"""``mx.nd.np`` (MXNet 1.9.1's ``mxnet.ndarray.numpy``): ``mx.np``'s functions, which take and
return ``mx.np`` arrays.

``neomx.numpy`` sits above this package, so :mod:`neomx.numpy_extension` puts the functions
here when it is imported (``import neomx`` does).
"""
from . import internal, linalg, random  # noqa: F401
_internal = internal     # MXNet's name: mx.nd.np._internal
