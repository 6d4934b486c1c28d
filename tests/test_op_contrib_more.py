"""More contrib operators against references: group_adagrad_update, fft/ifft (MXNet's
interleaved layout, unnormalized inverse), count_sketch, BatchNormWithReLU and
backward_gradientmultiplier."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def test_group_adagrad_update_follows_the_documented_rule():
    w0 = np.array([[1., 2], [3, 4]], 'float32')
    g = np.array([[0.5, 1], [2, 0]], 'float32')
    history = mx.nd.array([[0.1], [0.2]])
    out = mx.nd.contrib.group_adagrad_update(mx.nd.array(w0), mx.nd.array(g), history, lr=0.1,
                                             rescale_grad=2.0, clip_gradient=3.0)
    g_eff = np.clip(2 * g, -3, 3)
    h = np.array([[0.1], [0.2]]) + (g_eff ** 2).mean(1, keepdims=True)
    np.testing.assert_allclose(history.asnumpy(), h, rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), w0 - 0.1 * g_eff / np.sqrt(h + 1e-5), rtol=1e-6)
    with pytest.raises(MXNetError, match='one value per row'):
        mx.nd.contrib.group_adagrad_update(mx.nd.array(w0), mx.nd.array(g), mx.nd.zeros((3, 1)), lr=0.1)


@pytest.mark.parametrize('shape', [(3, 4), (2, 1, 2, 5)])
def test_fft_interleaves_numpys_transform_and_ifft_inverts_it_unnormalized(shape):
    x = np.random.RandomState(0).rand(*shape).astype('float32')
    spectrum = mx.nd.contrib.fft(mx.nd.array(x)).asnumpy()
    reference = np.fft.fft(x, axis=-1)
    assert spectrum.shape == shape[:-1] + (2 * shape[-1],)
    np.testing.assert_allclose(spectrum[..., 0::2], reference.real, atol=1e-5)
    np.testing.assert_allclose(spectrum[..., 1::2], reference.imag, atol=1e-5)
    back = mx.nd.contrib.ifft(mx.nd.array(spectrum)).asnumpy()
    np.testing.assert_allclose(back, shape[-1] * x, rtol=1e-5, atol=1e-5)


def test_fft_gradient_is_the_unnormalized_inverse():
    x = mx.nd.array(np.random.RandomState(1).rand(2, 4))
    head = np.random.RandomState(2).rand(2, 8).astype('float32')
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.fft(x)
    y.backward(mx.nd.array(head))
    expected = np.real(np.fft.ifft(head[:, 0::2] + 1j * head[:, 1::2], axis=-1) * 4)
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_count_sketch_and_its_gradient():
    data = mx.nd.array([[1., 2, 3], [4, 5, 6]])
    h, s = mx.nd.array([[0, 2, 0]]), mx.nd.array([[1, -1, 1]])
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.count_sketch(data, h, s, out_dim=3)
    assert out.asnumpy().tolist() == [[4., 0., -2.], [10., 0., -5.]]
    out.backward(mx.nd.array([[1., 2, 3], [4, 5, 6]]))
    assert data.grad.asnumpy().tolist() == [[1., -3., 1.], [4., -6., 4.]]
    with pytest.raises(MXNetError, match='out_dim'):
        mx.nd.contrib.count_sketch(data, mx.nd.array([[0, 3, 0]]), s, out_dim=3)


def test_batch_norm_with_relu_is_batch_norm_then_relu():
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.randn(2, 3, 2, 2))
    params = [mx.nd.array(rng.rand(3) + 0.5) for _ in range(2)]
    stats = lambda: [mx.nd.array([0.1, 0.2, -0.1]), mx.nd.array([1.0, 2.0, 0.5])]
    for training in (False, True):
        with mx.autograd.record(train_mode=training):
            fused = mx.nd.contrib.BatchNormWithReLU(x, *params, *stats(), fix_gamma=False)
            plain = mx.nd.relu(mx.nd.BatchNorm(x, *params, *stats(), fix_gamma=False))
        np.testing.assert_allclose(fused.asnumpy(), plain.asnumpy(), rtol=1e-6)
    sym = mx.sym.contrib.BatchNormWithReLU(mx.sym.var('data'), name='bn')
    assert sym.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']


def test_backward_operators_scale_the_head_gradient():
    head = mx.nd.array([1., 2])
    # MXNet 1.9.1: backward_gradientmultiplier([1, 2], scalar=3) == [3, 6]
    assert mx.nd.contrib.backward_gradientmultiplier(head, scalar=3).asnumpy().tolist() == [3., 6.]
    out = mx.nd.contrib.backward_quadratic(head, mx.nd.array([0.5, 1.]), a=2, b=1)
    assert out.asnumpy().tolist() == [3., 10.]


def test_quantized_graph_infers_types_and_runs():
    data, weight = mx.sym.var('data'), mx.sym.var('weight', dtype='int8')
    q = mx.sym.contrib.quantize_v2(data, out_type='int8', min_calib_range=-1.0, max_calib_range=1.0)
    fc = mx.sym.contrib.quantized_fully_connected(q[0], weight, q[1], q[2], mx.sym.var('wmin'), mx.sym.var('wmax'),
                                                  num_hidden=3, no_bias=True)
    req = mx.sym.contrib.requantize(fc[0], fc[1], fc[2], min_calib_range=-0.5, max_calib_range=0.5)
    out = mx.sym.contrib.dequantize(req[0], req[1], req[2])
    _, out_types, _ = out.infer_type(data='float32', weight='int8', wmin='float32', wmax='float32')
    assert out_types == [np.float32]
    _, out_shapes, _ = out.infer_shape(data=(2, 4), weight=(3, 4), wmin=(1,), wmax=(1,))
    assert out_shapes == [(2, 3)]
    x = np.array([[0.5, -0.25, 0.75, 0.1], [0.2, 0.3, -0.9, 0.0]], 'float32')
    w = np.array([[1, -2, 3, 4], [5, 6, -7, 8], [0, 0, 1, 1]], 'int8')
    got = out.eval(data=mx.nd.array(x), weight=mx.nd.array(w, dtype='int8'), wmin=mx.nd.array([-0.5]),
                   wmax=mx.nd.array([0.5]))[0].asnumpy()
    # each int8 weight step is 0.5 / 127: the float product, up to the int8 rounding of both ends
    np.testing.assert_allclose(got, x @ (w.T.astype('float32') * 0.5 / 127), atol=0.02)


def test_quantized_operators_refuse_float_data():
    with pytest.raises(MXNetError, match='quantized_flatten'):
        mx.nd.contrib.quantized_flatten(mx.nd.ones((2, 2)), mx.nd.array([-1.]), mx.nd.array([1.]))
    with pytest.raises(MXNetError, match='requantize'):
        mx.nd.contrib.requantize(mx.nd.ones((2,)), mx.nd.array([-1.]), mx.nd.array([1.]))


@pytest.mark.parametrize('kwargs, dtype, expected, span', [
    ({}, np.int32, [30, -140, -270, 12700, 128, 250, 0, -4096], 133144.25),
    (dict(min_calib_range=-0.05, max_calib_range=0.05), np.int8, [4, -21, -42, -56, 20, 39, 0, 126], 0.05),
])
def test_quantized_elemwise_mul_matches_mxnet(kwargs, dtype, expected, span):
    # MXNet 1.9.1's results (its executor; its imperative call of this operator fails)
    lhs = mx.nd.array([[10, -20, 30, 127], [-128, 5, 0, 64]], dtype='int8')
    rhs = mx.nd.array([[3, 7, -9, 100], [-1, 50, 13, -64]], dtype='int8')
    ranges = [mx.nd.array([v]) for v in (-1., 2., -.5, .5)]
    out, low, high = mx.nd.contrib.quantized_elemwise_mul(lhs, rhs, *ranges, **kwargs)
    assert out.dtype == dtype and out.asnumpy().ravel().tolist() == expected
    np.testing.assert_allclose([low.asscalar(), high.asscalar()], [-span, span], rtol=1e-6)
    real = mx.nd.contrib.quantized_elemwise_mul(lhs, rhs, *ranges, enable_float_output=True)
    np.testing.assert_allclose(real.asnumpy().ravel()[:4], [0.0018454441, -0.008612072, -0.016608996, 0.78123796],
                               rtol=1e-6)


def test_backward_index_copy_is_index_copys_gradient():
    head = mx.nd.arange(12).reshape((4, 3))
    index = mx.nd.array([2, 0])
    old, new = mx.nd.zeros((4, 3)), mx.nd.ones((2, 3))
    old_grad, index_grad, new_grad = mx.nd.contrib.backward_index_copy(head, old, index, new)
    old.attach_grad()
    new.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.index_copy(old, index, new)
    out.backward(head)
    assert old_grad.asnumpy().tolist() == old.grad.asnumpy().tolist()
    assert new_grad.asnumpy().tolist() == new.grad.asnumpy().tolist() == [[6., 7., 8.], [0., 1., 2.]]
    assert index_grad.asnumpy().tolist() == [0., 0.]


def test_identity_attach_kl_sparse_reg_matches_mxnet():
    sym = mx.sym.IdentityAttachKLSparseReg(mx.sym.var('d'), name='r', sparseness_target=0.2, penalty=0.01,
                                           momentum=0.8)
    assert sym.list_arguments() == ['d'] and sym.list_auxiliary_states() == ['r_moving_avg']
    x = np.random.RandomState(0).rand(4, 3).astype('float32')
    grad, avg = mx.nd.zeros((4, 3)), mx.nd.full((3,), 0.5)
    exe = sym.bind(mx.cpu(), {'d': mx.nd.array(x)}, args_grad={'d': grad}, aux_states={'r_moving_avg': avg})
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(), x)
    exe.backward(mx.nd.ones((4, 3)))
    # MXNet 1.9.1's gradient and running average after one step
    np.testing.assert_allclose(grad.asnumpy(), np.tile([1.0118303, 1.0137376, 1.013557], (4, 1)), rtol=1e-6)
    np.testing.assert_allclose(avg.asnumpy(), [0.49573627, 0.54111713, 0.53706074], rtol=1e-6)
    out = mx.nd.IdentityAttachKLSparseReg(mx.nd.array(x), mx.nd.full((3,), 0.5))
    out[:] = 0          # a new array, not a view of its input
    with pytest.raises(MXNetError, match='moving_avg'):
        mx.nd.IdentityAttachKLSparseReg(mx.nd.array(x), mx.nd.full((4,), 0.5))
