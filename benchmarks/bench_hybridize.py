"""Hybridized (compiled-graph) execution: training steps, backends, mirroring, inference.

* Training steps of a hybridized MLP (Dense 64-64-10, batch 32 of 100 features) and of the
  seed's LeNet (batch 64 of 1x28x28) in a HybridSequential: ``autograd.record``, forward,
  SoftmaxCrossEntropyLoss, backward, ``Trainer.step`` with SGD, against the same layers in
  ``torch.nn`` with ``torch.optim.SGD(foreach=True)`` (``bench_gluon``'s steps).
* ``backend='inductor'`` against the default backend on the MLP step.
* Mirroring on a 100-layer MLP (Dense(256) + relu, batch 256): peak memory and step time
  with ``hybridize(mirror=True)`` against the same graph without.

  Peak memory is measured in a child process as the rise of the peak resident set size
  (Linux ``VmHWM``, reset through ``/proc/self/clear_refs``) over the resident size at the
  start of one forward+backward pass, after a warm-up pass. glibc is told to serve every
  block above 64 KiB with mmap and to return freed memory at once
  (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``), so the resident size follows
  the live tensors. Parameters and gradient buffers exist before the pass (the gradients
  of ``grad_req='write'`` replace the buffers one by one), so the rise is the memory the
  pass keeps for backward plus a few transient arrays: the activation memory.
* Inference of ResNet-18 v1 (``model_zoo.vision.resnet18_v1``), hybridized with
  ``static_alloc`` and ``static_shape`` in both, on 3x224x224 images at batch 1 and 32,
  against MXNet 1.9.1's hybridized model run by the oracle interpreter ``~/mxref/bin/python`` in a subprocess
  of this run with the same thread count, before and after neomx's measurement (the
  faster of the two counts). Its time goes in the ``torch`` column.
"""
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import neomx as mx  # noqa: E402
from neomx import autograd, gluon  # noqa: E402
from benchmarks.bench_gluon import _compare_steps, _torch_lenet, _torch_mlp, neomx_train_step  # noqa: E402
from benchmarks.common import Result, best_time  # noqa: E402

MXNET_PYTHON = os.path.expanduser('~/mxref/bin/python')


def _hybrid_sequential(*layers):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(*layers)
    return net


def _mlp():
    nn = gluon.nn
    return _hybrid_sequential(nn.Dense(64, activation='relu'), nn.Dense(64, activation='relu'), nn.Dense(10))


def _lenet():
    nn = gluon.nn
    return _hybrid_sequential(nn.Conv2D(channels=20, kernel_size=5, activation='relu'),
                              nn.MaxPool2D(pool_size=2, strides=2),
                              nn.Conv2D(channels=50, kernel_size=5, activation='relu'),
                              nn.MaxPool2D(pool_size=2, strides=2),
                              nn.Flatten(), nn.Dense(500, activation='relu'), nn.Dense(10))


def _hybridized(net, **flags):
    net.hybridize(**flags)
    return net


# ------------------------------------------------------------ training steps
def bench_mlp_step():
    return _compare_steps('hybridized MLP training step 64-64-10, batch 32', _hybridized(_mlp()),
                          _torch_mlp(100), (32, 100), 10, target=1.0)


def bench_lenet_step():
    return _compare_steps('hybridized LeNet training step, batch 64', _hybridized(_lenet()),
                          _torch_lenet(), (64, 1, 28, 28), 10, target=1.05, repeat=5, min_time=0.3)


def _mlp_step(**flags):
    gen = torch.Generator().manual_seed(0)
    x = mx.nd.NDArray(torch.randn((32, 100), generator=gen))
    y = mx.nd.NDArray(torch.randint(0, 10, (32,), generator=gen).float())
    step = neomx_train_step(_hybridized(_mlp(), **flags), x, y)
    step()                                  # compiles
    return step


def _compare_neomx(name, variant, baseline, target, note, **kw):
    """Like ``common.compare`` for two neomx functions (no torch grad mode around either):
    ``variant`` in the neomx column, ``baseline`` in the torch column."""
    a, b = [], []
    for _ in range(3):
        a.append(best_time(variant, **kw))
        b.append(best_time(baseline, **kw))
    return Result(name, min(a), min(b), target, note)


def bench_inductor_mlp():
    return _compare_neomx("MLP training step: backend='inductor' vs default backend",
                          _mlp_step(backend='inductor'), _mlp_step(), target=1.0,
                          note="neomx column: backend='inductor', torch column: default backend "
                               "(both neomx); ratio < 1 is a speed-up")


# ----------------------------------------------------------------- mirroring
def _deep_mlp(layers):
    return _hybrid_sequential(*[gluon.nn.Dense(256, activation='relu') for _ in range(layers)])


def _deep_mlp_pass(mirror, layers=100, batch=256):
    """One forward+backward pass of the deep MLP, hybridized with ``mirror``: a function to time."""
    mx.random.seed(0)
    net = _hybridized(_deep_mlp(layers), mirror=mirror)
    net.initialize(mx.init.Xavier())
    x = mx.nd.NDArray(torch.randn((batch, 256), generator=torch.Generator().manual_seed(0)))

    def run():
        with autograd.record():
            y = net(x).sum()
        y.backward()
    run()
    return run


def _read_status(field):
    with open('/proc/self/status') as status:
        for line in status:
            if line.startswith(field + ':'):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def peak_pass_bytes(mirror):
    """Rise of the peak resident size during one pass of the deep MLP (see the module doc);
    run in a child process whose allocator follows the live tensors."""
    run = _deep_mlp_pass(mirror)
    with open('/proc/self/clear_refs', 'w') as refs:
        refs.write('5')                     # resets VmHWM to the current resident size
    start = _read_status('VmRSS')
    run()
    return _read_status('VmHWM') - start


def _child_peak_bytes(mirror):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_='65536', MALLOC_TRIM_THRESHOLD_='0',
               OMP_NUM_THREADS=str(torch.get_num_threads()))
    code = ('import sys; sys.path.insert(0, %r); from benchmarks import bench_hybridize as b; '
            'print(b.peak_pass_bytes(%r))' % (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), mirror))
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def bench_mirror_memory():
    if not os.path.exists('/proc/self/clear_refs'):
        return Result('mirroring, 100-layer MLP: peak activation memory (skipped: needs Linux)',
                      1.0, 1.0, 1 / 3, note='skipped')
    mirrored = min(_child_peak_bytes(True) for _ in range(2))
    stored = min(_child_peak_bytes(False) for _ in range(2))
    # The columns hold megabytes scaled to read as "us" in the table.
    return Result('mirroring, 100-layer MLP 256 wide, batch 256: peak activation memory',
                  mirrored / 1e12, stored / 1e12, target=1 / 3,
                  note='columns: peak MB during forward+backward (not us), mirror=True vs False; '
                       'VmHWM rise, see the module doc')


def bench_mirror_time():
    return _compare_neomx('mirroring, 100-layer MLP 256 wide, batch 256: forward+backward time',
                          _deep_mlp_pass(True), _deep_mlp_pass(False), target=1.4,
                          note='neomx column: mirror=True, torch column: mirror=False (both neomx)',
                          repeat=3, min_time=0.5)


# ----------------------------------------------------------------- inference
_MXNET_RESNET = '''
import sys, time
import mxnet as mx
batch, rounds = int(sys.argv[1]), int(sys.argv[2])
net = mx.gluon.model_zoo.vision.resnet18_v1()
net.initialize(mx.init.Xavier())
net.hybridize(static_alloc=True, static_shape=True)
x = mx.nd.random.normal(shape=(batch, 3, 224, 224))
net(x).wait_to_read()
best = float('inf')
for _ in range(rounds):
    t0 = time.perf_counter()
    net(x).wait_to_read()
    best = min(best, time.perf_counter() - t0)
print(best)
'''


def _mxnet_resnet_seconds(batch, rounds):
    env = dict(os.environ, OMP_NUM_THREADS=str(torch.get_num_threads()))
    out = subprocess.run([MXNET_PYTHON, '-c', _MXNET_RESNET, str(batch), str(rounds)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def _neomx_resnet_seconds(batch, rounds, **flags):
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize(**flags)
    x = mx.nd.NDArray(torch.randn((batch, 3, 224, 224), generator=torch.Generator().manual_seed(0)))
    net(x).wait_to_read()                   # traces and compiles
    best = float('inf')
    for _ in range(rounds):
        t0 = time.perf_counter()
        net(x).wait_to_read()
        best = min(best, time.perf_counter() - t0)
    return best


def _resnet_row(batch, backend):
    name = 'ResNet-18 v1 inference, batch %d, %s backend vs MXNet 1.9.1' % (batch, backend or 'default')
    if not os.path.exists(MXNET_PYTHON):
        return Result(name + ' (skipped: no ~/mxref)', 1.0, 1.0, 1 / 0.9, note='skipped')
    rounds = 10 if batch == 1 else 3
    mxnet_s = _mxnet_resnet_seconds(batch, rounds)
    neomx_s = _neomx_resnet_seconds(batch, rounds, backend=backend, static_alloc=True, static_shape=True)
    mxnet_s = min(mxnet_s, _mxnet_resnet_seconds(batch, rounds))
    return Result(name, neomx_s, mxnet_s, target=1 / 0.9,
                  note='torch column: MXNet 1.9.1 hybridized (oracle subprocess, same threads), per '
                       'batch; target: >= 0.9x its images/s')


def bench_resnet18_batch1():
    return _resnet_row(1, None)


def bench_resnet18_batch1_inductor():
    return _resnet_row(1, 'inductor')


def bench_resnet18_batch32():
    return _resnet_row(32, None)


def bench_resnet18_batch32_inductor():
    return _resnet_row(32, 'inductor')


BENCHMARKS = [bench_mlp_step, bench_lenet_step, bench_inductor_mlp, bench_mirror_memory,
              bench_mirror_time, bench_resnet18_batch1, bench_resnet18_batch1_inductor,
              bench_resnet18_batch32, bench_resnet18_batch32_inductor]
