"""Sorting, searching, counting and products of MXNet's NumPy interface (``_npi_sort``,
``_npi_unique``, ``_np_dot``, ``_npi_tensordot``, ``_npi_einsum``...).
"""
import numpy as _np
import torch

from .dtype_rules import DTypeRule
from .np_elemwise import PROMOTE, promoted
from .np_reduce import axis_index
from .registry import ANY, BOOL, INT, OPT_INT, STR, Attr, register

__all__ = []

_INDEX_OUT = DTypeRule(free=('data',), output='int64')


@register('_npi_sort', inputs=('data',), attrs=[('axis', OPT_INT, -1), ('is_ascend', BOOL, True)])
def sort(data, axis, is_ascend):
    """``data`` sorted along ``axis`` (the flattened array for None)."""
    if axis is None:
        return torch.sort(data.reshape(-1), descending=not is_ascend, stable=True)[0]
    if data.dim() == 0:
        return data.clone()
    return torch.sort(data, dim=axis_index(axis, data.dim(), 'sort'), descending=not is_ascend, stable=True)[0]


@register('_npi_argsort', inputs=('data',), attrs=[('axis', OPT_INT, -1), ('is_ascend', BOOL, True),
                                                   ('dtype', Attr('dtype', lambda v: v, 'int64'))],
          dtypes=_INDEX_OUT)
def argsort(data, axis, is_ascend, dtype):
    """The indices that sort ``data`` along ``axis``."""
    from ..base import torch_dtype
    src = data.reshape(-1) if axis is None or data.dim() == 0 else data
    dim = 0 if axis is None or data.dim() == 0 else axis_index(axis, data.dim(), 'argsort')
    return torch.sort(src, dim=dim, descending=not is_ascend, stable=True)[1].to(torch_dtype(dtype, 'argsort'))


def _unique_count(attrs):
    return 1 + sum(bool(attrs[k]) for k in ('return_index', 'return_inverse', 'return_counts'))


@register('_npi_unique', inputs=('data',),
          attrs=[('return_index', BOOL, False), ('return_inverse', BOOL, False), ('return_counts', BOOL, False),
                 ('axis', OPT_INT, None)], num_outputs=_unique_count)
def unique(data, return_index, return_inverse, return_counts, axis):
    """The sorted unique elements (or slices along ``axis``), with the index of each one's first
    occurrence, the inverse indices and the counts as asked."""
    host = data.detach().cpu().numpy()
    res = _np.unique(host, return_index=return_index, return_inverse=return_inverse,
                     return_counts=return_counts, axis=axis)
    if not isinstance(res, tuple):
        res = (res,)
    out = [torch.from_numpy(_np.ascontiguousarray(res[0])).to(data.device)]
    for r in res[1:]:
        out.append(torch.from_numpy(_np.ascontiguousarray(r).astype(_np.int64)).to(data.device))
    return tuple(out)


@register('_npi_nonzero', inputs=('x',), dtypes=DTypeRule(free=('x',), output='int64'))
def nonzero(x):
    """The indices of the non-zero elements: one row per element, one column per axis."""
    if x.dim() == 0:
        return torch.nonzero(x.reshape(1))[:, :0] if bool(x) else torch.zeros((0, 0), dtype=torch.int64)
    return torch.nonzero(x)


@register('_npi_bincount', inputs=('data', 'weights'), attrs=[('minlength', INT, 0), ('has_weights', BOOL, False)],
          optional_inputs=lambda attrs: () if attrs['has_weights'] else ('weights',),
          dtypes=DTypeRule(free=('data', 'weights'), output=lambda d, a: None))
def bincount(data, weights, minlength, has_weights):    # pylint: disable=unused-argument
    """Occurrences of each non-negative integer (summed weights with ``weights``)."""
    if data.dtype.is_floating_point:
        raise TypeError("Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'"
                        % str(data.dtype).replace('torch.', ''))
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if data.numel() and bool((data < 0).any()):
        raise ValueError("'list' argument must have no negative elements")
    return torch.bincount(data.reshape(-1), None if weights is None else weights.reshape(-1), minlength)


@register('_npi_histogram', inputs=('data', 'bins'), attrs=[('bin_cnt', OPT_INT, None), ('range', ANY, None)],
          optional_inputs=lambda attrs: ('bins',) if attrs['bin_cnt'] is not None else (), num_outputs=2,
          dtypes=DTypeRule(free=('data', 'bins'), output='int64', later_outputs=lambda d, a: d[0]))
def histogram(data, bins, bin_cnt, range):  # pylint: disable=redefined-builtin
    """Counts of ``data`` in ``bin_cnt`` equal bins over ``range`` (or between the edges ``bins``),
    and the bin edges."""
    src = data.to(torch.float64).reshape(-1)
    if bins is None:
        lo, hi = (float(src.min()), float(src.max())) if range is None and src.numel() else (
            tuple(range) if range is not None else (0.0, 1.0))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = torch.linspace(lo, hi, bin_cnt + 1, dtype=torch.float64)
    else:
        edges = bins.to(torch.float64).reshape(-1)
    idx = torch.searchsorted(edges, src, right=True) - 1
    idx = torch.where(src == edges[-1], torch.full_like(idx, edges.numel() - 2), idx)
    inside = (idx >= 0) & (idx < edges.numel() - 1)
    counts = torch.bincount(idx[inside], minlength=edges.numel() - 1)
    return counts.to(torch.int64), edges.to(data.dtype if data.dtype.is_floating_point else torch.float32)


def _float_pair(a, b):
    dt = torch.promote_types(a.dtype, b.dtype)
    return (a if a.dtype is dt else a.to(dt)), (b if b.dtype is dt else b.to(dt))


@register('_np_dot', inputs=('a', 'b'), dtypes=PROMOTE)
def dot(a, b):
    """NumPy's ``dot``: inner product of vectors, matrix product, sum over a's last and b's
    second-to-last axes."""
    a, b = _float_pair(a, b)
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if b.dim() <= 2 and a.dim() <= 2 and a.shape[-1] == b.shape[0]:
        return torch.matmul(a, b)       # NumPy's dot there; one kernel call, no tensordot reshapes
    if b.dim() == 1:
        if a.shape[-1] != b.shape[0]:
            raise ValueError('shapes %s and %s not aligned: %d (dim %d) != %d (dim 0)'
                             % (tuple(a.shape), tuple(b.shape), a.shape[-1], a.dim() - 1, b.shape[0]))
        return torch.tensordot(a, b, dims=([a.dim() - 1], [0]))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError('shapes %s and %s not aligned: %d (dim %d) != %d (dim %d)'
                         % (tuple(a.shape), tuple(b.shape), a.shape[-1], a.dim() - 1, b.shape[-2], b.dim() - 2))
    return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2]))


@register('_npi_matmul', inputs=('a', 'b'), dtypes=PROMOTE)
def matmul(a, b):
    """NumPy's ``matmul``: matrix product broadcast over the leading axes."""
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError('matmul: Input operand does not have enough dimensions')
    a, b = _float_pair(a, b)
    try:
        return torch.matmul(a, b)
    except RuntimeError:
        raise ValueError('matmul: Input operand 1 has a mismatch in its core dimension 0 (size %d is different '
                         'from %d; shapes %s and %s)' % (b.shape[-2] if b.dim() > 1 else b.shape[0], a.shape[-1],
                                                         tuple(a.shape), tuple(b.shape))) from None


@register('_npi_tensordot', inputs=('a', 'b'), attrs=[('a_axes_summed', ANY), ('b_axes_summed', ANY)],
          dtypes=PROMOTE)
def tensordot(a, b, a_axes_summed, b_axes_summed):
    """Sum of products over ``a_axes_summed`` of ``a`` and ``b_axes_summed`` of ``b``."""
    a, b = _float_pair(a, b)
    ax_a = [axis_index(int(x), a.dim(), 'tensordot') for x in a_axes_summed]
    ax_b = [axis_index(int(x), b.dim(), 'tensordot') for x in b_axes_summed]
    if len(ax_a) != len(ax_b) or any(a.shape[i] != b.shape[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError('shape-mismatch for sum')
    return torch.tensordot(a, b, dims=(ax_a, ax_b))


@register('_npi_tensordot_int_axes', inputs=('a', 'b'), attrs=[('axes', INT)], dtypes=PROMOTE)
def tensordot_int_axes(a, b, axes):
    """Sum of products over the last ``axes`` axes of ``a`` and the first of ``b``."""
    a, b = _float_pair(a, b)
    if axes < 0 or axes > a.dim() or axes > b.dim() or tuple(a.shape[a.dim() - axes:]) != tuple(b.shape[:axes]):
        raise ValueError('shape-mismatch for sum')
    return torch.tensordot(a, b, dims=axes)


@register('_npi_einsum', variadic='num_args', attrs=[('num_args', INT), ('subscripts', STR, ''),
                                                     ('optimize', INT, 0)],
          dtypes=DTypeRule(free=lambda attrs: tuple('arg%d' % i for i in range(attrs.get('num_args', 0))),
                           output=promoted))
def einsum(*data, num_args, subscripts, optimize):    # pylint: disable=unused-argument
    """Einstein summation of the operands as ``subscripts`` says."""
    dt = promoted([t.dtype for t in data], None)
    return torch.einsum(subscripts, *[t.to(dt) for t in data])


@register('_npi_polyval', inputs=('p', 'x'), dtypes=PROMOTE)
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``."""
    dt = torch.promote_types(p.dtype, x.dtype)
    res = torch.zeros_like(x, dtype=dt)
    for c in p.reshape(-1).to(dt):
        res = res * x + c
    return res
