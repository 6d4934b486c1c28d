"""The server side of ``dist_async``: the weights, and the updater applied to each push.

It lives in worker 0's process and is reached from every worker through
``torch.distributed.rpc`` (its requests run on the RPC threads, so worker 0's own training
loop never blocks the others, and no worker waits for another). Each push is applied as it
arrives, under a lock, with the optimizer worker 0 set; float16 keys keep a float32 master
copy when the optimizer has ``multi_precision`` (as MXNet's servers do).

The module-level functions are the RPC entry points; they return an error text instead of
raising, so that the worker raises a plain ``MXNetError`` with it.
"""
import threading

import torch

from ..context import cpu
from ..ndarray.ndarray import _new
from ..optimizer import get_updater

__all__ = ['SERVER']


class _Server:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}
        self.masters = {}
        self.updater = None

    def set_optimizer(self, optimizer):
        with self.lock:
            self.updater = get_updater(optimizer)
            self.masters.clear()

    def init(self, keys, tensors):
        with self.lock:
            for k, t in zip(keys, tensors):
                if k in self.values:
                    return 'duplicate init of key %r' % (k,)
            for k, t in zip(keys, tensors):
                self.values[k] = t.detach().clone()
        return None

    def _target(self, key):
        stored = self.values[key]
        if stored.dtype == torch.float16 and getattr(self.updater.optimizer, 'multi_precision', False):
            master = self.masters.get(key)
            if master is None:
                master = self.masters[key] = stored.float()
            return master
        return stored

    def push(self, keys, tensors):
        with self.lock:
            if self.updater is None:
                return 'Updater needs to be set for async mode (call set_optimizer first)'
            missing = [k for k in keys if k not in self.values]
            if missing:
                return 'key(s) %s have not been initialized (call init first)' % missing
            for k, t in zip(keys, tensors):
                stored = self.values[k]
                if t.shape != stored.shape:
                    return 'key %r stores shape %s but a worker pushed %s' % (k, tuple(stored.shape), tuple(t.shape))
            for k, t in zip(keys, tensors):
                target = self._target(k)
                weight = _new(target, cpu(0))
                self.updater(k.encode() if isinstance(k, str) else k, _new(t.to(target.dtype), cpu(0)), weight)
                if target is not self.values[k]:
                    self.values[k].copy_(target)
        return None

    def pull(self, keys):
        with self.lock:
            missing = [k for k in keys if k not in self.values]
            if missing:
                return 'key(s) %s have not been initialized (call init first)' % missing
            return [self.values[k].clone() for k in keys]

    def states(self, dump_optimizer):
        with self.lock:
            if self.updater is None:
                return 'no optimizer is set (call set_optimizer first)'
            return self.updater.get_states(dump_optimizer)

    def set_states(self, blob):
        with self.lock:
            if self.updater is None:
                return 'no optimizer is set (call set_optimizer first)'
            self.updater.set_states(blob)
            self.masters.clear()
        return None


SERVER = _Server()


def push(keys, tensors):
    return SERVER.push(keys, tensors)


def pull(keys):
    return SERVER.pull(keys)


def states(dump_optimizer):
    return SERVER.states(dump_optimizer)


def set_states(blob):
    return SERVER.set_states(blob)


def decode_push(keys, packed, sizes, shapes, threshold):
    """A 2-bit compressed push: decode the codes, then apply as :func:`push`."""
    from .compression import TwoBitCompression
    values = TwoBitCompression(threshold).dequantize(packed, sum(sizes), torch.float32)
    tensors, offset = [], 0
    for n, shape in zip(sizes, shapes):
        tensors.append(values[offset:offset + n].view(shape))
        offset += n
    return SERVER.push(keys, tensors)
