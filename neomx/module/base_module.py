"""``BaseModule``: the training, scoring and prediction loops shared by every module.

A module is a network with its parameters and optimizer, driven by a few primitives
(``bind``, ``init_params``, ``init_optimizer``, ``forward``, ``backward``, ``update``,
``update_metric``, ``get_outputs``); this class builds ``fit``, ``score`` and ``predict`` from
them, as MXNet's ``mx.mod.BaseModule`` does.
"""
import logging
import time
import warnings

import numpy as np

from .. import metric as _metric
from .. import ndarray as nd
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam
from ..ndarray.ndarray import NDArray
from ..ndarray.utils import load_named

__all__ = ['BaseModule', 'BatchEndParam']

# names MXNet's module also holds
from ..context import cpu  # noqa: E402,F401

_WEIGHT_SUFFIXES = ('_weight', '_bias', '_gamma', '_beta')


def _as_list(obj):
    """``obj`` as a list (a list or tuple is kept, None gives an empty list)."""
    if obj is None:
        return []
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _call_all(callbacks, *args):
    for callback in _as_list(callbacks):
        callback(*args)


def check_input_names(symbol, names, kind, throw):
    """Check that each of ``names`` is an argument of ``symbol``.

    Parameters
    ----------
    kind : str
        ``'data'``, ``'label'`` or ``'state'``, for the message.
    throw : bool
        Raise ValueError (else warn) for a missing name.
    """
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        inputs = [a for a in args if not a.endswith(_WEIGHT_SUFFIXES)]
        msg = ('Module(..., %s_names=%s): %r is not an argument of the symbol; its inputs are: %s'
               % (kind, list(names), name, ', '.join(inputs)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _as_descs(shapes):
    """DataDescs from DataDescs or ``(name, shape)`` pairs."""
    return [s if isinstance(s, DataDesc) else DataDesc(*s) for s in shapes]


def _check_names_match(names, descs, kind, throw):
    given = [d.name for d in descs]
    if sorted(names) == sorted(given):
        return
    msg = 'Data provided by %s_shapes does not match the names given by %s_names: %s vs. %s' % (
        kind, kind, given, list(names))
    if throw:
        raise ValueError(msg)
    warnings.warn(msg)


def parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """``(data_descs, label_descs or None)`` from shapes given as DataDescs or pairs, checked
    against the module's input names."""
    data_shapes = _as_descs(data_shapes)
    _check_names_match(data_names, data_shapes, 'data', True)
    if label_shapes is None:
        _check_names_match(label_names, [], 'label', False)
        return data_shapes, None
    label_shapes = _as_descs(label_shapes)
    _check_names_match(label_names, label_shapes, 'label', True)
    return data_shapes, label_shapes


class BaseModule:
    """The generic loops over a module's primitives.

    Parameters
    ----------
    logger : logging.Logger or the logging module
        Where ``fit`` reports metrics and times.

    Attributes
    ----------
    binded, for_training, inputs_need_grad, params_initialized, optimizer_initialized : bool
        The module's state; each primitive checks the ones it needs.

    Example
    -------
    :class:`Module` is the usual concrete module; ``fit``, ``score`` and ``predict`` are
    this class's loops:

    >>> data = mx.sym.var('data')
    >>> fc = mx.sym.FullyConnected(data, num_hidden=1, name='fc')
    >>> net = mx.sym.LinearRegressionOutput(fc, name='out')
    >>> x = np.array([[0.], [1.], [2.], [3.]])
    >>> train = mx.io.NDArrayIter(x, 2 * x + 1, batch_size=2, label_name='out_label')
    >>> mod = mx.mod.Module(net, label_names=['out_label'])
    >>> isinstance(mod, mx.mod.BaseModule)
    True
    >>> mod.fit(train, num_epoch=20, initializer=mx.init.Zero(), optimizer_params={'learning_rate': 0.1})
    >>> name, mse = mod.score(train, 'mse')[0]
    >>> name, mse < 0.1
    ('mse', True)
    >>> mod.predict(train).shape
    (4, 1)
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None

    @property
    def symbol(self):
        """The module's Symbol."""
        return self._symbol

    def _require(self, *states):
        """Raise AssertionError (as MXNet's checks do) naming the first of ``states`` (e.g.
        ``'binded'``) the module has not reached."""
        for state in states:
            if not getattr(self, state):
                raise AssertionError('%s: the module is not %s yet'
                                     % (type(self).__name__, state.replace('_', ' ')))

    # ------------------------------------------------------------ primitives
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Allocate executors for the given input shapes."""
        raise NotImplementedError()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Give the parameters their first values."""
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        """Assign parameter values (through :meth:`init_params`, without initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)

    def get_params(self):
        """``(arg_params, aux_params)``: dicts of name -> NDArray on the host."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Set up the optimizer (and the KVStore that sums gradients)."""
        raise NotImplementedError()

    def forward(self, data_batch, is_train=None):
        """Compute the outputs of one batch."""
        raise NotImplementedError()

    def backward(self, out_grads=None):
        """Compute the gradients of the last forward."""
        raise NotImplementedError()

    def update(self):
        """Apply one optimizer step with the current gradients."""
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate the last outputs against ``labels`` into ``eval_metric``."""
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward."""
        raise NotImplementedError()

    # --------------------------------------------------------------- helpers
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Get ready for ``data_batch``: here, nothing (see :meth:`Module.prepare`)."""

    def forward_backward(self, data_batch):
        """A training forward pass then the backward pass."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Get ready to process ``data_batch``: a Module pulls the rows of its row_sparse
        parameters that ``sparse_row_id_fn(data_batch)`` ({name: row ids}) names."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning('sparse_row_id_fn is not invoked for BaseModule.'))

    def install_monitor(self, monitor):
        """Let a monitor (an object with ``install(executor)``) watch the executors."""
        raise NotImplementedError('%s does not support monitors' % type(self).__name__)

    def save_params(self, fname):
        """Save the parameters to ``fname`` (``arg:``/``aux:`` names, MXNet's .params format)."""
        arg_params, aux_params = self.get_params()
        save_dict = {'arg:%s' % k: v for k, v in arg_params.items()}
        save_dict.update({'aux:%s' % k: v for k, v in aux_params.items()})
        nd.save(fname, save_dict)

    def load_params(self, fname):
        """Load parameters saved by :meth:`save_params` (or MXNet) and assign them.

        Raises
        ------
        ValueError
            For a name without an ``arg:`` or ``aux:`` prefix.
        """
        params = {'arg': {}, 'aux': {}}
        for key, value in load_named(fname).items():
            kind, _, name = key.partition(':')
            if kind not in params:
                raise ValueError('Invalid param file %s: key %r is neither arg: nor aux:' % (fname, key))
            params[kind][name] = value
        self.set_params(params['arg'], params['aux'])

    # ----------------------------------------------------------- evaluation
    def _batches(self, eval_data, num_batch, reset):
        """``(number, batch)`` of ``eval_data`` after a forward pass in inference mode."""
        self._require('binded', 'params_initialized')
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                return
            self.forward(batch, is_train=False)
            yield nbatch, batch

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0):
        """Evaluate ``eval_metric`` over ``eval_data``.

        Parameters
        ----------
        eval_data : DataIter
        eval_metric : str or EvalMetric
        num_batch : int, optional
            Stop after this many batches.
        batch_end_callback, score_end_callback : callable or list of callables, optional
            Called with a :class:`BatchEndParam` after each batch / at the end.
        reset : bool
            Rewind ``eval_data`` first.
        epoch : int
            Passed on to the callbacks.

        Returns
        -------
        list of (str, float)
            The metric's name-value pairs.
        """
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        eval_metric.reset()
        scored = 0
        for nbatch, batch in self._batches(eval_data, num_batch, reset):
            self.update_metric(eval_metric, batch.label)
            _call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            scored += 1
        _call_all(score_end_callback, BatchEndParam(epoch, scored, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True):
        """Yield ``(outputs, batch number, batch)`` per batch, padding removed from the outputs."""
        for nbatch, batch in self._batches(eval_data, num_batch, reset):
            yield self._unpadded_outputs(batch), nbatch, batch

    def _unpadded_outputs(self, batch):
        pad = batch.pad or 0
        return [out[0:out.shape[0] - pad] for out in self.get_outputs()]

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True, always_output_list=False):
        """Run inference on ``eval_data`` and collect the outputs.

        Parameters
        ----------
        eval_data : DataIter, NDArray or numpy.ndarray
            An array is run as one batch, and its first output returned.
        num_batch : int, optional
            Stop after this many batches.
        merge_batches : bool
            Concatenate each output over the batches (else one list of outputs per batch).
        always_output_list : bool
            Return a list even for a single output.

        Returns
        -------
        NDArray or list
        """
        if isinstance(eval_data, (NDArray, np.ndarray)):
            self.forward(DataBatch([nd.array(eval_data) if isinstance(eval_data, np.ndarray) else eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError('eval_data must be an NDArray or a DataIter, got %s' % type(eval_data).__name__)
        output_list = [[out.copy() for out in self._unpadded_outputs(batch)]
                       for _, batch in self._batches(eval_data, num_batch, reset)]
        if not output_list or not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        if any(len(outs) != num_outputs for outs in output_list):
            raise ValueError('Cannot merge batches: the number of outputs changes between batches')
        merged = [nd.concatenate([outs[i] for outs in output_list]) for i in range(num_outputs)]
        return merged[0] if num_outputs == 1 and not always_output_list else merged

    # --------------------------------------------------------------- training
    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None, aux_params=None,
            allow_missing=False, force_rebind=False, force_init=False, begin_epoch=0, num_epoch=None,
            validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """Train on ``train_data`` for epochs ``begin_epoch .. num_epoch - 1``.

        Binds, initializes the parameters and the optimizer (each unless already done), then
        per epoch runs forward, backward, update and the metric on every batch, logs
        ``Epoch[i] Train-<metric>=...`` and ``Epoch[i] Time cost=...``, calls
        ``epoch_end_callback(epoch, symbol, arg_params, aux_params)`` and, with ``eval_data``,
        scores it and logs ``Epoch[i] Validation-<metric>=...``.

        Parameters
        ----------
        train_data, eval_data : DataIter
        eval_metric : str or EvalMetric
            Training metric (and validation metric unless ``validation_metric`` is given).
        batch_end_callback, eval_batch_end_callback, eval_end_callback : callable or list, optional
            Called with a :class:`BatchEndParam`.
        kvstore, optimizer, optimizer_params
            See :meth:`init_optimizer`.
        initializer, arg_params, aux_params, allow_missing, force_init
            See :meth:`init_params`.
        num_epoch : int
            Required.
        monitor : optional
            An object with ``install(executor)``, ``tic()`` and ``toc_print()``.
        sparse_row_id_fn : callable, optional
            ``sparse_row_id_fn(batch) -> {param name: row ids}``: before each batch the rows
            of those (row_sparse) parameters are pulled from the KVStore (see :meth:`prepare`).
        """
        if num_epoch is None:
            raise ValueError('fit: please specify num_epoch')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            train_values = self._train_epoch(train_data, epoch, eval_metric, batch_end_callback, monitor,
                                             sparse_row_id_fn)
            for name, value in train_values:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, value)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
            # Parameters may differ between contexts; make every context use their average.
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            _call_all(epoch_end_callback, epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                results = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                     batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, value in results:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, value)
            train_data.reset()

    def _train_epoch(self, train_data, epoch, eval_metric, batch_end_callback, monitor, sparse_row_id_fn=None):
        """One pass over ``train_data``: forward, backward, update and metric per batch.

        Returns the metric's global name-value pairs, read before the last batch's callbacks
        (which may reset the metric, as Speedometer does).
        """
        eval_metric.reset()
        batches = iter(train_data)
        batch = next(batches, None)
        nbatch = 0
        train_values = eval_metric.get_global_name_value()
        if batch is not None:
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
        while batch is not None:
            if monitor is not None:
                monitor.tic()
            self.forward_backward(batch)
            self.update()
            self.update_metric(eval_metric, batch.label)
            if monitor is not None:
                monitor.toc_print()
            upcoming = next(batches, None)
            if upcoming is not None:
                self.prepare(upcoming, sparse_row_id_fn=sparse_row_id_fn)
            if upcoming is None:
                train_values = eval_metric.get_global_name_value()
            _call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            batch, nbatch = upcoming, nbatch + 1
        return train_values
