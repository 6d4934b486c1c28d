"""gluon.nn and gluon.contrib.nn layers: forward values against numpy references, gradients
against finite differences, containers."""
import math

import numpy as np
import pytest

import neomx as mx
from neomx.gluon import contrib, nn
from neomx.test_utils import check_numeric_gradient

RNG = np.random.RandomState(0)


def _r(*shape):
    return RNG.uniform(-1, 1, size=shape)


def _forward(layer, x, **params):
    """Initialize ``layer``, set its parameters from numpy, run it on ``x`` (float32)."""
    layer.initialize()
    layer(mx.nd.array(x))                  # completes deferred shapes
    for key, value in params.items():
        getattr(layer, key).set_data(mx.nd.array(value))
    return layer(mx.nd.array(x)).asnumpy()


def _check_grad(layer, x, *params, train=False, grad_nodes=None):
    """Finite-difference check of ``hybrid_forward`` w.r.t. the input and the parameters."""
    names = list(layer._reg_params)

    def fn(data, *values):
        with (mx.autograd.train_mode() if train else mx.autograd.predict_mode()):
            return layer.hybrid_forward(mx.nd, data, **dict(zip(names, values)))
    check_numeric_gradient(fn, [x] + list(params), grad_nodes=grad_nodes)


# ---------------------------------------------------------------- references
def _np_conv(x, w, b, stride, pad, dilate, groups=1):
    """Channel-first N-D cross-correlation."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    kernel = w.shape[2:]
    out_sp = [(x.shape[2 + i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], w.shape[0]) + tuple(out_sp))
    c_per, f_per = x.shape[1] // groups, w.shape[0] // groups
    for pos in np.ndindex(*out_sp):
        for kpos in np.ndindex(*kernel):
            idx = tuple(pos[i] * stride[i] + kpos[i] * dilate[i] for i in range(nd))
            patch = x[(slice(None), slice(None)) + idx]
            for g in range(groups):
                filt = w[(slice(g * f_per, (g + 1) * f_per), slice(None)) + kpos]
                out[(slice(None), slice(g * f_per, (g + 1) * f_per)) + pos] += \
                    patch[:, g * c_per:(g + 1) * c_per] @ filt.T
    return out if b is None else out + b.reshape((1, -1) + (1,) * nd)


def _np_conv_transpose(x, w, b, stride, pad, adj):
    """Channel-first N-D transposed convolution (weight ``(in, out, *kernel)``)."""
    nd = x.ndim - 2
    kernel, in_sp = w.shape[2:], x.shape[2:]
    full = [(in_sp[i] - 1) * stride[i] + kernel[i] + adj[i] for i in range(nd)]
    out = np.zeros((x.shape[0], w.shape[1]) + tuple(full))
    for pos in np.ndindex(*in_sp):
        for kpos in np.ndindex(*kernel):
            idx = tuple(pos[i] * stride[i] + kpos[i] for i in range(nd))
            out[(slice(None), slice(None)) + idx] += x[(slice(None), slice(None)) + pos] @ \
                w[(slice(None), slice(None)) + kpos]
    crop = tuple(slice(pad[i], full[i] - pad[i]) for i in range(nd))
    out = out[(slice(None), slice(None)) + crop]
    return out + b.reshape((1, -1) + (1,) * nd)


def _np_pool(x, kernel, stride, pad, pool_type, ceil_mode=False, count_include_pad=True):
    nd = x.ndim - 2
    rounding = math.ceil if ceil_mode else math.floor
    out_sp = [int(rounding((x.shape[2 + i] + 2 * pad[i] - kernel[i]) / stride[i])) + 1
              for i in range(nd)]
    fill = -np.inf if pool_type == 'max' else 0.0
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p + kernel[i]) for i, p in enumerate(pad)],
                constant_values=fill)
    inside = np.pad(np.ones(x.shape[2:]), [(p, p + kernel[i]) for i, p in enumerate(pad)])
    out = np.zeros(x.shape[:2] + tuple(out_sp))
    for pos in np.ndindex(*out_sp):
        window = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + kernel[i]) for i in range(nd))
        patch = xp[(slice(None), slice(None)) + window].reshape(x.shape[:2] + (-1,))
        if pool_type == 'max':
            out[(slice(None), slice(None)) + pos] = patch.max(-1)
        else:
            count = np.prod(kernel) if count_include_pad else inside[window].sum()
            out[(slice(None), slice(None)) + pos] = patch.sum(-1) / count
    return out


def _normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def _channel(v, ndim, axis=1):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v).reshape(shape)


_SELU_SCALE, _SELU_ALPHA = 1.0507009873554805, 1.6732632423543772
_ACTIVATIONS = {
    'relu': lambda x: np.maximum(x, 0), 'sigmoid': lambda x: 1 / (1 + np.exp(-x)),
    'tanh': np.tanh, 'softrelu': lambda x: np.log1p(np.exp(x)),
    'softsign': lambda x: x / (1 + np.abs(x)),
}


# ------------------------------------------------------------------- Dense
def test_dense_forward_and_gradient():
    x, w, b = _r(2, 4), _r(3, 4), _r(3)
    out = _forward(nn.Dense(3, in_units=4), x, weight=w, bias=b)
    np.testing.assert_allclose(out, x @ w.T + b, rtol=1e-5, atol=1e-6)
    _check_grad(nn.Dense(3, in_units=4, dtype='float64'), x, w, b)


def test_dense_flatten_activation_no_bias():
    x, w = _r(2, 3, 2), _r(2, 6)
    d = nn.Dense(2, activation='relu', use_bias=False)
    out = _forward(d, x, weight=w)
    np.testing.assert_allclose(out, np.maximum(x.reshape(2, 6) @ w.T, 0), rtol=1e-5, atol=1e-6)
    assert d.bias is None and d.weight.shape == (2, 6) and d.act.prefix == d.prefix + 'relu_'
    keep = nn.Dense(2, flatten=False)
    out = _forward(keep, x, weight=w[:, :2], bias=np.zeros(2))
    np.testing.assert_allclose(out, x @ w[:, :2].T, rtol=1e-5, atol=1e-6)
    assert out.shape == (2, 3, 2)


def test_dense_float64_dtype():
    d = nn.Dense(2, in_units=2, dtype='float64')
    d.initialize(mx.init.One())
    assert d(mx.nd.array([[1, 2]], dtype='float64')).dtype == np.float64


# ----------------------------------------------------------- convolutions
@pytest.mark.parametrize('layer, x_shape, kw', [
    (lambda: nn.Conv1D(3, 3, strides=2, padding=1, in_channels=2), (2, 2, 7),
     dict(stride=(2,), pad=(1,), dilate=(1,))),
    (lambda: nn.Conv2D(2, (3, 2), strides=(2, 1), dilation=(1, 2), padding=(1, 0), in_channels=3),
     (1, 3, 5, 6), dict(stride=(2, 1), pad=(1, 0), dilate=(1, 2))),
    (lambda: nn.Conv3D(2, 2, in_channels=1), (1, 1, 3, 3, 3),
     dict(stride=(1,) * 3, pad=(0,) * 3, dilate=(1,) * 3)),
])
def test_conv_forward(layer, x_shape, kw):
    conv = layer()
    x = _r(*x_shape)
    w, b = _r(*conv.weight.shape), _r(*conv.bias.shape)
    out = _forward(conv, x, weight=w, bias=b)
    np.testing.assert_allclose(out, _np_conv(x, w, b, **kw), rtol=1e-4, atol=1e-5)


def test_conv_groups_no_bias_and_gradient():
    conv = nn.Conv2D(4, kernel_size=1, groups=2, use_bias=False, in_channels=4)
    assert conv.weight.shape == (4, 2, 1, 1)
    x, w = _r(1, 4, 2, 2), _r(4, 2, 1, 1)
    out = _forward(conv, x, weight=w)
    np.testing.assert_allclose(out, _np_conv(x, w, None, (1, 1), (0, 0), (1, 1), groups=2),
                               rtol=1e-5, atol=1e-6)
    grad_conv = nn.Conv2D(2, 2, padding=1, in_channels=2)
    _check_grad(grad_conv, _r(1, 2, 3, 3), _r(2, 2, 2, 2), _r(2))


@pytest.mark.parametrize('layer, x_shape, kw', [
    (lambda: nn.Conv2DTranspose(2, 3, strides=2, padding=1, output_padding=1, in_channels=3),
     (1, 3, 2, 2), dict(stride=(2, 2), pad=(1, 1), adj=(1, 1))),
    (lambda: nn.Conv1DTranspose(2, 2, strides=2, in_channels=2), (1, 2, 3),
     dict(stride=(2,), pad=(0,), adj=(0,))),
    (lambda: nn.Conv3DTranspose(1, 2, in_channels=2), (1, 2, 2, 2, 2),
     dict(stride=(1,) * 3, pad=(0,) * 3, adj=(0,) * 3)),
])
def test_conv_transpose_forward(layer, x_shape, kw):
    conv = layer()
    x = _r(*x_shape)
    assert conv.weight.shape[:2] == (x_shape[1], conv._channels)
    w, b = _r(*conv.weight.shape), _r(*conv.bias.shape)
    out = _forward(conv, x, weight=w, bias=b)
    np.testing.assert_allclose(out, _np_conv_transpose(x, w, b, **kw), rtol=1e-4, atol=1e-5)


def test_conv_transpose_gradient():
    _check_grad(nn.Conv1DTranspose(2, 2, strides=2, in_channels=2), _r(1, 2, 3), _r(2, 2, 2), _r(2))


def test_conv_reprs_and_wrong_channels():
    assert repr(nn.Conv2D(3, (3, 2), in_channels=4, padding=1, dilation=2, use_bias=False,
                          activation='relu')) == \
        'Conv2D(4 -> 3, kernel_size=(3, 2), stride=(1, 1), padding=(1, 1), dilation=(2, 2), ' \
        'bias=False, Activation(relu))'
    assert repr(nn.Conv1D(2, 3, groups=2)) == 'Conv1D(None -> 2, kernel_size=(3,), stride=(1,), groups=2)'
    conv = nn.Conv2D(2, 3, in_channels=2)
    conv.initialize()
    with pytest.raises(mx.base.MXNetError, match='conv'):
        conv(mx.nd.ones((1, 3, 4, 4)))
    with pytest.raises(AssertionError):
        nn.Conv2D(2, 3, layout='NCW')


# ----------------------------------------------------------------- pooling
def test_max_and_avg_pooling_2d():
    x = _r(1, 2, 5, 5)
    cases = [(nn.MaxPool2D(2), ((2, 2), (2, 2), (0, 0), 'max')),
             (nn.MaxPool2D(2, ceil_mode=True), ((2, 2), (2, 2), (0, 0), 'max', True)),
             (nn.MaxPool2D(3, strides=2, padding=1), ((3, 3), (2, 2), (1, 1), 'max')),
             (nn.AvgPool2D(2, strides=2, padding=1), ((2, 2), (2, 2), (1, 1), 'avg')),
             (nn.AvgPool2D(2, strides=2, padding=1, count_include_pad=False),
              ((2, 2), (2, 2), (1, 1), 'avg', False, False))]
    for layer, args in cases:
        np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(), _np_pool(x, *args),
                                   rtol=1e-5, atol=1e-6, err_msg=repr(layer))


def test_pooling_1d_3d_and_global():
    x1, x3, x2 = _r(1, 2, 6), _r(1, 1, 4, 4, 4), _r(2, 3, 4, 4)
    np.testing.assert_allclose(nn.MaxPool1D(2)(mx.nd.array(x1)).asnumpy(),
                               _np_pool(x1, (2,), (2,), (0,), 'max'), rtol=1e-5)
    np.testing.assert_allclose(nn.AvgPool1D(3, strides=1)(mx.nd.array(x1)).asnumpy(),
                               _np_pool(x1, (3,), (1,), (0,), 'avg'), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.AvgPool3D(2)(mx.nd.array(x3)).asnumpy(),
                               _np_pool(x3, (2,) * 3, (2,) * 3, (0,) * 3, 'avg'), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.MaxPool3D(2)(mx.nd.array(x3)).asnumpy(),
                               _np_pool(x3, (2,) * 3, (2,) * 3, (0,) * 3, 'max'), rtol=1e-5)
    np.testing.assert_allclose(nn.GlobalAvgPool2D()(mx.nd.array(x2)).asnumpy(),
                               x2.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.GlobalMaxPool2D()(mx.nd.array(x2)).asnumpy(),
                               x2.max(axis=(2, 3), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(nn.GlobalAvgPool1D()(mx.nd.array(x1)).asnumpy(),
                               x1.mean(axis=2, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.GlobalMaxPool3D()(mx.nd.array(x3)).asnumpy(),
                               x3.max(axis=(2, 3, 4), keepdims=True), rtol=1e-5)
    assert nn.GlobalAvgPool3D()(mx.nd.array(x3)).shape == (1, 1, 1, 1, 1)
    assert nn.GlobalMaxPool1D()(mx.nd.array(x1)).shape == (1, 2, 1)


def test_pooling_gradients_and_repr():
    _check_grad(nn.MaxPool2D(2), _r(1, 1, 4, 4))
    _check_grad(nn.AvgPool1D(2, padding=1), _r(1, 2, 5))
    assert repr(nn.MaxPool2D()) == ('MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), '
                                    'ceil_mode=False, global_pool=False, pool_type=max, layout=NCHW)')


# ------------------------------------------------------------ normalization
def _batchnorm(**kwargs):
    bn = nn.BatchNorm(in_channels=3, **kwargs)
    bn.initialize()
    gamma, beta = np.array([1.0, 2.0, 0.5]), np.array([0.0, 0.1, -0.1])
    mean, var = np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, 2.0])
    for p, v in zip((bn.gamma, bn.beta, bn.running_mean, bn.running_var), (gamma, beta, mean, var)):
        p.set_data(mx.nd.array(v))
    return bn, gamma, beta, mean, var


def test_batchnorm_predict_uses_running_statistics():
    bn, gamma, beta, mean, var = _batchnorm()
    x = _r(2, 3, 2, 2)
    expected = _channel(gamma, 4) * (x - _channel(mean, 4)) / np.sqrt(_channel(var, 4) + 1e-5) + \
        _channel(beta, 4)
    np.testing.assert_allclose(bn(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_batchnorm_training_updates_running_statistics():
    bn, gamma, beta, mean, var = _batchnorm(momentum=0.5)
    x = _r(4, 3, 2)
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = bn(xa)
    y.backward()
    expected = _channel(gamma, 3) * _normalize(x, (0, 2), 1e-5) + _channel(beta, 3)
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), 0.5 * mean + 0.5 * x.mean((0, 2)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(), 0.5 * var + 0.5 * x.var((0, 2)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.beta.grad().asnumpy(), [8, 8, 8], rtol=1e-6)


def test_batchnorm_gradient_in_training():
    bn = nn.BatchNorm(in_channels=2)
    bn.initialize()
    mean, var = np.zeros(2), np.ones(2)
    _check_grad(bn, _r(3, 2, 2), _r(2) + 1.5, _r(2), mean, var, train=True, grad_nodes=[0, 1, 2])


def test_batchnorm_options_and_repr():
    bn = nn.BatchNorm(axis=-1, center=False, scale=False, in_channels=2)
    bn.initialize()
    bn.running_mean.set_data(mx.nd.array([1.0, -1.0]))
    bn.running_var.set_data(mx.nd.array([4.0, 0.25]))
    x = _r(2, 3, 2)
    np.testing.assert_allclose(bn(mx.nd.array(x)).asnumpy(),
                               (x - [1.0, -1.0]) / np.sqrt(np.array([4.0, 0.25]) + 1e-5), rtol=1e-5)
    assert (bn.gamma.grad_req, bn.beta.grad_req) == ('null', 'null')
    frozen, _, _, mean, _ = _batchnorm(use_global_stats=True)
    with mx.autograd.record():
        frozen(mx.nd.array(_r(2, 3)))
    np.testing.assert_allclose(frozen.running_mean.data().asnumpy(), mean, rtol=1e-6)
    assert repr(nn.BatchNorm(in_channels=2)) == ('BatchNorm(axis=1, eps=1e-05, momentum=0.9, '
                                                 'fix_gamma=False, use_global_stats=False, in_channels=2)')
    half = nn.BatchNorm(in_channels=2)
    half.initialize()
    half.cast('float16')
    assert half.running_var.data().dtype == np.float32


def test_layernorm_instancenorm_groupnorm_forward():
    x = _r(2, 4, 3)
    gamma, beta = _r(3), _r(3)
    out = _forward(nn.LayerNorm(), x, gamma=gamma, beta=beta)
    np.testing.assert_allclose(out, gamma * _normalize(x, (2,), 1e-5) + beta, rtol=1e-4, atol=1e-5)
    g1, b1 = _r(4), _r(4)
    ln1 = nn.LayerNorm(axis=1, epsilon=1e-2)
    np.testing.assert_allclose(_forward(ln1, x, gamma=g1, beta=b1),
                               _channel(g1, 3) * _normalize(x, (1,), 1e-2) + _channel(b1, 3),
                               rtol=1e-4, atol=1e-5)
    out = _forward(nn.InstanceNorm(), x, gamma=g1, beta=b1)
    np.testing.assert_allclose(out, _channel(g1, 3) * _normalize(x, (2,), 1e-5) + _channel(b1, 3),
                               rtol=1e-4, atol=1e-5)
    g2, b2 = _r(2), _r(2)
    gn = nn.GroupNorm(num_groups=2)
    assert gn.gamma.shape == (2,)
    grouped = _normalize(x.reshape(2, 2, -1), (2,), 1e-5) * g2[:, None] + b2[:, None]
    np.testing.assert_allclose(_forward(gn, x, gamma=g2, beta=b2), grouped.reshape(x.shape),
                               rtol=1e-4, atol=1e-5)


def test_instancenorm_on_last_axis():
    x, gamma, beta = _r(2, 3, 4), _r(4), _r(4)
    out = _forward(nn.InstanceNorm(axis=2), x, gamma=gamma, beta=beta)
    np.testing.assert_allclose(out, gamma * _normalize(x, (1,), 1e-5) + beta, rtol=1e-4, atol=1e-5)


def test_norm_gradients():
    x = _r(2, 3, 2)
    _check_grad(nn.LayerNorm(in_channels=2), x, _r(2), _r(2))
    _check_grad(nn.InstanceNorm(in_channels=3), x, _r(3), _r(3))


# -------------------------------------------------------------- activations
@pytest.mark.parametrize('act_type', sorted(_ACTIVATIONS))
def test_activation_layer(act_type):
    x = np.array([[-2.0, -0.5, 0.1, 0.5, 2.0]])
    np.testing.assert_allclose(nn.Activation(act_type)(mx.nd.array(x)).asnumpy(),
                               _ACTIVATIONS[act_type](x), rtol=1e-5, atol=1e-6)
    _check_grad(nn.Activation(act_type), x)


def test_leaky_family_forward_and_gradients():
    x = np.array([[-2.0, -0.5, 0.1, 0.5, 2.0]])
    erf = np.vectorize(math.erf)
    expected = {
        nn.LeakyReLU(0.1): np.where(x > 0, x, 0.1 * x),
        nn.ELU(alpha=0.5): np.where(x > 0, x, 0.5 * np.expm1(x)),
        nn.Swish(beta=2.0): x / (1 + np.exp(-2 * x)),
        nn.GELU(): 0.5 * x * (1 + erf(x / math.sqrt(2))),
    }
    for layer, ref in expected.items():
        np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(), ref, rtol=1e-5, atol=1e-6,
                                   err_msg=type(layer).__name__)
        _check_grad(layer, x)
    with pytest.raises(AssertionError, match='no less than 0'):
        nn.LeakyReLU(-1)


def test_selu_forward_and_mxnet_gradient():
    x = mx.nd.array([-2.0, -0.5, 0.1, 0.5, 2.0], dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        y = nn.SELU()(x)
    y.backward()
    xs = x.asnumpy()
    np.testing.assert_allclose(y.asnumpy(), _SELU_SCALE * np.where(xs > 0, xs, _SELU_ALPHA * np.expm1(xs)))
    # MXNet 1.9.1 differentiates SELU as scale * (y + alpha) below 0; recorded from it:
    np.testing.assert_allclose(x.grad.asnumpy(), [0.16085888, 1.03126831, 1.05070102, 1.05070102,
                                                  1.05070102], rtol=1e-6)
    assert repr(nn.LeakyReLU(0.1)) == 'LeakyReLU(0.1)' and repr(nn.Activation('relu')) == 'Activation(relu)'


def test_prelu():
    p = nn.PReLU()
    p.initialize()
    x = np.array([[-2.0, 1.0], [3.0, -4.0]])
    np.testing.assert_allclose(p(mx.nd.array(x)).asnumpy(), np.where(x > 0, x, 0.25 * x))
    per_channel = nn.PReLU(in_channels=2)
    _check_grad(per_channel, _r(3, 2), np.array([0.3, 0.6]))


# ------------------------------------------------------ other basic layers
def test_dropout_predict_identity_and_training_mask():
    x = mx.nd.ones((40, 50))
    d = nn.Dropout(0.5)
    np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())
    x.attach_grad()
    with mx.autograd.record():
        y = d(x)
    y.backward()
    out = y.asnumpy()
    assert np.isin(out, [0.0, 2.0]).all() and 0.4 < (out == 0).mean() < 0.6
    np.testing.assert_array_equal(x.grad.asnumpy(), out)       # gradient = mask * 2
    with mx.autograd.train_mode():
        shared = nn.Dropout(0.5, axes=(1,))(x).asnumpy()
    assert (shared == shared[:, :1]).all()                      # one mask value per row
    assert repr(nn.Dropout(0.3)) == 'Dropout(p = 0.3, axes=())'


def test_embedding_forward_and_gradient():
    e = nn.Embedding(5, 3)
    w = _r(5, 3)
    out = _forward(e, np.array([[0, 4, 1]]), weight=w)
    np.testing.assert_allclose(out, w[[[0, 4, 1]]], rtol=1e-6)
    assert repr(e) == 'Embedding(5 -> 3, float32)'
    _check_grad(nn.Embedding(4, 2), np.array([1.0, 3.0, 1.0]), _r(4, 2), grad_nodes=[1])


def test_flatten_lambda_and_reflection_pad():
    x = _r(2, 3, 4)
    np.testing.assert_allclose(nn.Flatten()(mx.nd.array(x)).asnumpy(), x.reshape(2, 12), rtol=1e-6)
    v = mx.nd.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(nn.Lambda(lambda a: a * 2 + 1)(v).asnumpy(), [-1, 2, 5])
    np.testing.assert_allclose(nn.Lambda('tanh')(v).asnumpy(), np.tanh([-1.0, 0.5, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(nn.HybridLambda(lambda F, a: F.relu(a) * 3)(v).asnumpy(), [0, 1.5, 6])
    np.testing.assert_allclose(nn.HybridLambda('sigmoid')(v).asnumpy(),
                               _ACTIVATIONS['sigmoid'](np.array([-1.0, 0.5, 2.0])), rtol=1e-6)
    assert repr(nn.Lambda('tanh')) == 'Lambda(tanh)'
    with pytest.raises(AssertionError):
        nn.Lambda('no_such_function')
    with pytest.raises(ValueError, match='Unrecognized function'):
        nn.HybridLambda(3)
    img = np.arange(9.0).reshape(1, 1, 3, 3)
    np.testing.assert_array_equal(nn.ReflectionPad2D(1)(mx.nd.array(img)).asnumpy(),
                                  np.pad(img, [(0, 0), (0, 0), (1, 1), (1, 1)], mode='reflect'))
    _check_grad(nn.ReflectionPad2D(1), _r(1, 1, 3, 3))


# -------------------------------------------------------------- containers
def test_sequential_indexing_slicing_and_forward():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=5, activation='tanh'), nn.Dense(2, in_units=4))
    net.initialize()
    assert len(net) == 2 and type(net[-1]) is nn.Dense
    head = net[:1]
    assert type(head) is nn.HybridSequential and len(head) == 1 and head[0] is net[0]
    x = _r(3, 5)
    w0, b0, w1, b1 = (p.data().asnumpy().astype(np.float64) for p in net.collect_params().values())
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(),
                               np.tanh(x @ w0.T + b0) @ w1.T + b1, rtol=1e-4, atol=1e-5)
    plain = nn.Sequential()
    plain.add(nn.Lambda(lambda a: (a, a * 2)), nn.Lambda(lambda a, b: a + b))
    np.testing.assert_array_equal(plain(mx.nd.array([1.0])).asnumpy(), [3.0])
    assert repr(plain).startswith('Sequential(\n  (0): Lambda(<lambda>)')
    with pytest.warns(UserWarning, match='Consider using HybridSequential'):
        seq = nn.Sequential()
        seq.add(nn.Dense(1))
        seq.hybridize()


def test_contrib_concurrent_identity_syncbatchnorm():
    cnn = contrib.nn
    net = cnn.HybridConcurrent(axis=1)
    net.add(nn.Dense(2, in_units=3), cnn.Identity(), nn.HybridLambda(lambda F, x: x * 10))
    net.initialize(mx.init.One())
    np.testing.assert_array_equal(net(mx.nd.array([[1, 2, 3]])).asnumpy(),
                                  [[6, 6, 1, 2, 3, 10, 20, 30]])
    plain = cnn.Concurrent(axis=0)
    plain.add(nn.Lambda('negative'), cnn.Identity())
    np.testing.assert_array_equal(plain(mx.nd.array([[1, 2]])).asnumpy(), [[-1, -2], [1, 2]])
    sync = cnn.SyncBatchNorm(in_channels=3, num_devices=2)
    assert repr(sync) == ("SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats="
                          "False, ndev=2, key='%s', in_channels=3)" % sync.prefix)
    sync.initialize()
    x = mx.nd.array(_r(4, 3, 2))
    with mx.autograd.record():
        y = sync(x)
    np.testing.assert_allclose(y.asnumpy(), _normalize(x.asnumpy(), (0, 2), 1e-5), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------- contrib.nn extras
def test_pixel_shuffle_layers_match_mxnet_and_hybridize():
    cnn = contrib.nn
    x2 = mx.nd.arange(2 * 8 * 2 * 3).reshape((2, 8, 2, 3))
    # recorded from MXNet 1.9.1
    np.testing.assert_array_equal(cnn.PixelShuffle2D((2, 2))(x2)[0, 0].asnumpy(),
                                  [[0, 6, 1, 7, 2, 8], [12, 18, 13, 19, 14, 20],
                                   [3, 9, 4, 10, 5, 11], [15, 21, 16, 22, 17, 23]])
    np.testing.assert_array_equal(cnn.PixelShuffle1D(2)(mx.nd.arange(24).reshape((2, 4, 3)))[0].asnumpy(),
                                  [[0, 3, 1, 4, 2, 5], [6, 9, 7, 10, 8, 11]])
    y3 = cnn.PixelShuffle3D((2, 1, 2))(mx.nd.arange(32).reshape((1, 8, 1, 2, 2)))
    assert y3.shape == (1, 2, 2, 2, 4)
    np.testing.assert_array_equal(y3[0, 0].asnumpy().ravel(), [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15])
    assert [repr(b) for b in (cnn.PixelShuffle1D(2), cnn.PixelShuffle2D(2), cnn.PixelShuffle3D(2))] == [
        'PixelShuffle1D(2)', 'PixelShuffle2D((2, 2))', 'PixelShuffle3D((2, 2, 2))']
    x3 = mx.nd.array(np.random.RandomState(0).uniform(size=(2, 8, 2, 3, 2)))
    for block, x in ((cnn.PixelShuffle2D((2, 2)), x2), (cnn.PixelShuffle3D(2), x3)):
        want = block(x).asnumpy()
        block.hybridize()
        np.testing.assert_array_equal(block(x).asnumpy(), want)
    check_numeric_gradient(lambda x: cnn.PixelShuffle2D((2, 1))(x), [np.random.rand(1, 4, 2, 3)])


def test_sparse_embedding_is_a_dense_embedding_with_row_sparse_declarations():
    layer = contrib.nn.SparseEmbedding(5, 3, weight_initializer=mx.init.Constant(0.5))
    layer.initialize()
    assert repr(layer) == 'SparseEmbedding(5 -> 3, float32)'
    assert layer.weight.stype == 'row_sparse' and layer.weight.name.endswith('_weight')
    with mx.autograd.record():
        out = layer(mx.nd.array([[1, 2], [2, 4]]))
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2, 3), 0.5))
    np.testing.assert_array_equal(layer.weight.grad().asnumpy().sum(axis=1), [0, 3, 6, 0, 3])
