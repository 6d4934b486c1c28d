"""The shipped Kubeflow jobs run to completion on this machine, one process per pod, with the
environment their operator would give (tests/kubeflow_local.py): each worker trains on
its own share of the data. Also an MXJob run unconverted (DMLC_* variables, scheduler and
server pods) and one converted by ``--from-mxjob``."""
import io
import os
import re
import signal
import time

import pytest

pytest.importorskip('yaml', reason='manifests need PyYAML ("neomx[kubeflow]")')

from neomx.launch import mxjob                                   # noqa: E402
from neomx.launch._kube_yaml import load_manifest                 # noqa: E402
from neomx.gluon.checkpoint import EpochShards                    # noqa: E402
from kubeflow_local import run_job, start_job, wait_job                 # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPLOY = os.path.join(ROOT, 'deploy', 'kubeflow')
TINY = ['--max-batches', '3', '--batch-size', '32']
WORKER_LINE = re.compile(r'Worker (\d) of (\d): epoch 0, 3 batches from sample 0, first samples (\[.*\])')


@pytest.fixture
def volume(tmp_path):
    """The jobs' /data volume: MNIST (linked from the repository) and room for checkpoints."""
    os.symlink(os.path.join(ROOT, 'data', 'mnist'), tmp_path / 'mnist')
    return tmp_path


def run_locally(job, volume):
    out = io.StringIO()
    results = run_job(job, [('/opt/neomx', ROOT), ('/data', str(volume))], TINY, timeout=240, sink=out)
    for name, (code, _) in results.items():
        assert code == 0, '%s exited with %s:\n%s' % (name, code, out.getvalue())
    lines = [line for _, lines in results.values() for line in lines]
    shares = sorted(WORKER_LINE.search(line).groups() for line in lines if WORKER_LINE.search(line))
    assert [(rank, size) for rank, size, _ in shares] == [('0', '2'), ('1', '2')], out.getvalue()
    assert shares[0][2] != shares[1][2]                   # each worker reads its own share
    assert sum('Epoch 0. Loss' in line for line in lines) == 1, out.getvalue()     # worker 0 reports
    return results


@pytest.mark.parametrize('name', ['trainjob-mnist.yaml', 'pytorchjob-mnist-gloo.yaml'])
def test_shipped_job_trains_to_completion(name, volume):
    job = load_manifest(os.path.join(DEPLOY, name))
    results = run_locally(job, volume)
    assert len(results) == 2
    checkpoints = os.listdir(volume / 'checkpoints' / job['metadata']['name'])
    assert 'checkpoint-0001-00000000.json' in checkpoints


def test_unconverted_mxjob_runs_with_dmlc_variables(volume):
    results = run_locally(load_manifest(os.path.join(DEPLOY, 'mxjob-mnist.yaml')), volume)
    assert sorted(results) == ['neomx-mnist-mxjob-scheduler-0', 'neomx-mnist-mxjob-server-0',
                               'neomx-mnist-mxjob-worker-0', 'neomx-mnist-mxjob-worker-1']


def test_converted_mxjob_runs_as_a_trainjob(volume):
    job, _ = mxjob.convert(load_manifest(os.path.join(DEPLOY, 'mxjob-mnist.yaml')), 'trainjob')
    assert job['spec']['trainer']['command'][:3] == ['torchrun', '-m', 'neomx.compat']
    results = run_locally(job, volume)
    assert sorted(results) == ['neomx-mnist-mxjob-trainer-node-0-0', 'neomx-mnist-mxjob-trainer-node-0-1']


def process_tree(root):
    """``root`` and all its descendants (a pod: torchrun's agent and its workers)."""
    children = {}
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/stat' % pid) as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(pid))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


@pytest.mark.slow
def test_elastic_job_losing_a_pod_goes_on_with_one_worker_re_sharded(volume):
    job = load_manifest(os.path.join(DEPLOY, 'pytorchjob-mnist-elastic.yaml'))
    out = io.StringIO()
    started = start_job(job, [('/opt/neomx', ROOT), ('/data', str(volume))],
                        ['--max-batches', '40', '--checkpoint-every', '4'], sink=out)
    folder = volume / 'checkpoints' / 'neomx-mnist-elastic'
    deadline = time.time() + 300
    while not (folder.is_dir() and any(f.endswith('.json') for f in os.listdir(folder))) and time.time() < deadline:
        time.sleep(0.1)
    for pid in process_tree(started[1][1].pid):          # the node of worker 1 is lost
        os.kill(pid, signal.SIGKILL)
    code, lines = wait_job(started[:1], timeout=600)['neomx-mnist-elastic-worker-0']
    text = ''.join(lines)
    assert code == 0, out.getvalue()
    resumed = re.search(r'Resumed from epoch 0 batch (\d+) \((\d+) samples of the epoch read\)', text)
    assert resumed, text
    batch, read = map(int, resumed.groups())
    assert read == batch * 64                            # global batches of 64 from 2 workers
    order = EpochShards(60000, seed=1).order(0)
    # the worker left reads every remaining sample, 64 a batch: the global batch is unchanged
    assert 'Worker 0 of 1: epoch 0, %d batches from sample %d, first samples %s' % (
        40 - batch, read, order[read:read + 4].tolist()) in text
    wait_job(started[1:], timeout=60)
