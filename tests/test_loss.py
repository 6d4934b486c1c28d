"""gluon.loss: values against numpy references, gradients against finite differences."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import assert_almost_equal, check_numeric_gradient

L = mx.gluon.loss
RNG = np.random.RandomState(7)
PRED = RNG.uniform(-1, 1, (3, 4))
TARGET = RNG.uniform(-1, 1, (3, 4))
SIGNS = np.sign(RNG.uniform(-1, 1, (3, 4)))
BINARY = (SIGNS > 0).astype(np.float64)


def _value(loss, *arrays):
    return loss(*[mx.nd.array(a) for a in arrays]).asnumpy()


def _log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _softplus(x):
    return np.log1p(np.exp(x))


# loss, extra inputs after pred, numpy reference of the per-sample loss
CASES = {
    'l2': (L.L2Loss(), [TARGET], lambda p, t: 0.5 * ((p - t) ** 2).mean(axis=1)),
    'l2_weighted': (L.L2Loss(weight=3.0), [TARGET], lambda p, t: 1.5 * ((p - t) ** 2).mean(axis=1)),
    'l1': (L.L1Loss(), [TARGET], lambda p, t: np.abs(p - t).mean(axis=1)),
    'sigmoid_bce': (L.SigmoidBinaryCrossEntropyLoss(), [BINARY],
                    lambda p, z: (-z * np.log(1 / (1 + np.exp(-p))) - (1 - z) * np.log(1 - 1 / (1 + np.exp(-p))))
                    .mean(axis=1)),
    'softmax_ce_dense': (L.SoftmaxCrossEntropyLoss(sparse_label=False), [np.abs(TARGET) / np.abs(TARGET).sum(1,
                         keepdims=True)], lambda p, q: -(q * _log_softmax(p)).sum(axis=1)),
    'kldiv': (L.KLDivLoss(from_logits=False), [np.abs(TARGET) / np.abs(TARGET).sum(1, keepdims=True)],
              lambda p, q: (q * (np.log(q + 1e-12) - _log_softmax(p))).sum(axis=1)),
    'huber': (L.HuberLoss(rho=0.5), [TARGET],
              lambda p, t: np.where(np.abs(p - t) > 0.5, np.abs(p - t) - 0.25, (p - t) ** 2).mean(axis=1)),
    'hinge': (L.HingeLoss(), [SIGNS], lambda p, y: np.maximum(0, 1 - p * y).mean(axis=1)),
    'squared_hinge': (L.SquaredHingeLoss(margin=0.5), [SIGNS],
                      lambda p, y: (np.maximum(0, 0.5 - p * y) ** 2).mean(axis=1)),
    'logistic_signed': (L.LogisticLoss(), [SIGNS], lambda p, y: _softplus(-p * y).mean(axis=1)),
    'logistic_binary': (L.LogisticLoss(label_format='binary'), [BINARY],
                        lambda p, z: _softplus(-p * (2 * z - 1)).mean(axis=1)),
    'triplet': (L.TripletLoss(margin=0.5), [TARGET, SIGNS],
                lambda a, p, n: np.maximum(0, ((p - a) ** 2).sum(1) - ((n - a) ** 2).sum(1) + 0.5)),
    'poisson': (L.PoissonNLLLoss(), [np.abs(TARGET)], lambda p, t: np.array([(np.exp(p) - t * p).mean()])),
    'cosine': (L.CosineEmbeddingLoss(margin=0.1), [TARGET, np.array([1.0, -1.0, -1.0])],
               lambda a, b, y: np.where(y == 1, 1 - _cos(a, b), np.maximum(0, _cos(a, b) - 0.1))[:, None]),
}


def _cos(a, b):
    return (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))


@pytest.mark.parametrize('name', sorted(CASES))
def test_value_matches_numpy(name):
    loss, extra, reference = CASES[name]
    assert_almost_equal(_value(loss, PRED, *extra), reference(PRED, *extra), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('name', sorted(CASES))
def test_gradient_matches_finite_differences(name):
    loss, extra, _ = CASES[name]
    check_numeric_gradient(lambda p: loss(p, *[mx.nd.array(e, dtype=p.dtype) for e in extra]), [PRED])


def test_softmax_ce_sparse_value_and_gradient():
    label = np.array([0, 3, 1])
    expected = -_log_softmax(PRED)[np.arange(3), label]
    assert_almost_equal(_value(L.SoftmaxCrossEntropyLoss(), PRED, label), expected, rtol=1e-5)
    check_numeric_gradient(lambda p: L.SoftmaxCELoss()(p, mx.nd.array(label, dtype=p.dtype)), [PRED])


def test_softmax_ce_sequence_axis1_averages_over_positions():
    pred = RNG.uniform(-1, 1, (2, 3, 5))                        # (batch, classes, positions)
    label = np.array([[0, 2, 1, 1, 0], [2, 2, 0, 1, 1]])
    logp = _log_softmax(pred, axis=1)
    expected = -np.take_along_axis(logp, label[:, None, :], axis=1)[:, 0].mean(axis=1)
    assert_almost_equal(_value(L.SoftmaxCrossEntropyLoss(axis=1), pred, label), expected, rtol=1e-5)


def test_sigmoid_bce_stable_for_large_logits_and_pos_weight():
    pred, label = np.array([[100.0, -100.0]]), np.array([[0.0, 1.0]])
    assert_almost_equal(_value(L.SigmoidBCELoss(), pred, label), np.array([100.0]), rtol=1e-6)
    pos_weight = np.array([[2.0, 0.5, 1.0, 3.0]])
    p = 1 / (1 + np.exp(-PRED))
    expected = -(pos_weight * BINARY * np.log(p) + (1 - BINARY) * np.log(1 - p)).mean(axis=1)
    out = L.SigmoidBCELoss()(mx.nd.array(PRED), mx.nd.array(BINARY), None, mx.nd.array(pos_weight))
    assert_almost_equal(out.asnumpy(), expected, rtol=1e-4)
    out = L.SigmoidBCELoss(from_sigmoid=True)(mx.nd.array(p), mx.nd.array(BINARY), None, mx.nd.array(pos_weight))
    assert_almost_equal(out.asnumpy(), expected, rtol=1e-4)


def test_sample_weight_and_batch_axis():
    sample_weight = np.array([[1.0], [0.0], [2.0]])
    out = L.L1Loss(weight=0.5)(mx.nd.array(PRED), mx.nd.array(TARGET), mx.nd.array(sample_weight))
    assert_almost_equal(out.asnumpy(), 0.5 * (np.abs(PRED - TARGET) * sample_weight).mean(axis=1), rtol=1e-5)
    out = L.L2Loss(batch_axis=1)(mx.nd.array(PRED), mx.nd.array(TARGET))
    assert out.shape == (4,)
    assert_almost_equal(out.asnumpy(), 0.5 * ((PRED - TARGET) ** 2).mean(axis=0), rtol=1e-5)


def test_label_of_same_size_is_reshaped():
    out = L.L2Loss()(mx.nd.array(PRED[:, :1]), mx.nd.array(TARGET[:, 0]))
    assert_almost_equal(out.asnumpy(), 0.5 * (PRED[:, 0] - TARGET[:, 0]) ** 2, rtol=1e-5)


@pytest.mark.parametrize('loss, label_shape', [(L.L2Loss(), (4,)), (L.HingeLoss(), (3, 5)),
                                               (L.SoftmaxCrossEntropyLoss(), (2,))])
def test_mismatched_label_shape_names_loss_and_shapes(loss, label_shape):
    with pytest.raises(mx.base.MXNetError, match=r'%s.*\(3, 4\)' % type(loss).__name__) as info:
        loss(mx.nd.array(PRED), mx.nd.ones(label_shape))
    assert str(label_shape) in str(info.value)


def test_ctc_loss_matches_brute_force():
    # 3 steps, alphabet {a, b, blank}: sum the probabilities of every path collapsing to "a b"
    logits = RNG.uniform(-1, 1, (1, 3, 3))
    probs = np.exp(_log_softmax(logits[0]))
    total = 0.0
    for path in np.ndindex(3, 3, 3):
        collapsed = [c for i, c in enumerate(path) if c != 2 and (i == 0 or c != path[i - 1])]
        if collapsed == [0, 1]:
            total += np.prod([probs[t, c] for t, c in enumerate(path)])
    out = L.CTCLoss()(mx.nd.array(logits), mx.nd.array([[0, 1]]))
    assert_almost_equal(out.asnumpy(), np.array([-np.log(total)]), rtol=1e-4)
    check_numeric_gradient(lambda p: L.CTCLoss(layout='TNC')(p, mx.nd.array([[0, 1]], dtype=p.dtype)),
                           [logits.transpose(1, 0, 2)])


def test_poisson_full_and_sdml():
    target = np.abs(TARGET) * 3 + 1
    full = _value(L.PoissonNLLLoss(compute_full=True), PRED, target)
    stirling = target * np.log(target) - target + 0.5 * np.log(2 * np.pi * target)
    assert_almost_equal(full, np.array([(np.exp(PRED) - target * PRED + stirling * (target > 1)).mean()]),
                        rtol=1e-4)
    x1, x2 = PRED[:, :2], TARGET[:, :2]
    dist = ((x1[:, None] - x2[None]) ** 2).sum(-1)
    targets = np.full((3, 3), 0.3 / 2) + np.eye(3) * (0.7 - 0.15)
    expected = (targets * (np.log(targets) - _log_softmax(-dist, axis=1))).sum(1)
    assert_almost_equal(_value(L.SDMLLoss(), x1, x2), expected, rtol=1e-4)


def test_repr_and_aliases():
    assert repr(L.L2Loss()) == 'L2Loss(batch_axis=0, w=1.0)'
    assert L.SoftmaxCELoss is L.SoftmaxCrossEntropyLoss and L.SigmoidBCELoss is L.SigmoidBinaryCrossEntropyLoss
    with pytest.raises(ValueError):
        L.LogisticLoss(label_format='other')
