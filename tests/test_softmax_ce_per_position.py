"""The fused ``_softmax_cross_entropy_per_position`` operator behind SoftmaxCrossEntropyLoss:
values and gradients equal ``-pick(log_softmax(data, axis), label, axis)``."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import assert_almost_equal, check_numeric_gradient

RNG = np.random.RandomState(3)
OP = mx.nd._softmax_cross_entropy_per_position


def _reference(data, label, axis, keepdims):
    """-log_softmax(data)[label] along axis, labels truncated toward zero and clipped (pick's mode)."""
    shifted = data - data.max(axis=axis, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    out_shape = list(data.shape)
    out_shape[axis] = 1
    index = np.clip(np.trunc(label), 0, data.shape[axis] - 1).astype(np.int64).reshape(out_shape)
    picked = -np.take_along_axis(log_p, index, axis)
    return picked if keepdims else picked.squeeze(axis)


@pytest.mark.parametrize('shape, axis', [((5, 4), -1), ((5, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1)])
@pytest.mark.parametrize('keepdims', [False, True])
def test_values_match_log_softmax_pick(shape, axis, keepdims):
    data = RNG.uniform(-2, 2, shape)
    classes = shape[axis]
    label = RNG.randint(0, classes, shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]).astype(np.float32)
    out = OP(mx.nd.array(data), mx.nd.array(label), axis=axis, keepdims=keepdims)
    assert out.dtype == np.float32
    assert_almost_equal(out.asnumpy(), _reference(data, label, axis % len(shape), keepdims), rtol=1e-5, atol=1e-6)


def test_labels_truncated_and_clipped_like_pick():
    data = RNG.uniform(-1, 1, (4, 3))
    label = np.array([2.7, -1.0, 7.0, 1.2])
    out = OP(mx.nd.array(data), mx.nd.array(label))
    assert_almost_equal(out.asnumpy(), _reference(data, label, 1, False), rtol=1e-5, atol=1e-6)
    pick = -mx.nd.pick(mx.nd.log_softmax(mx.nd.array(data)), mx.nd.array(label))
    assert_almost_equal(out.asnumpy(), pick.asnumpy(), rtol=1e-5, atol=1e-6)


def test_one_dimensional_data_gives_shape_1():
    out = OP(mx.nd.array([1.0, 2.0, 3.0]), mx.nd.array([2]))
    assert out.shape == (1,)
    assert_almost_equal(out.asnumpy(), _reference(np.array([1.0, 2.0, 3.0]), np.array([2.0]), 0, True))


def test_label_of_any_shape_with_the_right_size():
    data = RNG.uniform(-1, 1, (4, 3))
    label = np.array([[0], [2], [1], [1]], dtype=np.float32)
    out = OP(mx.nd.array(data), mx.nd.array(label), keepdims=True)
    assert out.shape == (4, 1)
    assert_almost_equal(out.asnumpy(), _reference(data, label.ravel(), 1, True), rtol=1e-5, atol=1e-6)


def test_wrong_label_size_names_the_operator():
    with pytest.raises(mx.base.MXNetError, match=r'_softmax_cross_entropy_per_position.*\(4, 3\)'):
        OP(mx.nd.ones((4, 3)), mx.nd.ones((5,)))


@pytest.mark.parametrize('axis', [-1, 0])
def test_gradient(axis):
    label = mx.nd.array([2, 0, 1], dtype='float64')
    data = RNG.uniform(-1, 1, (3, 3))
    check_numeric_gradient(lambda d: OP(d, label, axis=axis, keepdims=True), [data])


def test_symbol_graph_matches_imperative():
    data, label = RNG.uniform(-1, 1, (2, 3, 4)), np.array([[0, 3, 1], [2, 2, 0]], dtype=np.float32)
    sym = mx.sym._softmax_cross_entropy_per_position(mx.sym.var('data'), mx.sym.var('label'), axis=-1)
    out = sym.eval(data=mx.nd.array(data), label=mx.nd.array(label))[0]
    assert_almost_equal(out.asnumpy(), _reference(data, label, 2, False), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('shape, axis, batch_axis, weight, sample_weight', [
    ((5, 4), -1, 0, None, None), ((4, 5), 0, 1, 0.5, None), ((5, 4), 1, -2, None, None),
    ((5, 4), -1, 0, None, np.full((5, 1), 2.0)), ((5, 3, 4), -1, 0, 2.0, None)])
@pytest.mark.parametrize('hybridize', [False, True])
def test_loss_equals_the_unfused_chain(shape, axis, batch_axis, weight, sample_weight, hybridize):
    """SoftmaxCrossEntropyLoss (whose (N, C) case skips the class axis) against MXNet's chain:
    pick(log_softmax) with keepdims, sample weight, weight, mean over all but the batch axis."""
    pred = RNG.uniform(-2, 2, shape)
    label = RNG.randint(0, shape[axis], shape[:axis % len(shape)] + shape[axis % len(shape) + 1:])
    extra = [] if sample_weight is None else [mx.nd.array(sample_weight)]
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss(axis=axis, batch_axis=batch_axis, weight=weight)
    if hybridize:
        loss.hybridize()
    out = loss(mx.nd.array(pred), mx.nd.array(label), *extra).asnumpy()
    expected = _reference(pred, label, axis % len(shape), True)
    expected = expected * (1 if sample_weight is None else sample_weight) * (1 if weight is None else weight)
    kept = batch_axis % len(shape)
    assert_almost_equal(out, expected.mean(axis=tuple(i for i in range(len(shape)) if i != kept)),
                        rtol=1e-5, atol=1e-6)


def test_hybridized_loss_exports_only_mxnet_operators():
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    pred, label = mx.sym.var('pred'), mx.sym.var('label')
    ops = {n['op'] for n in json.loads(loss(pred, label).tojson())['nodes']}
    assert '_softmax_cross_entropy_per_position' not in ops
    assert {'log_softmax', 'pick'} <= ops
