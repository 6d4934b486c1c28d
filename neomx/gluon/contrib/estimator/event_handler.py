"""Event handlers: the callbacks that :class:`Estimator` runs around batches and epochs.

A handler subclasses one or more of the event mixins (:class:`TrainBegin`,
:class:`EpochBegin`, :class:`BatchBegin`, :class:`BatchEnd`, :class:`EpochEnd`,
:class:`TrainEnd`) and is called only for those events. ``batch_end`` and ``epoch_end``
return True to stop training. Handlers run in ascending ``priority`` (default 0).
"""
import math
import operator
import re
import time
import warnings

from .... import _fileio, _rng_state, ndarray
from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as LossMetric
from .utils import _check_metrics

__all__ = ['TrainBegin', 'TrainEnd', 'EpochBegin', 'EpochEnd', 'BatchBegin', 'BatchEnd',
           'StoppingHandler', 'MetricHandler', 'ValidationHandler',
           'LoggingHandler', 'CheckpointHandler', 'EarlyStoppingHandler', 'GradientUpdateHandler']


class EventHandler:
    """Base class of every event handler."""


def _check_event_handlers(handlers):
    """Normalise ``handlers`` (a handler, a list of them or None) to a new list.

    Raises
    ------
    ValueError
        If an element is not an EventHandler.
    """
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(handler, EventHandler) for handler in handlers):
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         "got: {}".format(handlers))
    return handlers


class TrainBegin(EventHandler):
    """Called once before the first epoch.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Announce(mx.gluon.contrib.estimator.TrainBegin):
    ...     def train_begin(self, estimator, *args, **kwargs):
    ...         print('training for', estimator.max_epoch, 'epochs')
    >>> est.fit(data, epochs=2, event_handlers=[Announce()])
    training for 2 epochs
    """

    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    """Called once after training stopped.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Report(mx.gluon.contrib.estimator.TrainEnd):
    ...     def train_end(self, estimator, *args, **kwargs):
    ...         print('done:', estimator.train_metrics[0].get())
    >>> est.fit(data, epochs=2, event_handlers=[Report()])
    done: ('training accuracy', 1.0)
    """

    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    """Called before each epoch (and before each evaluation).

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Decay(mx.gluon.contrib.estimator.EpochBegin):
    ...     def epoch_begin(self, estimator, *args, **kwargs):
    ...         estimator.trainer.set_learning_rate(estimator.trainer.learning_rate / 2)
    >>> est.fit(data, epochs=3, event_handlers=[Decay()])
    >>> trainer.learning_rate                   # halved before each of the 3 epochs
    0.125
    """

    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    """Called after each epoch; returning True stops training.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class StopWhenPerfect(mx.gluon.contrib.estimator.EpochEnd):
    ...     def epoch_end(self, estimator, *args, **kwargs):
    ...         name, accuracy = estimator.train_metrics[0].get()
    ...         print(name, accuracy)
    ...         return accuracy == 1.0              # True stops training
    >>> est.fit(data, epochs=10, event_handlers=[StopWhenPerfect()])
    training accuracy 0.75
    training accuracy 1.0
    """

    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    """Called before each batch with ``batch=``.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Shapes(mx.gluon.contrib.estimator.BatchBegin):
    ...     def batch_begin(self, estimator, *args, **kwargs):
    ...         print(kwargs['batch'][0].shape)
    >>> est.fit(data, epochs=1, event_handlers=[Shapes()])
    (2, 2)
    (2, 2)
    """

    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    """Called after each batch with ``batch=, pred=, label=, loss=``; returning True stops
    the current epoch (and training, through :class:`StoppingHandler`).

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Losses(mx.gluon.contrib.estimator.BatchEnd):
    ...     def batch_end(self, estimator, *args, **kwargs):
    ...         print(kwargs['loss'][0].mean().asnumpy().round(4))
    >>> est.fit(data, epochs=1, event_handlers=[Losses()])
    [0.6931]
    [0.3133]
    """

    def batch_end(self, estimator, *args, **kwargs):
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop once ``max_epoch`` epochs or ``max_batch`` batches have run.

    Parameters
    ----------
    max_epoch : int, optional
    max_batch : int, optional
        Both are re-read from the estimator (``estimator.max_epoch``/``max_batch``) at
        train begin, so that a resumed checkpoint can shorten them.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> est.fit(data, batches=3)                 # a StoppingHandler ends training after 3 batches
    >>> stopper = mx.gluon.contrib.estimator.StoppingHandler(max_epoch=5, max_batch=3)
    >>> stopper.train_begin(est)                # takes the estimator's limits
    >>> stopper.max_epoch, stopper.max_batch
    (None, 3)
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset ``metrics`` at epoch begin and update them at batch end.

    A :class:`mxnet.metric.Loss` metric is updated with the loss values, any other metric
    with ``(label, pred)``.

    Parameters
    ----------
    metrics : EvalMetric or list of EvalMetric
    priority : float, default -1000
        Runs before the handlers (logging, checkpoints) that read the metrics.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> accuracy = mx.metric.Accuracy()
    >>> handler = mx.gluon.contrib.estimator.MetricHandler([accuracy])
    >>> handler.batch_end(est, label=[mx.nd.array([1, 0])], pred=[mx.nd.array([[0, 1], [0, 1]])],
    ...                   loss=[mx.nd.zeros(2)])
    >>> accuracy.get()
    ('accuracy', 0.5)
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            if isinstance(metric, LossMetric):
                metric.update(0, kwargs['loss'])
            else:
                metric.update(kwargs['label'], kwargs['pred'])


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Run ``eval_fn`` on ``val_data`` every ``epoch_period`` epochs and/or every
    ``batch_period`` batches.

    Parameters
    ----------
    val_data : DataLoader
    eval_fn : callable
        Called as ``eval_fn(val_data=, batch_axis=, event_handlers=)``, typically
        ``estimator.evaluate``.
    epoch_period : int, default 1
        0 or None: never at epoch end.
    batch_period : int, optional
        None: never at batch end.
    priority : float, default -1000
    event_handlers : EventHandler or list of EventHandler, optional
        Passed on to ``eval_fn``.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Counter(mx.gluon.contrib.estimator.EpochEnd):
    ...     count = 0
    ...     def epoch_end(self, estimator, *args, **kwargs):
    ...         Counter.count += 1
    >>> validate = mx.gluon.contrib.estimator.ValidationHandler(data, est.evaluate, epoch_period=2,
    ...                                                         event_handlers=[Counter()])
    >>> est.fit(data, epochs=4, event_handlers=[validate])
    >>> Counter.count                           # validated after epochs 2 and 4
    2
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        self._validate_every(self.batch_period, self.current_batch, estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        self._validate_every(self.epoch_period, self.current_epoch, estimator)

    def _validate_every(self, period, count, estimator):
        if period and count % period == 0:
            self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                         event_handlers=self.event_handlers)


def _format_metrics(msg, metrics):
    """``msg`` followed by ``name: value`` of every metric, comma-separated."""
    values = ['%s: %.4f' % metric.get() for metric in metrics]
    return (msg + ', '.join(values)).rstrip(', ')


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log the optimizer, the progress and ``metrics`` through ``estimator.logger``.

    Parameters
    ----------
    log_interval : int or 'epoch', default 'epoch'
        ``'epoch'``: log at epoch begin and end; an integer k: also log every k batches
        (batches 0, k, 2k, ... of each epoch) with the time spent since the last log.
    metrics : list of EvalMetric, optional
        Logged at batch end, epoch end and train end. A metric named ``training ...``
        makes epoch begin log the learning rate, otherwise ``Validation Begin``.
    priority : float, default inf
        Runs last, once every other handler has updated its state.

    Raises
    ------
    ValueError
        If ``log_interval`` is neither an integer nor ``'epoch'``.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> logging_handler = mx.gluon.contrib.estimator.LoggingHandler(log_interval=1, metrics=est.train_metrics)
    >>> est.fit(data, epochs=1, event_handlers=[logging_handler])
    Training begin: using optimizer SGD with current learning rate 1.0000
    Train for 1 epochs.
    [Epoch 0] Begin, current learning rate: 1.0000
    [Epoch 0][Batch 0][Samples 2] time/interval: ...s training accuracy: ..., training softmaxcrossentropyloss: ...
    [Epoch 0][Batch 1][Samples 4] time/interval: ...s training accuracy: ..., training softmaxcrossentropyloss: ...
    [Epoch 0] Finished in ...s, training accuracy: ..., training softmaxcrossentropyloss: ...
    Train finished using total ...s with 1 epochs. training accuracy: ..., training softmaxcrossentropyloss: ...
    """

    def __init__(self, log_interval='epoch', metrics=None, priority=math.inf):
        if not isinstance(log_interval, int) and log_interval != 'epoch':
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = 0.0

    def _logs_batches(self):
        return isinstance(self.log_interval, int)

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate %.4f ",
                              type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        msg = 'Train finished using total %ds with %d epochs. ' % (
            time.time() - self.train_start, self.current_epoch)
        estimator.logger.info(_format_metrics(msg, self.metrics))

    def batch_begin(self, estimator, *args, **kwargs):
        if self._logs_batches():
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if self._logs_batches():
            self.processed_samples += kwargs['batch'][0].shape[0]
            self.log_interval_time += time.time() - self.batch_start
            if self.batch_index % self.log_interval == 0:
                msg = '[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs ' % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info(_format_metrics(msg, self.metrics))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        # the Estimator prefixes its training metrics with 'training'
        if any('training' in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = '[Epoch %d] Finished in %.3fs, ' % (self.current_epoch, time.time() - self.epoch_start)
        estimator.logger.info(_format_metrics(msg, self.metrics))
        self.current_epoch += 1
        self.batch_index = 0


def _improvement_test(monitor, mode, owner):
    """The comparison ``(new, best) -> bool`` telling whether ``monitor`` improved.

    ``mode`` 'min' compares with <, 'max' with >. An unknown mode warns and falls back to
    'auto', and 'auto' resolves to > with a warning, whatever the metric: MXNet 1.9.1's
    test of the metric name always succeeds, and the same choice keeps the same
    stopping and saving decisions.
    """
    if mode not in ('auto', 'min', 'max'):
        warnings.warn('%s mode %s is unknown, fallback to auto mode. CheckpointHandler will use'
                      'max mode for f1 and accuracy metric comparison and use min mode other wise'
                      % (owner, mode), RuntimeWarning)
        mode = 'auto'
    if mode == 'min':
        return operator.lt
    if mode == 'auto':
        warnings.warn("`greater` operator will be used to determine if {} has improved. "
                      "Please specify `mode='min'` to use the `less` operator. "
                      "Specify `mode='max' to disable this warning.`".format(monitor.get()[0]))
    return operator.gt


def _worst_value(monitor_op):
    """The starting ``best`` value that any first measurement improves on."""
    return math.inf if monitor_op is operator.lt else -math.inf


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save the parameters and the trainer states periodically, optionally the best ones.

    Files in ``model_dir``: ``<prefix>-epoch<e>batch<b>.params`` and ``.states``; with
    ``save_best`` also ``<prefix>-best.params``/``.states``; after the first batch
    ``<prefix>-symbol.json`` if the net is a hybridized HybridBlock. At epoch end ``b`` is
    the number of batches trained so far, at batch end the index of the last batch.

    Parameters
    ----------
    model_dir : str
        A local folder (created if missing) or a URL of any filesystem fsspec knows
        (``s3://bucket/run1``, ``gs://...``, ``memory://...``); see ``mx.nd.save``.
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        The metric ``save_best`` watches (one of the estimator's metrics).
    verbose : int, default 0
        1: log every save.
    save_best : bool, default False
    mode : {'auto', 'min', 'max'}, default 'auto'
        How ``save_best`` compares values (see ``_improvement_test``).
    epoch_period : int, default 1
        Save every this many epochs (0 or None: never at epoch end).
    batch_period : int, optional
        Save every this many batches.
    max_checkpoints : int, default 5
        Keep at most this many periodic checkpoints written in this run, deleting the
        oldest; the best one does not count.
    resume_from_checkpoint : bool, default False
        At train begin, load the latest checkpoint in ``model_dir`` and shorten the
        estimator's epochs (or batches) by what it has already trained.

    Raises
    ------
    ValueError
        If ``save_best`` is set without an EvalMetric ``monitor``.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> checkpoint = mx.gluon.contrib.estimator.CheckpointHandler(folder.name, model_prefix='net',
    ...                                                           max_checkpoints=2)
    >>> est.fit(data, epochs=3, event_handlers=[checkpoint])
    >>> sorted(os.listdir(folder.name))         # the last two epochs': parameters, random state, trainer
    ['net-epoch1batch4.params', 'net-epoch1batch4.rng', 'net-epoch1batch4.states',
     'net-epoch2batch6.params', 'net-epoch2batch6.rng', 'net-epoch2batch6.states']
    >>> folder.cleanup()
    """

    def __init__(self, model_dir, model_prefix='model', monitor=None, verbose=0, save_best=False,
                 mode='auto', epoch_period=1, batch_period=None, max_checkpoints=5,
                 resume_from_checkpoint=False):
        _fileio.makedirs(model_dir)
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric objects "
                             "from estimator.train_metrics and estimator.val_metrics as monitor.")
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = self.trained_batch = -1
        self.saved_checkpoints = []
        if save_best:
            self.monitor_op = _improvement_test(monitor, mode, 'ModelCheckpoint')
            self.best = _worst_value(self.monitor_op)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = _worst_value(self.monitor_op)
        if self.resume_from_checkpoint:
            self._check_resumable_periods(estimator)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _checkpoint_numbers(self, estimator):
        """The ``(epoch, batch)`` numbers of the checkpoint saved now, counted from the
        resumed checkpoint when there is one."""
        if not self.resume_from_checkpoint:
            return self.current_epoch, self.current_batch
        epoch = self.current_epoch + self.trained_epoch + 1
        # at epoch end the batch counter already counts the last batch
        batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        return epoch, batch

    def _save_checkpoint(self, estimator):
        prefix = '%s-epoch%dbatch%d' % ((self.model_prefix,) + self._checkpoint_numbers(estimator))
        self._save_params_and_trainer(estimator, prefix)
        self.saved_checkpoints.append(prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            self._remove_checkpoint(self.saved_checkpoints.pop(0))
        if self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: trained total %d batches, '
                                  'saving model at %s with prefix: %s',
                                  self.current_epoch, self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            self._save_if_best(estimator)

    def _save_if_best(self, estimator):
        monitor_name, monitor_value = self.monitor.get()
        if math.isnan(monitor_value):
            warnings.warn('Skipping save best because %s is not updated, make sure you pass one of '
                          'the metric objects estimator.train_metrics and estimator.val_metrics '
                          'as monitor' % monitor_name, RuntimeWarning)
        elif self.monitor_op(monitor_value, self.best):
            prefix = self.model_prefix + '-best'
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info('[Epoch %d] CheckpointHandler: %s improved from %0.5f to '
                                      '%0.5f, updating best model at %s with prefix: %s',
                                      self.current_epoch, monitor_name, self.best, monitor_value,
                                      self.model_dir, prefix)
            self.best = monitor_value
        elif self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: %s did not improve from %0.5f, '
                                  'skipping updating best model',
                                  self.current_epoch, monitor_name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = _fileio.join(self.model_dir, self.model_prefix + '-symbol.json')
        graph = getattr(estimator.net, '_cached_graph', None)
        if graph is not None:
            graph.symbol.save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock "
                "to construct your model, and call net.hybridize() before passing to "
                "Estimator in order to save model architecture as %s.", symbol_file)

    def _checkpoint_files(self, prefix):
        return tuple(_fileio.join(self.model_dir, prefix + ext) for ext in ('.params', '.states', '.rng'))

    def _save_params_and_trainer(self, estimator, prefix):
        # Each file is written atomically and the .states last: a checkpoint is complete
        # (and resumable) once its .states exists.
        param_file, trainer_file, rng_file = self._checkpoint_files(prefix)
        estimator.net.save_parameters(param_file)
        ndarray.save(rng_file, _rng_state.capture())
        estimator.trainer.save_states(trainer_file)

    def _remove_checkpoint(self, prefix):
        for fname in self._checkpoint_files(prefix):
            _fileio.remove(fname)

    def _check_resumable_periods(self, estimator):
        """Resuming needs checkpoints of the kind (epoch or batch) training counts."""
        periods = (bool(self.epoch_period), bool(self.batch_period))
        if periods != ((False, True) if estimator.max_batch else (True, False)):
            raise AssertionError(
                "To use resume from checkpoint, you must only specify the same type of period "
                "you used for training.For example, if you are training based on number of "
                "epochs,you must save only based on epochs, and set batch_period to None.")

    def _latest_checkpoint(self):
        """``(epoch, batch)`` of the latest ``<prefix>-epoch<e>batch<b>.params`` in
        ``model_dir``, or ``(-1, -1)`` when there is none."""
        head = self.model_prefix + '-epoch'
        pattern = re.compile(r'%s(\d+)batch(\d+)\.params' % re.escape(head))
        latest = (-1, -1)
        for fname in _fileio.listdir(self.model_dir):
            if not (fname.startswith(head) and '.params' in fname):
                continue
            match = pattern.match(fname)
            if match is None:
                raise ValueError("Error parsing checkpoint file, please check your checkpoints "
                                 "have the format: {model_name}-epoch{epoch_number}batch"
                                 "{batch_number}.params, there should also be a .states file "
                                 "for each .params file ")
            if _fileio.exists(self._checkpoint_files(fname[:-len('.params')])[1]):
                latest = max(latest, (int(match.group(1)), int(match.group(2))))    # complete ones
        return latest

    def _resume_from_checkpoint(self, estimator):
        self.trained_epoch, self.trained_batch = self._latest_checkpoint()
        if self.trained_epoch == -1:
            estimator.logger.info(
                "CheckpointHandler: No checkpoint found, training from scratch for "
                + ("%d batches" % estimator.max_batch if estimator.max_batch
                   else "%d epochs" % estimator.max_epoch))
            return
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to train for "
               % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError("Found checkpoint with maximum number of epoch %d reached, please "
                                 "specify resume_from_checkpoint=False (default value) if you wan "
                                 "to train from scratch." % estimator.max_epoch)
            estimator.max_epoch -= self.trained_epoch + 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError("Found checkpoint with maximum number of batch %d reached, please "
                                 "specifyresume_from_checkpoint=False (default value) if you wan "
                                 "to train from scratch." % self.trained_batch)
            estimator.max_batch -= self.trained_batch + 1
            msg += "%d batches " % estimator.max_batch
        param_file, trainer_file, rng_file = self._checkpoint_files(
            '%s-epoch%dbatch%d' % (self.model_prefix, self.trained_epoch, self.trained_batch))
        estimator.net.load_parameters(param_file, ctx=estimator.context)
        estimator.trainer.load_states(trainer_file)
        if _fileio.exists(rng_file):
            _rng_state.restore(ndarray.load(rng_file))
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : EvalMetric
        One of the estimator's (non-composite) metrics.
    min_delta : float, default 0
        The smallest change that counts as an improvement.
    patience : int, default 0
        Epochs without improvement tolerated before stopping.
    mode : {'auto', 'min', 'max'}, default 'auto'
        How values are compared (see ``_improvement_test``).
    baseline : float, optional
        The value to improve on first (instead of +-inf).

    Raises
    ------
    ValueError
        If ``monitor`` is not an EvalMetric or is a CompositeEvalMetric.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> loss_metric = est.train_metrics[1]
    >>> loss_metric.name
    'training softmaxcrossentropyloss'
    >>> stop = mx.gluon.contrib.estimator.EarlyStoppingHandler(monitor=loss_metric, min_delta=10, mode='min')
    >>> est.fit(data, epochs=10, event_handlers=[stop])       # no epoch improves the loss by 10
    >>> stop.stopped_epoch
    1
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode='auto', baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from estimator.train_metrics "
                             "and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.monitor_op = _improvement_test(monitor, mode, 'EarlyStopping')
        # signed so that `value - min_delta` must beat `best` by at least |min_delta|
        self.min_delta = min_delta if self.monitor_op is operator.gt else -min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = _worst_value(self.monitor_op)

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = self.baseline if self.baseline is not None else _worst_value(self.monitor_op)

    def epoch_end(self, estimator, *args, **kwargs):
        monitor_name, monitor_value = self.monitor.get()
        if math.isnan(monitor_value):
            warnings.warn('%s is not updated, make sure you pass one of the metric objects from '
                          'estimator.train_metrics and estimator.val_metrics as monitor.'
                          % monitor_name, RuntimeWarning)
        elif self.monitor_op(monitor_value - self.min_delta, self.best):
            self.best = monitor_value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info('[Epoch %d] EarlyStoppingHanlder: early stopping due to %s not '
                                  'improving', self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Apply the gradients at batch end: ``trainer.step(batch_size)`` with the batch size
    counted from the per-context losses.

    Parameters
    ----------
    priority : float, default -2000
        Runs before the metric handler.

    Example
    -------
    >>> import logging
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize(mx.init.Zero())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu())
    >>> est.logger.setLevel(logging.WARNING)      # no progress log
    >>> class Show(mx.gluon.contrib.estimator.BatchEnd):       # default priority 0: after the update
    ...     def batch_end(self, estimator, *args, **kwargs):
    ...         print(net.weight.data()[0].asnumpy().round(4))
    >>> est.fit(data, batches=1, event_handlers=[mx.gluon.contrib.estimator.GradientUpdateHandler(), Show()])
    [ 0.25 -0.25]
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs['loss']
        losses = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(l.shape[0] for l in losses))
