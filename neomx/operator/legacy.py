"""Older operator names, so graphs written by MXNet 0.x/1.x load and run.

Most are aliases: MXNet 1.9.1 registers ``_Plus`` as another name of ``elemwise_add``,
``uniform`` of ``_random_uniform``, ``choose_element_0index`` of ``pick``... A few are small
operators of their own: ``Pooling_v1`` (max pooling pads with zeros, not -inf), the
slice-assignment operators behind old ``x[a:b] = y`` graphs, and the NDArray utilities
``fill_element_0index``, ``_onehot_encode``, ``_copyto``, ``_set_value``, ``_scatter_set_nd``.
"""
import torch
import torch.nn.functional as F

from . import registry
from .nn_conv import pooling
from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, SHAPE, check, choice, register
from .shape import flip_negative_steps

# canonical operator: its older names
_ALIASES = {
    'elemwise_add': ('_Plus', '_grad_add'), 'elemwise_sub': ('_Minus',), 'elemwise_mul': ('_Mul',),
    'elemwise_div': ('_Div',), '_mod': ('_Mod',), '_hypot': ('_Hypot',),
    '_equal': ('_Equal',), '_not_equal': ('_Not_Equal',), '_greater': ('_Greater',),
    '_greater_equal': ('_Greater_Equal',), '_lesser': ('_Lesser',), '_lesser_equal': ('_Lesser_Equal',),
    '_logical_and': ('_Logical_And',), '_logical_or': ('_Logical_Or',), '_logical_xor': ('_Logical_Xor',),
    '_plus_scalar': ('_PlusScalar',), '_minus_scalar': ('_MinusScalar',),
    '_rminus_scalar': ('_RMinusScalar',), '_mul_scalar': ('_MulScalar',), '_div_scalar': ('_DivScalar',),
    '_rdiv_scalar': ('_RDivScalar',), '_mod_scalar': ('_ModScalar',), '_rmod_scalar': ('_RModScalar',),
    '_power_scalar': ('_PowerScalar',), '_rpower_scalar': ('_RPowerScalar',),
    '_maximum_scalar': ('_MaximumScalar',), '_minimum_scalar': ('_MinimumScalar',),
    '_hypot_scalar': ('_HypotScalar',), '_equal_scalar': ('_EqualScalar',),
    '_not_equal_scalar': ('_NotEqualScalar',), '_greater_scalar': ('_GreaterScalar',),
    '_greater_equal_scalar': ('_GreaterEqualScalar',), '_lesser_scalar': ('_LesserScalar',),
    '_lesser_equal_scalar': ('_LesserEqualScalar',), '_logical_and_scalar': ('_LogicalAndScalar',),
    '_logical_or_scalar': ('_LogicalOrScalar',), '_logical_xor_scalar': ('_LogicalXorScalar',),
    # Convolution_v1 has Convolution's attributes in the same order and the same results.
    'Convolution': ('Convolution_v1',),
    'pick': ('choose_element_0index',),
    '_random_uniform': ('uniform',), '_random_normal': ('normal',),
    '_random_randint': ('random_randint',), '_sample_multinomial': ('sample_multinomial',),
    '_shuffle': ('shuffle',),
}
for _dist in ('uniform', 'normal', 'gamma', 'exponential', 'poisson', 'negative_binomial',
              'generalized_negative_binomial'):
    _ALIASES['_random_' + _dist] = _ALIASES.get('_random_' + _dist, ()) + ('random_' + _dist,)
    _ALIASES['_sample_' + _dist] = ('sample_' + _dist,)

for _name, _older in _ALIASES.items():
    registry.alias(_name, *_older)


# ------------------------------------------------------------------ Pooling_v1
@register('Pooling_v1', inputs=('data',),
          attrs=[('kernel', SHAPE, ()), ('pool_type', choice('avg', 'max', 'sum')('max')),
                 ('global_pool', BOOL, False), ('pooling_convention', choice('full', 'valid')('valid')),
                 ('stride', SHAPE, ()), ('pad', SHAPE, ())])
def pooling_v1(data, kernel, pool_type, global_pool, pooling_convention, stride, pad):
    """MXNet's first 2-D pooling: :func:`pooling` except that max pooling pads with zeros.

    Parameters
    ----------
    data : Tensor, shape (N, C, H, W)

    Returns
    -------
    Tensor, shape (N, C, H', W'), as :func:`pooling` computes it (averages count the pad).
    """
    check(data.dim() == 4, 'Pooling_v1', 'only 2-D pooling of (N, C, H, W) data is supported, got %s',
          data.shape)
    if pool_type == 'max' and any(pad) and not global_pool:
        data = F.pad(data, (pad[1], pad[1], pad[0], pad[0]))
        pad = ()
    return pooling(data, kernel, pool_type, global_pool, False, pooling_convention, stride, pad,
                   None, None, None)


# ---------------------------------------------------------- slice assignment
def _slice_key(op, target, begin, end, step):
    """The index of ``target[b0:e0:s0, ...]`` with negative steps rewritten, and the dims to flip."""
    check(len(begin) == len(end) and len(begin) <= target.dim() and len(step) in (0, len(begin)), op,
          'begin %s, end %s and step %s must have one entry per sliced dim (input shape %s)',
          begin, end, step, target.shape)
    check(0 not in step, op, 'step cannot be 0 (step %s)', step)
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin)))
    return flip_negative_steps(key, tuple(target.shape))


def _assign_slice(op, target, value, begin, end, step):
    """A copy of ``target`` whose slice ``begin:end:step`` holds ``value`` (differentiable)."""
    dims, key = _slice_key(op, target, begin, end, step)
    out = target.flip(dims) if dims else target.clone()
    if isinstance(value, torch.Tensor):
        region = tuple(out[key].shape)
        check(tuple(value.shape) == region, op, 'rhs of shape %s does not fit the slice of shape %s',
              value.shape, region)
    out[key] = value
    return out.flip(dims) if dims else out


_SLICE_ATTRS = [('begin', SHAPE), ('end', SHAPE), ('step', SHAPE, ())]


@register('_slice_assign', inputs=('lhs', 'rhs'), attrs=_SLICE_ATTRS, aliases=('_crop_assign',))
def slice_assign(lhs, rhs, begin, end, step):
    """``lhs`` with ``lhs[begin:end:step] = rhs``; rhs has the slice's shape."""
    return _assign_slice('_slice_assign', lhs, rhs, begin, end, step)


@register('_slice_assign_scalar', inputs=('data',), attrs=[('scalar', FLOAT, 0.0)] + _SLICE_ATTRS,
          aliases=('_crop_assign_scalar',), same_shape=True)
def slice_assign_scalar(data, scalar, begin, end, step):
    """``data`` with ``data[begin:end:step] = scalar`` (cast to data's dtype)."""
    value = scalar if data.dtype.is_floating_point else int(scalar)
    return _assign_slice('_slice_assign_scalar', data, value, begin, end, step)


@register('_scatter_set_nd', inputs=('lhs', 'rhs', 'indices'), attrs=[('shape', SHAPE)],
          dtypes=DTypeRule(free=('indices',)))
def scatter_set_nd(lhs, rhs, indices, shape):
    """``lhs`` with the elements at the coordinates in the columns of ``indices`` set to ``rhs``.

    MXNet only runs it in place (``out=lhs``); ``indices`` has shape (M, K) with M <= lhs.ndim.
    """
    check(tuple(lhs.shape) == tuple(shape), '_scatter_set_nd', 'lhs shape %s differs from shape %s',
          lhs.shape, shape)
    return lhs.index_put(tuple(indices.long()), rhs)


# ------------------------------------------------------- NDArray utilities
@register('fill_element_0index', inputs=('lhs', 'mhs', 'rhs'), dtypes=DTypeRule(soft=('mhs', 'rhs')))
def fill_element_0index(lhs, mhs, rhs):
    """``lhs`` (N, K) with ``out[i, rhs[i]] = mhs[i]``; rows whose index is outside [0, K) keep lhs."""
    check(lhs.dim() == 2 and mhs.shape == rhs.shape == lhs.shape[:1], 'fill_element_0index',
          'expected lhs (N, K) and mhs, rhs (N,), got %s, %s, %s', lhs.shape, mhs.shape,
          rhs.shape)
    index = rhs.long()
    valid = (index >= 0) & (index < lhs.shape[1])
    rows = torch.arange(lhs.shape[0], device=lhs.device)[valid]
    return lhs.index_put((rows, index[valid]), mhs[valid].to(lhs.dtype))


@register('_onehot_encode', inputs=('lhs', 'rhs'), dtypes=DTypeRule(soft=('rhs',)))
def onehot_encode(lhs, rhs):
    """One-hot rows of ``rhs``'s shape (N, K) and dtype for the indices ``lhs`` (N,).

    An index outside [0, K) gives a row of zeros; rhs's values are not read.
    """
    check(rhs.dim() == 2 and lhs.shape == rhs.shape[:1], '_onehot_encode',
          'expected lhs (N,) and rhs (N, K), got %s and %s', lhs.shape, rhs.shape)
    classes = torch.arange(rhs.shape[1], device=rhs.device)
    return (lhs.long().unsqueeze(1) == classes).to(rhs.dtype)


@register('_copyto', inputs=('data',), same_shape=True)
def copyto(data):
    """A copy of ``data``; with ``out=`` it is written into that array, converting its dtype."""
    return data.clone()


@register('_set_value', attrs=[('src', FLOAT)])
def set_value(src):
    """The scalar ``src``; with ``out=`` (MXNet requires it) every element of out is set to it."""
    return torch.tensor(src)


@register('_identity_with_attr_like_rhs', inputs=('lhs', 'rhs'), same_shape=True)
def identity_with_attr_like_rhs(lhs, rhs):
    """``lhs`` unchanged (rhs, of the same shape, only lends its attributes); no gradient to rhs."""
    check(lhs.shape == rhs.shape, '_identity_with_attr_like_rhs', 'shapes of lhs %s and rhs %s must be equal',
          lhs.shape, rhs.shape)
    return lhs.clone()
