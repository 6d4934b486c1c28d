"""``dist_async``: each push updates the weights as it arrives, without waiting for other workers.

The weights live on servers (:mod:`.async_server`): every worker process hosts one shard,
reached from the others through ``torch.distributed.rpc``. A key with at most
``MXNET_KVSTORE_BIGARRAY_BOUND`` values (default 1e6) lives whole on one server chosen by key;
a bigger key is cut into one contiguous part per server. ``init`` is done by rank 0 only, then
all workers meet at a barrier; ``set_optimizer`` installs each worker's optimizer on its own
shard (an optimizer is required: pushing without one raises "Updater needs to be set for async
mode"); ``push`` sums this worker's devices' copies and sends each server its part (2-bit
compressed if asked) without waiting: to another worker's server it travels with this
worker's next request there (:mod:`.async_outbox`); ``pull`` fetches the servers' current
values, after this worker's earlier pushes. One ``dist_async`` store per process (the shard is
the process's).

A server's requests run on RPC threads that must take the GIL from the worker's training
loop, so a process serving other workers lowers the interpreter's switch interval while RPC
runs (Python's 5 ms would be each request's wait), and the processes talk over TCP only
(TensorPipe's shared-memory transport keeps a thread busy-polling in each).
"""
import atexit
import os
import sys
import warnings
import weakref
import zlib

import torch
import torch.distributed as dist

from .. import autograd
from .._torch_private import tcp_rpc_options
from ..base import MXNetError, atomic_write
from ..optimizer import state_format
from ..context import cpu
from ..ndarray.sparse_arrays import arrive_later, set_rows, sum_row_sparse
from ..operator.storage import distinct_ids
from . import async_server, rendezvous
from .async_outbox import Outbox, server_name
from .collectives import Collectives
from .group_member import GroupMember
from .compression import parse_compression
from .kvstore import KVStore

__all__ = ['DistAsyncKVStore']

_MAX_IN_FLIGHT = 4      # messages of pushes a worker sends before waiting for the oldest's answer
_RPC = {'started': False}
_SERVING_SWITCH_INTERVAL = 0.0005   # seconds: the GIL's switch interval while serving (see _start_rpc)


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
    options = tcp_rpc_options('neomxkv://', group.timeout)
    with warnings.catch_warnings():      # torch's own RPC setup warns about its internal API use
        warnings.filterwarnings('ignore', message='You are using a Backend')
        rpc.init_rpc(server_name(group.rank), rank=group.rank, world_size=group.num_workers,
                     rpc_backend_options=options)
    _RPC['started'] = True
    if group.num_workers > 1:
        # this process now serves the other workers' requests on RPC threads, which must take
        # the GIL from the training loop: every 5 ms (Python's default) would leave each
        # request waiting for up to that; the interpreter's setting is restored at shutdown
        previous = sys.getswitchinterval()
        sys.setswitchinterval(min(previous, _SERVING_SWITCH_INTERVAL))
        atexit.register(sys.setswitchinterval, previous)
    atexit.register(rpc.shutdown)


def _close_at_exit(ref):
    store = ref()
    if store is not None:
        store._outbox.close()
        try:
            store._settle()
        except MXNetError:
            pass        # a push's error with nobody left to tell: the program has ended


def _stable_hash(key):
    """The same number for a key in every process (Python's str hash is salted per process)."""
    return key if isinstance(key, int) else zlib.crc32(key.encode())


def bigarray_bound():
    """Keys with more values than this are cut into one part per server (MXNet's default 1e6)."""
    return int(float(os.environ.get('MXNET_KVSTORE_BIGARRAY_BOUND', 1000000)))


class DistAsyncKVStore(GroupMember, KVStore):
    """An asynchronous distributed store (``mx.kv.create('dist_async')``); see the module doc."""

    def __init__(self, name='dist_async'):
        super().__init__()
        self._name = name
        self._group = rendezvous.init_process_group()
        self._comm = Collectives(self._group)
        self._layouts = {}
        # bytes of values sent by row_sparse pushes and received by pulls (row_sparse_pull
        # moves only the rows asked for: see benchmarks/bench_sparse.py)
        self.traffic = {'sent': 0, 'received': 0}
        _start_rpc(self._group)
        self._outbox = Outbox(self.rank)
        atexit.register(_close_at_exit, weakref.ref(self))     # before RPC shuts down (registered first)

    # ---------------------------------------------------------- placement
    def _layout(self, key, shape, dtype):
        """``(shape, dtype, [(server, start, stop)])``: a small key lives whole on one server,
        chosen by key; a big one is cut into one contiguous part per server."""
        numel = 1
        for d in shape:
            numel *= d
        n = self.num_workers
        if numel > bigarray_bound() and n > 1:
            # cut between rows, so that row_sparse pushes and pulls address whole rows of a part
            rows = shape[0] if shape else 1
            row = numel // rows if rows else 1
            parts = [(r, row * (rows * r // n), row * (rows * (r + 1) // n)) for r in range(n)]
        else:
            parts = [(_stable_hash(key) % n, 0, numel)]
        return shape, dtype, parts

    def _slices(self, pairs, tensors):
        """Per server: ([slots], [tensor parts]) of the given keys' tensors."""
        by_server = {}
        for (k, _), t in zip(pairs, tensors):
            shape, _, parts = self._layouts[k]
            for part, (server, start, stop) in enumerate(parts):
                piece = t if len(parts) == 1 else t.reshape(-1)[start:stop]
                slots, pieces = by_server.setdefault(server, ([], []))
                slots.append((k, part))
                pieces.append(piece)
        return by_server

    # ------------------------------------------------------------ transport
    def _call_all(self, what, requests, wait=True):
        """Run ``{server: (fn, args)}`` on the servers at once (this worker's own directly);
        their results by server, MXNetError for an error text or a lost server.

        Each server runs this worker's requests in the order they were made
        (:func:`async_server.in_order`), so a push need not be waited for (``wait=False``, as
        MXNet's pushes are asynchronous): a later pull from the same server sees it. Such a
        push to another worker's server travels with this worker's next request to that
        server (see :mod:`.async_outbox`); its errors surface at a later call."""
        outbox, sent, results = self._outbox, {}, {}
        for server, call in requests.items():
            if server != self.rank:
                if wait:
                    sent[server] = outbox.send(server, what, call)
                else:
                    outbox.defer(server, what, call)
        for server, (fn, args) in requests.items():
            if server == self.rank:
                results[server] = fn(*args)
        for server, (whats, fut) in sent.items():
            results[server] = self._answers(whats, server, fut)[-1]
        for server, result in results.items():
            if isinstance(result, str):
                raise MXNetError('kvstore %s: %s' % (what, result))
        # messages in flight: the finished ones checked, the oldest awaited beyond a few
        self._settle(_MAX_IN_FLIGHT, flush=False)
        return results

    def _answers(self, whats, server, fut):
        """The results of a message's calls (``whats`` names them); MXNetError for a lost
        server, or for an error of a push that travelled before the request waited for."""
        try:
            answers = fut.wait()
        except RuntimeError as err:
            raise MXNetError('kvstore %s on rank %d: the server in worker %d is unreachable: %s'
                             % (whats[-1], self.rank, server, str(err).strip().splitlines()[0])) from None
        if isinstance(answers, str):        # the message itself failed
            raise MXNetError('kvstore %s: %s' % (whats[-1], answers))
        for what, answer in zip(whats[:-1], answers):
            if isinstance(answer, str):
                raise MXNetError('kvstore %s: %s' % (what, answer))
        return answers

    def _settle(self, keep=0, flush=True):
        """Send the pushes kept for later (``flush``) and wait for the messages in flight until
        at most ``keep`` remain (finished ones are always collected); MXNetError for one that
        failed."""
        if flush:
            self._outbox.flush()
        in_flight = self._outbox.in_flight
        while in_flight and (len(in_flight) > keep or in_flight[0][2].done()):
            whats, server, fut = in_flight.popleft()
            answers = self._answers(whats, server, fut)
            if isinstance(answers[-1], str):
                raise MXNetError('kvstore %s: %s' % (whats[-1], answers[-1]))

    # ------------------------------------------------------------------ API
    @autograd.untracked
    def init(self, key, value):
        """Rank 0 initializes the key(s) on the servers; every worker then waits at a barrier."""
        pairs = self._pairs(key, value, 'init')
        for k, arrays in pairs:
            if k in self._layouts:
                raise MXNetError('kvstore.init: duplicate init of key %r. Please double check if you called '
                                 'kv.init or kv.broadcast with this key multiple times' % (k,))
        for k, arrays in pairs:
            self._layouts[k] = self._layout(k, tuple(arrays[0].shape), arrays[0]._t.dtype)
        if self.rank == 0:
            tensors = [a[0]._t.detach().to('cpu') for _, a in pairs]
            self._call_all('init', {server: (async_server.init, (slots, [p.clone() for p in pieces]))
                                    for server, (slots, pieces) in self._slices(pairs, tensors).items()})
        if pairs and self._key_type is None:
            self._key_type = type(pairs[0][0])
        self._comm.barrier()

    def _check(self, pairs, what):
        for k, arrays in pairs:
            known = self._layouts.get(k)
            if known is None:
                raise MXNetError('kvstore.%s: key %r has not been initialized (call init first)' % (what, k))
            for a in arrays:
                if tuple(a.shape) != known[0]:
                    raise MXNetError('kvstore.%s: key %r stores shape %s but got %s' % (what, k, known[0], a.shape))

    @autograd.untracked
    def push(self, key, value, priority=0):
        """Send this worker's (device-summed) value(s); each server updates its part at once."""
        pairs = self._pairs(key, value, 'push')
        self._check(pairs, 'push')
        if async_server.SERVER.updater is None:     # every worker sets the optimizer of its own server
            raise MXNetError('kvstore push: Updater needs to be set for async mode (call set_optimizer first)')
        if all(a.stype == 'row_sparse' for _, arrays in pairs for a in arrays):
            self._push_rows(pairs)
            return
        sums = []
        for _, arrays in pairs:
            total = arrays[0]._t.detach().to('cpu', copy=True)
            for a in arrays[1:]:
                total += a._t.detach().to(device='cpu', dtype=total.dtype)
            sums.append(total)
        if self._compression is None:
            self._call_all('push', {server: (async_server.push, (slots, pieces))
                                    for server, (slots, pieces) in self._slices(pairs, sums).items()},
                           wait=False)
            return
        comp = self._compression
        codes = [comp.quantize(k, s.float()) for (k, _), s in zip(pairs, sums)]
        requests = {}
        for server, (slots, pieces) in self._slices(pairs, codes).items():
            packed = comp.pack(torch.cat([p.reshape(-1) for p in pieces]))
            requests[server] = (async_server.decode_push, (slots, packed, [p.numel() for p in pieces],
                                                            [tuple(p.shape) for p in pieces], comp.threshold))
        self._call_all('push', requests, wait=False)

    def _row_parts(self, key):
        """Per part of ``key``: (server, first row, end row, values per row)."""
        shape, _, parts = self._layouts[key]
        row = 1
        for d in shape[1:]:
            row *= d
        return [(server, start // row, stop // row, row) for server, start, stop in parts]

    def _by_part(self, key, rows):
        """``rows`` (sorted int64) split over the parts of ``key``: [(server, part, local rows,
        slice of ``rows``)]."""
        parts = self._row_parts(key)
        # one binary search for every part's bounds (rows are sorted): no mask per part
        bounds = torch.searchsorted(rows, torch.tensor([p[1] for p in parts] + [parts[-1][2]])).tolist()
        out = []
        for part, (server, lo, _, _) in enumerate(parts):
            if bounds[part] < bounds[part + 1]:
                picked = slice(bounds[part], bounds[part + 1])
                out.append((server, part, rows[picked] - lo, picked))
        return out

    def _push_rows(self, pairs):
        """A row_sparse push: each server gets only the rows of its parts that the summed
        gradient holds, and updates just those rows."""
        requests = {}
        for k, arrays in pairs:
            total = sum_row_sparse(arrays, cpu(0))
            rows, values = total.indices._t, total.data._t
            row_shape = tuple(self._layouts[k][0][1:])
            for server, part, local, rows_of_part in self._by_part(k, rows):
                args = requests.setdefault(server, (async_server.push_rows, ([], [], [], [])))[1]
                args[0].append((k, part))
                args[1].append(row_shape)
                picked = values[rows_of_part]
                args[2].append(local)
                args[3].append(picked)
                self.traffic['sent'] += local.numel() * 8 + picked.numel() * picked.element_size()
        self._call_all('push', requests, wait=False)

    def _ask_rows(self, requests, key, rows):
        """Add to ``requests`` ({server: (pull_rows, args)}) the reads of ``rows`` (sorted int64)
        of ``key``; where each part's answer will be: [(server, position in its answer)]."""
        order = []
        row_shape = tuple(self._layouts[key][0][1:])
        for server, part, local, _ in self._by_part(key, rows):
            args = requests.setdefault(server, (async_server.pull_rows, ([], [], [])))[1]
            args[0].append((key, part))
            args[1].append(row_shape)
            args[2].append(local)
            order.append((server, len(args[0]) - 1))
        return order

    def _rows_of(self, results, key, order):
        """The values of the rows :meth:`_ask_rows` asked for: only those rows travelled."""
        pieces = [results[server][i] for server, i in order]
        if len(pieces) == 1:
            values = pieces[0]
        elif pieces:
            values = torch.cat(pieces)
        else:
            values = torch.zeros((0,) + tuple(self._layouts[key][0][1:]), dtype=self._layouts[key][1])
        return values

    def _fetch(self, pairs, what):
        """The servers' current values of the keys, as whole tensors."""
        requests = {}
        for k, _ in pairs:
            for part, (server, _, _) in enumerate(self._layouts[k][2]):
                requests.setdefault(server, (async_server.pull, ([],)))[1][0].append((k, part))
        results = self._call_all(what, requests)
        got = {}
        for server, (_, (slots,)) in requests.items():
            got.update(zip(slots, results[server]))
        values = []
        for k, _ in pairs:
            shape, _, parts = self._layouts[k]
            if len(parts) == 1:
                values.append(got[(k, 0)])
            else:
                values.append(torch.cat([got[(k, p)] for p in range(len(parts))]).view(shape))
        return values

    @autograd.untracked
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the servers' current value(s) into ``out``."""
        if out is None:
            raise MXNetError('kvstore.pull: out is required (the arrays to copy the values into)')
        pairs = self._pullable(self._pairs(key, out, 'pull'), ignore_sparse)
        self._check(pairs, 'pull')
        with torch.no_grad():
            for (_, outs), v in zip(pairs, self._fetch(pairs, 'pull')):
                self.traffic['received'] += v.numel() * v.element_size()
                for o in outs:
                    o._t.copy_(v)

    @autograd.untracked
    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` (the other rows of ``out`` become 0).

        As MXNet's engine runs a pull while the program goes on, a RowSparseNDArray ``out``
        gets its rows when it is first read: the request to another worker's server waits to
        travel with this worker's next request there (a ``pull`` of the bias right after,
        say), or goes when ``out`` is read, whichever comes first."""
        if out is None or row_ids is None:
            raise MXNetError('kvstore.row_sparse_pull: out and row_ids are required')
        pairs = self._pairs(key, out, 'row_sparse_pull')
        self._check(pairs, 'row_sparse_pull')
        ids = iter(self._row_ids_per_output(pairs, row_ids))
        # every key's and output's rows in one request per server (one round trip in all)
        requests, wanted = {}, []
        for k, outs in pairs:
            for o in outs:
                rows = distinct_ids(next(ids)._t.to(device='cpu', dtype=torch.int64).reshape(-1))[0]
                order = self._ask_rows(requests, k, rows)
                wanted.append((o, k, rows, order))
                shape, dtype, _ = self._layouts[k]
                row = 1
                for d in shape[1:]:
                    row *= d
                # only these rows travel back
                self.traffic['received'] += rows.numel() * row * dtype.itemsize
        results, replies = {}, {}
        for server, (fn, args) in requests.items():
            if server == self.rank:
                results[server] = fn(*args)
                if isinstance(results[server], str):
                    raise MXNetError('kvstore row_sparse_pull: %s' % results[server])
            else:
                replies[server] = self._outbox.defer(server, 'row_sparse_pull', (fn, args), reply=True)

        def answers():
            # the other servers' answers (waited for once, by the first output read)
            for server in [s for s in replies if s not in results]:
                whats, future, position = replies[server].wait()
                answer = self._answers(whats, server, future)[position]
                if isinstance(answer, str):
                    raise MXNetError('kvstore row_sparse_pull: %s' % answer)
                results[server] = answer
            return results

        with torch.no_grad():
            for o, k, rows, order in wanted:
                def fetch(k=k, rows=rows, order=order):
                    return rows, self._rows_of(answers(), k, order)
                if not (replies and arrive_later(o, fetch)):
                    set_rows(o, *fetch())

    def set_optimizer(self, optimizer):
        """Every worker's server shard runs that worker's optimizer (call it on every worker, as
        MXNet scripts do); the workers meet at a barrier after it."""
        self._settle()
        async_server.SERVER.set_optimizer(optimizer)
        self._comm.barrier()

    def _set_updater(self, updater):
        raise MXNetError('kvstore dist_async: the updater runs on the servers; use set_optimizer')

    set_updater = _set_updater

    def set_gradient_compression(self, compression_params):
        """2-bit compression of what this worker sends: ``{'type': '2bit', 'threshold': 0.5}``."""
        self._compression = parse_compression(compression_params)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Gather every server's optimizer states into ``fname`` (any worker may call it)."""
        results = self._call_all('save_optimizer_states',
                                 {server: (async_server.states, ()) for server in range(self.num_workers)})
        merged, owner = {}, {}
        for server in sorted(results):
            for key, state in state_format.loads(results[server]).items():
                if key in merged:
                    raise MXNetError('kvstore dist_async save_optimizer_states: the states of key %r are split '
                                     'over servers %d and %d (it has more than MXNET_KVSTORE_BIGARRAY_BOUND '
                                     'values) and cannot be saved as one' % (key, owner[key], server))
                merged[key], owner[key] = state, server
        optimizer = async_server.SERVER.updater.optimizer
        atomic_write(fname, [state_format.dumps((merged, optimizer) if dump_optimizer else merged)])

    def load_optimizer_states(self, fname):
        """Send the states in ``fname`` to every server (each keeps its keys' states)."""
        with open(fname, 'rb') as f:
            blob = f.read()
        self._call_all('load_optimizer_states',
                       {server: (async_server.set_states, (blob,)) for server in range(self.num_workers)})

    def _barrier(self):
        self._settle()          # this worker's pushes are applied before the others go on
        self._comm.barrier()
