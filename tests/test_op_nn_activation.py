"""Activations, softmax family and dropout.

Literal expectations were recorded from MXNet 1.9.1; others come from numpy references.
"""
import math

import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry
from neomx.test_utils import check_numeric_gradient

X = np.array([[-3.0, -1.0, -0.2, 0.1, 0.5, 2.0], [1.5, -0.7, 0.3, -2.5, 0.0, 4.0]], dtype='float32')
_erf = np.vectorize(math.erf)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape)


# ----------------------------------------------------------------- Activation
ACTIVATIONS = {'relu': lambda x: np.maximum(x, 0), 'sigmoid': lambda x: 1 / (1 + np.exp(-x)),
               'tanh': np.tanh, 'softrelu': lambda x: np.log1p(np.exp(x)),
               'softsign': lambda x: x / (1 + np.abs(x))}


@pytest.mark.parametrize('act_type', sorted(ACTIVATIONS))
def test_activation_values_and_gradient(act_type):
    out = mx.nd.Activation(mx.nd.array(X), act_type=act_type)
    assert out.dtype == np.float32 and out.shape == X.shape
    np.testing.assert_allclose(out.asnumpy(), ACTIVATIONS[act_type](X), rtol=1e-5, atol=1e-6)
    away_from_kink = X[np.abs(X) > 0.05]
    check_numeric_gradient(lambda x: mx.nd.Activation(x, act_type=act_type), [away_from_kink])


def test_activation_errors():
    with pytest.raises(mx.base.MXNetError, match="Activation.*'nope'"):
        mx.nd.Activation(mx.nd.ones((2,)), act_type='nope')
    with pytest.raises(mx.base.MXNetError, match='Activation.*floating point'):
        mx.nd.Activation(mx.nd.array([-1, 2], dtype='int32'), act_type='relu')


def test_relu_gradient_at_zero_is_zero():
    x = mx.nd.array([-1.0, 0.0, 1.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Activation(x, act_type='relu')
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 1])


# ------------------------------------------------------------------ LeakyReLU
SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772
LEAKY = {
    ('leaky', 0.1): lambda x: np.where(x > 0, x, 0.1 * x),
    ('elu', 0.5): lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1)),
    ('selu', 0.25): lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1)),
    ('gelu', 0.25): lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
}


@pytest.mark.parametrize('act_type, slope', sorted(LEAKY))
def test_leaky_relu_values_and_gradient(act_type, slope):
    out = mx.nd.LeakyReLU(mx.nd.array(X), act_type=act_type, slope=slope)
    np.testing.assert_allclose(out.asnumpy(), LEAKY[act_type, slope](X), rtol=1e-5, atol=1e-6)
    if act_type != 'selu':     # MXNet's selu gradient is not the derivative: see the next test
        check_numeric_gradient(lambda x: mx.nd.LeakyReLU(x, act_type=act_type, slope=slope),
                               [X[np.abs(X) > 0.05]])


def test_leaky_relu_default_is_leaky_with_slope_quarter():
    np.testing.assert_allclose(mx.nd.LeakyReLU(mx.nd.array([-2.0, 3.0])).asnumpy(), [-0.5, 3.0])


def test_selu_gradient_follows_mxnet():
    x = mx.nd.array([-2.0, -1.0, -0.5, -0.1, 0.5])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, act_type='selu')
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0.16085884, 0.590423, 1.0312682, 1.5823115, 1.050701],
                               rtol=1e-5)


def test_prelu_per_channel_and_scalar_gamma():
    x = mx.nd.array([[-2.0, 1.0], [3.0, -4.0]]).reshape((2, 2, 1))
    out = mx.nd.LeakyReLU(x, mx.nd.array([0.1, 0.5]), act_type='prelu')
    np.testing.assert_allclose(out.asnumpy().ravel(), [-0.2, 1.0, 3.0, -2.0])
    scalar = mx.nd.LeakyReLU(mx.nd.array([[-2.0, 1.0]]), mx.nd.array([0.3]), act_type='prelu')
    np.testing.assert_allclose(scalar.asnumpy(), [[-0.6, 1.0]])
    with pytest.raises(mx.base.MXNetError, match='LeakyReLU.*gamma'):
        mx.nd.LeakyReLU(mx.nd.ones((2, 2)), mx.nd.ones((3,)), act_type='prelu')
    spec = registry.get('LeakyReLU')
    assert spec.infer_args({'data': (2, 5, 3)}, spec.parse_attrs({'act_type': 'prelu'})) == {'gamma': (5,)}
    check_numeric_gradient(lambda d, g: mx.nd.LeakyReLU(d, g, act_type='prelu'),
                           [_rand(2, 3, 2), np.array([0.1, 0.2, 0.3])])


def test_rrelu_mean_slope_when_predicting_random_slopes_when_training():
    x = mx.nd.array([-4.0, -1.0, 2.0])
    out, mask = mx.nd.LeakyReLU(x, act_type='rrelu', lower_bound=0.1, upper_bound=0.3)
    np.testing.assert_allclose(out.asnumpy(), [-0.8, -0.2, 2.0], rtol=1e-6)
    np.testing.assert_array_equal(mask.asnumpy(), 0)
    with mx.autograd.record():
        out, slopes = mx.nd.LeakyReLU(mx.nd.full((200,), -1.0), act_type='rrelu', lower_bound=0.1,
                                      upper_bound=0.3)
    slopes = slopes.asnumpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.01
    np.testing.assert_allclose(out.asnumpy(), -slopes)


# -------------------------------------------------------------------- softmax
def test_softmax_family_values():
    x = mx.nd.array(X)
    np.testing.assert_allclose(mx.nd.softmax(x).asnumpy(), _softmax(X), rtol=1e-5)
    np.testing.assert_allclose(mx.nd.softmax(x, axis=0, temperature=2.0).asnumpy(), _softmax(X / 2, 0),
                               rtol=1e-5)
    np.testing.assert_allclose(mx.nd.log_softmax(x, temperature=0.5).asnumpy(), np.log(_softmax(X * 2)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mx.nd.softmin(x, axis=0).asnumpy(), _softmax(-X, 0), rtol=1e-5)
    wide = mx.nd.softmax(x, dtype='float64')
    assert wide.dtype == np.float64
    np.testing.assert_allclose(mx.nd.softmax(mx.nd.array([[1000.0, 1001.0]])).asnumpy(), [[0.26894143, 0.7310586]],
                               rtol=1e-6)


def test_softmax_use_length_mxnet_values():
    x = mx.nd.array([[1, 2, 3], [1, 1, 5]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.softmax(x, mx.nd.array([2, 1], dtype='int32'), use_length=True)
    y.backward(mx.nd.array([[1, 2, 3], [4, 5, 6]]))
    np.testing.assert_allclose(y.asnumpy(), [[0.26894143, 0.7310586, 0], [1, 0, 0]], rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), [[-0.19661194, 0.19661193, 0], [0, 0, 0]], rtol=1e-5, atol=1e-7)
    along_0 = mx.nd.softmax(mx.nd.array([[1, 2, 3], [1, 1, 5]]), mx.nd.array([2, 1, 0], dtype='int32'), axis=0,
                            use_length=True)
    np.testing.assert_allclose(along_0.asnumpy(), [[0.5, 1, 0], [0.5, 0, 0]])


def test_softmax_errors():
    x = mx.nd.array([[1, 2, 3], [1, 1, 5]])
    with pytest.raises(mx.base.MXNetError, match='softmax.*integer length'):
        mx.nd.softmax(x, mx.nd.array([2, 1]), use_length=True)
    with pytest.raises(mx.base.MXNetError, match='softmax.*length shape'):
        mx.nd.softmax(x, mx.nd.array([2, 1, 1], dtype='int32'), use_length=True)
    with pytest.raises(mx.base.MXNetError, match='softmax.*floating point'):
        mx.nd.softmax(x.astype('int32'))
    with pytest.raises(mx.base.MXNetError, match='log_softmax.*use_length'):
        mx.nd.log_softmax(x, use_length=True)


def test_softmax_family_gradients():
    x = _rand(2, 4)
    check_numeric_gradient(lambda d: mx.nd.softmax(d, temperature=1.5), [x])
    check_numeric_gradient(lambda d: mx.nd.log_softmax(d, axis=0), [x])
    check_numeric_gradient(lambda d: mx.nd.softmin(d), [x])
    check_numeric_gradient(lambda d: mx.nd.softmax(d, mx.nd.array([3, 1], dtype='int32'), use_length=True), [x])
    check_numeric_gradient(lambda d: mx.nd.SoftmaxActivation(d, mode='channel'), [_rand(2, 3, 2)])


def test_softmax_activation_modes():
    x = np.arange(24).reshape(2, 3, 4) / 5
    instance = mx.nd.SoftmaxActivation(mx.nd.array(x))
    np.testing.assert_allclose(instance.asnumpy(), _softmax(x, -1), rtol=1e-5)
    channel = mx.nd.SoftmaxActivation(mx.nd.array(x), mode='channel')
    np.testing.assert_allclose(channel.asnumpy(), _softmax(x, 1), rtol=1e-5)
    with pytest.raises(mx.base.MXNetError, match='SoftmaxActivation.*3 dims'):
        mx.nd.SoftmaxActivation(mx.nd.array([1, 2, 3]), mode='channel')


# -------------------------------------------------------------------- Dropout
def test_dropout_of_everything_is_nan_as_in_mxnet():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=1.0)
    y.backward()
    assert np.isnan(y.asnumpy()).all() and np.isnan(x.grad.asnumpy()).all()
    assert np.isnan(mx.nd.Dropout(x, p=1.0, mode='always').asnumpy()).all()


def test_executor_backward_after_inference_pass_sees_the_same_dropout_mask():
    exe = mx.sym.Dropout(mx.sym.var('data'), p=0.5, mode='always').simple_bind(ctx=mx.cpu(), data=(20, 20))
    exe.arg_arrays[0][:] = 1
    for _ in range(2):
        out = exe.forward(is_train=False)[0].asnumpy()
        exe.backward([mx.nd.ones((20, 20))], is_train=False)
        assert 0 < (out == 0).sum() < out.size
        np.testing.assert_array_equal(exe.grad_arrays[0].asnumpy(), out)


def test_dropout_is_a_copy_outside_training():
    x = mx.nd.array(X)
    out = mx.nd.Dropout(x, p=0.5)
    np.testing.assert_array_equal(out.asnumpy(), X)
    out[:] = 0                                          # a copy: the input is untouched
    np.testing.assert_array_equal(x.asnumpy(), X)
    with mx.autograd.record(train_mode=False):
        np.testing.assert_array_equal(mx.nd.Dropout(x).asnumpy(), X)


def test_dropout_training_and_always_modes_scale_kept_values():
    x = mx.nd.ones((100, 50))
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.25).asnumpy()
    assert np.allclose(y[y != 0], 1 / 0.75) and 0.2 < (y == 0).mean() < 0.3
    always = mx.nd.Dropout(x, p=0.5, mode='always').asnumpy()
    assert set(np.unique(always)) == {0.0, 2.0}
    shared = mx.nd.Dropout(x, p=0.5, mode='always', axes=(1,)).asnumpy()
    assert np.all(shared == shared[:, :1])                 # one mask value per row
    np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.0, mode='always').asnumpy(), 1)


def test_dropout_gradient_is_the_scaled_mask():
    x = mx.nd.ones((20, 10))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.5)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), y.asnumpy())
    check_numeric_gradient(lambda d: mx.nd.Dropout(d, p=0.5), [_rand(3, 4)], use_forward_train=False)


def test_prelu_gamma_over_leading_dims_broadcasts():
    # values from MXNet 1.9.1: a (N, C) gamma scales each (sample, channel) of (N, C, H, W) data
    x = mx.nd.array(np.arange(-12, 12).reshape(2, 3, 2, 2))
    g = mx.nd.array(np.arange(6).reshape(2, 3) / 10)
    np.testing.assert_allclose(mx.nd.LeakyReLU(x, g, act_type='prelu').asnumpy().ravel()[:12],
                               [0, 0, 0, 0, -.8, -.7, -.6, -.5, -.8, -.6, -.4, -.2], rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match='cannot broadcast gamma'):
        mx.nd.LeakyReLU(x, mx.nd.ones((3, 2)), act_type='prelu')
