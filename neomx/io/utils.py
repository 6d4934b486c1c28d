"""``mx.io.utils``: the array types and constructors ``NDArrayIter`` works with, and ``h5py``
(the module when installed, else None) for iterating over HDF5 datasets, as in MXNet."""
from ..ndarray.ndarray import NDArray, array
from ..ndarray.sparse import CSRNDArray, array as sparse_array

__all__ = ['NDArray', 'CSRNDArray', 'array', 'sparse_array']


def __getattr__(name):
    # h5py is optional and imported on first use only.
    if name == 'h5py':
        try:
            import h5py  # pylint: disable=import-outside-toplevel
        except ImportError:
            return None
        return h5py
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__():
    # h5py is listed as MXNet's module lists it, though it is looked up only when read
    return sorted(list(globals()) + ['h5py'])
