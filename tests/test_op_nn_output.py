"""Output layers (SoftmaxOutput, regression outputs, MakeLoss, make_loss) and the losses
softmax_cross_entropy and CTCLoss.

Output layers ignore the head gradient by design, so their gradients are checked against
MXNet's formulas (observed on MXNet 1.9.1) rather than by finite differences.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype('float32')


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _forward_backward(fn, x_np, head=None):
    x = mx.nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        y = fn(x)
    y.backward(None if head is None else mx.nd.array(head))
    return y.asnumpy(), x.grad.asnumpy()


X = _rand(3, 4)
LABEL = [0, 3, 1]            # made an NDArray in each test: on the test's current context
ONE_HOT = np.eye(4, dtype='float32')[[0, 3, 1]]


# ------------------------------------------------------------- SoftmaxOutput
def test_softmax_output_forward_and_head_ignoring_gradient():
    out, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(LABEL)), X,
                                  head=np.full((3, 4), 5.))
    np.testing.assert_allclose(out, _softmax(X), rtol=1e-5)
    np.testing.assert_allclose(grad, _softmax(X) - ONE_HOT, rtol=1e-5, atol=1e-6)
    assert mx.nd.Softmax(mx.nd.array(X), mx.nd.array(LABEL)).shape == (3, 4)


@pytest.mark.parametrize('kwargs, label, scale', [
    ({'normalization': 'batch', 'grad_scale': 2.}, [0, 3, 1], [2 / 3] * 3),
    ({'normalization': 'valid'}, [0, 3, 1], [1 / 3] * 3),
    ({'normalization': 'valid', 'use_ignore': True}, [0, 3, -1], [.5, .5, 0]),
    ({'use_ignore': True, 'ignore_label': 3}, [0, 3, 1], [1, 0, 1]),
    ({'normalization': 'valid', 'use_ignore': True}, [-1, -1, -1], [0, 0, 0]),
])
def test_softmax_output_normalization_and_ignore(kwargs, label, scale):
    _, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(label), **kwargs), X)
    one_hot = np.array([np.eye(4)[int(v)] if v >= 0 else np.zeros(4) for v in label])
    np.testing.assert_allclose(grad, (_softmax(X) - one_hot) * np.array(scale)[:, None], rtol=1e-5, atol=1e-6)


def test_softmax_output_label_smoothing_and_bad_labels():
    _, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(LABEL), smooth_alpha=.3), X)
    np.testing.assert_allclose(grad, _softmax(X) - (ONE_HOT * .7 + (1 - ONE_HOT) * .1), rtol=1e-5, atol=1e-6)
    # labels are truncated to integers; out-of-range ones select no class
    _, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array([-1, 3.7, 9])), X)
    np.testing.assert_allclose(grad, _softmax(X) - np.eye(4)[[3]] * [[0], [1], [0]], rtol=1e-5, atol=1e-6)


def test_softmax_output_probability_labels_and_out_grad():
    target = ONE_HOT * .5 + .125
    _, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(target)), X)
    np.testing.assert_allclose(grad, _softmax(X) - target, rtol=1e-5, atol=1e-6)
    # MXNet 1.9.1 scales by the layer's output with out_grad=True, whatever the head gradient
    _, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(LABEL), out_grad=True), X,
                                head=np.arange(12.).reshape(3, 4))
    np.testing.assert_allclose(grad, (_softmax(X) - ONE_HOT) * _softmax(X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('normalization, scale', [('null', 1 / 5), ('batch', 1 / 15)])
def test_softmax_output_multi_output(normalization, scale):
    x = _rand(3, 2, 5)
    label = np.random.RandomState(1).randint(0, 2, (3, 5))
    out, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(label), multi_output=True,
                                                                 normalization=normalization), x)
    one_hot = np.eye(2)[label].transpose(0, 2, 1)
    np.testing.assert_allclose(out, _softmax(x, 1), rtol=1e-5)
    np.testing.assert_allclose(grad, (_softmax(x, 1) - one_hot) * scale, rtol=1e-5, atol=1e-6)


def test_softmax_output_preserve_shape_and_flattened_rows():
    x = _rand(2, 3, 2)
    label = np.array([[0, 1, 1], [1, 0, 1]])
    out, grad = _forward_backward(lambda d: mx.nd.SoftmaxOutput(d, mx.nd.array(label), preserve_shape=True,
                                                                 normalization='batch'), x)
    np.testing.assert_allclose(out, _softmax(x), rtol=1e-5)
    np.testing.assert_allclose(grad, (_softmax(x) - np.eye(2)[label]) / 6, rtol=1e-5, atol=1e-6)
    # without either flag each sample's values form one softmax row
    out = mx.nd.SoftmaxOutput(mx.nd.array(x), mx.nd.array([0, 5])).asnumpy()
    np.testing.assert_allclose(out, _softmax(x.reshape(2, 6)).reshape(2, 3, 2), rtol=1e-5)


def test_softmax_output_label_shape_error():
    with pytest.raises(mx.base.MXNetError, match='label of shape'):
        mx.nd.SoftmaxOutput(mx.nd.array(_rand(2, 3, 2)), mx.nd.array([0, 1, 0]), multi_output=True)


# -------------------------------------------------------- regression outputs
@pytest.mark.parametrize('op, forward, residual', [
    ('LinearRegressionOutput', lambda x: x, lambda o, l: o - l),
    ('LogisticRegressionOutput', lambda x: 1 / (1 + np.exp(-x)), lambda o, l: o - l),
    ('MAERegressionOutput', lambda x: x, lambda o, l: np.sign(o - l)),
])
def test_regression_outputs(op, forward, residual):
    x, label = _rand(2, 3), _rand(2, 3, seed=5)
    out, grad = _forward_backward(lambda d: getattr(mx.nd, op)(d, mx.nd.array(label), grad_scale=.5), x,
                                  head=np.full((2, 3), 7.))
    np.testing.assert_allclose(out, forward(x), rtol=1e-5)
    # divided by the number of outputs per sample
    np.testing.assert_allclose(grad, residual(forward(x), label) * .5 / 3, rtol=1e-5, atol=1e-6)


def test_regression_output_label_per_sample_and_shape_error():
    label = mx.nd.array([1., 2.])
    _, grad = _forward_backward(lambda d: mx.nd.LinearRegressionOutput(d, label), [[.5], [3.]])
    np.testing.assert_allclose(grad, [[-.5], [1.]])
    with pytest.raises(mx.base.MXNetError, match='label of shape'):
        mx.nd.LinearRegressionOutput(mx.nd.ones((2, 3)), mx.nd.ones((2,)))


# ------------------------------------------------------------------ MakeLoss
@pytest.mark.parametrize('kwargs, expect', [
    ({'grad_scale': 2.}, 2.),
    ({'normalization': 'batch'}, 1 / 6),           # rows of data flattened to 2-D: 2 * 3
    ({'normalization': 'valid', 'valid_thresh': .1}, None),
    ({'normalization': 'valid', 'valid_thresh': 5.}, 1.),
])
def test_make_loss_layer_normalization(kwargs, expect):
    x = _rand(2, 3, 2)
    out, grad = _forward_backward(lambda d: mx.nd.MakeLoss(d, **kwargs), x, head=np.full(x.shape, 9.))
    np.testing.assert_array_equal(out, x)
    if expect is None:
        expect = 1 / (x > .1).sum()
    np.testing.assert_allclose(grad, np.full(x.shape, expect), rtol=1e-6)


def test_make_loss_gradient_is_ones():
    x = np.arange(4, dtype='float32').reshape(2, 2)
    out, grad = _forward_backward(lambda d: mx.nd.make_loss(mx.nd.square(d)), x, head=np.full((2, 2), 3.))
    np.testing.assert_array_equal(out, x ** 2)
    np.testing.assert_array_equal(grad, 2 * x)


# -------------------------------------------------------------------- losses
def test_softmax_cross_entropy_value_and_gradient():
    out = mx.nd.softmax_cross_entropy(mx.nd.array(X), mx.nd.array([1, 0, 3]))
    assert out.shape == (1,)
    np.testing.assert_allclose(out.asnumpy(), [-np.log(_softmax(X)[[0, 1, 2], [1, 0, 3]]).sum()], rtol=1e-5)
    label = mx.nd.array([1, 0, 3], dtype='float64')     # the gradient check runs in float64
    check_numeric_gradient(lambda d: mx.nd.softmax_cross_entropy(d, label), [X])
    with pytest.raises(mx.base.MXNetError, match='label'):
        mx.nd.softmax_cross_entropy(mx.nd.array(X), mx.nd.array([[1, 0, 3]]))


ACT = _rand(5, 2, 4)        # (T, N, alphabet)


@pytest.mark.parametrize('args, kwargs, expect', [   # losses recorded from MXNet 1.9.1
    ([[[1, 2, 0], [3, 3, 1]]], {}, [4.65035, 4.54917]),
    ([[[1, 2, 0, 3], [3, 3, 1, 0]]], {}, [4.65035, 4.54917]),          # the first 0 ends a label
    ([[[0, 1, -1], [2, 2, 0]]], {'blank_label': 'last'}, [2.80152, 6.9157]),
    ([[[1, 2, 0], [3, 3, 1]], [5, 3]], {'use_data_lengths': True}, [4.65035, 0.]),  # infeasible -> 0
    ([[[1, 2, 0], [3, 3, 1]], None, [1, 2]], {'use_label_lengths': True}, [4.56434, 3.84845]),
    # positional arrays fill the inputs present: here label_lengths
    ([[[1, 2, 0], [3, 3, 1]], [1, 2]], {'use_label_lengths': True}, [4.56434, 3.84845]),
])
def test_ctc_loss_matches_mxnet(args, kwargs, expect):
    arrays = [None if a is None else mx.nd.array(a) for a in args]
    loss = mx.nd.ctc_loss(mx.nd.array(ACT), *arrays, **kwargs)
    assert loss.shape == (2,) and loss.dtype == np.float32
    np.testing.assert_allclose(loss.asnumpy(), expect, rtol=1e-5, atol=1e-6)


def test_ctc_loss_aliases_and_gradient():
    assert mx.nd.contrib.CTCLoss(mx.nd.array(ACT), mx.nd.array([[1, 2], [2, 1]])).shape == (2,)
    label = mx.nd.array([[1, 2, 0], [3, 3, 1]], dtype='float64')
    check_numeric_gradient(lambda d: mx.nd.CTCLoss(d, label), [ACT], rtol=1e-3)
    with pytest.raises(mx.base.MXNetError, match='expects data'):
        mx.nd.contrib.ctc_loss(mx.nd.array(ACT[0]), mx.nd.array([[1]]))


def test_ctc_loss_steps_past_data_lengths_take_no_part():
    padded = np.concatenate([ACT, np.full((2, 2, 4), np.nan, np.float32)])    # 2 NaN steps
    data = mx.nd.array(padded)
    data.attach_grad()
    label, lengths = mx.nd.array([[1, 2, 0], [3, 3, 1]]), mx.nd.array([5, 5])
    with mx.autograd.record():
        loss = mx.contrib.ndarray.CTCLoss(data, label, lengths, use_data_lengths=True)
    loss.backward()
    np.testing.assert_allclose(loss.asnumpy(), [4.65035, 4.54917], rtol=1e-5)
    grad = data.grad.asnumpy()
    assert np.isfinite(grad).all() and (grad[5:] == 0).all() and np.abs(grad[:5]).sum() > 0
    assert mx.contrib.nd.ctc_loss is mx.nd.contrib.ctc_loss and mx.contrib.sym.ctc_loss is mx.sym.contrib.ctc_loss
