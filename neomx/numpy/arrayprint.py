"""``mx.np.set_printoptions`` (MXNet 1.9.1's ``mxnet.numpy.arrayprint``)."""
from .multiarray import set_printoptions

__all__ = ['set_printoptions']
