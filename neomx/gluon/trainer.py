"""``gluon.Trainer``: applies an optimizer to a set of Parameters.

With one context (the common case) no KVStore is involved, as in MXNet: each step runs
one fused multi-tensor optimizer update over every parameter. With several contexts the
gradients are summed through a KVStore (``'device'`` by default) and either the store
runs the optimizer (``update_on_kvstore``, MXNet's default; one fused update per device
too) or every context updates its own copy with the summed gradients.
"""

from .. import autograd
from .. import kvstore as kvs
from .. import optimizer as opt
from .. import _fileio
from ..base import MXNetError
from ..optimizer import state_format
from . import parameter
from .parameter import Parameter, ParameterDict
from .trainer_kvstore import choose_kvstore
from .trainer_layout import TrainedLayout
from .trainer_overlap import GradientOverlap, can_overlap

__all__ = ['Trainer']


class Trainer:
    """Updates Parameters with an optimizer.

    Parameters
    ----------
    params : ParameterDict, dict of str -> Parameter, or list of Parameter
    optimizer : str or Optimizer
        Name for ``mx.optimizer.create`` (``'sgd'``...) or an instance.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer (``{'learning_rate': 0.1}``); only with a name.
    kvstore : str or KVStore or None, default 'device'
        Store used to sum gradients across contexts; unused with a single context.
    compression_params : dict, optional
        Gradient compression settings, handed to the KVStore.
    update_on_kvstore : bool or None
        Whether the KVStore runs the optimizer. None chooses as MXNet: True for dense
        parameters on a store that can (``MXNET_UPDATE_ON_KVSTORE=0`` makes it False), False
        for sparse gradients on a store of this process. ``_update_on_kvstore`` is None when
        no store is used (a single context).

    Example
    -------
    >>> net = mx.gluon.nn.Dense(1, in_units=2)
    >>> net.initialize(mx.init.One())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    >>> with mx.autograd.record():
    ...     loss = net(mx.nd.array([[1, 2]])).sum()
    >>> loss.backward()
    >>> trainer.step(batch_size=1)              # w -= 0.1 * grad / batch_size
    >>> net.weight.data()
    <BLANKLINE>
    [[0.9 0.8]]
    <NDArray 1x2 @cpu(0)>
    """
    _amp_loss_scaler = None     # mx.contrib.amp.init_trainer's loss scaler, where it set one


    def __init__(self, params, optimizer, optimizer_params=None, kvstore='device',
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            # By name, as MXNet: a parameter's index (its optimizer state's and KVStore key)
            # is then the same in both, and so are saved states.
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError('First argument must be a list or dict of Parameters, got %s.' % type(params))
        self._params = []
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError('First argument must be a list or dict of Parameters, got list of %s.'
                                 % type(param))
            if param.name in self._param2idx:
                raise ValueError('Parameter %s appears twice in the list given to Trainer' % param.name)
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        self._compression_params = compression_params
        self._contexts = None
        self._kvstore_kind = kvstore
        self._update_on_kvstore_arg = update_on_kvstore
        self._kvstore = None
        self._update_on_kvstore = False
        self._kv_initialized = False
        self._distributed = False
        self._params_to_init = []
        self._layout_cache = None
        self._layout_version = None
        self._overlap = None
        self._overlap_for = None
        self._overlap_layout = None
        self._init_optimizer(optimizer, optimizer_params or {})

    # ------------------------------------------------------------ optimizer
    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError('optimizer_params must be None if optimizer is an instance of '
                                     'Optimizer instead of str')
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._scale = self._optimizer.rescale_grad
        self._updaters = []

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        """Set the learning rate of the optimizer (MXNetError with an lr_scheduler)."""
        self._optimizer.set_learning_rate(lr)

    # -------------------------------------------------------------- kvstore
    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise MXNetError('All Parameters must be initialized on the same set of contexts, but '
                                 'Parameter %s is initialized on %s while previous Parameters are '
                                 'initialized on %s.' % (param.name, ctx, contexts))
            contexts = ctx
        return contexts or []

    def _init_kvstore(self):
        """Choose the store on the first step, once every parameter knows its contexts:
        MXNet 1.9.1's table (``trainer_kvstore.choose_kvstore``)."""
        self._contexts = self._check_contexts()
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]
        store, update = choose_kvstore(self._kvstore_kind, self._update_on_kvstore_arg,
                                       len(self._contexts), self._params)
        self._distributed = store is not None and 'dist' in store.type
        if store is not None:
            if self._compression_params:
                store.set_gradient_compression(self._compression_params)
            if update:
                store.set_optimizer(self._optimizer)
            self._params_to_init = list(self._params)
            self._kvstore = store
            self._update_on_kvstore = bool(update)
        else:       # MXNet's marker of "no store": None, not False
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _init_params(self):
        """Put the parameters waiting for it into the store: every worker starts from rank 0's
        weights (deferred parameters wait for their shapes)."""
        waiting = [p for p in self._params_to_init if p._deferred_init]
        ready = [p for p in self._params_to_init if not p._deferred_init]
        self._params_to_init = waiting
        dense = [p for p in ready if p._stype == 'default']
        for p in ready:
            if p._stype != 'default':
                self._kvstore.init(self._param2idx[p.name], p._list_arrays()[0])
        if not dense:
            return
        keys = [self._param2idx[p.name] for p in dense]
        if isinstance(self._kvstore, kvs.KVStore) and not self._distributed:
            # Every context already holds the same initial values; writing them again would
            # also bump the version of arrays a recorded forward pass may have saved (a
            # deferred parameter enters the store during the forward of a later context).
            self._kvstore.init(keys, [p._list_arrays()[0] for p in dense])
        elif isinstance(self._kvstore, kvs.KVStore):
            self._kvstore.broadcast(keys, [p._list_arrays()[0] for p in dense], [p._list_arrays() for p in dense])
        else:
            for key, p in zip(keys, dense):
                self._kvstore.broadcast(key, p._list_arrays()[0], p._list_arrays())

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        """Pull the rows ``row_id`` of ``parameter`` from the store into ``out``."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._kvstore is None:
            return
        idx = self._param2idx[parameter.name]
        if full_idx and 'dist' not in self._kvstore.type:
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _reset_kvstore(self):
        """Forget the store (a parameter's data was replaced with set_data); a distributed store
        holds every worker's weights and cannot be reset (RuntimeError, as MXNet)."""
        if self._kvstore is not None and 'dist' in self._kvstore.type:
            raise RuntimeError('Cannot reset distributed KVStore.')
        self._kvstore = None
        self._kv_initialized = False
        self._params_to_init = []

    # ----------------------------------------------------------------- step
    @autograd.untracked
    def step(self, batch_size, ignore_stale_grad=False):
        """One optimisation step: gradients are summed across contexts and scaled by
        ``1/batch_size``, then every parameter is updated.

        Raises ``UserWarning`` (as an exception, as MXNet does) when a parameter's gradient
        was not written by a backward pass since the last step, unless ``ignore_stale_grad``.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    @autograd.untracked
    def allreduce_grads(self):
        """Sum the gradients of every parameter across its contexts (before :meth:`update`)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore:
            # AssertionError: MXNet asserts this
            raise AssertionError('allreduce_grads() when parameters are updated on kvstore is not supported. '
                                 'Try setting `update_on_kvstore` to False when creating trainer.')
        self._allreduce_grads()

    @autograd.untracked
    def update(self, batch_size, ignore_stale_grad=False):
        """Update the parameters with their (already reduced) gradients, scaled by 1/batch_size."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore:
            # AssertionError: MXNet asserts this
            raise AssertionError('update() when parameters are updated on kvstore is not supported. '
                                 'Try setting `update_on_kvstore` to False when creating trainer.')
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _check_and_rescale_grad(self, scale):
        # A distributed store updating the weights took the optimizer at set_optimizer (its
        # server copy would not see a new rescale factor): MXNet refuses the change.
        if self._update_on_kvstore and self._distributed and self._kv_initialized and \
                self._optimizer.rescale_grad != scale:
            raise UserWarning('Possible change in the `batch_size` from previous `step` detected. Optimizer '
                              'gradient normalizing factor will not change w.r.t new batch_size when '
                              'update_on_kvstore=True and when distributed kvstore is used.')
        self._optimizer.rescale_grad = scale

    def _layout(self):
        """The :class:`TrainedLayout` of the parameters, rebuilt only when some Parameter
        got new arrays or a new ``grad_req`` (``parameter._layout_version`` changed)."""
        if self._layout_version != parameter._layout_version:
            self._layout_cache = TrainedLayout(self._params)
            self._layout_version = parameter._layout_version
        return self._layout_cache

    def _trained(self):
        """``[(index, Parameter, arrays per context)]`` of the parameters that get gradients."""
        return self._layout().trained

    def _gradient_overlap(self, trained):
        """The :class:`GradientOverlap` of ``trained`` (None where pushes wait for the step)."""
        if self._overlap_for is trained:
            return self._overlap
        # Rebuilt only when the gradients changed: the layout version also moves for other
        # networks' parameters, maybe on some workers only, and a new plan is a collective.
        layout = [(i, id(arrays[0]._grad) if len(arrays) == 1 else None) for i, _, arrays in trained]
        if self._overlap_layout != layout:
            if self._overlap is not None:
                self._overlap.detach()
            usable = self._distributed and can_overlap(self._kvstore, trained, self._compression_params)
            self._overlap = GradientOverlap(self._kvstore, trained) if usable else None
            self._overlap_layout = layout
        self._overlap_for = trained
        return self._overlap

    def _allreduce_grads(self):
        if self._kvstore is None:
            return
        trained = self._trained()
        keys = [i for i, _, _ in trained]
        grads = [p.list_grad() for _, p, _ in trained]
        overlap = self._gradient_overlap(trained)
        if overlap is not None:         # pushed from backward (and the rest here)
            overlap.flush()
            if not self._update_on_kvstore:
                self._kvstore.pull(keys, grads)
            return
        if self._update_on_kvstore:
            self._kvstore.push(keys, grads)
        elif isinstance(self._kvstore, kvs.KVStore):
            # Sparse gradients are pushed, then pulled back whole (a store of this process
            # keeps their sum; pull skips sparse outputs unless told not to), as MXNet does.
            dense = [(k, g) for k, g in zip(keys, grads) if g[0].stype == 'default']
            sparse = [(k, g) for k, g in zip(keys, grads) if g[0].stype != 'default']
            if dense:
                self._kvstore.pushpull([k for k, _ in dense], [g for _, g in dense])
            for key, grad in sparse:
                self._kvstore.push(key, grad, priority=-key)
                self._kvstore.pull(key, grad, priority=-key, ignore_sparse=self._distributed)
        else:       # a user-registered store: one key at a time, as MXNet calls it
            for key, grad in zip(keys, grads):
                self._kvstore.pushpull(key, grad, priority=-key)

    def _update(self, ignore_stale_grad):
        # mx.contrib.amp's loss scaler (init_trainer): a step whose gradients overflowed
        # changes no weight
        loss_scaler = self._amp_loss_scaler
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return
        layout = self._layout()
        slots = layout.grad_slots()
        if self._update_on_kvstore or not layout.per_context or not _all_fresh(slots):
            self._update_some(layout.trained, ignore_stale_grad)
        else:       # every gradient written since the last step, as in nearly every step
            num_contexts = len(layout.per_context)
            for ctx_pos, (updater, weights) in enumerate(zip(self._updaters, layout.per_context)):
                updater(layout.indices, [slot.buf for slot in slots[ctx_pos::num_contexts]], weights)
        for slot in slots:
            if slot is not None:
                slot.fresh = False

    def _update_some(self, trained, ignore_stale_grad):
        """The update through the KVStore, or when some gradient is stale: MXNet's warning
        (raised), or with ``ignore_stale_grad`` the update of the parameters whose gradients
        are fresh."""
        slots = [[arr._grad for arr in arrays] for _, _, arrays in trained]
        if not ignore_stale_grad:
            _check_fresh(trained, slots)
        if self._update_on_kvstore:
            # row_sparse weights are pulled by rows when read (Parameter.row_sparse_data)
            keys = [i for (i, p, _), grads in zip(trained, slots)
                    if all(map(_is_fresh, grads)) and p._stype == 'default']
            self._kvstore.pull(keys, [self._params[i]._list_arrays() for i in keys])
            return
        for ctx_pos, updater in enumerate(self._updaters):
            indices, grads, weights = [], [], []
            for (i, _, arrays), ctx_slots in zip(trained, slots):
                slot = ctx_slots[ctx_pos]
                if slot is not None and slot.fresh:
                    indices.append(i)
                    grads.append(slot.buf)
                    weights.append(arrays[ctx_pos])
            if indices:
                updater(indices, grads, weights)

    # --------------------------------------------------------------- states
    def save_states(self, fname):
        """Write the optimizer and its states to ``fname`` (atomically, no pickle)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        _fileio.write_atomic(fname, [self._updaters[0].get_states(dump_optimizer=True)])

    def load_states(self, fname):
        """Restore the optimizer and its states written by :meth:`save_states`."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            updater = getattr(self._kvstore, '_updater', None)     # None where a server holds it
            if updater is not None:
                self._optimizer = updater.optimizer
        else:
            states = state_format.read_file(fname)
            for updater in self._updaters:
                updater.set_states(states, fname)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))


def _is_fresh(slot):
    """Whether a gradient slot (None without gradient) was written since the last step."""
    return slot is not None and slot.fresh


def _all_fresh(slots):
    """Whether every gradient slot was written since the last step (no slot None). On every
    step: a loop reading a slot member is cheaper than a C call per slot (attrgetter)."""
    for slot in slots:
        if slot is None or not slot.fresh:
            return False
    return True


def _check_fresh(trained, slots):
    """MXNet's stale-gradient check, raised as a ``UserWarning`` exception as MXNet does."""
    for (_, param, arrays), grads in zip(trained, slots):
        for arr, slot in zip(arrays, grads):
            if slot is None or not slot.fresh:
                raise UserWarning('Gradient of Parameter `%s` on context %s has not been updated by '
                                  'backward since last `step`. This could mean a bug in your model that '
                                  'made it only use a subset of the Parameters (Blocks) for this '
                                  'iteration. If you are intentionally only using a subset, call step '
                                  'with ignore_stale_grad=True to suppress this warning and skip updating '
                                  'of Parameters with stale gradient' % (param.name, arr.context))
