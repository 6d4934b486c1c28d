"""On a CUDA GPU: training steps, an element-wise call and the device store against raw torch.

Every row names the card. Each timed round ends with ``torch.cuda.synchronize()``, so a
figure is the time the GPU work of a call takes to finish, not the time to queue it.

* LeNet (batch 64) and the MLP (64-64-10, batch 32) training steps of ``bench_gluon``:
  Gluon eager, hybridized, and hybridized with ``static_alloc=True, static_shape=True``
  (CUDA-graph replay), against the same ``torch.nn`` model with ``torch.optim.SGD``.
* ``a + b`` on 10x10 arrays.
* The ``device`` store: 20 keys of 1M float32 pushed as 4 copies and pulled to 4 arrays,
  against the same sums and copies in torch.
* ``dist_device_sync`` push+pull of ResNet-50's parameters (161 arrays, 25.6M float32) by 2
  workers (``python -m neomx.launch -n 2``) whose arrays sit on the GPUs, against one
  ``torch.distributed.all_reduce`` of a flat CUDA buffer of the same bytes in the same
  process group (NCCL with a GPU a worker; gloo when both share one GPU).

On a machine without a GPU the module has no rows.
"""
import gc
import json
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import neomx as mx  # noqa: E402
from benchmarks.bench_gluon import _lenet, _mlp, _torch_lenet, _torch_mlp, neomx_train_step, torch_train_step  # noqa: E402
from benchmarks.bench_hybridize import _lenet as _hybrid_lenet, _mlp as _hybrid_mlp  # noqa: E402
from benchmarks.bench_kvstore import push_pull_steps  # noqa: E402
from benchmarks.common import Result  # noqa: E402


def _card():
    return torch.cuda.get_device_name(0)


def gpu_time(fn, rounds=5, min_time=0.2):
    """Seconds per call of ``fn`` with the GPU's work finished: best of ``rounds``."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    n, dt = 1, 0.0
    while dt < min_time / 4 and n < 1 << 20:
        n *= 4
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    n = max(1, int(n * min_time / dt))
    best = float('inf')
    gc.disable()
    try:
        for _ in range(rounds):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    return best


def gpu_compare(name, neomx_fn, torch_fn, target, note):
    """Interleaved rounds of both; the best of each."""
    a, b = [], []
    for _ in range(3):
        a.append(gpu_time(neomx_fn))
        with torch.enable_grad():
            b.append(gpu_time(torch_fn))
    return Result('%s [%s]' % (name, _card()), min(a), min(b), target, note)


def _step_pair(net, model, x_shape, classes):
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(x_shape, generator=gen), torch.randint(0, classes, (x_shape[0],), generator=gen)
    gpu = mx.gpu(0)
    with gpu:
        step = neomx_train_step(net, mx.nd.array(x.numpy(), ctx=gpu), mx.nd.array(y.float().numpy(), ctx=gpu))
    return step, torch_train_step(model.cuda(), x.cuda(), y.cuda())


def _training_rows(what, eager, hybrid, torch_model, x_shape, target):
    rows = []
    note = 'torch.nn + torch.optim.SGD(foreach=True), same layers, on the same GPU'
    variants = [('Gluon eager', eager(), None), ('hybridized', hybrid(), {}),
                ('hybridized static_alloc+static_shape (CUDA graphs)', hybrid(),
                 {'static_alloc': True, 'static_shape': True})]
    for label, net, flags in variants:     # flags: hybridize's, None for the eager net
        if flags is not None:
            net.hybridize(**flags)
        step, torch_step = _step_pair(net, torch_model(), x_shape, 10)
        rows.append(gpu_compare('GPU %s training step, %s' % (what, label), step, torch_step, target, note))
    return rows


def bench_lenet_steps():
    return _training_rows('LeNet b64', _lenet, _hybrid_lenet, _torch_lenet, (64, 1, 28, 28), 1.15)


def bench_mlp_steps():
    return _training_rows('MLP 64-64-10 b32', _mlp, _hybrid_mlp, lambda: _torch_mlp(100), (32, 100), 1.3)


def bench_add():
    a, b = mx.nd.ones((10, 10), ctx=mx.gpu(0)), mx.nd.ones((10, 10), ctx=mx.gpu(0))
    ta, tb = a._t, b._t
    return gpu_compare('GPU a + b, 10x10 float32', lambda: a + b, lambda: ta + tb, 1.5, 'torch.add on the same tensors')


def bench_device_store():
    neomx_step, torch_step = push_pull_steps('device', [mx.gpu(0)] * 4)
    return gpu_compare('GPU kvstore device push+pull (20 keys x 1M f32, 4 copies)', neomx_step, torch_step, 1.3,
                       'sums and copies in plain torch on the same GPU')


def worker_dist_push_pull():
    import torch.distributed as dist
    from benchmarks.bench_optimizer import resnet50_shapes
    shapes = resnet50_shapes()
    keys = list(range(len(shapes)))
    kv = mx.kv.create('dist_device_sync')
    gpu = mx.gpu(kv.rank % mx.context.num_gpus())
    torch.cuda.set_device(gpu.device_id)
    kv.init(keys, [mx.nd.zeros(s, gpu) for s in shapes])
    grads, outs = [mx.nd.ones(s, gpu) for s in shapes], [mx.nd.zeros(s, gpu) for s in shapes]
    flat = torch.ones(sum(int(torch.Size(s).numel()) for s in shapes), device=gpu.torch_device)

    def neomx_side():
        kv.push(keys, grads)
        kv.pull(keys, out=outs)

    def torch_side():
        dist.all_reduce(flat)
    best = [float('inf')] * 2
    for _ in range(8):
        for i, side in enumerate((neomx_side, torch_side)):
            side()
            torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(3):
                side()
            torch.cuda.synchronize()
            best[i] = min(best[i], (time.perf_counter() - t0) / 3)
    assert outs[0].asnumpy().flat[0] == kv.num_workers
    if kv.rank == 0:
        print('bench_gpu result ' + json.dumps(best + [dist.get_backend()]), flush=True)


def bench_dist_push_pull():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, '-m', 'neomx.launch', '-n', '2', sys.executable,
                           os.path.abspath(__file__), '--worker'], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=root), timeout=600, cwd=root)
    lines = [l for l in (proc.stdout + proc.stderr).splitlines() if l.startswith('bench_gpu result ')]
    if not lines:
        raise RuntimeError('bench_gpu dist workers printed no result:\n' + (proc.stdout + proc.stderr)[-3000:])
    neomx_s, torch_s, backend = json.loads(lines[0][len('bench_gpu result '):])
    gpus = min(2, mx.context.num_gpus())
    return Result('GPU dist_device_sync push+pull, ResNet-50 parameters (25.6M f32), 2 workers on %d GPU(s) [%s]'
                  % (gpus, _card()), neomx_s, torch_s, 1.2,
                  'torch column: one torch.distributed.all_reduce (%s) of a flat CUDA buffer of the same bytes'
                  % backend)


if __name__ == '__main__' and sys.argv[1:2] == ['--worker']:
    worker_dist_push_pull()

BENCHMARKS = [bench_lenet_steps, bench_mlp_steps, bench_add, bench_device_store,
              bench_dist_push_pull] if mx.context.num_gpus() else []
