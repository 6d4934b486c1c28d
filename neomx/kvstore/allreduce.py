"""``horovod`` and ``byteps``: allreduce-style stores (``broadcast`` and ``pushpull`` only).

MXNet 1.9.1 wraps Horovod and BytePS as stores without optimizer support: the Trainer sums
gradients with ``pushpull`` and every worker updates its own weights. neomx provides the same
interface on torch.distributed (the same process group as the ``dist_*`` stores), so scripts
written for them run without Horovod or BytePS installed.
"""
import torch

from .. import autograd
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from . import rendezvous
from .base import KVStoreBase
from .collectives import Collectives
from .group_member import GroupMember

__all__ = ['AllreduceKVStore']


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class AllreduceKVStore(GroupMember, KVStoreBase):
    """An allreduce store (``mx.kv.create('horovod')``): sums over workers, no optimizer."""

    def __init__(self, name='horovod'):
        self._name = name
        self._group = rendezvous.init_process_group()
        self._comm = Collectives(self._group)

    @property
    def local_rank(self):
        return self._group.place.local_rank

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError('Unknown capability: {}'.format(capability))

    def _pairs(self, key, value, what):
        keys = _as_list(key)
        values = value if isinstance(key, (list, tuple)) else [value]
        if len(values) != len(keys):
            raise MXNetError('kvstore %s.%s: %d keys need %d values' % (self._name, what, len(keys), len(keys)))
        pairs = [(k, _as_list(v)) for k, v in zip(keys, values)]
        for k, arrays in pairs:
            if not arrays or not all(isinstance(a, NDArray) for a in arrays):
                raise MXNetError('kvstore %s.%s: key %r needs NDArrays' % (self._name, what, k))
        return pairs

    def _run(self, what, key, value, out, collective):
        pairs = self._pairs(key, value, what)
        outs = [arrays for _, arrays in pairs] if out is None else [_as_list(o) for o in
                                                                    (out if isinstance(key, (list, tuple)) else [out])]
        self._comm.agree(what, '%s %s' % (what, ';'.join('%r:%s:%s' % (k, a[0].shape, a[0].dtype)
                                                          for k, a in pairs)))
        flat = []
        for _, arrays in pairs:
            total = arrays[0]._t.detach().reshape(-1).clone()
            for a in arrays[1:]:
                total += a._t.detach().reshape(-1).to(total.device)
            flat.append(total)
        buffer = torch.cat(flat) if flat else torch.empty(0)
        collective(what, [buffer])
        offset = 0
        with torch.no_grad():
            for (_, arrays), targets in zip(pairs, outs):
                n = arrays[0]._t.numel()
                for o in targets:
                    o._t.copy_(buffer[offset:offset + n].view(o._t.shape))
                offset += n

    @autograd.untracked
    def broadcast(self, key, value, out, priority=0):
        """Write rank 0's ``value`` into ``out`` on every worker."""
        self._run('broadcast', key, value, out, self._comm.broadcast)

    @autograd.untracked
    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` over devices and workers into ``out`` (``value`` itself when None)."""
        self._run('pushpull', key, value, out, self._comm.allreduce)

    def set_optimizer(self, optimizer):
        raise MXNetError('kvstore %s has no optimizer support: use update_on_kvstore=False' % self._name)

    def _barrier(self):
        self._comm.barrier()
