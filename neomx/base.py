"""Errors, dtype tables and small helpers shared by every layer of neomx.

MXNet's ``mx.base`` exposes ``MXNetError`` (a ``RuntimeError``), ``string_types``,
``numeric_types`` and ``integer_types``; the dtype tables here translate between the
names MXNet users write ('float32', np.float32), numpy dtypes and torch dtypes.
"""
import ctypes
import numbers
import os
import stat
import uuid

import numpy as np
import torch

__all__ = ['MXNetError', 'MXNetTypeError', 'MXNetValueError', 'NDArrayHandle', 'NotImplementedForSymbol',
           'string_types', 'numeric_types', 'integer_types', 'bfloat16', 'np_dtype', 'torch_dtype', 'dtype_name']


# MXNet's raw array handle type; neomx's handles name live NDArrays (see ndarray/handles.py)
NDArrayHandle = ctypes.c_void_p
# MXNet's KVStore handle type: the profiler keeps the store it would send server commands through
KVStoreHandle = ctypes.c_void_p


class MXNetError(RuntimeError):
    """Error raised by neomx operators, the engine, KVStore and file readers."""


class MXNetValueError(MXNetError, ValueError):
    """A bad argument value where MXNet raised ``ValueError``: code catching either works."""


class MXNetTypeError(MXNetError, TypeError):
    """A bad argument where MXNet raised ``TypeError`` on some paths and ``MXNetError`` on
    others (an unknown dtype name: numpy's ``TypeError``; a numpy dtype MXNet lacks:
    ``MXNetError``): code catching either works."""


def check_batch_size(batch_size, where, error=MXNetError):
    """Raise ``error`` naming ``where`` unless ``batch_size`` is a positive integer."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, integer_types) or batch_size <= 0:
        raise error('%s: batch_size must be a positive integer, got %r' % (where, batch_size))


class NotImplementedForSymbol(MXNetError):
    """Raised when a function is called on a Symbol that only NDArray supports."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__ if callable(function) else str(function)
        self.alias = alias
        self.args = tuple(str(type(a)) for a in args)

    def __str__(self):
        msg = 'Function {}'.format(self.function)
        if self.alias:
            msg += ' (namely operator "{}")'.format(self.alias)
        if self.args:
            msg += ' with arguments ({})'.format(', '.join(self.args))
        return msg + ' is not implemented for Symbol and only available in NDArray.'


# MXNet's remaining small public names of mx.base (py_str, mx_real_t, _as_list, ...)
from ._base_names import (_Null, _NullType, _as_list, basestring, c_array, c_array_buf, c_handle_array,  # noqa: E402,F401
                          MXCallbackList, ctypes2numpy_shared,
                          c_str, c_str_array, classproperty, ClassPropertyMeta, _MXClassPropertyMetaClass,
                          data_dir_default, long, mx_float,
                          mx_float_p, mx_int, mx_int64, mx_real_t, mx_uint, py_str, with_metaclass)

string_types = (str,)
numeric_types = (float, int, np.generic, numbers.Number)
integer_types = (int, np.integer)

# MXNet 1.9.1 spells bfloat16 as a structured numpy dtype; numpy itself has none.
bfloat16 = np.dtype([('bfloat16', np.uint16)])

_TORCH_OF_NP = {
    np.dtype('float32'): torch.float32, np.dtype('float64'): torch.float64,
    np.dtype('float16'): torch.float16, np.dtype('uint8'): torch.uint8,
    np.dtype('int8'): torch.int8, np.dtype('int32'): torch.int32,
    np.dtype('int64'): torch.int64, np.dtype('bool'): torch.bool,
    np.dtype('int16'): torch.int16, bfloat16: torch.bfloat16,
}
_NP_TYPE_OF_TORCH = {t: (bfloat16 if n is bfloat16 else n.type) for n, t in _TORCH_OF_NP.items()}
_NAME_OF_TORCH = {t: ('bfloat16' if n is bfloat16 else n.name) for n, t in _TORCH_OF_NP.items()}
_TORCH_OF_NAME = {v: k for k, v in _NAME_OF_TORCH.items()}

# MXNet's type flags, as stored in .params files and Symbol JSON '__dtype__' attributes.
TYPE_FLAG_OF_TORCH = {torch.float32: 0, torch.float64: 1, torch.float16: 2, torch.uint8: 3,
                      torch.int32: 4, torch.int8: 5, torch.int64: 6, torch.bool: 7,
                      torch.int16: 8, torch.bfloat16: 12}
TORCH_OF_TYPE_FLAG = {v: k for k, v in TYPE_FLAG_OF_TORCH.items()}


def torch_dtype(dtype, where=None):
    """Translate any dtype spelling (str, numpy type/dtype, torch dtype, None) to a torch dtype.

    ``None`` means float32, MXNet's default. Anything else raises :class:`MXNetTypeError`
    naming ``where`` (the function or operator), the argument ``dtype`` and the value.
    """
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        t = _TORCH_OF_NAME.get(dtype)
        if t is not None:
            return t
    if dtype is bfloat16:
        return torch.bfloat16
    try:
        return _TORCH_OF_NP[np.dtype(dtype)]
    except (KeyError, TypeError, ValueError):
        raise invalid_dtype(dtype, where) from None


def invalid_dtype(dtype, where=None, arg='dtype'):
    """The :class:`MXNetTypeError` for an unknown or unsupported dtype given as ``arg`` to
    ``where`` (a function or operator name; left out when None)."""
    return MXNetTypeError("%sinvalid value %.100r for argument '%s': not a data type neomx supports "
                          "(%s)" % ('' if where is None else where + ': ', dtype, arg,
                                    ', '.join(sorted(_TORCH_OF_NAME))))


# MXNet 1.9.1's operators read a shape from str(shape): a numpy array's '[2 3]' does not parse.
NUMPY_SHAPE_REFUSED = ('a numpy array with several entries or dims is not a shape; pass a tuple, '
                       'e.g. tuple(a.tolist())')


def refuse_numpy_shape(shape, where=None, arg='shape'):
    """``shape`` as MXNet 1.9.1's operators take a numpy array: they read its text, where
    ``'3'`` and ``'[3]'`` parse and ``'[2 3]'`` does not. A 0-d or one-entry integer array
    becomes an int or a 1-tuple; one with several entries or dims raises
    :class:`MXNetValueError` naming ``where`` and ``arg`` (just the reason without ``where``).
    Anything else comes back as it is, for the caller's own checks."""
    if not isinstance(shape, np.ndarray):
        return shape
    if shape.ndim > 1 or shape.size > 1:
        if where is None:
            raise MXNetValueError(NUMPY_SHAPE_REFUSED)
        raise MXNetValueError("%s: invalid value %.100r for argument '%s': %s"
                              % (where, shape, arg, NUMPY_SHAPE_REFUSED))
    if shape.dtype.kind in 'iu':
        return int(shape) if shape.ndim == 0 else tuple(int(d) for d in shape)
    return shape


def np_dtype(tdtype):
    """The numpy scalar type (``np.float32``...) that ``NDArray.dtype`` reports for a torch dtype."""
    return _NP_TYPE_OF_TORCH[tdtype]


def dtype_name(dtype):
    """Canonical MXNet name ('float32', 'int64', 'bfloat16'...) of any dtype spelling."""
    return _NAME_OF_TORCH[torch_dtype(dtype)]


def numpy_dtype(tdtype):
    """The numpy dtype used for host copies (bfloat16 is widened to float32)."""
    return np.dtype('float32') if tdtype is torch.bfloat16 else np.dtype(_NP_TYPE_OF_TORCH[tdtype])


def data_dir():
    """``$MXNET_HOME`` or ``~/.mxnet``: where datasets and models are stored."""
    return os.path.expanduser(os.environ.get('MXNET_HOME', os.path.join('~', '.mxnet')))


class AtomicFile:
    """A binary file written under a temporary name and put in place by :meth:`commit`.

    The temporary file sits in the destination's folder (the folder of a symbolic link's
    target: the link is written through, not replaced) as ``.NAME.XXXXXXXXXXXX.tmp``; it
    gets the mode of the file it replaces (a new file gets the usual mode, umask applied).
    :meth:`commit` flushes it to disk and renames it over the destination in one step, so a
    reader sees the old file or the complete new one. :meth:`discard` (or leaving a
    ``with`` block by an exception) removes it; only a killed process leaves it behind.

    Example
    -------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, 'x.bin')
    >>> with AtomicFile(path) as f:
    ...     f.write(b'data')
    ...     os.path.exists(path)                # nothing there until the block ends
    False
    >>> with open(path, 'rb') as f:
    ...     f.read()
    b'data'
    >>> tmp.cleanup()
    """

    def __init__(self, fname):
        self.fname = os.fspath(fname)
        # Through symbolic links: replacing the link would leave its target stale.
        self.target = os.path.realpath(self.fname)
        folder, base = os.path.split(self.target)
        self.tmp = os.path.join(folder, '.%s.%s.tmp' % (base, uuid.uuid4().hex[:12]))
        try:
            mode = stat.S_IMODE(os.stat(self.target).st_mode)
        except OSError:
            mode = None
        self.handle = None
        self._created = False
        try:
            self.handle = open(self.tmp, 'xb')
            self._created = True
            if mode is not None:
                os.chmod(self.tmp, mode)
        except OSError as err:
            self.discard()
            raise _write_error(self.fname, err) from None

    def write(self, chunk):
        """Append the bytes ``chunk``."""
        try:
            self.handle.write(chunk)
        except BaseException as err:
            self.discard()
            if isinstance(err, OSError):
                raise _write_error(self.fname, err) from err
            raise

    def tell(self):
        return self.handle.tell()

    def commit(self):
        """Flush to disk and move the finished file over the destination."""
        if self.handle is None:
            return
        try:
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()
            self.handle = None
            os.replace(self.tmp, self.target)
            self._created = False
        except BaseException as err:
            self.discard()
            if isinstance(err, OSError):
                raise _write_error(self.fname, err) from err
            raise

    def discard(self):
        """Drop what was written; the destination keeps its old content."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            try:
                handle.close()
            except OSError:
                pass
        self._remove_tmp()

    def _remove_tmp(self):
        if not self._created:
            return
        self._created = False
        try:
            os.remove(self.tmp)
        except FileNotFoundError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def _write_error(fname, err):
    return MXNetError('cannot write %s: %s' % (fname, err.strerror or err))


def atomic_write(fname, chunks):
    """Write the byte strings ``chunks`` to ``fname`` atomically (see :class:`AtomicFile`).

    A failure midway (in the file system or in the code producing ``chunks``) leaves the
    old file untouched and no temporary file behind; a symbolic link is written through
    and an existing file keeps its mode.
    """
    with AtomicFile(fname) as f:
        for chunk in chunks:
            f.write(chunk)


def c_str(string):
    """A ``ctypes.c_char_p`` of ``string`` (UTF-8), as MXNet passes strings to its C API.

    >>> c_str("Hello").value
    b'Hello'
    """
    return ctypes.c_char_p(string.encode('utf-8'))


# As MXNet's base module does at import: code written for MXNet reads DLPack capsule
# pointers with ctypes.pythonapi.PyCapsule_GetPointer, whose default int result would cut a
# 64-bit pointer in half (ctypes' own state, not torch's or numpy's).
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p


_DLPACK_TENSORS = {}


def claim_dlpack_tensor(handle):
    """The tensor that ``_LIB.MXNDArrayFromDLPack`` made for ``handle`` (a ``ctypes.c_void_p``),
    or None when the handle is not one of those; each is claimed once."""
    return _DLPACK_TENSORS.pop(handle.value, None)


def check_call(ret):
    """Compatibility shim: MXNet's C API wrapper. neomx has no C API, so this is a no-op."""
    return ret


class CLibrary:
    """The object at ``mx.base._LIB``: the entries of MXNet's C library that Python code calls
    through ctypes, answered from neomx's own state (user code and MXNet's tests list the
    registered operators with ``_LIB.MXListAllOpNames``). Called with ctypes arguments as
    MXNet's library is; each returns 0 (success).

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
        self._operator_names = list
        self._kept = None       # the last returned array: the caller reads it after the call

    def provide_operator_names(self, names):
        """Have :meth:`MXListAllOpNames` list ``names()`` (the operator registry does so
        as it is imported)."""
        self._operator_names = names

    def MXListAllOpNames(self, out_size, out_array):    # pylint: disable=invalid-name
        """The names of all registered operators (aliases included)."""
        names = sorted(self._operator_names())
        self._kept = (ctypes.c_char_p * len(names))(*[n.encode('utf-8') for n in names])
        _referent(out_size).value = len(names)
        address = ctypes.c_void_p(ctypes.addressof(self._kept))
        ctypes.memmove(ctypes.addressof(_referent(out_array)), ctypes.byref(address), ctypes.sizeof(address))
        return 0

    def MXNDArrayFromDLPack(self, dlpack_handle, out):  # pylint: disable=invalid-name
        """``MXNDArrayFromDLPack(dlpack_handle, ctypes.byref(handle))``, as MXNet 1.x's own
        ``from_dlpack`` calls it: the DLManagedTensor pointer becomes a torch tensor (torch takes
        ownership and runs its deleter), held under the handle's value until
        ``NDArray(handle=handle)`` claims it (:func:`claim_dlpack_tensor`)."""
        pointer = dlpack_handle.value if isinstance(dlpack_handle, ctypes.c_void_p) else dlpack_handle
        if not pointer:
            raise MXNetError('MXNDArrayFromDLPack: the DLPack handle is NULL')
        new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
            ('PyCapsule_New', ctypes.pythonapi))
        import torch.utils.dlpack  # pylint: disable=import-outside-toplevel
        tensor = torch.utils.dlpack.from_dlpack(new_capsule(pointer, b'dltensor', None))
        _DLPACK_TENSORS[id(tensor)] = tensor
        _referent(out).value = id(tensor)
        return 0


def _referent(arg):
    """The ctypes object a ``ctypes.byref(obj)`` argument refers to (or ``arg`` itself)."""
    return getattr(arg, '_obj', arg)


C_LIBRARY = CLibrary()
_LIB = C_LIBRARY        # MXNet's name
