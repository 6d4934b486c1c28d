"""``mx.nd.npx`` (MXNet 1.9.1's ``mxnet.ndarray.numpy_extension``): ``mx.npx``'s operator
functions, which take and return ``mx.np`` arrays.

``neomx.numpy`` sits above this package, so :mod:`neomx.numpy_extension` puts the functions
here when it is imported (``import neomx`` does).
"""
from . import image, random  # noqa: F401
