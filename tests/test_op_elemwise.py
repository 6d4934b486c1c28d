"""Element-wise operators: unary math, binary/broadcast/scalar forms, clip and friends.

Values are checked against numpy (or ``math``) references and MXNet 1.9.1's recorded
results; every differentiable operator gets a finite-difference gradient check.
"""
import math

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

GENERAL = np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7], dtype=np.float32)
POSITIVE = np.array([0.25, 0.5, 1.0, 2.0, 4.0, 10.0], dtype=np.float32)
UNIT = np.array([-0.9, -0.5, 0.0, 0.3, 0.9], dtype=np.float32)


def _vectorized(fn):
    return np.vectorize(fn, otypes=[np.float64])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name: (numpy reference, inputs)
UNARY_REFERENCES = {
    'abs': (np.abs, GENERAL), 'sign': (np.sign, GENERAL), 'ceil': (np.ceil, GENERAL),
    'floor': (np.floor, GENERAL), 'trunc': (np.trunc, GENERAL), 'fix': (np.fix, GENERAL),
    'square': (np.square, GENERAL), 'negative': (np.negative, GENERAL),
    'reciprocal': (np.reciprocal, POSITIVE), 'relu': (lambda x: np.maximum(x, 0), GENERAL),
    'sigmoid': (_sigmoid, GENERAL), 'softsign': (lambda x: x / (1 + np.abs(x)), GENERAL),
    'erf': (_vectorized(math.erf), GENERAL), 'exp': (np.exp, GENERAL), 'expm1': (np.expm1, GENERAL),
    'log': (np.log, POSITIVE), 'log1p': (np.log1p, POSITIVE), 'log2': (np.log2, POSITIVE),
    'log10': (np.log10, POSITIVE), 'sqrt': (np.sqrt, POSITIVE), 'rsqrt': (lambda x: 1 / np.sqrt(x), POSITIVE),
    'cbrt': (np.cbrt, GENERAL), 'rcbrt': (lambda x: 1 / np.cbrt(x), POSITIVE),
    'sin': (np.sin, GENERAL), 'cos': (np.cos, GENERAL), 'tan': (np.tan, GENERAL),
    'arcsin': (np.arcsin, UNIT), 'arccos': (np.arccos, UNIT), 'arctan': (np.arctan, GENERAL),
    'sinh': (np.sinh, GENERAL), 'cosh': (np.cosh, GENERAL), 'tanh': (np.tanh, GENERAL),
    'arcsinh': (np.arcsinh, GENERAL), 'arccosh': (np.arccosh, POSITIVE + 1), 'arctanh': (np.arctanh, UNIT),
    'degrees': (np.degrees, GENERAL), 'radians': (np.radians, GENERAL),
    'gamma': (_vectorized(math.gamma), POSITIVE), 'gammaln': (_vectorized(math.lgamma), POSITIVE),
}


@pytest.mark.parametrize('name', sorted(UNARY_REFERENCES))
def test_unary_matches_numpy(name):
    reference, values = UNARY_REFERENCES[name]
    out = getattr(mx.nd, name)(mx.nd.array(values))
    assert out.dtype == np.float32 and out.shape == values.shape
    np.testing.assert_allclose(out.asnumpy(), reference(values.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_erfinv_inverts_erf():
    out = mx.nd.erfinv(mx.nd.array(UNIT)).asnumpy()
    np.testing.assert_allclose(_vectorized(math.erf)(out), UNIT, rtol=1e-5, atol=1e-6)


def test_rounding_semantics():
    # MXNet: round takes halves away from zero, rint takes them down, fix truncates.
    x = mx.nd.array(GENERAL)
    np.testing.assert_array_equal(mx.nd.round(x).asnumpy(), [-3, -2, -1, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(mx.nd.rint(x).asnumpy(), [-3, -2, -1, 0, 0, 1, 2, 4])
    np.testing.assert_array_equal(mx.nd.fix(x).asnumpy(), [-2, -1, 0, 0, 0, 1, 2, 3])
    np.testing.assert_array_equal(x.round().asnumpy(), mx.nd.round(x).asnumpy())


def test_gamma_poles_and_negative_arguments():
    out = mx.nd.gamma(mx.nd.array([-3, -1, 0, -2.5, -0.5, 0.5])).asnumpy()
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == np.inf
    np.testing.assert_allclose(out[3:], [math.gamma(-2.5), math.gamma(-0.5), math.gamma(0.5)], rtol=1e-5)


@pytest.mark.parametrize('dtype', ['float16', 'float64'])
def test_unary_keeps_float_dtype(dtype):
    x = mx.nd.array([0.5, 2.0], dtype=dtype)
    for name in ('exp', 'sqrt', 'round', 'gamma'):
        assert getattr(mx.nd, name)(x).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(mx.nd.round(mx.nd.array([0.5, 1.5, 2.5, -0.5], dtype='float16')).asnumpy(),
                                  [1, 2, 3, -1])


def test_unary_on_integers():
    x = mx.nd.array([-3, 0, 4], dtype='int32')
    for name, expected in (('abs', [3, 0, 4]), ('square', [9, 0, 16]), ('sign', [-1, 0, 1]),
                           ('round', [-3, 0, 4]), ('rint', [-3, 0, 4]), ('negative', [3, 0, -4])):
        out = getattr(mx.nd, name)(x)
        assert out.dtype == np.int32, name
        np.testing.assert_array_equal(out.asnumpy(), expected)
    # Float functions of integers compute in float64 and truncate (MXNet-recorded values).
    assert mx.nd.exp(mx.nd.array([20], dtype='int32')).asnumpy()[0] == 485165195
    assert mx.nd.erf(mx.nd.array([5], dtype='int32')).asnumpy()[0] == 0
    assert mx.nd.sqrt(mx.nd.array([2, 9], dtype='int64')).asnumpy().tolist() == [1, 3]


def test_nan_and_inf_results():
    np.testing.assert_array_equal(mx.nd.sqrt(mx.nd.array([-1.0, 4.0])).asnumpy(), [np.nan, 2])
    assert mx.nd.log(mx.nd.array([0.0])).asnumpy()[0] == -np.inf


# ----------------------------------------------------------------- gradients
# Inputs away from kinks and poles, where finite differences are exact enough.
SMOOTH = np.array([-1.3, -0.4, 0.35, 0.8, 1.7])
GRADIENT_INPUTS = {name: SMOOTH for name in (
    'abs', 'square', 'negative', 'relu', 'sigmoid', 'softsign', 'erf', 'exp', 'expm1', 'cbrt',
    'sin', 'cos', 'tan', 'arctan', 'sinh', 'cosh', 'tanh', 'arcsinh', 'degrees', 'radians')}
GRADIENT_INPUTS.update({name: np.abs(SMOOTH) + 0.2 for name in (
    'reciprocal', 'log', 'log1p', 'log2', 'log10', 'sqrt', 'rsqrt', 'rcbrt', 'gamma', 'gammaln')})
GRADIENT_INPUTS.update({name: SMOOTH / 2 for name in ('arcsin', 'arccos', 'arctanh', 'erfinv')})
GRADIENT_INPUTS['arccosh'] = np.abs(SMOOTH) + 1.2
GRADIENT_INPUTS['gamma'] = np.array([-1.5, -0.5, 0.6, 1.3, 2.5])    # both signs
# Piecewise-constant functions: the gradient is 0 everywhere off the jumps.
GRADIENT_INPUTS.update({name: SMOOTH for name in ('sign', 'round', 'rint', 'ceil', 'floor', 'trunc', 'fix')})


@pytest.mark.parametrize('name', sorted(GRADIENT_INPUTS))
def test_unary_gradient(name):
    check_numeric_gradient(getattr(mx.nd, name), [GRADIENT_INPUTS[name]])


def test_unary_gradients_at_kinks_follow_mxnet():
    x = mx.nd.array([-1.0, 0.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.abs(x) + mx.nd.relu(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [-1, 0, 2])


# -------------------------------------------------------------------- binary
A = np.array([[1.0, -2.0, 3.0], [0.5, 2.5, -1.5]])
B = np.array([[2.0, 2.0, -1.0], [1.5, 0.5, 2.0]])
BINARY_REFERENCES = {
    'broadcast_add': np.add, 'broadcast_sub': np.subtract, 'broadcast_mul': np.multiply,
    'broadcast_div': np.divide, 'broadcast_maximum': np.maximum, 'broadcast_minimum': np.minimum,
    'broadcast_hypot': np.hypot, 'broadcast_mod': np.mod,
}


@pytest.mark.parametrize('name', sorted(BINARY_REFERENCES))
def test_broadcast_binary_matches_numpy(name):
    row = B[:1]
    out = getattr(mx.nd, name)(mx.nd.array(A), mx.nd.array(row))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out.asnumpy(), BINARY_REFERENCES[name](A, row).astype(np.float32), rtol=1e-6)


def test_same_shape_binary_rejects_mismatch():
    with pytest.raises(mx.base.MXNetError, match=r'elemwise_add|_plus'):
        mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))
    with pytest.raises(mx.base.MXNetError, match='broadcast_add'):
        mx.nd.broadcast_add(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))


def test_comparisons_return_input_dtype():
    out = mx.nd.broadcast_greater(mx.nd.array(A), mx.nd.array(B))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), (A > B).astype(np.float32))
    ints = mx.nd.broadcast_equal(mx.nd.array([1, 2], dtype='int32'), mx.nd.array([1, 3], dtype='int32'))
    assert ints.dtype == np.int32 and ints.asnumpy().tolist() == [1, 0]


def test_integer_division_truncates_and_mod_follows_divisor():
    a = mx.nd.array([7, -7], dtype='int32')
    b = mx.nd.array([2, 2], dtype='int32')
    assert mx.nd.broadcast_div(a, b).asnumpy().tolist() == [3, -3]
    assert mx.nd.broadcast_mod(a, mx.nd.array([-3, 3], dtype='int32')).asnumpy().tolist() == [-2, 2]


DIFFERENTIABLE_BINARY = ('broadcast_add', 'broadcast_sub', 'broadcast_mul', 'broadcast_div',
                         'broadcast_maximum', 'broadcast_minimum', 'broadcast_hypot', 'broadcast_power',
                         'elemwise_add', 'elemwise_mul')


@pytest.mark.parametrize('name', DIFFERENTIABLE_BINARY)
def test_binary_gradient(name):
    rhs = B if name.startswith('elemwise') else B[:1]
    lhs = np.abs(A) + 0.5 if name == 'broadcast_power' else A
    check_numeric_gradient(getattr(mx.nd, name), [lhs, rhs])


def test_maximum_gives_lhs_the_gradient_at_ties():
    x, y = mx.nd.array([1.0, 2.0]), mx.nd.array([1.0, 3.0])
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = mx.nd.broadcast_maximum(x, y)
    z.backward()
    assert x.grad.asnumpy().tolist() == [1, 0] and y.grad.asnumpy().tolist() == [0, 1]


SCALAR_OPS = ('_plus_scalar', '_minus_scalar', '_rminus_scalar', '_mul_scalar', '_div_scalar',
              '_rdiv_scalar', '_power_scalar', '_rpower_scalar', '_maximum_scalar', '_minimum_scalar',
              '_hypot_scalar')


@pytest.mark.parametrize('name', SCALAR_OPS)
def test_scalar_op_gradient(name):
    op = getattr(mx.nd._internal, name)
    check_numeric_gradient(lambda x: op(x, scalar=1.7), [np.abs(A) + 0.3])


def test_scalar_is_cast_to_integer_dtype():
    x = mx.nd.array([7, -7], dtype='int32')
    assert mx.nd._internal._plus_scalar(x, scalar=1.9).asnumpy().tolist() == [8, -6]


# ------------------------------------------------------------------ utilities
def test_clip_passes_gradient_at_bounds():
    x = mx.nd.array([-3.0, -1.0, 0.0, 2.0, 5.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.clip(x, -1, 2)
    y.backward()
    assert y.asnumpy().tolist() == [-1, -1, 0, 2, 2]
    assert x.grad.asnumpy().tolist() == [0, 1, 1, 1, 0]
    check_numeric_gradient(lambda v: mx.nd.clip(v, -1, 2), [np.array([-3.0, -0.5, 0.7, 4.0])])


def test_hard_sigmoid_and_smooth_l1():
    x = mx.nd.array([-3, -1, 0, 1, 4])
    np.testing.assert_allclose(mx.nd.hard_sigmoid(x).asnumpy(), [0, 0.3, 0.5, 0.7, 1], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.smooth_l1(mx.nd.array([-2, -0.5, 0, 0.3, 1.5]), scalar=1.0).asnumpy(),
                               [1.5, 0.125, 0, 0.045, 1.0], rtol=1e-6)
    inputs = [np.array([-2.7, -0.3, 0.2, 1.1, 3.5])]
    check_numeric_gradient(lambda v: mx.nd.hard_sigmoid(v, alpha=0.25, beta=0.25), inputs)
    check_numeric_gradient(lambda v: mx.nd.smooth_l1(v, scalar=2.0), inputs)


def test_add_n_cast_and_likes():
    arrays = [A, B, A * B]
    out = mx.nd.add_n(*[mx.nd.array(a) for a in arrays])
    np.testing.assert_allclose(out.asnumpy(), sum(arrays).astype(np.float32), rtol=1e-6)
    check_numeric_gradient(lambda *xs: mx.nd.add_n(*xs), arrays)
    assert mx.nd.cast(mx.nd.array([1.7]), dtype='int32').asnumpy().tolist() == [1]
    assert mx.nd.zeros_like(mx.nd.array(A)).shape == (2, 3)
    assert mx.nd.reshape_like(mx.nd.array(A), mx.nd.ones((3, 2))).shape == (3, 2)


@pytest.mark.parametrize('dtype, target, expected', [
    ('float32', 'float16', 'float16'), ('float16', 'float32', 'float32'),
    ('float64', 'float16', 'float64'), ('int32', 'float16', 'int32')])
def test_amp_cast_casts_only_half_and_single_precision(dtype, target, expected):
    # MXNet 1.9.1 leaves float64 and integer inputs of amp_cast as they are
    x = mx.nd.array([[1.5, -2.25]], dtype=dtype)
    y = mx.nd.amp_cast(x, dtype=target)
    assert y.dtype == np.dtype(expected)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy().astype(expected))
    assert mx.sym.amp_cast(mx.sym.var('x'), dtype=target).infer_type(x=dtype)[1] == [np.dtype(expected).type]
