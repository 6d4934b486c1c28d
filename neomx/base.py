"""Errors, dtype tables and small helpers shared by every layer of neomx.

MXNet's ``mx.base`` exposes ``MXNetError`` (a ``RuntimeError``), ``string_types``,
``numeric_types`` and ``integer_types``; the dtype tables here translate between the
names MXNet users write ('float32', np.float32), numpy dtypes and torch dtypes.
"""
import numbers
import os
import uuid

import numpy as np
import torch

__all__ = ['MXNetError', 'NotImplementedForSymbol', 'string_types', 'numeric_types',
           'integer_types', 'bfloat16', 'np_dtype', 'torch_dtype', 'dtype_name']


class MXNetError(RuntimeError):
    """Error raised by neomx operators, the engine, KVStore and file readers."""


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
from ._base_names import (_Null, _NullType, _as_list, basestring, c_array, c_array_buf,  # noqa: E402,F401
                          c_str, c_str_array, classproperty, data_dir_default, long, mx_float,
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


def torch_dtype(dtype):
    """Translate any dtype spelling (str, numpy type/dtype, torch dtype, None) to a torch dtype.

    ``None`` means float32, MXNet's default. Raises ``TypeError`` for unknown names, as
    numpy does for ``np.dtype('nope')``.
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
    except KeyError:
        raise TypeError('data type %r is not supported by neomx' % (dtype,)) from None


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


def atomic_write(fname, chunks):
    """Write the byte strings ``chunks`` to ``fname`` through a temporary file in its folder.

    The final ``os.replace`` is atomic: a reader sees the old file or the complete new one,
    and a failure midway (in the file system or in the code producing ``chunks``) leaves the
    old file untouched. The file gets the usual permissions (umask applies).
    """
    fname = os.fspath(fname)
    folder, base = os.path.split(os.path.abspath(fname))
    tmp = os.path.join(folder, '.%s.%s.tmp' % (base, uuid.uuid4().hex[:12]))
    try:
        f = open(tmp, 'xb')
    except OSError as err:
        raise MXNetError('cannot write %s: %s' % (fname, err.strerror or err)) from None
    try:
        with f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, fname)
    except BaseException as err:
        os.remove(tmp)
        if isinstance(err, OSError):
            raise MXNetError('cannot write %s: %s' % (fname, err.strerror or err)) from err
        raise


def check_call(ret):
    """Compatibility shim: MXNet's C API wrapper. neomx has no C API, so this is a no-op."""
    return ret
