"""Mixed precision (``mx.contrib.amp``) against float32, and against MXNet 1.9.1's own bf16 AMP.

Rows (each figure the first time divided by the second, lower is better):

* hybridized training steps, ``amp.init('bfloat16')`` vs float32: LeNet (batch 64) and
  ResNet-18 for CIFAR (batch 32), the workloads of ``train_workloads.py``; target 0.5;
* ResNet-50 v1 inference, batch 32 of 224x224, bf16 (``convert_hybrid_block``, MXNet's way to
  convert a model for inference) vs float32; target 0.4 (2.5x throughput);
* each bf16 workload, neomx vs MXNet 1.9.1 with its bf16 AMP (``~/mxref``, oneDNN) where it runs.

``amp.init`` changes the process for good, so every measurement runs in a fresh interpreter:

    python benchmarks/bench_amp.py                            # all rows
    python benchmarks/bench_amp.py worker neomx lenet bf16 10  # one measurement: seconds per step
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

MXREF = os.path.expanduser('~/mxref/bin/python')
_NOTE = 'bf16 / float32, each in a fresh interpreter'


def _inference_step(mx, shape=(32, 3, 224, 224), amp=None):
    """ResNet-50 inference; with ``amp``, converted as MXNet converts models for bf16
    inference (``convert_hybrid_block`` with ``cast_optional_params``: bf16 filters)."""
    net = mx.gluon.model_zoo.vision.resnet50_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.random.uniform(shape=shape)
    if amp is not None:
        net(x)
        net = amp.convert_hybrid_block(net, target_dtype='bfloat16', ctx=mx.cpu(), cast_optional_params=True)
        net.hybridize(static_alloc=True, static_shape=True)

    def step():
        net(x).wait_to_read()
    return step


def worker(framework, workload, precision, steps):
    """Seconds per step of one workload, in this interpreter."""
    import train_workloads
    from importlib import import_module
    mx = __import__(framework)
    amp = import_module(framework + '.contrib.amp') if precision == 'bf16' else None
    if workload == 'resnet50-inference':
        step = _inference_step(mx, amp=amp)
    else:
        if amp is not None:
            amp.init('bfloat16')
        step = train_workloads.train_step(mx, workload, hybrid=True)
    return train_workloads.seconds_per_step(mx, step, steps, rounds=3)


def _measure(framework, workload, precision, steps):
    python = MXREF if framework == 'mxnet' else sys.executable
    out = subprocess.run([python, os.path.abspath(__file__), 'worker', framework, workload, precision, str(steps)],
                         capture_output=True, text=True, timeout=1800, check=False)
    lines = out.stdout.strip().splitlines()
    if out.returncode or not lines:
        return None
    return float(lines[-1])


_WORKLOADS = [('lenet', 'LeNet training step, batch 64', 20, 0.5),
              ('resnet', 'ResNet-18-CIFAR training step, batch 32', 5, 0.5),
              ('resnet50-inference', 'ResNet-50 inference, batch 32 224x224', 2, 0.4)]


def _rows(workload, title, steps, target):
    from common import Result      # imports torch: not in the workers (MXNet's has none)
    bf16 = _measure('neomx', workload, 'bf16', steps)
    fp32 = _measure('neomx', workload, 'fp32', steps)
    rows = [Result('amp bf16 vs float32: ' + title, bf16 or float('nan'), fp32 or float('nan'), target, note=_NOTE)]
    if os.path.exists(MXREF):
        mxnet_bf16 = _measure('mxnet', workload, 'bf16', steps)
        if mxnet_bf16 is not None:
            rows.append(Result('amp bf16, neomx vs MXNet 1.9.1 bf16 AMP: ' + title, bf16 or float('nan'),
                               mxnet_bf16, 1.0, note='neomx bf16 / MXNet bf16'))
    return rows


def _bench(workload, title, steps, target):
    def bench():
        return _rows(workload, title, steps, target)
    bench.__name__ = 'bench_amp_' + workload.replace('-', '_')
    return bench


BENCHMARKS = [_bench(*w) for w in _WORKLOADS]


if __name__ == '__main__':
    if sys.argv[1:2] == ['worker']:
        print(worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
    else:
        for bench in BENCHMARKS:
            for row in bench():
                print('%-75s %8.4fs %8.4fs  ratio %.2f (target %.2f)'
                      % (row.name, row.neomx_s, row.torch_s, row.neomx_s / row.torch_s, row.target))
