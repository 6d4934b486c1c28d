"""``dist_sync`` push+pull against one raw ``torch.distributed.all_reduce`` of the same bytes.

Two worker processes on 127.0.0.1 (gloo). neomx: ``kv.push`` of ResNet-50's 161 gradient
arrays (25.6M float32 values) then ``kv.pull`` into 161 arrays; torch: one ``all_reduce`` of a
flat buffer of 25.6M float32 values. Each worker alternates the two for a fixed number of
rounds (collectives need both workers to make the same calls), and the median round of
each counts (the best is too noisy on a shared machine); each worker runs one torch thread.
``python benchmarks/bench_kvstore_dist.py`` prints the comparison alone.
"""
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.bench_optimizer import resnet50_shapes  # noqa: E402
from benchmarks.common import Result  # noqa: E402

ROUNDS = 30


def _worker():
    import torch
    import torch.distributed as dist
    import neomx as mx
    torch.set_num_threads(1)       # two workers share the machine's cores
    kv = mx.kv.create('dist_sync')
    shapes = resnet50_shapes()
    keys = list(range(len(shapes)))
    grads = [mx.nd.ones(s) for s in shapes]
    outs = [mx.nd.zeros(s) for s in shapes]
    kv.init(keys, [mx.nd.zeros(s) for s in shapes])
    flat = torch.ones(sum(g.size for g in grads))
    neo, raw = [], []
    for _ in range(ROUNDS + 1):          # the first round warms up
        kv._barrier()
        t0 = time.perf_counter()
        kv.push(keys, grads)
        kv.pull(keys, out=outs)
        neo.append(time.perf_counter() - t0)
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(flat)
        raw.append(time.perf_counter() - t0)
    assert (outs[0].asnumpy() == 2).all()
    if kv.rank == 0:
        print('TIMES %r %r %d' % (statistics.median(neo[1:]), statistics.median(raw[1:]), flat.numel()), flush=True)


def bench_dist_sync_push_pull():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE='2', MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port),
                   PYTHONPATH=root + os.pathsep + os.environ.get('PYTHONPATH', ''))
        procs.append(subprocess.Popen(['timeout', '600', sys.executable, os.path.abspath(__file__), '--worker'],
                                      env=env, stdout=subprocess.PIPE, text=True))
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError('benchmark workers failed: %s' % [p.returncode for p in procs])
    line = [ln for ln in outs[0].splitlines() if ln.startswith('TIMES')][0]
    neo, raw, count = line.split()[1:]
    return Result('kvstore dist_sync push+pull, ResNet-50 gradients (161 arrays, %.1fM f32), 2 workers'
                  % (int(count) / 1e6), float(neo), float(raw), 1.2,
                  'one torch.distributed.all_reduce of a flat buffer of the same size (gloo, 127.0.0.1); medians of 30 '
                  'rounds; bucketed allreduces in flight together can beat one big one')


BENCHMARKS = [bench_dist_sync_push_pull]

if __name__ == '__main__':
    if '--worker' in sys.argv:
        _worker()
    else:
        r = bench_dist_sync_push_pull()
        print('%s: neomx %.1f ms, torch %.1f ms, ratio %.2f (target <= %.2f)'
              % (r.name, r.neomx_s * 1e3, r.torch_s * 1e3, r.ratio, r.target))
