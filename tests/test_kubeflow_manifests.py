"""deploy/kubeflow manifests and the MXJob converter, validated against Kubeflow's CRDs."""
import copy
import functools
import glob
import os

import pytest

from neomx.base import MXNetError

yaml = pytest.importorskip('yaml', reason='manifests need PyYAML ("neomx[kubeflow]")')
pytest.importorskip('jsonschema', reason='validation needs jsonschema ("neomx[kubeflow]")')

from neomx.launch import mxjob                                   # noqa: E402
from neomx.launch._kube_yaml import crd_schema, load_manifest, validate   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KUBEFLOW = os.path.join(ROOT, '..', 'shared', 'kubeflow')
DEPLOY = os.path.join(ROOT, 'deploy', 'kubeflow')
CRD_OF_KIND = {'TrainJob': 'trainer.kubeflow.org_trainjobs.yaml', 'PyTorchJob': 'kubeflow.org_pytorchjobs.yaml',
               'MXJob': 'kubeflow.org_mxjobs.yaml'}
needs_shared = pytest.mark.skipif(not os.path.isdir(KUBEFLOW), reason='../shared/kubeflow (the CRDs) is absent')
OLD_MXJOB = os.path.join(KUBEFLOW, 'examples', 'mxjob_dist_v1.yaml')
JOB_FILES = sorted(f for f in glob.glob(os.path.join(DEPLOY, '*.yaml')) if not f.endswith('data-volume.yaml'))


@functools.lru_cache(maxsize=None)
def schema_of(kind):
    return crd_schema(os.path.join(KUBEFLOW, 'crds', CRD_OF_KIND[kind]))


@needs_shared
@pytest.mark.parametrize('path', JOB_FILES, ids=[os.path.basename(f) for f in JOB_FILES])
def test_shipped_manifests_validate(path):
    manifest = load_manifest(path)
    validate(manifest, schema_of(manifest['kind']))


def test_every_job_kind_is_shipped():
    kinds = [load_manifest(f)['kind'] for f in JOB_FILES]
    assert kinds.count('PyTorchJob') == 3 and kinds.count('TrainJob') == 1 and kinds.count('MXJob') == 1
    elastic = load_manifest(os.path.join(DEPLOY, 'pytorchjob-mnist-elastic.yaml'))['spec']['elasticPolicy']
    assert elastic['minReplicas'] < elastic['maxReplicas']


@needs_shared
def test_validation_reports_a_broken_manifest():
    manifest = load_manifest(os.path.join(DEPLOY, 'trainjob-mnist.yaml'))
    manifest['spec']['trainer']['numNodes'] = 'two'
    del manifest['spec']['runtimeRef']
    with pytest.raises(MXNetError, match=r"(?s)spec: 'runtimeRef' is a required property.*"
                                         r"spec.trainer.numNodes: 'two' is not of type 'integer'"):
        validate(manifest, schema_of('TrainJob'))


@needs_shared
@pytest.mark.parametrize('to', ['trainjob', 'pytorchjob'])
@pytest.mark.parametrize('source', [OLD_MXJOB, os.path.join(DEPLOY, 'mxjob-mnist.yaml')], ids=['shared', 'deploy'])
def test_converted_mxjobs_validate(source, to, tmp_path):
    out = tmp_path / 'job.yaml'
    assert mxjob.main(['--from-mxjob', source, '--to', to, '-o', str(out)]) == 0
    text = out.read_text()
    assert text.startswith('# Converted from MXJob')
    job = yaml.safe_load(text)
    validate(job, schema_of(job['kind']))


@needs_shared
def test_trainjob_keeps_workers_and_explains_the_rest():
    old = load_manifest(OLD_MXJOB)
    old['spec']['mxReplicaSpecs']['Worker']['replicas'] = 3
    worker_pod = old['spec']['mxReplicaSpecs']['Worker']['template']['spec']
    worker_pod['volumes'] = [{'name': 'data', 'persistentVolumeClaim': {'claimName': 'imagenet'}}]
    worker_pod['containers'][0]['volumeMounts'] = [{'name': 'data', 'mountPath': '/data'}]
    worker_pod['containers'][0]['env'] = [{'name': 'DMLC_INTERFACE', 'value': 'eth0'}, {'name': 'OMP_NUM_THREADS', 'value': '4'}]
    job, notes = mxjob.convert(old, 'trainjob')
    trainer = job['spec']['trainer']
    assert trainer['numNodes'] == 3 and trainer['image'] == 'kubeflow/mxnet-gpu:latest'
    assert trainer['resourcesPerNode'] == {'limits': {'nvidia.com/gpu': 1}}
    assert trainer['command'][:3] == ['torchrun', '-m', 'neomx.compat']
    assert trainer['command'][3:] == ['/mxnet/mxnet/example/image-classification/train_mnist.py', '--num-epochs', '10',
                                      '--num-layers', '2', '--kv-store', 'dist_device_sync', '--gpus', '0']
    assert trainer['env'] == [{'name': 'OMP_NUM_THREADS', 'value': '4'}]
    override, = job['spec']['podSpecOverrides']
    assert override['volumes'] == worker_pod['volumes']
    assert override['containers'] == [{'name': 'trainer', 'volumeMounts': [{'name': 'data', 'mountPath': '/data'}]}]
    text = '\n'.join(notes)
    for expected in ('Scheduler (1 replica) dropped', 'Server (1 replica) dropped', 'dist_device_sync',
                     '--gpus', 'env DMLC_INTERFACE'):
        assert expected in text
    validate(job, schema_of('TrainJob'))


@needs_shared
def test_pytorchjob_has_a_master_and_the_other_workers():
    old = load_manifest(os.path.join(DEPLOY, 'mxjob-mnist.yaml'))
    job, _ = mxjob.convert(old, 'pytorchjob', image='neomx:cuda')
    replicas = job['spec']['pytorchReplicaSpecs']
    assert replicas['Master']['replicas'] == 1 and replicas['Worker']['replicas'] == 1
    container = replicas['Worker']['template']['spec']['containers'][0]
    assert container['name'] == 'pytorch' and container['image'] == 'neomx:cuda'
    assert container['command'][:3] == ['python', '-m', 'neomx.compat']
    assert container['ports'] == [{'name': 'pytorchjob-port', 'containerPort': 23456}]
    assert replicas['Worker']['template']['spec']['volumes'][0]['persistentVolumeClaim']['claimName'] == 'neomx-data'


@needs_shared
def test_bad_mxjobs_are_refused():
    old = load_manifest(OLD_MXJOB)
    tune = copy.deepcopy(old)
    tune['spec']['jobMode'] = 'MXTune'
    with pytest.raises(MXNetError, match='MXTune .* has no neomx equivalent'):
        mxjob.convert(tune)
    no_worker = copy.deepcopy(old)
    del no_worker['spec']['mxReplicaSpecs']['Worker']
    with pytest.raises(MXNetError, match='needs a Worker'):
        mxjob.convert(no_worker)
    with pytest.raises(MXNetError, match='expects kind: MXJob'):
        mxjob.convert(load_manifest(os.path.join(DEPLOY, 'trainjob-mnist.yaml')))
