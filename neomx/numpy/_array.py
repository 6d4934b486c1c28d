"""``mx.np.ndarray``: MXNet's NumPy-compatible array, a thin wrapper over a ``torch.Tensor``.

As in MXNet 1.9.1 it is a subclass of the legacy :class:`~neomx.ndarray.NDArray` (same
``_t``/``_ctx``/``_grad`` slots, so ``as_nd_ndarray``/``as_np_ndarray`` share memory and
Gluon's ``isinstance(x, NDArray)`` tests hold), with NumPy semantics: zero-dim results,
NumPy indexing (views for basic indexes, boolean masks, integer arrays), NumPy type
promotion between arrays (``bool`` comparisons, int/int true division giving float32),
``dtype`` as a ``numpy.dtype``, and MXNet's NumPy repr (``array([1., 2.])``).

Mixing with legacy arrays raises MXNet's ``TypeError`` either way round.
"""
import builtins
import math
import numbers

import numpy as _np
import torch

from .. import _autograd_state, _int_grad, autograd, upper_layers
from .._division import mod as _mxnet_mod
from ..base import MXNetError, np_dtype, numpy_dtype, torch_dtype
from ..context import Context, as_context, context_naming, current_context
from ..ndarray import NDArray

__all__ = ['ndarray', 'wrap', 'array', 'empty', 'zeros', 'ones', 'full', 'arange', 'DEFAULT_DTYPE']

_object_new = object.__new__
_Tensor = torch.Tensor
_run_untracked = autograd.run_untracked
_INT_LIVE = _int_grad.LIVE
_RECORDING = _autograd_state.STATE
DEFAULT_DTYPE = torch.float32       # of arrays made from Python numbers, arange, ones, random draws
_SCALARS = (int, float, bool, _np.generic)


def wrap(tensor, ctx):
    """An ``mx.np.ndarray`` over ``tensor`` (no copy): the constructor of every result."""
    arr = _object_new(ndarray)
    arr._t = tensor
    arr._ctx = ctx
    arr._grad = None
    return arr


def _legacy_error(other):
    return TypeError('type %s not supported' % str(type(other)))


def _torch_call(fn, *args):
    """``fn(*args)`` (tensors and Python scalars), recorded when an input requires gradients
    or, while recording, carries an integer gradient (see :mod:`neomx._int_grad`)."""
    if _INT_LIVE[0] and autograd.is_recording():
        res = _int_grad.run(fn, args)
        if res is not None:
            if type(res) is _Tensor and not res.requires_grad and _int_grad.carrier_of(res) is None:
                autograd.mark_constant_result(res)
            return res
    for a in args:
        if type(a) is _Tensor and a.requires_grad:
            res = _run_untracked(fn, *args)
            if _RECORDING.recording and type(res) is _Tensor and not res.requires_grad:
                autograd.mark_constant_result(res)      # a comparison: backward gives zeros
            return res
    return fn(*args)


def _scalar_value(t, scalar):
    """A Python scalar as MXNet's ``_npi_*_scalar`` operators take it: cast to an integer
    array's type (``int32_array + 1.5`` adds 1; true division excepted, see _true_divide)."""
    if isinstance(scalar, _np.generic):
        scalar = scalar.item()
    if t.dtype is torch.bool:
        return scalar
    if type(scalar) is float and not t.dtype.is_floating_point:
        return int(scalar)
    return scalar


def _true_divide(a, b):
    """NumPy's true division with MXNet's dtypes: integers (and booleans) give float32."""
    r = torch.true_divide(a, b)
    if r.dtype is torch.float64 and not (
            (type(a) is _Tensor and a.dtype is torch.float64) or (type(b) is _Tensor and b.dtype is torch.float64)):
        r = r.float()
    return r


def _np_mod(a, b):
    """NumPy's modulo (the divisor's sign); MXNet's 0 for a zero integer divisor."""
    return _mxnet_mod(a, b)


def _binary(name, fn, scalar_keeps_dtype=True):
    """A binary dunder: array op array (NumPy promotion, broadcasting) or array op scalar."""
    def method(self, other):
        t = self._t
        if type(other) is ndarray:
            o = other._t
            if not (t.requires_grad or o.requires_grad or _INT_LIVE[0]):    # the common case, inline
                try:
                    res = fn(t, o)
                except RuntimeError as err:
                    raise _broadcast_error(name, t, o, err) from None
                arr = _object_new(ndarray)
                arr._t = res
                arr._ctx = self._ctx
                arr._grad = None
                return arr
        elif isinstance(other, _SCALARS):
            o = _scalar_value(t, other) if scalar_keeps_dtype else other
        elif isinstance(other, NDArray):
            raise _legacy_error(other)
        elif isinstance(other, (_np.ndarray, list, tuple)):
            o = array(other, dtype=getattr(other, 'dtype', None), ctx=self._ctx)._t
        else:
            return NotImplemented
        try:
            return wrap(_torch_call(fn, t, o), self._ctx)
        except RuntimeError as err:
            raise _broadcast_error(name, t, o, err) from None
    method.__name__ = name
    return method


_LEGACY_NAMES = {'__radd__': 'broadcast_add', '__rsub__': 'broadcast_sub', '__rmul__': 'broadcast_mul',
                 '__rtruediv__': 'broadcast_div', '__rmod__': 'broadcast_mod', '__rpow__': 'broadcast_power'}


def _legacy_operator_error(name):
    """MXNet's TypeError for a legacy NDArray operator given an ``mx.np`` array (``nd + np``)."""
    op = _LEGACY_NAMES.get(name, name.strip('_').replace('r', '', 1))
    return TypeError('Operator `%s` registered in backend is known as `%s` in Python. This is a legacy '
                     'operator which can only accept legacy ndarrays, while received an MXNet numpy '
                     'ndarray. Please call `as_nd_ndarray()` upon the numpy ndarray to convert it to a '
                     'legacy ndarray, and then feed the converted array to this operator.' % (op, op))


def _reflected(name, fn, scalar_keeps_dtype=True):
    """``other op array`` where ``other`` is a scalar (``2 - a``) or a legacy NDArray (refused)."""
    def method(self, other):
        t = self._t
        if isinstance(other, _SCALARS):
            o = _scalar_value(t, other) if scalar_keeps_dtype else other
            if not isinstance(o, _Tensor):
                o = torch.tensor(o, dtype=t.dtype if scalar_keeps_dtype or t.dtype.is_floating_point
                                 else DEFAULT_DTYPE, device=t.device)
            return wrap(_torch_call(fn, o, t), self._ctx)
        if isinstance(other, NDArray):
            raise _legacy_operator_error(name)
        if isinstance(other, (_np.ndarray, list, tuple)):
            return wrap(_torch_call(fn, array(other, dtype=getattr(other, 'dtype', None), ctx=self._ctx)._t, t),
                        self._ctx)
        return NotImplemented
    method.__name__ = name
    return method


def _inplace(name, fn):
    """An in-place dunder (``a += b``): the result, cast to this array's dtype, written into it."""
    binary = _binary(name, fn)

    def method(self, other):
        if autograd.is_recording() and self._t.requires_grad:
            raise MXNetError('Inplace operations (+=, -=, x[:]=, etc) are not supported when recording '
                             'with autograd: the array of shape %s is part of the recorded graph'
                             % (self.shape,))
        res = binary(self, other)
        if res is NotImplemented:
            return res
        r = res._t
        t = self._t
        if r.shape != t.shape:
            raise ValueError('%s: non-broadcastable output operand with shape %s doesn\'t match the '
                             'broadcast shape %s' % (name, tuple(t.shape), tuple(r.shape)))
        t.copy_(r)
        return self
    method.__name__ = name
    return method


def _broadcast_error(name, t, o, err):
    if isinstance(o, _Tensor):
        return ValueError('%s: operands could not be broadcast together with shapes %s %s'
                          % (name, tuple(t.shape), tuple(o.shape)))
    return MXNetError('%s: %s (shape %s)' % (name, str(err).split('\n')[0], tuple(t.shape)))


def _repr_body(values, dtype):
    """numpy's repr of ``values`` as MXNet's NumPy arrays show it: float32 and bool without a
    dtype suffix, every other type with one."""
    text = repr(values)
    if 'dtype=' in text:
        if dtype == _np.float32:
            text = text[:text.rindex(',')] + ')'
    elif dtype not in (_np.float32, _np.bool_):
        text = text[:-1] + ', dtype=%s)' % dtype
    return text


class ndarray(NDArray):
    """An n-dimensional array with NumPy semantics on a device: MXNet's ``mx.np.ndarray``.

    Create arrays with :func:`mx.np.array`, :func:`mx.np.zeros`... ``ndarray(shape)`` gives an
    uninitialized float32 array, as ``mx.np.empty``.

    Attributes
    ----------
    shape : tuple of int
    dtype : numpy.dtype
    ctx, context : Context
    grad : ndarray or None
        The gradient buffer after :meth:`attach_grad`.

    Example
    -------
    >>> from neomx import np
    >>> x = np.array([[1, 2], [3, 4]])
    >>> x
    array([[1., 2.],
           [3., 4.]])
    >>> x.dtype, x[0, 1], x.sum()
    (dtype('float32'), array(2.), array(10.))
    >>> np.array([1, 2], dtype='int32') / 2
    array([0.5, 1. ])
    """
    __slots__ = ()
    _is_np_array = True       # generated mx.nd functions refuse it, mx.npx ones take it

    def __init__(self, shape=None, dtype=None, ctx=None, **kwargs):  # pylint: disable=super-init-not-called
        if isinstance(shape, _Tensor):      # ndarray(tensor, ctx): wrap, as NDArray does
            self._t, self._ctx, self._grad = shape, ctx if ctx is not None else context_naming(shape), None
            return
        ctx = as_context(ctx)
        self._t = torch.empty(_shape_of(shape, 'ndarray'), dtype=torch_dtype(dtype, 'ndarray'),
                              device=ctx.torch_device)
        self._ctx = ctx
        self._grad = None

    # ------------------------------------------------------------ properties
    @property
    def dtype(self):
        return _np.dtype(np_dtype(self._t.dtype))

    @property
    def T(self):
        return wrap(self._t.permute(*range(self._t.dim() - 1, -1, -1)), self._ctx)

    @property
    def grad(self):
        slot = self._grad
        return None if slot is None else slot.buf

    def __len__(self):
        if self._t.dim() == 0:
            raise TypeError('len() of unsized object')
        return self._t.shape[0]

    def __bool__(self):
        n = self._t.numel()
        if n == 1:
            return bool(self._t.item())
        if n == 0:
            return False
        raise ValueError('The truth value of an ndarray with more than one element is ambiguous.')

    __nonzero__ = __bool__

    def __hash__(self):
        raise TypeError("unhashable type: 'mxnet.numpy.ndarray'")

    def __float__(self):
        if self._t.numel() != 1:
            raise TypeError('only size-1 arrays can be converted to Python scalars')
        return float(self._t.item())

    def __int__(self):
        if self._t.numel() != 1:
            raise TypeError('only size-1 arrays can be converted to Python scalars')
        return int(self._t.item())

    def __index__(self):
        if self._t.numel() == 1 and not self._t.dtype.is_floating_point:
            return int(self._t.item())
        raise TypeError('only integer scalar arrays can be converted to a scalar index')

    def __repr__(self):
        text = _repr_body(self.asnumpy(), self.dtype)
        if self._ctx.device_type == 'cpu':
            return text
        return text[:-1] + ', ctx=%s)' % self._ctx

    def __str__(self):
        text = str(self.asnumpy())
        if self._ctx.device_type == 'cpu' or self._t.dim() == 0:    # as MXNet: a scalar names no device
            return text
        return '%s @%s' % (text, self._ctx)

    def __format__(self, fmt):
        if self._t.dim() == 0:
            return format(self.item(), fmt)
        if fmt:
            raise TypeError('unsupported format string passed to mxnet.numpy.ndarray.__format__ (%r): '
                            'only zero-dim arrays take a format' % fmt)
        return str(self)

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    def __setstate__(self, state):
        NDArray.__setstate__(self, state)

    # --------------------------------------------------------- host interop
    def item(self, *args):
        """The element at ``args`` (a flat index, or one index per dim; none for a size-1
        array) as a Python scalar."""
        if not args:
            if self._t.numel() != 1:
                raise ValueError('can only convert an array of size 1 to a Python scalar')
            return self._t.item()
        return self.asnumpy().item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def asscalar(self):
        if self._t.numel() != 1:
            raise ValueError('The current array is not a scalar')
        return self.asnumpy().reshape(())[()]

    def as_nd_ndarray(self):
        """A legacy ``NDArray`` sharing this array's memory."""
        arr = _object_new(NDArray)
        arr._t, arr._ctx, arr._grad = self._t, self._ctx, None
        return arr

    def as_np_ndarray(self):
        """This array (it is already an ``mx.np.ndarray``)."""
        return self

    # -------------------------------------------------------- copies/devices
    def copy(self, order='C'):  # pylint: disable=arguments-differ
        if order != 'C':
            raise NotImplementedError('ndarray.copy: only order=\'C\' is supported, got %r' % (order,))
        return wrap(_torch_call(torch.clone, self._t), self._ctx)

    def copyto(self, other):
        """Copy into ``other`` (an ndarray: returns it) or onto a Context (returns a new array)."""
        if isinstance(other, NDArray) and type(other) is not ndarray:
            raise _legacy_error(other)
        res = NDArray.copyto(self, other)
        return res if type(res) is ndarray else wrap(res._t, res._ctx)

    def as_in_context(self, context):
        if isinstance(context, str):
            context = as_context(context, 'as_in_context')
        if context == self._ctx:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def astype(self, dtype, order='K', casting='unsafe', subok=True, copy=True):  # pylint: disable=arguments-differ
        tdt = torch_dtype(dtype, 'astype') if dtype is not None else DEFAULT_DTYPE
        if tdt is self._t.dtype and not copy:
            return self
        return wrap(_torch_call(lambda t: t.to(tdt, copy=True), self._t), self._ctx)

    def detach(self):
        return wrap(self._t.detach(), self._ctx)

    def attach_grad(self, grad_req='write', stype=None):  # pylint: disable=arguments-differ,unused-argument
        """Allocate a gradient buffer (an ndarray of zeros) and mark this array as a variable."""
        autograd.attach(self, grad_req, wrap(torch.zeros_like(self._t), self._ctx))

    def tostype(self, stype):
        if stype != 'default':
            raise ValueError('mx.np.ndarray only has the default storage type, got %r' % (stype,))
        return self.copy()

    # ------------------------------------------------------------- indexing
    def __getitem__(self, key):
        """NumPy indexing: ints, slices (negative steps too), None, Ellipsis give views;
        boolean masks and integer arrays give copies."""
        t = self._t
        if type(key) is int:
            n = t.shape[0] if t.dim() else 0
            if not -n <= key < n:
                if t.dim() == 0:
                    raise IndexError('too many indices for array: array is 0-dimensional, but 1 were indexed')
                raise IndexError('index %d is out of bounds for axis 0 with size %d' % (key, n))
            return wrap(t[key] if not (t.requires_grad or _INT_LIVE[0]) else _torch_call(_getitem, t, key),
                        self._ctx)
        if type(key) is slice and (key.step is None or key.step > 0) and t.dim() and not (
                t.requires_grad or _INT_LIVE[0]):
            r = t[key]      # a slice of axis 0: a view, contiguous where t is (else a copy, as MXNet)
            return wrap(r if r.is_contiguous() else r.contiguous(), self._ctx)
        return wrap(_torch_call(_getitem, t, key), self._ctx)

    def __setitem__(self, key, value):
        t = self._t
        if autograd.is_recording() and (t.requires_grad or (isinstance(value, NDArray) and value._t.requires_grad)):
            raise MXNetError('Inplace operations (+=, -=, x[:]=, etc) are not supported when recording '
                             'with autograd: the array of shape %s is part of the recorded graph'
                             % (tuple(t.shape),))
        if isinstance(value, NDArray) and type(value) is not ndarray:
            raise _legacy_error(value)
        v = _value_for(value, t)
        try:
            if t.requires_grad:
                # through ``Tensor.data`` (untracked): a graph recorded before reads the new value
                # in its backward, as MXNet's unversioned arrays (and mx.nd's writes) do
                autograd.write_untracked(_setitem, t, key, v)
            else:
                _setitem(t, key, v)
        except RuntimeError as err:
            raise ValueError('could not broadcast input array from shape %s into the array of shape %s '
                             'indexed by %r (%s)' % (tuple(getattr(v, 'shape', ())), tuple(t.shape), key,
                                                     str(err).split('\n')[0])) from None

    # ------------------------------------------------------------ arithmetic
    __add__ = _binary('__add__', torch.add)
    __sub__ = _binary('__sub__', torch.sub)
    __mul__ = _binary('__mul__', torch.mul)
    __truediv__ = _binary('__truediv__', _true_divide, scalar_keeps_dtype=False)
    __div__ = __truediv__
    __mod__ = _binary('__mod__', _np_mod)
    __pow__ = _binary('__pow__', torch.pow)
    __and__ = _binary('__and__', torch.bitwise_and)
    __or__ = _binary('__or__', torch.bitwise_or)
    __xor__ = _binary('__xor__', torch.bitwise_xor)
    __radd__ = _reflected('__radd__', torch.add)
    __rsub__ = _reflected('__rsub__', torch.sub)
    __rmul__ = _reflected('__rmul__', torch.mul)
    __rtruediv__ = _reflected('__rtruediv__', _true_divide, scalar_keeps_dtype=False)
    __rdiv__ = __rtruediv__
    __rmod__ = _reflected('__rmod__', _np_mod)
    __rpow__ = _reflected('__rpow__', torch.pow)
    __rand__ = _reflected('__rand__', torch.bitwise_and)
    __ror__ = _reflected('__ror__', torch.bitwise_or)
    __rxor__ = _reflected('__rxor__', torch.bitwise_xor)
    __iadd__ = _inplace('__iadd__', torch.add)
    __isub__ = _inplace('__isub__', torch.sub)
    __imul__ = _inplace('__imul__', torch.mul)
    __itruediv__ = _inplace('__itruediv__', _true_divide)
    __idiv__ = __itruediv__
    __imod__ = _inplace('__imod__', _np_mod)
    __ipow__ = _inplace('__ipow__', torch.pow)
    __iand__ = _inplace('__iand__', torch.bitwise_and)
    __ior__ = _inplace('__ior__', torch.bitwise_or)
    __ixor__ = _inplace('__ixor__', torch.bitwise_xor)
    __eq__ = _binary('__eq__', torch.eq, scalar_keeps_dtype=False)
    __ne__ = _binary('__ne__', torch.ne, scalar_keeps_dtype=False)
    __gt__ = _binary('__gt__', torch.gt, scalar_keeps_dtype=False)
    __ge__ = _binary('__ge__', torch.ge, scalar_keeps_dtype=False)
    __lt__ = _binary('__lt__', torch.lt, scalar_keeps_dtype=False)
    __le__ = _binary('__le__', torch.le, scalar_keeps_dtype=False)

    def __neg__(self):
        return wrap(_torch_call(torch.neg, self._t), self._ctx)

    def __pos__(self):
        return self

    def __abs__(self):
        return wrap(_torch_call(torch.abs, self._t), self._ctx)

    def __invert__(self):
        t = self._t
        if t.dtype.is_floating_point:
            raise TypeError("ufunc 'invert' not supported for the input types (dtype %s)" % self.dtype)
        return wrap(_torch_call(torch.bitwise_not, t), self._ctx)


def _rebuild(values, dev_type, dev_id):
    return array(values, dtype=values.dtype, ctx=Context(dev_type, dev_id))


def _getitem(t, key):
    """``t[key]`` with NumPy's indexing (torch's, with index arrays as tensors and negative
    steps through a flip). As in MXNet, a basic index gives a view only where the selection
    is contiguous, a copy otherwise."""
    key, flip_dims = _torch_key(key, t)
    try:
        r = (t.flip(flip_dims) if flip_dims else t)[key]
        if not r.is_contiguous() and all(type(k) in _BASIC_KEYS or k is None or k is Ellipsis for k in key):
            r = r.contiguous()
        return r
    except IndexError as err:
        raise IndexError('%s (array shape %s)' % (str(err).split('\n')[0], tuple(t.shape))) from None
    except RuntimeError as err:
        raise IndexError('%s (array shape %s)' % (str(err).split('\n')[0], tuple(t.shape))) from None


_BASIC_KEYS = (int, slice)


def _setitem(t, key, v):
    key, flip_dims = _torch_key(key, t)
    if not flip_dims:
        t[key] = v
        return
    flipped = t.flip(flip_dims)     # negative steps: write into a flipped copy, flip it back
    flipped[key] = v
    t.copy_(flipped.flip(flip_dims))


def _index_item(k, device):
    """One item of an index as torch takes it: arrays as int64 or bool tensors."""
    if isinstance(k, NDArray):
        x = k._t
        if x.dtype is torch.bool:
            return x if x.device == device else x.to(device)
        return x.to(device, torch.int64)     # MXNet truncates float index arrays
    if isinstance(k, _np.ndarray):
        if k.dtype == _np.bool_:
            return torch.from_numpy(k).to(device)
        if k.dtype.kind == 'f':
            raise IndexError('only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and '
                             'integer or boolean arrays are valid indices')
        return torch.from_numpy(k.astype(_np.int64)).to(device)
    if isinstance(k, (list, range)):
        return _index_item(_np.asarray(k), device) if k else torch.zeros(0, dtype=torch.int64, device=device)
    if isinstance(k, _np.integer):
        return int(k)
    if isinstance(k, (float, _np.floating)):
        raise IndexError('only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and '
                         'integer or boolean arrays are valid indices (got %r)' % (k,))
    return k


def _torch_key(key, t):
    """(key for torch, dims of ``t`` to flip first) for a NumPy index."""
    if type(key) is not tuple:
        key = (key,)
    key = tuple(_index_item(k, t.device) for k in key)
    if any(type(k) is slice and k.step is not None and k.step < 0 for k in key):
        from ..operator.shape import flip_negative_steps
        flip_dims, key = flip_negative_steps(key, tuple(t.shape))
        return key, flip_dims
    return key, ()


def _value_for(value, t):
    """``value`` as something torch writes into ``t``: a tensor of ``t``'s dtype (copied where
    it shares ``t``'s memory) or a Python scalar."""
    if type(value) is ndarray:
        v = value._t
        if v.dtype is not t.dtype or v.device != t.device:
            return v.to(device=t.device, dtype=t.dtype)
        if v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr():
            return v.clone()
        return v
    if isinstance(value, _SCALARS):
        if isinstance(value, _np.generic):
            value = value.item()
        return _scalar_value(t, value) if t.dtype is not torch.bool else bool(value)
    return torch.as_tensor(_np.asarray(value), device=t.device).to(t.dtype)


# ------------------------------------------------------------------ creation
def _shape_of(shape, where):
    """``shape`` (an int or a sequence of ints) as a tuple; TypeError naming ``where`` otherwise."""
    if type(shape) is tuple:       # the common form: a tuple of non-negative ints
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
    if shape is None:
        raise TypeError('%s: shape is required' % where)
    if isinstance(shape, (int, _np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        dims = tuple(int(d) if isinstance(d, (int, _np.integer)) and not isinstance(d, bool) else None
                     for d in shape)
    except TypeError:
        dims = (None,)
    if None in dims:
        raise TypeError("%s: 'shape' must be an integer or a tuple of integers, got %r" % (where, shape))
    if any(d < 0 for d in dims):
        raise ValueError('%s: negative dimensions are not allowed (shape %s)' % (where, dims))
    return dims


def _check_order(order, where):
    if order != 'C':
        raise NotImplementedError("%s: only order='C' is supported, got %r" % (where, order))


def _dtype_or_default(dtype, where):
    return DEFAULT_DTYPE if dtype is None else torch_dtype(dtype, where)


def array(object, dtype=None, ctx=None):  # pylint: disable=redefined-builtin
    """An ndarray copying ``object`` (a list, scalar, numpy array or ndarray).

    Without ``dtype``: the source's dtype for numpy arrays and ndarrays, float32 for Python
    data (as MXNet; official NumPy would give int64 or float64).
    """
    ctx = as_context(ctx)
    dev = ctx.torch_device
    if type(object) is ndarray:
        t = object._t.detach()
        return wrap(t.to(device=dev, dtype=t.dtype if dtype is None else torch_dtype(dtype, 'array'), copy=True),
                    ctx)
    if isinstance(object, NDArray):
        raise ValueError("If you're trying to create a mxnet.numpy.ndarray from mx.nd.NDArray, please use "
                         "the zero-copy as_np_ndarray function.")
    if isinstance(object, _Tensor):
        return wrap(object.detach().to(device=dev, dtype=object.dtype if dtype is None
                                       else torch_dtype(dtype, 'array'), copy=True), ctx)
    if dtype is None:
        dtype = object.dtype if hasattr(object, 'dtype') else _np.float32
    tdt = torch_dtype(dtype, 'array')
    try:
        host = _np.array(object, dtype=numpy_dtype(tdt))
    except OverflowError:       # NumPy 2 refuses out-of-range Python ints; MXNet's NumPy 1 wrapped them
        host = _np.array(object).astype(numpy_dtype(tdt))
    except Exception as err:  # pylint: disable=broad-except
        raise TypeError('%s' % err) from None
    t = torch.from_numpy(host)
    return wrap(t.to(device=dev, dtype=tdt) if tdt is torch.bfloat16 else t.to(dev), ctx)


_RECORDS_CREATION = []     # the symbol layer's records_creation, fetched at the first call


def _recorded(op, **attrs):
    """The graph node of creation operator ``op`` with attributes ``attrs`` where
    creation functions record nodes (``F.np`` and a traced ``forward``, as MXNet 2.0's
    deferred compute records them), else None."""
    if not _RECORDS_CREATION:
        _RECORDS_CREATION.append(upper_layers.get('np_records_creation'))
    if _RECORDS_CREATION[0]():
        if attrs['dtype'] is None or attrs['dtype'] is float:     # MXNet's default, float32
            attrs['dtype'] = 'float32'
        return upper_layers.get('np_symbol_call')(op, (), attrs)
    return None


def empty(shape, dtype=float, order='C', ctx=None):  # pylint: disable=unused-argument
    """An uninitialized array (float32 for ``dtype=float`` or None)."""
    _check_order(order, 'empty')
    node = _recorded('_npi_zeros', shape=shape, dtype=dtype)
    if node is not None:
        return node
    ctx = as_context(ctx)
    tdt = DEFAULT_DTYPE if dtype is None or dtype is float else torch_dtype(dtype, 'empty')
    return wrap(torch.empty(_shape_of(shape, 'empty'), dtype=tdt, device=ctx.torch_device), ctx)


def zeros(shape, dtype=None, order='C', ctx=None):  # pylint: disable=unused-argument
    """An array of zeros (float32 by default)."""
    _check_order(order, 'zeros')
    node = _recorded('_npi_zeros', shape=shape, dtype=dtype)
    if node is not None:
        return node
    ctx = as_context(ctx)
    return wrap(torch.zeros(_shape_of(shape, 'zeros'), dtype=_dtype_or_default(dtype, 'zeros'),
                            device=ctx.torch_device), ctx)


def ones(shape, dtype=None, order='C', ctx=None):  # pylint: disable=unused-argument
    """An array of ones (float32 by default)."""
    _check_order(order, 'ones')
    node = _recorded('_npi_ones', shape=shape, dtype=dtype)
    if node is not None:
        return node
    ctx = as_context(ctx)
    return wrap(torch.ones(_shape_of(shape, 'ones'), dtype=_dtype_or_default(dtype, 'ones'),
                           device=ctx.torch_device), ctx)


def full(shape, fill_value, dtype=None, order='C', ctx=None, out=None):  # pylint: disable=unused-argument
    """An array of ``fill_value`` (an ndarray ``fill_value`` is broadcast; float32 by default
    for Python numbers, its own dtype for an ndarray)."""
    _check_order(order, 'full')
    if isinstance(fill_value, (numbers.Number, _np.generic)) and out is None:
        node = _recorded('_npi_full', shape=shape, value=float(fill_value), dtype=dtype)
        if node is not None:
            return node
    ctx = as_context(ctx)
    dims = _shape_of(shape, 'full')
    if isinstance(fill_value, NDArray):
        v = fill_value._t
        tdt = v.dtype if dtype is None else torch_dtype(dtype, 'full')
        res = wrap(torch.broadcast_to(v.to(device=ctx.torch_device, dtype=tdt), dims).clone(), ctx)
    else:
        if isinstance(fill_value, _np.generic):
            fill_value = fill_value.item()
        tdt = _dtype_or_default(dtype, 'full')
        if tdt is torch.bool:
            fill_value = bool(fill_value)
        elif not tdt.is_floating_point:
            fill_value = int(fill_value)
        res = wrap(torch.full(dims, fill_value, dtype=tdt, device=ctx.torch_device), ctx)
    if out is not None:
        out[...] = res
        return out
    return res


def arange(start, stop=None, step=1, dtype=None, ctx=None):
    """Evenly spaced values in [start, stop) (float32 by default, as MXNet); empty where
    ``step`` goes away from ``stop``."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError('arange: step must not be zero')
    node = _recorded('_npi_arange', start=start, stop=stop, step=step, dtype=dtype)
    if node is not None:
        return node
    ctx = as_context(ctx)
    tdt = _dtype_or_default(dtype, 'arange')
    count = builtins.max(int(math.ceil((stop - start) / step)), 0)
    values = start + torch.arange(count, dtype=torch.float64) * step
    return wrap(values.to(device=ctx.torch_device, dtype=tdt), ctx)


ndarray.__module__ = 'neomx.numpy'
upper_layers.register('np_array_from_tensor', wrap)
