"""``mx.nd.save`` / ``mx.nd.load`` / ``mx.nd.load_frombuffer``: NDArrays in MXNet's binary ``.params``
format, whose layout :mod:`neomx.ndarray.params_format` reads and writes."""
import os

from .. import _fileio
from ..base import MXNetError
from ..context import cpu
from . import params_format
from .ndarray import NDArray, _new, array, empty, zeros  # noqa: F401  (MXNet's utils has them)
from .sparse_arrays import BaseSparseNDArray, from_sparse_tensor

__all__ = ['zeros', 'empty', 'array', 'save', 'load', 'load_frombuffer']

# MXNet's module also holds these creation functions
from .ndarray import array, empty, zeros  # noqa: E402,F401


def _entries(data):
    """``data`` as (names, arrays); names is empty for a list. Checks types as MXNet does."""
    if isinstance(data, NDArray):
        return [], [data]
    if isinstance(data, dict):
        names, arrays = list(data.keys()), list(data.values())
        if not all(isinstance(k, str) for k in names) or not all(isinstance(v, NDArray) for v in arrays):
            raise TypeError('save only accept dict str->NDArray or list of NDArray')
        return names, arrays
    if isinstance(data, list):
        if not all(isinstance(v, NDArray) for v in data):
            raise TypeError('save only accept dict str->NDArray or list of NDArray')
        return [], data
    raise ValueError('data needs to either be a NDArray, dict of str, NDArray pairs or a list of NDarrays.')


def save(fname, data):
    """Save NDArrays to ``fname`` in MXNet's ``.params`` format.

    Parameters
    ----------
    fname : str or os.PathLike
        Destination; replaced atomically.
    data : NDArray, list of NDArray or dict of str to NDArray
        A single NDArray is saved as a one-element list.

    Raises
    ------
    TypeError
        For non-str dict keys or non-NDArray values.
    ValueError
        When ``data`` is none of the accepted containers.
    """
    names, arrays = _entries(data)      # bad input is rejected before touching the file system
    # a sparse array is written from its compressed parts (MXNet's sparse layout)
    tensors = [(a._sparse() if isinstance(a, BaseSparseNDArray) else a._t, a._ctx) for a in arrays]
    _fileio.write_atomic(fname, params_format.serialise(names, tensors))


def _arrays(buf, source):
    names, tensors = params_format.parse(buf, source)
    ctx = cpu(0)
    arrays = [from_sparse_tensor(t, ctx) for t in tensors]
    return dict(zip(names, arrays)) if names else arrays


def load(fname):
    """Load NDArrays saved by :func:`save` or by MXNet.

    Parameters
    ----------
    fname : str or os.PathLike

    Returns
    -------
    list of NDArray or dict of str to NDArray
        A dict when the file has names; arrays are on cpu(0). An empty ("none") array
        that MXNet saved loads as a float32 array of shape (0,).

    Raises
    ------
    MXNetError
        When the file is missing, unreadable, truncated or corrupt (naming the byte offset).
    """
    fname = os.fspath(fname)
    try:
        with _fileio.open_for_read(fname) as f:
            buf = f.read()
    except OSError as err:
        raise MXNetError('cannot read %s: %s' % (fname, err.strerror or err)) from None
    return _arrays(buf, fname)


def load_named(fname):
    """The ``{name: NDArray}`` of a parameters file; MXNetError naming the file when its
    arrays have no names (a list saved with ``mx.nd.save``). An empty file gives ``{}``."""
    loaded = load(fname)
    if isinstance(loaded, list):
        if loaded:
            raise MXNetError('%s holds %d arrays without names (a list saved with mx.nd.save); '
                             'parameters load from a file of named arrays, as save_parameters, '
                             'save_checkpoint or mx.nd.save of a dict write' % (fname, len(loaded)))
        return {}
    return loaded


def load_frombuffer(buf):
    """Load NDArrays from the bytes of a ``.params`` file (see :func:`load`).

    Parameters
    ----------
    buf : bytes, bytearray or memoryview
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError('buf required to be bytes, got %s' % type(buf).__name__)
    return _arrays(buf, '.params buffer')
