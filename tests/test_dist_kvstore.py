"""Distributed KVStores: worker processes on 127.0.0.1 (gloo), started as each launcher does.

The worker scripts in tests/dist_workers/ assert the semantics themselves (with equality) and
print a RESULT line; these tests start them, check every exit status and line, and check the
errors of faulty jobs. In-process tests cover place-finding, names and parameter errors.
"""
import os
import socket
import subprocess
import sys

import pytest
import torch

import neomx as mx
from neomx.base import MXNetError
from neomx.kvstore.compression import parse_compression
from neomx.kvstore.placement import find_place

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKERS = os.path.join(ROOT, 'tests', 'dist_workers')
LIMIT = 150      # seconds a job may take before `timeout` kills it (the machine may be busy)


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _env(out_dir, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('PET_', 'DMLC_', 'TORCHELASTIC_', 'MASTER_'))
           and k not in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE', 'GROUP_RANK')}
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    env.update(OMP_NUM_THREADS='1', OUT_DIR=str(out_dir), NEOMX_RENDEZVOUS_TIMEOUT='90')
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _launch(jobs):
    """Start every (argv, env) at once; their (returncode, stdout, stderr) in order."""
    procs = [subprocess.Popen(['timeout', str(LIMIT)] + argv, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for argv, env in jobs]
    return [(p.returncode, out, err) for p in procs for out, err in [p.communicate()]]


def _workers(tmp_path, script, n, args=(), **extra):
    """``n`` workers with torchrun's variables set by hand (RANK, WORLD_SIZE, MASTER_*)."""
    port = _free_port()
    jobs = [([sys.executable, os.path.join(WORKERS, script)] + list(args),
             _env(tmp_path, RANK=r, WORLD_SIZE=n, LOCAL_RANK=r, MASTER_ADDR='127.0.0.1', MASTER_PORT=port,
                  EXPECT_WORKERS=n, **extra)) for r in range(n)]
    return _launch(jobs)


def _all_ok(results, word):
    for rank, (code, out, err) in enumerate(results):
        assert code == 0, 'worker %d exited %d:\n%s\n%s' % (rank, code, out, err[-3000:])
        assert 'RESULT %s ok rank %d' % (word, rank) in out, out


# ---------------------------------------------------------------- semantics
@pytest.mark.parametrize('kind', ['dist_sync', 'dist_device_sync'])
def test_dist_sync_semantics(tmp_path, kind):
    _all_ok(_workers(tmp_path, 'sync_semantics.py', 2, [kind]), 'sync')


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')
@pytest.mark.parametrize('kind', ['dist_sync', 'dist_device_sync'])
def test_dist_sync_semantics_on_gpu(tmp_path, kind):
    # both workers on one GPU (NCCL refuses that: CUDA tensors go through gloo), or each on its own
    _all_ok(_workers(tmp_path, 'sync_semantics.py', 2, [kind], WORKER_CTX='gpu(0)'), 'sync')


def test_fused_buckets_and_pushes_from_backward_are_exact(tmp_path):
    """Bucketed sums equal unbucketed ones bit for bit; a Trainer whose pushes start from the
    gradient hooks ends with the weights of one pushing at the step (see the worker)."""
    _all_ok(_workers(tmp_path, 'fusion_overlap.py', 2), 'fusion')


def test_dist_async_semantics(tmp_path):
    _all_ok(_workers(tmp_path, 'async_semantics.py', 2), 'async')


@pytest.mark.parametrize('kind', ['dist_sync', 'dist_async'])
def test_trainer_and_module(tmp_path, kind):
    _all_ok(_workers(tmp_path, 'trainer_semantics.py', 2, KV_TYPE=kind), 'trainer')
    states = [open(os.path.join(tmp_path, 'trainer%d.states' % r), 'rb').read() for r in range(2)]
    assert states[0] and states[1]
    if kind == 'dist_sync':      # every worker holds the same optimizer and states
        assert states[0] == states[1]


@pytest.mark.parametrize('kind', ['horovod', 'byteps'])
def test_allreduce_style_stores(tmp_path, kind):
    _all_ok(_workers(tmp_path, 'env_place.py', 2, KV_TYPE=kind), 'env')


# ------------------------------------------------------------------- faults
def test_mismatched_requests_raise_on_every_worker(tmp_path):
    results = _workers(tmp_path, 'faults.py', 2, FAULT='mismatch')
    _all_ok(results, 'mismatch')
    for _, out, _ in results:
        assert out.count('the workers disagree on what to do') == 2, out
        assert "stores shape (2, 2) but got (3, 3)" in out


def test_lost_worker_is_named(tmp_path):
    results = _workers(tmp_path, 'faults.py', 3, FAULT='die', NEOMX_KVSTORE_TIMEOUT=30)
    assert results[2][0] == 3
    for code, out, err in results[:2]:
        assert code == 0, err[-3000:]
        assert 'lost rank 2' in out and 'RESULT die ok' in out, out


def test_exit_waits_for_a_heartbeat_inside_a_store_call(tmp_path):
    """A heartbeat thread left inside a torch call when the interpreter finalizes aborts the
    process ("terminate called without an active exception"): the exit waits for it, however
    slow the machine (see the worker)."""
    [(code, out, err)] = _workers(tmp_path, 'slow_heartbeat.py', 1)
    assert code == 0 and 'terminate called' not in err, (code, err[-3000:])
    assert 'RESULT heartbeat ok rank 0' in out, out


@pytest.mark.skipif(not os.path.isdir('/proc/self/task'), reason="reads the process's threads in /proc")
def test_exit_ends_the_threads_of_gloo(tmp_path):
    """The process group goes before the interpreter does, even when torch code imported
    later could hold it (see the worker)."""
    [(code, out, err)] = _workers(tmp_path, 'exit_threads.py', 1)
    assert code == 0, err[-3000:]
    assert 'RESULT exit threads none rank 0' in out, out


def test_missing_worker_times_out_naming_address_and_count(tmp_path):
    port = _free_port()
    jobs = [([sys.executable, os.path.join(WORKERS, 'env_place.py')],
             _env(tmp_path, RANK=r, WORLD_SIZE=3, MASTER_ADDR='127.0.0.1', MASTER_PORT=port, EXPECT_WORKERS=3,
                  NEOMX_RENDEZVOUS_TIMEOUT=4)) for r in range(2)]
    for code, _, err in _launch(jobs):
        assert code == 1
        assert 'rendezvous at 127.0.0.1:%d: only 2 of 3 workers arrived within 4 s' % port in err, err[-2000:]


def test_unreachable_store_is_named(tmp_path):
    port = _free_port()
    [(code, _, err)] = _launch([([sys.executable, os.path.join(WORKERS, 'env_place.py')],
                                 _env(tmp_path, RANK=1, WORLD_SIZE=2, MASTER_ADDR='127.0.0.1', MASTER_PORT=port,
                                      EXPECT_WORKERS=2, NEOMX_RENDEZVOUS_TIMEOUT=3))])
    assert code == 1
    assert 'could not reach the store at 127.0.0.1:%d within 3 s' % port in err, err[-2000:]


# ----------------------------------------------------------------- launchers
def test_torchrun(tmp_path):
    port = _free_port()
    [(code, out, err)] = _launch([([sys.executable, '-m', 'torch.distributed.run', '--nproc-per-node', '2',
                                    '--master-port', str(port), os.path.join(WORKERS, 'env_place.py')],
                                   _env(tmp_path, EXPECT_WORKERS=2))])
    assert code == 0, err[-3000:]
    assert 'RESULT env ok rank 0 of 2' in out and 'RESULT env ok rank 1 of 2' in out


def test_kubeflow_pet_variables(tmp_path):
    port = _free_port()
    jobs = [([sys.executable, os.path.join(WORKERS, 'env_place.py')],
             _env(tmp_path, PET_NNODES=2, PET_NPROC_PER_NODE=1, PET_NODE_RANK=r, PET_MASTER_ADDR='127.0.0.1',
                  PET_MASTER_PORT=port, EXPECT_WORKERS=2)) for r in range(2)]
    _all_ok(_launch(jobs), 'env')


def test_dmlc_variables_with_scheduler_and_server(tmp_path):
    port = _free_port()
    common = dict(DMLC_PS_ROOT_URI='127.0.0.1', DMLC_PS_ROOT_PORT=port, DMLC_NUM_WORKER=2, DMLC_NUM_SERVER=1,
                  EXPECT_WORKERS=2)
    script = [sys.executable, os.path.join(WORKERS, 'env_place.py')]
    roles = ['scheduler', 'server', 'worker', 'worker']
    results = _launch([(script, _env(tmp_path, DMLC_ROLE=role, **common)) for role in roles])
    for role, (code, out, err) in zip(roles, results):
        assert code == 0, '%s exited %d: %s' % (role, code, err[-3000:])
    outs = ''.join(out for _, out, _ in results[2:])
    # launch.py numbers no worker: ranks come in order of arrival
    assert 'RESULT env ok rank 0 of 2' in outs and 'RESULT env ok rank 1 of 2' in outs
    assert 'RESULT' not in results[0][1] + results[1][1]


# ---------------------------------------------------------------- in-process
def test_find_place_reads_launchers_in_order():
    torchrun = {'RANK': '3', 'WORLD_SIZE': '4', 'LOCAL_RANK': '1', 'MASTER_ADDR': 'h', 'MASTER_PORT': '7',
                'TORCHELASTIC_USE_AGENT_STORE': 'True', 'DMLC_ROLE': 'worker'}
    p = find_place(torchrun)
    assert (p.rank, p.num_workers, p.local_rank, p.master_addr, p.master_port, p.source, p.agent_store) == \
        (3, 4, 1, 'h', 7, 'torchrun', True)
    pet = {'PET_NNODES': '3', 'PET_NPROC_PER_NODE': '2', 'PET_NODE_RANK': '2', 'LOCAL_RANK': '1',
           'PET_MASTER_ADDR': 'm', 'PET_MASTER_PORT': '23456'}
    p = find_place(pet)
    assert (p.rank, p.num_workers, p.master_addr, p.master_port, p.source) == (5, 6, 'm', 23456, 'kubeflow')
    assert find_place(dict(pet, PET_NNODES='1:3')).num_workers == 6     # elastic min:max
    dmlc = {'DMLC_ROLE': 'server', 'DMLC_PS_ROOT_URI': 's', 'DMLC_PS_ROOT_PORT': '9191',
            'DMLC_NUM_WORKER': '3', 'DMLC_NUM_SERVER': '2'}
    p = find_place(dmlc)
    assert (p.rank, p.role, p.num_workers, p.num_servers, p.master_port) == (None, 'server', 3, 2, 9191)
    assert find_place(dict(dmlc, DMLC_ROLE='worker', DMLC_WORKER_ID='2')).rank == 2
    assert find_place({}).source == 'single' and find_place({}).num_workers == 1
    with pytest.raises(MXNetError, match='DMLC_NUM_WORKER'):
        find_place({'DMLC_ROLE': 'worker', 'DMLC_PS_ROOT_URI': 's', 'DMLC_PS_ROOT_PORT': '1'})
    with pytest.raises(MXNetError, match=r'rank 4 of 4 workers.*\[0, 4\)'):
        find_place(dict(torchrun, RANK='4'))
    with pytest.raises(MXNetError, match="DMLC_ROLE='boss'"):
        find_place(dict(dmlc, DMLC_ROLE='boss'))


def test_compression_parameters_as_mxnet():
    assert parse_compression({'type': '2bit'}).threshold == 0.5
    assert parse_compression({'type': '2bit', 'threshold': '0.25', 'other': 1}).threshold == 0.25
    for params, text in [({'type': '3bit'}, 'Unknown type for gradient compression 3bit'),
                         ({'threshold': 0.5}, 'Required parameter type of string is not presented'),
                         ({'type': '2bit', 'threshold': -1}, 'threshold must be greater than 0'),
                         ({'type': '2bit', 'threshold': 0}, 'threshold must be greater than 0'),
                         ({'type': '2bit', 'threshold': 'a'}, "expect float but value='a'")]:
        with pytest.raises(MXNetError, match=text):
            parse_compression(params)


def test_two_bit_codes_round_trip():
    import torch
    comp = parse_compression({'type': '2bit', 'threshold': 0.5})
    grad = torch.tensor([0.7, -0.6, 0.2, 0.49, -0.5, 0.5, 0.0])
    codes = comp.quantize('k', grad)
    values = comp.dequantize(comp.pack(codes), grad.numel(), torch.float32)
    assert values.tolist() == [0.5, -0.5, 0.0, 0.0, -0.5, 0.5, 0.0]
    again = comp.dequantize(comp.pack(comp.quantize('k', torch.tensor([0.0, 0.0, 0.3, 0.01, 0, 0, 0]))), 7,
                            torch.float32)
    assert again.tolist() == [0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0]     # residuals 0.2 and 0.49 carried


def test_bucket_plans(monkeypatch):
    from neomx.kvstore.bucketed_push import plan_in_ready_order
    from neomx.kvstore.fusion import fusion_bytes, plan_buckets
    mib = 1 << 20
    assert fusion_bytes() == 16 * mib
    # the store: in order, the first bucket at most 4 MiB, a bigger key alone, order kept
    assert plan_buckets([mib] * 5 + [20 * mib, mib], limit=16 * mib) == [[0, 1, 2, 3], [4], [5], [6]]
    assert plan_buckets([], limit=16 * mib) == []
    monkeypatch.setenv('NEOMX_KVSTORE_FUSION_BYTES', '0')
    assert plan_buckets([4, 4, 4]) == [[0], [1], [2]]
    # the bucketed push: buckets filled until they reach 1 MiB (the first), then the fusion size
    monkeypatch.setenv('NEOMX_KVSTORE_FUSION_BYTES', str(2 * mib))
    assert plan_in_ready_order([3, 0, 1, 2], [mib // 2, mib, mib // 2, 100]) == [[3, 0, 1], [2]]
    assert plan_in_ready_order([2, 1, 0], [mib, 3 * mib, mib]) == [[2], [1], [0]]
    monkeypatch.setenv('NEOMX_KVSTORE_FUSION_BYTES', 'lots')
    with pytest.raises(MXNetError, match='NEOMX_KVSTORE_FUSION_BYTES'):
        plan_buckets([4])


def test_trainer_pushes_from_backward_only_when_asked(monkeypatch):
    from neomx.gluon.trainer_overlap import can_overlap

    class Store:
        def bucketed_push(self, keys, values):
            raise AssertionError('not called by can_overlap')
    monkeypatch.delenv('NEOMX_TRAINER_OVERLAP', raising=False)
    assert not can_overlap(Store(), [], None)          # off by default
    monkeypatch.setenv('NEOMX_TRAINER_OVERLAP', '1')
    assert can_overlap(Store(), [], None)
    assert not can_overlap(Store(), [], {'type': '2bit'})    # never with compression
    assert not can_overlap(object(), [], None)         # nor with a store that cannot


def test_registered_store_and_trainer_table():
    @mx.kv.KVStoreBase.register
    class PluginStoreForTest(mx.kv.TestStore):
        pass

    assert isinstance(mx.kv.create('pluginstorefortest'), PluginStoreForTest)
    kv = mx.kv.create('teststore')
    assert kv.type == 'teststore' and not kv.is_capable('optimizer')
    with pytest.raises(ValueError, match='Unknown capability'):
        kv.is_capable('magic')
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,)) * 2
    kv.pushpull(0, [a, b])
    assert a.asnumpy().tolist() == [3, 3] and b.asnumpy().tolist() == [3, 3]
    p = mx.gluon.Parameter('p', shape=(2,))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='ones')
    t = mx.gluon.Trainer([p], 'sgd', {'learning_rate': 1.0}, kvstore=kv, update_on_kvstore=True)
    with pytest.raises(ValueError, match='Please set update_on_kvstore=False'):
        t._init_kvstore()
    t = mx.gluon.Trainer([p], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    with mx.autograd.record():
        ys = [(w * 1).sum() for w in p.list_data()]
    mx.autograd.backward(ys)
    t.step(1)
    assert t._update_on_kvstore is False
    assert p.data(mx.cpu(1)).asnumpy().tolist() == [-1, -1]          # 1 - 1 * (1 + 1)
    with pytest.raises(MXNetError, match="unknown kvstore type 'bogus'"):
        mx.kv.create('bogus')


def test_bucketed_push_plans_in_ready_order_and_starts_complete_buckets(monkeypatch):
    """The store's bucketed push (a job of one worker, in this process): the first round
    pushes at ``finish`` and learns the order; later rounds start each bucket when its last
    value is ready, in bucket order; a value written twice makes ``finish`` push it all."""
    monkeypatch.setenv('NEOMX_KVSTORE_FUSION_BYTES', '8')       # a bucket per 2-float value
    kv = mx.kv.create('dist_sync')
    keys = [20, 21, 22]
    kv.init(keys, [mx.nd.zeros(2) for _ in keys])
    grads = [mx.nd.array([1, 2]), mx.nd.array([3, 4]), mx.nd.array([5, 6])]
    pushes = kv.bucketed_push(keys, grads)

    def pulled():
        outs = [mx.nd.zeros(2) for _ in keys]
        kv.pull(keys, out=outs)
        return [o.asnumpy().tolist() for o in outs]

    pushes.ready(2)
    pushes.ready(0)
    assert pushes.buckets is None and pushes.started == 0      # no plan yet: all at finish
    pushes.finish().wait()
    assert pushes.buckets == [[2], [0], [1]]                    # ready order, then the rest
    assert pulled() == [[1, 2], [3, 4], [5, 6]]

    for g in grads:
        g *= 10
    pushes.ready(0)
    assert pushes.started == 0                  # bucket [0] waits for bucket [2]
    pushes.ready(2)
    assert pushes.started == 2                  # [2], then [0] which was complete
    handle = pushes.finish()
    assert pushes.started == 0                  # a new round
    handle.wait()
    assert pulled() == [[10, 20], [30, 40], [50, 60]]

    pushes.ready(2)
    grads[2][:] = 7
    pushes.ready(2)                             # written again after its push started
    pushes.finish()
    assert pulled() == [[10, 20], [30, 40], [7, 7]]
