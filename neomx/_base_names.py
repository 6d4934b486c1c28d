"""Small public names of MXNet's ``mx.base`` that user and test code import.

MXNet defines them around its C library; here they are plain Python with the same meaning
(``py_str`` decodes C strings, ``mx_real_t`` is the default float type, ``_as_list`` wraps
single values), re-exported by ``neomx.base``.
"""
import ctypes
import os

import numpy as np

mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)
mx_real_t = np.float32
long = int
basestring = str


def py_str(x):
    """A Python str from bytes (UTF-8) or str."""
    return x.decode('utf-8') if isinstance(x, bytes) else x


def c_str(string):
    """A C string (``ctypes.c_char_p``) holding ``string`` in UTF-8."""
    return ctypes.c_char_p(string.encode('utf-8'))


def c_str_array(strings):
    """A C array of C strings."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode('utf-8') for s in strings]
    return arr


def c_array(ctype, values):
    """A C array of ``ctype`` holding ``values``."""
    return (ctype * len(values))(*values)


def c_array_buf(ctype, buf):
    """A C array of ``ctype`` over the buffer ``buf`` (no copy)."""
    return (ctype * len(buf)).from_buffer(buf)


def ctypes2numpy_shared(cptr, shape):
    """A float32 numpy array of ``shape`` over the memory ``cptr`` (a ``POINTER(mx_float)``)
    points to, sharing it."""
    if not isinstance(cptr, mx_float_p):
        raise RuntimeError('expected float pointer')
    size = int(np.prod(shape, dtype=np.int64))
    buffer = (mx_float * size).from_address(ctypes.addressof(cptr.contents))
    return np.frombuffer(buffer, dtype=np.float32).reshape(shape)


class MXCallbackList(ctypes.Structure):
    """MXNet's C layout of a list of callbacks (what its custom-operator properties receive).

    Example
    -------
    >>> callbacks = MXCallbackList(num_callbacks=0)
    >>> callbacks.num_callbacks, bool(callbacks.callbacks)
    (0, False)
    """
    _fields_ = [('num_callbacks', ctypes.c_int),
                ('callbacks', ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
                ('contexts', ctypes.POINTER(ctypes.c_void_p))]


def _as_list(obj):
    """``obj`` itself if it is a list or tuple, else ``[obj]``."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


def data_dir_default():
    """The default data folder, ``~/.mxnet`` (``$MXNET_HOME`` overrides it in ``data_dir``)."""
    return os.path.join(os.path.expanduser('~'), '.mxnet')


class classproperty:
    """A read-only property of a class (``Cls.name`` calls ``func(Cls)``)."""

    def __init__(self, func):
        self.func = func

    def __get__(self, obj, owner):
        return self.func(owner)


def with_metaclass(meta, *bases):
    """A base class built with metaclass ``meta`` (Python 2/3 compatible spelling)."""
    return meta('temporary_class', bases or (object,), {})


class _NullType:
    """The sentinel MXNet's generated operator functions use for 'argument not given'."""

    def __repr__(self):
        return '_Null'


_Null = _NullType()


def c_handle_array(objs):
    """A C array of the handles of ``objs`` (what ctypes passes for each: ``_as_parameter_``)."""
    return (ctypes.c_void_p * len(objs))(*[getattr(o, '_as_parameter_', o) for o in objs])


class MXCallbackList(ctypes.Structure):
    """MXNet's C structure of callbacks (custom operators, autograd functions): a count,
    the function pointers and their contexts."""
    _fields_ = [('num_callbacks', ctypes.c_int),
                ('callbacks', ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
                ('contexts', ctypes.POINTER(ctypes.c_void_p))]


def ctypes2numpy_shared(cptr, shape):
    """A float32 numpy array of ``shape`` over the memory ``cptr`` (a ``POINTER(c_float)``)
    points to, sharing it."""
    if not isinstance(cptr, ctypes.POINTER(mx_float)):
        raise RuntimeError('expected float pointer')
    size = int(np.prod(shape)) if len(shape) else 1
    buf = (mx_float * size).from_address(ctypes.addressof(cptr.contents))
    return np.frombuffer(buf, dtype=np.float32).reshape(shape)
