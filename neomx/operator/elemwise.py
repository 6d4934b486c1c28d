"""Element-wise operators: unary math, binary (same-shape, broadcasting and scalar forms),
comparisons and logic, and a few element-wise utilities (clip, cast, add_n...).

MXNet semantics kept here: comparisons and logical ops return 0/1 in the input dtype;
integer division truncates toward zero; a scalar is cast to an integer array's dtype
first; ``maximum``/``minimum`` give the gradient to the first argument at ties; ``round``
rounds halves away from zero and ``rint`` rounds halves down.
"""
import math

import torch

from .._division import divide, mod
from ..base import torch_dtype
from .dtype_rules import DTypeRule
from .registry import BOOL, DTYPE, FLOAT, INT, OPT_INT, check, register

# ------------------------------------------------------------------- unary


def _round_half_away(x):
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _rint_half_down(x):
    return torch.ceil(x - 0.5)


class _Cbrt(torch.autograd.Function):
    """The cube root with MXNet's gradient ``1 / (3 cbrt(x)^2)``: infinite at 0, where the
    chain rule through ``sign(x) |x|^(1/3)`` would give NaN. The gradient is written with
    differentiable operations on the output, so higher orders follow
    (``-2 / (9 cbrt(x)^5)`` the second)."""

    @staticmethod
    def forward(ctx, x):  # pylint: disable=arguments-differ
        out = torch.sign(x) * torch.abs(x).pow(1.0 / 3)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        out, = ctx.saved_tensors
        return grad * out.pow(-2) / 3      # pow, not out * out: its own gradient is -inf at 0, not NaN


def _cbrt(x):
    return _Cbrt.apply(x)


def _gamma_value(x):
    # |Gamma(x)| = exp(lgamma(x)); for negative x the sign alternates between the poles,
    # being (-1)**floor(x). At the poles (non-positive integers) the result is NaN, except
    # at 0 where it is +inf, as C's tgamma gives.
    magnitude = torch.exp(torch.lgamma(x))
    negative_odd = (x < 0) & (torch.remainder(torch.floor(x), 2) == 1)
    signed = torch.where(negative_odd, -magnitude, magnitude)
    return torch.where((x < 0) & (x == torch.floor(x)), torch.full_like(x, math.nan), signed)


def _digamma(x):
    """The digamma function as MXNet's gradients of gamma and gammaln use it: +inf at the
    poles 0, -1, -2... (torch gives -inf at 0 and NaN below)."""
    return torch.where((x <= 0) & (x == torch.floor(x)), torch.full_like(x, math.inf), torch.digamma(x))


class _Gamma(torch.autograd.Function):
    """gamma with MXNet's gradient ``gamma(x) digamma(x)`` (+inf at 0, NaN at the other poles)."""

    @staticmethod
    def forward(ctx, x):  # pylint: disable=arguments-differ
        out = _gamma_value(x)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        x, out = ctx.saved_tensors
        return grad * out * _digamma(x)


class _Gammaln(torch.autograd.Function):
    """gammaln with MXNet's gradient ``digamma(x)`` (+inf at the poles)."""

    @staticmethod
    def forward(ctx, x):  # pylint: disable=arguments-differ
        ctx.save_for_backward(x)
        return torch.lgamma(x)

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        x, = ctx.saved_tensors
        return grad * _digamma(x)


def float_only(fn):
    """``fn(x, *args)`` where integer ``x`` computes in float64 and truncates back, as MXNet
    does (so ``exp(int32 20)`` is 485165195 and ``erf(int32 5)`` is 0)."""
    def impl(x, *args):
        if x.dtype.is_floating_point:
            return fn(x, *args)
        return fn(x.double(), *args).to(x.dtype)
    return impl


def _float_rounding(fn):
    """Integer inputs to a rounding function are already whole: they come back unchanged."""
    def impl(x):
        if x.dtype.is_floating_point:
            return fn(x)
        return x.clone()
    return impl


UNARY = {
    'abs': torch.abs, 'sign': torch.sign, 'round': _float_rounding(_round_half_away),
    'rint': _float_rounding(_rint_half_down), 'ceil': torch.ceil, 'floor': torch.floor,
    'trunc': torch.trunc, 'fix': torch.trunc,
    'square': torch.square, 'negative': torch.neg, 'reciprocal': torch.reciprocal,
    'relu': torch.relu, 'sigmoid': torch.sigmoid, 'softsign': torch.nn.functional.softsign,
    'erf': torch.erf, 'erfinv': torch.erfinv, 'exp': torch.exp, 'expm1': torch.expm1,
    'log': torch.log, 'log1p': torch.log1p, 'log2': torch.log2, 'log10': torch.log10,
    'sqrt': torch.sqrt, 'rsqrt': torch.rsqrt, 'cbrt': _cbrt, 'rcbrt': lambda x: 1.0 / _cbrt(x),
    'sin': torch.sin, 'cos': torch.cos, 'tan': torch.tan, 'arcsin': torch.asin,
    'arccos': torch.acos, 'arctan': torch.atan, 'sinh': torch.sinh, 'cosh': torch.cosh,
    'tanh': torch.tanh, 'arcsinh': torch.asinh, 'arccosh': torch.acosh, 'arctanh': torch.atanh,
    'degrees': torch.rad2deg, 'radians': torch.deg2rad, 'gamma': _Gamma.apply, 'gammaln': _Gammaln.apply,
}
# Operators that work on integer arrays directly (the rest compute in float, see float_only).
_INT_OK = {'abs', 'sign', 'square', 'negative', 'relu', 'ceil', 'floor', 'trunc', 'fix', 'round', 'rint'}


def _register_unary(name, fn):
    impl = fn if name in _INT_OK else float_only(fn)

    def unary(data):
        return impl(data)
    unary.__doc__ = 'Element-wise %s of the input; output has the input\'s shape and dtype.' % name
    register(name, inputs=('data',), same_shape=True)(unary)


for _name, _fn in UNARY.items():
    _register_unary(_name, _fn)


@register('logical_not', inputs=('data',), same_shape=True)
def logical_not(data):
    """1 where the input is zero, else 0, in the input dtype."""
    return (data == 0).to(data.dtype)


# ------------------------------------------------------------------ binary
def _trunc_div(a, b, op='division'):
    """True division for floats, truncating for integers (MXNetError naming ``op`` at 0)."""
    return divide(a, b, op)


def _named_division(fn, op):
    """``fn`` with the operator's name for its division-by-zero error."""
    if fn is _trunc_div:
        return lambda a, b: _trunc_div(a, b, op)
    return fn


def _maximum(a, b):
    return torch.where(a >= b, a, b)


def _minimum(a, b):
    return torch.where(a <= b, a, b)


def _cmp(fn):
    def compare(a, b):
        return fn(a, b).to(a.dtype)
    return compare


def _logic(fn):
    def logic(a, b):
        return fn(a != 0, b != 0).to(a.dtype)
    return logic


def _power(a, b):
    if a.dtype.is_floating_point or a.dtype == torch.bool:
        return torch.pow(a, b)
    # MXNet raises integers in float32 and casts back: 2 ** -1 is 0, 0 ** -1 and overflows are
    # the dtype's lowest value, 7 ** 9 is 40353608
    return torch.pow(a.to(torch.float32), b.to(torch.float32)).to(a.dtype)


# name: (torch function, same-shape op name and aliases, broadcast op name and aliases)
BINARY = {
    'add': (torch.add, ('elemwise_add', '_plus', '_add'), ('broadcast_add', 'broadcast_plus')),
    'sub': (torch.sub, ('elemwise_sub', '_minus', '_sub'), ('broadcast_sub', 'broadcast_minus')),
    'mul': (torch.mul, ('elemwise_mul', '_mul'), ('broadcast_mul',)),
    'div': (_trunc_div, ('elemwise_div', '_div'), ('broadcast_div',)),
    'mod': (mod, ('_mod',), ('broadcast_mod',)),
    'power': (_power, ('_power', '_Power'), ('broadcast_power',)),
    'maximum': (_maximum, ('_maximum', '_Maximum'), ('broadcast_maximum',)),
    'minimum': (_minimum, ('_minimum', '_Minimum'), ('broadcast_minimum',)),
    'hypot': (torch.hypot, ('_hypot',), ('broadcast_hypot',)),
    'equal': (_cmp(torch.eq), ('_equal',), ('broadcast_equal',)),
    'not_equal': (_cmp(torch.ne), ('_not_equal',), ('broadcast_not_equal',)),
    'greater': (_cmp(torch.gt), ('_greater',), ('broadcast_greater',)),
    'greater_equal': (_cmp(torch.ge), ('_greater_equal',), ('broadcast_greater_equal',)),
    'lesser': (_cmp(torch.lt), ('_lesser',), ('broadcast_lesser',)),
    'lesser_equal': (_cmp(torch.le), ('_lesser_equal',), ('broadcast_lesser_equal',)),
    'logical_and': (_logic(torch.logical_and), ('_logical_and',), ('broadcast_logical_and',)),
    'logical_or': (_logic(torch.logical_or), ('_logical_or',), ('broadcast_logical_or',)),
    'logical_xor': (_logic(torch.logical_xor), ('_logical_xor',), ('broadcast_logical_xor',)),
}


def _check_dtype(op, lhs, rhs):
    check(lhs.dtype == rhs.dtype, op, 'operands have different dtypes %s and %s (shapes %s and %s)',
          lhs.dtype, rhs.dtype, lhs.shape, rhs.shape)


def _register_same_shape(fn, same_names):
    same_op = same_names[0]
    same_fn = _named_division(fn, same_op)

    def elemwise(lhs, rhs):
        check(lhs.shape == rhs.shape, same_op, 'shapes of lhs %s and rhs %s must be equal',
              lhs.shape, rhs.shape)
        _check_dtype(same_op, lhs, rhs)
        return same_fn(lhs, rhs)
    elemwise.__doc__ = 'Element-wise %s of two arrays of the same shape.' % same_op
    register(same_op, inputs=('lhs', 'rhs'), aliases=same_names[1:], same_shape=True)(elemwise)


def _register_binary(fn, same_names, bcast_names):
    _register_same_shape(fn, same_names)

    bcast_op = bcast_names[0]
    bcast_fn = _named_division(fn, bcast_op)

    def broadcast(lhs, rhs):
        _check_dtype(bcast_op, lhs, rhs)
        try:
            torch.broadcast_shapes(lhs.shape, rhs.shape)
        except RuntimeError:
            check(False, bcast_op, 'operands could not be broadcast together with shapes %s %s',
                  lhs.shape, rhs.shape)
        return bcast_fn(lhs, rhs)
    broadcast.__doc__ = 'Element-wise %s with numpy-style broadcasting.' % bcast_op
    register(bcast_op, inputs=('lhs', 'rhs'), aliases=bcast_names[1:])(broadcast)


for _fn, _same, _bcast in BINARY.values():
    _register_binary(_fn, _same, _bcast)


# ------------------------------------------------------------------ scalar
def _cast_scalar(data, scalar):
    if data.dtype.is_floating_point:
        return scalar
    return int(scalar)


def _rsub(x, s):
    return torch.rsub(x, s)


def _rdiv(x, s):
    if x.dtype.is_floating_point:
        return s / x
    return divide(s, x, '_rdiv_scalar')


def _rmod(x, s):
    return mod(s, x)


def _rpow(x, s):
    return torch.pow(s, x)


SCALAR = {
    '_plus_scalar': torch.add, '_minus_scalar': torch.sub, '_rminus_scalar': _rsub,
    '_mul_scalar': torch.mul, '_div_scalar': _trunc_div, '_rdiv_scalar': _rdiv,
    '_mod_scalar': mod, '_rmod_scalar': _rmod, '_power_scalar': torch.pow,
    '_rpower_scalar': _rpow, '_maximum_scalar': _maximum, '_minimum_scalar': _minimum,
    '_hypot_scalar': lambda x, s: torch.hypot(x, torch.full_like(x, s)),
    '_equal_scalar': _cmp(torch.eq), '_not_equal_scalar': _cmp(torch.ne),
    '_greater_scalar': _cmp(torch.gt), '_greater_equal_scalar': _cmp(torch.ge),
    '_lesser_scalar': _cmp(torch.lt), '_lesser_equal_scalar': _cmp(torch.le),
    '_logical_and_scalar': lambda x, s: torch.logical_and(x != 0, torch.tensor(s != 0)).to(x.dtype),
    '_logical_or_scalar': lambda x, s: torch.logical_or(x != 0, torch.tensor(s != 0)).to(x.dtype),
    '_logical_xor_scalar': lambda x, s: torch.logical_xor(x != 0, torch.tensor(s != 0)).to(x.dtype),
}
_NEEDS_TENSOR_SCALAR = {'_maximum_scalar', '_minimum_scalar'}


def _register_scalar(name, fn):
    tensor_scalar = name in _NEEDS_TENSOR_SCALAR
    fn = _named_division(fn, name)

    def scalar_op(data, scalar, is_int):
        s = _cast_scalar(data, scalar)
        if tensor_scalar:
            s = torch.tensor(s, dtype=data.dtype, device=data.device)
        return fn(data, s)
    scalar_op.__doc__ = 'Element-wise %s of an array and a scalar.' % name[1:]
    register(name, inputs=('data',), attrs=[('scalar', FLOAT, 1.0), ('is_int', BOOL, True)],
             same_shape=True)(scalar_op)


for _name, _fn in SCALAR.items():
    _register_scalar(_name, _fn)

# MXNet's scatter operators: on dense arrays elemwise_div, _plus_scalar and _minus_scalar; a
# sparse lhs is computed at its stored positions only, zeros elsewhere staying zeros (their
# storage rules are in operator/storage.py)
_register_same_shape(_trunc_div, ('_scatter_elemwise_div',))
_register_scalar('_scatter_plus_scalar', torch.add)
_register_scalar('_scatter_minus_scalar', torch.sub)


# --------------------------------------------------------------- utilities
@register('clip', inputs=('data',), attrs=[('a_min', FLOAT), ('a_max', FLOAT)], same_shape=True)
def clip(data, a_min, a_max):
    """Clip values to [a_min, a_max]; the gradient passes at the bounds."""
    return torch.clamp(data, _cast_scalar(data, a_min), _cast_scalar(data, a_max))


@register('hard_sigmoid', inputs=('data',), attrs=[('alpha', FLOAT, 0.2), ('beta', FLOAT, 0.5)],
          same_shape=True)
def hard_sigmoid(data, alpha, beta):
    """``clip(alpha * x + beta, 0, 1)``."""
    return torch.clamp(data * alpha + beta, 0.0, 1.0)


@register('smooth_l1', inputs=('data',), attrs=[('scalar', FLOAT, 1.0)], same_shape=True)
def smooth_l1(data, scalar):
    """Smooth L1: ``0.5 (sigma x)^2`` where ``|x| < 1/sigma^2``, else ``|x| - 0.5/sigma^2``."""
    s2 = scalar * scalar
    absx = torch.abs(data)
    return torch.where(absx < 1.0 / s2, 0.5 * s2 * data * data, absx - 0.5 / s2)


@register('add_n', variadic='num_args', attrs=[('num_args', INT)],
          aliases=('ElementWiseSum', '_sum_n'), same_shape=True)
def add_n(*args, num_args):
    """Sum of any number of arrays of the same shape."""
    out = args[0]
    for a in args[1:]:
        check(a.shape == out.shape, 'add_n', 'all inputs must have the same shape, got %s and %s',
              out.shape, a.shape)
        out = out + a
    return out


@register('Cast', shares_input=True, inputs=('data',), attrs=[('dtype', DTYPE)], aliases=('cast',), same_shape=True)
def cast(data, dtype):
    """Convert to ``dtype``."""
    return data.to(dtype)


_AMP_CASTABLE = (torch.float16, torch.bfloat16, torch.float32)    # float64 and integers stay


def _amp_cast_dtype(dtypes, attrs):
    data = dtypes[0]
    return torch_dtype(attrs['dtype']) if data in _AMP_CASTABLE else data


@register('amp_cast', shares_input=True, inputs=('data',), attrs=[('dtype', DTYPE)], same_shape=True,
          dtypes=DTypeRule(output=_amp_cast_dtype))
def amp_cast(data, dtype):
    """Cast used by automatic mixed precision: float16, bfloat16 and float32 inputs become
    ``dtype``; others (float64, integers) pass unchanged, as in MXNet.

    On CPUs a 4-D image batch cast to bfloat16 comes channels-last (the values are the same):
    the copy is made anyway, and oneDNN's bfloat16 convolutions run several times faster on
    that layout, which their outputs, and the BatchNorm, relu and pooling after them, keep."""
    if data.dtype not in _AMP_CASTABLE:
        return data
    if data.dim() == 4 and data.dtype is not dtype and data.device.type == 'cpu':
        # images (more pixels than a 7x7 filter has) go channels-last; filters stay as they
        # are: oneDNN reorders them anyway, and their permuted copies and gradients cost more
        images = dtype is torch.bfloat16 and data.shape[2] * data.shape[3] > _FILTER_PIXELS
        return _LayoutKeepingCast.apply(data, dtype, torch.channels_last if images else torch.preserve_format)
    return data.to(dtype)


_FILTER_PIXELS = 49


class _LayoutKeepingCast(torch.autograd.Function):
    """``x.to(dtype, memory_format=layout)`` whose gradient comes back in ``x``'s own layout.

    torch's cast gives the gradient in the gradient's layout: the channels-first gradient
    of a Flatten would then flow back through a channels-last bfloat16 network, and
    oneDNN's bfloat16 convolution backward is several times slower on mixed layouts."""

    @staticmethod
    def forward(ctx, x, dtype, layout):  # pylint: disable=arguments-differ
        ctx.dtype = x.dtype
        ctx.layout = (torch.channels_last if not x.is_contiguous()
                      and x.is_contiguous(memory_format=torch.channels_last) else torch.contiguous_format)
        return x.to(dtype, memory_format=layout)

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        return grad.to(ctx.dtype, memory_format=ctx.layout), None, None


# _CrossDeviceCopy: the copy MXNet's executors insert between devices (group2ctx placement)
@register('_copy', inputs=('data',), aliases=('identity', '_CrossDeviceCopy'), same_shape=True)
def copy(data):
    """A copy of the input."""
    return data.clone()


@register('BlockGrad', shares_input=True, inputs=('data',), aliases=('stop_gradient',), same_shape=True)
def block_grad(data):
    """The input unchanged, with no gradient flowing back."""
    return data.detach()


@register('zeros_like', inputs=('data',), same_shape=True)
def zeros_like(data):
    """Zeros of the input's shape and dtype."""
    return torch.zeros_like(data)


@register('ones_like', inputs=('data',), same_shape=True)
def ones_like(data):
    """Ones of the input's shape and dtype."""
    return torch.ones_like(data)


@register('reshape_like', shares_input=True, inputs=('lhs', 'rhs'), dtypes=DTypeRule(free=('rhs',)),
          attrs=[('lhs_begin', OPT_INT, None), ('lhs_end', OPT_INT, None),
                 ('rhs_begin', OPT_INT, None), ('rhs_end', OPT_INT, None)])
def reshape_like(lhs, rhs, lhs_begin, lhs_end, rhs_begin, rhs_end):
    """Reshape ``lhs`` (or its dims [lhs_begin, lhs_end)) to the shape of ``rhs``'s dims."""
    ls, rs = list(lhs.shape), list(rhs.shape)
    lb, le = _range(lhs_begin, lhs_end, len(ls))
    rb, re = _range(rhs_begin, rhs_end, len(rs))
    shape = ls[:lb] + rs[rb:re] + ls[le:]
    check(math.prod(shape) == lhs.numel(), 'reshape_like', 'cannot reshape %s to %s',
          tuple(ls), tuple(shape))
    return lhs.reshape(shape)


def _range(begin, end, n):
    b = 0 if begin is None else (begin + n if begin < 0 else begin)
    e = n if end is None else (end + n if end < 0 else end)
    return b, e
