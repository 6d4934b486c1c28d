"""Instructions per training step: the NumPy-style models of ``bench_numpy.py`` against the
same models written with ``mx.nd``, under callgrind.

``bench_numpy.py`` times the steps at batch 64, where both sides run the same torch kernels
(the same operators on the same shapes) and the timed ratio moves by several percent with
what else runs on the machine. This script counts the instructions each step executes
instead, at a small batch (2) where the Python around the kernels is a larger part of the
step, so what the NumPy-style path adds per layer call shows, and does not depend on
the machine's load. As in ``ir_calls.py``, one interpreter per model runs under callgrind
with counting off and counts ``N`` steps of each side after warm-up steps.

    python benchmarks/ir_steps.py               # LeNet and the MLP, eager and hybridized
    python benchmarks/ir_steps.py lenet-eager   # selected ones

Needs ``valgrind`` (with ``callgrind_control``) on the PATH; a few minutes per model.
"""
import os
import sys

from ir_calls import run_counted

HERE = os.path.dirname(os.path.abspath(__file__))
N = 3           # steps per count
BATCH = 2
CASES = {'lenet-eager': ('_NumpyLeNet', '_legacy_lenet', (BATCH, 1, 28, 28), False),
         'lenet-hybridized': ('_NumpyLeNet', '_legacy_lenet', (BATCH, 1, 28, 28), True),
         'mlp-eager': ('_mlp', '_mlp', (BATCH, 784), False),
         'mlp-hybridized': ('_mlp', '_mlp', (BATCH, 784), True)}

# run inside callgrind: per case, warm both steps, then count N steps of each between signals
_CHILD = r'''
import gc, os, subprocess, sys
sys.path.insert(0, {here!r})
import torch
torch.set_num_threads(1)
import bench_numpy
for name, (numpy_net, legacy_net, shape, hybrid) in {cases!r}.items():
    steps = [bench_numpy._step(getattr(bench_numpy, numpy_net), shape, True, hybrid),
             bench_numpy._step(getattr(bench_numpy, legacy_net), shape, False, hybrid)]
    for step in steps:      # NumPy style, then mx.nd
        count(name, step, {n}, warm=3)
'''


def measure(wanted=()):
    """{case: (NumPy-style instructions per step, mx.nd instructions per step)}."""
    cases = {k: v for k, v in CASES.items() if not wanted or k in wanted}
    # the first dump of a case is the NumPy-style step's
    counts = run_counted(_CHILD.format(here=HERE, cases=cases, n=N), 'ir_steps_')
    return {c: (counts[(c, 'neomx')] / N, counts[(c, 'torch')] / N) for c in cases
            if (c, 'neomx') in counts and (c, 'torch') in counts}


if __name__ == '__main__':
    print('%-18s %14s %14s  %s' % ('step, batch %d' % BATCH, 'NumPy style', 'mx.nd', 'ratio'))
    for name, (numpy_style, legacy) in measure(sys.argv[1:]).items():
        print('%-18s %14.0f %14.0f  %5.3f' % (name, numpy_style, legacy, numpy_style / legacy))
