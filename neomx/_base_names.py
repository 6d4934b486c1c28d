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
    """A property of a class: ``Cls.name`` calls ``func(Cls)``; with a :meth:`setter`, and the
    class made by :class:`ClassPropertyMeta` (MXNet's ``_MXClassPropertyMetaClass``), ``Cls.name = value`` calls
    ``fset(Cls, value)`` (MXNet 1.x's ``Context.default_ctx``, ``AttrScope.current``...).

    Example
    -------
    >>> class Counter(with_metaclass(ClassPropertyMeta, object)):
    ...     _value = 0
    ...     @classproperty
    ...     def value(cls):
    ...         return cls._value
    ...     @value.setter
    ...     def value(cls, new):
    ...         cls._value = new
    >>> Counter.value = 3
    >>> Counter.value, Counter().value
    (3, 3)
    """

    def __init__(self, func):
        self.fget = func
        self.fset = None
        self.__doc__ = getattr(func, '__doc__', None)

    def __get__(self, obj, owner):
        return self.fget(owner if owner is not None else type(obj))

    def setter(self, fset):
        self.fset = fset
        return self

    def set_on(self, cls, value):
        if self.fset is None:
            raise AttributeError('cannot set class property %s of %s' % (self.fget.__name__, cls.__name__))
        self.fset(cls, value)


class ClassPropertyMeta(type):
    """Metaclass routing ``Cls.name = value`` to a :class:`classproperty`'s setter (a class
    attribute is otherwise replaced by the assignment)."""

    def __setattr__(cls, key, value):
        for klass in cls.__mro__:
            prop = klass.__dict__.get(key)
            if isinstance(prop, classproperty):
                return prop.set_on(cls, value)
        return super().__setattr__(key, value)


def with_metaclass(meta, *bases):
    """A base class built with metaclass ``meta`` (Python 2/3 compatible spelling)."""
    # no __slots__ of its own: a class with __slots__ keeps its instances dict-free
    return meta('temporary_class', bases or (object,), {'__slots__': ()})


_MXClassPropertyMetaClass = ClassPropertyMeta     # MXNet's name


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
