"""Argument checks shared by the Estimator and its event handlers."""
from ...loss import SoftmaxCrossEntropyLoss
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics):
    """Normalise ``metrics`` to a flat list of EvalMetric.

    Parameters
    ----------
    metrics : EvalMetric, CompositeEvalMetric, list of EvalMetric or None
        A composite metric is replaced by its (recursively flattened) children.

    Returns
    -------
    list of EvalMetric

    Raises
    ------
    ValueError
        If an element is not an EvalMetric.
    """
    if isinstance(metrics, CompositeEvalMetric):
        return [child for metric in metrics.metrics for child in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = metrics or []
    if not all(isinstance(metric, EvalMetric) for metric in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, "
                         "refer to mxnet.metric.EvalMetric: {}".format(metrics))
    return metrics


def _check_handler_metric_ref(handler, known_metrics):
    """Raise ValueError if ``handler`` keeps a metric that is not in ``known_metrics``.

    The attributes checked are those whose name contains ``metric`` (MXNet checks
    these and not ``monitor``); each holds a metric or a list of metrics.
    """
    for attribute, reference in vars(handler).items():
        if 'metric' not in attribute or not reference:
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            if metric not in known_metrics:
                raise ValueError(
                    'Event handler {} refers to a metric instance {} outside of the known '
                    'training and validation metrics. Please use the metrics from '
                    'estimator.train_metrics and estimator.val_metrics instead.'
                    .format(type(handler).__name__, metric))


def _suggest_metric_for_loss(loss):
    """The metric the Estimator adds by default for ``loss`` (accuracy for softmax CE), or None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
