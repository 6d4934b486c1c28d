"""The server side of ``dist_async``: this process's shard of the weights, and the updater.

Every worker process hosts one server shard, reached from the other workers through
``torch.distributed.rpc`` (requests run on the RPC threads, so a worker's own training loop
never blocks the others). A shard holds *slots* ``(key, part)``: a small key lives whole on
one server, a key larger than ``MXNET_KVSTORE_BIGARRAY_BOUND`` values is cut into one part per
server (see ``DistAsyncKVStore._layout``). Each push is applied as it arrives, under a lock,
with the optimizer this worker set; float16 slots keep a float32 master copy when the optimizer
has ``multi_precision`` (as MXNet's servers do).

The module-level functions are the RPC entry points; they return an error text instead of
raising, so that the caller raises a plain ``MXNetError`` with it.
"""
import threading

import torch

from .. import autograd
from ..context import cpu
from ..ndarray.ndarray import wrap_tensor
from ..ndarray.sparse_arrays import rows_array
from ..optimizer import get_updater, state_format

__all__ = ['SERVER']


class _Shard:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}
        self.masters = {}
        self.updater = None

    def set_optimizer(self, optimizer):
        with self.lock:
            self.updater = get_updater(optimizer)
            self.masters.clear()

    @autograd.untracked
    def init(self, slots, tensors):
        with self.lock:
            for slot, t in zip(slots, tensors):
                if slot in self.values:
                    return 'duplicate init of key %r' % (slot[0],)
            for slot, t in zip(slots, tensors):
                self.values[slot] = t.detach().clone()
        return None

    def _target(self, slot):
        stored = self.values[slot]
        if stored.dtype == torch.float16 and getattr(self.updater.optimizer, 'multi_precision', False):
            master = self.masters.get(slot)
            if master is None:
                master = self.masters[slot] = stored.float()
            return master
        return stored

    @autograd.untracked
    def push(self, slots, tensors):
        with self.lock:
            if self.updater is None:
                return 'Updater needs to be set for async mode (call set_optimizer first)'
            missing = [s[0] for s in slots if s not in self.values]
            if missing:
                return 'key(s) %s have not been initialized (call init first)' % missing
            for slot, t in zip(slots, tensors):
                if t.shape != self.values[slot].shape:
                    return 'key %r stores shape %s but a worker pushed %s' % (
                        slot[0], tuple(self.values[slot].shape), tuple(t.shape))
            for (key, part), t in zip(slots, tensors):
                target = self._target((key, part))
                self.updater(key.encode() if isinstance(key, str) else key, wrap_tensor(t.to(target.dtype), cpu(0)),
                             wrap_tensor(target, cpu(0)))
                if target is not self.values[(key, part)]:
                    self.values[(key, part)].copy_(target)
        return None

    @autograd.untracked
    def push_rows(self, slots, row_shapes, rows_list, values_list):
        """A row_sparse push: per slot, the gradient's rows (local to the slot) and values; the
        optimizer sees a row_sparse gradient and updates those rows (lazily, as MXNet's)."""
        with self.lock:
            if self.updater is None:
                return 'Updater needs to be set for async mode (call set_optimizer first)'
            missing = [s[0] for s in slots if s not in self.values]
            if missing:
                return 'key(s) %s have not been initialized (call init first)' % missing
            for (key, part), row_shape, rows, values in zip(slots, row_shapes, rows_list, values_list):
                target = self._target((key, part))
                view = target.view((-1,) + tuple(row_shape))
                grad = rows_array(rows, values.to(target.dtype), tuple(view.shape), cpu(0))
                self.updater(key.encode() if isinstance(key, str) else key, grad, wrap_tensor(view, cpu(0)))
                if target is not self.values[(key, part)]:
                    self.values[(key, part)].copy_(target)
        return None

    @autograd.untracked
    def pull_rows(self, slots, row_shapes, rows_list):
        """The rows ``rows_list[i]`` of each slot (only those travel back)."""
        with self.lock:
            missing = [s[0] for s in slots if s not in self.values]
            if missing:
                return 'key(s) %s have not been initialized (call init first)' % missing
            # indexing by a tensor of rows copies them: the answer shares nothing with the shard
            return [self.values[s].view((-1,) + tuple(shape))[rows]
                    for s, shape, rows in zip(slots, row_shapes, rows_list)]

    @autograd.untracked
    def pull(self, slots):
        with self.lock:
            missing = [s[0] for s in slots if s not in self.values]
            if missing:
                return 'key(s) %s have not been initialized (call init first)' % missing
            return [self.values[s].clone() for s in slots]

    def states(self):
        with self.lock:
            if self.updater is None:
                return 'no optimizer is set (call set_optimizer first)'
            return state_format.dumps(self.updater.states)

    def set_states(self, blob):
        with self.lock:
            if self.updater is None:
                return 'no optimizer is set (call set_optimizer first)'
            self.updater.set_states(blob)
            # the file holds every server's keys: keep this server's only, or a later save
            # would find each key on every server
            held = {key for key, _ in self.values}
            for key in [k for k in self.updater.states if k not in held]:
                del self.updater.states[key]
                self.updater.states_synced.pop(key, None)
            self.masters.clear()
        return None


SERVER = _Shard()
_ORDER = threading.Condition()
_NEXT = {}          # per worker: the number of its next request to run


def in_order(worker, seq, calls):
    """Run ``calls`` (``[(fn, args)]``, in that order) as message ``seq`` of ``worker``, after
    its earlier ones: a worker's requests run in the order it made them (RPC threads may pick
    messages up in any order); the list of their results (an error text for the whole message)."""
    with _ORDER:
        if not _ORDER.wait_for(lambda: _NEXT.get(worker, 0) == seq, timeout=_ORDER_TIMEOUT):
            return 'request %d of worker %d waited %d s for its earlier ones' % (seq, worker, _ORDER_TIMEOUT)
    try:
        return [fn(*args) for fn, args in calls]
    finally:
        with _ORDER:
            _NEXT[worker] = seq + 1
            _ORDER.notify_all()


_ORDER_TIMEOUT = 600


def init(slots, tensors):
    return SERVER.init(slots, tensors)


def push(slots, tensors):
    return SERVER.push(slots, tensors)


def pull(slots):
    return SERVER.pull(slots)


def push_rows(slots, row_shapes, rows_list, values_list):
    return SERVER.push_rows(slots, row_shapes, rows_list, values_list)


def pull_rows(slots, row_shapes, rows_list):
    return SERVER.pull_rows(slots, row_shapes, rows_list)


def states():
    return SERVER.states()


def set_states(blob):
    return SERVER.set_states(blob)


def decode_push(slots, packed, sizes, shapes, threshold):
    """A 2-bit compressed push: decode the codes, then apply as :func:`push`."""
    from .compression import TwoBitCompression
    values = TwoBitCompression(threshold).dequantize(packed, sum(sizes), torch.float32)
    tensors, offset = [], 0
    for n, shape in zip(sizes, shapes):
        tensors.append(values[offset:offset + n].view(shape))
        offset += n
    return SERVER.push(slots, tensors)
