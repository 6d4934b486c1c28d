"""The Gluon Estimator: a fit/evaluate loop around a net, a loss and a trainer."""
import copy
import logging
import sys
import warnings

from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as LossMetric
from ...data import DataLoader
from ...loss import Loss
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler,
                            LoggingHandler, MetricHandler, StoppingHandler, TrainBegin, TrainEnd,
                            ValidationHandler, _check_event_handlers)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ['Estimator']

# the events of a run, each with the mixin a handler subclasses to receive it
_EVENTS = (('train_begin', TrainBegin), ('epoch_begin', EpochBegin), ('batch_begin', BatchBegin),
           ('batch_end', BatchEnd), ('epoch_end', EpochEnd), ('train_end', TrainEnd))

_NOT_A_DATALOADER = ("Estimator only support input as Gluon DataLoader. Alternatively, you can "
                     "transform your DataIter or any NDArray into Gluon DataLoader. Refer to %s")


def _handlers_by_event(handlers):
    """One list per event of ``_EVENTS`` (in that order): the handlers, in their order, that
    subclass the event's mixin."""
    return tuple([h for h in handlers if isinstance(h, mixin)] for _, mixin in _EVENTS)


class _HandlerCalls:
    """The handlers of one run (in calling order), grouped by event."""

    def __init__(self, handlers):
        self._by_event = dict(zip((event for event, _ in _EVENTS), _handlers_by_event(handlers)))

    def fire(self, event, estimator, **kwargs):
        """Call every handler of ``event``; True if any of them asked to stop."""
        results = [getattr(handler, event)(estimator, **kwargs) for handler in self._by_event[event]]
        return any(results)


class Estimator:
    """Train and evaluate a Gluon network with event handlers.

    Parameters
    ----------
    net : gluon.Block
        The network; initialized here (with ``initializer``) unless it already is.
    loss : gluon.loss.Loss
        The training objective.
    train_metrics : EvalMetric or list of EvalMetric, optional
        Default: accuracy for a softmax cross-entropy loss, plus a ``Loss`` metric named
        after the loss. Every training metric is renamed ``training <name>``.
    val_metrics : EvalMetric or list of EvalMetric, optional
        Default: copies of the training metrics. Renamed ``validation <name>``.
    initializer : Initializer, optional
        Ignored, with a warning, for a fully initialized net.
    trainer : gluon.Trainer, optional
        Default: SGD with learning rate 0.001, with a warning.
    context : Context or list of Context, optional
        Default: gpu(0) if there is a GPU, else cpu().
    val_net : gluon.Block, optional
        The network evaluated on validation data (usually sharing ``net``'s parameters);
        default ``net``.
    val_loss : gluon.loss.Loss, optional
        The validation loss; default ``loss``.
    batch_processor : BatchProcessor, optional
        Anything with ``fit_batch`` and ``evaluate_batch`` methods.

    Attributes
    ----------
    logger : logging.Logger
        A logger of its own (not in the logging hierarchy) that prints INFO and above to
        stdout; every handler logs through it.
    max_epoch, max_batch, batch_axis
        The arguments of the current :meth:`fit`, read by the handlers.

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
    >>> est.fit(data, epochs=2)
    Training begin: using optimizer SGD with current learning rate 1.0000
    ...
    Train finished using total ...s with 2 epochs. training accuracy: ..., training softmaxcrossentropyloss: ...
    >>> est.evaluate(data)
    Validation Begin
    [Epoch 0] Finished in ...s, validation accuracy: 1.0000, validation softmaxcrossentropyloss: ...
    >>> est.val_metrics[0].get()                # after two epochs the classes are separated
    ('validation accuracy', 1.0)
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = self._training_metrics(_check_metrics(train_metrics))
        self._val_metrics = self._validation_metrics(_check_metrics(val_metrics))
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name='Estimator', level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0

    @property
    def train_metrics(self):
        """The training metrics (named ``training ...``)."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The validation metrics (named ``validation ...``)."""
        return self._val_metrics

    # ------------------------------------------------------------------ construction
    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, Loss):
            raise ValueError("loss must be a Loss, refer to gluon.loss.Loss:{}".format(loss))
        return loss

    def _training_metrics(self, metrics):
        if not metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            metrics = [suggested] if suggested else []
            # the loss block's name without its instance counter ('softmaxcrossentropyloss0')
            metrics.append(LossMetric(self.loss.name.rstrip('0123456789')))
        for metric in metrics:
            metric.name = 'training ' + metric.name
        return metrics

    def _validation_metrics(self, metrics):
        if not metrics:
            metrics = [copy.deepcopy(metric) for metric in self._train_metrics]
        for metric in metrics:
            if 'training' in metric.name:
                metric.name = metric.name.replace('training', 'validation')
            else:
                metric.name = 'validation ' + metric.name
        return metrics

    @staticmethod
    def _check_context(context):
        available_gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(available_gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default.To utilize "
                              "all your GPUs, specify context as a list of gpus, e.g. "
                              "context=[mx.gpu(0), mx.gpu(1)] ")
            return available_gpus[:1] or [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example mx.cpu() "
                             "or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:{}".format(context))
        for ctx in context:
            if ctx not in available_gpus and not str(ctx).startswith('cpu'):
                raise AssertionError("%s is not available, please make sure your context is in one "
                                     "of: mx.cpu(), %s" % (ctx, ", ".join(map(str, available_gpus))))
        return context

    def _is_initialized(self):
        try:
            for param in self.net.collect_params().values():
                param.list_ctx()
        except RuntimeError:
            return False
        return True

    def _initialize(self, initializer):
        if not self._is_initialized():
            # only the uninitialized parameters are initialized: the others keep their values
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You don't "
                          "need to pass initializer if you already initialized your net. You can "
                          "use net.initialize(init=your_initializer, force_reinit=True)to force "
                          "re-initialize.")

    def _check_trainer(self, trainer):
        if trainer is None:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate 0.001 "
                          "is used.")
            return Trainer(self.net.collect_params(), 'sgd', {'learning_rate': 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("Trainer must be a Gluon Trainer instance, refer to "
                             "gluon.Trainer:{}".format(trainer))
        return trainer

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, 'fit_batch', None))
                and callable(getattr(batch_processor, 'evaluate_batch', None))):
            raise ValueError('Customized Batch Processor must contain fit_batch() and '
                             'evaluate_batch() methods')
        return batch_processor

    # ------------------------------------------------------------------ running
    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Evaluate ``val_net`` on every batch of ``val_data`` and update the validation
        metrics.

        Parameters
        ----------
        val_data : DataLoader
        batch_axis : int, default 0
            Axis along which batches are split over the contexts.
        event_handlers : EventHandler or list of EventHandler, optional
            A MetricHandler and a LoggingHandler on the validation metrics are added unless
            given. Only the epoch and batch events are fired.

        Raises
        ------
        ValueError
            If ``val_data`` is not a DataLoader, or a handler refers to a metric that is not
            one of ``val_metrics``.
        """
        if not isinstance(val_data, DataLoader):
            raise ValueError(_NOT_A_DATALOADER % 'gluon.data.DataLoader')
        for metric in self.val_metrics:
            metric.reset()
        calls = _HandlerCalls(self._prepare_default_validation_handlers(event_handlers))
        calls.fire('epoch_begin', self)
        for batch in val_data:
            calls.fire('batch_begin', self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            calls.fire('batch_end', self, batch=batch, pred=pred, label=label, loss=loss)
        calls.fire('epoch_end', self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train for ``epochs`` epochs or ``batches`` batches (exactly one of them).

        Parameters
        ----------
        train_data : DataLoader
        val_data : DataLoader, optional
            With it, a ValidationHandler evaluating every epoch is added unless given.
        epochs : int, optional
        event_handlers : EventHandler or list of EventHandler, optional
            A StoppingHandler, and unless given a GradientUpdateHandler, a MetricHandler and
            a LoggingHandler on the training metrics, are added.
        batches : int, optional
        batch_axis : int, default 0
            Axis along which batches are split over the contexts.

        Raises
        ------
        ValueError
            If ``train_data`` is not a DataLoader, if not exactly one of ``epochs`` and
            ``batches`` is given, or if user handlers mixed with default ones refer to a
            metric that is not one of the estimator's.
        """
        if not isinstance(train_data, DataLoader):
            raise ValueError(_NOT_A_DATALOADER % 'gluon.data.dataloader')
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number of "
                             "epochs or number of batches.Please specify one and only one of: "
                             "epochs or batches.")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        calls = _HandlerCalls(self._prepare_default_handlers(val_data, event_handlers))
        calls.fire('train_begin', self)
        stop = False
        while not stop:
            calls.fire('epoch_begin', self)
            self._fit_epoch(train_data, calls, batch_axis)
            stop = calls.fire('epoch_end', self)
        calls.fire('train_end', self)

    def _fit_epoch(self, train_data, calls, batch_axis):
        """Train on the batches of one epoch until they run out or a handler stops it."""
        for batch in train_data:
            calls.fire('batch_begin', self, batch=batch)
            _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
            if calls.fire('batch_end', self, batch=batch, pred=pred, label=label, loss=loss):
                return

    # ------------------------------------------------------------------ default handlers
    def _categorize_handlers(self, event_handlers):
        """The handlers of each event: six lists (train_begin, epoch_begin, batch_begin,
        batch_end, epoch_end, train_end), each holding, in order, the handlers of
        ``event_handlers`` that subclass that event's mixin."""
        return _handlers_by_event(event_handlers)

    def _prepare_default_handlers(self, val_data, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        defaults = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not _has(handlers, GradientUpdateHandler):
            defaults.append(GradientUpdateHandler())
        if not _has(handlers, MetricHandler):
            defaults.append(MetricHandler(metrics=self.train_metrics))
        if val_data and not _has(handlers, ValidationHandler):
            defaults.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not _has(handlers, LoggingHandler):
            defaults.append(LoggingHandler(metrics=self.train_metrics))
        return _merge_handlers(handlers, defaults, self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        defaults = []
        if not _has(handlers, MetricHandler):
            defaults.append(MetricHandler(metrics=self.val_metrics))
        if not _has(handlers, LoggingHandler):
            defaults.append(LoggingHandler(metrics=self.val_metrics))
        return _merge_handlers(handlers, defaults, self.val_metrics)


def _has(handlers, kind):
    return any(isinstance(handler, kind) for handler in handlers)


def _merge_handlers(handlers, defaults, known_metrics):
    """``handlers`` and ``defaults`` in calling order: ascending priority (default 0), ties
    in list order. When both are non-empty, every handler must work on ``known_metrics``
    (a default handler would otherwise log or update other metrics than the user's)."""
    merged = handlers + defaults
    if handlers and defaults:
        known_metrics = set(known_metrics)
        for handler in merged:
            _check_handler_metric_ref(handler, known_metrics)
    return sorted(merged, key=lambda handler: getattr(handler, 'priority', 0))
