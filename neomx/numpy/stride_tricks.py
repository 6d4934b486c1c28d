"""``mx.np.broadcast_arrays`` (MXNet 1.9.1's ``mxnet.numpy.stride_tricks``)."""
from .multiarray import broadcast_arrays

__all__ = ['broadcast_arrays']
