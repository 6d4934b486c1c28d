"""``mx.npx.save`` / ``mx.npx.load``: MXNet's array files, holding ``mx.np`` arrays."""
from ..ndarray import utils as _nd_utils
from ..util import is_np_array, is_np_shape
from .. import numpy as _np

__all__ = ['save', 'load']


def _require_numpy_semantics(action):
    if not (is_np_shape() and is_np_array()):
        raise ValueError('Cannot %s `mxnet.numpy.ndarray` in legacy mode. Please activate numpy '
                         'semantics by calling `npx.set_np()` in the global scope before calling '
                         'this function.' % action)


def save(file, arr):
    """Save an ``ndarray``, a list of them or a dict of str -> ``ndarray`` to ``file`` in
    MXNet's format (``mx.nd.load`` and MXNet read it). NumPy semantics must be on.

    Raises
    ------
    TypeError
        For values other than ``mx.np`` arrays, or non-string keys.
    ValueError
        Outside NumPy semantics, or for another kind of ``arr``.
    """
    _require_numpy_semantics('save')
    if isinstance(arr, _np.ndarray):
        arr = [arr]
    if isinstance(arr, dict):
        if any(not isinstance(k, str) for k in arr) or any(not isinstance(v, _np.ndarray) for v in arr.values()):
            raise TypeError('Only accepts dict str->ndarray or list of ndarrays')
        data = {k: v.as_nd_ndarray() for k, v in arr.items()}
    elif isinstance(arr, list):
        if any(not isinstance(v, _np.ndarray) for v in arr):
            raise TypeError('Only accepts dict str->ndarray or list of ndarrays')
        data = [v.as_nd_ndarray() for v in arr]
    else:
        raise ValueError('data needs to either be a ndarray, dict of (str, ndarray) pairs or a list of ndarrays.')
    _nd_utils.save(file, data)


def load(file):
    """The arrays saved in ``file``: a list of ``mx.np`` arrays, or a dict of str -> array
    where they were saved with names. NumPy semantics must be on.

    >>> import tempfile, os
    >>> from neomx import np, npx
    >>> npx.set_np()
    >>> path = os.path.join(tempfile.mkdtemp(), 'x.npx')
    >>> npx.save(path, {'w': np.ones((2,))})
    >>> npx.load(path)
    {'w': array([1., 1.])}
    >>> npx.reset_np()
    """
    _require_numpy_semantics('load')
    if not isinstance(file, str):
        raise TypeError('file required to be a string')
    loaded = _nd_utils.load(file)
    if isinstance(loaded, dict):
        return {k: v.as_np_ndarray() for k, v in loaded.items()}
    return [v.as_np_ndarray() for v in loaded]
