"""The pods a Kubeflow operator makes of a job manifest, with the environment it gives each.

This is the contract between the operators and neomx, written down so that it can be tested
without a cluster (see ``kubeflow_local``). It follows the operators' code:

* Trainer v2 ``TrainJob`` (torch plugin, runtime ``torch-distributed``): ``numNodes`` pods
  ``<job>-trainer-node-0-<i>``, with ``PET_NNODES``, ``PET_NPROC_PER_NODE``, ``PET_NODE_RANK``
  (the pod's completion index), ``PET_MASTER_ADDR`` (``<job>-trainer-node-0-0.<job>``) and
  ``PET_MASTER_PORT`` (29400), after the trainer's own ``env``.
* Training Operator v1 ``PyTorchJob`` (``envvar.go``, ``master.go``, ``elastic.go``): pods
  ``<job>-master-0`` and ``<job>-worker-<i>``, all with ``PYTHONUNBUFFERED=1``; with a Master,
  ``MASTER_PORT``/``MASTER_ADDR``, ``WORLD_SIZE`` (pods x ``nprocPerNode``), ``RANK`` and
  ``PET_NODE_RANK`` (master 0, worker i + 1); ``PET_NPROC_PER_NODE`` when ``nprocPerNode``
  is set; with ``elasticPolicy``: ``PET_RDZV_ENDPOINT`` (``rdzvHost``, default
  ``<job>-worker-0``, and ``rdzvPort``, default the Worker's port), ``PET_RDZV_BACKEND``
  (default ``c10d``), ``PET_NNODES`` (``min:max``, or the Worker replicas when neither bound
  is given), then ``PET_MAX_RESTARTS``, ``PET_NPROC_PER_NODE``, ``PET_RDZV_ID``,
  ``PET_RDZV_CONF`` (``k=v,...``) and ``PET_STANDALONE`` when the policy sets them; without
  it ``PET_NNODES`` = the number of pods. The port is the container's ``pytorchjob-port``
  (23456 by default). torchrun reads only the ``PET_`` names: with a Master, run the script
  with ``python`` (``init_process_group`` reads ``MASTER_ADDR``/``RANK``/``WORLD_SIZE``).
* v1 ``MXJob``: pods ``<job>-<role>-<i>`` for scheduler, server and worker, with ``MX_CONFIG``,
  ``DMLC_PS_ROOT_URI``/``PORT`` (the scheduler's service and ``mxjob-port``),
  ``DMLC_NUM_SERVER``, ``DMLC_NUM_WORKER``, ``DMLC_ROLE``, ``DMLC_USE_KUBERNETES`` and, for
  workers, ``DMLC_WORKER_ID``.
"""
import json
from collections import namedtuple

from neomx.base import MXNetError

__all__ = ['Pod', 'pods_of']

Pod = namedtuple('Pod', ['name', 'role', 'index', 'command', 'env', 'volume_mounts', 'hosts'])
Pod.__doc__ = """One pod of a job: its name, role, index in the role, command (list), env (dict in
the operator's order), the container's volumeMounts, and the service host names of the job
(``{host: port}``) that the env refers to."""

TRAINER_PORT = 29400          # Trainer v2's ContainerTrainerPort
PYTORCH_PORT = 23456          # Training Operator's PyTorchJobDefaultPort
PYTORCH_PORT_NAME = 'pytorchjob-port'
MXJOB_PORT_NAME = 'mxjob-port'


def _env_list(container):
    return {var['name']: str(var.get('value', '')) for var in container.get('env') or []}


def _container(template, name):
    containers = template.get('spec', {}).get('containers') or []
    if not containers:
        raise MXNetError('the pod template has no container')
    return next((c for c in containers if c.get('name') == name), containers[0])


def _port(container, port_name, default=None):
    for port in container.get('ports') or []:
        if port.get('name') == port_name:
            return int(port['containerPort'])
    if default is None:
        raise MXNetError('container %s has no port named %s' % (container.get('name'), port_name))
    return default


def _command(container):
    return [str(w) for w in (container.get('command') or []) + (container.get('args') or [])]


def _trainjob_pods(job):
    name = job['metadata']['name']
    trainer = job['spec'].get('trainer') or {}
    nodes = int(trainer.get('numNodes', 1))
    nproc = str(trainer.get('numProcPerNode', 'auto'))
    master = '%s-trainer-node-0-0.%s' % (name, name)
    mounts = []
    for override in job['spec'].get('podSpecOverrides') or []:
        for container in override.get('containers') or []:
            mounts += container.get('volumeMounts') or []
    reserved = {'PET_NNODES', 'PET_NPROC_PER_NODE', 'PET_NODE_RANK', 'PET_MASTER_ADDR', 'PET_MASTER_PORT'}
    pods = []
    for index in range(nodes):
        env = {k: v for k, v in _env_list(trainer).items() if k not in reserved}
        env.update(PET_NNODES=str(nodes), PET_NPROC_PER_NODE=nproc, PET_NODE_RANK=str(index),
                   PET_MASTER_ADDR=master, PET_MASTER_PORT=str(TRAINER_PORT))
        pods.append(Pod('%s-trainer-node-0-%d' % (name, index), 'trainer-node', index, _command(trainer), env,
                        mounts, {master: TRAINER_PORT}))
    return pods


def _pytorchjob_pods(job):
    name = job['metadata']['name']
    spec = job['spec']
    replicas = spec.get('pytorchReplicaSpecs') or {}
    total = sum(int(r.get('replicas', 1)) for r in replicas.values())
    nproc = spec.get('nprocPerNode')
    nproc_int = int(nproc) if nproc is not None and str(nproc).isdigit() else 1
    elastic = spec.get('elasticPolicy')
    hosts = {}
    master_env = {}
    if 'Master' in replicas:
        port = _port(_container(replicas['Master']['template'], 'pytorch'), PYTORCH_PORT_NAME, PYTORCH_PORT)
        addr = '%s-master-0' % name
        hosts[addr] = port
        master_env = {'MASTER_PORT': str(port), 'MASTER_ADDR': addr}
    elastic_env = {}
    if elastic is not None:
        host = elastic.get('rdzvHost') or '%s-worker-0' % name
        port = elastic.get('rdzvPort') or _port(_container(replicas['Worker']['template'], 'pytorch'),
                                                PYTORCH_PORT_NAME, PYTORCH_PORT)
        hosts[host] = int(port)
        elastic_env['PET_RDZV_ENDPOINT'] = '%s:%d' % (host, int(port))
        elastic_env['PET_RDZV_BACKEND'] = elastic.get('rdzvBackend', 'c10d')
        low, high = elastic.get('minReplicas'), elastic.get('maxReplicas')
        if low is None and high is None:
            elastic_env['PET_NNODES'] = str(int(replicas['Worker'].get('replicas', 1)))
        else:
            workers = int(replicas['Worker'].get('replicas', 1))
            elastic_env['PET_NNODES'] = '%d:%d' % (workers if low is None else low,
                                                   workers if high is None else high)
        optional = (('maxRestarts', 'PET_MAX_RESTARTS'), ('nProcPerNode', 'PET_NPROC_PER_NODE'),
                    ('rdzvId', 'PET_RDZV_ID'))
        for field, var in optional:
            if elastic.get(field) is not None:
                elastic_env[var] = str(elastic[field])
        if elastic.get('rdzvConf'):
            elastic_env['PET_RDZV_CONF'] = ','.join('%s=%s' % (c['key'], c['value'])
                                                    for c in elastic['rdzvConf'])
        if elastic.get('standalone'):
            elastic_env['PET_STANDALONE'] = ''
    pods = []
    for role in ('Master', 'Worker'):
        if role not in replicas:
            continue
        container = _container(replicas[role]['template'], 'pytorch')
        for index in range(int(replicas[role].get('replicas', 1))):
            env = _env_list(container)
            env['PYTHONUNBUFFERED'] = '1'
            if master_env:
                rank = index + (1 if role == 'Worker' else 0)
                env.update(master_env)
                env.update(WORLD_SIZE=str(total * nproc_int), RANK=str(rank), PET_NODE_RANK=str(rank))
            if nproc is not None:
                env['PET_NPROC_PER_NODE'] = str(nproc)
            if elastic is not None:
                env.update(elastic_env)
            else:
                env['PET_NNODES'] = str(total)
            pods.append(Pod('%s-%s-%d' % (name, role.lower(), index), role.lower(), index, _command(container), env,
                            container.get('volumeMounts') or [], dict(hosts)))
    return pods


def _mxjob_pods(job):
    name = job['metadata']['name']
    replicas = job['spec'].get('mxReplicaSpecs') or {}
    cluster = {}
    for role, spec in replicas.items():
        port = _port(_container(spec['template'], 'mxnet'), MXJOB_PORT_NAME)
        cluster[role.lower()] = [{'url': '%s-%s-%d' % (name, role.lower(), i), 'port': port}
                                 for i in range(int(spec.get('replicas', 1)))]
    if 'scheduler' not in cluster:
        raise MXNetError('MXJob %s has no Scheduler' % name)
    root = cluster['scheduler'][0]
    cluster = dict(sorted(cluster.items()))        # Go's json.Marshal sorts map keys
    labels = {role: '' for role in cluster}
    hosts = {entry['url']: entry['port'] for entries in cluster.values() for entry in entries}
    pods = []
    for role in ('Scheduler', 'Server', 'Worker'):
        if role not in replicas:
            continue
        container = _container(replicas[role]['template'], 'mxnet')
        rt = role.lower()
        for index in range(int(replicas[role].get('replicas', 1))):
            config = {'cluster': cluster, 'labels': labels, 'task': {'type': rt, 'index': index}}
            env = _env_list(container)
            env.update(MX_CONFIG=json.dumps(config, separators=(',', ':')),
                       DMLC_PS_ROOT_PORT=str(root['port']), DMLC_PS_ROOT_URI=root['url'],
                       DMLC_NUM_SERVER=str(len(cluster.get('server', []))),
                       DMLC_NUM_WORKER=str(len(cluster.get('worker', []))), DMLC_ROLE=rt, DMLC_USE_KUBERNETES='1')
            if rt == 'worker':
                env['DMLC_WORKER_ID'] = str(index)
            pods.append(Pod('%s-%s-%d' % (name, rt, index), rt, index, _command(container), env,
                            container.get('volumeMounts') or [], dict(hosts)))
    return pods


_PODS_OF_KIND = {'TrainJob': _trainjob_pods, 'PyTorchJob': _pytorchjob_pods, 'MXJob': _mxjob_pods}


def pods_of(job):
    """The pods (see :class:`Pod`) the operator of ``job``'s kind creates, in rank order."""
    kind = job.get('kind')
    if kind not in _PODS_OF_KIND:
        raise MXNetError('no operator contract for kind %r (TrainJob, PyTorchJob or MXJob)' % kind)
    return _PODS_OF_KIND[kind](job)
