"""``mx.np``'s functions (MXNet 1.9.1's ``mxnet.numpy.multiarray``), made from the operator
registry.

The tables below name, for each function, the registry operator it runs; see
:mod:`._invoke` for how a call reaches the operator's implementation. Functions whose work
is a composition of operators (``atleast_2d``, ``split``...) are written out further down.
"""
import builtins as _builtins

import numpy as _np

from ..base import torch_dtype
from ..context import as_context, current_context
from ..operator import np_elemwise as _elemwise
from ._array import ndarray, array, empty, zeros, ones, full, arange, wrap
from ._invoke import unary_function, binary_function, run, direct, into_out, tensor_of, op_impl
from .. import _int_grad

_INT_LIVE = _int_grad.LIVE
_WHERE = op_impl('_npi_where')
_CONCATENATE = op_impl('_npi_concatenate')
_STACK = op_impl('_npi_stack')

__all__ = ['ndarray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange']


def _export(fn, name=None):
    name = name or fn.__name__
    globals()[name] = fn
    __all__.append(name)
    return fn


# ----------------------------------------------------------- element-wise
for _name, (_op, _impl) in _elemwise.NP_UNARY.items():
    _export(unary_function(_name, _op))
_export(unary_function('abs', '_npi_absolute'), 'abs')
_export(unary_function('invert', '_npi_bitwise_not'), 'invert')
_export(unary_function('deg2rad', '_npi_radians'), 'deg2rad')
_export(unary_function('rad2deg', '_npi_degrees'), 'rad2deg')
_export(unary_function('fabs', '_npi_absolute'), 'fabs')

for _name, (_op, _impl, _bool) in _elemwise.NP_BINARY.items():
    if _name in _elemwise.MIRRORED:
        _rop = _elemwise.NP_BINARY[_elemwise.MIRRORED[_name]][0] + '_scalar'
    else:
        _rop = _op + '_scalar' if _name in _elemwise.COMMUTATIVE else '_npi_r' + _op[5:] + '_scalar'
    _export(binary_function(_name, _op, _op + '_scalar', _rop))
_export(binary_function('divide', '_npi_true_divide', '_npi_true_divide_scalar', '_npi_rtrue_divide_scalar'))
_export(binary_function('remainder', '_npi_mod', '_npi_mod_scalar', '_npi_rmod_scalar'))


# The sequence types this NumPy returns (NumPy 2 gives tuples where NumPy 1 gave lists):
# functions that mirror NumPy's return the same, so code comparing with NumPy's results holds.
_SEQUENCE_OF = {name: type(getattr(_np, name)(_np.zeros(1), _np.zeros(1)))
                for name in ('broadcast_arrays', 'meshgrid', 'atleast_1d')}


def _ctx_of(*arrays):
    for a in arrays:
        if isinstance(a, ndarray):
            return a.ctx
    return None


def _is_symbol(x):
    """Whether ``x`` is a Symbol (``F.np`` in a hybridized block runs these functions on them)."""
    return hasattr(x, '_heads')


def _as_np(x, ctx=None):
    """``x`` as an ndarray (ndarrays and Symbols as they are; scalars, lists and numpy arrays
    copied)."""
    if type(x) is ndarray or _is_symbol(x):
        return x
    return wrap(tensor_of(x, ctx), ctx or current_context())


# --------------------------------------------------------------- reductions
@_export
def sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):  # pylint: disable=redefined-builtin
    """Sum of array elements over ``axis`` (all by default)."""
    return run('_np_sum', (a,), (axis, dtype, keepdims, initial), out)


@_export
def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product of array elements over ``axis`` (all by default)."""
    return run('_np_prod', (a,), (axis, dtype, keepdims, None), out)


@_export
def product(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product of array elements over ``axis`` (``prod``)."""
    return run('_np_prod', (a,), (axis, dtype, keepdims, None), out)


@_export
def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean over ``axis``; float32 for integer arrays."""
    return run('_npi_mean', (a,), (axis, dtype, keepdims, None), out)


@_export
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis``."""
    return run('_npi_std', (a,), (axis, dtype, ddof, keepdims), out)


@_export
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over ``axis``."""
    return run('_npi_var', (a,), (axis, dtype, ddof, keepdims), out)


@_export
def max(a, axis=None, keepdims=False, out=None):  # pylint: disable=redefined-builtin
    """Maximum over ``axis``."""
    return run('_np_max', (a,), (axis, keepdims, None), out)


@_export
def min(a, axis=None, keepdims=False, out=None):  # pylint: disable=redefined-builtin
    """Minimum over ``axis``."""
    return run('_np_min', (a,), (axis, keepdims, None), out)


@_export
def amax(a, axis=None, keepdims=False, out=None):
    """Maximum over ``axis``."""
    return run('_np_max', (a,), (axis, keepdims, None), out)


@_export
def amin(a, axis=None, keepdims=False, out=None):
    """Minimum over ``axis``."""
    return run('_np_min', (a,), (axis, keepdims, None), out)


@_export
def all(a, axis=None, keepdims=False, out=None):  # pylint: disable=redefined-builtin
    """Whether all elements over ``axis`` are true."""
    return run('_np_all', (a,), (axis, keepdims), out)


@_export
def any(a, axis=None, keepdims=False, out=None):  # pylint: disable=redefined-builtin
    """Whether any element over ``axis`` is true."""
    return run('_np_any', (a,), (axis, keepdims), out)


@_export
def sometrue(a, axis=None, keepdims=False, out=None):
    """Whether any element over ``axis`` is true (``any``)."""
    return run('_np_any', (a,), (axis, keepdims), out)


@_export
def argmax(a, axis=None, out=None):
    """Indices of the maximum values along ``axis`` (of the flattened array for None)."""
    return run('_npi_argmax', (a,), (axis, False), out)


@_export
def argmin(a, axis=None, out=None):
    """Indices of the minimum values along ``axis`` (of the flattened array for None)."""
    return run('_npi_argmin', (a,), (axis, False), out)


@_export
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array for None)."""
    if dtype is None and isinstance(a, ndarray) and a.dtype == _np.bool_:
        dtype = 'int64'
    return run('_np_cumsum', (a,), (axis, None if dtype is None else torch_dtype(dtype, 'cumsum')), out)


@_export
def average(a, axis=None, weights=None, returned=False, out=None):
    """Weighted average over ``axis``; with ``returned`` also the sum of the weights."""
    res = run('_npi_average', (a, weights), (axis, returned, weights is not None))
    if returned or _is_symbol(res):     # a Symbol shows the visible outputs only
        return res
    return into_out(res[0], out)


def _quantiles(name, a, q, axis, out, interpolation, keepdims, scale):
    if isinstance(q, (int, float, _np.generic)):
        return run('_npi_percentile', (a, None), (axis, interpolation, keepdims, float(q) * scale), out)
    return run('_npi_percentile', (a, _as_np(q) * scale if scale != 1 else q), (axis, interpolation, keepdims, None),
               out)


@_export
def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation='linear', keepdims=False):
    """The ``q``-th percentiles (0..100) over ``axis``."""
    if overwrite_input is not None:
        raise NotImplementedError('percentile: overwrite_input is not supported')
    return _quantiles('percentile', a, q, axis, out, interpolation, keepdims, 1)


@_export
def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation='linear', keepdims=False):
    """The ``q``-th quantiles (0..1) over ``axis``."""
    if overwrite_input is not None:
        raise NotImplementedError('quantile: overwrite_input is not supported')
    return _quantiles('quantile', a, q, axis, out, interpolation, keepdims, 100)


# ------------------------------------------------------------ element-wise
@_export
def clip(a, a_min, a_max, out=None):
    """Values limited to [a_min, a_max]."""
    if a_min is None and a_max is None:
        raise ValueError('array_clip: One of max or min must be given')
    return run('_npi_clip', (a,), (None if a_min is None else float(a_min), None if a_max is None else float(a_max)),
               out)


@_export
def around(x, decimals=0, out=None, **kwargs):
    """Values rounded to ``decimals`` places (halves to even)."""
    return run('_npi_around', (x,), (decimals,), out)


@_export
def round(x, decimals=0, out=None, **kwargs):  # pylint: disable=redefined-builtin
    """Values rounded to ``decimals`` places (``around``)."""
    return run('_npi_around', (x,), (decimals,), out)


@_export
def round_(x, decimals=0, out=None, **kwargs):
    """Values rounded to ``decimals`` places (``around``)."""
    return run('_npi_around', (x,), (decimals,), out)


@_export
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):  # pylint: disable=redefined-outer-name
    """NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (the type's extremes)."""
    if type(x) is not ndarray and not _is_symbol(x):
        return _np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    res = run('_npi_nan_to_num', (x,), (True, nan, posinf, neginf))
    if not copy and not _is_symbol(x):
        x[...] = res
        return x
    return res


@_export
def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y``; ``nonzero(condition)`` alone."""
    if type(condition) is ndarray and type(x) is ndarray and type(y) is ndarray and not (
            _INT_LIVE[0] or x._t.requires_grad or y._t.requires_grad):
        return direct('_npi_where', _WHERE, (condition._t, x._t, y._t), x._ctx)
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError('either both or neither of x and y should be given')
    if isinstance(condition, (int, float, bool, _np.generic)):
        return _as_np(x) if condition else _as_np(y)
    x_scalar = isinstance(x, (int, float, bool, _np.generic))
    y_scalar = isinstance(y, (int, float, bool, _np.generic))
    if x_scalar and y_scalar:
        return run('_npi_where_scalar2', (condition,), (float(x), float(y)))
    if x_scalar:
        return run('_npi_where_rscalar', (condition, y), (float(x),))
    if y_scalar:
        return run('_npi_where_lscalar', (condition, x), (float(y),))
    if type(condition) is ndarray and type(x) is ndarray and type(y) is ndarray and not (
            _INT_LIVE[0] or x._t.requires_grad or y._t.requires_grad):
        return direct('_npi_where', _WHERE, (condition._t, x._t, y._t), x._ctx)
    return run('_npi_where', (condition, x, y))


# ---------------------------------------------------------------- creation
@_export
def empty_like(prototype, dtype=None, order='C', subok=False, shape=None):  # pylint: disable=unused-argument
    """An uninitialized array of ``prototype``'s shape (or ``shape``) and dtype."""
    return empty(prototype.shape if shape is None else shape, dtype=prototype.dtype if dtype is None else dtype,
                 ctx=prototype.ctx)


@_export
def zeros_like(a, dtype=None, order='C', ctx=None, out=None):  # pylint: disable=unused-argument
    """An array of zeros of ``a``'s shape and dtype."""
    return full_like(a, 0, dtype=dtype, ctx=ctx, out=out)


@_export
def ones_like(a, dtype=None, order='C', ctx=None, out=None):  # pylint: disable=unused-argument
    """An array of ones of ``a``'s shape and dtype."""
    return full_like(a, 1, dtype=dtype, ctx=ctx, out=out)


_FULL_LIKE = op_impl('_npi_full_like')


@_export
def full_like(a, fill_value, dtype=None, order='C', ctx=None, out=None):  # pylint: disable=unused-argument
    """An array of ``a``'s shape and dtype filled with ``fill_value``."""
    if type(a) is ndarray and dtype is None and ctx is None and out is None and type(fill_value) in (int, float):
        return direct('_npi_full_like', _FULL_LIKE, (a._t, fill_value, None, None), a._ctx)    # no gradient
    a = _as_np(a)
    res = run('_npi_full_like', (a,), (fill_value, ctx, dtype))
    if ctx is not None and not _is_symbol(res):
        res = res.as_in_context(as_context(ctx))
    return into_out(res, out)


@_export
def identity(n, dtype=None, ctx=None):
    """The n x n identity matrix."""
    if not isinstance(n, (int, _np.integer)):
        raise TypeError('Input \'n\' should be an integer')
    if n < 0:
        raise ValueError('Input \'n\' cannot be negative')
    return run('_npi_identity', (), ((n, n), ctx, dtype or 'float32'), ctx=as_context(ctx))


@_export
def eye(N, M=None, k=0, dtype=_np.float32, **kwargs):  # pylint: disable=invalid-name
    """An N x M array with ones on the ``k``-th diagonal."""
    ctx = kwargs.pop('ctx', None)
    return run('_npi_eye', (), (N, M, k, ctx, dtype), ctx=as_context(ctx))


@_export
def indices(dimensions, dtype=_np.int32, ctx=None):
    """An array holding the index grid of an array of shape ``dimensions``, one row per axis."""
    if not isinstance(dimensions, (tuple, list)):
        raise ValueError('The dimensions must be sequence of ints')
    return run('_npi_indices', (), (tuple(dimensions), dtype, ctx), ctx=as_context(ctx))


@_export
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None):
    """``num`` evenly spaced samples from ``start`` to ``stop``."""
    if isinstance(start, (list, _np.ndarray, ndarray)) or isinstance(stop, (list, _np.ndarray, ndarray)):
        raise NotImplementedError('linspace: start and stop must be scalars (as in MXNet)')
    if axis != 0:
        raise NotImplementedError('linspace: only axis=0 is supported')
    res = run('_npi_linspace', (), (float(start), float(stop), int(num), endpoint, ctx, dtype),
              ctx=as_context(ctx))
    if retstep:
        div = (num - 1) if endpoint else num
        return res, (stop - start) / div if div > 0 else float('nan')
    return res


@_export
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    """``base`` to the powers of ``num`` evenly spaced samples from ``start`` to ``stop``."""
    if axis != 0:
        raise NotImplementedError('logspace: only axis=0 is supported')
    return run('_npi_logspace', (), (float(start), float(stop), int(num), endpoint, float(base), ctx, dtype),
               ctx=as_context(ctx))


def _window_function(name):
    op = '_npi_' + name

    def window(M, dtype=_np.float32, ctx=None):  # pylint: disable=invalid-name
        return run(op, (), (int(M), ctx, dtype), ctx=as_context(ctx))
    window.__name__ = window.__qualname__ = name
    window.__doc__ = 'The %s window of M points (float32 by default).' % name.capitalize()
    return window


for _name in ('hanning', 'hamming', 'blackman'):
    _export(_window_function(_name))


@_export
def copy(a, out=None):  # pylint: disable=redefined-outer-name
    """A copy of the array."""
    return run('_npi_copy', (a,), (), out)


# ------------------------------------------------------------------ shapes
@_export
def shape(a):
    """The shape of an array."""
    return _np.shape(a) if not isinstance(a, ndarray) else a.shape


@_export
def reshape(a, newshape, order='C', out=None):
    """``a`` with shape ``newshape`` (one dim may be -1)."""
    return run('_np_reshape', (a,), (newshape, order), out)


@_export
def ravel(x, order='C'):
    """The flattened array."""
    if order != 'C':
        raise NotImplementedError('ravel: only order=\'C\' is supported')
    if isinstance(x, (int, float, bool, _np.generic)):
        return x
    return run('_np_reshape', (x,), ((-1,), 'C'))


@_export
def resize(a, new_shape):
    """``a`` repeated (or cut) to fill ``new_shape``."""
    return run('_npi_resize_fallback', (a,), (new_shape,))


@_export
def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed by default)."""
    return run('_np_transpose', (a,), (axes,))


@_export
def swapaxes(a, axis1, axis2):
    """``a`` with two axes interchanged."""
    return run('_npi_swapaxes', (a,), (axis1, axis2))


@_export
def moveaxis(a, source, destination):
    """``a`` with axes moved to new positions."""
    return run('_np_moveaxis', (a,), (source, destination))


@_export
def expand_dims(a, axis):
    """``a`` with a new axis of length 1 at ``axis``."""
    return run('_npi_expand_dims', (a,), (axis,))


@_export
def squeeze(a, axis=None, out=None):
    """``a`` without its length-1 axes."""
    return run('_np_squeeze', (a,), (axis,), out)


@_export
def flip(m, axis=None, out=None):
    """``m`` reversed along ``axis`` (all axes for None)."""
    return run('_npi_flip', (m,), (axis,), out)


@_export
def flipud(m):
    """``m`` reversed along axis 0."""
    if getattr(m, 'ndim', 1) < 1:
        raise ValueError('Input must be >= 1-d.')
    return run('_npi_flip', (m,), (0,))


@_export
def fliplr(m):
    """``m`` reversed along axis 1."""
    if getattr(m, 'ndim', 2) < 2:
        raise ValueError('Input must be >= 2-d.')
    return run('_npi_flip', (m,), (1,))


@_export
def roll(a, shift, axis=None):
    """Elements rolled by ``shift`` along ``axis``."""
    return run('_np_roll', (a,), (shift, axis))


@_export
def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    return run('_npi_rot90', (m,), (k, axes))


@_export
def tile(A, reps):  # pylint: disable=invalid-name
    """``A`` repeated ``reps`` times along each axis."""
    if isinstance(A, (int, float, bool, _np.generic)):
        A = array(A)
    return run('_npi_tile', (A,), (reps,))


@_export
def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis``."""
    if isinstance(repeats, ndarray):
        repeats = repeats.asnumpy().tolist()
    return run('_np_repeat', (a,), (repeats, axis))


@_export
def broadcast_to(array, shape):  # pylint: disable=redefined-outer-name
    """``array`` broadcast to ``shape``."""
    return run('_npi_broadcast_to', (array,), (shape,))


@_export
def broadcast_arrays(*args):
    """The arrays broadcast against each other."""
    shape_ = _np.broadcast_shapes(*[a.shape for a in args])
    return _SEQUENCE_OF['broadcast_arrays'](broadcast_to(a, shape_) for a in args)


def _sequence(seq, name):
    if isinstance(seq, ndarray):
        return list(seq)
    if not isinstance(seq, (list, tuple)):
        raise TypeError('%s: expected a sequence of arrays, got %s' % (name, type(seq).__name__))
    if _builtins.any(_is_symbol(a) for a in seq):
        return list(seq)
    ctx = _ctx_of(*seq)
    return [_as_np(a, ctx) for a in seq]


def _joined_directly(op, impl, seq, attrs, out):
    """``op`` on the arrays of list ``seq`` through :func:`direct` where that is the whole
    call (all ndarrays, nothing recording gradients, no ``out``), else None."""
    if out is None and type(seq) in (list, tuple) and seq and not _INT_LIVE[0]:
        tensors = []
        for a in seq:
            if type(a) is not ndarray or a._t.requires_grad:
                return None
            tensors.append(a._t)
        attrs['num_args'] = len(tensors)
        return direct(op, impl, tensors, seq[0]._ctx, attrs)
    return None


@_export
def concatenate(seq, axis=0, out=None):
    """The arrays joined along ``axis`` (flattened first for None)."""
    res = _joined_directly('_npi_concatenate', _CONCATENATE, seq, {'dim': axis}, out)
    if res is not None:
        return res
    arrays = _sequence(seq, 'concatenate')
    if not arrays:
        raise ValueError('need at least one array to concatenate')
    return run('_npi_concatenate', arrays, {'num_args': len(arrays), 'dim': axis}, out)


@_export
def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (both flattened for None)."""
    return concatenate([arr, values], axis=axis)


@_export
def stack(arrays, axis=0, out=None):
    """The arrays joined along a new axis."""
    res = _joined_directly('_npi_stack', _STACK, arrays, {'axis': axis}, out)
    if res is not None:
        return res
    arrays = _sequence(arrays, 'stack')
    if not arrays:
        raise ValueError('need at least one array to stack')
    return run('_npi_stack', arrays, {'axis': axis, 'num_args': len(arrays)}, out)


@_export
def vstack(arrays, out=None):
    """The arrays joined along axis 0 (1-D arrays as rows)."""
    arrays = _sequence(arrays, 'vstack')
    return run('_npi_vstack', arrays, {'num_args': len(arrays)}, out)


@_export
def row_stack(arrays):
    """The arrays joined along axis 0 (``vstack``)."""
    arrays = _sequence(arrays, 'row_stack')
    return run('_npi_vstack', arrays, {'num_args': len(arrays)})


@_export
def hstack(arrays):
    """The arrays joined along axis 1 (axis 0 for 1-D arrays)."""
    arrays = _sequence(arrays, 'hstack')
    return run('_npi_hstack', arrays, {'num_args': len(arrays), 'dim': 1})


@_export
def dstack(arrays):
    """The arrays joined along axis 2."""
    arrays = _sequence(arrays, 'dstack')
    return run('_npi_dstack', arrays, {'num_args': len(arrays), 'dim': 1})


@_export
def column_stack(tup):
    """1-D arrays as columns joined into a 2-D array."""
    arrays = _sequence(tup, 'column_stack')
    return run('_npi_column_stack', arrays, {'num_args': len(arrays)})


def _atleast(n, arys):
    arrays = [_as_np(a) for a in arys]
    res = run('_np_atleast_%dd' % n, arrays, {'num_args': len(arrays)})
    return res[0] if len(res) == 1 else _SEQUENCE_OF['atleast_1d'](res)


@_export
def atleast_1d(*arys):
    """Each array with at least one dim."""
    return _atleast(1, arys)


@_export
def atleast_2d(*arys):
    """Each array with at least two dims."""
    return _atleast(2, arys)


@_export
def atleast_3d(*arys):
    """Each array with at least three dims."""
    return _atleast(3, arys)


def _parts(res):
    """The list of arrays (or Symbols) of a split: one output comes as the array itself."""
    if isinstance(res, ndarray) or (_is_symbol(res) and len(res._heads) == 1):
        return [res]
    return list(res)


def _split_args(indices_or_sections, name):
    if isinstance(indices_or_sections, (int, _np.integer)):
        if indices_or_sections <= 0:
            raise ValueError('number sections must be larger than 0.')
        return (), int(indices_or_sections)
    if isinstance(indices_or_sections, (list, tuple, set, _np.ndarray, ndarray)):
        return tuple(int(i) for i in (indices_or_sections.tolist() if hasattr(indices_or_sections, 'tolist')
                                      else indices_or_sections)), 0
    raise ValueError('%s: indices_or_sections must be an int or a sequence of ints' % name)


@_export
def split(ary, indices_or_sections, axis=0):
    """``ary`` cut into equal parts or at indices along ``axis``."""
    indices_, sections = _split_args(indices_or_sections, 'split')
    return _parts(run('_npi_split', (ary,), (indices_, axis, False, sections)))


@_export
def array_split(ary, indices_or_sections, axis=0):
    """``ary`` cut into nearly equal parts or at indices along ``axis``."""
    indices_, sections = _split_args(indices_or_sections, 'array_split')
    return _parts(run('_npi_array_split', (ary,), (indices_, axis, sections)))


@_export
def hsplit(ary, indices_or_sections):
    """``ary`` cut along axis 1 (axis 0 for 1-D arrays)."""
    indices_, sections = _split_args(indices_or_sections, 'hsplit')
    return _parts(run('_npi_hsplit', (ary,), (indices_, 1, False, sections)))


@_export
def vsplit(ary, indices_or_sections):
    """``ary`` cut along axis 0."""
    if not _is_symbol(ary) and ary.ndim < 2:
        raise ValueError('vsplit only works on arrays of 2 or more dimensions')
    return split(ary, indices_or_sections, 0)


@_export
def dsplit(ary, indices_or_sections):
    """``ary`` cut along axis 2."""
    if not _is_symbol(ary) and ary.ndim < 3:
        raise ValueError('dsplit only works on arrays of 3 or more dimensions')
    return split(ary, indices_or_sections, 2)


@_export
def diag(array, k=0):  # pylint: disable=redefined-outer-name
    """The ``k``-th diagonal, or a 2-D array with a 1-D array on its ``k``-th diagonal."""
    return run('_np_diag', (array,), (k,))


@_export
def diagflat(array, k=0):  # pylint: disable=redefined-outer-name
    """A 2-D array with the flattened input on its ``k``-th diagonal."""
    return run('_np_diagflat', (array,), (k,))


@_export
def diagonal(a, offset=0, axis1=0, axis2=1):
    """Diagonals of the planes of ``axis1`` and ``axis2``."""
    return run('_np_diagonal', (a,), (offset, axis1, axis2))


@_export
def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along diagonals."""
    return run('_np_trace', (a,), (offset, axis1, axis2), out)


@_export
def tril(m, k=0):
    """The lower triangle of the last two axes."""
    return run('_npi_tril', (m,), (k,))


@_export
def diag_indices_from(arr):
    """The indices of the main diagonal of a square array, one array per axis."""
    res = run('_npi_diag_indices_from', (arr,))
    return res if _is_symbol(res) else tuple(res)   # a Symbol: the (ndim, n) array of indices


@_export
def pad(x, pad_width=None, mode='constant', **kwargs):
    """``x`` padded by ``pad_width`` in ``mode`` (constant, edge, reflect, symmetric, maximum, minimum)."""
    if mode not in ('constant', 'edge', 'reflect', 'symmetric', 'maximum', 'minimum'):
        raise ValueError('pad: mode %r is not supported' % (mode,))
    value = kwargs.pop('constant_values', 0)
    reflect_type = kwargs.pop('reflect_type', 'even')
    if kwargs:
        raise TypeError('pad: unexpected keyword arguments %s' % ', '.join(kwargs))
    if isinstance(pad_width, ndarray):
        pad_width = pad_width.asnumpy()
    return run('_npi_pad', (x,), (_np.asarray(pad_width).tolist(), mode, float(value), reflect_type))


@_export
def diff(a, n=1, axis=-1, prepend=None, append=None):  # pylint: disable=redefined-outer-name
    """The ``n``-th discrete difference along ``axis``."""
    if prepend is not None or append is not None:
        raise NotImplementedError('diff: prepend and append are not supported (as in MXNet)')
    return run('_npi_diff', (a,), (n, axis))


@_export
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array."""
    ary = _as_np(ary)
    ctx_ = None if _is_symbol(ary) else ary.ctx
    begin_arr = to_begin if isinstance(to_begin, (ndarray, list, tuple, _np.ndarray)) or _is_symbol(to_begin) \
        else None
    end_arr = to_end if isinstance(to_end, (ndarray, list, tuple, _np.ndarray)) or _is_symbol(to_end) else None
    return run('_npi_ediff1d', (ary, None if begin_arr is None else _as_np(begin_arr, ctx_),
                                None if end_arr is None else _as_np(end_arr, ctx_)),
               (begin_arr is not None, end_arr is not None,
                None if to_begin is None or begin_arr is not None else float(to_begin),
                None if to_end is None or end_arr is not None else float(to_end)))


@_export
def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, a slice or indices) along ``axis``."""
    if isinstance(obj, slice):
        return run('_npi_delete', (arr, None), (obj.start, obj.stop, obj.step, None, axis))
    if isinstance(obj, (int, _np.integer)):
        return run('_npi_delete', (arr, None), (None, None, None, int(obj), axis))
    return run('_npi_delete', (arr, _as_np(obj)), (None, None, None, None, axis))


@_export
def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before ``obj`` (an int, a slice or indices) along ``axis``."""
    scalar = isinstance(values, (int, float, bool, _np.generic))
    vals = None if scalar else _as_np(values)
    val = float(values) if scalar else None
    if isinstance(obj, slice):
        return run('_npi_insert', (arr, vals, None), (val, obj.start, obj.stop, obj.step, None, axis))
    if isinstance(obj, (int, _np.integer)):
        return run('_npi_insert', (arr, vals, None), (val, None, None, None, int(obj), axis))
    return run('_npi_insert', (arr, vals, _as_np(obj)), (val, None, None, None, None, axis))


@_export
def take(a, indices, axis=None, mode='raise', out=None):  # pylint: disable=redefined-outer-name
    """Elements of ``a`` at ``indices`` along ``axis``."""
    if mode not in ('raise', 'wrap', 'clip'):
        raise ValueError("take: mode must be 'raise', 'wrap' or 'clip', got %r" % (mode,))
    if isinstance(indices, (int, _np.integer)):
        return run('_npi_take', (a, array(indices, dtype='int64', ctx=_ctx_of(a))), (axis, mode), out)
    return run('_npi_take', (a, indices), (axis, mode), out)


# ---------------------------------------------------------------- searching
@_export
def sort(a, axis=-1, kind=None, order=None):
    """A sorted copy of ``a`` along ``axis``."""
    if order is not None:
        raise NotImplementedError('sort: order is not supported')
    return run('_npi_sort', (a,), (axis, True))


@_export
def argsort(a, axis=-1, kind=None, order=None):
    """The indices that sort ``a`` along ``axis``."""
    if order is not None:
        raise NotImplementedError('argsort: order is not supported')
    return run('_npi_argsort', (a,), (axis, True, 'int64'))


@_export
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique elements, with first indices, inverse indices and counts as asked."""
    res = run('_npi_unique', (ar,), (return_index, return_inverse, return_counts, axis))
    return res[0] if len(res) == 1 else res


@_export
def nonzero(a):
    """The indices of the non-zero elements, one array per axis."""
    res = run('_npi_nonzero', (a,))
    return tuple(res[:, i] for i in range(res.shape[1])) if res.ndim == 2 else (res,)


@_export
def bincount(x, weights=None, minlength=0):
    """Occurrences of each non-negative integer (summed weights with ``weights``)."""
    return run('_npi_bincount', (x, weights), (minlength, weights is not None))


@_export
def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # pylint: disable=redefined-builtin
    """The histogram of ``a`` and its bin edges."""
    if normed is True or density is True:
        raise NotImplementedError('histogram: density and normed are not supported (as in MXNet)')
    if weights is not None:
        raise NotImplementedError('histogram: weights are not supported (as in MXNet)')
    if isinstance(bins, (int, _np.integer)):
        return tuple(run('_npi_histogram', (a, None), (int(bins), range)))
    return tuple(run('_npi_histogram', (a, _as_np(bins)), (None, range)))


@_export
def unravel_index(indices, shape, order='C'):  # pylint: disable=redefined-outer-name
    """The coordinates in an array of ``shape`` of flat ``indices``."""
    if order != 'C':
        raise NotImplementedError('unravel_index: only order=\'C\' is supported')
    if isinstance(shape, (int, _np.integer)):
        shape = (int(shape),)
    if isinstance(indices, (int, _np.integer)):
        return _np.unravel_index(indices, shape)
    flat = _as_np(indices).astype('int64')
    coords = []
    for n in reversed(tuple(shape)):
        coords.append(flat % n)
        flat = true_divide(flat - coords[-1], n).astype('int64')
    return tuple(c for c in reversed(coords))


@_export
def shares_memory(a, b, max_work=None):
    """Whether the two arrays share memory."""
    return bool(run('_npi_share_memory', (a, b)).item())


@_export
def may_share_memory(a, b, max_work=None):
    """Whether the two arrays may share memory."""
    return bool(run('_npi_share_memory', (a, b)).item())


# ---------------------------------------------------------------- products
@_export
def dot(a, b, out=None):
    """Dot product of two arrays."""
    if type(a) is ndarray and type(b) is ndarray and out is None and not (
            _INT_LIVE[0] or a._t.requires_grad or b._t.requires_grad):
        return direct('_np_dot', _DOT, (a._t, b._t), a._ctx)
    return run('_np_dot', (a, b), (), out)


_DOT = op_impl('_np_dot')


@_export
def matmul(a, b, out=None, **kwargs):
    """Matrix product of two arrays (broadcast over leading axes)."""
    return run('_npi_matmul', (a, b), (), out)


@_export
def tensordot(a, b, axes=2):
    """Sum of products over the given axes."""
    if isinstance(axes, (int, _np.integer)):
        return run('_npi_tensordot_int_axes', (a, b), (int(axes),))
    if len(axes) != 2:
        raise ValueError('Axes must consist of two arrays.')
    a_axes, b_axes = axes
    a_axes = (a_axes,) if isinstance(a_axes, (int, _np.integer)) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, (int, _np.integer)) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError('Axes length mismatch')
    return run('_npi_tensordot', (a, b), (a_axes, b_axes))


@_export
def inner(a, b):
    """Inner product over the last axes."""
    a, b = _as_np(a), _as_np(b)
    if _is_symbol(a) or _is_symbol(b) or (a.ndim and b.ndim):
        return tensordot(a, b, ([-1], [-1]))
    return multiply(a, b)


@_export
def outer(a, b):
    """Outer product of two (flattened) arrays."""
    return tensordot(_as_np(a).reshape(-1), _as_np(b).reshape(-1), 0)


@_export
def vdot(a, b):
    """Dot product of the flattened arrays."""
    return tensordot(_as_np(a).reshape(-1), _as_np(b).reshape(-1), 1)


@_export
def einsum(*operands, **kwargs):
    """Einstein summation: ``einsum(subscripts, *operands, out=None, optimize=False)``."""
    out = kwargs.pop('out', None)
    optimize = kwargs.pop('optimize', False)
    if kwargs:
        raise TypeError('einsum: unexpected keyword arguments %s' % ', '.join(kwargs))
    subscripts, arrays = operands[0], [_as_np(a) for a in operands[1:]]
    if not isinstance(subscripts, str):
        raise TypeError('einsum: the first argument must be the subscripts string')
    return run('_npi_einsum', arrays, {'num_args': len(arrays), 'subscripts': subscripts,
                                       'optimize': int(bool(optimize))}, out)


@_export
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``."""
    if isinstance(p, (list, tuple, _np.ndarray)) or isinstance(x, (list, tuple, _np.ndarray)):
        raise TypeError('polyval: p and x must be mxnet.numpy.ndarrays')
    if isinstance(x, (int, float, _np.generic)) and not _is_symbol(p):
        return _np.polyval(p.asnumpy(), x)
    return run('_npi_polyval', (p, x))


@_export
def meshgrid(*xi, **kwargs):
    """Coordinate matrices from coordinate vectors."""
    indexing = kwargs.pop('indexing', 'xy')
    sparse = kwargs.pop('sparse', False)
    copy_ = kwargs.pop('copy', True)
    if kwargs:
        raise TypeError('meshgrid() got unexpected keyword arguments %s' % ', '.join(kwargs))
    if indexing not in ('xy', 'ij'):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    grids = []
    for i, x in enumerate(xi):
        shape_ = [1] * ndim
        shape_[i] = -1
        grids.append(_as_np(x).reshape(shape_))
    if indexing == 'xy' and ndim > 1:
        for g in range(ndim):
            grids[g] = swapaxes(grids[g], 0, 1)
    seq = _SEQUENCE_OF['meshgrid']
    if sparse:
        return seq(grids)
    full_shape = _np.broadcast_shapes(*[g.shape for g in grids])
    return seq(broadcast_to(g, full_shape) for g in grids)


@_export
def genfromtxt(*args, **kwargs):
    """``numpy.genfromtxt``'s array as an ndarray (on ``ctx``, a keyword, when given)."""
    ctx = kwargs.pop('ctx', None)
    values = _np.genfromtxt(*args, **kwargs)
    return array(values, dtype=values.dtype, ctx=ctx)


@_export
def set_printoptions(precision=None, threshold=None, **kwarg):
    """numpy's print options, which ndarray's repr follows."""
    if kwarg:
        raise NotImplementedError('set_printoptions: only precision and threshold are supported, got %s'
                                  % ', '.join(kwarg))
    _np.set_printoptions(precision=precision, threshold=threshold)


# ------------------------------------------------------------------ methods
def _method_reshape(self, *args, **kwargs):
    """``a.reshape(shape)`` or ``a.reshape(d0, d1, ...)``; ``order='C'`` only."""
    order = kwargs.pop('order', 'C')
    if 'shape' in kwargs:
        newshape = kwargs.pop('shape')
    elif 'newshape' in kwargs:
        newshape = kwargs.pop('newshape')
    elif len(args) == 1 and not isinstance(args[0], (int, _np.integer)):
        newshape = args[0]
    else:
        newshape = args
    if kwargs:
        raise TypeError('reshape() got unexpected keyword arguments %s' % ', '.join(kwargs))
    return reshape(self, newshape, order)


def _method_transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return transpose(self, axes or None)


def _method_flatten(self, order='C'):
    """A flattened copy."""
    return reshape(self, (-1,), order).copy()


def _method_broadcast_like(self, other):
    return broadcast_to(self, other.shape)


def _method_dot(self, b, out=None):
    return dot(self, b, out=out)


def _method_argsort(self, axis=-1, kind=None, order=None):
    return argsort(self, axis, kind, order)


def _method_sort(self, axis=-1, kind=None, order=None):
    return sort(self, axis, kind, order)


def _method_squeeze(self, axis=None):
    return squeeze(self, axis)


def _method_repeat(self, repeats, axis=None):
    return repeat(self, repeats, axis)


def _method_swapaxes(self, axis1, axis2):
    return swapaxes(self, axis1, axis2)


def _method_take(self, indices, axis=None, mode='raise'):
    return take(self, indices, axis, mode)


def _method_clip(self, min=None, max=None, out=None):  # pylint: disable=redefined-builtin
    return clip(self, min, max, out=out)


def _method_round(self, decimals=0, out=None, **kwargs):
    return around(self, decimals, out)


def _method_nonzero(self):
    return nonzero(self)


def _method_broadcast_to(self, shape):  # pylint: disable=redefined-outer-name
    return broadcast_to(self, shape)


def _reduction_method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _missing_method(name):
    def method(self, *args, **kwargs):
        raise AttributeError('mxnet.numpy.ndarray object has no attribute %s' % name)
    method.__name__ = name
    return method


_METHODS = {
    'reshape': _method_reshape, 'transpose': _method_transpose, 'flatten': _method_flatten,
    'broadcast_like': _method_broadcast_like, 'broadcast_to': _method_broadcast_to, 'dot': _method_dot,
    'argsort': _method_argsort, 'sort': _method_sort, 'squeeze': _method_squeeze, 'repeat': _method_repeat,
    'swapaxes': _method_swapaxes, 'take': _method_take, 'clip': _method_clip, 'round': _method_round,
    'nonzero': _method_nonzero,
}
for _fn in (sum, prod, mean, std, var, max, min, all, any, argmax, argmin, cumsum):
    _METHODS[_fn.__name__] = _reduction_method(_fn)
_LEGACY_ONLY = ('abs', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax_channel', 'asscalar',
                'broadcast_axes', 'cbrt', 'ceil', 'cos', 'cosh', 'degrees', 'depth_to_space', 'diag', 'exp',
                'expand_dims', 'expm1', 'fix', 'flip', 'floor', 'log', 'log10', 'log1p', 'log2', 'log_softmax',
                'nanprod', 'nansum', 'norm', 'one_hot', 'ones_like', 'pad', 'pick', 'radians', 'rcbrt', 'reciprocal',
                'relu', 'reshape_like', 'rint', 'rsqrt', 'shape_array', 'sigmoid', 'sign', 'sin', 'sinh', 'size_array',
                'slice', 'slice_axis', 'slice_like', 'softmax', 'softmin', 'space_to_depth', 'split', 'split_v2',
                'sqrt', 'square', 'tan', 'tanh', 'tile', 'topk', 'trunc', 'zeros_like')
for _name in _LEGACY_ONLY:
    _METHODS[_name] = _missing_method(_name)
for _name, _method in _METHODS.items():
    setattr(ndarray, _name, _method)


def _matmul_dunder(self, other):
    return matmul(self, other)


def _rmatmul_dunder(self, other):
    return matmul(other, self)


def _imatmul_dunder(self, other):
    self[...] = matmul(self, other)
    return self


ndarray.__matmul__ = _matmul_dunder
ndarray.__rmatmul__ = _rmatmul_dunder
ndarray.__imatmul__ = _imatmul_dunder


# NumPy's own functions MXNet hands over (see .fallback): part of multiarray's names, as in MXNet
from .fallback import *  # noqa: E402,F401,F403  pylint: disable=wildcard-import,wrong-import-position
from . import fallback as _fallback  # noqa: E402  pylint: disable=wrong-import-position
__all__ += _fallback.__all__
