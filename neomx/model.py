"""``mx.model``: checkpoints of a Symbol and its parameters, in MXNet's file layout.

``save_checkpoint(prefix, epoch, ...)`` writes ``prefix-symbol.json`` and
``prefix-%04d.params`` (arrays named ``arg:<name>`` and ``aux:<name>``), which MXNet 1.9.1's
``load_checkpoint`` and ``SymbolBlock.imports`` read, and reads them back.
"""
import importlib.util
import logging
import os
import time
import warnings
from collections import namedtuple

import numpy as np

from . import io
from . import kvstore as kvs
from . import metric
from . import ndarray as nd
from . import optimizer as opt
from . import symbol as sym
from .base import mx_real_t
from .context import Context, cpu
from .executor_manager import DataParallelExecutorManager, check_arguments as _check_arguments, load_data as _load_data
from .initializer import Uniform
from .io import DataDesc
from .ndarray.utils import load_named
from .optimizer import get_updater

# (LogValidationMetricsCallback is MXNet's mx.callback's; it is defined here, for
# FeedForward.fit, and mx.callback, which imports this module, re-exports it.)
__all__ = ['save_checkpoint', 'load_checkpoint', 'load_params', 'BatchEndParam', 'Context', 'DataDesc',
           'Uniform', 'cpu', 'get_updater', 'FeedForward', 'LogValidationMetricsCallback',
           'DataParallelExecutorManager']

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])
BatchEndParam.__doc__ = """What batch-end and score-end callbacks receive: the epoch, the batch
number (or the number of batches scored), the metric and the caller's local variables.

Example
-------
>>> param = mx.model.BatchEndParam(epoch=1, nbatch=20, eval_metric=mx.metric.Accuracy(), locals=None)
>>> param.epoch, param.nbatch, param.eval_metric.get()
(1, 20, ('accuracy', nan))
"""

# A 'local' store updates on the host unless a parameter is bigger than this (elements):
# such parameters are then updated on each device instead (MXNet's rule).
_LOCAL_UPDATE_MAX_SIZE = 16 * 1024 * 1024


def create_kvstore(kvstore, num_device, arg_params):
    """``(store or None, update_on_kvstore)`` for a kvstore argument.

    A single device needs no store (unless distributed); the optimizer runs in the store
    (``update_on_kvstore``) unless ``MXNET_UPDATE_ON_KVSTORE=0`` or parameters are huge.
    """
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
    if kvstore is None or isinstance(kvstore, kvs.KVStoreBase):
        store = kvstore
    elif isinstance(kvstore, str):
        store = None if num_device == 1 and 'dist' not in kvstore else kvs.create(kvstore)
        if kvstore == 'local' and arg_params:
            largest = max(int(np.prod(p.shape)) for p in arg_params.values())
            update_on_kvstore = update_on_kvstore and largest <= _LOCAL_UPDATE_MAX_SIZE
    else:
        raise TypeError('kvstore must be a KVStore, a str or None, got %s' % type(kvstore).__name__)
    return store, update_on_kvstore and store is not None and store.is_capable(kvs.KVStoreBase.OPTIMIZER)



def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write a checkpoint: the symbol (unless None) and the parameters of ``epoch``.

    Parameters
    ----------
    prefix : str
        Path prefix of the files.
    epoch : int
        Epoch number, written as ``%04d`` in the parameter file name.
    symbol : Symbol or None
    arg_params, aux_params : dict of str -> NDArray
        Learned parameters and auxiliary states.
    """
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    save_dict = {'arg:%s' % k: v for k, v in arg_params.items()}
    save_dict.update({'aux:%s' % k: v for k, v in aux_params.items()})
    param_name = '%s-%04d.params' % (prefix, epoch)
    nd.save(param_name, save_dict)          # atomic: a partial file never replaces the old one
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    arg_params, aux_params = {}, {}
    for key, value in load_named('%s-%04d.params' % (prefix, epoch)).items():
        kind, _, name = key.partition(':')
        if kind == 'arg':
            arg_params[name] = value
        elif kind == 'aux':
            aux_params[name] = value
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` of a checkpoint written by :func:`save_checkpoint`
    (or by MXNet)."""
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


_create_kvstore = create_kvstore      # MXNet's name


def _create_sparse_kvstore(kvstore):
    """``(store, True)`` for row_sparse parameters, which are always updated in the store."""
    if isinstance(kvstore, kvs.KVStoreBase):
        store = kvstore
    elif isinstance(kvstore, str):
        store = kvs.create(kvstore)
    else:
        raise TypeError("Cannot create '%s' KVStore with row_sparse parameters. The type must be KVStore or str."
                        % (kvstore,))
    assert store.is_capable(kvs.KVStoreBase.OPTIMIZER), \
        'KVStore with sparse weight requires optimizer support. However, type(kv) does not support optimizer.'
    return store, True


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put every parameter into ``kvstore`` (and, when it updates them, onto the devices)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or arg_params[name].stype != 'default':
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Push each parameter's gradients (one per device) and pull the updated weights."""
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        name = param_names[index]
        if grad_list[0].stype == 'default' and arg_list[0].stype == 'default':
            kvstore.pushpull(name, grad_list, out=arg_list, priority=-index)
        else:
            kvstore.push(name, grad_list, priority=-index)
            kvstore.pull(name, out=arg_list, priority=-index)


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None, param_names=None):
    """Sum the gradients through ``kvstore`` (if any), then apply ``updater`` on each device;
    the updater sees index ``i * num_device + k`` for parameter ``i`` on device ``k``."""
    updates = [[] for _ in range(num_device)]
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            name = param_names[index]
            if grad_list[0].stype == 'default' and arg_list[0].stype == 'default':
                kvstore.pushpull(name, grad_list, priority=-index)
            else:
                kvstore.push(name, grad_list, priority=-index)
                kvstore.pull(name, out=grad_list, priority=-index)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((index * num_device + k, g, w))
    for dev_updates in updates:
        if dev_updates:
            indices, grads, weights = zip(*dev_updates)
            updater(list(indices), list(grads), list(weights))


def _multiple_callbacks(callbacks, *args, **kwargs):
    """Call ``callbacks`` (one or a list) with the arguments."""
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
    elif callbacks:
        callbacks(*args, **kwargs)


# MXNet's flag of scikit-learn's presence (found, not imported: neomx imports optional
# packages only where they are used)
SKLEARN_INSTALLED = importlib.util.find_spec('sklearn') is not None


class LogValidationMetricsCallback:
    """A score-end callback (``fit``'s ``eval_end_callback``) logging
    ``Epoch[e] Validation-<metric>=<value>``.

    Example
    -------
    >>> import logging, sys
    >>> root, handler = logging.getLogger(), logging.StreamHandler(sys.stdout)
    >>> level = root.level
    >>> root.addHandler(handler); root.setLevel(logging.INFO)          # log to stdout here
    >>> metric = mx.metric.MAE()
    >>> metric.update([mx.nd.array([1, 2])], [mx.nd.array([1.5, 2.5])])
    >>> callback = mx.callback.LogValidationMetricsCallback()
    >>> callback(mx.model.BatchEndParam(epoch=3, nbatch=1, eval_metric=metric, locals=None))
    Epoch[3] Validation-mae=0.500000
    >>> root.removeHandler(handler); root.setLevel(level)
    """

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info('Epoch[%d] Validation-%s=%f', param.epoch, name, value)


def _train_multi_device(symbol, ctx, arg_names, param_names, aux_names, arg_params, aux_params, begin_epoch,
                        end_epoch, epoch_size, optimizer, kvstore, update_on_kvstore, train_data, eval_data=None,
                        eval_metric=None, epoch_end_callback=None, batch_end_callback=None, logger=None,
                        work_load_list=None, monitor=None, eval_end_callback=None, eval_batch_end_callback=None,
                        sym_gen=None):
    """FeedForward's training loop: data-parallel executors on ``ctx``, gradients combined
    through ``kvstore`` (updating there when ``update_on_kvstore``) or the updater."""
    logger = logger or logging
    manager = DataParallelExecutorManager(symbol=symbol, sym_gen=sym_gen, ctx=ctx, train_data=train_data,
                                          param_names=param_names, arg_names=arg_names, aux_names=aux_names,
                                          work_load_list=work_load_list, logger=logger)
    if monitor:
        manager.install_monitor(monitor)
    manager.set_params(arg_params, aux_params)
    updater = None
    if not update_on_kvstore:
        updater = get_updater(optimizer)
    else:
        kvstore.set_optimizer(optimizer)
    if kvstore:
        _initialize_kvstore(kvstore=kvstore, param_arrays=manager.param_arrays, arg_params=arg_params,
                            param_names=manager.param_names, update_on_kvstore=update_on_kvstore)
    train_data.reset()
    for epoch in range(begin_epoch, end_epoch):
        tic = time.time()
        eval_metric.reset()
        nbatch = 0
        while True:         # an epoch of epoch_size batches may span several passes over the data
            do_reset = True
            for data_batch in train_data:
                manager.load_data_batch(data_batch)
                if monitor is not None:
                    monitor.tic()
                manager.forward(is_train=True)
                manager.backward()
                if update_on_kvstore:
                    _update_params_on_kvstore(manager.param_arrays, manager.grad_arrays, kvstore,
                                              manager.param_names)
                else:
                    _update_params(manager.param_arrays, manager.grad_arrays, updater=updater, num_device=len(ctx),
                                   kvstore=kvstore, param_names=manager.param_names)
                if monitor is not None:
                    monitor.toc_print()
                manager.update_metric(eval_metric, data_batch.label)
                nbatch += 1
                if batch_end_callback is not None:
                    _multiple_callbacks(batch_end_callback, BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                                          eval_metric=eval_metric, locals=locals()))
                if epoch_size is not None and nbatch >= epoch_size:
                    do_reset = False
                    break
            if do_reset:
                logger.info('Epoch[%d] Resetting Data Iterator', epoch)
                train_data.reset()
            if epoch_size is None or nbatch >= epoch_size:
                break
        logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
        if epoch_end_callback or epoch + 1 == end_epoch:
            manager.copy_to(arg_params, aux_params)
        _multiple_callbacks(epoch_end_callback, epoch, symbol, arg_params, aux_params)
        if eval_data:
            eval_metric.reset()
            eval_data.reset()
            total = 0
            for i, eval_batch in enumerate(eval_data):
                manager.load_data_batch(eval_batch)
                manager.forward(is_train=False)
                manager.update_metric(eval_metric, eval_batch.label)
                if eval_batch_end_callback is not None:
                    _multiple_callbacks(eval_batch_end_callback, BatchEndParam(epoch=epoch, nbatch=i,
                                                                               eval_metric=eval_metric,
                                                                               locals=locals()))
                total += 1
            if eval_end_callback is not None:
                _multiple_callbacks(eval_end_callback, BatchEndParam(epoch=epoch, nbatch=total,
                                                                     eval_metric=eval_metric, locals=locals()))
            eval_data.reset()


class FeedForward:
    """MXNet's legacy model of a single-data, single-output feed-forward network (deprecated
    in MXNet for ``mx.mod.Module``): ``fit``, ``predict``, ``score``, ``save``/``load``.

    Parameters
    ----------
    symbol : Symbol, or callable(bucket_key) -> Symbol
        The network (a ``sym_gen`` for bucketing iterators).
    ctx : Context or list of Context, optional
        The devices to train on (data parallel) and predict on (the first); default CPU.
    num_epoch : int, optional
        Epochs to train.
    epoch_size : int, optional
        Batches per epoch (default: one pass over the data).
    optimizer : str or Optimizer
    initializer : Initializer
        Initializes the parameters not given in ``arg_params``/``aux_params``.
    numpy_batch_size : int
        Batch size when the data is given as arrays.
    arg_params, aux_params : dict of str -> NDArray, optional
    allow_extra_params : bool
        Drop given parameters the symbol does not have instead of failing.
    begin_epoch : int
    **kwargs
        Optimizer arguments (``learning_rate``, ``momentum``...).

    Example
    -------
    >>> import warnings
    >>> x = np.array([[0., 1.], [1., 0.]] * 8)
    >>> y = np.array([1, 0] * 8)
    >>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2), name='softmax')
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore', DeprecationWarning)
    ...     model = mx.model.FeedForward(net, num_epoch=5, numpy_batch_size=4, learning_rate=0.5)
    >>> model.fit(x, y)
    >>> model.predict(x[:2]).argmax(axis=1).tolist()
    [1, 0]
    >>> model.score(mx.io.NDArrayIter(x, y, batch_size=4))
    1.0
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd', initializer=Uniform(0.01),
                 numpy_batch_size=128, arg_params=None, aux_params=None, allow_extra_params=False, begin_epoch=0,
                 **kwargs):
        warnings.warn('mxnet.model.FeedForward has been deprecated. Please use mxnet.mod.Module instead.',
                      DeprecationWarning, stacklevel=2)
        if isinstance(symbol, sym.Symbol):
            self.symbol, self.sym_gen = symbol, None
        else:
            assert callable(symbol), 'symbol must be a Symbol or a function making one from a bucket key'
            self.symbol, self.sym_gen = None, symbol
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.argument_checked = False
        if self.sym_gen is None:
            self._check_arguments()
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self._pred_exec = None
        self.begin_epoch = begin_epoch

    def _check_arguments(self):
        """Refuse duplicated argument names; with ``allow_extra_params`` drop unknown parameters."""
        if self.argument_checked:
            return
        self.argument_checked = True
        _check_arguments(self.symbol)
        if self.allow_extra_params:
            if self.arg_params:
                names = set(self.symbol.list_arguments())
                self.arg_params = {k: v for k, v in self.arg_params.items() if k in names}
            if self.aux_params:
                names = set(self.symbol.list_auxiliary_states())
                self.aux_params = {k: v for k, v in self.aux_params.items() if k in names}

    @staticmethod
    def _is_data_arg(name):
        return name.endswith('data') or name.endswith('label')

    def _init_params(self, inputs, overwrite=False):
        """Make every parameter and auxiliary state (given values kept unless ``overwrite``,
        the rest initialized); ``(arg_names, param_names, aux_names)``."""
        inputs = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in inputs]
        input_shapes = {item.name: item.shape for item in inputs}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        assert arg_shapes is not None
        arg_dtypes, _, aux_dtypes = self.symbol.infer_type(**{item.name: item.dtype for item in inputs})
        assert arg_dtypes is not None
        arg_names = self.symbol.list_arguments()
        param_names = [key for key in arg_names if key not in input_shapes]
        aux_names = self.symbol.list_auxiliary_states()
        arg_params = {k: nd.zeros(shape=s, dtype=t) for k, s, t in zip(arg_names, arg_shapes, arg_dtypes)
                      if k in param_names}
        aux_params = {k: nd.zeros(shape=s, dtype=t) for k, s, t in zip(aux_names, aux_shapes, aux_dtypes)}
        for mine, given in ((arg_params, self.arg_params), (aux_params, self.aux_params)):
            for k, v in mine.items():
                if given and k in given and not overwrite:
                    v[:] = given[k][:]
                else:
                    self.initializer(k, v)
        self.arg_params = arg_params
        self.aux_params = aux_params
        return arg_names, list(param_names), aux_names

    def __getstate__(self):
        this = self.__dict__.copy()
        this['_pred_exec'] = None
        return this

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _init_predictor(self, input_shapes, type_dict=None):
        """Bind (or reuse) the prediction executor on the first context."""
        shapes = {name: self.arg_params[name].shape for name in self.arg_params}
        shapes.update(dict(input_shapes))
        if self._pred_exec is not None:
            arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
            assert arg_shapes is not None, 'Incomplete input shapes'
            if arg_shapes == [x.shape for x in self._pred_exec.arg_arrays]:
                return
        pred_exec = self.symbol.simple_bind(self.ctx[0], grad_req='null', type_dict=type_dict, **shapes)
        pred_exec.copy_params_from(self.arg_params, self.aux_params)
        _check_arguments(self.symbol)
        self._pred_exec = pred_exec

    def _init_iter(self, X, y, is_train):
        """A DataIter over ``X`` (and labels ``y``): ``X`` itself when it is one."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError('y must be specified when X is numpy.ndarray')
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError('y must be ndarray when X is numpy.ndarray')
            if X.shape[0] != y.shape[0]:
                raise ValueError('The numbers of data points and labels not equal')
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.flatten()
            if y.ndim != 1:
                raise ValueError('Label must be 1D or 2D (with 2nd dimension being 1)')
            batch_size = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch_size, shuffle=True, last_batch_handle='roll_over')
            return io.NDArrayIter(X, y, batch_size, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError('X must be DataIter, NDArray or numpy.ndarray')
        return X

    def _init_eval_iter(self, eval_data):
        """A DataIter for ``eval_data``: one, or a ``(data, label)`` pair of arrays."""
        if eval_data is None:
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is None:
                raise ValueError('Eval data is NONE')
            if eval_data[1] is None and isinstance(eval_data[0], io.DataIter):
                return eval_data[0]
            data = np.array(eval_data[0]) if isinstance(eval_data[0], list) else eval_data[0]
            label = np.array(eval_data[1]) if isinstance(eval_data[1], list) else eval_data[1]
            return self._init_iter(data, label, is_train=True)
        if not isinstance(eval_data, io.DataIter):
            raise TypeError('Eval data must be DataIter, or NDArray/numpy.ndarray/list pair (i.e. tuple/list of '
                            'length 2)')
        return eval_data

    def _prepare_prediction(self, X, reset):
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        type_dict = {key: value.dtype for key, value in self.arg_params.items()}
        for x in X.provide_data:
            if isinstance(x, DataDesc):
                type_dict[x.name] = x.dtype
            else:
                type_dict[x[0]] = mx_real_t
        self._init_predictor(X.provide_data, type_dict)
        return X, [self._pred_exec.arg_dict[x[0]] for x in X.provide_data]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """Run the network forward on the first context over ``X`` (a DataIter or an array).

        Returns the outputs as numpy arrays (one array for one output, else a list), padding
        removed; with ``return_data`` ``(outputs, data, label)``.
        """
        X, data_arrays = self._prepare_prediction(X, reset)
        batch_size = X.batch_size
        output_list = [[] for _ in self._pred_exec.outputs]
        data_list = [[] for _ in X.provide_data] if return_data else None
        label_list = [[] for _ in X.provide_label] if return_data else None
        for i, batch in enumerate(X):
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            real_size = batch_size - batch.pad
            for o_list, o_nd in zip(output_list, self._pred_exec.outputs):
                o_list.append(o_nd[0:real_size].asnumpy())
            if return_data:
                for j, x in enumerate(batch.data):
                    data_list[j].append(x[0:real_size].asnumpy())
                for j, x in enumerate(batch.label):
                    label_list[j].append(x[0:real_size].asnumpy())
            if num_batch is not None and i + 1 == num_batch:
                break
        outputs = [np.concatenate(x) for x in output_list]
        outputs = outputs[0] if len(outputs) == 1 else outputs
        if not return_data:
            return outputs
        data = [np.concatenate(x) for x in data_list]
        label = [np.concatenate(x) for x in label_list]
        return outputs, data[0] if len(data) == 1 else data, label[0] if len(label) == 1 else label

    def score(self, X, eval_metric='acc', num_batch=None, batch_end_callback=None, reset=True):
        """The value of ``eval_metric`` (a metric or its name) of the predictions on ``X``."""
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X, data_arrays = self._prepare_prediction(X, reset)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            eval_metric.update(batch.label, self._pred_exec.outputs)
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback, BatchEndParam(epoch=0, nbatch=i, eval_metric=eval_metric,
                                                                      locals=locals()))
        return eval_metric.get()[1]

    def fit(self, X, y=None, eval_data=None, eval_metric='acc', epoch_end_callback=None, batch_end_callback=None,
            kvstore='local', logger=None, work_load_list=None, monitor=None,
            eval_end_callback=LogValidationMetricsCallback(), eval_batch_end_callback=None):
        """Train on ``X`` (a DataIter, or an array with labels ``y``) for ``num_epoch`` epochs.

        ``eval_data`` (a DataIter or a ``(data, label)`` pair) is scored after each epoch;
        ``epoch_end_callback(epoch, symbol, arg_params, aux_params)`` runs after each epoch,
        ``batch_end_callback(BatchEndParam)`` after each batch. ``kvstore`` combines the
        devices' gradients (``'local'``, ``'device'``, ``'dist_sync'``... or a KVStore).
        """
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        self.kwargs['sym'] = self.symbol
        arg_names, param_names, aux_names = self._init_params(data.provide_data + data.provide_label)
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        kvstore, update_on_kvstore = create_kvstore(kvstore, len(self.ctx), self.arg_params)
        param_idx2name = {}
        if update_on_kvstore:
            param_idx2name.update(enumerate(param_names))
        else:
            for i, name in enumerate(param_names):
                for k in range(len(self.ctx)):
                    param_idx2name[i * len(self.ctx) + k] = name
        self.kwargs['param_idx2name'] = param_idx2name
        if isinstance(self.optimizer, str):
            batch_size = data.batch_size
            if kvstore and 'dist' in kvstore.type and '_async' not in kvstore.type:
                batch_size *= kvstore.num_workers
            optimizer = opt.create(self.optimizer, rescale_grad=(1.0 / batch_size), **self.kwargs)
        else:
            optimizer = self.optimizer
            if not optimizer.idx2name:
                optimizer.idx2name = param_idx2name.copy()
        _train_multi_device(self.symbol, self.ctx, arg_names, param_names, aux_names, self.arg_params,
                            self.aux_params, begin_epoch=self.begin_epoch, end_epoch=self.num_epoch,
                            epoch_size=self.epoch_size, optimizer=optimizer, train_data=data, eval_data=eval_data,
                            eval_metric=eval_metric, epoch_end_callback=epoch_end_callback,
                            batch_end_callback=batch_end_callback, kvstore=kvstore,
                            update_on_kvstore=update_on_kvstore, logger=logger, work_load_list=work_load_list,
                            monitor=monitor, eval_end_callback=eval_end_callback,
                            eval_batch_end_callback=eval_batch_end_callback, sym_gen=self.sym_gen)

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Write ``prefix-symbol.json`` and ``prefix-<epoch>.params`` (epoch default ``num_epoch``)."""
        if epoch is None:
            epoch = self.num_epoch
        assert epoch is not None
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params, remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from the checkpoint ``prefix`` at ``epoch`` (training resumes there)."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params, begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
               initializer=Uniform(0.01), eval_data=None, eval_metric='acc', epoch_end_callback=None,
               batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
               eval_end_callback=LogValidationMetricsCallback(), eval_batch_end_callback=None, **kwargs):
        """Make a FeedForward and :meth:`fit` it; returns the trained model."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size, optimizer=optimizer,
                            initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric, epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback, kvstore=kvstore, logger=logger,
                  work_load_list=work_load_list, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
