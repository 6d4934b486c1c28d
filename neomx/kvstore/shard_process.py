"""The process that hosts one worker's ``dist_async`` server shard.

MXNet's parameter servers are processes of their own; neomx's ``dist_async`` store, in a job
of several workers, starts one such process per worker (by :func:`start`): it joins the job's
``torch.distributed.rpc`` group beside the workers and serves the shard's requests
(:mod:`.async_server`) on its RPC threads. Served in the worker's own process, every request
would wait for the training loop to hand over the GIL. The process ends with the job (RPC's
shutdown), or when its worker dies.
"""
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from datetime import timedelta

from .._torch_private import tcp_rpc_options

__all__ = ['start', 'join_rpc', 'worker_name', 'shard_name']

_ENV = 'NEOMX_KVSTORE_SHARD'        # the shard's settings, from its worker (JSON)


def worker_name(rank):
    """The RPC name of worker ``rank`` (its requests come from there)."""
    return 'neomx-worker-%d' % rank


def shard_name(rank):
    """The RPC name of the server shard of worker ``rank``."""
    return 'neomx-kvstore-%d' % rank


def join_rpc(name, store, rank, world_size, timeout):
    """Join torch.distributed.rpc as ``name`` over ``store`` (the job's rendezvous store)."""
    import torch.distributed as dist
    from torch.distributed import rpc
    from torch.distributed.rendezvous import register_rendezvous_handler

    def handler(url, **kwargs):
        yield dist.PrefixStore('rpc/', store), rank, world_size

    try:
        register_rendezvous_handler('neomxkv', handler)
    except RuntimeError:
        pass           # registered by an earlier store of this process
    with warnings.catch_warnings():      # torch's own RPC setup warns about its internal API use
        warnings.filterwarnings('ignore', message='You are using a Backend')
        rpc.init_rpc(name, rank=rank, world_size=world_size, rpc_backend_options=tcp_rpc_options('neomxkv://', timeout))


def start(group, address, port, prefix):
    """Start the shard process of this worker (``group``'s rank) of a job whose rendezvous
    store is at ``address:port`` under ``prefix``; the ``subprocess.Popen``."""
    settings = dict(rank=group.rank, num_workers=group.num_workers, timeout=group.timeout,
                    address=address, port=port, prefix=prefix, parent=os.getpid())
    # neomx from where this worker imported it (a script may have put it on sys.path itself)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.environ.get('PYTHONPATH')
    env = dict(os.environ, **{_ENV: json.dumps(settings), 'PYTHONPATH': root + (os.pathsep + path if path else '')})
    return subprocess.Popen([sys.executable, '-c', 'from neomx.kvstore.shard_process import main; main()'], env=env,
                            stdin=subprocess.DEVNULL)


def _die_with(parent):
    """End this process when ``parent`` (its worker) ends, however it ends."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass         # not Linux: the watch below does it

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, name='neomx-kvstore-shard-watch', daemon=True).start()


def main():
    settings = json.loads(os.environ[_ENV])
    _die_with(settings['parent'])
    import torch.distributed as dist
    from torch.distributed import rpc
    from . import async_server      # noqa: F401  (the functions the workers call)
    raw = dist.TCPStore(settings['address'], settings['port'], None, False,
                        timedelta(seconds=settings['timeout']), wait_for_workers=False)
    n = settings['num_workers']
    join_rpc(shard_name(settings['rank']), dist.PrefixStore(settings['prefix'], raw), n + settings['rank'], 2 * n,
             settings['timeout'])
    rpc.shutdown()      # returns when every worker and shard of the job has shut down


if __name__ == '__main__':
    main()
