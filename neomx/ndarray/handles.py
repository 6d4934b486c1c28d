"""Raw handles standing for NDArrays, for MXNet code that passes them through ctypes.

MXNet hands monitor callbacks an ``NDArrayHandle`` (a ``ctypes.c_void_p``) that the
callback wraps again with ``NDArray(handle, writable=False)``, after
``ctypes.cast(arr, NDArrayHandle)``. neomx passes the NDArray itself; ``ctypes.cast`` of
one gives a handle (see ``NDArray._as_parameter_``) that names it while it lives, and
``NDArray(handle)`` is then a view of the same array. The handle is the array's ``id``:
nothing is dereferenced, only looked up among the live arrays.
"""
import ctypes
import weakref

from ..base import MXNetError

__all__ = ['handle_of', 'array_of', 'held_handle']

_LIVE = weakref.WeakValueDictionary()
# arrays that only a handle names so far (``_new_empty_handle``): kept alive until wrapped
_HELD = {}


def handle_of(array):
    """The handle of NDArray ``array`` (kept findable while the array lives)."""
    _LIVE[id(array)] = array
    return ctypes.c_void_p(id(array))


def array_of(handle):
    """The live NDArray that ``handle`` (a ``ctypes.c_void_p`` from :func:`handle_of`) names."""
    array = _HELD.pop(handle.value, None)
    if array is None:           # not `or`: that would test the array's value, and drop it
        array = _LIVE.get(handle.value)
    if array is None:
        raise MXNetError('NDArray handle %r names no live NDArray' % (handle.value,))
    return array


def held_handle(array):
    """A handle naming ``array``, which lives on until ``NDArray(handle)`` wraps it (the
    handle is then all that names it)."""
    _HELD[id(array)] = array
    return handle_of(array)
