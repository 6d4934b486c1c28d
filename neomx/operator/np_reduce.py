"""Reductions of MXNet's NumPy interface (``_np_sum``, ``_npi_mean``, ``_np_max``...): over
``axis`` (None: all axes; an int or a tuple), with ``keepdims``, zero-dim results and
MXNet's dtypes (integer sums keep the input's type, booleans sum to int64, means of
integers are float32).
"""
import numpy as _np
import torch

from ..base import torch_dtype
from .dtype_rules import DTypeRule
from .registry import ANY, BOOL, INT, OPT_FLOAT, OPT_INT, Attr, register

__all__ = ['axes_of', 'AxisError', 'OPT_AXES']

AxisError = getattr(getattr(_np, 'exceptions', _np), 'AxisError', None) or _np.AxisError


def _parse_axes(v):
    if isinstance(v, str):
        v = ANY.parse(v)
    if v is None or isinstance(v, int):
        return v
    if isinstance(v, _np.integer):
        return int(v)
    return tuple(int(a) for a in v)


OPT_AXES = Attr('Shape or None', _parse_axes, None)
_DTYPE_OR_NONE = Attr('dtype or None', lambda v: None if v is None or v == 'None' else torch_dtype(v), None)
_FREE_OUT = DTypeRule(free=lambda a: ('a', 'data'), output=lambda d, a: None)


def axis_index(axis, ndim, op):
    """``axis`` in ``[-ndim, ndim)`` as a non-negative index; NumPy's AxisError otherwise."""
    if ndim == 0 and axis in (0, -1):    # NumPy lets a zero-dim array take axis 0 or -1
        return 0
    if not -ndim <= axis < ndim:
        raise AxisError('%s: axis %d is out of bounds for array of dimension %d' % (op, axis, ndim))
    return axis % ndim if ndim else 0


def axes_of(axis, ndim, op):
    """The reduced dims: all for None, else ``axis`` (int or tuple) normalized."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, _np.integer)):
        return (axis_index(int(axis), ndim, op),)
    dims = tuple(axis_index(int(a), ndim, op) for a in axis)
    if len(set(dims)) != len(dims):
        raise ValueError('%s: duplicate value in axis %s' % (op, axis))
    return dims


def _keep(res, t, dims, keepdims):
    if keepdims:
        for d in sorted(dims):
            res = res.unsqueeze(d)
    return res


def _sum_dtype(t, dtype):
    if dtype is not None:
        return torch_dtype(dtype, 'sum')
    return torch.int64 if t.dtype is torch.bool else t.dtype


def _reduce_sum_like(fn, op):
    def impl(a, axis, dtype, keepdims, initial):
        dims = axes_of(axis, a.dim(), op)
        out_dtype = _sum_dtype(a, dtype)
        src = a if a.dtype is not torch.bool else a.to(torch.int64)
        if not src.dtype.is_floating_point and out_dtype.is_floating_point:
            src = src.to(out_dtype)
        if dims:
            res = fn(src, dims)
        else:
            res = src.clone()
        if initial is not None:
            res = res + initial if fn is _sum else res * initial
        return _keep(res.to(out_dtype), a, dims, keepdims)
    return impl


def _sum(t, dims):
    return torch.sum(t, dim=dims)


def _prod(t, dims):
    for d in sorted(dims, reverse=True):
        t = torch.prod(t, dim=d)
    return t


_REDUCE_ATTRS = [('axis', OPT_AXES), ('dtype', _DTYPE_OR_NONE), ('keepdims', BOOL, False),
                 ('initial', OPT_FLOAT, None)]
register('_np_sum', inputs=('a',), attrs=_REDUCE_ATTRS, dtypes=_FREE_OUT,
         doc='Sum over ``axis`` (all by default).')(_reduce_sum_like(_sum, 'sum'))
register('_np_prod', inputs=('a',), attrs=_REDUCE_ATTRS, dtypes=_FREE_OUT, aliases=('_np_product',),
         doc='Product over ``axis`` (all by default).')(_reduce_sum_like(_prod, 'prod'))


@register('_npi_mean', inputs=('a',), attrs=_REDUCE_ATTRS, dtypes=_FREE_OUT)
def mean(a, axis, dtype, keepdims, initial):    # pylint: disable=unused-argument
    """Mean over ``axis``; integer arrays give float32 unless ``dtype``."""
    if axis is None and dtype is None and not keepdims and a.dim() and (
            a.dtype is torch.float32 or a.dtype is torch.float64):
        return torch.mean(a)        # the common call: all of a float array, one kernel
    dims = axes_of(axis, a.dim(), 'mean')
    if dtype is not None:
        out_dtype = torch_dtype(dtype, 'mean')
    else:
        out_dtype = a.dtype if a.dtype.is_floating_point else torch.float32
    # float16 sums in float32; float64 anywhere computes in float64 (gradients too)
    compute = torch.float64 if torch.float64 in (out_dtype, a.dtype) else torch.float32
    src = a if a.dtype is compute else a.to(compute)
    if not (out_dtype.is_floating_point or out_dtype is torch.bool):
        # an integer dtype: NumPy sums in it (wrapping around) and truncates the quotient
        total = torch.sum(a.to(torch.int64), dim=dims).to(out_dtype) if dims else a.to(out_dtype)
        count = 1
        for d in dims:
            count *= a.shape[d]
        return _keep(torch.trunc(total.to(torch.float64) / max(count, 1)).to(out_dtype), a, dims, keepdims)
    res = torch.mean(src, dim=dims) if dims else src.clone()
    return _keep(res.to(out_dtype), a, dims, keepdims)


def _moment(op):
    def impl(a, axis, dtype, ddof, keepdims):
        dims = axes_of(axis, a.dim(), op)
        out_dtype = torch_dtype(dtype, op) if dtype is not None else (
            a.dtype if a.dtype.is_floating_point else a.dtype)
        src = a if a.dtype in (torch.float32, torch.float64) else a.to(torch.float64)
        if dims:
            res = torch.var(src, dim=dims, correction=ddof)
            if op == 'std':
                res = torch.sqrt(res)
        else:       # each element alone: N = 1, so nan where ddof leaves no degree of freedom
            res = torch.zeros_like(src) if ddof < 1 else torch.full_like(src, float('nan'))
        return _keep(res.to(out_dtype), a, dims, keepdims)
    impl.__doc__ = '%s over ``axis`` with ``ddof`` delta degrees of freedom.' % op
    return impl


_MOMENT_ATTRS = [('axis', OPT_AXES), ('dtype', _DTYPE_OR_NONE), ('ddof', INT, 0), ('keepdims', BOOL, False)]
register('_npi_std', inputs=('a',), attrs=_MOMENT_ATTRS, dtypes=_FREE_OUT)(_moment('std'))
register('_npi_var', inputs=('a',), attrs=_MOMENT_ATTRS, dtypes=_FREE_OUT)(_moment('var'))


def _extreme(fn, op):
    def impl(a, axis, keepdims, initial):
        dims = axes_of(axis, a.dim(), op)
        if a.numel() == 0 and initial is None and (not dims or any(a.shape[d] == 0 for d in dims)):
            raise ValueError('zero-size array to reduction operation %s which has no identity' % op)
        res = fn(a, dim=dims, keepdim=keepdims) if dims else a.clone()
        if initial is not None:
            bound = torch.tensor(initial, dtype=res.dtype, device=res.device)
            res = torch.maximum(res, bound) if fn is torch.amax else torch.minimum(res, bound)
        return res
    impl.__doc__ = 'The %s over ``axis`` (all by default).' % op
    return impl


_EXTREME_ATTRS = [('axis', OPT_AXES), ('keepdims', BOOL, False), ('initial', OPT_FLOAT, None)]
register('_np_max', inputs=('a',), attrs=_EXTREME_ATTRS, aliases=('_np_amax',))(_extreme(torch.amax, 'maximum'))
register('_np_min', inputs=('a',), attrs=_EXTREME_ATTRS, aliases=('_np_amin',))(_extreme(torch.amin, 'minimum'))


def _logical(fn, op):
    def impl(data, axis, keepdims):
        dims = axes_of(axis, data.dim(), op)
        b = data if data.dtype is torch.bool else data != 0
        if not dims:
            return b.clone()
        res = b
        for d in sorted(dims, reverse=True):
            res = fn(res, dim=d, keepdim=keepdims)
        return res
    impl.__doc__ = 'Whether %s of the elements over ``axis`` are true (bool).' % op
    return impl


_BOOL_OUT = DTypeRule(free=('data',), output='bool')
register('_np_all', inputs=('data',), attrs=[('axis', OPT_AXES), ('keepdims', BOOL, False)],
         dtypes=_BOOL_OUT)(_logical(torch.all, 'all'))
register('_np_any', inputs=('data',), attrs=[('axis', OPT_AXES), ('keepdims', BOOL, False)],
         dtypes=_BOOL_OUT, aliases=('_np_sometrue',))(_logical(torch.any, 'any'))


def _arg_extreme(fn, op):
    def impl(data, axis, keepdims):
        if data.numel() == 0 and (axis is None or data.shape[axis_index(axis, data.dim(), op)] == 0):
            raise ValueError('attempt to get %s of an empty sequence' % op)
        if axis is None:
            res = fn(data.reshape(-1).to(torch.float64) if data.dtype is torch.bool else data.reshape(-1))
            return res.reshape((1,) * data.dim()) if keepdims else res
        d = axis_index(axis, data.dim(), op)
        src = data.to(torch.float64) if data.dtype is torch.bool else data
        return fn(src, dim=d, keepdim=keepdims)
    impl.__doc__ = 'Indices of the %s values along ``axis`` (int64).' % op
    return impl


_INDEX_OUT = DTypeRule(free=('data',), output='int64')
register('_npi_argmax', inputs=('data',), attrs=[('axis', OPT_INT, None), ('keepdims', BOOL, False)],
         dtypes=_INDEX_OUT)(_arg_extreme(torch.argmax, 'argmax'))
register('_npi_argmin', inputs=('data',), attrs=[('axis', OPT_INT, None), ('keepdims', BOOL, False)],
         dtypes=_INDEX_OUT)(_arg_extreme(torch.argmin, 'argmin'))


@register('_npi_average', inputs=('a', 'weights'),
          attrs=[('axis', OPT_AXES), ('returned', BOOL, False), ('weighted', BOOL, True)],
          optional_inputs=lambda attrs: () if attrs['weighted'] else ('weights',),
          num_outputs=2, num_visible_outputs=lambda attrs: 2 if attrs['returned'] else 1, dtypes=_FREE_OUT)
def average(a, weights, axis, returned, weighted):     # pylint: disable=unused-argument
    """Weighted average over ``axis``, and the sum of the weights."""
    dims = axes_of(axis, a.dim(), 'average')
    src = a if a.dtype.is_floating_point else a.to(torch.float32)
    if weights is None:
        avg = torch.mean(src, dim=dims) if dims else src.clone()
        count = src.numel() // max(avg.numel(), 1)
        return avg, torch.full_like(avg, count)
    w = weights
    if w.shape != a.shape:
        if axis is None or not isinstance(axis, int) or w.dim() != 1:
            raise TypeError('average: weights of shape %s differ from the array\'s %s; give axis and 1-D '
                            'weights' % (tuple(w.shape), tuple(a.shape)))
        if w.shape[0] != a.shape[dims[0]]:
            raise ValueError('average: length of weights %d differs from axis %d of length %d'
                             % (w.shape[0], dims[0], a.shape[dims[0]]))
        shape = [1] * a.dim()
        shape[dims[0]] = -1
        w = w.reshape(shape).expand_as(a)
    w = w.to(src.dtype)
    wsum = torch.sum(w, dim=dims) if dims else w.clone()
    if bool((wsum == 0).any()):
        raise ZeroDivisionError('average: weights sum to zero, can\'t be normalized')
    avg = (torch.sum(src * w, dim=dims) if dims else src * w) / wsum
    return avg, wsum


_INTERPOLATIONS = ('linear', 'lower', 'higher', 'midpoint', 'nearest')


@register('_npi_percentile', inputs=('a', 'q'),
          attrs=[('axis', OPT_AXES), ('interpolation', Attr('str', str, 'linear', _INTERPOLATIONS)),
                 ('keepdims', BOOL, False), ('q_scalar', OPT_FLOAT, None)],
          optional_inputs=lambda attrs: ('q',) if attrs['q_scalar'] is not None else (), dtypes=_FREE_OUT)
def percentile(a, q, axis, interpolation, keepdims, q_scalar):
    """The ``q``-th percentiles (0..100) over ``axis``."""
    qs = torch.tensor(q_scalar, dtype=torch.float64) if q is None else q.to(torch.float64)
    if bool(((qs < 0) | (qs > 100)).any()):
        raise ValueError('Percentiles must be in the range [0, 100]')
    src = a.to(torch.float64)
    dims = axes_of(axis, a.dim(), 'percentile')
    rest = [d for d in range(a.dim()) if d not in dims]
    moved = src.permute(*rest, *dims).reshape(*[a.shape[d] for d in rest], -1)
    res = torch.quantile(moved, (qs / 100).reshape(-1).to(moved.device), dim=-1, interpolation=interpolation)
    res = res.reshape(tuple(qs.shape) + res.shape[1:])
    if keepdims:
        for d in sorted(dims):
            res = res.unsqueeze(d + qs.dim())
    out_dtype = a.dtype if a.dtype.is_floating_point else torch.float32
    return res.to(out_dtype)
