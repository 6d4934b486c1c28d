"""The few entries of MXNet's C library (``mx.base._LIB``) that Python code calls through
ctypes, answered from neomx's own state: user code and MXNet's tests list the registered
operators with ``_LIB.MXListAllOpNames``. ``import neomx`` sets ``neomx.base._LIB``."""
import ctypes

from .operator import registry

__all__ = ['CLibrary']


def _set_pointer(out, address):
    """Write ``address`` into the ctypes pointer that ``out`` (``ctypes.byref(ptr)``) refers to."""
    target = out._obj if hasattr(out, '_obj') else out
    ctypes.memmove(ctypes.addressof(target), ctypes.byref(ctypes.c_void_p(address)), ctypes.sizeof(ctypes.c_void_p))


class CLibrary:
    """The object at ``mx.base._LIB``: MXNet C API functions neomx answers, called with ctypes
    arguments as with MXNet's library; each returns 0 (success).

    Example
    -------
    >>> import ctypes
    >>> size, names = ctypes.c_uint(), ctypes.POINTER(ctypes.c_char_p)()
    >>> mx.base._LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names))
    0
    >>> b'FullyConnected' in [names[i] for i in range(size.value)]
    True
    """

    def __init__(self):
        self._kept = None       # the last returned array: the caller reads it after the call

    def MXListAllOpNames(self, out_size, out_array):    # pylint: disable=invalid-name
        """The names of all registered operators (aliases included)."""
        names = sorted(registry.all_ops())
        self._kept = (ctypes.c_char_p * len(names))(*[n.encode('utf-8') for n in names])
        (out_size._obj if hasattr(out_size, '_obj') else out_size).value = len(names)
        _set_pointer(out_array, ctypes.addressof(self._kept))
        return 0
