"""Reductions (sum, mean, prod, max, min, nansum, nanprod, norm, moments), cumulative sums,
arg-reductions (argmax, argmin, argmax_channel) and ordering (sort, argsort, topk).

MXNet semantics kept here:

* Reducing every axis without ``keepdims`` gives shape ``(1,)``, not a 0-d array.
* Results keep the input dtype (``int32`` sums and means stay ``int32``; means truncate).
* ``argmax``/``argmin`` and the index outputs of ``argsort``/``topk`` are numbers in the
  input dtype (float32 for float32 data) or in the requested ``dtype``, never int64.
* ``max``/``min`` give the full gradient to every element tied at the extremum (torch
  splits it between them).
"""
import math

import torch

from .elemwise import float_only
from .registry import BOOL, DTYPE, INT, OPT_DTYPE, OPT_INT, OPT_SHAPE, check, choice, lazy, register
from .dtype_rules import DTypeRule

# --------------------------------------------------------------- axis helpers


def _reduce_dims(op, shape, axis, exclude=False):
    """The sorted dims that ``axis``/``exclude`` select, validated as MXNet does.

    ``axis`` None or ``()`` selects every dim; ``exclude`` selects the complement.
    """
    ndim = len(shape)
    if not axis:
        return tuple(range(ndim))
    dims = []
    for a in axis:
        check(-ndim <= a < ndim, op, 'reduction axis %d exceeds the dimensions of the input %s',
              a, tuple(shape))
        dims.append(a % ndim)
    check(len(set(dims)) == len(dims), op, 'reduction axes %s have duplicates', tuple(axis))
    if exclude:
        return tuple(d for d in range(ndim) if d not in dims)
    return tuple(sorted(dims))


def _check_axis(op, shape, axis):
    """``axis`` made non-negative, or MXNetError if it is out of range for ``shape``."""
    ndim = len(shape)
    check(-ndim <= axis < ndim, op, 'axis %d exceeds the dimensions of the input %s', axis, tuple(shape))
    return axis % ndim


def _all_axes(data):
    return tuple(range(data.dim()))


def at_least_1d(out):
    """MXNet has no 0-d arrays: a full reduction gives shape (1,)."""
    return out.reshape(1) if out.dim() == 0 else out


# ------------------------------------------------------------ the reductions
def _sum(x, dims, keepdims):
    return torch.sum(x, dims, keepdims, dtype=x.dtype)


def _mean(x, dims, keepdims):
    if x.dtype.is_floating_point:
        return torch.mean(x, dims, keepdims)
    count = math.prod(x.shape[d] for d in dims)
    return torch.div(_sum(x, dims, keepdims), count, rounding_mode='trunc')


def _prod(x, dims, keepdims):
    # torch.prod reduces one dim at a time: move the reduced dims last and merge them.
    if len(dims) == 1:
        return torch.prod(x, dims[0], keepdims, dtype=x.dtype)
    kept = [d for d in range(x.dim()) if d not in dims]
    merged = x.permute(kept + list(dims)).reshape([x.shape[d] for d in kept] + [-1])
    out = torch.prod(merged, -1, dtype=x.dtype)
    if keepdims:
        out = out.reshape([1 if d in dims else n for d, n in enumerate(x.shape)])
    return out


class _ExtremumToTies(torch.autograd.Function):
    """``torch_reduce`` (amax/amin) whose backward sends the whole gradient to every element
    equal to the extremum, as MXNet does (torch's own backward splits it between ties)."""

    @staticmethod
    def forward(ctx, x, torch_reduce, dims, keepdims):
        kept = torch_reduce(x, dims, True)
        ctx.save_for_backward(x, kept)
        ctx.dims = dims
        return kept if keepdims else kept.squeeze(dims)

    @staticmethod
    def backward(ctx, grad):
        x, kept = ctx.saved_tensors
        grad = grad.reshape(kept.shape)     # restores the reduced dims as size 1
        return grad * (x == kept), None, None, None


def _extremum(torch_reduce):
    def reduce(x, dims, keepdims):
        if x.requires_grad:
            return _ExtremumToTies.apply(x, torch_reduce, dims, keepdims)
        return torch_reduce(x, dims, keepdims)
    return reduce


def _nansum(x, dims, keepdims):
    if x.dtype.is_floating_point:
        return torch.nansum(x, dims, keepdims, dtype=x.dtype)
    return _sum(x, dims, keepdims)


def _nanprod(x, dims, keepdims):
    if x.dtype.is_floating_point:
        x = torch.where(torch.isnan(x), torch.ones_like(x), x)
    return _prod(x, dims, keepdims)


_REDUCE_ATTRS = [('axis', OPT_SHAPE, None), ('keepdims', BOOL, False), ('exclude', BOOL, False)]

# name: (reduction(x, dims, keepdims), aliases, what it computes)
REDUCTIONS = {
    # _broadcast_backward: the gradient of broadcast_to/broadcast_axis, a sum over the broadcast axes
    'sum': (_sum, ('sum_axis', '_broadcast_backward'), 'Sum'),
    'mean': (_mean, (), 'Mean (truncated for integer dtypes)'),
    'prod': (_prod, (), 'Product'),
    'max': (_extremum(torch.amax), ('max_axis',), 'Maximum'),
    'min': (_extremum(torch.amin), ('min_axis',), 'Minimum'),
    'nansum': (_nansum, (), 'Sum treating NaN as 0'),
    'nanprod': (_nanprod, (), 'Product treating NaN as 1'),
}


def _register_reduction(name, reduction, aliases, what):
    def reduce(data, axis, keepdims, exclude):
        dims = _reduce_dims(name, data.shape, axis, exclude)
        if not dims:    # exclude=True over every axis reduces nothing
            return data.clone()
        return at_least_1d(reduction(data, dims, keepdims))
    reduce.__doc__ = ('%s over ``axis`` (all axes by default; the other axes with ``exclude``).\n\n'
                      'The reduced axes are removed, or kept with size 1 with ``keepdims``; a '
                      'full reduction has shape (1,). The dtype is the input\'s.' % what)
    register(name, inputs=('data',), attrs=_REDUCE_ATTRS, aliases=aliases)(reduce)


for _name, (_reduction, _aliases, _what) in REDUCTIONS.items():
    _register_reduction(_name, _reduction, _aliases, _what)


_vector_norm = float_only(torch.linalg.vector_norm)


@register('norm', inputs=('data',),
          attrs=[('ord', INT, 2), ('axis', OPT_SHAPE, None), ('out_dtype', OPT_DTYPE, None),
                 ('keepdims', BOOL, False)])
def norm(data, ord, axis, out_dtype, keepdims):
    """L1 (``ord=1``) or L2 (``ord=2``) norm over ``axis`` (all elements by default).

    Several axes give the norm of all their elements together (Frobenius for L2). The result
    has the input dtype, or ``out_dtype``; a full reduction without ``keepdims`` has shape (1,).
    """
    check(ord in (1, 2), 'norm', 'only ord=1 and ord=2 are supported, got ord=%d', ord)
    dims = _reduce_dims('norm', data.shape, axis)
    out = at_least_1d(_vector_norm(data, ord, dims, keepdims))
    return out if out_dtype is None else out.to(out_dtype)


def _moments(x, dims, keepdims):
    mean = torch.mean(x, dims, keepdim=True)
    var = torch.mean(torch.square(x - mean), dims, keepdim=keepdims)
    if not keepdims:
        mean = mean.squeeze(dims)
    return at_least_1d(mean), at_least_1d(var)


@register('moments', inputs=('data',), attrs=[('axes', OPT_SHAPE, None), ('keepdims', BOOL, False)],
          num_outputs=2)
def moments(data, axes, keepdims):
    """Mean and (biased) variance over ``axes``, which must be given.

    Returns
    -------
    (mean, var) : tuple of Tensor
        Both of the reduced shape, in the input dtype.
    """
    check(bool(axes), 'moments', 'empty axes are not supported; to compute global moments pass '
          'every axis, e.g. axes=%s', lazy(_all_axes, data))
    dims = _reduce_dims('moments', data.shape, axes)
    if data.dtype.is_floating_point:
        return _moments(data, dims, keepdims)
    mean, var = _moments(data.double(), dims, keepdims)
    return mean.to(data.dtype), var.to(data.dtype)


@register('_np_cumsum', aliases=('cumsum',),
          inputs=('a',), attrs=[('axis', OPT_INT, None), ('dtype', OPT_DTYPE, None)],
          same_shape=lambda attrs: attrs['axis'] is not None)
def cumsum(a, axis, dtype):
    """Cumulative sum along ``axis``; ``axis=None`` sums the flattened array.

    The output dtype is ``dtype``, or the input's when not given.
    """
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _check_axis('cumsum', a.shape, axis)
    if a.dtype is torch.float16 and dtype in (None, torch.float16) and 0 < a.shape[axis] <= _HALF_STEPWISE:
        # each partial sum rounded to float16, as NumPy's (and MXNet's) float16 accumulation
        parts = a.unbind(axis)
        sums = [parts[0]]
        for p in parts[1:]:
            sums.append(sums[-1] + p)
        return torch.stack(sums, axis)
    return torch.cumsum(a, axis, dtype=dtype or a.dtype)


_HALF_STEPWISE = 4096       # longer float16 axes accumulate in torch's kernel


# ----------------------------------------------------------- arg-reductions
def _register_arg_reduction(name, torch_arg, extremum):
    def arg_reduce(data, axis, keepdims):
        if axis is None:
            index = torch_arg(data.reshape(-1))
            index = index.reshape((1,) * data.dim() if keepdims else (1,))
        else:
            index = at_least_1d(torch_arg(data, _check_axis(name, data.shape, axis), keepdims))
        return index.to(data.dtype)
    arg_reduce.__doc__ = ('Index of the %s along ``axis`` (of the flattened array when None), the '
                          'first one at ties, as a number in the input dtype (float32 for float32 '
                          'data).' % extremum)
    register(name, inputs=('data',),
             attrs=[('axis', OPT_INT, None), ('keepdims', BOOL, False)])(arg_reduce)


_register_arg_reduction('argmax', torch.argmax, 'maximum')
_register_arg_reduction('argmin', torch.argmin, 'minimum')


@register('argmax_channel', inputs=('data',))
def argmax_channel(data):
    """Index of the maximum along axis 1 (the channel axis), in the input dtype."""
    return torch.argmax(data, _check_axis('argmax_channel', data.shape, 1)).to(data.dtype)


# ------------------------------------------------------------------ ordering
def _sorted_along(op, data, axis, is_ascend):
    """Stable sort of ``data`` along ``axis`` (of the flattened array when None).

    Returns
    -------
    (values, indices, dim) : sorted values, int64 source indices, and the sorted dim.
    """
    if axis is None:
        data, axis = data.reshape(-1), 0
    dim = _check_axis(op, data.shape, axis)
    values, indices = torch.sort(data, stable=True, dim=dim, descending=not is_ascend)
    return values, indices, dim


@register('sort', inputs=('data',), attrs=[('axis', OPT_INT, -1), ('is_ascend', BOOL, True)])
def sort(data, axis, is_ascend):
    """The values sorted along ``axis`` (the flattened array when None)."""
    return _sorted_along('sort', data, axis, is_ascend)[0]


@register('argsort', inputs=('data',),
          attrs=[('axis', OPT_INT, -1), ('is_ascend', BOOL, True), ('dtype', DTYPE, torch.float32)])
def argsort(data, axis, is_ascend, dtype):
    """Indices that sort ``data`` along ``axis`` (the flattened array when None), as ``dtype``."""
    return _sorted_along('argsort', data, axis, is_ascend)[1].to(dtype)


@register('topk', inputs=('data',),
          attrs=[('axis', OPT_INT, -1), ('k', INT, 1),
                 ('ret_typ', choice('both', 'indices', 'mask', 'value'), 'indices'),
                 ('is_ascend', BOOL, False), ('dtype', DTYPE, torch.float32)],
          num_outputs=lambda a: 2 if a['ret_typ'] == 'both' else 1,
          # values and mask keep the data's dtype, indices have ``dtype``
          dtypes=DTypeRule(output=lambda dtypes, a: a['dtype'] if a['ret_typ'] == 'indices' else dtypes[0],
                           later_outputs=lambda dtypes, a: a['dtype']))
def topk(data, axis, k, ret_typ, is_ascend, dtype):
    """The ``k`` largest (smallest with ``is_ascend``) elements along ``axis``.

    ``axis=None`` works on the flattened array; ``k <= 0`` takes the whole axis. At ties the
    lower index comes first.

    Returns
    -------
    Tensor or (values, indices)
        ``ret_typ='indices'``: indices as ``dtype``; ``'value'``: the values; ``'both'``:
        both; ``'mask'``: an array of the input's shape and dtype, 1 at the selected elements.
    """
    values, indices, dim = _sorted_along('topk', data, axis, is_ascend)
    size = values.shape[dim]
    k = size if k <= 0 else k
    check(k <= size, 'topk', 'k=%d is larger than the size %d of the axis (input %s)',
          k, size, data.shape)
    values, indices = values.narrow(dim, 0, k), indices.narrow(dim, 0, k)
    if ret_typ == 'value':
        return values
    if ret_typ == 'indices':
        return indices.to(dtype)
    if ret_typ == 'both':
        return values, indices.to(dtype)
    flat_shape = values.shape[:dim] + (size,) + values.shape[dim + 1:]
    mask = torch.zeros(flat_shape, dtype=data.dtype, device=data.device)
    return mask.scatter_(dim, indices, 1).reshape(data.shape)
