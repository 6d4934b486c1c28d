"""``mx.np.genfromtxt`` (MXNet 1.9.1's ``mxnet.numpy.io``)."""
from .multiarray import genfromtxt

__all__ = ['genfromtxt']
