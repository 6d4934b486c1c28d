"""The ceiling for ``bench_amp``: the same training steps in plain torch, float32 against bfloat16.

LeNet (batch 64) and ResNet-18 v1 for 10 classes on 32x32 inputs (batch 32: the model zoo's
ImageNet stem, as ``train_workloads.resnet`` builds it), one SGD step each, in these variants:

* ``fp32``: float32 throughout;
* ``autocast``: ``torch.autocast('cpu', dtype=torch.bfloat16)`` around forward and loss;
* ``bf16w``: bfloat16 copies of the weights used by forward and backward, float32 master
  weights updated by SGD and copied into the bfloat16 ones after the step (MXNet's
  multi-precision); BatchNorm's parameters stay float32 (as MXNet's bf16 lists keep them);

each also with ``-cl``: weights and inputs in ``torch.channels_last``. The variants take turns
(rounds of a few steps each), with host memory pooled as neomx pools it, so a busy machine
slows them alike; the table gives the median wall and process-CPU milliseconds per step and
the ratio to float32 of the same layout. ``amp_cpu_time.py`` measures neomx's own steps so.

    python benchmarks/amp_ceiling_torch.py [lenet|resnet] [rounds] [--threads N] [--profile VARIANT]

On a shared machine use ``--threads 1``: with two threads a descheduled one stalls every
parallel region and the figures say more about the neighbours than about the kernels.
"""
import statistics
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F


def lenet():
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                         nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                         nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


def resnet18(classes=10):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


WORKLOADS = {'lenet': (lenet, (64, 1, 28, 28), dict(lr=0.1)),
             'resnet': (resnet18, (32, 3, 32, 32), dict(lr=0.1, momentum=0.9))}


def make_step(workload, variant):
    """A function running one training step of ``workload`` in ``variant``."""
    build, shape, sgd = WORKLOADS[workload]
    torch.manual_seed(0)
    model = build()
    channels_last = variant.endswith('-cl')
    kind = variant[:-3] if channels_last else variant
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    x = torch.randn(shape).contiguous(memory_format=fmt)
    y = torch.arange(shape[0]) % 10
    opt = torch.optim.SGD(model.parameters(), **sgd)

    if kind in ('fp32', 'autocast'):
        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast('cpu', dtype=torch.bfloat16, enabled=kind == 'autocast'):
                out = model(x)
            F.cross_entropy(out.float(), y).backward()
            opt.step()
        return step

    assert kind == 'bf16w', variant
    # The bfloat16 model: convolutions and dense layers hold bfloat16 copies of the float32
    # master weights; BatchNorm keeps float32 parameters (run on bfloat16 data by oneDNN).
    low = build().to(memory_format=fmt)
    low.load_state_dict(model.state_dict())
    pairs = []
    for m_low, m in zip(low.modules(), model.modules()):
        if isinstance(m_low, (nn.Conv2d, nn.Linear)):
            for name, p in m_low.named_parameters(recurse=False):
                new = p.detach().to(torch.bfloat16).contiguous(memory_format=fmt if p.dim() == 4
                                                                else torch.contiguous_format)
                setattr(m_low, name, nn.Parameter(new))
                pairs.append((getattr(m_low, name), getattr(m, name)))
        elif isinstance(m_low, nn.BatchNorm2d):
            for name, p in m_low.named_parameters(recurse=False):
                pairs.append((p, getattr(m, name)))
    xb = x.to(torch.bfloat16)

    def step():
        for p_low, _ in pairs:
            p_low.grad = None
        out = low(xb)
        F.cross_entropy(out.float(), y).backward()
        for p_low, p in pairs:
            p.grad = p_low.grad.float() if p_low.grad.dtype != torch.float32 else p_low.grad
        opt.step()
        with torch.no_grad():
            for p_low, p in pairs:
                p_low.copy_(p)
    return step


def measure(workload, variants, rounds, steps):
    steps_fn = {v: make_step(workload, v) for v in variants}
    for fn in steps_fn.values():
        for _ in range(3):
            fn()
    wall = {v: [] for v in variants}
    cpu = {v: [] for v in variants}
    for _ in range(rounds):
        for v, fn in steps_fn.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(steps):
                fn()
            wall[v].append((time.perf_counter() - t0) / steps * 1e3)
            cpu[v].append((time.process_time() - c0) / steps * 1e3)
    return {v: (statistics.median(wall[v]), statistics.median(cpu[v])) for v in variants}


VARIANTS = ['fp32', 'autocast', 'bf16w', 'fp32-cl', 'autocast-cl', 'bf16w-cl']


def pool_host_memory():
    """What neomx does at import (``neomx._memory``): glibc keeps freed blocks for reuse instead
    of unmapping them, so big activations do not page-fault on every step."""
    import ctypes
    mallopt = ctypes.CDLL(None).mallopt
    mallopt(-4, 0)              # M_MMAP_MAX: large blocks from the heap
    mallopt(-1, 2 ** 31 - 1)    # M_TRIM_THRESHOLD: never give the heap's top back


def main(argv):
    pool_host_memory()
    threads = 2
    if '--threads' in argv:
        i = argv.index('--threads')
        threads = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    workload = argv[0] if argv else 'lenet'
    if '--profile' in argv:
        variant = argv[argv.index('--profile') + 1]
        step = make_step(workload, variant)
        for _ in range(3):
            step()
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(5):
                step()
        print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=25))
        return
    rounds = int(argv[1]) if len(argv) > 1 else 7
    steps = {'lenet': 10, 'resnet': 3}[workload]
    result = measure(workload, VARIANTS, rounds, steps)
    print('%s, %d threads, median of %d rounds of %d steps (ms per step)' % (workload, threads, rounds, steps))
    print('%-12s %9s %9s %7s %7s' % ('variant', 'wall', 'cpu', 'wall/fp32', 'cpu/fp32'))
    for v in VARIANTS:
        base = result['fp32-cl' if v.endswith('-cl') else 'fp32']
        print('%-12s %9.2f %9.2f %7.2f %7.2f' % (v, result[v][0], result[v][1], result[v][0] / base[0],
                                                result[v][1] / base[1]))


if __name__ == '__main__':
    main(sys.argv[1:])
