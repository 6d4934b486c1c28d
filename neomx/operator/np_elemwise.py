"""Element-wise operators of MXNet's NumPy interface (``_npi_*``): unary math, binary
arithmetic with NumPy's type promotion and broadcasting, their scalar forms, comparisons
(bool results), and element-wise utilities (``where``, ``clip``, ``around``...).

MXNet 1.9.1's semantics kept: unary math on integer arrays computes in float and truncates
back to the input's type (``sqrt(int32 [2])`` is ``[1]``, as ``mx.nd``, whose implementations
these reuse); a scalar keeps an integer array's type (``int32 + 1.5`` adds 1) except in true
division, where integers give float32; comparisons give bool.
"""
import torch

from .._division import mod as _mxnet_mod
from ..base import torch_dtype
from .dtype_rules import DTypeRule
from .elemwise import UNARY, float_only
from .registry import ANY, BOOL, FLOAT, INT, OPT_FLOAT, Attr, register

__all__ = ['NP_UNARY', 'NP_BINARY', 'COMMUTATIVE', 'MIRRORED', 'true_divide', 'scalar_for', 'promoted']


def promoted(dtypes, attrs):    # pylint: disable=unused-argument
    """Output dtype of a NumPy binary operator: the inputs' promoted type."""
    known = [d for d in dtypes if d is not None]
    if not known:
        return None
    out = known[0]
    for d in known[1:]:
        out = torch.promote_types(out, d)
    return out


def _to_bool_dtype(dtypes, attrs):  # pylint: disable=unused-argument
    return torch.bool


PROMOTE = DTypeRule(free=lambda a: ('lhs', 'rhs', 'x1', 'x2'), output=promoted)
BOOL_OUT = DTypeRule(free=lambda a: ('lhs', 'rhs', 'x1', 'x2', 'x', 'data'), output=_to_bool_dtype)


def scalar_for(t, scalar):
    """A Python scalar as the ``_npi_*_scalar`` operators apply it to tensor ``t``: cast to
    an integer array's type (``int32_array + 1.5`` adds 1)."""
    if type(scalar) is float and not t.dtype.is_floating_point and t.dtype is not torch.bool:
        return int(scalar)
    return scalar


def true_divide(a, b):
    """NumPy's true division with MXNet's dtypes: integers (and booleans) give float32."""
    r = torch.true_divide(a, b)
    if r.dtype is torch.float64 and not (
            (type(a) is torch.Tensor and a.dtype is torch.float64) or
            (type(b) is torch.Tensor and b.dtype is torch.float64)):
        r = r.float()
    return r


# --------------------------------------------------------------------- unary
_INT_KEEPING = {'abs', 'sign', 'square', 'negative', 'ceil', 'floor', 'trunc', 'fix'}


def _rint(x):
    if not x.dtype.is_floating_point:
        return x.clone()
    return torch.ceil(x - 0.5)      # MXNet's rint: halves go down (rint(1.5) is 1, rint(-2.5) is -3)


def _isposinf(x):
    return torch.isposinf(x)


def _isneginf(x):
    return torch.isneginf(x)


def _bitwise_not(x):
    return torch.bitwise_not(x)


def _logical_not(x):
    return torch.logical_not(x)


def _unary_source(name):
    fn = UNARY[name]
    return fn if name in _INT_KEEPING else float_only(fn)


# mx.np name: (operator, implementation)
NP_UNARY = {
    'absolute': ('_npi_absolute', _unary_source('abs')),
    'negative': ('_npi_negative', torch.neg),
    'reciprocal': ('_npi_reciprocal', _unary_source('reciprocal')),
    'square': ('_npi_square', torch.square),
    'sqrt': ('_npi_sqrt', _unary_source('sqrt')),
    'cbrt': ('_npi_cbrt', _unary_source('cbrt')),
    'exp': ('_npi_exp', _unary_source('exp')),
    'expm1': ('_npi_expm1', _unary_source('expm1')),
    'log': ('_npi_log', _unary_source('log')),
    'log10': ('_npi_log10', _unary_source('log10')),
    'log2': ('_npi_log2', _unary_source('log2')),
    'log1p': ('_npi_log1p', _unary_source('log1p')),
    'sin': ('_npi_sin', _unary_source('sin')),
    'cos': ('_npi_cos', _unary_source('cos')),
    'tan': ('_npi_tan', _unary_source('tan')),
    'arcsin': ('_npi_arcsin', _unary_source('arcsin')),
    'arccos': ('_npi_arccos', _unary_source('arccos')),
    'arctan': ('_npi_arctan', _unary_source('arctan')),
    'sinh': ('_npi_sinh', _unary_source('sinh')),
    'cosh': ('_npi_cosh', _unary_source('cosh')),
    'tanh': ('_npi_tanh', _unary_source('tanh')),
    'arcsinh': ('_npi_arcsinh', _unary_source('arcsinh')),
    'arccosh': ('_npi_arccosh', _unary_source('arccosh')),
    'arctanh': ('_npi_arctanh', _unary_source('arctanh')),
    'degrees': ('_npi_degrees', _unary_source('degrees')),
    'radians': ('_npi_radians', _unary_source('radians')),
    'sign': ('_npi_sign', torch.sign),
    'rint': ('_npi_rint', _rint),
    'ceil': ('_npi_ceil', _unary_source('ceil')),
    'floor': ('_npi_floor', _unary_source('floor')),
    'trunc': ('_npi_trunc', _unary_source('trunc')),
    'fix': ('_npi_fix', _unary_source('fix')),
    'logical_not': ('_npi_logical_not', _logical_not),
    'bitwise_not': ('_npi_bitwise_not', _bitwise_not),
    'isnan': ('_npi_isnan', torch.isnan),
    'isinf': ('_npi_isinf', torch.isinf),
    'isfinite': ('_npi_isfinite', torch.isfinite),
    'isposinf': ('_npi_isposinf', _isposinf),
    'isneginf': ('_npi_isneginf', _isneginf),
}
_BOOL_RESULTS = {'logical_not', 'isnan', 'isinf', 'isfinite', 'isposinf', 'isneginf'}


def _register_unary(name, op, fn):
    def unary(x):
        return fn(x)
    unary.__doc__ = 'Element-wise %s of an array (NumPy\'s ``%s``).' % (name, name)
    register(op, inputs=('x',), same_shape=True, dtypes=BOOL_OUT if name in _BOOL_RESULTS else DTypeRule())(unary)


for _name, (_op, _fn) in NP_UNARY.items():
    _register_unary(_name, _op, _fn)
register('_npi_abs', inputs=('x',), same_shape=True)(lambda x: torch.abs(x))


# -------------------------------------------------------------------- binary
def _mod(a, b):
    return _mxnet_mod(a, b)


def _ldexp(a, b):
    return true_divide(a, 1) * torch.pow(2.0, b) if not a.dtype.is_floating_point else a * torch.pow(2.0, b).to(a.dtype)


def _lcm(a, b):
    return torch.lcm(a, b)


def _copysign(a, b):
    return torch.copysign(a, b) if a.dtype.is_floating_point else torch.copysign(a, b).to(a.dtype)


def _arctan2(a, b):
    return torch.atan2(a, b)


def _hypot(a, b):
    return torch.hypot(a, b)


def _maximum(a, b):
    return torch.maximum(a, b) if a.dtype is b.dtype else torch.maximum(*_promoted_pair(a, b))


def _minimum(a, b):
    return torch.minimum(a, b) if a.dtype is b.dtype else torch.minimum(*_promoted_pair(a, b))


def _subtract(a, b):
    """``a - b``; booleans count as 0/1 (torch refuses ``-`` on bool tensors)."""
    if type(a) is torch.Tensor and a.dtype is torch.bool:
        a = a.to(b.dtype if type(b) is torch.Tensor and b.dtype is not torch.bool else torch.int8)
    if type(b) is torch.Tensor and b.dtype is torch.bool:
        b = b.to(a.dtype if type(a) is torch.Tensor else torch.int8)
    return torch.sub(a, b)


def _promoted_pair(a, b):
    dt = torch.promote_types(a.dtype, b.dtype)
    return a.to(dt), b.to(dt)


# mx.np name: (operator, implementation, result is bool)
NP_BINARY = {
    'add': ('_npi_add', torch.add, False),
    'subtract': ('_npi_subtract', _subtract, False),
    'multiply': ('_npi_multiply', torch.mul, False),
    'true_divide': ('_npi_true_divide', true_divide, False),
    'mod': ('_npi_mod', _mod, False),
    'power': ('_npi_power', torch.pow, False),
    'maximum': ('_npi_maximum', _maximum, False),
    'minimum': ('_npi_minimum', _minimum, False),
    'arctan2': ('_npi_arctan2', _arctan2, False),
    'hypot': ('_npi_hypot', _hypot, False),
    'copysign': ('_npi_copysign', _copysign, False),
    'lcm': ('_npi_lcm', _lcm, False),
    'ldexp': ('_npi_ldexp', _ldexp, False),
    'bitwise_and': ('_npi_bitwise_and', torch.bitwise_and, False),
    'bitwise_or': ('_npi_bitwise_or', torch.bitwise_or, False),
    'bitwise_xor': ('_npi_bitwise_xor', torch.bitwise_xor, False),
    'equal': ('_npi_equal', torch.eq, True),
    'not_equal': ('_npi_not_equal', torch.ne, True),
    'greater': ('_npi_greater', torch.gt, True),
    'greater_equal': ('_npi_greater_equal', torch.ge, True),
    'less': ('_npi_less', torch.lt, True),
    'less_equal': ('_npi_less_equal', torch.le, True),
    'logical_and': ('_npi_logical_and', torch.logical_and, True),
    'logical_or': ('_npi_logical_or', torch.logical_or, True),
    'logical_xor': ('_npi_logical_xor', torch.logical_xor, True),
}
# Operators with two-input names x1/x2 in MXNet (the rest take lhs/rhs).
_X_INPUTS = {'arctan2', 'hypot'}
# Commutative operators have no reversed scalar form.
COMMUTATIVE = {'add', 'multiply', 'maximum', 'minimum', 'hypot', 'lcm', 'bitwise_and', 'bitwise_or',
                'bitwise_xor', 'equal', 'not_equal', 'logical_and', 'logical_or', 'logical_xor'}
# Comparisons with a scalar mirror: 2 < x is x > 2.
MIRRORED = {'greater': 'less', 'greater_equal': 'less_equal', 'less': 'greater', 'less_equal': 'greater_equal'}
_KEEPS_FLOAT_SCALAR = {'true_divide', 'equal', 'not_equal', 'greater', 'greater_equal', 'less', 'less_equal',
                       'arctan2', 'hypot', 'power', 'logical_and', 'logical_or', 'logical_xor'}


# Implementations taking a tensor on both sides: their scalar forms make one of the scalar.
_TENSOR_SCALAR = {'maximum', 'minimum', 'hypot', 'copysign', 'lcm', 'ldexp', 'arctan2', 'logical_and',
                  'logical_or', 'logical_xor'}


def _scalar_tensor(data, s):
    """Scalar ``s`` as a 0-dim tensor next to ``data``: of ``data``'s type, or float32 for a
    float scalar with an integer array."""
    dt = data.dtype if (data.dtype.is_floating_point or not isinstance(s, float)) else torch.float32
    return torch.tensor(s, dtype=dt, device=data.device)


def _register_binary(name, op, fn, bool_result):
    inputs = ('x1', 'x2') if name in _X_INPUTS else ('lhs', 'rhs')

    def binary(lhs, rhs):
        return fn(lhs, rhs)
    binary.__doc__ = 'Element-wise %s of two arrays, broadcast (NumPy\'s ``%s``).' % (name, name)
    register(op, inputs=inputs, dtypes=BOOL_OUT if bool_result else PROMOTE)(binary)

    keep_float = name in _KEEPS_FLOAT_SCALAR
    tensor_scalar = name in _TENSOR_SCALAR

    def with_scalar(data, scalar, is_int):  # pylint: disable=unused-argument
        if isinstance(scalar, float) and scalar.is_integer() and is_int:
            scalar = int(scalar)
        s = scalar if keep_float else scalar_for(data, scalar)
        return fn(data, _scalar_tensor(data, s) if tensor_scalar else s)
    with_scalar.__doc__ = 'Element-wise %s of an array and a scalar.' % name
    register(op + '_scalar', inputs=('data',), attrs=[('scalar', FLOAT, 1.0), ('is_int', BOOL, True)],
             same_shape=True, dtypes=BOOL_OUT if bool_result else DTypeRule())(with_scalar)
    if name in COMMUTATIVE or name in MIRRORED:
        return

    def scalar_with(data, scalar, is_int):  # pylint: disable=unused-argument
        if isinstance(scalar, float) and scalar.is_integer() and is_int:
            scalar = int(scalar)
        return fn(_scalar_tensor(data, scalar if keep_float else scalar_for(data, scalar)), data)
    scalar_with.__doc__ = 'Element-wise %s of a scalar and an array.' % name
    register('_npi_r' + op[len('_npi_'):] + '_scalar', inputs=('data',),
             attrs=[('scalar', FLOAT, 1.0), ('is_int', BOOL, True)], same_shape=True)(scalar_with)


for _name, (_op, _fn, _bool) in NP_BINARY.items():
    _register_binary(_name, _op, _fn, _bool)


# ------------------------------------------------------------------ utilities
@register('_npi_where', inputs=('condition', 'x', 'y'),
          dtypes=DTypeRule(free=('condition', 'x', 'y'), output=lambda d, a: promoted(d[1:], a)))
def where(condition, x, y):
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (broadcast)."""
    return torch.where(condition.bool() if condition.dtype is not torch.bool else condition, x, y)


@register('_npi_where_lscalar', inputs=('condition', 'x'), attrs=[('scalar', FLOAT, 0.0)],
          dtypes=DTypeRule(free=('condition',)))
def where_lscalar(condition, x, scalar):
    """``where(condition, x, scalar)``."""
    return torch.where(condition.bool(), x, torch.tensor(scalar, dtype=x.dtype, device=x.device))


@register('_npi_where_rscalar', inputs=('condition', 'y'), attrs=[('scalar', FLOAT, 0.0)],
          dtypes=DTypeRule(free=('condition',)))
def where_rscalar(condition, y, scalar):
    """``where(condition, scalar, y)``."""
    return torch.where(condition.bool(), torch.tensor(scalar, dtype=y.dtype, device=y.device), y)


@register('_npi_where_scalar2', inputs=('condition',), attrs=[('x', FLOAT, 0.0), ('y', FLOAT, 0.0)],
          dtypes=DTypeRule(free=('condition',), output='float32'))
def where_scalar2(condition, x, y):
    """``where(condition, x, y)`` of two scalars (float32)."""
    return torch.where(condition.bool(), torch.tensor(x, dtype=torch.float32, device=condition.device),
                       torch.tensor(y, dtype=torch.float32, device=condition.device))


@register('_npi_clip', inputs=('data',), attrs=[('a_min', OPT_FLOAT, None), ('a_max', OPT_FLOAT, None)],
          same_shape=True)
def clip(data, a_min, a_max):
    """Values limited to [a_min, a_max] (either may be None), in the input's type."""
    if a_min is None and a_max is None:
        raise ValueError('array_clip: One of max or min must be given')
    if not data.dtype.is_floating_point:
        a_min = None if a_min is None else int(a_min) if float(a_min).is_integer() else int(torch.ceil(
            torch.tensor(a_min)).item())
        a_max = None if a_max is None else int(a_max) if float(a_max).is_integer() else int(torch.floor(
            torch.tensor(a_max)).item())
        if data.dtype is not torch.bool:    # bounds outside the type's range do not wrap around
            info = torch.iinfo(data.dtype)
            a_min = None if a_min is None else min(max(a_min, info.min), info.max)
            a_max = None if a_max is None else min(max(a_max, info.min), info.max)
    return torch.clamp(data, a_min, a_max)


@register('_npi_around', inputs=('x',), attrs=[('decimals', INT, 0)], same_shape=True)
def around(x, decimals):
    """Round to ``decimals`` places, halves to even (NumPy's ``around``)."""
    if not x.dtype.is_floating_point:
        if decimals >= 0:
            return x.clone()
        scale = 10 ** (-decimals)
        return (torch.round(x.double() / scale) * scale).to(x.dtype)
    return torch.round(x, decimals=decimals)


@register('_npi_nan_to_num', inputs=('data',),
          attrs=[('copy', BOOL, True), ('nan', FLOAT, 0.0), ('posinf', OPT_FLOAT, None), ('neginf', OPT_FLOAT, None)],
          same_shape=True)
def nan_to_num(data, copy, nan, posinf, neginf):    # pylint: disable=redefined-outer-name
    """NaN and infinities replaced by finite numbers (the type's extremes by default)."""
    if not data.dtype.is_floating_point:
        return data.clone() if copy else data
    res = torch.nan_to_num(data, nan=nan, posinf=posinf, neginf=neginf)
    if not copy:
        data.copy_(res)
        return data
    return res


@register('_npi_copy', inputs=('a',), same_shape=True, aliases=('_np_copy',))
def copy(a):
    """A copy of the array."""
    return a.clone()


@register('_npi_cast', inputs=('data',), attrs=[('dtype', Attr('dtype', lambda v: v))], same_shape=True,
          dtypes=DTypeRule(free=('data',), output=lambda d, a: None))
def cast(data, dtype):
    """The array converted to ``dtype``."""
    return data.to(torch_dtype(dtype, 'astype'))


@register('_npi_full_like', inputs=('a',), attrs=[('fill_value', ANY), ('ctx', ANY, None), ('dtype', ANY, None)],
          dtypes=DTypeRule(free=('a',), output=lambda d, a: None))
def full_like(a, fill_value, ctx, dtype):  # pylint: disable=unused-argument
    """An array of ``a``'s shape (and type, unless ``dtype``) filled with ``fill_value``."""
    dt = a.dtype if dtype is None else torch_dtype(dtype, 'full_like')
    if not dt.is_floating_point and dt is not torch.bool:
        fill_value = int(fill_value)
    return torch.full(a.shape, fill_value, dtype=dt, device=a.device)
