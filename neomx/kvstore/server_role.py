"""The scheduler and server processes of a job started the MXNet way (``DMLC_ROLE``).

MXNet's ``tools/launch.py`` starts one scheduler, servers and workers, all running the same
script; MXNet's ``import mxnet`` turns the scheduler and servers into services that exit when
the job ends. neomx does the same: the scheduler hosts the job's rendezvous store
(``DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT``) and waits until every worker has finished; the
servers check in and wait likewise (neomx's synchronous stores need no server, and
``dist_async`` shards its weights over the worker processes themselves, see
:mod:`neomx.kvstore.dist_async`). Both exit 0 when all workers finished, and
1 with a message naming the ranks whose heartbeat stopped if workers died.
"""
import sys
import time

from .placement import find_place, rendezvous_timeout

__all__ = ['serve', 'serve_and_exit']


def _wait_for_workers(store, num_workers, role):
    """Block until all workers said goodbye; the exit status (1 if some died first)."""
    from .rendezvous import _STALE
    last, changed = {}, {}
    while True:
        try:
            finished = store.add('finished', 0)
            if finished >= num_workers:
                return 0
            now = time.monotonic()
            for rank in range(num_workers):
                if store.check(['hb/%d' % rank]) and not store.check(['done/%d' % rank]):
                    beats = store.add('hb/%d' % rank, 0)
                    if last.get(rank) != beats:
                        last[rank], changed[rank] = beats, now
                    elif now - changed[rank] > _STALE:
                        print('neomx %s: worker rank %d died (no heartbeat for %g s); stopping'
                              % (role, rank, _STALE), file=sys.stderr)
                        return 1
        except Exception:          # the scheduler (the store's host) is gone: the job is over
            return 0
        time.sleep(0.2)


def serve_and_exit():
    """Serve as this process's ``DMLC_ROLE`` (scheduler or server) until the job ends, then exit."""
    sys.exit(serve(find_place()))


def serve(place):
    """Serve as ``place``'s role (scheduler or server) until the job ends; the exit status
    (0, or 1 when workers died)."""
    import torch.distributed as dist
    from .rendezvous import _prefix, connect_store
    raw = connect_store(place, place.role == 'scheduler', rendezvous_timeout())
    store = dist.PrefixStore(_prefix(place), raw)
    if place.role == 'server':
        store.add('servers', 1)
    status = _wait_for_workers(store, place.num_workers, place.role)
    try:
        if place.role == 'server':
            store.add('servers_left', 1)
        else:      # the store lives here: let the servers read the end of the job first
            deadline = time.monotonic() + 5
            while store.add('servers_left', 0) < place.num_servers and time.monotonic() < deadline:
                time.sleep(0.05)
    except Exception:
        pass
    return status
