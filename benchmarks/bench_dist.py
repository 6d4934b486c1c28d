"""Distributed KVStore against raw torch.distributed, and against MXNet 1.9.1's ps-lite.

Every case runs 2 worker processes on this host, started by ``python -m neomx.launch -n 2``
(each worker gets one of the 2 cores: ``OMP_NUM_THREADS=1``), and times both sides in the
same workers, round after round, interleaved:

* ``dist_sync`` push+pull of ResNet-50's parameters (161 arrays, 25.6M float32), against one
  ``torch.distributed.all_reduce`` (gloo) of a flat buffer of the same bytes, and against
  plain torch doing the work MXNet's semantics ask for on top of that all_reduce: copy the
  pushed arrays into the flat buffer (the store must not sum into the caller's arrays), then
  copy the sums out into the pulled arrays (which must not alias the stored values);
* a LeNet training step (batch 64 per worker, SGD) under ``dist_sync`` against the same step
  of one process alone (worker 0 while worker 1 waits; batch 64, one thread), and against
  the same distributed step with the Trainer's pushes started from backward's gradient hooks
  (``NEOMX_TRAINER_OVERLAP=1``) instead of at the step (the default); and, to tell the cost
  of communicating from that of two processes computing at once, both workers taking the
  single-process step at the same time (no store) against worker 0 taking it alone; and plain
  torch's own figures for the same job: its LeNet step under ``DistributedDataParallel``
  (gloo) against the same torch step alone, and neomx's ``dist_sync`` step against it;
* the same two jobs in MXNet 1.9.1 (``~/mxref``) with ps-lite: one scheduler, one server and
  2 workers on 127.0.0.1 set up with ``DMLC_*`` variables by hand; the ratio is neomx's time
  (the measurement of the rows above) over MXNet's. Left out when the oracle is absent.

A worker is this file run with ``--worker CASE``; rank 0 prints one JSON line of seconds.
``python benchmarks/bench_dist.py`` prints the rows without writing RESULTS.md.
"""
import functools
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from benchmarks.common import Result  # noqa: E402

MXNET_PYTHON = os.path.expanduser('~/mxref/bin/python')
ROUNDS = 12         # interleaved timing rounds per side; the best round counts
RESULT_TAG = 'bench_dist result '


# ------------------------------------------------------------------ workers
def _resnet50_shapes():
    from benchmarks.bench_optimizer import resnet50_shapes
    return resnet50_shapes()


def _best_of_rounds(sides, calls, barrier):
    """Seconds per call of each side: best over ROUNDS interleaved rounds of ``calls`` calls.

    Every worker makes the same calls (the collectives must match), so the count is fixed.
    """
    best = [float('inf')] * len(sides)
    for side in sides:
        side()                      # warm up
    for _ in range(ROUNDS):
        for i, side in enumerate(sides):
            barrier()
            t0 = time.perf_counter()
            for _ in range(calls):
                side()
            best[i] = min(best[i], (time.perf_counter() - t0) / calls)
    return best


def _report(rank, *seconds):
    if rank == 0:
        print(RESULT_TAG + json.dumps(seconds), flush=True)


def worker_push_pull():
    import torch
    import torch.distributed as dist
    import neomx as mx
    shapes = _resnet50_shapes()
    keys = list(range(len(shapes)))
    kv = mx.kv.create('dist_sync')
    kv.init(keys, [mx.nd.zeros(s) for s in shapes])
    grads = [mx.nd.ones(s) for s in shapes]
    outs = [mx.nd.zeros(s) for s in shapes]

    def neomx_side():
        kv.push(keys, grads)
        kv.pull(keys, out=outs)

    sizes = [int(torch.Size(s).numel()) for s in shapes]
    flat = torch.ones(sum(sizes))

    def torch_side():
        dist.all_reduce(flat)

    grad_ts, out_ts = [g._t for g in grads], [o._t for o in outs]

    def torch_with_copies():
        torch.cat([g.reshape(-1) for g in grad_ts], out=flat)
        dist.all_reduce(flat)
        for o, part in zip(out_ts, flat.split(sizes)):
            o.copy_(part.view(o.shape))

    seconds = _best_of_rounds([neomx_side, torch_side, torch_with_copies], 2, dist.barrier)
    assert outs[0].asnumpy().flat[0] == kv.num_workers
    _report(kv.rank, *seconds)


def _lenet_step(mx, kvstore, batch):
    from benchmarks.bench_gluon import _lenet
    from neomx import autograd, gluon
    net = _lenet()
    net.initialize(mx.init.Xavier(magnitude=2.24))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore=kvstore)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.random.uniform(shape=(batch, 1, 28, 28))
    y = mx.nd.array(mx.nd.random.uniform(0, 10, shape=(batch,)).asnumpy().astype(int))
    workers = kvstore.num_workers if kvstore is not None else 1

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch * workers)
    return step


def _with_overlap(step):
    """``step`` with the Trainer's pushes started from the gradient hooks (its overlap is
    chosen at its first step)."""
    def run():
        os.environ['NEOMX_TRAINER_OVERLAP'] = '1'
        try:
            step()
        finally:
            del os.environ['NEOMX_TRAINER_OVERLAP']
    return run


def worker_lenet():
    import torch.distributed as dist
    import neomx as mx
    mx.random.seed(0)
    kv = mx.kv.create('dist_sync')
    dist_step = _lenet_step(mx, kv, 64)
    from_backward = _with_overlap(_lenet_step(mx, mx.kv.create('dist_sync'), 64))
    alone_step = _lenet_step(mx, None, 64)

    def alone_side():               # worker 0 alone; the other waits at the next barrier
        if kv.rank == 0:
            alone_step()

    ddp_step, torch_alone = _torch_lenet_steps(64)

    def torch_alone_side():
        if kv.rank == 0:
            torch_alone()

    seconds = _best_of_rounds([dist_step, alone_side, from_backward, alone_step, ddp_step, torch_alone_side],
                              10, dist.barrier)
    _report(kv.rank, *seconds)


def _torch_lenet_steps(batch):
    """Plain torch's LeNet step under DistributedDataParallel (gloo, this process group) and
    alone: torch.nn + torch.optim.SGD(foreach=True), the same batch per worker."""
    import torch
    from benchmarks.bench_gluon import _torch_lenet, torch_train_step
    gen = torch.Generator().manual_seed(0)
    x = torch.rand((batch, 1, 28, 28), generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)
    ddp = torch.nn.parallel.DistributedDataParallel(_torch_lenet())
    return torch_train_step(ddp, x, y), torch_train_step(_torch_lenet(), x, y)


MXNET_WORKER = r'''
import json, os, sys, time
import numpy as np
import mxnet as mx
case, rounds = sys.argv[1], int(sys.argv[2])
kv = mx.kv.create('dist_sync')
if case == 'push_pull':
    shapes = json.loads(sys.argv[3])
    keys = list(range(len(shapes)))
    kv.init(keys, [mx.nd.zeros(s) for s in shapes])
    grads = [mx.nd.ones(s) for s in shapes]
    outs = [mx.nd.zeros(s) for s in shapes]
    def side():
        kv.push(keys, grads)
        kv.pull(keys, out=outs)
    calls = 2
else:
    from mxnet import autograd, gluon
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(20, 5, activation='relu'), gluon.nn.MaxPool2D(2, 2),
                gluon.nn.Conv2D(50, 5, activation='relu'), gluon.nn.MaxPool2D(2, 2),
                gluon.nn.Flatten(), gluon.nn.Dense(500, activation='relu'), gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier(magnitude=2.24))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.random.uniform(shape=(64, 1, 28, 28))
    y = mx.nd.array(np.random.randint(0, 10, 64))
    def side():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(64 * kv.num_workers)
        mx.nd.waitall()
    calls = 10
side(); mx.nd.waitall()
best = float('inf')
for _ in range(rounds):
    kv.barrier() if hasattr(kv, 'barrier') else kv._barrier()
    t0 = time.perf_counter()
    for _ in range(calls):
        side()
    mx.nd.waitall()
    best = min(best, (time.perf_counter() - t0) / calls)
if kv.rank == 0:
    print('%s%s' % (sys.argv[4], json.dumps([best])), flush=True)
'''


# ------------------------------------------------------------------- driver
def _result_of(output, what):
    for line in output.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    raise RuntimeError('%s printed no result:\n%s' % (what, output[-3000:]))


@functools.lru_cache(maxsize=None)
def _run_neomx(case):
    """(neomx seconds, baseline seconds) of a case; measured once, shared by its rows."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('OMP_NUM_THREADS', None)            # the launcher gives each worker its share
    proc = subprocess.run([sys.executable, '-m', 'neomx.launch', '-n', '2', sys.executable,
                           os.path.abspath(__file__), '--worker', case],
                          capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    return _result_of(proc.stdout + proc.stderr, 'neomx.launch -n 2 (%s)' % case)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _run_mxnet(case, num_servers=1, num_workers=2):
    """MXNet's ps-lite job by hand: scheduler, servers and workers with DMLC_* variables."""
    base = dict(os.environ, DMLC_PS_ROOT_URI='127.0.0.1', DMLC_PS_ROOT_PORT=str(_free_port()),
                DMLC_NUM_SERVER=str(num_servers), DMLC_NUM_WORKER=str(num_workers),
                OMP_NUM_THREADS='1')
    base.pop('PYTHONPATH', None)
    argv = [MXNET_PYTHON, '-c', MXNET_WORKER, case, str(ROUNDS),
            json.dumps(_resnet50_shapes()), RESULT_TAG]
    others = [subprocess.Popen([MXNET_PYTHON, '-c', 'import mxnet'], env=dict(base, DMLC_ROLE=role),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
              for role in ['scheduler'] + ['server'] * num_servers]
    workers = [subprocess.Popen(argv, env=dict(base, DMLC_ROLE='worker'), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True) for _ in range(num_workers)]
    try:
        output = ''.join(w.communicate(timeout=900)[0] for w in workers)
    finally:
        for p in others + workers:
            if p.poll() is None:
                p.kill()
            p.wait()
    return _result_of(output, 'MXNet 1.9.1 ps-lite (%s)' % case)


_PUSH_PULL = 'dist_sync push+pull, ResNet-50 parameters (161 arrays, 25.6M f32), 2 workers'
_LENET = 'LeNet training step under dist_sync, 2 workers, batch 64 each'
_VS_MXNET = ('torch column: MXNet 1.9.1 dist_sync with ps-lite, 1 scheduler + 1 server + 2 workers on 127.0.0.1 '
             '(DMLC_* by hand); comparison')


def bench_push_pull():
    neomx_s, torch_s, _ = _run_neomx('push_pull')
    return Result(_PUSH_PULL, neomx_s, torch_s, 1.2,
                  'torch column: one torch.distributed.all_reduce (gloo) of a flat buffer of the same bytes; '
                  'best of %d interleaved rounds' % ROUNDS)


def bench_push_pull_copies():
    neomx_s, _, copies_s = _run_neomx('push_pull')
    return Result(_PUSH_PULL + ': vs all_reduce plus the copies in and out', neomx_s, copies_s, 1.05,
                  'torch column: plain torch copying the 161 pushed arrays into one flat buffer (torch.cat), '
                  'one all_reduce of it, copying it out into the 161 pulled arrays, unpipelined')


def bench_lenet_step():
    dist_s, alone_s = _run_neomx('lenet')[:2]
    return Result(_LENET, dist_s, alone_s, 1.3,
                  'torch column: the same step in one process alone (neomx, batch 64, 1 thread)')


def bench_lenet_two_alone():
    _, alone_s, _, both_alone_s = _run_neomx('lenet')[:4]
    return Result(_LENET + ': no store, both workers at once vs worker 0 alone', both_alone_s, alone_s,
                  float('inf'),
                  'no target: what two processes computing at once cost each other, without communicating '
                  '(the part of the row above that no store can remove). neomx column: both workers take '
                  'the single-process step at the same time, torch column: worker 0 alone (both neomx)')


def bench_lenet_torch_ddp():
    ddp_s, torch_alone_s = _run_neomx('lenet')[4:6]
    return Result(_LENET + ': plain torch, DistributedDataParallel vs alone', ddp_s, torch_alone_s,
                  float('inf'),
                  'no target: what torch itself reaches here. neomx column: torch.nn LeNet under '
                  'DistributedDataParallel (gloo), 2 workers, torch column: the same torch step in one '
                  'process alone (worker 0, 1 thread); both torch.optim.SGD(foreach=True)')


def bench_lenet_vs_torch_ddp():
    dist_s, ddp_s = _run_neomx('lenet')[0], _run_neomx('lenet')[4]
    return Result(_LENET + ': vs torch DistributedDataParallel', dist_s, ddp_s, 1.0,
                  'torch column: torch.nn LeNet under DistributedDataParallel (gloo), 2 workers, batch 64 '
                  'each, torch.optim.SGD(foreach=True)')


def bench_lenet_overlap():
    at_step_s, _, from_backward_s, _ = _run_neomx('lenet')[:4]
    return Result(_LENET + ': gradients sent from backward vs at the step', from_backward_s, at_step_s, 1.0,
                  'neomx column: the Trainer starts pushes from the gradient hooks (NEOMX_TRAINER_OVERLAP=1), '
                  'torch column: pushes at the step (the default) (both neomx)')


def _against_mxnet(case, name):
    def bench():
        neomx_s = _run_neomx(case)[0]
        mxnet_s, = _run_mxnet(case)
        return Result(name + ' vs MXNet 1.9.1 ps-lite', neomx_s, mxnet_s, 1.0, _VS_MXNET)
    bench.__name__ = 'bench_%s_vs_mxnet' % case
    return bench


BENCHMARKS = [bench_push_pull, bench_push_pull_copies, bench_lenet_step, bench_lenet_two_alone,
              bench_lenet_torch_ddp, bench_lenet_vs_torch_ddp, bench_lenet_overlap] + (
    [_against_mxnet('push_pull', _PUSH_PULL), _against_mxnet('lenet', _LENET)]
    if os.path.exists(MXNET_PYTHON) else [])

_WORKERS = {'push_pull': worker_push_pull, 'lenet': worker_lenet}

if __name__ == '__main__':
    if sys.argv[1:2] == ['--worker']:
        _WORKERS[sys.argv[2]]()
    else:
        for bench in BENCHMARKS:
            r = bench()
            print('%s: neomx %.1f ms, other %.1f ms, ratio %.2f (target <= %.2f)'
                  % (r.name, r.neomx_s * 1e3, r.torch_s * 1e3, r.ratio, r.target), flush=True)
