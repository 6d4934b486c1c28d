"""``Module``: train and run a Symbol on one or several contexts.

The usual sequence is ``bind`` (allocate executors for input shapes), ``init_params``,
``init_optimizer``, then ``forward``/``backward``/``update`` per batch -- or ``fit``, which
does all of it. With several contexts each batch is split between them (see
``executor_group.py``) and the gradients are summed through a KVStore before the update.
"""
import logging
import warnings

from .. import kvstore as kvs
from .. import model
from .. import ndarray as nd
from .. import optimizer as opt
from ..base import MXNetError, atomic_write
from ..context import as_context_list, cpu
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from .base_module import BaseModule, check_input_names, parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ['Module']

# names MXNet's module also holds
from ..model import load_checkpoint  # noqa: E402,F401
from ..ndarray import zeros  # noqa: E402,F401

# a variable's __storage_type__ attribute (MXNet's storage type ids) -> stype
_STYPE_OF_FLAG = {'0': 'default', '1': 'row_sparse', '2': 'csr'}

class Module(BaseModule):
    """A Symbol bound to contexts, with its parameters and optimizer.

    Parameters
    ----------
    symbol : Symbol
    data_names : list of str
        Arguments fed from the batches' data.
    label_names : list of str
        Arguments fed from the batches' labels (a missing one only warns).
    logger : logging.Logger or the logging module
    context : Context or list of Context
        Several contexts split each batch between them.
    work_load_list : list of float, optional
        Relative share of each context (equal by default).
    fixed_param_names : list of str, optional
        Parameters that are not learned.
    state_names : list of str, optional
        Arguments that hold states set with :meth:`set_states`.
    group2ctxs : dict of str -> list of Context, or list of dict, optional
        Model parallelism: where the operators of each ``ctx_group`` attribute run, per device.
    compression_params : dict, optional
        Passed to the KVStore's ``set_gradient_compression``.

    Example
    -------
    >>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc'),
    ...                            name='softmax')
    >>> mod = mx.mod.Module(net, data_names=['data'], label_names=['softmax_label'])
    >>> mod.bind(data_shapes=[('data', (3, 4))], label_shapes=[('softmax_label', (3,))])
    >>> mod.init_params(mx.init.Zero())
    >>> mod.forward(mx.io.DataBatch([mx.nd.ones((3, 4))], [mx.nd.zeros(3)]), is_train=False)
    >>> mod.get_outputs()[0]
    <BLANKLINE>
    [[0.5 0.5]
     [0.5 0.5]
     [0.5 0.5]]
    <NDArray 3x2 @cpu(0)>
    >>> sorted(mod.get_params()[0])
    ['fc_bias', 'fc_weight']
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',), logger=logging,
                 context=cpu(), work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        self._group2ctxs = group2ctxs
        self._grad_req = None       # bind's grad_req
        self._context = as_context_list(context, 'context')
        self._work_load_list = list(work_load_list) if work_load_list is not None else [1] * len(self._context)
        if len(self._work_load_list) != len(self._context):
            raise ValueError('work_load_list has %d entries for %d contexts'
                             % (len(self._work_load_list), len(self._context)))
        self._symbol = symbol
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        self._state_names = list(state_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        check_input_names(symbol, self._data_names, 'data', True)
        check_input_names(symbol, self._label_names, 'label', False)
        check_input_names(symbol, self._state_names, 'state', True)
        check_input_names(symbol, self._fixed_param_names, 'fixed_param', True)
        inputs = set(self._data_names + self._label_names + self._state_names)
        self._param_names = [n for n in symbol.list_arguments() if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._compression_params = compression_params
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._reset_optimizer()
        self._preload_opt_states = None
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    def _reset_optimizer(self):
        self.optimizer_initialized = False
        self._optimizer = self._kvstore = self._updater = None
        self._update_on_kvstore = None

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from the checkpoint ``prefix-symbol.json`` / ``prefix-%04d.params``.

        Parameters
        ----------
        load_optimizer_states : bool
            Also restore ``prefix-%04d.states`` when the optimizer is initialized.
        **kwargs
            Passed to the constructor (``context``, ``data_names``...).
        """
        symbol, arg_params, aux_params = model.load_checkpoint(prefix, epoch)
        mod = Module(symbol=symbol, **kwargs)
        mod._arg_params, mod._aux_params = arg_params, aux_params
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and optionally
        ``prefix-%04d.states`` (the optimizer states)."""
        arg_params, aux_params = self.get_params()
        model.save_checkpoint(prefix, epoch, self._symbol, arg_params, aux_params, remove_amp_cast)
        if save_optimizer_states:
            state_name = '%s-%04d.states' % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    # -------------------------------------------------------------- properties
    @property
    def data_names(self):
        """Names of the data inputs."""
        return self._data_names

    @property
    def label_names(self):
        """Names of the label inputs."""
        return self._label_names

    @property
    def output_names(self):
        """Names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """The bound data inputs, as DataDescs."""
        self._require('binded')
        return self._data_shapes

    @property
    def label_shapes(self):
        """The bound label inputs, as DataDescs (None when bound without labels)."""
        self._require('binded')
        return self._label_shapes

    @property
    def output_shapes(self):
        """``[(output name, shape)]`` for the bound batch size."""
        self._require('binded')
        return self._exec_group.get_output_shapes()

    # -------------------------------------------------------------- parameters
    def get_params(self):
        """``(arg_params, aux_params)`` on the host, averaged over contexts."""
        self._require('binded', 'params_initialized')
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Give every parameter and auxiliary state its first value.

        Parameters
        ----------
        initializer : Initializer
            For parameters not in ``arg_params``/``aux_params``; it receives an ``InitDesc``
            carrying the symbol's attributes (so ``_bias`` is zeroed, ``__init__`` honoured).
        arg_params, aux_params : dict of str -> NDArray, optional
            Values to copy.
        allow_missing : bool
            Initialize parameters missing from the given dicts instead of raising.
        force_init : bool
            Re-initialize already initialized parameters.
        allow_extra : bool
            Ignore names in the dicts that the symbol does not have.

        Raises
        ------
        RuntimeError
            For a parameter missing from the given dicts without ``allow_missing``.
        """
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. init_params call ignored.',
                          stacklevel=2)
            return
        self._require('binded')
        attrs = self._symbol.attr_dict()
        for params, given in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
            for name, array in sorted(params.items()):
                self._init_one(name, array, given, initializer, attrs, allow_missing)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    @staticmethod
    def _init_one(name, array, given, initializer, attrs, allow_missing):
        if given is not None and name in given:
            if given[name] is not array:
                given[name].astype(array.dtype).copyto(array)
            return
        if given is not None and not allow_missing:
            raise RuntimeError('%s is not presented' % name)
        if initializer is not None:
            initializer(InitDesc(name, attrs.get(name)), array)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        """Assign parameter values (see :meth:`init_params`; missing ones keep their values
        with ``allow_missing``)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. set_params call ignored.',
                          stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        # The host copies are stale until read back from the contexts.
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self):
        """Refresh the host copies of the parameters from the contexts (their average)."""
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    def get_states(self, merge_multi_context=True):
        """The state arrays (see ``state_names``)."""
        self._require('binded', 'params_initialized')
        return self._exec_group.get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states from arrays (per state, per context) or all to the scalar ``value``."""
        self._require('binded', 'params_initialized')
        self._exec_group.set_states(states, value)

    @property
    def _total_exec_bytes(self):
        """MXNet's memory figure of the bound executors (0 before binding)."""
        return self._exec_group._total_exec_bytes if self.binded else 0

    # ----------------------------------------------------------------- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Allocate one executor per context for these input shapes.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Full-batch input shapes (e.g. a DataIter's ``provide_data``/``provide_label``).
        for_training : bool
            Whether gradients will be computed.
        inputs_need_grad : bool
            Also compute the gradients of the data inputs.
        force_rebind : bool
            Rebind when already bound (else the call is ignored with a warning).
        shared_module : Module, optional
            A bound module whose parameter arrays this one shares.
        grad_req : str, list or dict
            ``'write'``, ``'add'`` or ``'null'``, for all, per argument or by name.
        """
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise ValueError('inputs_need_grad=True requires for_training=True')
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not (shared_module.binded and shared_module.params_initialized):
                raise ValueError('shared_module must be bound and initialized')
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes, self._label_shapes,
            self._param_names, for_training, inputs_need_grad, shared_group,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.binded = True
        if self.params_initialized:
            # Rebinding (or loaded from a checkpoint): the executors take the known values.
            self._exec_group.set_params(self._arg_params, self._aux_params)
        elif shared_module is not None:
            self._arg_params, self._aux_params = shared_module.get_params()
            self.params_initialized = True
        else:
            stypes = {name: _STYPE_OF_FLAG.get(attrs.get('__storage_type__'), 'default')
                      for name, attrs in self._symbol.attr_dict().items()}
            self._arg_params = self._host_copies(self._param_names, self._exec_group.param_arrays, stypes)
            self._aux_params = self._host_copies(self._aux_names, self._exec_group.aux_arrays, stypes)
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)

    @staticmethod
    def _host_copies(names, arrays, stypes):
        # a variable declared row_sparse (stype=) has a row_sparse host copy, as in MXNet
        return {n: nd.zeros(copies[0].shape, dtype=copies[0].dtype, stype=stypes.get(n, 'default'))
                for n, copies in zip(names, arrays)}

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind for new input shapes (e.g. another batch size), keeping the parameters."""
        self._require('binded')
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # --------------------------------------------------------------- optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
                       force_init=False):
        """Set up the optimizer, and the KVStore that sums the contexts' gradients.

        Parameters
        ----------
        kvstore : str, KVStore or None
            ``'local'``/``'device'``...; no store is created for a single context.
        optimizer : str or Optimizer
            By name, it is created with ``optimizer_params`` and ``rescale_grad = 1 / batch_size``
            (unless given).
        optimizer_params : dict or list of pairs
        force_init : bool
            Replace an existing optimizer.
        """
        self._require('binded', 'params_initialized')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        store, update_on_kvstore = model.create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = self._exec_group.batch_size
        if store is not None and 'dist' in store.type and '_sync' in store.type:
            batch_size *= store.num_workers
        rescale_grad = 1.0 / batch_size
        num_device = len(self._context)
        if update_on_kvstore:
            idx2name = dict(enumerate(self._param_names))
        else:
            # Each device has its own copy of every parameter: index i * num_device + k.
            idx2name = {i * num_device + k: n for i, n in enumerate(self._param_names) for k in range(num_device)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault('rescale_grad', rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name, **params)
        elif not isinstance(optimizer, opt.Optimizer):
            raise TypeError('optimizer must be a str or an Optimizer, got %s' % type(optimizer).__name__)
        else:
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn('Optimizer created manually outside Module but rescale_grad is not '
                              'normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this intended?'
                              % (optimizer.rescale_grad, rescale_grad), stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer, self._kvstore, self._update_on_kvstore = optimizer, store, update_on_kvstore
        self._updater = None
        if store is not None:
            self._init_kvstore(store, update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def _init_kvstore(self, store, update_on_kvstore):
        """Store every parameter under its name; with the optimizer in the store, the
        contexts start from the stored values."""
        if self._compression_params:
            store.set_gradient_compression(self._compression_params)
        if update_on_kvstore:
            store.set_optimizer(self._optimizer)
        names, copies = list(self._param_names), list(self._exec_group.param_arrays)
        if isinstance(store, kvs.KVStore):     # one request: a distributed store broadcasts once
            store.init(names, [self._arg_params[name] for name in names])
            if update_on_kvstore:
                store.pull(names, out=copies)
            return
        for name, arrays in zip(names, copies):
            store.init(name, self._arg_params[name])
            if update_on_kvstore:
                store.pull(name, out=arrays)

    def borrow_optimizer(self, shared_module):
        """Use the optimizer (and KVStore, updater) of ``shared_module``."""
        if not shared_module.optimizer_initialized:
            raise ValueError('borrow_optimizer: the shared module has no optimizer')
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname):
        """Write the optimizer states to ``fname``."""
        self._require('optimizer_initialized')
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            atomic_write(fname, [self._updater.get_states()])

    def load_optimizer_states(self, fname):
        """Restore optimizer states written by :meth:`save_optimizer_states`."""
        self._require('optimizer_initialized')
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            self._updater.set_states(opt.state_format.read_file(fname), fname)

    # ----------------------------------------------------------------- running
    def forward(self, data_batch, is_train=None):
        """Compute the outputs of ``data_batch`` (rebinding first if its shapes changed).

        Parameters
        ----------
        data_batch : DataBatch
        is_train : bool, optional
            Training mode (Dropout, BatchNorm statistics) and recording for :meth:`backward`;
            defaults to ``for_training``.
        """
        self._require('binded', 'params_initialized')
        new_shapes = tuple(d.shape for d in data_batch.data)
        if new_shapes != tuple(d.shape for d in self._data_shapes):
            self.reshape(*self._batch_descs(data_batch, new_shapes))
        self._exec_group.forward(data_batch, is_train)

    def _batch_descs(self, data_batch, data_shapes):
        """``(data_descs, label_descs)`` of a batch whose shapes differ from the bound ones."""
        # any object with ``data`` is a batch (a namedtuple too, as in MXNet)
        data_descs = getattr(data_batch, 'provide_data', None) or [
            DataDesc(d.name, shape, d.dtype, d.layout) for d, shape in zip(self._data_shapes, data_shapes)]
        label_descs = getattr(data_batch, 'provide_label', None)
        if not label_descs and getattr(data_batch, 'label', None) and self._label_shapes:
            label_descs = [DataDesc(d.name, label.shape, d.dtype, d.layout)
                           for d, label in zip(self._label_shapes, data_batch.label)]
        return data_descs, label_descs or None

    def backward(self, out_grads=None):
        """Gradients of the last (training) forward, weighted by ``out_grads`` (for outputs
        that are not loss layers)."""
        self._require('binded', 'params_initialized')
        self._exec_group.backward(out_grads=out_grads)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Before ``data_batch``: pull from the KVStore the rows ``sparse_row_id_fn(data_batch)``
        gives (``{param name: row ids}``) of those parameters stored row_sparse, as MXNet's
        Module does (its ``update`` leaves row_sparse parameters on the store). Dense parameter
        arrays receive every row from ``update`` already."""
        self._require('binded')
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning('Parameters are not updated in the KVStore. No need to call '
                                      'sparse_row_id_fn.'))
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise MXNetError('prepare: sparse_row_id_fn must return a dict of parameter name -> row ids, '
                             'got %s' % type(row_ids).__name__)
        names = list(self._exec_group.param_names)
        keys, outs, ids = [], [], []
        for name, row_id in row_ids.items():
            arrays = self._exec_group.param_arrays[names.index(name)]
            if arrays[0].stype != 'row_sparse':
                warnings.warn(UserWarning("%s.stype is not 'row_sparse'. No need to perform "
                                          "row_sparse_pull." % name))
            else:
                keys.append(name)
                outs.append(arrays)
                ids.append(row_id)
        if len(keys) == 1:
            self._kvstore.row_sparse_pull(keys[0], outs[0], row_ids=ids[0])
        elif keys:      # one call for all: dist_async asks each server once for every key's rows
            self._kvstore.row_sparse_pull(keys, outs, row_ids=ids)

    def update(self):
        """One optimizer step on every parameter with the current gradients (summed over contexts)."""
        self._require('binded', 'params_initialized', 'optimizer_initialized')
        self._params_dirty = True
        learned = [(name, weights, grads) for name, weights, grads in
                   zip(self._param_names, self._exec_group.param_arrays, self._exec_group.grad_arrays)
                   if grads[0] is not None]
        batched = isinstance(self._kvstore, kvs.KVStore)   # one request: a distributed store fuses keys
        if self._update_on_kvstore:
            if batched:
                self._kvstore.pushpull([n for n, _, _ in learned], [g for _, _, g in learned],
                                       out=[w for _, w, _ in learned])
                return
            for name, weights, grads in learned:
                self._kvstore.pushpull(name, grads, out=weights)
            return
        if self._kvstore is not None:
            if batched:
                self._kvstore.pushpull([n for n, _, _ in learned], [g for _, _, g in learned])
            else:
                for name, _, grads in learned:
                    self._kvstore.pushpull(name, grads)
        self._update_on_devices(learned)

    def _update_on_devices(self, learned):
        """One fused updater call per device, with index ``i * num_device + k`` for parameter
        ``i`` on device ``k``."""
        num_device = len(self._context)
        position = {name: i for i, name in enumerate(self._param_names)}
        for k in range(num_device):
            indices = [position[name] * num_device + k for name, _, _ in learned]
            if indices:
                self._updater(indices, [g[k] for _, _, g in learned], [w[k] for _, w, _ in learned])

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull from the KVStore the rows of the parameters that ``sparse_row_id_fn(data_batch)``
        returns ({parameter name: row ids}) before the batch is processed (row_sparse
        parameters updated in the store); nothing to do without ``sparse_row_id_fn``."""
        assert self.binded
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning('Parameters are not updated in the KVStore. '
                                      'No need to call sparse_row_id_fn.'))
            return
        for name, row_ids in sparse_row_id_fn(data_batch).items():
            index = self._exec_group.param_names.index(name)
            self._kvstore.row_sparse_pull(name, self._exec_group.param_arrays[index], row_ids=row_ids,
                                          priority=-index)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate the last outputs against ``labels`` into ``eval_metric``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward (per context when not merged)."""
        self._require('binded', 'params_initialized')
        return self._exec_group.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._require('binded', 'params_initialized')
        return self._exec_group.get_input_grads(merge_multi_context)

    def install_monitor(self, monitor):
        """Let ``monitor`` (an object with ``install(executor)``) watch every executor."""
        self._require('binded')
        self._exec_group.install_monitor(monitor)
