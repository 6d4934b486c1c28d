"""Where this process stands in a distributed job (joining it is :mod:`neomx.kvstore.rendezvous`'s).

:func:`find_place` reads the environment, first match wins:

1. torchrun's variables: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
   ``MASTER_PORT`` (``source='torchrun'``; a torchrun agent's own store is used when
   ``TORCHELASTIC_USE_AGENT_STORE=True``);
2. the ``PET_*`` variables Kubeflow injects for torchrun, when ``RANK``/``WORLD_SIZE`` are
   absent: ``PET_NNODES``, ``PET_NPROC_PER_NODE`` (default 1), ``PET_NODE_RANK``,
   ``PET_MASTER_ADDR``, ``PET_MASTER_PORT`` (``MASTER_ADDR``/``MASTER_PORT`` as fallbacks);
   rank = node rank * processes per node + ``LOCAL_RANK`` (``source='kubeflow'``);
3. MXNet's: ``DMLC_ROLE`` (worker, server, scheduler), ``DMLC_PS_ROOT_URI``,
   ``DMLC_PS_ROOT_PORT``, ``DMLC_NUM_WORKER``, ``DMLC_NUM_SERVER`` and, if set,
   ``DMLC_WORKER_ID``; otherwise workers take ranks in order of arrival from a counter in
   the scheduler's store (``source='dmlc'``);
4. nothing: a job of one worker (``source='single'``).

:func:`neomx.kvstore.rendezvous.init_process_group` joins the job once per process and
returns a ``Group``: the rendezvous store (a ``torch.distributed.TCPStore``, hosted by rank 0,
by torchrun's agent, or by the DMLC scheduler), a torch.distributed default process group
over the workers (gloo for CPU tensors, NCCL for CUDA tensors) and a heartbeat that lets the
others name this worker if it dies.

Environment knobs (seconds):

* ``NEOMX_RENDEZVOUS_TIMEOUT`` (default 300): how long to wait for every worker to arrive;
  after it an ``MXNetError`` names the store address and how many came.
* ``NEOMX_KVSTORE_TIMEOUT`` (or MXNet-style ``MXNET_KVSTORE_TIMEOUT``; default 60): how
  long a collective may wait for a peer before failing, naming the lost ranks.

Example
-------
>>> import os
>>> from neomx.kvstore.placement import find_place
>>> find_place({'RANK': '1', 'WORLD_SIZE': '2', 'MASTER_ADDR': '127.0.0.1',
...             'MASTER_PORT': '29500'}).rank
1
"""
import collections
import os

from ..base import MXNetError

__all__ = ['Place', 'find_place', 'rendezvous_timeout', 'kvstore_timeout']

Place = collections.namedtuple('Place', ['rank', 'num_workers', 'local_rank', 'master_addr', 'master_port',
                                         'role', 'num_servers', 'source', 'agent_store'])
Place.__doc__ = """This process's place: ``rank`` (None for a DMLC worker until the scheduler
assigns one), ``num_workers``, ``local_rank``, ``master_addr``/``master_port`` (the rendezvous
store), ``role`` ('worker', 'server', 'scheduler'), ``num_servers``, ``source`` ('torchrun',
'kubeflow', 'dmlc', 'single') and ``agent_store`` (torchrun's agent hosts the store)."""


def _seconds(names, default):
    for name in names:
        value = os.environ.get(name)
        if value:
            try:
                return float(value)
            except ValueError:
                raise MXNetError('%s=%r: expected a number of seconds' % (name, value)) from None
    return float(default)


def rendezvous_timeout():
    """Seconds to wait for every worker to arrive (``NEOMX_RENDEZVOUS_TIMEOUT``, default 300)."""
    return _seconds(['NEOMX_RENDEZVOUS_TIMEOUT'], 300)


def kvstore_timeout():
    """Seconds a collective waits for a peer (``NEOMX_KVSTORE_TIMEOUT``/``MXNET_KVSTORE_TIMEOUT``, 60)."""
    return _seconds(['NEOMX_KVSTORE_TIMEOUT', 'MXNET_KVSTORE_TIMEOUT'], 60)


def _int(env, name, default=None):
    value = env.get(name)
    if value is None or value == '':
        if default is None:
            raise MXNetError('environment variable %s is required here (set by the launcher) but missing' % name)
        return default
    try:
        return int(value)
    except ValueError:
        raise MXNetError('environment variable %s=%r: expected an integer' % (name, value)) from None


def _need(env, *names):
    for name in names:
        if env.get(name):
            return env[name]
    raise MXNetError('environment variable %s is required here (set by the launcher) but missing' % names[0])


def find_place(env=None):
    """This process's :class:`Place`, from ``env`` (default ``os.environ``)."""
    env = os.environ if env is None else env
    local_rank = _int(env, 'LOCAL_RANK', 0)
    if 'RANK' in env and 'WORLD_SIZE' in env:
        place = Place(_int(env, 'RANK'), _int(env, 'WORLD_SIZE'), local_rank,
                      _need(env, 'MASTER_ADDR', 'PET_MASTER_ADDR'), _int(env, 'MASTER_PORT', _int(env, 'PET_MASTER_PORT', 29500)),
                      'worker', 0, 'torchrun', env.get('TORCHELASTIC_USE_AGENT_STORE') == 'True')
    elif 'PET_NNODES' in env:
        nproc = _int(env, 'PET_NPROC_PER_NODE', 1) if env.get('PET_NPROC_PER_NODE', '1').isdigit() else 1
        nnodes = env['PET_NNODES'].split(':')[-1]      # elastic jobs write min:max
        place = Place(_int(env, 'PET_NODE_RANK', 0) * nproc + local_rank, int(nnodes) * nproc, local_rank,
                      _need(env, 'PET_MASTER_ADDR', 'MASTER_ADDR'),
                      _int(env, 'PET_MASTER_PORT', _int(env, 'MASTER_PORT', 29500)), 'worker', 0, 'kubeflow', False)
    elif 'DMLC_ROLE' in env:
        role = env['DMLC_ROLE']
        if role not in ('worker', 'server', 'scheduler'):
            raise MXNetError("DMLC_ROLE=%r: expected 'worker', 'server' or 'scheduler'" % role)
        rank = _int(env, 'DMLC_WORKER_ID') if env.get('DMLC_WORKER_ID') and role == 'worker' else None
        place = Place(rank, _int(env, 'DMLC_NUM_WORKER'), local_rank, _need(env, 'DMLC_PS_ROOT_URI'),
                      _int(env, 'DMLC_PS_ROOT_PORT'), role, _int(env, 'DMLC_NUM_SERVER', 0), 'dmlc', False)
    else:
        return Place(0, 1, 0, None, None, 'worker', 0, 'single', False)
    if place.num_workers < 1 or (place.rank is not None and not 0 <= place.rank < place.num_workers):
        raise MXNetError('this worker has rank %s of %d workers (from %s variables): the rank must lie in '
                         '[0, %d)' % (place.rank, place.num_workers, place.source, place.num_workers))
    return place
