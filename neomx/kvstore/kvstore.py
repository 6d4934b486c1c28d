"""Single-machine key-value stores: ``local``, ``device`` and ``nccl``.

A store maps int or str keys to arrays. ``push`` sums the values given for a key (one per
device), then hands the sum to the *updater*, which by default assigns it to the stored
value; ``pull`` copies the stored value into arrays on any contexts. With
``set_optimizer`` the updater is an optimizer step, so pushing gradients updates weights
(Gluon's ``update_on_kvstore``).

Every request is checked completely (keys known, shapes equal, list lengths matching)
before anything is written, so a bad request leaves the store as it was; an updater that
raises also leaves the stored value as it was, and its error propagates.

Kinds differ in where the sum is computed:

* ``local`` sums on the host (``cpu(0)``), where the values are stored;
* ``device`` sums on one of the pushing devices, chosen per key to spread the keys' bytes
  evenly over the devices (as MXNet's ``CommDevice`` does); the value is stored there;
* ``nccl`` is ``device`` for GPUs only, summing with NCCL collectives across local GPUs.
"""
import warnings

import torch

from .. import autograd
from ..base import MXNetError, atomic_write
from ..context import cpu, num_gpus
from ..ndarray.ndarray import NDArray, wrap_tensor
from ..ndarray.sparse_arrays import set_rows, sum_row_sparse
from ..operator.storage import distinct_ids
from ..optimizer import Updater, get_updater, state_format
from .base import KVStoreBase

__all__ = ['KVStore', 'LocalKVStore', 'DeviceKVStore', 'NCCLKVStore', 'create_local']


def _is_key(key):
    return isinstance(key, (int, str)) and not isinstance(key, bool)


def _describe(values):
    return ', '.join('%s@%s' % (v.shape, v.context) for v in values)


class KVStore(KVStoreBase):
    """The single-process store interface (``mx.kv.KVStore``), storing on the host.

    Create stores with :func:`create`. Subclasses choose where sums are computed and
    values kept (:meth:`_home_of`).

    Example
    -------
    >>> kv = mx.kv.create('local')
    >>> kv.init('w', mx.nd.zeros((2, 2)))
    >>> kv.push('w', [mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2])    # summed
    >>> out = mx.nd.zeros((2, 2))
    >>> kv.pull('w', out=out)
    >>> out
    <BLANKLINE>
    [[3. 3.]
     [3. 3.]]
    <NDArray 2x2 @cpu(0)>
    """
    kind = 'local'
    _type_name = None               # the name given to create(), when it differs from kind

    def __init__(self, handle=None):
        # MXNet wraps the C store ``handle`` that create() made; neomx's stores are Python
        if handle is not None:
            raise MXNetError('KVStore: neomx has no C store handles; create stores with mx.kv.create')
        self._store = {}
        self._merge_buffers = {}
        self._key_type = None
        self._updater = None
        self._compression = None
        self._sparse_pull_warned = set()    # keys whose sparse outputs a pull skipped, as MXNet: warn once

    # ----------------------------------------------------------- properties
    @property
    def type(self):
        """The store's type as created: 'local', 'device', 'nccl' or the MXNet spelling given
        to :func:`create` ('local_allreduce_cpu'...)."""
        return self._type_name or self.kind

    @property
    def rank(self):
        """This worker's rank: always 0 on one machine."""
        return 0

    @property
    def num_workers(self):
        """Number of workers: always 1 on one machine."""
        return 1

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (only 'optimizer' is known)."""
        if capability.lower() == self.OPTIMIZER:
            return True
        raise ValueError('Unknown capability: {}'.format(capability))

    # -------------------------------------------------------------- requests
    def _pairs(self, key, values, what):
        """Normalize (key or keys, array(s)) into [(key, [arrays])], checking the structure.

        A single key takes an array or a list of arrays (one per device); a list of keys
        takes a list of the same length whose items are arrays or lists of arrays.
        """
        if isinstance(key, (list, tuple)):
            keys = list(key)
            if not isinstance(values, (list, tuple)) or len(values) != len(keys):
                raise MXNetError('kvstore.%s: %d keys need a list of %d values, got %s'
                                 % (what, len(keys), len(keys), _count(values)))
            pairs = [(k, v) for k, v in zip(keys, values)]
        else:
            pairs = [(key, values)]
        out = []
        for k, v in pairs:
            self._check_key(k, what)
            arrays = list(v) if isinstance(v, (list, tuple)) else [v]
            if not arrays or not all(isinstance(a, NDArray) for a in arrays):
                raise MXNetError('kvstore.%s: key %r needs an NDArray or a non-empty list of NDArrays, got %r'
                                 % (what, k, v))
            out.append((k, arrays))
        return out

    def _check_key(self, key, what):
        if not _is_key(key):
            raise MXNetError('kvstore.%s: keys must be int or str, got %r' % (what, key))
        if self._key_type is not None and type(key) is not self._key_type:
            raise MXNetError('kvstore.%s: key %r is a %s but this store holds %s keys: mixed key types are '
                             'not allowed' % (what, key, type(key).__name__, self._key_type.__name__))

    def _stored(self, key, what):
        value = self._store.get(key)
        if value is None:
            raise MXNetError('kvstore.%s: key %r has not been initialized (call init first)' % (what, key))
        return value

    def _check_shapes(self, pairs, what):
        """The stored value of every key, after checking each array's shape against it."""
        stored = []
        for key, arrays in pairs:
            value = self._stored(key, what)
            for a in arrays:
                if a.shape != value.shape:      # not a._t: a sparse array's dense form is not made
                    raise MXNetError('kvstore.%s: key %r stores shape %s but got %s'
                                     % (what, key, value.shape, _describe(arrays)))
            stored.append(value)
        return stored

    # ------------------------------------------------------------------ API
    @autograd.untracked
    def init(self, key, value):
        """Initialize key(s) with value(s); a key can be initialized once.

        Parameters
        ----------
        key : int or str, or list of them
        value : NDArray, or list of NDArray (one per key; a list per key uses its first array)
        """
        pairs = self._pairs(key, value, 'init')
        seen = set()
        for k, _ in pairs:
            if k in self._store or k in seen:
                raise MXNetError('kvstore.init: duplicate init of key %r. Please double check if you called '
                                 'kv.init or kv.broadcast with this key multiple times' % (k,))
            seen.add(k)
        if pairs and self._key_type is None:
            self._key_type = type(pairs[0][0])
        for k, arrays in pairs:
            home = self._home_of(k, arrays)
            self._store[k] = arrays[0].copyto(home)

    @autograd.untracked
    def push(self, key, value, priority=0):
        """Sum the values of each key and apply the updater to the stored value.

        Parameters
        ----------
        key : int or str, or list of them
        value : NDArray or list of NDArray (per key: one array, or one per device)
        priority : int
            Accepted for compatibility; operations run in call order.
        """
        pairs = self._pairs(key, value, 'push')
        self._check_shapes(pairs, 'push')
        # The optimizer's own Updater takes every dense key of one device in one call (one
        # fused multi-tensor update, as the Trainer's per-context update); a user function
        # gets one key at a time, as in MXNet.
        batched = {}
        for k, arrays in pairs:
            if all(a.stype == 'row_sparse' for a in arrays):
                self._push_rows(k, arrays)
                continue
            target = self._reduction_target(k, arrays)
            if self._updater is None:
                self._reduce_into(k, arrays, target._t)
                continue
            merged = self._merge_buffer(k, target)
            self._reduce_into(k, arrays, merged._t)
            if isinstance(self._updater, Updater) and merged.stype == 'default':
                keys, grads, weights = batched.setdefault(target._t.device, ([], [], []))
                keys.append(k)
                grads.append(merged)
                weights.append(target)
            else:
                self._apply_updater(k, merged, target)
        for keys, grads, weights in batched.values():
            self._updater(keys, grads, weights)

    def _push_rows(self, key, arrays):
        """A row_sparse push: the arrays' rows are summed (their union, nothing dense made) and
        handed to the updater as a row_sparse gradient, which updates those rows only; without
        an updater the sum becomes the stored value."""
        stored = self._store[key]
        merged = sum_row_sparse(arrays, stored.context)
        if self._updater is None:
            rows, values = merged.indices._t, merged.data._t
            set_rows(stored, rows, values)
        else:
            self._apply_updater(key, merged, stored)

    @autograd.untracked
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of each key into ``out`` (an array or a list of arrays per key,
        on any contexts)."""
        if out is None:
            raise MXNetError('kvstore.pull: out is required (the arrays to copy the values into)')
        pairs = self._pullable(self._pairs(key, out, 'pull'), ignore_sparse)
        stored = self._check_shapes(pairs, 'pull')
        for (_, outs), value in zip(pairs, stored):
            self._broadcast_to(value, outs)

    def _pullable(self, pairs, ignore_sparse):
        """``pairs`` without the sparse outputs when ``ignore_sparse``: MXNet leaves those as
        they are (sparse values are pulled with ``row_sparse_pull``) and warns the first time
        it skips one of a key's, per store."""
        if not ignore_sparse:
            return pairs
        pullable = []
        for k, outs in pairs:
            dense = [o for o in outs if o.stype == 'default']
            if len(dense) < len(outs) and k not in self._sparse_pull_warned:
                self._sparse_pull_warned.add(k)
                warnings.warn('kvstore.pull: the sparse outputs of key %r are left as they are '
                              '(ignore_sparse=True); pull them with row_sparse_pull and row_ids' % (k,))
            if dense:
                pullable.append((k, dense))
        return pullable

    @autograd.untracked
    def pushpull(self, key, value, out=None, priority=0):
        """``push`` then ``pull`` (into ``value`` itself when ``out`` is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    @autograd.untracked
    def broadcast(self, key, value, out, priority=0):
        """Initialize key(s) with value(s), then pull them into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    @autograd.untracked
    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` of each stored value; the other rows of ``out`` become 0.

        Parameters
        ----------
        key : int or str, or list of them
        out : NDArray or list of NDArray
        row_ids : NDArray or list of NDArray
            Row indices, one array per output (a single array serves every output).
        """
        if out is None or row_ids is None:
            raise MXNetError('kvstore.row_sparse_pull: out and row_ids are required')
        pairs = self._pairs(key, out, 'row_sparse_pull')
        stored = self._check_shapes(pairs, 'row_sparse_pull')
        rows = iter(self._row_ids_per_output(pairs, row_ids))
        with torch.no_grad():      # out may be a Parameter's array read inside autograd.record()
            self._pull_rows(pairs, stored, rows)

    @staticmethod
    def _row_ids_per_output(pairs, row_ids):
        """The row ids of each output of ``pairs``, in order, from ``row_ids``: one array
        for all, or nested like ``out`` (per key an array, or a list per device), after
        checking that every output is row_sparse."""
        outs = [(k, o) for k, arrays in pairs for o in arrays]
        for k, o in outs:
            if o.stype != 'row_sparse':
                raise MXNetError("kvstore.row_sparse_pull: key %r: out must be row_sparse, got "
                                 "stype '%s'" % (k, o.stype))
        if not isinstance(row_ids, (list, tuple)):
            return [row_ids] * len(outs)
        if len(pairs) > 1 and len(row_ids) == len(pairs):
            ids = [i for (_, arrays), per_key in zip(pairs, row_ids)
                   for i in (per_key if isinstance(per_key, (list, tuple))
                             else [per_key] * len(arrays))]
        else:
            ids = list(row_ids) * (len(outs) if len(row_ids) == 1 else 1)
        if len(ids) != len(outs) or not all(isinstance(i, NDArray) for i in ids):
            raise MXNetError('kvstore.row_sparse_pull: row_ids must give one NDArray per output '
                             '(%d outputs), got %r' % (len(outs), row_ids))
        return ids

    @staticmethod
    def _pull_rows(pairs, stored, rows):
        for (_, arrays), value in zip(pairs, stored):
            for o in arrays:
                index = distinct_ids(next(rows)._t.to(device=value._t.device, dtype=torch.int64).reshape(-1))[0]
                set_rows(o, index, value._t[index])

    # -------------------------------------------------------------- updater
    def _set_updater(self, updater):
        """Use ``updater(key, merged, stored)`` on each push: it must write the new value into
        ``stored``. An int key is passed as an int, a str key as bytes (as in MXNet 1.9.1)."""
        self._updater = updater

    set_updater = _set_updater

    def set_optimizer(self, optimizer):
        """Update stored values with ``optimizer`` on push (pushed values are gradients)."""
        self._set_updater(get_updater(optimizer))

    def _apply_updater(self, key, merged, stored):
        # The built-in Updater checks everything before writing; a user function may fail
        # half-way, so its target is restored from a snapshot if it raises.
        snapshot = None if isinstance(self._updater, Updater) else stored._t.clone()
        try:
            self._updater(key.encode() if isinstance(key, str) else key, merged, stored)
        except BaseException:
            if snapshot is not None:
                stored._t.copy_(snapshot)
            raise

    def _optimizer_updater(self, what):
        if not isinstance(self._updater, Updater):
            raise MXNetError('kvstore.%s: no optimizer is set (call set_optimizer first)' % what)
        return self._updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states (and the optimizer with ``dump_optimizer``) to ``fname``."""
        states = self._optimizer_updater('save_optimizer_states').get_states(dump_optimizer)
        atomic_write(fname, [states])

    def load_optimizer_states(self, fname):
        """Restore optimizer states written by :meth:`save_optimizer_states`."""
        updater = self._optimizer_updater('load_optimizer_states')
        updater.set_states(state_format.read_file(fname), fname)

    def set_gradient_compression(self, compression_params):
        """Gradient compression settings; only device and distributed stores accept them
        (they take effect in distributed stores)."""
        raise MXNetError('Gradient compression is not supported for this type of kvstore (%s)' % self.kind)

    def _barrier(self):
        """Synchronize workers: nothing to wait for in a single process."""

    # -------------------------------------------------- where sums happen
    def _home_of(self, key, arrays):
        """The context holding ``key``'s value (and computing its sums)."""
        return _HOST

    def _reduction_target(self, key, arrays):
        """The stored value of ``key``, about to receive the sum of ``arrays``."""
        return self._store[key]

    def _merge_buffer(self, key, stored):
        """A reusable array for the sum handed to the updater, next to the stored value."""
        buf = self._merge_buffers.get(key)
        if buf is None:
            buf = self._merge_buffers[key] = wrap_tensor(torch.empty_like(stored._t), stored.context)
        return buf

    def _reduce_into(self, key, arrays, target):
        """``target[:] = sum(arrays)``, reading each array from its own device."""
        first, rest = arrays[0]._t, arrays[1:]
        dev = target.device
        if not rest:
            target.copy_(first)
            return
        second = rest[0]._t
        if first.device == dev and second.device == dev:
            torch.add(first, second, out=target)
        else:
            target.copy_(first)
            target.add_(second.to(dev))
        for a in rest[1:]:
            target.add_(a._t.to(dev))

    def _broadcast_to(self, value, outs):
        src = value._t
        with torch.no_grad():
            for o in outs:
                o._t.copy_(src)


_HOST = cpu(0)


def _count(values):
    return '%d values' % len(values) if isinstance(values, (list, tuple)) else type(values).__name__


class LocalKVStore(KVStore):
    """``local``: values stored and summed on the host.

    Example
    -------
    >>> kv = mx.kv.create('local')
    >>> type(kv).__name__, kv.type
    ('LocalKVStore', 'local')
    >>> kv.init(0, mx.nd.zeros(3))
    >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))     # pushed values are now gradients
    >>> kv.push(0, [mx.nd.ones(3), mx.nd.ones(3)])
    >>> out = mx.nd.zeros(3)
    >>> kv.pull(0, out=out)
    >>> out
    <BLANKLINE>
    [-1. -1. -1.]
    <NDArray 3 @cpu(0)>
    """
    kind = 'local'


class DeviceKVStore(KVStore):
    """``device``: each key's value lives on, and is summed on, one of the devices pushing it.

    A key's home is chosen when it is initialized, among the contexts of its init value,
    and moved at its first push from several devices to the least loaded of them (by bytes
    of keys already placed), so the keys' reductions spread over the devices.

    Example
    -------
    >>> kv = mx.kv.create('device')
    >>> type(kv).__name__, kv.type
    ('DeviceKVStore', 'device')
    >>> kv.init('b', mx.nd.zeros(2))
    >>> grads = [mx.nd.ones(2, ctx=mx.cpu(0)), mx.nd.ones(2, ctx=mx.cpu(1))]   # one per device
    >>> kv.pushpull('b', grads)
    >>> grads[1]
    <BLANKLINE>
    [2. 2.]
    <NDArray 2 @cpu(1)>
    """
    kind = 'device'

    def __init__(self):
        super().__init__()
        self._load = {}
        self._placed = set()

    def set_gradient_compression(self, compression_params):
        if not isinstance(compression_params, dict) or 'type' not in compression_params:
            raise MXNetError("set_gradient_compression: expected a dict with a 'type' entry, got %r"
                             % (compression_params,))
        self._compression = dict(compression_params)

    def _home_of(self, key, arrays):
        return arrays[0].context

    def _reduction_target(self, key, arrays):
        if key not in self._placed and len({a.context for a in arrays}) > 1:
            self._place(key, arrays)
        return self._store[key]

    def _place(self, key, arrays):
        """Move ``key``'s value to the least loaded of the devices pushing it."""
        value = self._store[key]
        contexts = list(dict.fromkeys(a.context for a in arrays))
        home = min(contexts, key=lambda c: self._load.get(c, 0))
        self._load[home] = self._load.get(home, 0) + value._t.numel() * value._t.element_size()
        self._placed.add(key)
        self._store[key] = value.as_in_context(home)
        self._merge_buffers.pop(key, None)


class NCCLKVStore(DeviceKVStore):
    """``nccl``: a device store for GPUs, reducing and broadcasting with NCCL collectives.

    Example
    -------
    It needs GPUs (on a machine without one ``mx.kv.create('nccl')`` raises MXNetError):

    >>> issubclass(mx.kv.NCCLKVStore, mx.kv.DeviceKVStore)
    True
    >>> kv = mx.kv.create('nccl')                                            # doctest: +SKIP
    >>> kv.init(0, mx.nd.zeros(2, ctx=mx.gpu(0)))                            # doctest: +SKIP
    >>> grads = [mx.nd.ones(2, ctx=mx.gpu(i)) for i in range(mx.context.num_gpus())]  # doctest: +SKIP
    >>> kv.pushpull(0, grads)                   # summed over the GPUs       # doctest: +SKIP
    >>> grads[0].asnumpy() == len(grads)                                     # doctest: +SKIP
    array([ True,  True])
    """
    kind = 'nccl'

    def __init__(self):
        if num_gpus() == 0:
            raise MXNetError("kvstore 'nccl' needs CUDA GPUs, and torch sees none on this machine; "
                             "use 'device' or 'local'")
        super().__init__()

    def _reduce_into(self, key, arrays, target):
        tensors = [a._t for a in arrays]
        devices = {t.device for t in tensors}
        if len(devices) == len(tensors) > 1 and all(d.type == 'cuda' for d in devices):
            target.copy_(torch.cuda.comm.reduce_add(tensors, destination=target.device.index))
        else:
            super()._reduce_into(key, arrays, target)

    def _broadcast_to(self, value, outs):
        devices = [o._t.device for o in outs]
        if len(set(devices)) == len(outs) > 1 and all(d.type == 'cuda' for d in devices):
            torch.cuda.comm.broadcast(value._t, out=[o._t for o in outs])
        else:
            super()._broadcast_to(value, outs)


_KINDS = {'local': LocalKVStore, 'device': DeviceKVStore, 'nccl': NCCLKVStore}
# MXNet spells some kinds with suffixes that do not change single-machine behaviour
_ALIASES = {'local_update_cpu': 'local', 'local_allreduce_cpu': 'local', 'local_allreduce_device': 'device'}


def create_local(name='local'):
    """A new single-process store: ``local``, ``device`` or ``nccl`` (or MXNet's spellings of
    them: a name starting with ``local`` is ``local``, one containing ``device`` is ``device``);
    :func:`neomx.kvstore.create` is the public entry point."""
    kind = _ALIASES.get(name, name)
    if kind not in _KINDS:
        if 'device' in kind:
            kind = 'device'
        elif kind.startswith('local'):
            kind = 'local'
        else:
            raise MXNetError("unknown kvstore type '%s'; expected one of %s, a distributed type (dist_sync, "
                             "dist_device_sync, dist_async, horovod, byteps) or a registered one"
                             % (name, ', '.join(sorted(_KINDS))))
    store = _KINDS[kind]()
    store._type_name = name         # MXNet reports the name it was created with
    return store
