"""``dist_sync`` / ``dist_device_sync``: synchronous distributed stores on allreduce.

MXNet's ``dist_sync`` sums the pushes of all workers for a key on a server, runs the updater
once on the sum and lets every worker pull the result. Here every worker keeps the values
itself: a push sums its devices' copies into flat buckets (:mod:`.fusion`) and starts their
allreduces over the workers; when a value is read (a pull, the next push of its key, states,
a barrier) the buckets before it are awaited in push order and the same deterministic update
runs on every worker, which yields exactly the server's value everywhere; a pull then copies
each bucket's values out while later buckets are still being summed.

* ``init`` takes rank 0's values (broadcast), which also acts as MXNet's barrier after init;
* with no optimizer a push stores the sum (no accumulation across pushes);
* float16 keys, when the optimizer has ``multi_precision``, are summed and updated in a
  float32 master copy, as MXNet's servers do, then rounded to float16;
* 2-bit compression (:mod:`.compression`) quantizes what each worker contributes;
* ``dist_device_sync`` (= ``dist_sync_device``) keeps and sums values on the pushing device.
"""
import atexit
import collections
import weakref

import torch

from .. import autograd
from ..base import MXNetError, atomic_write
from ..context import cpu
from ..ndarray.ndarray import wrap_tensor
from ..ndarray.sparse_arrays import rows_array, set_rows, sum_row_sparse
from ..optimizer import Updater
from . import rendezvous
from .collectives import Collectives
from .group_member import GroupMember
from .compression import parse_compression
from .fusion import FlatBuffers, plan_buckets
from .bucketed_push import BucketedPush
from .kvstore import KVStore

__all__ = ['DistSyncKVStore']


class _InFlight:
    """A bucket on its way: its allreduce (``work``, None with one worker) sums ``sums`` (views
    of its flat buffer) in place; then they update ``targets`` and are copied to ``stored``
    (the float16 values of float32 master targets). Compared by identity."""
    __slots__ = ('what', 'keys', 'sums', 'targets', 'stored', 'work')

    def __init__(self, what, keys, sums, targets, stored, work):
        self.what, self.keys, self.sums, self.targets, self.stored, self.work = \
            what, keys, sums, targets, stored, work


def _signature(what, pairs):
    # shape, dtype and stype from the arrays' properties: a sparse array's dense form is not made
    return '%s %s' % (what, ';'.join('%r:%s:%s:%s' % (k, tuple(a[0].shape), a[0].dtype, a[0].stype)
                                     for k, a in pairs))


class DistSyncKVStore(GroupMember, KVStore):
    """A synchronous distributed store (``mx.kv.create('dist_sync')``); see the module doc."""

    def __init__(self, name='dist_sync'):
        super().__init__()
        self._name = name
        self._on_device = 'device' in name
        self._group = rendezvous.init_process_group()
        self._comm = Collectives(self._group)
        self._masters = {}
        self._flats = FlatBuffers()
        self._pending = collections.deque()     # buckets whose allreduce is in flight, in push order
        # bytes this worker passed to the row_sparse collectives and got back from the others
        # (a row_sparse push exchanges only the rows present: see benchmarks/bench_sparse.py)
        self.traffic = {'sent': 0, 'received': 0}
        atexit.register(_settle_at_exit, weakref.ref(self))

    def _home_of(self, key, arrays):
        return arrays[0].context if self._on_device else cpu(0)

    # ------------------------------------------------------------------ init
    @autograd.untracked
    def init(self, key, value):
        """Initialize key(s) with rank 0's value(s) on every worker."""
        pairs = self._pairs(key, value, 'init')
        seen = set()
        for k, _ in pairs:
            if k in self._store or k in seen:
                raise MXNetError('kvstore.init: duplicate init of key %r. Please double check if you called '
                                 'kv.init or kv.broadcast with this key multiple times' % (k,))
            seen.add(k)
        self._comm.agree('init', _signature('init', pairs))
        values = [arrays[0].copyto(self._home_of(k, arrays)) for k, arrays in pairs]
        by_kind = {}
        for v in values:
            by_kind.setdefault((v._t.dtype, v._t.device), []).append(v._t)
        flats = [torch.cat([t.reshape(-1) for t in ts]) for ts in by_kind.values()]
        self._comm.broadcast('init of %d key(s)' % len(pairs), flats)
        for flat, ts in zip(flats, by_kind.values()):
            offset = 0
            for t in ts:
                t.copy_(flat[offset:offset + t.numel()].view(t.shape))
                offset += t.numel()
        if pairs and self._key_type is None:
            self._key_type = type(pairs[0][0])
        for (k, _), v in zip(pairs, values):
            self._store[k] = v

    # ------------------------------------------------------------------ push
    @autograd.untracked
    def push(self, key, value, priority=0):
        """Sum the values of each key over devices and workers, then update (or store the sum).

        The sums travel while this returns: a bucket's result is applied when a value of it
        is read (pull, the next push of its keys, states, barrier), in push order on every worker."""
        pairs = self._pairs(key, value, 'push')
        stored = self._check_shapes(pairs, 'push')
        self._comm.agree('push', _signature('push', pairs))
        self._push_pairs(pairs, stored)

    def bucketed_push(self, keys, values):
        """A :class:`~neomx.kvstore.bucketed_push.BucketedPush` of ``keys`` with ``values``
        (one NDArray per key, read when pushed): rounds of pushes started bucket by bucket as
        the values are declared ready, the buckets planned by the store (Gluon's Trainer
        starts gradients' pushes from backward with it)."""
        return BucketedPush(self, keys, values)

    def _agree_push(self, keys, values):
        """Check that every worker is about to push ``keys`` with ``values``' shapes and dtypes
        (MXNetError otherwise); :meth:`_push_agreed` then pushes them, or parts of them."""
        self._comm.agree('push', _signature('push', self._pairs(keys, values, 'push')))

    @autograd.untracked
    def _push_agreed(self, keys, values):
        """``push`` without the check that the workers agree (done by :meth:`_agree_push`): the
        buckets started, for :meth:`_discard`."""
        pairs = self._pairs(keys, values, 'push')
        return self._push_pairs(pairs, self._check_shapes(pairs, 'push'))

    def _push_pairs(self, pairs, stored):
        sparse = [i for i, (_, arrays) in enumerate(pairs) if all(a.stype == 'row_sparse' for a in arrays)]
        if sparse:
            self._settle()      # a row_sparse push is applied at once: what was pushed before goes first
            for i in sparse:
                self._push_rows(pairs[i][0], pairs[i][1], stored[i])
            dense = [i for i in range(len(pairs)) if i not in set(sparse)]
            pairs, stored = [pairs[i] for i in dense], [stored[i] for i in dense]
            if not pairs:
                return []
        self._settle_keys({k for k, _ in pairs})
        targets = [self._update_target(k, s) for (k, _), s in zip(pairs, stored)]
        what = 'push of key(s) %s' % _key_list(pairs)
        if self._compression is not None:
            self._settle()      # applied at once: what was pushed before goes first
            sums = self._compressed_sums(what, pairs, targets)
            self._finish(_InFlight(what, [k for k, _ in pairs], sums, targets, stored, None))
            return []
        started = list(self._started(what, pairs, targets, stored))
        self._pending.extend(started)
        if self._updater is not None and not isinstance(self._updater, Updater):
            self._settle()      # a user's updater: its errors surface at the push, as on one machine
        return started

    def _push_rows(self, key, arrays, stored):
        """A row_sparse push: the workers all-gather the rows their (device-summed) gradients
        hold, never the whole value; every worker sums them and updates those rows alone, the
        same way (MXNet's servers update only the rows pushed)."""
        local = sum_row_sparse(arrays, stored.context)
        rows, values = local.indices._t, local.data._t
        what = 'row_sparse push of key %r' % (key,)
        if self._comm.size > 1:
            rows, values = self._gather_rows(what, rows, values)
            merged = sum_row_sparse([rows_array(r, v, stored.shape, stored.context) for r, v in zip(rows, values)],
                                    stored.context)
        else:
            merged = local
        target = self._update_target(key, stored)
        if self._updater is None:
            set_rows(target, merged.indices._t, merged.data._t)
        else:
            self._apply_updater(key, merged, target)
        if target is not stored:
            stored._t.copy_(target._t)

    def _gather_rows(self, what, rows, values):
        """Every worker's (rows, values): the row counts first, then the rows and values padded
        to the largest count, so that only rows present travel."""
        count = torch.tensor([rows.numel()], dtype=torch.int64)
        counts = [int(c) for c in self._comm.all_gather(what, count)]
        most = max(counts)
        padded_rows = rows.new_zeros(most)
        padded_rows[:rows.numel()] = rows
        padded_values = values.new_zeros((most,) + tuple(values.shape[1:]))
        padded_values[:rows.numel()] = values
        every_rows = self._comm.all_gather(what, padded_rows.cpu())
        every_values = self._comm.all_gather(what, padded_values.cpu())
        sent = count.numel() * 8 + padded_rows.numel() * 8 + padded_values.numel() * padded_values.element_size()
        self.traffic['sent'] += sent
        self.traffic['received'] += sent * (self._comm.size - 1)
        return ([r[:c].to(rows.device) for r, c in zip(every_rows, counts)],
                [v[:c].to(values.device) for v, c in zip(every_values, counts)])

    def _settle_keys(self, keys):
        """Apply the pushes in flight up to the last one holding one of ``keys`` (in push order)."""
        last = None
        for i, bucket in enumerate(self._pending):
            if not keys.isdisjoint(bucket.keys):
                last = i
        for _ in range(0 if last is None else last + 1):
            self._finish(self._pending.popleft())

    def _discard(self, buckets):
        """Wait for the allreduces of ``buckets`` (from :meth:`_push_agreed`) and drop their sums."""
        for bucket in buckets:
            if bucket in self._pending:
                self._pending.remove(bucket)
                self._comm.wait(bucket.what, bucket.work)

    def _settle(self):
        """Apply the pushes in flight, in push order."""
        while self._pending:
            self._finish(self._pending.popleft())

    def _finish(self, bucket):
        self._comm.wait(bucket.what, bucket.work)
        self._apply(bucket.keys, bucket.sums, bucket.targets)
        for target, value in zip(bucket.targets, bucket.stored):
            if target is not value:
                value._t.copy_(target._t)

    def _apply(self, keys, sums, targets):
        """Store the sums, or hand them to the updater (one fused call for the built-in one)."""
        if self._updater is None:
            for target, s in zip(targets, sums):
                if s is not target._t:      # else summed in place (resident buffers)
                    target._t.copy_(s)
            return
        merged = [wrap_tensor(s, t.context) for s, t in zip(sums, targets)]
        if isinstance(self._updater, Updater):
            self._updater([k.encode() if isinstance(k, str) else k for k in keys], merged, targets)
        else:
            for k, m, t in zip(keys, merged, targets):
                self._apply_updater(k, m, t)

    def _update_target(self, key, stored):
        """The array the sum updates: a float32 master copy for float16 keys under multi-precision."""
        optimizer = getattr(self._updater, 'optimizer', None)
        if stored._t.dtype != torch.float16 or not getattr(optimizer, 'multi_precision', False):
            return stored
        master = self._masters.get(key)
        if master is None:
            master = self._masters[key] = stored.astype('float32')
        return master

    def _started(self, what, pairs, targets, stored):
        """Pack each bucket (a worker's devices summed straight into it) and start its allreduce
        at once, so that packing the next bucket overlaps with sending this one."""
        groups = {}
        for pos, t in enumerate(targets):
            groups.setdefault((t._t.dtype, t._t.device), []).append(pos)
        for (dtype, device), positions in groups.items():
            nbytes = [targets[p]._t.numel() * targets[p]._t.element_size() for p in positions]
            for bucket in plan_buckets(nbytes):
                bucket = [positions[i] for i in bucket]
                keys = [pairs[p][0] for p in bucket]
                bucket_targets = [targets[p] for p in bucket]
                if self._updater is None:       # the sums become the stored values: reduce in place
                    flat, views = self._flats.resident(keys, bucket_targets, dtype, device)
                else:
                    flat, views = self._flats.scratch(keys, [t._t.shape for t in bucket_targets], dtype, device)
                for p, view in zip(bucket, views):
                    _local_sum(pairs[p][1], view)
                yield _InFlight(what, keys, views, bucket_targets, [stored[p] for p in bucket],
                                self._comm.start_allreduce(what, flat))

    def _compressed_sums(self, what, pairs, targets):
        """Per key, the sum over workers of each worker's 2-bit quantized (device-summed) value."""
        comp = self._compression
        codes, sizes = [], []
        for (k, arrays), t in zip(pairs, targets):
            local = torch.empty_like(t._t)
            _local_sum(arrays, local)
            codes.append(comp.quantize(k, local).reshape(-1))
            sizes.append(local.numel())
        packed = comp.pack(torch.cat(codes).cpu())
        every = self._comm.all_gather(what + ' (2-bit compressed)', packed)
        count = sum(sizes)
        total = None
        for rank_codes in every:
            values = comp.dequantize(rank_codes, count, torch.float32)
            total = values if total is None else total + values
        sums, offset = [], 0
        for t, n in zip(targets, sizes):
            sums.append(total[offset:offset + n].view(t._t.shape).to(device=t._t.device, dtype=t._t.dtype))
            offset += n
        return sums

    # ------------------------------------------------------------------ pull
    @autograd.untracked
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of each key into ``out``; each bucket in flight is copied out as
        soon as its sum is applied, while later buckets are still being reduced. Sparse outputs
        are left as they are with ``ignore_sparse`` (see ``KVStore.pull``)."""
        if out is None:
            raise MXNetError('kvstore.pull: out is required (the arrays to copy the values into)')
        pairs = self._pullable(self._pairs(key, out, 'pull'), ignore_sparse)
        stored = self._check_shapes(pairs, 'pull')
        waiting = {}
        for (k, outs), value in zip(pairs, stored):
            waiting.setdefault(k, []).append((value, outs))
        while self._pending and waiting:
            bucket = self._pending.popleft()
            self._finish(bucket)
            for k in bucket.keys:
                for value, outs in waiting.pop(k, ()):
                    _copy_out(value, outs)
        for requests in waiting.values():
            for value, outs in requests:
                _copy_out(value, outs)

    @autograd.untracked
    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` of each stored value (see ``KVStore.row_sparse_pull``)."""
        self._settle()
        super().row_sparse_pull(key, out, priority, row_ids)

    # ---------------------------------------------------------------- others
    def set_gradient_compression(self, compression_params):
        """2-bit compression of what workers contribute: ``{'type': '2bit', 'threshold': 0.5}``."""
        self._settle()
        self._compression = parse_compression(compression_params)

    def _set_updater(self, updater):
        self._settle()          # the pushes in flight are applied by the updater they were pushed under
        super()._set_updater(updater)

    set_updater = _set_updater

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the summed pushes (identically on every worker)."""
        super().set_optimizer(optimizer)
        self._masters.clear()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states; every worker holds the same states, any may save them."""
        self._settle()
        states = self._optimizer_updater('save_optimizer_states').get_states(dump_optimizer)
        atomic_write(fname, [states])

    def load_optimizer_states(self, fname):
        """Restore optimizer states written by :meth:`save_optimizer_states`."""
        self._settle()
        super().load_optimizer_states(fname)

    def _barrier(self):
        """Wait for every worker (MXNetError if one is doing something else)."""
        self._settle()
        self._comm.barrier()


def _settle_at_exit(ref):
    """A job ending right after a push: its allreduces end before the process group goes."""
    store = ref()
    if store is not None:
        try:
            store._settle()
        except MXNetError:      # a peer is gone: nothing left to wait for
            pass


def _key_list(pairs, limit=8):
    keys = [k for k, _ in pairs]
    text = ', '.join(map(repr, keys[:limit]))
    return text + (', ... (%d keys)' % len(keys) if len(keys) > limit else '')


def _copy_out(value, outs):
    """A pull's copies (no graph: the callers are untracked)."""
    for o in outs:
        o._t.copy_(value._t)


def _local_sum(arrays, out):
    """``out[:] = sum(arrays)`` (this worker's devices), cast to ``out``'s dtype and device."""
    out.copy_(arrays[0]._t)
    for a in arrays[1:]:
        out.add_(a._t.to(device=out.device, dtype=out.dtype))
