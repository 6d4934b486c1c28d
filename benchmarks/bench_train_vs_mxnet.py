"""Conv-net training against MXNet 1.9.1 (its pip wheel, oneDNN), measured in the same run.

    python benchmarks/bench_train_vs_mxnet.py --threads 2     # prints RESULTS.md rows (--write: writes them)
    python benchmarks/run.py bench_train_vs_mxnet             # with the process's threads

* Training steps (``autograd.record``, forward, SoftmaxCrossEntropyLoss, backward,
  ``Trainer.step``) of the seed's LeNet at batch 64 (SGD, lr 0.1) and of ResNet-18 v1
  (``model_zoo.vision.resnet18_v1(classes=10)``) on 3x32x32 images at batch 32 (SGD, lr 0.1,
  momentum 0.9): hybridized with ``static_alloc=True, static_shape=True`` (default
  backend), and eager (LeNet as a Sequential, ResNet's HybridBlocks not hybridized).
* One epoch of ``examples/train_mnist.py`` (LeNet, batch 64, eager as the script runs by
  default): the script itself for neomx, the same loop written for MXNet (the same MNIST
  files, batching, loss and per-batch ``asscalar``), training time only; both print the
  test accuracy after the epoch (in the note).

The workloads are written once for both frameworks (``train_workloads.py``). MXNet runs
them in subprocesses of this run, started by the oracle interpreter ``~/mxref/bin/python``
with ``OMP_NUM_THREADS`` = this process's torch threads (rows are skipped with a note where
it is absent). Each MXNet step figure is the faster of a run
before and a run after neomx's measurement; its time goes in the ``torch`` column. Times
per step are the best of several rounds (MXNet: ``waitall`` after each round).
"""
import argparse
import json
import os
import re
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import neomx as mx  # noqa: E402
from benchmarks.common import Result, best_time  # noqa: E402
from benchmarks.train_workloads import train_step  # noqa: E402

MXNET_PYTHON = os.path.expanduser('~/mxref/bin/python')
_NOTE = 'torch column: MXNet 1.9.1 (oracle subprocess, same threads), per step'

def _mxnet(*args):
    """What ``train_workloads.py`` prints run by MXNet 1.9.1 with this process's threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(torch.get_num_threads()))
    out = subprocess.run([MXNET_PYTHON, os.path.join(ROOT, 'benchmarks', 'train_workloads.py')]
                         + [str(a) for a in args], env=env, capture_output=True, text=True, check=True,
                         timeout=900, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _threads():
    threads = torch.get_num_threads()
    return '%d thread%s' % (threads, '' if threads == 1 else 's')


def _step_row(label, workload, hybrid, steps, target):
    name = '%s, %s vs MXNet 1.9.1, %s' % (label, 'hybridized' if hybrid else 'eager', _threads())
    if not os.path.exists(MXNET_PYTHON):
        return Result(name + ' (skipped: no ~/mxref)', 1.0, 1.0, target, note='skipped')
    mxnet_s = _mxnet('step', workload, int(hybrid), steps)
    neomx_s = best_time(train_step(mx, workload, hybrid), repeat=5, min_time=steps * 0.01)
    mxnet_s = min(mxnet_s, _mxnet('step', workload, int(hybrid), steps))
    return Result(name, neomx_s, mxnet_s, target, note=_NOTE)


def bench_lenet_hybridized():
    return _step_row('LeNet training step, batch 64', 'lenet', True, 20, target=0.9)


def bench_lenet_eager():
    return _step_row('LeNet training step, batch 64', 'lenet', False, 20, target=1.0)


def bench_resnet18_hybridized():
    return _step_row('ResNet-18 v1 (classes=10) training step, 3x32x32, batch 32', 'resnet', True, 4,
                     target=0.9)


def bench_resnet18_eager():
    return _step_row('ResNet-18 v1 (classes=10) training step, 3x32x32, batch 32', 'resnet', False, 4,
                     target=1.0)


def _neomx_mnist_epoch():
    """(training seconds, test accuracy) of one epoch of examples/train_mnist.py."""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS=str(torch.get_num_threads()))
    out = subprocess.run([sys.executable, os.path.join(ROOT, 'examples', 'train_mnist.py'), '--epochs', '1',
                          '--no-progress'], env=env, capture_output=True, text=True, check=True, timeout=900)
    found = re.search(r'Test_acc ([0-9.]+) \(([0-9.]+) s training', out.stdout)
    return float(found.group(2)), float(found.group(1))


def bench_mnist_epoch():
    name = 'examples/train_mnist.py epoch (LeNet, batch 64, eager) vs MXNet 1.9.1, %s' % _threads()
    if not os.path.exists(MXNET_PYTHON):
        return Result(name + ' (skipped: no ~/mxref)', 1.0, 1.0, 0.9, note='skipped')
    mxnet_s, mxnet_acc = _mxnet('mnist-epoch', os.path.join(ROOT, 'data', 'mnist'))
    neomx_s, neomx_acc = _neomx_mnist_epoch()
    return Result(name, neomx_s, mxnet_s, 0.9,
                  note='torch column: the same loop on MXNet 1.9.1 (oracle subprocess, same threads), '
                       'training time of one epoch; test accuracy after it: neomx %.4f, MXNet %.4f'
                       % (neomx_acc, mxnet_acc))


BENCHMARKS = [bench_lenet_hybridized, bench_lenet_eager, bench_resnet18_hybridized, bench_resnet18_eager,
              bench_mnist_epoch]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--threads', type=int, default=None, help='torch and MXNet threads (default: torch\'s)')
    parser.add_argument('--write', action='store_true', help='also write the rows into RESULTS.md')
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)     # a benchmark run's own setting
    from benchmarks import run
    rows = []
    for bench in BENCHMARKS:
        res = bench()
        rows.append(('bench_train_vs_mxnet', res))
        print('| bench_train_vs_mxnet | %s | %.2f | %.2f | %.2f | <= %.2f | %s | %s |'
              % (res.name, res.neomx_s * 1e6, res.torch_s * 1e6, res.ratio, res.target,
                 'yes' if res.ok else '**no**', res.note), flush=True)
    if args.write:
        run._write(rows, {'bench_train_vs_mxnet'}, partial=True)


if __name__ == '__main__':
    main()
