"""``dist_async``: each push updates the weights as it arrives, without waiting for other workers.

The weights live on a server (:mod:`.async_server`, in worker 0's process) reached through
``torch.distributed.rpc``. ``init`` is done by rank 0 only, then all workers meet at a barrier;
``set_optimizer`` installs worker 0's optimizer on the server (an optimizer is required:
pushing without one raises "Updater needs to be set for async mode"); ``push`` sums this
worker's devices' copies and sends the sum (2-bit compressed if asked); ``pull`` fetches the
server's current value.
"""
import atexit
import warnings

import torch
import torch.distributed as dist

from ..base import MXNetError, atomic_write
from ..context import cpu
from ..ndarray.ndarray import _new
from . import async_server, placement
from .collectives import Collectives
from .compression import parse_compression
from .kvstore import KVStore

__all__ = ['DistAsyncKVStore']

_SERVER = 'neomx-kvstore-0'
_RPC = {'started': False}


def _start_rpc(group):
    """Join torch.distributed.rpc once per process, over the job's rendezvous store."""
    if _RPC['started']:
        return
    from torch.distributed import rpc
    from torch.distributed.rendezvous import register_rendezvous_handler

    def handler(url, **kwargs):
        yield dist.PrefixStore('rpc/', group.store), group.rank, group.num_workers

    try:
        register_rendezvous_handler('neomxkv', handler)
    except RuntimeError:
        pass           # registered by an earlier store of this process
    options = rpc.TensorPipeRpcBackendOptions(init_method='neomxkv://', rpc_timeout=group.timeout)
    with warnings.catch_warnings():      # torch's own RPC setup warns about its internal API use
        warnings.filterwarnings('ignore', message='You are using a Backend')
        rpc.init_rpc('neomx-kvstore-%d' % group.rank, rank=group.rank, world_size=group.num_workers,
                     rpc_backend_options=options)
    _RPC['started'] = True
    atexit.register(rpc.shutdown)


class DistAsyncKVStore(KVStore):
    """An asynchronous distributed store (``mx.kv.create('dist_async')``); see the module doc."""

    def __init__(self, name='dist_async'):
        super().__init__()
        self._name = name
        self._group = placement.init_process_group()
        self._comm = Collectives(self._group)
        self._shapes = {}
        _start_rpc(self._group)

    @property
    def type(self):
        return self._name

    @property
    def rank(self):
        return self._group.rank

    @property
    def num_workers(self):
        return self._group.num_workers

    # ------------------------------------------------------------ transport
    def _call(self, what, fn, *args):
        """Run ``fn`` on the server (directly on worker 0); MXNetError for its error text."""
        if self._group.rank == 0:
            result = fn(*args)
        else:
            from torch.distributed import rpc
            try:
                result = rpc.rpc_sync(_SERVER, fn, args=args)
            except RuntimeError as err:
                raise MXNetError('kvstore %s on rank %d: the server (worker 0) is unreachable: %s'
                                 % (what, self._group.rank, str(err).strip().splitlines()[0])) from None
        if isinstance(result, str):
            raise MXNetError('kvstore %s: %s' % (what, result))
        return result

    # ------------------------------------------------------------------ API
    def init(self, key, value):
        """Rank 0 initializes the key(s) on the server; every worker then waits at a barrier."""
        pairs = self._pairs(key, value, 'init')
        for k, arrays in pairs:
            if k in self._shapes:
                raise MXNetError('kvstore.init: duplicate init of key %r. Please double check if you called '
                                 'kv.init or kv.broadcast with this key multiple times' % (k,))
        if self._group.rank == 0:
            self._call('init', async_server.SERVER.init, [k for k, _ in pairs],
                       [a[0]._t.detach().to('cpu') for _, a in pairs])
        if pairs and self._key_type is None:
            self._key_type = type(pairs[0][0])
        for k, arrays in pairs:
            self._shapes[k] = (tuple(arrays[0].shape), arrays[0]._t.dtype)
        self._comm.barrier()

    def _check(self, pairs, what):
        for k, arrays in pairs:
            known = self._shapes.get(k)
            if known is None:
                raise MXNetError('kvstore.%s: key %r has not been initialized (call init first)' % (what, k))
            for a in arrays:
                if tuple(a.shape) != known[0]:
                    raise MXNetError('kvstore.%s: key %r stores shape %s but got %s' % (what, k, known[0], a.shape))

    def push(self, key, value, priority=0):
        """Send this worker's (device-summed) value(s); the server updates at once."""
        pairs = self._pairs(key, value, 'push')
        self._check(pairs, 'push')
        keys = [k for k, _ in pairs]
        sums = []
        for _, arrays in pairs:
            total = arrays[0]._t.detach().to('cpu', copy=True)
            for a in arrays[1:]:
                total += a._t.detach().to(device='cpu', dtype=total.dtype)
            sums.append(total)
        if self._compression is None:
            self._call('push', async_server.push, keys, sums)
            return
        comp = self._compression
        codes = [comp.quantize(k, s.float()).reshape(-1) for k, s in zip(keys, sums)]
        packed = comp.pack(torch.cat(codes))
        self._call('push', async_server.decode_push, keys, packed, [s.numel() for s in sums],
                   [tuple(s.shape) for s in sums], comp.threshold)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the server's current value(s) into ``out``."""
        if out is None:
            raise MXNetError('kvstore.pull: out is required (the arrays to copy the values into)')
        pairs = self._pairs(key, out, 'pull')
        self._check(pairs, 'pull')
        values = self._call('pull', async_server.pull, [k for k, _ in pairs])
        with torch.no_grad():
            for (_, outs), v in zip(pairs, values):
                for o in outs:
                    o._t.copy_(v)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` (the other rows of ``out`` become 0)."""
        if out is None or row_ids is None:
            raise MXNetError('kvstore.row_sparse_pull: out and row_ids are required')
        pairs = self._pairs(key, out, 'row_sparse_pull')
        self._check(pairs, 'row_sparse_pull')
        values = self._call('row_sparse_pull', async_server.pull, [k for k, _ in pairs])
        stored = [_new(v, cpu(0)) for v in values]
        ids = row_ids if isinstance(row_ids, (list, tuple)) else [row_ids]
        outs = [o for _, arrays in pairs for o in arrays]
        ids = ids * len(outs) if len(ids) == 1 else ids
        with torch.no_grad():
            self._pull_rows(pairs, stored, iter(ids))

    def set_optimizer(self, optimizer):
        """Worker 0's optimizer runs on the server; all workers meet at a barrier after it."""
        if self._group.rank == 0:
            async_server.SERVER.set_optimizer(optimizer)
        self._comm.barrier()

    def _set_updater(self, updater):
        raise MXNetError('kvstore dist_async: the updater runs on the server; use set_optimizer')

    set_updater = _set_updater

    def set_gradient_compression(self, compression_params):
        """2-bit compression of what this worker sends: ``{'type': '2bit', 'threshold': 0.5}``."""
        self._compression = parse_compression(compression_params)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Fetch the server's optimizer states and write them to ``fname`` (any worker may)."""
        atomic_write(fname, [self._call('save_optimizer_states', async_server.states, dump_optimizer)])

    def load_optimizer_states(self, fname):
        """Send the states in ``fname`` to the server."""
        with open(fname, 'rb') as f:
            blob = f.read()
        self._call('load_optimizer_states', async_server.set_states, blob)

    def _barrier(self):
        self._comm.barrier()
