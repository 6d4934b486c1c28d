"""``mx.metric``: evaluation metrics.

A metric accumulates a sum and an instance count over ``update(labels, preds)`` calls;
``get()`` returns ``(name, sum / count)``. Metrics with global statistics keep a second
pair of accumulators that ``reset_local()`` leaves alone (``get_global()`` reads them).
The arithmetic runs in numpy on host copies, as MXNet's does, so values and the Python
types of ``num_inst`` (sometimes float) match MXNet 1.9.1.
"""
import json
import math
import warnings
from collections import OrderedDict

import numpy

from .ndarray.ndarray import NDArray

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC', 'PCC',
           'MAE', 'MSE', 'RMSE', 'CrossEntropy', 'NegativeLogLikelihood', 'Perplexity',
           'PearsonCorrelation', 'Loss', 'Torch', 'Caffe', 'CustomMetric', 'np', 'create',
           'register', 'alias', 'check_label_shapes']

# names MXNet's module also holds (imported from its base module)
from .base import numeric_types, string_types  # noqa: E402,F401

_REGISTRY = {}


def register(klass, name=None):
    """Register metric class ``klass`` (a class decorator): ``create(name)`` then builds it;
    ``name`` defaults to the class name, lower-cased. Replacing a registered name warns."""
    assert issubclass(klass, EvalMetric), 'Can only register subclass of EvalMetric'
    name = (klass.__name__ if name is None else name).lower()
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn('New metric %s.%s registered with name %s is overriding existing metric %s.%s'
                      % (klass.__module__, klass.__name__, name, old.__module__, old.__name__), UserWarning,
                      stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Class decorator: further names under which ``create`` finds the class."""
    def deco(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return deco


def create(metric, *args, **kwargs):
    """Create a metric from a name, a callable, a list of those, a JSON string or an instance.

    Parameters
    ----------
    metric : str, callable, list, dict or EvalMetric
        A registered name (``'acc'``, ``'ce'``...), a ``feval(label, pred)`` function (made
        into a :class:`CustomMetric`), a list (made into a :class:`CompositeEvalMetric`).
    *args, **kwargs
        Passed to the metric's constructor.
    """
    if callable(metric) and not isinstance(metric, EvalMetric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, EvalMetric):
        assert not args and not kwargs, 'an EvalMetric instance takes no further arguments'
        return metric
    if isinstance(metric, dict):
        return create(**metric)
    assert isinstance(metric, str), 'metric must be of string type, got %r' % (metric,)
    if metric.startswith('['):
        name, config = json.loads(metric)
        return create(name, **config)
    if metric.startswith('{'):
        return create(**json.loads(metric))
    name = metric.lower()
    assert name in _REGISTRY, ('%s is not registered. Please register with metric.register first; '
                               'known metrics: %s' % (metric, ', '.join(sorted(_REGISTRY))))
    return _REGISTRY[name](*args, **kwargs)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that labels and predictions agree in length (or shape, with ``shape=True``).

    With ``wrap=True`` single NDArrays are wrapped into lists. Returns ``(labels, preds)``.
    """
    if shape:
        label_shape, pred_shape = labels.shape, preds.shape
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        raise ValueError('Shape of labels {} does not match shape of predictions {}'
                         .format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


def _host(x):
    """A numpy copy of an NDArray (numpy input passes through)."""
    return x.asnumpy() if isinstance(x, NDArray) else numpy.asarray(x)


def _python_scalar(value):
    """A numpy scalar as the Python number MXNet's metrics give (arrays pass through)."""
    return value.item() if isinstance(value, numpy.generic) else value


class EvalMetric:
    """Base class of all metrics.

    Parameters
    ----------
    name : str
        Name of the metric, as ``get()`` reports it.
    output_names, label_names : list of str, optional
        Which outputs/labels ``update_dict`` passes to ``update`` (all by default).
    has_global_stats : bool
        Keep global accumulators that ``reset_local`` does not clear.

    Example
    -------

    A metric subclass implements ``update`` on top of ``sum_metric`` and ``num_inst``:

    >>> class MaxError(mx.metric.EvalMetric):
    ...     def __init__(self):
    ...         super().__init__('max_error')
    ...     def update(self, labels, preds):
    ...         for label, pred in zip(labels, preds):
    ...             self.sum_metric = max(self.sum_metric, float(abs(label - pred).max().asscalar()))
    ...             self.num_inst = 1
    >>> metric = MaxError()
    >>> metric.update([mx.nd.array([1, 2])], [mx.nd.array([1.5, 4])])
    >>> metric.get()
    ('max_error', 2.0)
    >>> metric.reset()
    >>> metric.get()                            # nothing seen yet
    ('max_error', nan)
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop('has_global_stats', False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return 'EvalMetric: {}'.format(dict(self.get_name_value()))

    def get_config(self):
        """The constructor arguments as a dict (``create(**config)`` rebuilds the metric)."""
        config = dict(self._kwargs)
        config.update({'metric': type(self).__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update from dicts name -> NDArray, selecting ``label_names``/``output_names``."""
        preds = list(pred.values()) if self.output_names is None else [pred[n] for n in self.output_names]
        labels = list(label.values()) if self.label_names is None else [label[n] for n in self.label_names]
        self.update(labels, preds)

    def update(self, labels, preds):
        """Accumulate one batch: ``labels`` and ``preds`` are lists of NDArrays (or one each)."""
        raise NotImplementedError()

    def _accumulate(self, value, count):
        """Add ``value``/``count`` to both the local and the global accumulators."""
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        """Clear local and global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` of the local statistics; value is NaN before any update."""
        if self.num_inst == 0:
            return self.name, float('nan')
        return self.name, _python_scalar(self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` of the global statistics (the local ones without global stats)."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return self.name, float('nan')
        return self.name, _python_scalar(self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``[(name, value), ...]``."""
        return _pairs(*self.get())

    def get_global_name_value(self):
        """``[(name, value), ...]`` of the global statistics."""
        return _pairs(*self.get_global())


def _pairs(names, values):
    if not isinstance(names, list):
        names, values = [names], [values]
    return list(zip(names, values))


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values.

    Parameters
    ----------
    metrics : list of EvalMetric or str, optional

    Example
    -------
    >>> metric = mx.metric.CompositeEvalMetric(['acc', 'mse'])
    >>> metric.update(labels=[mx.nd.array([1, 0])], preds=[mx.nd.array([[0.2, 0.8], [0.4, 0.6]])])
    >>> metric.get()
    (['accuracy', 'mse'], [0.5, 0.30000001192092896])
    """

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        self.metrics = [create(m) for m in (metrics or [])]
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def add(self, metric):
        """Add a child metric (an instance or anything ``create`` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError('Metric index {} is out of range 0 and {}'.format(index, len(self.metrics)))

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, 'metrics', ()):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        return self._gather(lambda m: m.get())

    def get_global(self):
        return self._gather(lambda m: m.get_global())

    def _gather(self, read):
        names, values = [], []
        for metric in self.metrics:
            name, value = read(metric)
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values

    def get_config(self):
        config = super().get_config()
        config['metrics'] = [m.get_config() for m in self.metrics]
        return config


# ------------------------------------------------------------------ classification
@register
@alias('acc')
class Accuracy(EvalMetric):
    """Fraction of predictions equal to the label.

    Predictions with the label's shape are class ids; otherwise the class is the argmax
    along ``axis``.

    Example
    -------
    >>> acc = mx.metric.Accuracy()
    >>> acc.update(labels=[mx.nd.array([0, 1, 1])], preds=[mx.nd.array([[0.7, 0.3], [0.2, 0.8], [0.9, 0.1]])])
    >>> acc.get()
    ('accuracy', 0.6666666666666666)
    """

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _host(pred)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype('int32').ravel()
            label = _host(label).astype('int32').ravel()
            check_label_shapes(label, pred)
            self._accumulate((pred == label).sum(), len(pred))


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest predictions.

    ``top_k`` must be greater than 1 (use :class:`Accuracy` otherwise), as in MXNet.

    Example
    -------
    >>> top2 = mx.metric.TopKAccuracy(top_k=2)
    >>> top2.update(labels=[mx.nd.array([2, 0])], preds=[mx.nd.array([[0.1, 0.5, 0.4], [0.1, 0.5, 0.4]])])
    >>> top2.get()
    ('top_k_accuracy_2', 0.5)
    """

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        assert self.top_k > 1, 'Please use Accuracy if top_k is no more than 1'
        self.name += '_%d' % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            assert len(pred.shape) <= 2, 'Predictions should be no more than 2 dims'
            label = _host(label).astype('int32').ravel()
            scores = _host(pred).astype('float32')
            check_label_shapes(label, scores)
            if scores.ndim == 1:
                correct = (numpy.argpartition(scores, -self.top_k) == label).sum()
            else:
                k = min(scores.shape[1], self.top_k)
                best = numpy.argpartition(scores, -k, axis=1)[:, -k:]
                correct = (best == label[:, None]).sum()
            self._accumulate(correct, scores.shape[0])


class _BinaryConfusion:
    """Counts of a binary confusion matrix, for the current span and for all time."""

    def __init__(self):
        self.local = numpy.zeros(4, dtype=numpy.int64)     # tp, fp, fn, tn
        self.total = numpy.zeros(4, dtype=numpy.int64)

    def update(self, label, pred, metric_name):
        label = _host(label).astype('int32')
        scores = _host(pred)
        check_label_shapes(label, scores)
        if len(numpy.unique(label)) > 2:
            raise ValueError('%s currently only supports binary classification.' % metric_name)
        pred_pos = numpy.argmax(scores, axis=1) == 1
        label_pos = label == 1
        counts = numpy.array([(pred_pos & label_pos).sum(), (pred_pos & ~label_pos).sum(),
                              (~pred_pos & label_pos).sum(), (~pred_pos & ~label_pos).sum()])
        self.local += counts
        self.total += counts

    def reset_local(self):
        self.local[:] = 0

    def reset(self):
        self.local[:] = 0
        self.total[:] = 0

    @staticmethod
    def fscore(counts):
        tp, fp, fn, _ = (int(c) for c in counts)
        precision = tp / (tp + fp) if tp + fp > 0 else 0.
        recall = tp / (tp + fn) if tp + fn > 0 else 0.
        return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.

    @staticmethod
    def matthewscc(counts):
        tp, fp, fn, tn = (float(c) for c in counts)
        if not tp + fp + fn + tn:
            return 0.
        denom = 1.
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            if term != 0.:
                denom *= term
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: a score of the binary confusion matrix.

    ``average='macro'`` averages the per-update scores; ``'micro'`` scores the counts of
    all updates (weighted by the number of examples).
    """
    _score = None

    def __init__(self, name, output_names=None, label_names=None, average='macro'):
        self.average = average
        self._counts = _BinaryConfusion()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._counts.update(label, pred, type(self).__name__)
        score = type(self)._score
        if self.average == 'macro':
            self._accumulate(score(self._counts.local), 1)
            self._counts.reset()
        else:
            local_n, total_n = int(self._counts.local.sum()), int(self._counts.total.sum())
            self.sum_metric = score(self._counts.local) * local_n
            self.global_sum_metric = score(self._counts.total) * total_n
            self.num_inst, self.global_num_inst = local_n, total_n

    def reset(self):
        super().reset()
        self._counts.reset()

    def reset_local(self):
        super().reset_local()
        self._counts.reset_local()


@register
class F1(_BinaryMetric):
    """F1 score of a binary classifier (predictions: (N, 2) scores).

    Example
    -------
    >>> f1 = mx.metric.F1()
    >>> f1.update(labels=[mx.nd.array([1, 0, 1, 1])],
    ...           preds=[mx.nd.array([[0.2, 0.8], [0.3, 0.7], [0.6, 0.4], [0.1, 0.9]])])
    >>> f1.get()
    ('f1', 0.6666666666666666)
    """
    _score = staticmethod(_BinaryConfusion.fscore)

    def __init__(self, name='f1', output_names=None, label_names=None, average='macro'):
        super().__init__(name, output_names, label_names, average)


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary classifier (predictions: (N, 2) scores).

    Example
    -------
    >>> mcc = mx.metric.MCC()
    >>> preds = mx.nd.array([[0.3, 0.7], [0.6, 0.4], [0.2, 0.8], [0.9, 0.1]])
    >>> mcc.update(labels=[mx.nd.array([1, 0, 0, 0])], preds=[preds])    # 1 TP, 2 TN, 1 FP
    >>> mcc.get()
    ('mcc', 0.5773502691896258)
    """
    _score = staticmethod(_BinaryConfusion.matthewscc)

    def __init__(self, name='mcc', output_names=None, label_names=None, average='macro'):
        super().__init__(name, output_names, label_names, average)


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Pearson correlation of the confusion matrix).

    The confusion matrix grows as new classes appear; ``num_inst`` counts updates.

    Example
    -------
    >>> pcc = mx.metric.PCC()
    >>> preds = mx.nd.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]])
    >>> pcc.update(labels=[mx.nd.array([0, 1, 2, 2])], preds=[preds])
    >>> pcc.get()
    ('pcc', 0.7)
    """

    def __init__(self, name='pcc', output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), 'constant')
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), 'constant')
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).astype('int32')
            pred = _host(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype('int32')
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(n + 1 - self.k)
            batch = numpy.zeros((self.k, self.k))
            numpy.add.at(batch, (pred, label), 1)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value):
        """The sum derives from the confusion matrix; assignments by the base class are ignored."""

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, value):
        """Derived, like ``sum_metric``."""

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


# ---------------------------------------------------------------------- regression
def _as_columns(label, pred):
    """Host copies with 1-D arrays made (N, 1), so labels and predictions line up."""
    label, pred = _host(label), _host(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class _RegressionMetric(EvalMetric):
    """A per-batch error averaged over updates (``num_inst`` counts batches, as in MXNet)."""

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    @staticmethod
    def _error(label, pred):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._accumulate(self._error(*_as_columns(label, pred)), 1)


@register
class MAE(_RegressionMetric):
    """Mean absolute error.

    Example
    -------
    >>> mae = mx.metric.MAE()
    >>> mae.update(labels=[mx.nd.array([1, 2, 3])], preds=[mx.nd.array([1.5, 2, 1])])
    >>> mae.get()                               # (0.5 + 0 + 2) / 3
    ('mae', 0.8333333134651184)
    """

    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_RegressionMetric):
    """Mean squared error.

    Example
    -------
    >>> mse = mx.metric.MSE()
    >>> mse.update(labels=[mx.nd.array([1, 2])], preds=[mx.nd.array([1, 4])])
    >>> mse.get()
    ('mse', 2.0)
    """

    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_RegressionMetric):
    """Root mean squared error (per batch, then averaged over batches).

    Example
    -------
    >>> rmse = mx.metric.RMSE()
    >>> rmse.update(labels=[mx.nd.array([1, 2, 3])], preds=[mx.nd.array([1, 2, 6])])
    >>> rmse.get()                              # sqrt((0 + 0 + 9) / 3)
    ('rmse', 1.7320507764816284)
    """

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class _LikelihoodMetric(EvalMetric):
    """Negative log of the probability predicted for the label, summed over samples."""

    def __init__(self, eps, name, output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).ravel()
            pred = _host(pred)
            assert label.shape[0] == pred.shape[0], 'label and prediction counts differ: %d vs %d' % (
                label.shape[0], pred.shape[0])
            prob = pred[numpy.arange(label.shape[0]), numpy.int64(label)]
            self._accumulate((-numpy.log(prob + self.eps)).sum(), label.shape[0])


@register
@alias('ce')
class CrossEntropy(_LikelihoodMetric):
    """Cross entropy of predicted class probabilities (N, C) and class labels (N,).

    Example
    -------
    >>> ce = mx.metric.CrossEntropy()
    >>> ce.update(labels=[mx.nd.array([0, 1])], preds=[mx.nd.array([[0.5, 0.5], [0.2, 0.8]])])
    >>> ce.get()
    ('cross-entropy', 0.4581453502178192)
    """

    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias('nll_loss')
class NegativeLogLikelihood(_LikelihoodMetric):
    """Negative log-likelihood of predicted class probabilities (N, C) and labels (N,).

    Example
    -------
    >>> nll = mx.metric.NegativeLogLikelihood()
    >>> nll.update(labels=[mx.nd.array([0, 1])], preds=[mx.nd.array([[0.5, 0.5], [0.1, 0.9]])])
    >>> nll.get()                               # -(log 0.5 + log 0.9) / 2
    ('nll-loss', 0.39925387501716614)
    """

    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
class Perplexity(EvalMetric):
    """exp of the mean negative log-probability of the labels.

    Parameters
    ----------
    ignore_label : int or None
        Label positions with this value are left out of the mean.
    axis : int
        The class axis of the predictions.

    Example
    -------
    >>> perplexity = mx.metric.Perplexity(ignore_label=None)
    >>> perplexity.update(labels=[mx.nd.array([0, 1])], preds=[mx.nd.array([[0.5, 0.5], [0.2, 0.8]])])
    >>> perplexity.get()                        # exp(-(log 0.5 + log 0.8) / 2)
    ('perplexity', 1.58113880522986)
    """

    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None, label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        assert len(labels) == len(preds), 'labels and predictions differ in number'
        loss, num = 0., 0
        for label, pred in zip(labels, preds):
            pred = _host(pred)
            label = _host(label)
            assert label.size == pred.size / pred.shape[-1], 'shape mismatch: %s vs. %s' % (
                label.shape, pred.shape)
            label = label.reshape(label.size)
            pred = numpy.moveaxis(pred, self.axis, -1).reshape(label.size, -1)
            # MXNet picks with mode 'clip': a label outside the classes reads the nearest one
            index = numpy.clip(label.astype('int64'), 0, pred.shape[1] - 1)
            probs = numpy.take_along_axis(pred, index[:, None], axis=1)[:, 0]
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(probs.dtype)
                num -= ignore.sum()
                probs = probs * (1 - ignore) + ignore
            loss -= numpy.log(numpy.maximum(probs, 1e-10)).sum()
            num += probs.size
        self._accumulate(loss, num)

    def get(self):
        name, value = super().get()
        return name, math.exp(value) if self.num_inst else value

    def get_global(self):
        name, value = super().get_global()
        return name, math.exp(value) if self.global_num_inst else value


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson correlation between predictions and labels.

    ``average='macro'`` averages per-update correlations; ``'micro'`` correlates all values
    seen so far, with streaming means, variances and covariance.

    Example
    -------
    >>> pearson = mx.metric.PearsonCorrelation()
    >>> pearson.update(labels=[mx.nd.array([1, 2, 3, 4])], preds=[mx.nd.array([2, 4, 6, 9])])
    >>> name, value = pearson.get()
    >>> name, round(float(value), 4)
    ('pearsonr', 0.9944)
    """

    def __init__(self, name='pearsonr', output_names=None, label_names=None, average='macro'):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset(self):
        super().reset()
        self._count = 0
        self._mean_label = self._mean_pred = 0.
        self._m2_label = self._m2_pred = self._comoment = 0.

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _host(label).ravel().astype(numpy.float64)
            pred = _host(pred).ravel().astype(numpy.float64)
            if self.average == 'macro':
                self._accumulate(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._stream(label, pred)
                self.num_inst += 1
                self.global_num_inst += 1

    def _stream(self, label, pred):
        """Welford/Chan update of the means, second moments and co-moment with one batch."""
        self._count += len(label)
        d_label, d_pred = label - self._mean_label, pred - self._mean_pred
        self._mean_label += d_label.sum() / self._count
        self._mean_pred += d_pred.sum() / self._count
        self._m2_label += numpy.sum(d_label * (label - self._mean_label))
        self._m2_pred += numpy.sum(d_pred * (pred - self._mean_pred))
        self._comoment += numpy.sum(d_label * (pred - self._mean_pred))

    def get(self):
        if self.num_inst == 0:
            return self.name, float('nan')
        if self.average == 'macro':
            return self.name, self.sum_metric / self.num_inst
        return self.name, self._comoment / numpy.sqrt(self._m2_label * self._m2_pred)


@register
class Loss(EvalMetric):
    """Mean of loss values: ``update(_, preds)`` sums the predictions (the losses).

    Example
    -------
    >>> loss = mx.metric.Loss()
    >>> loss.update(None, [mx.nd.array([0.5, 1.5]), mx.nd.array([1.0])])   # the labels are ignored
    >>> loss.get()
    ('loss', 1.0)
    """

    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            self._accumulate(_host(pred).sum(), pred.size)


@register
class Torch(Loss):
    """Dummy metric for torch criterions (a :class:`Loss`).

    Example
    -------
    >>> metric = mx.metric.Torch()
    >>> metric.update(None, [mx.nd.array([2.0, 4.0])])
    >>> metric.get()
    ('torch', 3.0)
    """

    def __init__(self, name='torch', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


@register
class Caffe(Loss):
    """Dummy metric for caffe criterions (a :class:`Loss`).

    Example
    -------
    >>> metric = mx.metric.Caffe()
    >>> metric.update(None, [mx.nd.array([2.0, 4.0])])
    >>> metric.get()
    ('caffe', 3.0)
    """

    def __init__(self, name='caffe', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred) -> value`` or ``-> (sum, count)`` on numpy arrays.

    Parameters
    ----------
    feval : callable
    name : str, optional
        Defaults to ``feval.__name__`` (``custom(<lambda>)`` for lambdas).
    allow_extra_outputs : bool
        Allow more predictions than labels.

    Example
    -------
    >>> def max_abs_error(label, pred):
    ...     return np.abs(label - pred).max()
    >>> metric = mx.metric.CustomMetric(max_abs_error)
    >>> metric.update([mx.nd.array([1, 2]), mx.nd.array([0, 0])], [mx.nd.array([1, 3]), mx.nd.array([3, 0])])
    >>> metric.get()                            # the mean over the two pairs: (1 + 3) / 2
    ('max_abs_error', 2.0)
    >>> mx.metric.CustomMetric(lambda label, pred: 0.0).name
    'custom(<lambda>)'
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if '<' in name:
                name = 'custom(%s)' % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names, has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            value = self._feval(_host(label), _host(pred))
            if isinstance(value, tuple):
                self._accumulate(*value)
            else:
                self._accumulate(value, 1)

    def get_config(self):
        raise NotImplementedError('CustomMetric cannot be serialized')


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """Make a :class:`CustomMetric` from a function of numpy ``(label, pred)`` (usable as a decorator)."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
