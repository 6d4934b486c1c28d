"""Normalisation operators: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN."""
import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry
from neomx.test_utils import check_numeric_gradient


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype('float32')


def _normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def _channel(v, ndim, axis=1):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v, dtype='float32').reshape(shape)


# ----------------------------------------------------------------- BatchNorm
def _bn_inputs():
    return (mx.nd.array(_rand(2, 3, 2, 2)), mx.nd.array([2., 3., 4.]), mx.nd.array([.1, .2, .3]),
            mx.nd.array([.1, -.1, 0.]), mx.nd.array([1., .5, 2.]))


def test_batchnorm_predict_uses_moving_stats():
    x, gamma, beta, mean, var = _bn_inputs()
    out, out_mean, inv_std = mx.nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False, eps=1e-5,
                                             output_mean_var=True)
    expect = ((x.asnumpy() - _channel(mean.asnumpy(), 4)) / np.sqrt(_channel(var.asnumpy(), 4) + 1e-5)
              * _channel([2, 3, 4], 4) + _channel([.1, .2, .3], 4))
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_mean.asnumpy(), mean.asnumpy())
    # MXNet's 'var' output is the inverse standard deviation
    np.testing.assert_allclose(inv_std.asnumpy(), 1 / np.sqrt(var.asnumpy() + 1e-5), rtol=1e-6)


def test_batchnorm_fix_gamma_writes_ones_into_gamma():
    x, gamma, beta, mean, var = _bn_inputs()
    out = mx.nd.BatchNorm(x, gamma, beta, mean, var)
    assert out.shape == x.shape and out.dtype == np.float32
    np.testing.assert_array_equal(gamma.asnumpy(), [1, 1, 1])
    expect = (x.asnumpy() - _channel(mean.asnumpy(), 4)) / np.sqrt(_channel(var.asnumpy(), 4) + 1e-3)
    np.testing.assert_allclose(out.asnumpy(), expect + _channel([.1, .2, .3], 4), rtol=1e-5, atol=1e-6)


def _bn_train(x_np, **kwargs):
    x = mx.nd.array(x_np)
    gamma, beta = mx.nd.array([1.5, .5]), mx.nd.array([0., 1.])
    gamma.attach_grad()
    x.attach_grad()
    mean, var = mx.nd.zeros((2,)), mx.nd.ones((2,))
    with mx.autograd.record(train_mode=True):
        out = mx.nd.BatchNorm(x, gamma, beta, mean, var, momentum=0.8, eps=1e-5, **kwargs)
    return x, gamma, out, mean, var


def test_batchnorm_training_batch_stats_and_update_in_backward():
    x_np = _rand(4, 2, 3)
    x, _, out, mean, var = _bn_train(x_np, fix_gamma=False)
    expect = _normalize(x_np, (0, 2), 1e-5) * _channel([1.5, .5], 3) + _channel([0, 1], 3)
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mean.asnumpy(), [0, 0])       # forward leaves them alone
    np.testing.assert_array_equal(var.asnumpy(), [1, 1])
    out.backward()
    np.testing.assert_allclose(mean.asnumpy(), 0.2 * x_np.mean(axis=(0, 2)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(var.asnumpy(), 0.8 + 0.2 * x_np.var(axis=(0, 2)), rtol=1e-5)
    assert x.grad.shape == x.shape


def test_batchnorm_fix_gamma_gradient_is_zero():
    _, gamma, out, _, _ = _bn_train(_rand(4, 2, 3))
    gamma.grad[:] = 7
    out.backward(mx.nd.array(_rand(4, 2, 3, seed=1)))
    np.testing.assert_array_equal(gamma.grad.asnumpy(), [0, 0])


def test_batchnorm_axis_last_matches_transposed():
    x_np = _rand(2, 3, 2)
    params = [mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.array([.5, -.5]), mx.nd.array([4., .25])]
    last = mx.nd.BatchNorm(mx.nd.array(x_np), *params, axis=-1, fix_gamma=False)
    first = mx.nd.BatchNorm(mx.nd.array(x_np.transpose(0, 2, 1)), *params, axis=1, fix_gamma=False)
    np.testing.assert_allclose(last.asnumpy(), first.asnumpy().transpose(0, 2, 1), rtol=1e-6)


def test_batchnorm_global_stats_in_training():
    x = mx.nd.array(_rand(2, 2))
    x.attach_grad()
    mean, var = mx.nd.array([1., 2.]), mx.nd.array([4., 9.])
    with mx.autograd.record():
        out = mx.nd.BatchNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), mean, var, use_global_stats=True, eps=0)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), (x.asnumpy() - [1, 2]) / [2, 3], rtol=1e-6)
    np.testing.assert_array_equal(mean.asnumpy(), [1, 2])
    np.testing.assert_allclose(x.grad.asnumpy(), np.tile([1 / 2, 1 / 3], (2, 1)), rtol=1e-6)


def test_batchnorm_predict_mode_gradient_is_mxnets():
    # MXNet differentiates as if the statistics came from the batch (value recorded from MXNet 1.9.1)
    x = mx.nd.array([[1., 2.], [3., 4.]])
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        out = mx.nd.BatchNorm(x, mx.nd.array([1., 2.]), mx.nd.zeros(2), mx.nd.array([.5, 1.]),
                              mx.nd.array([1., 4.]), fix_gamma=False, eps=0)
    out.backward(mx.nd.array([[1., 0.], [.5, 2.]]))
    np.testing.assert_allclose(x.grad.asnumpy(), [[-0.1875, -1.75], [-2.4375, -1.25]], rtol=1e-6)


def test_batchnorm_numeric_gradient_training():
    def bn(x, gamma, beta):
        with mx.autograd.train_mode():
            return mx.nd.BatchNorm(x, gamma, beta, mx.nd.zeros((3,), dtype=x.dtype),
                                   mx.nd.ones((3,), dtype=x.dtype), fix_gamma=False)
    check_numeric_gradient(bn, [_rand(4, 3, 2), [1., 2., .5], [0., .1, .2]], rtol=1e-3)


def test_batchnorm_numeric_gradient_global_stats():
    def bn(x, gamma, beta):
        mean, var = mx.nd.array([.1, .2], dtype=x.dtype), mx.nd.array([1., 2.], dtype=x.dtype)
        return mx.nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False, use_global_stats=True, axis=-1)
    check_numeric_gradient(bn, [_rand(3, 2), [1., 2.], [0., .1]], use_forward_train=False, rtol=1e-3)


def test_batchnorm_infer_args_and_outputs():
    spec = registry.get('BatchNorm')
    shapes = spec.infer_args({'data': (2, 5, 3)}, spec.parse_attrs({'axis': -1}))
    assert shapes == {'gamma': (3,), 'beta': (3,), 'moving_mean': (3,), 'moving_var': (3,)}
    assert spec.aux == ('moving_mean', 'moving_var')
    assert spec.list_outputs({}) == ('output', 'mean', 'var')
    x, gamma, beta, mean, var = _bn_inputs()
    assert isinstance(mx.nd.BatchNorm(x, gamma, beta, mean, var), mx.nd.NDArray)


def test_batchnorm_errors():
    x, gamma, beta, mean, var = _bn_inputs()
    with pytest.raises(mx.base.MXNetError, match='gamma must have shape'):
        mx.nd.BatchNorm(x, mx.nd.ones((4,)), beta, mean, var)
    with pytest.raises(mx.base.MXNetError, match='at least 2-D'):
        mx.nd.BatchNorm(mx.nd.ones((3,)), gamma, beta, mean, var)


# ------------------------------------------------------------ LayerNorm etc.
def test_layernorm_parameter_gradients_are_accurate_over_many_rows():
    # gamma's and beta's gradients sum over every row; float32 must stay within 1e-4 of
    # float64 after 4096 rows, as MXNet's
    rng = np.random.RandomState(0)
    x, dy = rng.normal(size=(4096, 512)), rng.normal(size=(4096, 512))
    gamma, beta = rng.normal(size=512), rng.normal(size=512)
    grads = {}
    for dtype in ('float32', 'float64'):
        args = [mx.nd.array(v, dtype=dtype) for v in (x, gamma, beta)]
        for a in args:
            a.attach_grad()
        with mx.autograd.record():
            out = mx.nd.LayerNorm(*args, eps=1e-3)
        out.backward(mx.nd.array(dy, dtype=dtype))
        grads[dtype] = [a.grad.asnumpy().astype(np.float64) for a in args]
    for low, high in zip(grads['float32'], grads['float64']):
        assert np.abs(low - high).max() < 1e-4      # torch's fused kernel: 4e-4 on gamma
    normalized = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(grads['float64'][1], (dy * normalized).sum(0), rtol=1e-8)


def test_layernorm_values_axes_and_mean_std():
    x_np = _rand(2, 3, 4)
    out = mx.nd.LayerNorm(mx.nd.array(x_np), mx.nd.array([1, 2, .5, 1]), mx.nd.array([0, .1, .2, .3]))
    expect = _normalize(x_np, -1, 1e-5) * np.array([1, 2, .5, 1]) + np.array([0, .1, .2, .3])
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-5, atol=1e-5)
    out, mean, std = mx.nd.LayerNorm(mx.nd.array(x_np), mx.nd.array([1, 2, 3]), mx.nd.zeros((3,)),
                                     axis=1, eps=1e-3, output_mean_var=True)
    np.testing.assert_allclose(out.asnumpy(), _normalize(x_np, 1, 1e-3) * _channel([1, 2, 3], 3),
                               rtol=1e-5, atol=1e-5)
    assert mean.shape == std.shape == (2, 1, 4)
    np.testing.assert_allclose(std.asnumpy(), np.sqrt(x_np.var(1, keepdims=True) + 1e-3), rtol=1e-5)


def test_instancenorm_values():
    x_np = _rand(2, 2, 3)
    out = mx.nd.InstanceNorm(mx.nd.array(x_np), mx.nd.array([1., 2.]), mx.nd.array([0., -1.]))
    expect = _normalize(x_np, 2, 1e-3) * _channel([1, 2], 3) + _channel([0, -1], 3)
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-5, atol=1e-5)


def test_groupnorm_gamma_per_group():
    x_np = _rand(2, 4, 3)
    out, mean, std = mx.nd.GroupNorm(mx.nd.array(x_np), mx.nd.array([2., 3.]), mx.nd.array([.5, -1.]),
                                     num_groups=2, output_mean_var=True)
    grouped = x_np.reshape(2, 2, 6)
    expect = _normalize(grouped, -1, 1e-5) * _channel([2, 3], 3) + _channel([.5, -1], 3)
    np.testing.assert_allclose(out.asnumpy(), expect.reshape(2, 4, 3), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), grouped.mean(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(std.asnumpy(), np.sqrt(grouped.var(-1) + 1e-5), rtol=1e-5)


@pytest.mark.parametrize('op, data_shape, kwargs, expect', [
    ('LayerNorm', (2, 5, 3), {'axis': 1}, (5,)),
    ('InstanceNorm', (2, 5, 3), {}, (5,)),
    ('GroupNorm', (2, 6, 3), {'num_groups': 3}, (3,)),
])
def test_norm_infer_args(op, data_shape, kwargs, expect):
    spec = registry.get(op)
    inferred = spec.infer_args({'data': data_shape}, spec.parse_attrs(kwargs))
    assert inferred == {'gamma': expect, 'beta': expect}


def test_per_sample_norm_numeric_gradients():
    check_numeric_gradient(lambda x, g, b: mx.nd.LayerNorm(x, g, b, axis=0),
                           [_rand(3, 2), [1., 2., .5], [0., .1, .2]], rtol=1e-3)
    check_numeric_gradient(lambda x, g, b: mx.nd.InstanceNorm(x, g, b),
                           [_rand(2, 2, 3), [1., 2.], [0., .1]], rtol=1e-3)
    check_numeric_gradient(lambda x, g, b: mx.nd.GroupNorm(x, g, b, num_groups=2),
                           [_rand(2, 4, 2), [1., 2.], [0., .1]], rtol=1e-3)


def test_norm_errors():
    with pytest.raises(mx.base.MXNetError, match='num_groups'):
        mx.nd.GroupNorm(mx.nd.ones((2, 3, 2)), mx.nd.ones((2,)), mx.nd.zeros((2,)), num_groups=2)
    with pytest.raises(mx.base.MXNetError, match='gamma and beta'):
        mx.nd.GroupNorm(mx.nd.ones((2, 4, 2)), mx.nd.ones((4,)), mx.nd.zeros((4,)), num_groups=2)
    with pytest.raises(mx.base.MXNetError, match='at least 3-D'):
        mx.nd.InstanceNorm(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.zeros((3,)))
    with pytest.raises(mx.base.MXNetError, match='gamma must have shape'):
        mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones((2,)), mx.nd.zeros((2,)))


# ------------------------------------------------------- L2Normalization, LRN
@pytest.mark.parametrize('mode, axes', [('instance', (1, 2)), ('channel', (1,)), ('spatial', (2,))])
def test_l2_normalization_modes(mode, axes):
    x_np = _rand(2, 3, 2)
    out = mx.nd.L2Normalization(mx.nd.array(x_np), mode=mode)
    expect = x_np / np.sqrt((x_np ** 2).sum(axis=axes, keepdims=True) + 1e-10)
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-5)
    check_numeric_gradient(lambda x: mx.nd.L2Normalization(x, mode=mode, eps=.1), [x_np], rtol=1e-3)


def test_l2_normalization_channel_needs_3d():
    with pytest.raises(mx.base.MXNetError, match='at least 3'):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode='channel')
    with pytest.raises(mx.base.MXNetError, match='mode'):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode='row')


def test_lrn_odd_size_formula():
    x_np = _rand(1, 4, 2, 2) + 1
    out = mx.nd.LRN(mx.nd.array(x_np), nsize=3, alpha=.001, beta=.75, knorm=2)
    sq = np.pad(x_np ** 2, ((0, 0), (1, 1), (0, 0), (0, 0)))
    window = sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]
    np.testing.assert_allclose(out.asnumpy(), x_np / (2 + .001 / 3 * window) ** .75, rtol=1e-5)


@pytest.mark.parametrize('nsize, expect', [
    (2, [0.58369, 1.10717, 1.53196, 1.84796, 2.06565, 2.20452, 2.28469, 2.3232]),
    (4, [0.54433, 1.00595, 1.35876, 1.59754, 1.74331, 1.82181, 2.54684, 2.58929]),
])
def test_lrn_even_size_matches_mxnet(nsize, expect):
    # values recorded from MXNet 1.9.1: the window shrinks to the next odd size
    x = mx.nd.array(np.arange(1, 9, dtype='float32').reshape(1, 4, 2, 1))
    np.testing.assert_allclose(mx.nd.LRN(x, nsize=nsize, alpha=.1).asnumpy().ravel(), expect, rtol=1e-4)


def test_lrn_numeric_gradient_and_required_nsize():
    check_numeric_gradient(lambda x: mx.nd.LRN(x, nsize=3, alpha=.1, beta=.6, knorm=1.5),
                           [_rand(1, 4, 2, 1) + 1], rtol=1e-3)
    with pytest.raises(mx.base.MXNetError, match='nsize'):
        mx.nd.LRN(mx.nd.ones((1, 2, 2)))


def test_instance_norm_single_spatial_element_gives_beta():
    # torch refuses one spatial element in training; MXNet normalises it to 0 (values from MXNet 1.9.1)
    x, g, b = mx.nd.array([[[3.]], [[5.]]]), mx.nd.array([2.]), mx.nd.array([0.5])
    for v in (x, g, b):
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.InstanceNorm(x, g, b)
    y.backward()
    np.testing.assert_allclose(y.asnumpy().ravel(), [0.5, 0.5])
    np.testing.assert_allclose(x.grad.asnumpy().ravel(), [0, 0])
    np.testing.assert_allclose(g.grad.asnumpy(), [0])
    np.testing.assert_allclose(b.grad.asnumpy(), [2])


def test_batch_norm_v1_is_batch_norm_on_axis_1():
    s = mx.sym.BatchNorm_v1(mx.sym.var('x'), name='bn')
    assert s.list_arguments() == ['x', 'bn_gamma', 'bn_beta']
    assert s.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert s.infer_shape(x=(2, 3, 4))[0] == [(2, 3, 4), (3,), (3,)]
    x = mx.nd.array(np.random.uniform(size=(4, 3, 2)))
    args = (mx.nd.array([1., 2., 3.]), mx.nd.zeros(3), mx.nd.zeros(3), mx.nd.ones(3))
    with mx.autograd.train_mode():
        np.testing.assert_allclose(mx.nd.BatchNorm_v1(x, *args, fix_gamma=False).asnumpy(),
                                   mx.nd.BatchNorm(x, *args, fix_gamma=False).asnumpy(), rtol=1e-6)
    with pytest.raises(mx.base.MXNetError):
        mx.sym.BatchNorm_v1(mx.sym.var('x'), axis=1)
