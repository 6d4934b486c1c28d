"""Mirroring (MXNET_BACKWARD_DO_MIRROR / hybridize(mirror=True)): segments of a compiled
graph recomputed in the backward pass give the gradients of the stored run, bit for bit,
and keep less memory."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import autograd, gluon
from neomx.symbol.graph import compiled, mirror_requested, mirror_segments, plan_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mlp(layers=12, batch_norm=False, dropout=False):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        for _ in range(layers):
            net.add(gluon.nn.Dense(16, activation='relu'))
            if batch_norm:
                net.add(gluon.nn.BatchNorm())
            if dropout:
                net.add(gluon.nn.Dropout(0.3))
        net.add(gluon.nn.Dense(3))
    return net


def _train_pass(mirror, **layers):
    """Parameters' gradients and values (moving statistics included) after one pass."""
    mx.random.seed(1)
    net = _mlp(**layers)
    net.initialize(mx.init.Xavier())
    net.hybridize(mirror=mirror)
    x = mx.nd.array(torch.randn((8, 5), generator=torch.Generator().manual_seed(0)).numpy())
    mx.random.seed(2)
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    params = list(net.collect_params().values())
    grads = [p.grad().asnumpy() for p in params if p.grad_req != 'null']
    return grads, [p.data().asnumpy() for p in params], net


@pytest.mark.parametrize('layers', [{}, {'batch_norm': True}, {'dropout': True}],
                         ids=['dense', 'batchnorm', 'dropout'])
def test_mirrored_gradients_equal_stored_run(layers):
    stored_grads, stored_values, _ = _train_pass(False, **layers)
    grads, values, net = _train_pass(True, **layers)
    assert len(grads) == len(stored_grads)
    for got, want in zip(grads, stored_grads):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(values, stored_values):   # BatchNorm's moving stats updated once
        np.testing.assert_array_equal(got, want)
    assert 'recompute(seg' in next(iter(net._cached_graph._bound.values())).run.source


def test_mirrored_inference_matches():
    _, _, net = _train_pass(True)
    plain = _mlp()
    plain.initialize()
    x = mx.nd.ones((2, 5))
    plain(x)
    for dst, src in zip(plain.collect_params().values(), net.collect_params().values()):
        dst.set_data(src.data())
    np.testing.assert_array_equal(net(x).asnumpy(), plain(x).asnumpy())


def test_mirror_segments_layout():
    data = mx.sym.var('data')
    h = data
    for i in range(8):
        h = mx.sym.FullyConnected(h, num_hidden=4, name='fc%d' % i)
        if i == 3:
            h = mx.sym.BatchNorm(h, name='bn')
        h = mx.sym.Activation(h, act_type='relu', name='relu%d' % i)
    plan = plan_of(h, mx.cpu(), h.list_inputs())
    runs = mirror_segments(plan.calls)
    assert [c for _, calls in runs for c in calls] == plan.calls
    assert [calls[0].node.op for _, calls in runs if calls[0].node.op == 'BatchNorm'] == ['BatchNorm']
    assert all(not recomputed for recomputed, calls in runs if calls[0].node.op == 'BatchNorm')
    assert not runs[-1][0]                      # the last run's backward comes right away
    assert max(len(calls) for _, calls in runs) <= -(-len(plan.calls) // 4)    # 17 calls: runs of 5


@pytest.mark.parametrize('count, runs', [(10, 4), (200, 4), (400, 5), (3600, 15)])
def test_mirror_run_count_grows_as_sqrt(count, runs):
    data = mx.sym.var('data')
    h = data
    for i in range(count):
        h = mx.sym.relu(h, name='r%d' % i)
    plan = plan_of(h, mx.cpu(), h.list_inputs())
    segments = mirror_segments(plan.calls)
    assert len(segments) == runs
    assert [recomputed for recomputed, _ in segments] == [True] * (runs - 1) + [False]


def test_environment_variable_mirrors_executor(monkeypatch):
    data = mx.sym.var('data')
    h = data
    for i in range(6):
        h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=5, name='fc%d' % i), act_type='tanh')
    out = mx.sym.sum(h)
    rng = np.random.RandomState(0)

    def grads():
        exe = out.simple_bind(mx.cpu(), data=(4, 3))
        for name, arr in exe.arg_dict.items():
            arr[:] = rng.uniform(-1, 1, arr.shape)
        exe.forward(is_train=True)
        exe.backward()
        return exe, {n: g.asnumpy() for n, g in exe.grad_dict.items()}
    monkeypatch.setenv('MXNET_BACKWARD_DO_MIRROR', '0')
    assert not mirror_requested()
    rng.seed(0)
    _, stored = grads()
    monkeypatch.setenv('MXNET_BACKWARD_DO_MIRROR', '1')
    assert mirror_requested()
    rng.seed(0)
    exe, mirrored = grads()
    assert 'recompute(' in exe.debug_str()
    assert compiled(out, mx.cpu()) is not compiled(out, mx.cpu(), mirror=False)
    for name, grad in stored.items():
        np.testing.assert_array_equal(mirrored[name], grad)


_PEAK = '''
import sys, torch
sys.path.insert(0, %r)
torch.set_num_threads(1)
import neomx as mx
from neomx import autograd, gluon
net = gluon.nn.HybridSequential()
with net.name_scope():
    net.add(*[gluon.nn.Dense(256, activation='relu') for _ in range(40)])
net.initialize()
net.hybridize(mirror=%r)
x = mx.nd.ones((256, 256))
def run():
    with autograd.record():
        y = net(x).sum()
    y.backward()
def status(field):
    return int(next(l for l in open('/proc/self/status') if l.startswith(field)).split()[1])
run()
open('/proc/self/clear_refs', 'w').write('5')
start = status('VmRSS')
run()
print(status('VmHWM') - start)
'''


@pytest.mark.skipif(not os.path.exists('/proc/self/clear_refs'), reason='peak RSS reset needs Linux')
def test_mirroring_keeps_less_memory():
    """Peak resident memory of a pass (allocator returning freed blocks at once): 40 layers of
    256x256 activations keep ~20 MB stored, a few MB mirrored."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_='65536', MALLOC_TRIM_THRESHOLD_='0', OMP_NUM_THREADS='1')

    def peak_kib(mirror):
        out = subprocess.run([sys.executable, '-c', _PEAK % (ROOT, mirror)], env=env,
                             capture_output=True, text=True, check=True)
        return int(out.stdout.split()[-1])
    stored, mirrored = peak_kib(False), peak_kib(True)
    assert stored > 15000
    assert mirrored * 2.5 < stored
