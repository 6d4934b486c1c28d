"""The optimizer base class, the registry and the Updater.

An :class:`Optimizer` turns gradients into weight updates. neomx optimizers describe their
rule once, in ``_step``, over *lists* of torch tensors, using the multi-tensor kernels of
:mod:`neomx.operator.optimizer_ops`; so ``update(index, weight, grad, state)`` (MXNet's
one-parameter call) and :meth:`Optimizer.update_multi` (every parameter of a training step
in one fused call, which Gluon's Trainer uses) run the same code.

Subclasses written MXNet-style, which override ``update`` with NDArray code instead of
defining ``_step``, keep working: they are called one parameter at a time.
"""
import sys
import warnings

import torch

from .. import autograd
from .._torch_private import foreach
from ..base import MXNetError
from ..util import is_np_array
from ..ndarray.ndarray import NDArray
from ..ndarray.sparse_arrays import SPARSE_MADE
from . import state_check, state_format
from .lazy_rows import step_lazily

__all__ = ['Optimizer', 'Updater', 'register', 'create', 'get_updater']

# dtypes that get a float32 master copy under multi_precision
_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _tensors(state):
    """The torch tensors of a state (None, an NDArray, or a tuple/list of those)."""
    if state is None:
        return None
    if isinstance(state, NDArray):
        return state._t
    return tuple(_tensors(s) for s in state)


class Optimizer:
    """Base class of the optimizers (``mx.optimizer.Optimizer``).

    Parameters
    ----------
    rescale_grad : float
        Gradients are multiplied by this first (Trainer sets ``1 / batch_size``).
    param_idx2name : dict of int to str, optional
        Parameter names by index: ``set_lr_mult``/``set_wd_mult`` may then use names, and
        parameters whose name ends neither in ``_weight`` nor ``_gamma`` get no weight decay.
    wd : float
        Weight decay (L2 penalty) coefficient.
    clip_gradient : float, optional
        Clip the rescaled gradient to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        Defaults to 0.01; overrides ``lr_scheduler.base_lr`` when both are given.
    lr_scheduler : LRScheduler, optional
        Learning rate as a function of ``num_update``.
    sym : Symbol, optional
        A symbol whose ``__lr_mult__``/``__wd_mult__`` attributes set multipliers.
    begin_num_update : int
        Update count to start from.
    multi_precision : bool
        Keep float32 master weights (and states) for float16/bfloat16 weights.
    param_dict : dict of int to Parameter, optional
        Gluon parameters by index, whose ``lr_mult``/``wd_mult`` take precedence.

    Example
    -------
    >>> opt = mx.optimizer.Optimizer.create_optimizer('sgd', learning_rate=0.1, wd=0.01)
    >>> type(opt).__name__, opt.learning_rate, opt.wd
    ('SGD', 0.1, 0.01)
    >>> opt.set_learning_rate(0.05)
    >>> opt.learning_rate
    0.05
    >>> opt.set_lr_mult({'fc_weight': 2.0})
    >>> opt.lr_mult
    {'fc_weight': 2.0}
    """

    # whether a row_sparse gradient updates only its rows when there is no lazy_update option
    _LAZY_FOR_ROW_SPARSE = False
    opt_registry = {}

    # Multi-precision states are (master, state) except in SGD-like optimizers, whose
    # MXNet layout is (state, master); subclasses say which.
    _MASTER_FIRST = True

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None, learning_rate=None,
                 lr_scheduler=None, sym=None, begin_num_update=0, multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and lr_scheduler.base_lr != learning_rate:
            print(UserWarning('learning rate from ``lr_scheduler`` has been overwritten by '
                              '``learning_rate`` in optimizer.'))
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        # update counts per index, one table per device (as each device has its own updater)
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise AssertionError('param_idx2name should be a dict of param indexes to names.')
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        # made in NumPy mode: its Updater keeps mx.np arrays (else it hands it classic views)
        self.allow_np_array = is_np_array()
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ------------------------------------------------------------- registry
    @staticmethod
    def register(klass):
        """Class decorator: make ``klass`` available to :func:`create` under its lower-cased name."""
        if not isinstance(klass, type):
            raise AssertionError('register expects a class, got %r' % (klass,))
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn('WARNING: New optimizer %s.%s is overriding existing optimizer %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer by (case-insensitive) registered name: ``create_optimizer('adam', learning_rate=.1)``."""
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise ValueError('Cannot find optimizer %s' % name)
        return klass(**kwargs)

    # -------------------------------------------------------- learning rate
    @property
    def learning_rate(self):
        """The current learning rate (from the scheduler at ``num_update`` if there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate; not allowed when an ``lr_scheduler`` drives it."""
        if self.lr_scheduler is not None:
            raise UserWarning('LRScheduler of the optimizer has already been defined. Note that '
                              'set_learning_rate can mutate the value of the learning rate of the '
                              'optimizer only when the LRScheduler of the optimizer is undefined.')
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """Deprecated in MXNet: use :meth:`set_lr_mult`."""
        raise DeprecationWarning

    def _symbol_mults(self, attr_key):
        """Multipliers declared on the symbol's arguments (``__lr_mult__``...)."""
        if not self.sym_info:
            return {}
        attrs, arg_names = self.sym_info
        return {n: float(attrs[n][attr_key]) for n in arg_names if n in attrs and attr_key in attrs[n]}

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by parameter index or name (replacing earlier ones)."""
        self.lr_mult = self._symbol_mults('__lr_mult__')
        self.lr_mult.update(args_lr_mult)

    def _decays_weight(self, name):
        """Whether a parameter with this name gets weight decay by default."""
        return name.endswith('_weight') or name.endswith('_gamma')

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by index or name; named parameters that are not weights
        (see ``param_idx2name``) default to 0."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not self._decays_weight(n)}
        self.wd_mult.update(self._symbol_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _multiplied(self, base, indices, mults, param_attr):
        """``base`` times each index's multiplier: Gluon parameter, then index, then name."""
        param_dict, idx2name = self.param_dict, self.idx2name
        if param_dict:
            try:        # a Gluon Trainer's optimizer: every index a parameter's
                return [base * getattr(param_dict[index], param_attr) for index in indices]
            except KeyError:
                pass
        elif not mults:     # (Module's learning rates, without multipliers: one per index)
            return [base * 1.0 if index in idx2name else base for index in indices]
        out = []
        for index in indices:
            param = param_dict.get(index)
            if param is not None:
                out.append(base * getattr(param, param_attr))
            elif index in mults:
                out.append(base * mults[index])
            elif index in idx2name:
                out.append(base * mults.get(idx2name[index], 1.0))
            else:
                out.append(base)
        return out

    def _get_lrs(self, indices):
        """Learning rates of these indices at the current update count."""
        return self._multiplied(self.learning_rate, indices, self.lr_mult, 'lr_mult')

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays of these indices."""
        return self._multiplied(self.wd, indices, self.wd_mult, 'wd_mult')

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # --------------------------------------------------------- update counts
    def _counts(self, indices):
        """The number of updates of each index so far, this one included (Adam's ``t``)."""
        return [self._index_update_count[i] for i in indices]

    def _set_current_context(self, device_id):
        """Switch to the update counts of device ``device_id``."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index):
        """Count one more update of each index; ``num_update`` is the largest count."""
        counts, begin, largest = self._index_update_count, self.begin_num_update, self.num_update
        for idx in (index if isinstance(index, (list, tuple)) else (index,)):
            count = counts[idx] = counts.get(idx, begin) + 1
            if count > largest:
                largest = count
        self.num_update = largest

    # ----------------------------------------------------------------- states
    def create_state(self, index, weight):
        """The auxiliary state of one weight (momentum...); None if the rule needs none."""
        return None

    def create_state_multi_precision(self, index, weight):
        """:meth:`create_state`, plus a float32 master copy of a float16/bfloat16 weight under
        ``multi_precision``."""
        if self.multi_precision and weight._t.dtype in _LOW_PRECISION:
            master = weight.astype('float32')
            state = self.create_state(index, master)
            return (master, state) if self._MASTER_FIRST else (state, master)
        if weight._t.dtype in _LOW_PRECISION:
            warnings.warn('Accumulating with float16 in optimizer can lead to poor accuracy or slow '
                          'convergence. Consider using multi_precision=True option of the %s optimizer'
                          % type(self).__name__)
        return self.create_state(index, weight)

    def _split_master(self, state):
        """(master weight, inner state) of a multi-precision state."""
        return (state[0], state[1]) if self._MASTER_FIRST else (state[1], state[0])

    # ---------------------------------------------------------------- updates
    def _step(self, indices, weights, grads, states, lrs, wds):
        """Update ``weights`` in place: the optimizer's rule over lists of torch tensors.

        Parameters
        ----------
        indices : list
            Parameter indices (their update counts are already incremented).
        weights, grads : list of Tensor
            Same shapes pairwise; all on one device with one dtype.
        states : list
            Per weight, :meth:`create_state`'s value with NDArrays replaced by tensors.
        lrs, wds : list of float
            Per-weight learning rates and weight decays.
        """
        raise NotImplementedError('%s defines neither update() nor _step()' % type(self).__name__)

    def _clip(self):
        """The clip bound for the kernels: -1 (none) unless ``clip_gradient`` is set."""
        return float(self.clip_gradient) if self.clip_gradient else -1.0

    @autograd.untracked
    def update(self, index, weight, grad, state):
        """Update one weight in place (or several: lists of indices, weights, grads, states).

        Parameters
        ----------
        index : int or str, or list of them
        weight, grad : NDArray, or list of NDArray
        state : object, or list
            The value(s) :meth:`create_state` returned.
        """
        if isinstance(index, (list, tuple)):
            self._apply(list(index), weight, grad, state, multi_precision=False)
        else:
            self._apply([index], [weight], [grad], [state], multi_precision=False)

    @autograd.untracked
    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update`, through the float32 master copy where
        :meth:`create_state_multi_precision` made one."""
        if isinstance(index, (list, tuple)):
            self.update_multi(index, weight, grad, state)
        else:
            self.update_multi([index], [weight], [grad], [state])

    @autograd.untracked
    def update_multi(self, indices, weights, grads, states):
        """Update many weights at once: the fused path (one kernel call per dtype and device).

        Multi-precision aware, as :meth:`update_multi_precision`. The result equals updating
        the weights one by one in order.

        Parameters
        ----------
        indices : list of int or str
        weights, grads : list of NDArray
        states : list
            :meth:`create_state_multi_precision`'s values.
        """
        if type(self).update is _BASE_UPDATE:     # fused through _step: not an MXNet-style subclass overriding update
            self._apply(list(indices), weights, grads, states, multi_precision=True)
            return
        for index, weight, grad, state in zip(indices, weights, grads, states):
            self._update_one_mxnet_style(index, weight, grad, state)

    def _update_one_mxnet_style(self, index, weight, grad, state):
        """Multi-precision through an overridden ``update`` working on NDArrays."""
        if self.multi_precision and weight._t.dtype in _LOW_PRECISION:
            master, inner = self._split_master(state)
            self.update(index, master, grad.astype('float32'), inner)
            weight._t.copy_(master._t)
        else:
            self.update(index, weight, grad, state)

    def _apply(self, indices, weights, grads, states, multi_precision):
        """Group the weights by dtype and device (one fused kernel call each) and step them."""
        first = weights[0]._t
        dtype, device = first.dtype, first.device
        for w in weights:
            t = w._t
            if t.dtype is not dtype or t.device != device:
                break
        else:                       # one dtype and device, the common case: one group
            self._apply_group(indices, weights, grads, states, multi_precision)
            return
        groups = {}
        for pos, w in enumerate(weights):
            groups.setdefault((w._t.dtype, w._t.device), []).append(pos)
        for positions in groups.values():
            self._apply_group([indices[p] for p in positions], [weights[p] for p in positions],
                              [grads[p] for p in positions], [states[p] for p in positions], multi_precision)

    def _apply_group(self, indices, weights, grads, states, multi_precision):
        weights_t = [w._t for w in weights]
        if SPARSE_MADE[0]:
            # a row_sparse gradient's dense form is not made here: step_lazily reads its rows
            grads_t = [None if type(g) is not NDArray and g.stype == 'row_sparse' else g._t for g in grads]
            shaped = [g if g_t is None else g_t for g, g_t in zip(grads, grads_t)]
            for w, g in zip(weights_t, shaped):
                if w.shape != g.shape:     # torch.Size equals a tuple
                    self._shapes_differ(w, g)
        else:       # no sparse array exists: every gradient is dense
            grads_t = [g._t for g in grads]
            for w, g in zip(weights_t, grads_t):
                if w.shape != g.shape:
                    self._shapes_differ(w, g)
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)
        if multi_precision and self.multi_precision and weights_t[0].dtype in _LOW_PRECISION:
            masters, inner = zip(*(self._split_master(s) for s in states))
            masters_t = [m._t for m in masters]
            step_lazily(self, indices, masters_t, grads_t, grads, [_tensors(s) for s in inner], lrs, wds)
            foreach.copy_(weights_t, masters_t)
        else:
            states_t = [None if s is None else _tensors(s) for s in states]
            if SPARSE_MADE[0]:      # row_sparse gradients step their rows only
                step_lazily(self, indices, weights_t, grads_t, grads, states_t, lrs, wds)
            else:
                self._step(indices, weights_t, grads_t, states_t, lrs, wds)

    def _shapes_differ(self, weight, grad):
        raise MXNetError('%s.update: weight shape %s and gradient shape %s differ'
                         % (type(self).__name__, tuple(weight.shape), tuple(grad.shape)))

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop('param_dict', None)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


_BASE_UPDATE = Optimizer.update
register = Optimizer.register
create = Optimizer.create_optimizer
state_check.register_optimizer_class(Optimizer)


def _classic(arrays):
    """``arrays`` with each mx.np array as a classic NDArray view of its memory."""
    return [a.as_nd_ndarray() if a is not None and a._is_np_array else a for a in arrays]


class Updater:
    """Applies an optimizer to (index, grad, weight) triples, keeping the states per index.

    ``updater(index, grad, weight)`` creates the state of an index on first sight, then
    updates. Lists of indices, grads and weights are updated in one fused call.
    String keys given as bytes (KVStore's form) are decoded first.

    Example
    -------
    >>> updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
    >>> weight = mx.nd.ones(3)
    >>> updater(0, mx.nd.array([1, 2, 3]), weight)       # creates index 0's momentum, then steps
    >>> weight
    <BLANKLINE>
    [ 0.5  0.  -0.5]
    <NDArray 3 @cpu(0)>
    >>> updater.states[0]                                 # the momentum
    <BLANKLINE>
    [-0.5 -1.  -1.5]
    <NDArray 3 @cpu(0)>
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}

    @autograd.untracked
    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if not weights:
            return
        # (plain loops here and below: on every step, and cheaper than any(), map() or a
        # comprehension over a few parameters for the interpreter)
        for i in indices:
            if isinstance(i, bytes):
                indices = [i.decode() if isinstance(i, bytes) else i for i in indices]
                break
        optimizer, states, synced = self.optimizer, self.states, self.states_synced
        # as MXNet: an optimizer made outside NumPy mode works on classic views of mx.np
        # arrays (one without the attribute, unpickled from before it: the current mode decides)
        for w in weights:
            if type(w) is not NDArray:
                if not (optimizer.allow_np_array if hasattr(optimizer, 'allow_np_array') else is_np_array()):
                    weights, grads = _classic(weights), _classic(grads)
                break
        optimizer._set_current_context(weights[0]._ctx.device_id)
        for idx, w in zip(indices, weights):
            if idx not in states:
                states[idx] = optimizer.create_state_multi_precision(idx, w)
                synced[idx] = True
            elif not synced[idx]:
                states[idx] = self.sync_state_context(states[idx], w.context)
                synced[idx] = True
        optimizer.update_multi(indices, weights, grads, [states[i] for i in indices])

    def sync_state_context(self, state, context):
        """The state with its arrays moved to ``context`` (after loading)."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            return type(state)(self.sync_state_context(s, context) for s in state)
        return state

    def set_states(self, states, source='optimizer states'):
        """Restore states from :meth:`get_states` bytes (and the optimizer, if it was saved);
        errors name ``source`` (the file's path)."""
        value = state_format.loads(states, source)
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], Optimizer):
            self.states, self.optimizer = value
        else:
            self.states = value
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer=False):
        """The states as bytes; with ``dump_optimizer`` the optimizer (and its update counts) too."""
        return state_format.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An :class:`Updater` for ``optimizer`` (what KVStore and Trainer call)."""
    return Updater(optimizer)


def _flatten_list(nested_list):
    """The items of a list of lists, in order."""
    return [item for sublist in nested_list for item in sublist]


# MXNet defines every optimizer in this module; here each family has its own module of the
# package (which imports this one), so the names are looked up in the package when asked
# for here (``from mxnet.optimizer.optimizer import SGD``).
_DEFINED_ELSEWHERE = ('SGD', 'NAG', 'Signum', 'LARS', 'LBSGD', 'DCASGD', 'SGLD', 'ccSGD', 'Test', 'Adam', 'Adamax',
                      'Nadam', 'LAMB', 'AdaGrad', 'AdaDelta', 'RMSProp', 'Ftrl', 'FTML')


def __getattr__(name):
    if name in _DEFINED_ELSEWHERE:
        return getattr(sys.modules[__package__], name)
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
