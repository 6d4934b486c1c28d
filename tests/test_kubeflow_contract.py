"""The operators' contract without a cluster: each pod's environment, derived as the operator
derives it, and the local harness that runs one process per pod."""
import io
import json
import os
import sys

import pytest

pytest.importorskip('yaml', reason='manifests need PyYAML ("neomx[kubeflow]")')

from neomx.base import MXNetError                                      # noqa: E402
from neomx.launch._kube_yaml import load_manifest                       # noqa: E402
from kubeflow_env import pods_of                                        # noqa: E402
from kubeflow_local import local_processes, run_job                     # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPLOY = os.path.join(ROOT, 'deploy', 'kubeflow')
SHARED_MXJOB = os.path.join(ROOT, '..', 'shared', 'kubeflow', 'examples', 'mxjob_dist_v1.yaml')


def manifest(name):
    return load_manifest(os.path.join(DEPLOY, name))


def test_trainjob_env_is_trainer_v2s():
    pods = pods_of(manifest('trainjob-mnist.yaml'))
    assert [p.name for p in pods] == ['neomx-mnist-trainer-node-0-0', 'neomx-mnist-trainer-node-0-1']
    assert pods[1].env == {'PET_NNODES': '2', 'PET_NPROC_PER_NODE': '1', 'PET_NODE_RANK': '1',
                           'PET_MASTER_ADDR': 'neomx-mnist-trainer-node-0-0.neomx-mnist', 'PET_MASTER_PORT': '29400'}
    assert pods[0].command[:2] == ['torchrun', '--max-restarts=3']
    assert pods[0].volume_mounts == [{'name': 'data', 'mountPath': '/data'}]


def test_trainjob_user_env_cannot_override_the_operators():
    job = manifest('trainjob-mnist.yaml')
    job['spec']['trainer']['env'] = [{'name': 'PET_NODE_RANK', 'value': '7'}, {'name': 'OMP_NUM_THREADS', 'value': '1'}]
    env = pods_of(job)[0].env
    assert env['PET_NODE_RANK'] == '0' and list(env)[0] == 'OMP_NUM_THREADS'


def test_pytorchjob_env_has_master_world_size_and_ranks():
    master, worker = pods_of(manifest('pytorchjob-mnist-gloo.yaml'))
    assert (master.name, worker.name) == ('neomx-mnist-gloo-master-0', 'neomx-mnist-gloo-worker-0')
    assert worker.env == {'PYTHONUNBUFFERED': '1', 'MASTER_PORT': '23456', 'MASTER_ADDR': 'neomx-mnist-gloo-master-0',
                          'WORLD_SIZE': '2', 'RANK': '1', 'PET_NODE_RANK': '1', 'PET_NNODES': '2'}
    assert master.env['RANK'] == '0'


def test_elastic_pytorchjob_env_is_the_rendezvous():
    pods = pods_of(manifest('pytorchjob-mnist-elastic.yaml'))
    assert [p.name for p in pods] == ['neomx-mnist-elastic-worker-0', 'neomx-mnist-elastic-worker-1']
    assert pods[1].env == {'PYTHONUNBUFFERED': '1', 'PET_RDZV_ENDPOINT': 'neomx-mnist-elastic-worker-0:23456',
                           'PET_RDZV_BACKEND': 'c10d', 'PET_NNODES': '1:3', 'PET_MAX_RESTARTS': '10'}
    assert 'RANK' not in pods[0].env and 'MASTER_ADDR' not in pods[0].env     # no Master: torchrun sets them


def test_elastic_policy_fields_become_torchruns_variables():
    job = manifest('pytorchjob-mnist-elastic.yaml')
    policy = job['spec']['elasticPolicy']
    policy.update(rdzvHost='rdzv', rdzvPort=1234, rdzvBackend='etcd-v2', nProcPerNode=2, rdzvId='run7',
                  rdzvConf=[{'key': 'timeout', 'value': '60'}, {'key': 'k', 'value': 'v'}], standalone=True)
    env = pods_of(job)[0].env
    assert [k for k in env if k.startswith('PET_')] == [
        'PET_RDZV_ENDPOINT', 'PET_RDZV_BACKEND', 'PET_NNODES', 'PET_MAX_RESTARTS', 'PET_NPROC_PER_NODE',
        'PET_RDZV_ID', 'PET_RDZV_CONF', 'PET_STANDALONE']
    assert env['PET_RDZV_CONF'] == 'timeout=60,k=v' and env['PET_STANDALONE'] == ''
    assert env['PET_NPROC_PER_NODE'] == '2' and env['PET_RDZV_ID'] == 'run7'
    assert env['PET_RDZV_ENDPOINT'] == 'rdzv:1234' and env['PET_RDZV_BACKEND'] == 'etcd-v2'
    del policy['minReplicas'], policy['maxReplicas']      # no bounds: the Worker replicas
    assert pods_of(job)[0].env['PET_NNODES'] == '2'


def test_mxjob_env_is_dmlcs():
    pods = pods_of(load_manifest(SHARED_MXJOB)) if os.path.exists(SHARED_MXJOB) else None
    if pods is None:
        pytest.skip('../shared/kubeflow is absent')
    assert [p.role for p in pods] == ['scheduler', 'server', 'worker']
    worker = pods[2]
    config = json.loads(worker.env.pop('MX_CONFIG'))
    assert worker.env == {'DMLC_PS_ROOT_PORT': '9991', 'DMLC_PS_ROOT_URI': 'mxnet-job-scheduler-0', 'DMLC_NUM_SERVER': '1',
                          'DMLC_NUM_WORKER': '1', 'DMLC_ROLE': 'worker', 'DMLC_USE_KUBERNETES': '1', 'DMLC_WORKER_ID': '0'}
    assert config == {'cluster': {'scheduler': [{'url': 'mxnet-job-scheduler-0', 'port': 9991}],
                                  'server': [{'url': 'mxnet-job-server-0', 'port': 9991}],
                                  'worker': [{'url': 'mxnet-job-worker-0', 'port': 9991}]},
                      'labels': {'scheduler': '', 'server': '', 'worker': ''}, 'task': {'type': 'worker', 'index': 0}}
    assert 'DMLC_WORKER_ID' not in pods[1].env
    assert worker.command[0] == 'python3'


def test_unknown_kinds_are_refused():
    with pytest.raises(MXNetError, match="no operator contract for kind 'TFJob'"):
        pods_of({'kind': 'TFJob'})


def test_local_processes_point_every_pod_at_127_0_0_1(monkeypatch):
    monkeypatch.setenv('RANK', '5')            # a launcher around the harness must not leak in
    processes = local_processes(manifest('mxjob-mnist.yaml'), [('/opt/neomx', ROOT), ('/data', '/tmp/vol')], ['--x'])
    envs = [env for _, _, env, _ in processes]
    root_ports = {env['DMLC_PS_ROOT_PORT'] for env in envs}
    assert len(root_ports) == 1 and root_ports != {'9991'}
    assert all(env['DMLC_PS_ROOT_URI'] == '127.0.0.1' and 'RANK' not in env for env in envs)
    config = json.loads(envs[0]['MX_CONFIG'])
    assert config['cluster']['scheduler'] == [{'url': '127.0.0.1', 'port': int(root_ports.pop())}]
    assert [port for _, _, _, port in processes] == [int(envs[0]['DMLC_PS_ROOT_PORT']), None, None, None]
    name, argv, _, _ = processes[2]
    assert name == 'neomx-mnist-mxjob-worker-0'
    assert argv == [sys.executable, os.path.join(ROOT, 'examples', 'train_mnist.py'), '--kvstore=dist_sync',
                    '--epochs=1', '--data-dir=/tmp/vol/mnist', '--no-progress', '--x']
    _, argv, env, _ = local_processes(manifest('trainjob-mnist.yaml'))[1]
    assert argv[:4] == [sys.executable, '-m', 'torch.distributed.run', '--max-restarts=3']
    assert env['PET_MASTER_ADDR'] == '127.0.0.1' and env['PET_MASTER_PORT'] != '29400'


def test_run_job_starts_one_process_per_pod_with_its_env():
    job = manifest('pytorchjob-mnist-gloo.yaml')
    show = 'import os; print(os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["MASTER_ADDR"])'
    for role in ('Master', 'Worker'):
        container = job['spec']['pytorchReplicaSpecs'][role]['template']['spec']['containers'][0]
        container['command'] = ['python', '-c', show]
    job['spec']['pytorchReplicaSpecs']['Worker']['replicas'] = 2
    results = run_job(job, sink=io.StringIO(), timeout=120)
    assert {name: (code, lines) for name, (code, lines) in results.items()} == {
        'neomx-mnist-gloo-master-0': (0, ['0 3 127.0.0.1\n']), 'neomx-mnist-gloo-worker-0': (0, ['1 3 127.0.0.1\n']),
        'neomx-mnist-gloo-worker-1': (0, ['2 3 127.0.0.1\n'])}
