"""Indexing operators: gathering (take, pick, batch_take, gather_nd, boolean_mask), scattering
(scatter_nd, index_copy), selection (where), one_hot and index arithmetic (ravel/unravel).

MXNet semantics kept here: index arrays may have any dtype and float indices are truncated
toward zero; out-of-range indices are clipped or wrapped according to ``mode`` (``raise``
checks them); one_hot gives all-``off_value`` rows for out-of-range indices; ravel and
unravel return their input's dtype (float32 for the usual float32 indices).
"""
import math

import torch

from ..async_errors import defer_error
from ..base import MXNetError
from .dtype_rules import DTypeRule
from .registry import BOOL, DTYPE, FLOAT, INT, OPT_INT, SHAPE, check, choice, register
from .shape import normalize_axis

__all__ = ['take', 'pick', 'batch_take', 'gather_nd', 'scatter_nd', 'one_hot', 'where', 'boolean_mask',
           'ravel_multi_index', 'unravel_index', 'index_copy']


def _as_index(indices):
    """Indices as int64, float values truncated toward zero (MXNet's cast)."""
    return indices if indices.dtype is torch.int64 else indices.to(torch.int64)


def _fit_range(op, idx, size, mode):
    """Bring indices into ``[0, size)``: clip to the ends or wrap around (``raise`` clips too:
    the caller reports indices outside, see :func:`_out_of_range_error`)."""
    if mode == 'wrap':
        return idx.remainder(size)
    return idx.clamp(0, size - 1)


def _out_of_range_error(op, idx, size):
    """The MXNetError for indices outside ``[0, size)``, or None when all are inside."""
    if idx.device.type == 'meta' or idx.numel() == 0 or bool(((idx >= 0) & (idx < size)).all()):
        return None
    return MXNetError('%s: indices out of range [0, %d): found %d..%d'
                      % (op, size, int(idx.min()), int(idx.max())))


def _check_coordinates_off_host(op, idx, shape):
    """IndexError for coordinates (rows of ``idx``) outside ``shape``, on devices other than
    the CPU: there an out-of-range index is a device-side assertion that leaves the process's
    GPU unusable, where the CPU kernels raise IndexError themselves (costs one sync)."""
    if idx.device.type in ('cpu', 'meta') or idx.numel() == 0:
        return
    sizes = torch.tensor(shape[:idx.shape[0]], device=idx.device).view((-1,) + (1,) * (idx.dim() - 1))
    if bool(((idx < -sizes) | (idx >= sizes)).any()):
        raise IndexError('%s: coordinates out of range of shape %s: found %d..%d'
                         % (op, tuple(shape), int(idx.min()), int(idx.max())))


@register('take', inputs=('a', 'indices'), dtypes=DTypeRule(free=('indices',)),
          attrs=[('axis', INT, 0), ('mode', choice('clip', 'raise', 'wrap'), 'clip')])
def take(a, indices, axis, mode):
    """Slices of ``a`` along ``axis`` at ``indices``.

    Output shape: ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``. The gradient adds up
    at repeated indices. With ``mode='raise'``, indices outside the axis make the first read
    of the result (``asnumpy``, ``wait_to_read``) raise MXNetError, as in MXNet.
    """
    axis = normalize_axis(axis, a.dim(), 'take')
    given = _as_index(indices).reshape(-1)
    idx = _fit_range('take', given, a.shape[axis], mode)
    out_shape = a.shape[:axis] + indices.shape + a.shape[axis + 1:]
    out = torch.index_select(a, axis, idx).reshape(out_shape)
    error = _out_of_range_error('take', given, a.shape[axis]) if mode == 'raise' else None
    # as MXNet's kernel check: the call returns, reading the result raises
    return out if error is None else defer_error(out, error)


@register('pick', inputs=('data', 'index'), dtypes=DTypeRule(free=('index',)),
          attrs=[('axis', OPT_INT, -1), ('keepdims', BOOL, False),
                 ('mode', choice('clip', 'wrap'), 'clip')])
def pick(data, index, axis, keepdims, mode):
    """One element of ``data`` per position along ``axis``, chosen by ``index``.

    ``index`` has ``data``'s shape without ``axis`` (or with it as 1); the output has that
    shape, with ``axis`` kept as 1 when ``keepdims`` (1-D data always gives shape (1,), as
    MXNet has no 0-d arrays). A hot path (losses, metrics): plain list work, no tensor
    beyond the int64 cast, the range fit and the gather.
    """
    ndim = data.dim()
    check(axis is not None, 'pick', 'axis=None is not supported; give an axis')
    axis = normalize_axis(axis, ndim, 'pick')
    kept = list(data.shape)
    size, kept[axis] = kept[axis], 1
    given = list(index.shape)
    if given != kept:
        check(given == kept[:axis] + kept[axis + 1:], 'pick', 'index of shape %s does not match data %s '
              'without axis %d', tuple(given), data.shape, axis)
        index = index.unsqueeze(axis)
    out = torch.gather(data, axis, _fit_range('pick', _as_index(index), size, mode))
    return out if keepdims or ndim == 1 else out.squeeze(axis)


@register('batch_take', inputs=('a', 'indices'), dtypes=DTypeRule(fixed={'indices': 'int32'}),
          differentiable=False)
def batch_take(a, indices):
    """``a[i, indices[i]]`` for each row ``i`` of ``a`` (indices clipped to the row length)."""
    rows = a.reshape(-1, a.shape[-1])
    check(indices.numel() == rows.shape[0], 'batch_take', 'indices of shape %s need one entry per '
          'row of a %s', indices.shape, a.shape)
    idx = _fit_range('batch_take', _as_index(indices).reshape(-1, 1), rows.shape[1], 'clip')
    return torch.gather(rows, 1, idx).reshape(indices.shape)


@register('gather_nd', inputs=('data', 'indices'), dtypes=DTypeRule(free=('indices',)))
def gather_nd(data, indices):
    """Elements or slices of ``data`` at the coordinates in the columns of ``indices``.

    ``indices`` has shape ``(M, *Y)`` with ``M <= data.ndim``; the output has shape
    ``Y + data.shape[M:]``. Negative coordinates count from the end.
    """
    check(indices.dim() >= 1 and indices.shape[0] <= data.dim(), 'gather_nd', 'indices of shape %s '
          'must have at most %d rows (data shape %s)', indices.shape, data.dim(),
          data.shape)
    idx = _as_index(indices)
    _check_coordinates_off_host('gather_nd', idx, data.shape)
    return data[tuple(idx)]


@register('scatter_nd', inputs=('data', 'indices'), attrs=[('shape', SHAPE)],
          dtypes=DTypeRule(free=('indices',)))
def scatter_nd(data, indices, shape):
    """A zero array of ``shape`` holding ``data`` at the coordinates in the columns of ``indices``
    (the inverse of :func:`gather_nd`; with repeated coordinates the last one wins)."""
    check(indices.dim() >= 1 and indices.shape[0] <= len(shape), 'scatter_nd', 'indices of shape '
          '%s must have at most %d rows (shape %s)', indices.shape, len(shape), shape)
    out = torch.zeros(shape, dtype=data.dtype, device=data.device)
    idx = _as_index(indices)
    _check_coordinates_off_host('scatter_nd', idx, shape)
    return out.index_put(tuple(idx), data)


@register('one_hot', inputs=('indices',),
          attrs=[('depth', INT), ('on_value', FLOAT, 1.0), ('off_value', FLOAT, 0.0),
                 ('dtype', DTYPE, torch.float32)])
def one_hot(indices, depth, on_value, off_value, dtype):
    """``on_value`` at each index along a new last axis of size ``depth``, ``off_value`` elsewhere.

    Output shape: ``indices.shape + (depth,)``; an index outside ``[0, depth)`` gives a row of
    ``off_value``.
    """
    classes = torch.arange(depth, device=indices.device)
    hit = _as_index(indices).unsqueeze(-1) == classes
    on = torch.tensor(on_value, dtype=dtype, device=indices.device)
    off = torch.tensor(off_value, dtype=dtype, device=indices.device)
    return torch.where(hit, on, off)


def _where_args(shapes, attrs):
    """x and y share one shape: an unknown one (an open ``zeros((0, 0))``, as zoneout's first
    previous output) takes the other's, as MXNet's shape inference gives it."""
    x, y = shapes.get('x'), shapes.get('y')
    if x is not None and y is None:
        return {'y': x}
    if y is not None and x is None:
        return {'x': y}
    return {}


@register('where', inputs=('condition', 'x', 'y'), dtypes=DTypeRule(free=('condition',)), infer_args=_where_args)
def where(condition, x, y):
    """``x`` where ``condition`` is non-zero, else ``y``.

    ``condition`` has the shape of ``x`` and ``y``, or is 1-D and chooses whole rows (first-axis
    slices). ``x`` and ``y`` need the same shape and dtype; ``condition`` gets no gradient.
    """
    check(x.shape == y.shape and x.dtype == y.dtype, 'where', 'x %s %s and y %s %s must have the '
          'same shape and dtype', x.shape, x.dtype, y.shape, y.dtype)
    if condition.shape != x.shape:
        check(condition.dim() == 1 and x.dim() >= 1 and condition.shape[0] == x.shape[0], 'where',
              'condition of shape %s must have the shape of x %s or be 1-D of its first dim',
              condition.shape, x.shape)
        condition = condition.reshape((-1,) + (1,) * (x.dim() - 1))
    return torch.where(condition != 0, x, y)


@register('_contrib_boolean_mask', inputs=('data', 'index'), attrs=[('axis', INT, 0)],
          dtypes=DTypeRule(free=('index',)))
def boolean_mask(data, index, axis):
    """The slices of ``data`` along ``axis`` where the 1-D ``index`` is non-zero (data-dependent
    output size)."""
    axis = normalize_axis(axis, data.dim(), 'boolean_mask')
    check(index.dim() == 1 and index.shape[0] == data.shape[axis], 'boolean_mask', 'index of shape %s '
          'must be 1-D with the size of axis %d of data %s', index.shape, axis, data.shape)
    return torch.index_select(data, axis, torch.nonzero(index).reshape(-1))


def _strides(shape, device):
    """Row-major strides of ``shape`` as an int64 column vector."""
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    return torch.tensor(strides, dtype=torch.int64, device=device).reshape(-1, 1)


@register('_ravel_multi_index', inputs=('data',), attrs=[('shape', SHAPE)], aliases=('ravel_multi_index',))
def ravel_multi_index(data, shape):
    """Flat (row-major) indices into ``shape`` of the coordinates in the columns of the 2-D
    ``data`` of shape ``(len(shape), N)``; output shape ``(N,)``, ``data``'s dtype."""
    check(data.dim() == 2 and data.shape[0] == len(shape), 'ravel_multi_index', 'data of shape %s '
          'must be 2-D with %d rows, one per dim of shape %s', data.shape, len(shape), shape)
    flat = (_as_index(data) * _strides(shape, data.device)).sum(0)
    return flat.to(data.dtype)


@register('_unravel_index', inputs=('data',), attrs=[('shape', SHAPE)], aliases=('unravel_index',))
def unravel_index(data, shape):
    """Coordinates in ``shape`` of the flat indices ``data``: shape ``(len(shape),) + data.shape``.

    The first coordinate is not reduced modulo ``shape[0]``, as in MXNet.
    """
    rest = _as_index(data)
    coords = []
    for size in reversed(shape[1:]):
        coords.append(rest.remainder(size))
        rest = rest.div(size, rounding_mode='floor')
    coords.append(rest)
    return torch.stack(coords[::-1]).to(data.dtype)


@register('_contrib_index_copy', inputs=('old_tensor', 'index_vector', 'new_tensor'),
          dtypes=DTypeRule(free=('index_vector', 'new_tensor')))
def index_copy(old_tensor, index_vector, new_tensor):
    """A copy of ``old_tensor`` whose rows ``index_vector[i]`` are replaced by ``new_tensor[i]``."""
    check(index_vector.dim() == 1 and new_tensor.shape[0] == index_vector.shape[0]
          and new_tensor.shape[1:] == old_tensor.shape[1:], 'index_copy', 'new_tensor %s must hold '
          'one row of old_tensor %s per index (index_vector %s)', new_tensor.shape,
          old_tensor.shape, index_vector.shape)
    return old_tensor.index_copy(0, _as_index(index_vector), new_tensor)


@register('_contrib_backward_index_copy', inputs=('out_grad', 'old_tensor', 'index_vector', 'new_tensor'),
          num_outputs=3, dtypes=DTypeRule(free=('index_vector', 'new_tensor')))
def backward_index_copy(out_grad, old_tensor, index_vector, new_tensor):
    """The gradient pass of ``index_copy`` (its head gradient, then its inputs): the gradients
    of ``old_tensor`` (``out_grad`` with the replaced rows zeroed), of ``index_vector``
    (zeros) and of ``new_tensor`` (the replaced rows of ``out_grad``)."""
    index = _as_index(index_vector)
    check(out_grad.shape == old_tensor.shape, 'backward_index_copy', 'out_grad %s must have the shape of '
          'old_tensor %s', out_grad.shape, old_tensor.shape)
    old_grad = out_grad.index_fill(0, index, 0)
    return old_grad, torch.zeros_like(index_vector), out_grad.index_select(0, index).to(new_tensor.dtype)
