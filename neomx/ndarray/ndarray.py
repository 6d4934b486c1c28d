"""NDArray: MXNet's mutable n-dimensional array, as a thin wrapper over a ``torch.Tensor``.

An NDArray holds a tensor ``_t`` and the :class:`~neomx.context.Context` it lives on.
Slicing returns views (``b = a[1:3]; b[:] = 5`` writes into ``a``), in-place operators
write into the tensor, and the arithmetic dunders call torch directly: they are the hot
path of every imperative program, so they avoid the generic operator wrapper.
"""
import ctypes

import numpy as np
import torch

from .._autograd_state import STATE as _AUTOGRAD
from .. import _int_grad, autograd, upper_layers
from .._division import divide as _divide, divide_, mod, mod_
from .. import async_errors
from .._recorded_graph import note_new as _note_new     # every result recorded here is new
from ..async_errors import raise_deferred
from ..base import MXNetError, claim_dlpack_tensor, np_dtype, numpy_dtype, refuse_numpy_shape, torch_dtype
from ..context import Context, as_context, context_naming, current_context
from ..util import is_np_array, is_np_shape
from . import params_format
from .handles import array_of, handle_of, held_handle

_run_untracked = autograd.run_untracked
_run_recording = autograd.run_recording
_run_without_graph = autograd.run_without_graph
_INT_LIVE = _int_grad.LIVE
_ERRORS_LIVE = async_errors.LIVE

__all__ = ['NDArray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange', 'from_torch',
           'waitall', 'from_numpy', 'from_dlpack', 'to_dlpack_for_read', 'to_dlpack_for_write']

# MXNet's names for storage types, and its alias of the builtin slice (imported by its tests)
_STORAGE_TYPE_STR_TO_ID = {'undefined': -1, 'default': 0, 'row_sparse': 1, 'csr': 2}
py_slice = slice
# MXNet's type flags of dtypes (what its files store) and of gradient requests
_DTYPE_NP_TO_MX = {None: -1, np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4,
                   np.int8: 5, np.int64: 6, np.bool_: 7}
_DTYPE_MX_TO_NP = {flag: dtype for dtype, flag in _DTYPE_NP_TO_MX.items()}
_GRAD_REQ_MAP = {'null': 0, 'write': 1, 'add': 3}
# How NDArray.__getitem__ dispatches a key (get_indexing_dispatch_code)
_NDARRAY_EMPTY_TUPLE_INDEXING = -1
_NDARRAY_BASIC_INDEXING = 0
_NDARRAY_ADVANCED_INDEXING = 1


def get_indexing_dispatch_code(key):
    """Whether the tuple ``key`` indexes basically (integers, slices, None: 0), advancedly
    (arrays, lists, ranges: 1) or is an empty tuple among them (-1); ValueError for other
    key types."""
    assert isinstance(key, tuple)
    for idx in key:
        if isinstance(idx, (NDArray, np.ndarray, list, tuple, range)):
            if isinstance(idx, tuple) and not idx:
                return _NDARRAY_EMPTY_TUPLE_INDEXING
            return _NDARRAY_ADVANCED_INDEXING
        if not (isinstance(idx, (slice, int, np.integer)) or idx is None):
            raise ValueError('NDArray does not support slicing with key %s of type %s.' % (idx, type(idx)))
    return _NDARRAY_BASIC_INDEXING


# What a 0-d boolean index does (indexing_key_expand_implicit_axes): nothing, or a new axis
# of length 0 (False) or 1 (True)
_NDARRAY_NO_ZERO_DIM_BOOL_ARRAY = -1
_NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE = 0
_NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE = 1


def indexing_key_expand_implicit_axes(key, shape):
    """The indexing ``key`` for an array of ``shape`` with its implicit axes made explicit
    (``slice(None)`` for the ellipsis and the axes after the last index), boolean arrays
    turned into integer arrays by ``nonzero`` (NumPy semantics only), and what a 0-d boolean
    index adds: ``(expanded key, -1 / 0 / 1)``.

    >>> indexing_key_expand_implicit_axes((0,), (3, 4, 5))
    ((0, slice(None, None, None), slice(None, None, None)), -1)
    """
    if not isinstance(key, tuple):
        key = (key,)
    ellipsis_at, num_none, explicit = None, 0, []
    prepend = _NDARRAY_NO_ZERO_DIM_BOOL_ARRAY
    axis = 0
    for i, idx in enumerate(key):
        if idx is Ellipsis:
            if ellipsis_at is not None:
                raise IndexError('Cannot use more than one ellipsis (`...`) for indexing')
            ellipsis_at = i
            continue
        if isinstance(idx, (bool, np.bool_)):
            idx = array(idx, dtype=np.bool_)
        if idx is None:
            num_none += 1
        if isinstance(idx, NDArray) and idx.ndim == 0 and idx.dtype == np.bool_:
            prepend = _NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE if bool(idx._t) else _NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE
        elif isinstance(idx, NDArray) and idx.ndim == 0:
            explicit.append(int(idx._t.item()))
            axis += 1
        elif isinstance(idx, NDArray) and idx.dtype == np.bool_:
            if tuple(shape[axis:axis + idx.ndim]) != tuple(idx.shape):
                raise IndexError('boolean index of shape %s does not match the axes %d.. of an array of shape %s'
                                 % (idx.shape, axis, shape))
            if not is_np_array():
                raise ValueError('Cannot perform boolean indexing in legacy mode. Please activate numpy '
                                 'semantics by calling `npx.set_np()` in the global scope before calling '
                                 'this function.')
            explicit.extend(_new(t, idx._ctx) for t in torch.nonzero(idx._t, as_tuple=True))
            axis += idx.ndim
        else:
            explicit.append(idx)
            axis += 1
    explicit = tuple(explicit)
    if ellipsis_at is None:         # too few indices: the ellipsis is implicitly at the end
        ellipsis_at = len(explicit)
    implicit = len(shape) + num_none - len(explicit)
    return explicit[:ellipsis_at] + (slice(None),) * implicit + explicit[ellipsis_at:], prepend


def get_oshape_of_gather_nd_op(dshape, ishape):
    """The output shape of ``gather_nd`` for data of shape ``dshape`` and indices of shape ``ishape``."""
    assert dshape and ishape
    return tuple(ishape[1:]) + (tuple(dshape[ishape[0]:]) if ishape[0] < len(dshape) else ())

_object_new = object.__new__
_Tensor = torch.Tensor
_SCALAR_TYPES = (int, float)


def _new(tensor, ctx):
    """Wrap ``tensor`` without argument parsing: the constructor of every result."""
    arr = _object_new(NDArray)
    arr._t = tensor
    arr._ctx = ctx
    arr._grad = None
    return arr


def _new_empty_handle():
    """A new handle naming an empty array, to wrap with ``NDArray(handle)``: MXNet's
    placeholder for a result (an array of shape ``()`` without storage).

    Example
    -------
    >>> from neomx.ndarray.ndarray import _new_empty_handle
    >>> mx.nd.NDArray(_new_empty_handle()).shape
    ()
    """
    return held_handle(_new(torch.empty(()), current_context()))


def constructor(array_class):
    """``_new`` for ``array_class`` (NDArray or a subclass with the same slots)."""
    if array_class is NDArray:
        return _new

    def new(tensor, ctx):
        arr = _object_new(array_class)
        arr._t = tensor
        arr._ctx = ctx
        arr._grad = None
        return arr
    return new
# _new under the name the other packages use: an NDArray on ``ctx`` sharing ``tensor``.
wrap_tensor = _new


def from_torch(tensor, ctx=None):
    """Wrap a torch tensor (no copy). ``ctx`` defaults to the tensor's device."""
    if ctx is None:
        from ..context import context_of_device
        ctx = context_of_device(tensor.device)
    return _new(tensor, ctx)


def _is_scalar(x):
    return type(x) in _SCALAR_TYPES or isinstance(x, (np.generic, bool, int, float))


def _shape_str(t):
    return 'x'.join(str(d) for d in t.shape) if t.dim() else '()'


def _binary_error(op, lhs, rhs, err):
    return MXNetError('%s: operands could not be broadcast together with shapes %s %s (%s)'
                      % (op, tuple(lhs.shape), tuple(rhs.shape), str(err).split('\n')[0]))


def _check_dtypes(op, t, o):
    if t.dtype is not o.dtype:
        raise MXNetError('%s: operands have different dtypes %s and %s; use astype() to convert '
                         '(shapes %s and %s)' % (op, np_dtype(t.dtype).__name__, np_dtype(o.dtype).__name__,
                                                 tuple(t.shape), tuple(o.shape)))


def _scalar_for(t, scalar):
    """MXNet casts a scalar to the array's dtype first: ``int32_array + 1.9`` adds 1."""
    if type(scalar) is not int and not t.dtype.is_floating_point:
        return int(scalar)
    return scalar


def _carried(fn, args):
    """``fn(*args)`` recorded with integer gradients, or None where none is involved (see
    :mod:`neomx._int_grad`); called only while some integer tensor holds a carrier."""
    if _AUTOGRAD.recording:
        return _int_grad.run(fn, args)
    return None


def _call(fn, *tensors):
    """``fn(*tensors)`` as a neomx operation: straight to torch unless an input requires
    gradients (see :func:`neomx.autograd.run_untracked`), carries an integer gradient or a
    deferred error."""
    if _INT_LIVE[0] or _ERRORS_LIVE[0]:
        return _call_carrying(fn, tensors)
    for t in tensors:
        if t.requires_grad:
            return _run_untracked(fn, *tensors)
    return fn(*tensors)


def _call_carrying(fn, tensors):
    res = _carried(fn, tensors) if _INT_LIVE[0] else None
    if res is None:
        res = _run_untracked(fn, *tensors) if any(t.requires_grad for t in tensors) else fn(*tensors)
    return async_errors.carry(tensors, res) if _ERRORS_LIVE[0] else res


def _check_inplace(arr, value=None):
    """Refuse, while recording, a write into ``arr`` that MXNet would record in place: into
    an array of the recorded graph, or of a ``value`` (NDArray) that requires gradients."""
    if not _AUTOGRAD.recording:
        return
    if arr._t.requires_grad or (isinstance(value, NDArray) and (
            value._t.requires_grad or (_INT_LIVE[0] and _int_grad.is_integer(value._t)
                                       and _int_grad.carrier_of(value._t) is not None))):
        raise MXNetError('Inplace operations (+=, -=, x[:]=, etc) are not supported when recording '
                         'with autograd: the array of shape %s is part of the recorded graph'
                         % (tuple(arr._t.shape),))


# The MXNet operators NDArray's dunders stand for (autograd.get_symbol records them, AMP
# casts by their lists): (array op array, array op number); a reflected dunder has no
# array form (None).
ARITHMETIC_OPERATORS = {
    '__add__': ('broadcast_add', '_plus_scalar'), '__radd__': (None, '_plus_scalar'),
    '__sub__': ('broadcast_sub', '_minus_scalar'), '__rsub__': (None, '_rminus_scalar'),
    '__mul__': ('broadcast_mul', '_mul_scalar'), '__rmul__': (None, '_mul_scalar'),
    '__truediv__': ('broadcast_div', '_div_scalar'), '__rtruediv__': (None, '_rdiv_scalar'),
    '__mod__': ('broadcast_mod', '_mod_scalar'), '__rmod__': (None, '_rmod_scalar'),
    '__pow__': ('broadcast_power', '_power_scalar'), '__rpow__': (None, '_rpower_scalar')}
COMPARISON_OPERATORS = {
    '__eq__': ('broadcast_equal', '_equal_scalar'), '__ne__': ('broadcast_not_equal', '_not_equal_scalar'),
    '__gt__': ('broadcast_greater', '_greater_scalar'),
    '__ge__': ('broadcast_greater_equal', '_greater_equal_scalar'),
    '__lt__': ('broadcast_lesser', '_lesser_scalar'), '__le__': ('broadcast_lesser_equal', '_lesser_equal_scalar')}
_RECORDED_AS = {**ARITHMETIC_OPERATORS, **COMPARISON_OPERATORS}


def _recorded_scalar(op, array, scalar, res):
    """Record ``op`` with ``scalar`` for get_symbol (called while recording only)."""
    _note_new(op, {'scalar': float(scalar)}, (array,), res)


def _basic_slices(key, ndim):
    """``(begin, end, step, dropped)`` of a basic index (ints and slices, by axis from the
    first) as MXNet's ``slice`` operator takes it, ``dropped`` whether an int removed an
    axis; None for other indexes (arrays, Ellipsis, None), which get_symbol leaves out."""
    items = key if type(key) is tuple else (key,)
    if len(items) > ndim:
        return None
    begin, end, step, dropped = [], [], [], False
    for item in items:
        if type(item) is int:
            begin.append(item)
            end.append(item + 1 if item != -1 else None)
            step.append(None)
            dropped = True
        elif type(item) is slice:
            begin.append(item.start)
            end.append(item.stop)
            step.append(item.step)
        else:
            return None
    return tuple(begin), tuple(end), tuple(step), dropped


def _note_getitem(array, key, res):
    """Record ``array[key]`` as MXNet does: ``slice``, then ``Reshape`` where ints drop axes."""
    cut = _basic_slices(key, array._t.dim())
    if cut is None:
        return
    begin, end, step, dropped = cut
    attrs = {'begin': begin, 'end': end}
    if any(s is not None for s in step):
        attrs['step'] = step
    if not dropped:
        _note_new('slice', attrs, (array,), res)
        return
    sliced = _new(res._t, res._ctx)     # stands for the slice's own result
    _note_new('slice', attrs, (array,), sliced)
    _note_new('Reshape', {'shape': tuple(res._t.shape)}, (sliced,), res)


def _binary(op_name, torch_fn, int_fn=None):
    """An arithmetic dunder: array op array (broadcasting) or array op scalar."""
    int_live = _INT_LIVE
    array_op, scalar_op = _RECORDED_AS[op_name]

    def method(self, other):
        t = self._t
        if isinstance(other, NDArray):
            o = other._t
            if t.dtype is not o.dtype:
                _check_dtypes(op_name, t, o)
            fn = int_fn if (int_fn is not None and not t.dtype.is_floating_point) else torch_fn
            if int_live[0] and not t.dtype.is_floating_point:
                res = _carried(fn, (t, o))
                if res is not None:
                    return _new(res, self._ctx)
            try:
                if t.requires_grad or o.requires_grad:
                    if _AUTOGRAD.recording:
                        res = _new(_run_recording(fn, t, o), self._ctx)
                        _note_new(array_op, {}, (self, other), res)
                        return res
                    return _new(_run_without_graph(fn, t, o), self._ctx)
                return _new(fn(t, o), self._ctx)
            except MXNetError:
                raise
            except RuntimeError as err:
                raise _binary_error(op_name, t, o, err) from None
        if _is_scalar(other):
            fn = int_fn if (int_fn is not None and not t.dtype.is_floating_point) else torch_fn
            if int_live[0] and not t.dtype.is_floating_point:
                res = _carried(fn, (t, _scalar_for(t, other)))
                if res is not None:
                    return _new(res, self._ctx)
            if t.requires_grad:
                if _AUTOGRAD.recording:
                    res = _new(_run_recording(fn, t, _scalar_for(t, other)), self._ctx)
                    _recorded_scalar(scalar_op, self, other, res)
                    return res
                return _new(_run_without_graph(fn, t, _scalar_for(t, other)), self._ctx)
            return _new(fn(t, _scalar_for(t, other)), self._ctx)
        if isinstance(other, np.ndarray):
            return method(self, array(other, ctx=self._ctx, dtype=other.dtype))
        return NotImplemented
    method.__name__ = op_name
    return method


def _reflected(op_name, torch_fn, int_fn=None):
    """``scalar op array`` (``10 - a``, ``2 ** a``)."""
    scalar_op = _RECORDED_AS[op_name][1]

    def method(self, other):
        if _is_scalar(other):
            t = self._t
            fn = int_fn if (int_fn is not None and not t.dtype.is_floating_point) else torch_fn
            if _INT_LIVE[0] and not t.dtype.is_floating_point:
                res = _carried(fn, (_scalar_for(t, other), t))
                if res is not None:
                    return _new(res, self._ctx)
            if t.requires_grad:
                if _AUTOGRAD.recording:
                    res = _new(_run_recording(fn, _scalar_for(t, other), t), self._ctx)
                    _recorded_scalar(scalar_op, self, other, res)
                    return res
                return _new(_run_without_graph(fn, _scalar_for(t, other), t), self._ctx)
            return _new(fn(_scalar_for(t, other), t), self._ctx)
        if isinstance(other, np.ndarray):
            return getattr(array(other, ctx=self._ctx, dtype=other.dtype), op_name.replace('__r', '__'))(self)
        return NotImplemented
    method.__name__ = op_name
    return method


def _inplace(op_name, torch_method, int_method=None):
    """An in-place dunder (``a += b``): writes into this array's tensor, keeping the object."""
    def method(self, other):
        _check_inplace(self, other)
        t = self._t
        fn = int_method if (int_method is not None and not t.dtype.is_floating_point) else torch_method
        if isinstance(other, NDArray):
            o = other._t
            if t.dtype is not o.dtype:
                _check_dtypes(op_name, t, o)
            try:
                if t.requires_grad or o.requires_grad:
                    _run_untracked(fn, t, o)
                else:
                    fn(t, o)
            except MXNetError:
                raise
            except RuntimeError as err:
                raise _binary_error(op_name, t, o, err) from None
        elif _is_scalar(other):
            if t.requires_grad:
                _run_untracked(fn, t, _scalar_for(t, other))
            else:
                fn(t, _scalar_for(t, other))
        else:
            return NotImplemented
        return self
    method.__name__ = op_name
    return method


def _as_input_dtype(torch_fn):
    """A comparison returning 0/1 in the input dtype (float32 for float inputs), as MXNet does."""
    def compare(a, b):
        return torch_fn(a, b).to(a.dtype)
    return compare


def _int_division(op, in_place=False):
    """Truncating integer division for dunder ``op`` (MXNetError naming it on a zero divisor)."""
    if in_place:
        return lambda a, b: divide_(a, b, op)
    return lambda a, b: _divide(a, b, op)


def _rpow(a, b):
    return torch.pow(a, b)


class NDArray:
    """An n-dimensional array on a device, MXNet's ``mx.nd.NDArray``.

    Create arrays with :func:`array`, :func:`zeros`, :func:`ones`... rather than the
    constructor. ``NDArray(tensor, ctx)`` wraps an existing torch tensor without copying.

    Attributes
    ----------
    shape : tuple of int
    dtype : numpy scalar type (``np.float32``...)
    context, ctx : Context
    grad : NDArray or None
        The gradient buffer after :meth:`attach_grad`.

    Example
    -------
    >>> x = mx.nd.array([[1, 2], [3, 4]])
    >>> x
    <BLANKLINE>
    [[1. 2.]
     [3. 4.]]
    <NDArray 2x2 @cpu(0)>
    >>> (x * 2 + 1).asnumpy()
    array([[3., 5.],
           [7., 9.]], dtype=float32)
    >>> x.shape, x.dtype, x.context
    ((2, 2), <class 'numpy.float32'>, cpu(0))
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    <BLANKLINE>
    [[2. 4.]
     [6. 8.]]
    <NDArray 2x2 @cpu(0)>
    """
    __slots__ = ('_t', '_ctx', '_grad', '_rec', '__weakref__')   # _rec: see neomx._recorded_graph
    __array_priority__ = 1000.0
    # True for ``mx.np.ndarray``: the generated operator functions of each interface refuse
    # the other's arrays, as MXNet does.
    _is_np_array = False

    def __init__(self, handle, ctx=None, writable=True):  # pylint: disable=unused-argument
        # ``handle`` is MXNet's parameter name: here a torch.Tensor, or a ctypes handle
        tensor = handle
        if not isinstance(tensor, torch.Tensor):
            if not isinstance(tensor, ctypes.c_void_p):
                raise TypeError('NDArray wraps a torch.Tensor; use mx.nd.array() to create arrays from data')
            dlpack_tensor = claim_dlpack_tensor(tensor)
            if dlpack_tensor is not None:
                from ..context import context_of_device  # pylint: disable=import-outside-toplevel
                tensor, ctx = dlpack_tensor, context_of_device(dlpack_tensor.device)
            else:
                # MXNet's NDArray(handle, writable=False) in monitor callbacks (see .handles);
                # writable is accepted, not enforced
                source = array_of(tensor)
                tensor, ctx = source._t, source._ctx
        self._t = tensor
        self._ctx = ctx if ctx is not None else context_naming(tensor)
        self._grad = None

    # ------------------------------------------------------------ properties
    @property
    def _as_parameter_(self):
        """What ``ctypes`` passes for this array: a handle naming it (see :mod:`.handles`)."""
        return handle_of(self)

    @property
    def shape(self):
        return tuple(self._t.shape)

    @property
    def size(self):
        return self._t.numel()

    @property
    def ndim(self):
        return self._t.dim()

    @property
    def dtype(self):
        return np_dtype(self._t.dtype)

    @property
    def context(self):
        return self._ctx

    ctx = context

    @property
    def stype(self):
        return 'default'

    @property
    def grad(self):
        slot = self._grad
        return None if slot is None else slot.buf

    @property
    def _fresh_grad(self):
        """Whether a backward pass wrote this variable's gradient since the flag was reset."""
        slot = self._grad
        return False if slot is None else slot.fresh

    @_fresh_grad.setter
    def _fresh_grad(self, state):
        if self._grad is not None:
            self._grad.fresh = bool(state)

    @property
    def T(self):
        if self._t.dim() < 2:
            return self
        res = _new(_call(_transpose, self._t), self._ctx)
        if _AUTOGRAD.recording and self._t.requires_grad:   # for get_symbol
            _note_new('transpose', {}, (self,), res)
        return res

    @property
    def writable(self):
        return True

    @property
    def handle(self):
        """The torch tensor behind this array (neomx has no C handles)."""
        return self._t

    def __len__(self):
        if self._t.dim() == 0:
            raise TypeError('len() of a 0-d NDArray')
        return self._t.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __hash__(self):
        return id(self) // 16

    def __bool__(self):
        n = self._t.numel()
        if n == 1:
            return bool(self._t.item())
        if n == 0:
            return False
        raise ValueError('The truth value of an NDArray with more than one element is ambiguous.')

    __nonzero__ = __bool__

    def __repr__(self):
        shape_info = 'x'.join(str(d) for d in self._t.shape)
        return '\n%s\n<%s %s @%s>' % (str(self.asnumpy()), type(self).__name__, shape_info, self._ctx)

    def __str__(self):
        return self.__repr__()

    def __reduce__(self):
        # Pickling sends the values (used for worker processes), never files: see nd.save.
        return (_rebuild, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id,
                           'bfloat16' if self._t.dtype is torch.bfloat16 else None))

    def __getstate__(self):
        """MXNet's pickled state: {'handle': the array in MXNet's single-array byte layout}."""
        return {'handle': bytearray(params_format.tensor_to_raw_bytes(self._t, self._ctx))}

    def __setstate__(self, state):
        """Restore from ``__getstate__``'s dict (arrays saved on a GPU load on the CPU)."""
        self._t = params_format.tensor_from_raw_bytes(state['handle'])
        self._ctx = Context('cpu', 0)
        self._grad = None

    # --------------------------------------------------------- host interop
    def asnumpy(self):
        """A numpy copy of the values (bfloat16 is widened to float32)."""
        raise_deferred(self._t)
        t = self._t.detach()
        if t.dtype is torch.bfloat16:
            t = t.float()
        if t.device.type != 'cpu':
            return t.cpu().numpy()
        return t.numpy().copy()

    def __array__(self, dtype=None, copy=None):
        out = self.asnumpy()
        return out if dtype is None else out.astype(dtype)

    def asscalar(self):
        """The value of a one-element array as a numpy scalar, whatever its shape. (MXNet
        returns ``asnumpy()[()]`` for shapes other than (1,): a (1, 1) array stays an array,
        which NumPy 2's ``float()`` refuses; neomx gives the scalar.)"""
        if self._t.numel() != 1:
            raise ValueError('The current array is not a scalar (shape %s)' % (self.shape,))
        return self.asnumpy().reshape(())[()]

    def item(self):
        return self.asscalar()

    def tolist(self):
        return self.asnumpy().tolist()

    def asnumpy_view(self):
        """A numpy array sharing memory with this CPU array (no copy)."""
        raise_deferred(self._t)
        return self._t.detach().numpy()

    def __dlpack__(self, stream=None):
        return self._t.detach().__dlpack__(stream=stream) if stream is not None else self._t.detach().__dlpack__()

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()

    def to_dlpack_for_read(self):
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        return to_dlpack_for_write(self)

    def as_np_ndarray(self):
        """An ``mx.np.ndarray`` sharing this array's memory."""
        return upper_layers.get('np_array_from_tensor')(self._t, self._ctx)

    def as_nd_ndarray(self):
        """This array (it is already a legacy NDArray)."""
        return self

    def as_torch(self):
        """The torch tensor behind this array (shares memory and autograd history)."""
        return self._t

    def set_torch(self, tensor):
        """Make this array stand for ``tensor`` (the inverse of :meth:`as_torch`); returns the
        tensor it stood for. Shape, dtype and device must match: everything holding this
        array (a Parameter, a cached graph) then reads ``tensor``.

        >>> x = mx.nd.zeros((2,))
        >>> old = x.set_torch(torch.ones(2))
        >>> x
        <BLANKLINE>
        [1. 1.]
        <NDArray 2 @cpu(0)>
        """
        old = self._t
        if not isinstance(tensor, torch.Tensor):
            raise TypeError('set_torch: expected a torch.Tensor, got %s' % type(tensor).__name__)
        if tensor.shape != old.shape or tensor.dtype != old.dtype or tensor.device != old.device:
            raise MXNetError('set_torch: the tensor (%s, %s, %s) does not match the array (%s, %s, %s)'
                             % (tuple(tensor.shape), tensor.dtype, tensor.device,
                                tuple(old.shape), old.dtype, old.device))
        self._t = tensor
        return old

    # -------------------------------------------------------- copies/devices
    def copy(self):
        res = _new(_call(torch.clone, self._t), self._ctx)
        if _AUTOGRAD.recording and self._t.requires_grad:   # for get_symbol
            _note_new('_copyto', {}, (self,), res)
        return res

    def copyto(self, other):
        """Copy into ``other`` (an NDArray: returns it) or onto a Context (returns a new array)."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other._t.shape != self._t.shape:
                raise MXNetError('copyto: shape mismatch: source %s, target %s'
                                 % (self.shape, other.shape))
            _check_inplace(other)
            _call(_Tensor.copy_, other._t, self._t)
            return other
        if isinstance(other, str):
            other = as_context(other, 'copyto')
        if isinstance(other, Context):
            dev = other.torch_device
            t = self._t
            if t.device == dev:
                return _new(_call(torch.clone, t), other)
            return _new(_call(lambda x: x.to(dev, copy=True), t), other)
        raise TypeError('copyto does not support type %s' % type(other).__name__)

    def as_in_context(self, context):
        """This array on ``context``: itself if already there, else a copy."""
        if isinstance(context, str):
            context = as_context(context, 'as_in_context')
        if context == self._ctx:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def astype(self, dtype, copy=True):
        tdt = torch_dtype(dtype, 'astype')
        if tdt is self._t.dtype:
            return self.copy() if copy else self
        # recorded as the Cast it is (MXNet records a _copyto, whose Symbol keeps the dtype)
        res = _new(_call(lambda t: t.to(tdt), self._t), self._ctx)
        if _AUTOGRAD.recording and self._t.requires_grad:
            _note_new('Cast', {'dtype': np_dtype(tdt).__name__}, (self,), res)
        return res

    def tostype(self, stype):
        """A copy with storage type ``stype`` ('default', 'row_sparse', 'csr'), stored
        compressed: see ``mx.nd.sparse``."""
        return _SPARSE_STORAGE['cast_storage'](self, stype)

    def wait_to_read(self):
        """Block until the values are computed (torch runs eagerly; GPU work is synchronised);
        raises the error of an operator check that MXNet reports here (see :mod:`neomx.async_errors`)."""
        raise_deferred(self._t)
        if self._t.is_cuda:
            torch.cuda.current_stream(self._t.device).synchronize()

    def wait_to_write(self):
        self.wait_to_read()

    # --------------------------------------------------------------- autograd
    def attach_grad(self, grad_req='write', stype=None):
        """Allocate a gradient buffer (zeros) and mark this array as a variable to differentiate.

        ``grad_req``: 'write' (backward overwrites the buffer), 'add' (accumulates), 'null'.
        ``stype``: the gradient's storage type; a 'row_sparse' gradient holds the rows
        backward used (an embedding's or ``dot(csr, w)``'s rows: nothing dense is made, as
        MXNet's sparse gradients; it stores no rows before backward and after zeroing), other
        gradients the rows backward gave non-zero values.
        """
        grad_buf = None
        if stype == 'row_sparse' and grad_req != 'null':
            grad_buf = _SPARSE_STORAGE['zeros'](stype, self.shape, ctx=self._ctx, dtype=self._t.dtype)
        elif stype not in (None, 'default') and grad_req != 'null':
            grad_buf = _SPARSE_STORAGE['with_stype'](torch.zeros_like(self._t.detach()), self._ctx, stype)
        autograd.attach(self, grad_req, grad_buf)

    def detach(self):
        return _new(self._t.detach(), self._ctx)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        autograd.backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)

    # ---------------------------------------------------------------- reshape
    def reshape(self, *shape, **kwargs):
        """View with a new shape; MXNet's codes 0, -1, -2, -3, -4 and ``reverse=True`` apply."""
        from ..operator.shape import infer_reshape
        reverse = kwargs.pop('reverse', False)
        if 'shape' in kwargs:
            shape = kwargs.pop('shape')
        elif len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        if kwargs:
            raise TypeError('reshape() got unexpected keyword arguments %s' % ', '.join(kwargs))
        given = _shape_tuple(shape, 'reshape')
        target = infer_reshape(tuple(self._t.shape), given, reverse)
        res = _new(_call(lambda t: t.reshape(target), self._t), self._ctx)
        if _AUTOGRAD.recording and self._t.requires_grad:   # for get_symbol
            _note_new('Reshape', dict({'shape': given}, **({'reverse': True} if reverse else {})), (self,), res)
        return res

    # ------------------------------------------------------------- indexing
    def __getitem__(self, key):
        """MXNet indexing: basic indexes give views where the result is contiguous (copies
        otherwise, as MXNet does); index arrays (NDArray, list, numpy; any dtype, truncated to
        int) give copies; a result with no dims has shape ``(1,)``."""
        t = self._t
        if _INT_LIVE[0] and not t.dtype.is_floating_point:
            res = _carried(_getitem, (t, key))
            if res is not None:
                return _new(res, self._ctx)
        res = _run_untracked(_getitem, t, key) if t.requires_grad else _getitem(t, key)
        if _ERRORS_LIVE[0]:
            async_errors.carry((t,), res)
        res = _new(res, self._ctx)
        if _AUTOGRAD.recording and t.requires_grad:     # for get_symbol
            _note_getitem(self, key, res)
        return res

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether slicing an array of ``shape`` with ``slc_key`` (one ``slice`` per axis)
        selects a contiguous block: MXNet's rule for when basic indexing returns a view.

        Going from the last axis to the first, once an axis is cut to a proper subset every
        axis before it must keep at most one element; an axis keeping several elements
        must have step 1. A selection of at most one element is contiguous.
        """
        assert len(slc_key) == len(shape)
        counts = [len(range(*slc.indices(n))) for slc, n in zip(slc_key, shape)]
        if 0 in counts or int(np.prod(counts)) <= 1:
            return True
        cut = False
        for slc, n, count in zip(reversed(slc_key), reversed(shape), reversed(counts)):
            if count > 1 and (cut or slc.indices(n)[2] != 1):
                return False
            cut = cut or count < n
        return True

    def __setitem__(self, key, value):
        """Write ``value`` (NDArray, numpy, list or scalar; broadcast to the indexed region and
        cast to this array's dtype) into the region ``key`` selects."""
        # a copy into the whole array (``x[:] = y``, ``x[None]``, ``x[...]``) is not recorded
        _check_inplace(self, None if _whole(key) else value)
        t = self._t
        v = None
        try:
            if t.requires_grad or (isinstance(value, NDArray) and value._t.requires_grad):
                v = _run_untracked(_setitem_value, value, t)
                # (not recording now: _check_inplace) a graph recorded before reads the new value
                autograd.write_untracked(_setitem, t, key, v)
            else:
                v = _setitem_value(value, t)
                _setitem(t, key, v)
        except RuntimeError as err:
            raise ValueError('cannot assign a value of shape %s to index %r of an array of shape %s '
                             '(%s)' % (tuple(getattr(v, 'shape', ())), key, tuple(t.shape),
                                       str(err).split('\n')[0])) from None

    # ------------------------------------------------------------ arithmetic
    __add__ = _binary('__add__', torch.add)
    __sub__ = _binary('__sub__', torch.sub)
    __mul__ = _binary('__mul__', torch.mul)
    __truediv__ = _binary('__truediv__', torch.div, _int_division('__truediv__'))
    __div__ = __truediv__
    __mod__ = _binary('__mod__', mod)
    __pow__ = _binary('__pow__', torch.pow)
    __radd__ = _reflected('__radd__', lambda s, t: torch.add(t, s))
    __rsub__ = _reflected('__rsub__', lambda s, t: torch.rsub(t, s))
    __rmul__ = _reflected('__rmul__', lambda s, t: torch.mul(t, s))
    __rtruediv__ = _reflected('__rtruediv__', lambda s, t: s / t, _int_division('__rtruediv__'))
    __rdiv__ = __rtruediv__
    __rmod__ = _reflected('__rmod__', mod)
    __rpow__ = _reflected('__rpow__', _rpow)
    __iadd__ = _inplace('__iadd__', _Tensor.add_)
    __isub__ = _inplace('__isub__', _Tensor.sub_)
    __imul__ = _inplace('__imul__', _Tensor.mul_)
    __itruediv__ = _inplace('__itruediv__', _Tensor.div_, _int_division('__itruediv__', in_place=True))
    __idiv__ = __itruediv__
    __imod__ = _inplace('__imod__', mod_)
    __ipow__ = _inplace('__ipow__', _Tensor.pow_)
    __eq__ = _binary('__eq__', _as_input_dtype(torch.eq))
    __ne__ = _binary('__ne__', _as_input_dtype(torch.ne))
    __gt__ = _binary('__gt__', _as_input_dtype(torch.gt))
    __ge__ = _binary('__ge__', _as_input_dtype(torch.ge))
    __lt__ = _binary('__lt__', _as_input_dtype(torch.lt))
    __le__ = _binary('__le__', _as_input_dtype(torch.le))

    def __neg__(self):
        res = _new(_call(torch.neg, self._t), self._ctx)
        if _AUTOGRAD.recording and self._t.requires_grad:   # MXNet multiplies by -1
            _recorded_scalar('_mul_scalar', self, -1.0, res)
        return res

    def __pos__(self):
        return self

    def __abs__(self):
        res = _new(_call(torch.abs, self._t), self._ctx)
        if _AUTOGRAD.recording and self._t.requires_grad:
            _note_new('abs', {}, (self,), res)
        return res

    def __matmul__(self, other):
        from . import op
        return op.dot(self, other)

    def __float__(self):
        raise TypeError('float() is not supported on NDArray (as in MXNet 1.9.1); use asscalar()')

    def __int__(self):
        raise TypeError('int() is not supported on NDArray (as in MXNet 1.9.1); use asscalar()')

    def __index__(self):
        if self._t.numel() == 1 and not self._t.dtype.is_floating_point:
            return int(self._t.item())
        raise TypeError('only integer scalar arrays can be converted to a scalar index')


def _transpose(t):
    return t.permute(*range(t.dim() - 1, -1, -1)).contiguous()


def _getitem(t, key):
    """``t[key]`` with MXNet's indexing (see :meth:`NDArray.__getitem__`)."""
    if type(key) is int:
        if t.dim() != 1:
            return t[key]
        n = t.shape[0]
        if not -n <= key < n:
            raise IndexError('index %d is out of bounds for axis 0 with size %d' % (key, n))
        k = key % n
        return t[k:k + 1]
    key, flip_dims, basic = _torch_index(key, t)
    try:
        r = (t.flip(flip_dims) if flip_dims else t)[key]
    except IndexError as err:
        raise IndexError('%s (array shape %s)' % (err, tuple(t.shape))) from None
    if r.dim() == 0:
        r = r.reshape(1)
    elif basic and not r.is_contiguous():
        r = r.contiguous()
    return r


def _whole(key):
    """Whether index ``key`` selects a whole array as it is (``x[:]``, ``x[...]``, ``x[None]``)."""
    return key is None or key is Ellipsis or (isinstance(key, slice) and key == slice(None))


def _setitem(t, key, v):
    """Write ``v`` (a tensor of ``t``'s dtype or a scalar) into ``t[key]``."""
    if isinstance(key, slice) and key == slice(None):
        if isinstance(v, torch.Tensor):
            t.copy_(v)
        else:
            t.fill_(v)
        return
    index, flip_dims, _ = _torch_index(key, t)
    if not flip_dims:
        t[index] = v
        return
    # Negative steps index a flipped copy: write into it, then flip it back.
    flipped = t.flip(flip_dims)
    flipped[index] = v
    t.copy_(flipped.flip(flip_dims))


def _rebuild(values, dev_type, dev_id, special):
    arr = array(values, ctx=Context(dev_type, dev_id), dtype=values.dtype)
    return arr.astype('bfloat16') if special == 'bfloat16' else arr


_INDEX_ARRAYS = (NDArray, np.ndarray, list)


def _index_tensor(x, device):
    """An index array as int64: MXNet truncates float indices and reads booleans as 0 and 1."""
    if isinstance(x, NDArray):
        x = x._t
        return x if x.dtype is torch.int64 and x.device == device else x.to(device, torch.int64)
    return torch.as_tensor(np.asarray(x).astype(np.int64, copy=False), device=device)


def _torch_index(key, t):
    """Translate an MXNet index of ``t`` for torch.

    Returns
    -------
    key : tuple
        The index with index arrays as int64 tensors.
    flip_dims : list of int
        Dims of ``t`` to flip before indexing with ``key`` (torch has no negative steps; see
        :func:`neomx.operator.shape.flip_negative_steps`).
    basic : bool
        Whether ``key`` has no index arrays (then the result is a view of ``t``).
    """
    if not isinstance(key, tuple):
        key = (key,)
    basic = True
    if any(isinstance(k, _INDEX_ARRAYS) for k in key):
        basic = False
        key = tuple(_index_tensor(k, t.device) if isinstance(k, _INDEX_ARRAYS) else k for k in key)
    if any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in key):
        from ..operator.shape import flip_negative_steps
        flip_dims, key = flip_negative_steps(key, tuple(t.shape))
        return key, flip_dims, basic
    return key, (), basic


def _setitem_value(value, t):
    """``value`` as something torch can write into ``t``: a tensor of ``t``'s dtype and device
    (copied if it shares ``t``'s memory, so overlapping writes stay correct) or a scalar."""
    if isinstance(value, NDArray):
        v = value._t
        if v.dtype is not t.dtype or v.device != t.device:
            return v.to(device=t.device, dtype=t.dtype)
        if v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr():
            return v.clone()
        return v
    if _is_scalar(value):
        return _scalar_for(t, value.item() if isinstance(value, np.generic) else value)
    return torch.as_tensor(np.asarray(value), dtype=t.dtype, device=t.device)


# ------------------------------------------------------------------ creation
_ctx_or_default = as_context


def array(source_array, ctx=None, dtype=None):
    """An NDArray from a list, numpy array, NDArray, scalar or torch tensor.

    Lists and numpy arrays give float32 unless ``dtype`` is given (MXNet 1.9.1 ignores a
    numpy source's dtype); an NDArray or torch source keeps its dtype.
    """
    if (isinstance(source_array, NDArray) and source_array.stype != 'default') or hasattr(source_array, 'tocsr'):
        # a sparse source gives a sparse array, as in MXNet
        return _SPARSE_STORAGE['array'](source_array, ctx=ctx, dtype=dtype)
    ctx = _ctx_or_default(ctx)
    dev = ctx.torch_device
    if isinstance(source_array, NDArray):
        t = source_array._t.detach()
        tdt = t.dtype if dtype is None else torch_dtype(dtype, 'array')
        return _new(t.to(device=dev, dtype=tdt, copy=True), ctx)
    if isinstance(source_array, torch.Tensor):
        tdt = source_array.dtype if dtype is None else torch_dtype(dtype, 'array')
        return _new(source_array.detach().to(device=dev, dtype=tdt, copy=True), ctx)
    tdt = torch_dtype(dtype, 'array')
    try:
        host = np.array(source_array, dtype=numpy_dtype(tdt))
    except ValueError as err:
        raise TypeError('source_array must be array like: %s' % err) from None
    if tdt is torch.bfloat16:
        return _new(torch.from_numpy(host).to(device=dev, dtype=tdt), ctx)
    return _new(torch.from_numpy(host).to(dev), ctx)


def from_numpy(ndarray, zero_copy=True, array_cls=None):
    """An NDArray of a numpy array's values (keeps its dtype).

    With ``zero_copy`` the NDArray shares the numpy array's memory and, as in MXNet, the numpy
    array becomes read-only (write through the NDArray instead). ``array_cls``, an NDArray
    subclass whose instances wrap a tensor as NDArray's do, is the class of the result.
    """
    if not zero_copy:
        t = torch.from_numpy(np.array(ndarray))
    else:
        if not ndarray.flags['C_CONTIGUOUS']:
            raise ValueError('from_numpy with zero_copy needs a C-contiguous array')
        t = torch.from_numpy(ndarray)
        ndarray.flags.writeable = False
    if array_cls is not None and array_cls is not NDArray:
        return array_cls(t, Context('cpu', 0))
    return _new(t, Context('cpu', 0))


def _shape_tuple(shape, function, numpy_arrays=False):
    """``shape`` (an int or a sequence of ints) as a tuple; MXNetError naming ``function``
    for anything else (MXNet refuses ``(2.5, 3)`` rather than truncating it). A numpy array
    with dims is refused unless ``numpy_arrays`` (MXNet's ``empty`` and ``full`` take one)."""
    if not numpy_arrays or (isinstance(shape, np.ndarray) and shape.size <= 1):
        shape = refuse_numpy_shape(shape, function)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if dims is None or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        raise MXNetError('%s: shape must be an integer or a tuple of integers, got %r' % (function, shape))
    return tuple(int(d) for d in dims)


def _known_shape(shape, function, zero_dims_unknown=True, numpy_arrays=False):
    """``shape`` as a tuple, refused as MXNet's legacy shape semantics do outside
    ``mx.np_shape()``: there ``()`` and (unless ``zero_dims_unknown`` is off) a 0 size
    mean "unknown", which a creation operator cannot infer."""
    dims = _shape_tuple(shape, function, numpy_arrays)
    if not is_np_shape() and (not dims or (zero_dims_unknown and 0 in dims)):
        raise MXNetError('%s: cannot create an array of shape %s: outside mx.np_shape(), () and '
                         'zero sizes mean an unknown shape (use mx.np_shape() for zero-size and '
                         'scalar arrays)' % (function, dims))
    return dims


def empty(shape, ctx=None, dtype=None, stype=None):
    if stype not in (None, 'default'):     # a sparse array is empty when all zeros
        return zeros(shape, ctx, dtype, stype=stype)
    ctx = _ctx_or_default(ctx)
    dims = _shape_tuple(shape, 'empty', numpy_arrays=True)
    return _new(torch.empty(dims, dtype=torch_dtype(dtype, 'empty'), device=ctx.torch_device), ctx)


# The sparse storage types live in .sparse_arrays, whose classes derive from NDArray, so this
# module cannot import it; it registers its constructors here when imported (importing
# neomx.ndarray imports it).
_SPARSE_STORAGE = {}


def register_sparse_storage(with_stype, zeros, cast_storage, array):
    """Offer ``with_stype(tensor, ctx, stype)`` (a sparse array over a dense tensor: gradient
    buffers), ``zeros(stype, shape, ctx, dtype)``, ``cast_storage(arr, stype)`` and
    ``array(sparse source, ctx, dtype)`` to ``attach_grad(stype=)``, ``zeros``/``empty(stype=)``,
    ``NDArray.tostype`` and ``array``."""
    _SPARSE_STORAGE.update(with_stype=with_stype, zeros=zeros, cast_storage=cast_storage, array=array)


def _into(arr, out):
    """``arr``, or ``out`` filled with it when an output array is given."""
    if out is None:
        return arr
    out[:] = arr
    return out


def zeros(shape, ctx=None, dtype=None, out=None, stype=None, **kwargs):
    ctx = _ctx_or_default(ctx)
    tdt = torch_dtype(dtype, 'zeros')
    if stype not in (None, 'default'):
        _known_shape(shape, 'zeros')
        return _into(_SPARSE_STORAGE['zeros'](stype, shape, ctx=ctx, dtype=tdt), out)
    return _into(_new(torch.zeros(_known_shape(shape, 'zeros'), dtype=tdt, device=ctx.torch_device), ctx), out)


def ones(shape, ctx=None, dtype=None, out=None, **kwargs):
    ctx = _ctx_or_default(ctx)
    dims = _known_shape(shape, 'ones')
    return _into(_new(torch.ones(dims, dtype=torch_dtype(dtype, 'ones'), device=ctx.torch_device), ctx), out)


def full(shape, val, ctx=None, dtype=None, out=None):
    ctx = _ctx_or_default(ctx)
    dims = _known_shape(shape, 'full', zero_dims_unknown=False, numpy_arrays=True)
    arr = _new(torch.full(dims, val, dtype=torch_dtype(dtype, 'full'), device=ctx.torch_device), ctx)
    if out is not None:
        out[:] = arr
        return out
    return arr


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times (float32 by
    default); the ``_arange`` operator's values."""
    from ..operator.creation import arange as arange_values
    ctx = _ctx_or_default(ctx)
    values = arange_values(float(start), None if stop is None else float(stop), float(step), int(repeat),
                           bool(infer_range), ctx, torch_dtype(dtype, 'arange'))
    return _new(values, ctx)


_WAITALL_HOOKS = []


def on_waitall(hook):
    """Have :func:`waitall` call ``hook()``: it brings in values an array still waits for from
    outside torch (a ``row_sparse_pull`` under ``dist_async``), raising their errors there."""
    _WAITALL_HOOKS.append(hook)


def waitall():
    """Wait for all pending work (GPU streams, values still coming from a parameter server);
    CPU work in torch is already done."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    for hook in _WAITALL_HOOKS:
        hook()
    async_errors.raise_pending()     # an operator's deferred error, as MXNet's engine rethrows it


def from_dlpack(dlpack):
    """An NDArray sharing memory with a DLPack capsule or a ``__dlpack__`` producer.

    A capsule can be consumed once (as in MXNet); a producer such as a torch tensor or a
    NumPy array is read again on each call.

    >>> import numpy as np
    >>> a = np.arange(3, dtype='float32')
    >>> x = mx.nd.from_dlpack(a)
    >>> a[0] = 7
    >>> x
    <BLANKLINE>
    [7. 1. 2.]
    <NDArray 3 @cpu(0)>
    """
    t = torch.from_dlpack(dlpack)
    return from_torch(t)


def to_dlpack_for_read(data):
    """A DLPack capsule (a DLManagedTensor) viewing ``data`` without a copy, for reading.

    >>> cap = mx.nd.to_dlpack_for_read(mx.nd.ones((2,)))
    >>> mx.nd.from_dlpack(cap)
    <BLANKLINE>
    [1. 1.]
    <NDArray 2 @cpu(0)>
    """
    return torch.utils.dlpack.to_dlpack(data._t.detach())


def to_dlpack_for_write(data):
    """A DLPack capsule viewing ``data`` without a copy; writes through it change ``data``
    (torch runs every write eagerly, so there is nothing to wait for first)."""
    return torch.utils.dlpack.to_dlpack(data._t.detach())
