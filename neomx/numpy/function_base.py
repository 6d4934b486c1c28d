"""``mx.np.meshgrid`` (MXNet 1.9.1's ``mxnet.numpy.function_base``)."""
from .multiarray import meshgrid

__all__ = ['meshgrid']
