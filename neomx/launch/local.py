"""Run this host's share of the workers under torchrun's elastic agent.

One agent (``torch.distributed.launcher.api.elastic_launch``) starts the workers with
torchrun's variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``...), MXNet's (``DMLC_ROLE=worker``, ``DMLC_NUM_WORKER``, ``DMLC_NUM_SERVER``)
and ``NEOMX_RENDEZVOUS_TIMEOUT`` (from ``--rdzv-timeout``, unless set), watches them,
restarts them all up to ``--max-restarts`` times after a failure, and on a final failure
the launcher names the worker that died and how.
Several hosts meet at a c10d rendezvous on the first one (``--nnodes``/``--node-rank``).

Nothing listens beyond what the job needs: the rendezvous store listens on the address of
``--rdzv-endpoint`` only (``127.0.0.1`` for a job on one host), the workers' store on their
``MASTER_ADDR`` only (``127.0.0.1`` on one host, else the address of the host that is rank 0
of the rendezvous: the endpoint's for the first host), and on one host the workers' gloo and
``torch.distributed.rpc`` connections use the loopback interface. torch's c10d rendezvous
would listen on every interface, and its stores trust whoever connects.
"""
import logging
import os
import shutil
import socket
import sys
import uuid
from datetime import timedelta

from .. import _listen
from ..base import MXNetError
from .options import DEFAULT_PORT

__all__ = ['run_local', 'worker_counts', 'describe_failure']


def worker_counts(num_workers, num_hosts):
    """Workers per host: ``num_workers`` dealt out as evenly as possible, first hosts first.

    >>> worker_counts(5, 2)
    [3, 2]
    """
    if num_workers < num_hosts:
        raise MXNetError('launch: %d workers cannot occupy %d hosts' % (num_workers, num_hosts))
    return [num_workers // num_hosts + (h < num_workers % num_hosts) for h in range(num_hosts)]


def describe_failure(rank, failure, host=None):
    """One line saying which worker died and how: its signal or its exit code."""
    how = ('killed by signal %s' % failure.signal_name() if failure.exitcode < 0
           else 'exited with code %d' % failure.exitcode)
    return ('neomx.launch: worker rank %d (local rank %d, pid %d) on %s %s'
            % (rank, failure.local_rank, failure.pid, host or socket.gethostname(), how))


def _threads_per_worker(local_workers):
    """Cores of this process divided among the workers, unless OMP_NUM_THREADS says otherwise."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    return max(1, (cores or 1) // local_workers)


def _entrypoint(command):
    """The program to execute and its arguments; the program is found on PATH as a shell would."""
    program = shutil.which(command[0]) or command[0]
    if command[0] in ('python', 'python3') and shutil.which(command[0]) is None:
        program = sys.executable
    return program, command[1:]


def _loopback_interface():
    """The name of the loopback network interface ('lo' on Linux), or None."""
    names = [name for _, name in socket.if_nameindex()] if hasattr(socket, 'if_nameindex') else []
    return next((name for name in ('lo', 'lo0') if name in names), None)


def _worker_env(args, local_workers, worker_env):
    """Variables the workers (and the agent, in this process) get on top of this process's
    environment."""
    env = {'DMLC_ROLE': 'worker', 'DMLC_NUM_WORKER': str(args.num_workers),
           'DMLC_NUM_SERVER': str(args.num_servers),
           # the workers' rank 0 hosts their store, on MASTER_ADDR only (neomx.kvstore.rendezvous),
           # rather than the agent sharing one that listens on every interface
           'TORCH_DISABLE_SHARE_RDZV_TCP_STORE': '1'}
    loopback = _loopback_interface()
    if args.nnodes == 1 and loopback is not None:      # gloo's and rpc's sockets stay on loopback
        for name in ('GLOO_SOCKET_IFNAME', 'TP_SOCKET_IFNAME'):
            if name not in os.environ:
                env[name] = loopback
    if 'OMP_NUM_THREADS' not in os.environ:
        env['OMP_NUM_THREADS'] = str(_threads_per_worker(local_workers))
    # the store's own wait for the workers (neomx.kvstore.placement) follows --rdzv-timeout
    if 'NEOMX_RENDEZVOUS_TIMEOUT' not in os.environ:
        env['NEOMX_RENDEZVOUS_TIMEOUT'] = '%g' % args.rdzv_timeout
    env.update(worker_env)
    return env


def _bound_c10d_handler(params):
    """torch's c10d rendezvous, with its store listening on the endpoint's address only (on the
    first host, the others connect to it)."""
    from torch.distributed import TCPStore
    from torch.distributed.elastic.rendezvous.c10d_rendezvous_backend import C10dRendezvousBackend
    from torch.distributed.elastic.rendezvous.dynamic_rendezvous import create_handler
    from torch.distributed.elastic.rendezvous.utils import parse_rendezvous_endpoint
    host, port = parse_rendezvous_endpoint(params.endpoint, default_port=DEFAULT_PORT)
    is_host = bool(params.get_as_bool('is_host'))
    # (None when the endpoint is not an address of this host: torch's store on every interface)
    listener = _listen.bound_listener(host, port) if is_host else None
    store = TCPStore(host, listener[1] if listener else port, is_master=is_host, multi_tenant=True,
                     timeout=timedelta(seconds=params.get_as_int('read_timeout', 60)),
                     master_listen_fd=listener[0] if listener else None)

    class BoundC10dBackend(C10dRendezvousBackend):
        @property
        def name(self):             # the handler must carry the name it is registered under
            return _RDZV_BACKEND

    return create_handler(store, BoundC10dBackend(store, params.run_id), params)


def _register_rendezvous():
    from torch.distributed.elastic.rendezvous import rendezvous_handler_registry
    rendezvous_handler_registry.register(_RDZV_BACKEND, _bound_c10d_handler)


_RDZV_BACKEND = 'neomx-c10d'


def _launch_config(args, local_workers, endpoint, timeout):
    from torch.distributed.launcher.api import LaunchConfig
    single = args.nnodes == 1
    host = endpoint.rsplit(':', 1)[0].strip('[]')
    return LaunchConfig(
        min_nodes=args.nnodes, max_nodes=args.nnodes, nproc_per_node=local_workers,
        run_id=args.rdzv_id or (uuid.uuid4().hex if single else 'neomx'), rdzv_backend=_RDZV_BACKEND,
        rdzv_endpoint=endpoint,
        # The first host serves the rendezvous store; the others connect to it.
        rdzv_configs={'join_timeout': timeout, 'read_timeout': timeout, 'timeout': timeout,
                      'is_host': args.node_rank == 0},
        max_restarts=args.max_restarts, monitor_interval=0.1,
        # the address the workers' store listens on if this host is rank 0 (MASTER_ADDR)
        local_addr='127.0.0.1' if single else (host if args.node_rank == 0 else None))


def _report_failures(error, max_restarts):
    """Name the worker that died first, then the others (the agent stops them with SIGTERM)."""
    first_rank, first = error.get_first_failure()
    print(describe_failure(first_rank, first), file=sys.stderr, flush=True)
    for rank, failure in sorted(error.failures.items()):
        if rank != first_rank:
            print(describe_failure(rank, failure) + (' (stopped by the launcher)' if
                  failure.signal_name() == 'SIGTERM' else ''), file=sys.stderr, flush=True)
    if max_restarts:
        print('neomx.launch: gave up after %d restart(s)' % max_restarts, file=sys.stderr)


def run_local(args, local_workers, worker_env):
    """Start ``local_workers`` processes of ``args.command``; return the launcher's exit code.

    ``args`` carries ``nnodes``, ``node_rank``, ``rdzv_endpoint``, ``rdzv_id``,
    ``rdzv_timeout``, ``max_restarts``, ``num_workers`` and ``num_servers`` (see
    :mod:`.options`); ``worker_env`` holds the ``--env``/``--env-worker`` variables.
    """
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.elastic.rendezvous.api import RendezvousError
    from torch.distributed.launcher.api import elastic_launch

    endpoint = args.rdzv_endpoint or ('127.0.0.1:0' if args.nnodes == 1 else None)
    if endpoint is None:
        raise MXNetError('launch: --nnodes %d needs --rdzv-endpoint HOST:PORT of the first host '
                         '(for example HOST:%d)' % (args.nnodes, DEFAULT_PORT))
    timeout = int(max(1, round(args.rdzv_timeout)))
    _register_rendezvous()
    config = _launch_config(args, local_workers, endpoint, timeout)
    program, program_args = _entrypoint(args.command)
    # The agent's workers inherit this process's environment: set it for the launch only.
    # Its INFO chatter would hide the workers' output: keep its warnings and errors.
    saved_env = dict(os.environ)
    agent_log = logging.getLogger('torch.distributed.elastic')
    saved_level = agent_log.level
    os.environ.update(_worker_env(args, local_workers, worker_env))
    agent_log.setLevel(logging.WARNING)
    try:
        elastic_launch(config, program)(*program_args)
    except ChildFailedError as e:
        _report_failures(e, args.max_restarts)
        return 1
    except RendezvousError as e:
        print('neomx.launch: rendezvous at %s failed: the %d hosts of --nnodes did not all arrive '
              'within %d s (this host is node rank %d; %s%s)'
              % (endpoint, args.nnodes, timeout, args.node_rank, type(e).__name__,
                 ': %s' % e if str(e) else ''), file=sys.stderr, flush=True)
        return 1
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        agent_log.setLevel(saved_level)
    return 0
