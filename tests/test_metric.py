"""mx.metric against numpy computations and MXNet 1.9.1's recorded behaviour."""
import math

import numpy as np
import pytest

import neomx as mx

RNG = np.random.RandomState(3)
PROBS = [RNG.dirichlet(np.ones(4), size=6).astype('float32') for _ in range(2)]
LABELS = [RNG.randint(0, 4, size=6).astype('float32') for _ in range(2)]


def _feed(metric, labels=LABELS, preds=PROBS):
    for label, pred in zip(labels, preds):
        metric.update([mx.nd.array(label)], [mx.nd.array(pred)])
    return metric.get()


def test_accuracy_and_topk():
    all_probs, all_labels = np.concatenate(PROBS), np.concatenate(LABELS)
    name, value = _feed(mx.metric.Accuracy())
    assert name == 'accuracy'
    assert value == pytest.approx((all_probs.argmax(1) == all_labels).mean())
    top2 = np.argsort(-all_probs, axis=1)[:, :2]
    name, value = _feed(mx.metric.TopKAccuracy(top_k=2))
    assert name == 'top_k_accuracy_2'
    assert value == pytest.approx((top2 == all_labels[:, None]).any(1).mean())
    with pytest.raises(AssertionError):
        mx.metric.TopKAccuracy(top_k=1)


def test_likelihood_metrics_and_perplexity():
    all_probs, all_labels = np.concatenate(PROBS), np.concatenate(LABELS).astype(int)
    picked = all_probs[np.arange(len(all_labels)), all_labels]
    assert _feed(mx.metric.CrossEntropy())[1] == pytest.approx(-np.log(picked + 1e-12).mean(), rel=1e-5)
    assert _feed(mx.metric.NegativeLogLikelihood())[1] == pytest.approx(-np.log(picked + 1e-12).mean(), rel=1e-5)
    assert _feed(mx.metric.Perplexity(ignore_label=None))[1] == pytest.approx(math.exp(-np.log(picked).mean()),
                                                                             rel=1e-5)
    kept = all_labels != 1
    metric = mx.metric.Perplexity(ignore_label=1)
    assert _feed(metric)[1] == pytest.approx(math.exp(-np.log(picked[kept]).mean()), rel=1e-5)
    assert float(metric.num_inst) == kept.sum()


def test_binary_f1_and_mcc_micro_and_macro():
    preds = [np.array([[0.3, 0.7], [0.8, 0.2], [0.4, 0.6], [0.9, 0.1]]), np.array([[0.2, 0.8], [0.6, 0.4]])]
    labels = [np.array([1, 0, 0, 1]), np.array([1, 1])]

    def f1(p, y):
        hit = p.argmax(1)
        tp, fp, fn = ((hit == 1) & (y == 1)).sum(), ((hit == 1) & (y == 0)).sum(), ((hit == 0) & (y == 1)).sum()
        return 2 * tp / (2 * tp + fp + fn)
    macro = _feed(mx.metric.F1(), labels, preds)[1]
    assert macro == pytest.approx(np.mean([f1(p, y) for p, y in zip(preds, labels)]))
    micro = _feed(mx.metric.F1(average='micro'), labels, preds)[1]
    assert micro == pytest.approx(f1(np.concatenate(preds), np.concatenate(labels)))
    hit, y = np.concatenate(preds).argmax(1), np.concatenate(labels)
    mcc = _feed(mx.metric.MCC(average='micro'), labels, preds)[1]
    assert mcc == pytest.approx(np.corrcoef(hit, y)[0, 1])
    with pytest.raises(ValueError, match='binary'):
        mx.metric.F1().update([mx.nd.array([0, 1, 2])], [mx.nd.array(np.eye(3))])


def test_regression_metrics_average_per_batch():
    preds = [RNG.randn(5, 1), RNG.randn(3, 1)]
    labels = [RNG.randn(5), RNG.randn(3)]
    errors = [p[:, 0] - y for p, y in zip(preds, labels)]
    assert _feed(mx.metric.MAE(), labels, preds)[1] == pytest.approx(np.mean([np.abs(e).mean() for e in errors]),
                                                                     rel=1e-5)
    assert _feed(mx.metric.MSE(), labels, preds)[1] == pytest.approx(np.mean([(e ** 2).mean() for e in errors]),
                                                                     rel=1e-5)
    rmse = np.mean([np.sqrt((e ** 2).mean()) for e in errors])
    assert _feed(mx.metric.RMSE(), labels, preds)[1] == pytest.approx(rmse, rel=1e-5)


def test_pearson_micro_equals_correlation_of_all_values():
    preds = [RNG.randn(5), RNG.randn(4), RNG.randn(6)]
    labels = [p + RNG.randn(len(p)) for p in preds]
    micro = _feed(mx.metric.PearsonCorrelation(average='micro'), labels, preds)[1]
    assert micro == pytest.approx(np.corrcoef(np.concatenate(preds), np.concatenate(labels))[0, 1], rel=1e-4)
    macro = _feed(mx.metric.PearsonCorrelation(), labels, preds)[1]
    assert macro == pytest.approx(np.mean([np.corrcoef(p, y)[0, 1] for p, y in zip(preds, labels)]), rel=1e-4)


def test_pcc_equals_binary_mcc():
    pred = np.array([[0.3, 0.7], [0.8, 0.2], [0.4, 0.6], [0.9, 0.1], [0.2, 0.8]])
    label = np.array([1, 0, 0, 1, 1])
    pcc = _feed(mx.metric.PCC(), [label], [pred])[1]
    assert pcc == pytest.approx(np.corrcoef(pred.argmax(1), label)[0, 1])


def test_loss_custom_np_and_composite():
    metric = mx.metric.Loss()
    metric.update(None, [mx.nd.array([1.0, 2.0]), mx.nd.array([[3.0]])])
    assert metric.get() == ('loss', pytest.approx(2.0))
    custom = mx.metric.CustomMetric(lambda label, pred: (float(np.abs(label - pred).sum()), label.size))
    assert custom.name == 'custom(<lambda>)'
    custom.update([mx.nd.array([1, 2])], [mx.nd.array([1, 4])])
    assert custom.get()[1] == pytest.approx(1.0)

    @mx.metric.np
    def max_error(label, pred):
        return np.abs(label - pred).max()
    assert _feed(max_error, [np.array([1.0, 2.0])], [np.array([1.5, 2.0])]) == ('max_error', 0.5)

    composite = mx.metric.create(['acc', 'ce'])
    names, values = _feed(composite)
    assert names == ['accuracy', 'cross-entropy'] and len(values) == 2
    assert composite.get_name_value() == list(zip(names, values))


def test_create_registry_and_errors():
    assert type(mx.metric.create('acc')) is mx.metric.Accuracy
    assert type(mx.metric.create('top_k_accuracy', top_k=3)) is mx.metric.TopKAccuracy
    assert type(mx.metric.create('nll_loss')) is mx.metric.NegativeLogLikelihood
    assert type(mx.metric.create('["mae", {"name": "m"}]')) is mx.metric.MAE

    @mx.metric.register
    @mx.metric.alias('mine')
    class MyMetric(mx.metric.Accuracy):
        pass
    assert type(mx.metric.create('mine')) is MyMetric and type(mx.metric.create('mymetric')) is MyMetric
    with pytest.raises(AssertionError, match='nope'):
        mx.metric.create('nope')
    with pytest.raises(ValueError, match='does not match'):
        mx.metric.Accuracy().update([mx.nd.array([1])], [mx.nd.array([[1, 0]]), mx.nd.array([[0, 1]])])


def test_reset_local_keeps_global_statistics():
    metric = mx.metric.Accuracy()
    assert math.isnan(metric.get()[1])
    metric.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [1, 0]])])
    metric.reset_local()
    metric.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [0, 1]])])
    assert metric.get()[1] == 1.0 and metric.get_global()[1] == 0.75
    metric.reset()
    assert metric.num_inst == 0 and math.isnan(metric.get_global()[1])


def test_perplexity_clips_labels_outside_the_classes():
    # MXNet picks with mode 'clip' (value recorded with MXNet 1.9.1): label 2 reads class 1,
    # label -1 class 0
    metric = mx.metric.Perplexity(ignore_label=None)
    metric.update([mx.nd.array([2, -1])], [mx.nd.array([[0.5, 0.5], [0.2, 0.8]])])
    assert metric.get()[1] == pytest.approx(3.1622777107259843)
