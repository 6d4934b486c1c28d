"""Joining a distributed job: the rendezvous store, the process group and heartbeats.

Every worker process holds a ``torch.distributed.TCPStore`` client (rank 0 hosts the store,
unless torchrun's agent or MXNet's scheduler process does), counts itself in, waits until all
workers came (or names the address and the count that came), and joins the default process
group. A daemon thread bumps this worker's heartbeat counter in the store twice a second, so
that when a collective fails the survivors can tell which rank stopped beating (it died) from
which said goodbye (it finished).
"""
import atexit
import importlib
import os
import socket
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from .. import _listen
from ..base import MXNetError
from .placement import find_place, kvstore_timeout, rendezvous_timeout

__all__ = ['Group', 'init_process_group', 'join', 'connect_store']

_BEAT = 0.5          # seconds between heartbeats
_STALE = 3.0         # a heartbeat unchanged for this long means its process is gone
# seconds a heartbeat waits for the store's host before giving up; it bounds the wait for
# the heartbeat thread at exit (a host that vanished without closing its connections)
_BEAT_TIMEOUT = 30.0


def connect_store(place, is_master, timeout):
    """A TCPStore client (or the server, with ``is_master``) at the place's address; the server
    listens on that address only (127.0.0.1 for a job on one host), unless it is not one of
    this machine's (a Kubernetes service address), where it listens on every interface."""
    listener = _listen.bound_listener(place.master_addr, place.master_port) if is_master else None
    try:
        return dist.TCPStore(place.master_addr, place.master_port, None, is_master,
                             timedelta(seconds=timeout), wait_for_workers=False,
                             master_listen_fd=None if listener is None else listener[0])
    except (RuntimeError, ValueError, OSError) as err:
        if listener is not None:
            os.close(listener[0])
        action = 'host' if is_master else 'reach'
        raise MXNetError('rendezvous: could not %s the store at %s:%d within %g s (%s place of %s, %d '
                         'worker(s) expected): %s' % (action, place.master_addr, place.master_port, timeout,
                                                     place.source, place.role, place.num_workers, err)) from None


def _prefix(place):
    return 'neomx/%s/%s/' % (os.environ.get('TORCHELASTIC_RUN_ID', 'job'),
                             os.environ.get('TORCHELASTIC_RESTART_COUNT', '0'))


class Group:
    """This worker's membership in a job: ``rank``, ``num_workers``, ``store`` (a key-value
    store shared by the job) and :meth:`diagnose` for failed collectives."""

    def __init__(self, place, rank, store, hosts_store, timeout):
        self.place = place
        self.rank = rank
        self.num_workers = place.num_workers
        self.store = store
        self.timeout = timeout
        self._hosts_store = hosts_store
        self._beats = None
        self._stop = threading.Event()

    # ------------------------------------------------------------ heartbeat
    def start_heartbeat(self, beat_store):
        self._beats = beat_store
        self._thread = threading.Thread(target=self._beat, name='neomx-kvstore-heartbeat', daemon=True)
        self._thread.start()
        atexit.register(self._goodbye)

    def _beat(self):
        key = 'hb/%d' % self.rank
        while not self._stop.is_set():
            try:
                self._beats.add(key, 1)
            except Exception:      # the store's host is gone: the job is over either way
                return
            self._stop.wait(_BEAT)

    def _goodbye(self):
        """At exit: say this worker finished; the store's host waits for the others to finish."""
        self._stop.set()
        # Wait for the heartbeat, however long its store call takes (at most _BEAT_TIMEOUT):
        # a thread still inside a torch call when the interpreter finalizes aborts the
        # process as the call returns ("terminate called without an active exception").
        self._thread.join()
        try:
            self.store.set('done/%d' % self.rank, '1')
            self.store.add('finished', 1)
            if self._hosts_store:
                deadline = time.monotonic() + self.timeout
                while self.store.add('finished', 0) < self.num_workers and time.monotonic() < deadline:
                    dead, _ = self.lost_ranks()
                    if dead:
                        break
        except Exception:
            pass
        # Tear the process group down before the interpreter does: gloo's threads must not
        # outlive Python's (they would abort the process at exit).
        try:
            if dist.is_initialized():
                dist.destroy_process_group()
        except Exception:
            pass

    # ----------------------------------------------------------- diagnosis
    def _counts(self):
        return [self.store.add('hb/%d' % r, 0) for r in range(self.num_workers)]

    def lost_ranks(self):
        """``(dead, finished)`` lists of other ranks: whose heartbeat stopped, who said goodbye.

        Takes about ``_STALE`` seconds (it watches the heartbeats); None when the store itself
        cannot be reached (its host is gone).
        """
        try:
            before = self._counts()
            time.sleep(_STALE)
            after = self._counts()
            finished = [r for r in range(self.num_workers)
                        if r != self.rank and self.store.check(['done/%d' % r])]
        except Exception:
            return None
        dead = [r for r in range(self.num_workers)
                if r != self.rank and r not in finished and after[r] == before[r]]
        return dead, finished

    def diagnose(self, what, err):
        """The MXNetError for a collective ``what`` that failed with ``err``."""
        found = self.lost_ranks()
        if found is None:
            host = ('rank 0' if self.place.source in ('torchrun', 'kubeflow') and not self.place.agent_store
                    else 'the %s process' % ('scheduler' if self.place.source == 'dmlc' else 'launcher agent'))
            who = 'lost %s, which hosts the rendezvous store at %s:%s' % (host, self.place.master_addr,
                                                                         self.place.master_port)
        else:
            dead, finished = found
            parts = []
            if dead:
                parts.append('lost rank%s %s (no heartbeat for %g s)' % ('s' if len(dead) > 1 else '',
                                                                       ', '.join(map(str, dead)), _STALE))
            if finished:
                parts.append('rank%s %s already finished' % ('s' if len(finished) > 1 else '',
                                                             ', '.join(map(str, finished))))
            who = '; '.join(parts) or ('no peer died: a peer did not reach this collective within %g s '
                                       '(NEOMX_KVSTORE_TIMEOUT) or the connection broke' % self.timeout)
        return MXNetError('kvstore %s on rank %d of %d workers failed: %s. (%s)'
                          % (what, self.rank, self.num_workers, who, str(err).strip().splitlines()[0]))


def _count_in(store, place, rank, timeout):
    """Count this worker in and wait until all ``num_workers`` came."""
    came = store.add('arrived', 1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            came = store.add('arrived', 0)
        except (RuntimeError, OSError):
            # The store's host (rank 0) gave up waiting first and left: the same timeout.
            deadline = time.monotonic()
        else:
            if came >= place.num_workers:
                return
        if time.monotonic() >= deadline:
            raise MXNetError('rendezvous at %s:%s: only %d of %d workers arrived within %g s '
                             '(NEOMX_RENDEZVOUS_TIMEOUT); this is rank %d'
                             % (place.master_addr, place.master_port, came, place.num_workers, timeout, rank))
        time.sleep(0.02)


def join(place, timeout):
    """Rendezvous with the other workers of ``place``'s job and return the :class:`Group`."""
    wait = rendezvous_timeout()
    if place.source == 'single':
        store = dist.HashStore()
        group = Group(place, 0, store, False, timeout)
        _init_torch_group(store, 0, 1, timeout)
        return group
    hosts = place.source != 'dmlc' and place.rank == 0 and not place.agent_store
    raw = connect_store(place, hosts, wait)
    store = dist.PrefixStore(_prefix(place), raw)
    rank = place.rank
    if rank is None:     # MXNet's launch.py numbers no worker: ranks in order of arrival
        rank = store.add('next_worker_rank', 1) - 1
        if rank >= place.num_workers:
            raise MXNetError('rendezvous at %s:%s: more workers than DMLC_NUM_WORKER=%d arrived'
                             % (place.master_addr, place.master_port, place.num_workers))
    _count_in(store, place, rank, wait)
    group = Group(place, rank, store, hosts, timeout)
    backend = collective_backend(store, rank, place.num_workers)
    _init_torch_group(dist.PrefixStore('pg/', store), rank, place.num_workers, timeout, backend)
    beats = connect_store(place, False, wait)
    beats.set_timeout(timedelta(seconds=min(wait, _BEAT_TIMEOUT)))
    group.start_heartbeat(dist.PrefixStore(_prefix(place), beats))
    return group


def collective_backend(store, rank, world_size):
    """torch.distributed's backend for the job: gloo, and NCCL for CUDA tensors where it can run.

    NCCL refuses two ranks of one communicator on the same GPU, so when the workers of any
    host outnumber its GPUs (two workers on a one-GPU machine) CUDA tensors go through gloo
    too (its all_reduce and broadcast take CUDA tensors). Every worker publishes its host and
    GPU count so that all of them make the same choice. ``NEOMX_CUDA_COLLECTIVES=nccl|gloo``
    overrides it.
    """
    if not torch.cuda.is_available():
        return 'gloo'
    chosen = os.environ.get('NEOMX_CUDA_COLLECTIVES', '').strip().lower()
    if chosen not in ('', 'nccl', 'gloo'):
        raise MXNetError("NEOMX_CUDA_COLLECTIVES=%r: use 'nccl' or 'gloo'" % chosen)
    if not chosen:
        store.set('gpus/%d' % rank, '%s %d' % (socket.gethostname(), torch.cuda.device_count()))
        workers, gpus = {}, {}
        for r in range(world_size):
            host, count = store.get('gpus/%d' % r).decode().rsplit(' ', 1)
            workers[host] = workers.get(host, 0) + 1
            gpus[host] = int(count)
        chosen = 'gloo' if any(workers[h] > gpus[h] for h in workers) else 'nccl'
    return 'gloo' if chosen == 'gloo' else 'cpu:gloo,cuda:nccl'


def _init_torch_group(store, rank, world_size, timeout, backend=None):
    if dist.is_initialized():
        if dist.get_world_size() != world_size or dist.get_rank() != rank:
            raise MXNetError('torch.distributed is already initialized as rank %d of %d, but this worker is '
                             'rank %d of %d' % (dist.get_rank(), dist.get_world_size(), rank, world_size))
        return
    if backend is None:
        backend = 'cpu:gloo,cuda:nccl' if torch.cuda.is_available() else 'gloo'
    # torch.distributed.nn.functional's functions take ``group=group.WORLD`` as a default,
    # evaluated when it is imported: imported after the group exists (torch._dynamo imports
    # it, which neomx's Module.bind loads), they would hold the group, and gloo's threads,
    # past destroy_process_group until the interpreter tears down. Imported now, their
    # default is None (the default group at call time, the same).
    importlib.import_module('torch.distributed.nn.functional')
    dist.init_process_group(backend, store=store, rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=timeout))


_GROUP = None


def init_process_group(timeout=None):
    """Join the job (once per process; later calls return the same :class:`Group`).

    Parameters
    ----------
    timeout : float, optional
        Seconds a collective may wait for a peer (default
        :func:`neomx.kvstore.placement.kvstore_timeout`).
    """
    global _GROUP
    if _GROUP is None:
        _GROUP = join(find_place(), kvstore_timeout() if timeout is None else timeout)
    return _GROUP
