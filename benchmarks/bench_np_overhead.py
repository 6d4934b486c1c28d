"""Per-call overhead of ``mx.np`` functions: against their own torch call, and against MXNet 1.9.1.

* Against torch: each case is an ``mx.np`` call on small arrays (a few dozen values) and the
  registry implementation it reaches (``spec.impl``) called on the same tensors with the same
  attributes: the ratio is what the ``mx.np`` frontend adds (argument handling, the scalar
  forms, ndarray wrapping); target 1.5x. Rounds of the two alternate; the best round of each
  counts, in thread CPU time (``time.thread_time``), as ``bench_op_overhead.py`` does for
  ``mx.nd``.
* Against MXNet 1.9.1: the same ``mx.np`` calls (the same source text) timed by the oracle
  interpreter ``~/mxref/bin/python`` in a subprocess and by neomx in this one, each round of
  calls followed by ``waitall()`` (MXNet's engine runs the work on its own threads, so the wall
  clock of the calls and the wait counts on both sides), one compute thread each; the rows
  compare the geometric means of the per-call times, and the call where neomx is least
  ahead; target: at least 3x faster (ratio <= 0.33).

``python benchmarks/bench_np_overhead.py`` prints every case; ``benchmarks/run.py`` takes
``BENCHMARKS`` (run on a quiet machine).
"""
import gc
import json
import math
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Result  # noqa: E402

import neomx as mx  # noqa: E402
from neomx.operator import registry  # noqa: E402

TARGET = 1.5
MXNET_TARGET = 1 / 3
ROUNDS = 9
ROUND_S = 1e-3
MXNET_PYTHON = os.path.expanduser('~/mxref/bin/python')

# (label, mx.np call as source, then the torch side: the registry operator, the arrays it
# takes and its attributes, or a torch callable on the tensors of ``a``, ``b``, ``c``); the
# source runs in neomx and in MXNet 1.9.1 alike, with ``np``/``npx`` the modules, ``a``, ``b``
# two (4, 8) float32 arrays of ones, ``c`` a (4, 8) bool array and ``d`` an (8, 4) one. Operators whose result may
# be their input's memory (reshape, transpose) are followed by the copy torch code needs.
CASES = [
    ('add(a, b)', 'np.add(a, b)', '_npi_add', 'ab', {}),
    ('a + b', 'a + b', lambda ta, tb, tc: torch.add(ta, tb)),
    ('a * 2.0', 'a * 2.0', '_npi_multiply_scalar', 'a', {'scalar': 2.0}),
    ('multiply(a, 2.0)', 'np.multiply(a, 2.0)', '_npi_multiply_scalar', 'a', {'scalar': 2.0}),
    ('exp(a)', 'np.exp(a)', '_npi_exp', 'a', {}),
    ('sum(a, axis=1)', 'np.sum(a, axis=1)', '_np_sum', 'a', {'axis': 1}),
    ('mean(a)', 'np.mean(a)', '_npi_mean', 'a', {}),
    ('a.max(axis=0)', 'a.max(axis=0)', '_np_max', 'a', {'axis': 0}),
    ('reshape(a, (8, 4))', 'np.reshape(a, (8, 4))', '_np_reshape', 'a', {'newshape': (8, 4)}),
    ('transpose(a)', 'np.transpose(a)', '_np_transpose', 'a', {}),
    ('concatenate([a, b])', 'np.concatenate([a, b])', '_npi_concatenate', 'ab', {'num_args': 2, 'dim': 0}),
    ('stack([a, b])', 'np.stack([a, b])', '_npi_stack', 'ab', {'num_args': 2, 'axis': 0}),
    ('dot(a, d)', 'np.dot(a, d)', '_np_dot', 'ad', {}),
    ('where(c, a, b)', 'np.where(c, a, b)', '_npi_where', 'cab', {}),
    ('maximum(a, 0.0)', 'np.maximum(a, 0.0)', '_npi_maximum_scalar', 'a', {'scalar': 0.0}),
    ('a > b', 'a > b', '_npi_greater', 'ab', {}),
    ('zeros((4, 8))', 'np.zeros((4, 8))', '_npi_zeros', '', {'shape': (4, 8)}),
    ('ones_like(a)', 'np.ones_like(a)', '_npi_full_like', 'a', {'fill_value': 1}),
    ('arange(32)', 'np.arange(32)', '_npi_arange', '', {'start': 0.0, 'stop': 32.0}),
    ('a[1:3]', 'a[1:3]', lambda ta, tb, tc: ta[1:3]),
    ('npx.relu(a)', 'npx.relu(a)', '_npx_relu', 'a', {}),
    ('npx.softmax(a)', 'npx.softmax(a)', 'softmax', 'a', {}),
]

_SETUP = 'a = np.ones((4, 8)); b = np.ones((4, 8)); c = a > 0; d = np.ones((8, 4))'


def _best(fn):
    """Best thread CPU seconds per call over rounds of about ROUND_S."""
    n = 1
    while True:
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        if time.thread_time() - t0 > ROUND_S or n > 1 << 16:
            break
        n *= 2
    best = float('inf')
    for _ in range(ROUNDS):
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        best = min(best, (time.thread_time() - t0) / n)
    return best


def _namespace():
    names = {'np': mx.np, 'npx': mx.npx}
    exec(_SETUP, names)  # pylint: disable=exec-used
    return names


def _torch_call(case, names):
    """The torch side of ``case`` on the tensors of ``names``' arrays."""
    if callable(case[2]):
        tensors = [names[k]._t for k in 'abc']     # a, b, c
        return lambda: case[2](*tensors)
    op, inputs, kwargs = case[2:]
    spec = registry.get(op)
    attrs = spec.parse_attrs(dict(kwargs))
    if spec.ctx_attrs:
        attrs = dict(attrs, ctx=None)
    tensors = [names[k]._t for k in inputs]
    if not spec.variadic:
        tensors += [None] * (len(spec.inputs) - len(tensors))
    impl = spec.impl
    if spec.nd_impl is not impl:    # may return its input's memory: torch code copies it
        return lambda: impl(*tensors, **attrs).clone()
    return lambda: impl(*tensors, **attrs)


def measure_torch():
    """{label: (mx.np seconds, torch seconds)}, interleaved rounds."""
    names = _namespace()
    times = {}
    gc.disable()
    try:
        for case in CASES:
            label, source = case[:2]
            np_call = eval('lambda: ' + source, names)  # pylint: disable=eval-used
            torch_call = _torch_call(case, names)
            np_call(), torch_call()
            np_t = torch_t = float('inf')
            for _ in range(3):
                np_t = min(np_t, _best(np_call))
                torch_t = min(torch_t, _best(torch_call))
            times[label] = (np_t, torch_t)
    finally:
        gc.enable()
    return times


# The timing loop run in both interpreters: per case, the best of ROUNDS rounds of n calls
# then waitall(), in wall-clock seconds per call; printed as JSON.
_WALL_TIMER = r'''
import gc, json, sys, time
{imports}
cases = json.loads(sys.argv[1])
{setup}
gc.disable()
out = {{}}
for label, source in cases:
    fn = eval('lambda: ' + source)
    fn(); npx.waitall()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        npx.waitall()
        if time.perf_counter() - t0 > 2e-3 or n > 1 << 14:
            break
        n *= 2
    best = float('inf')
    for _ in range({rounds}):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        npx.waitall()
        best = min(best, (time.perf_counter() - t0) / n)
    out[label] = best
print(json.dumps(out))
'''


def _wall_times(python, imports):
    script = _WALL_TIMER.format(imports=imports, setup=_SETUP, rounds=ROUNDS)
    env = dict(os.environ, OMP_NUM_THREADS='1')     # per-call overhead: one compute thread on both sides
    out = subprocess.run([python, '-c', script, json.dumps([case[:2] for case in CASES])],
                         env=env, capture_output=True, text=True, check=True, cwd=os.path.dirname(
                             os.path.dirname(os.path.abspath(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_mxnet():
    """{label: (neomx seconds, MXNet 1.9.1 seconds)}, wall clock with waitall, each side in
    its own interpreter (neomx's twice around MXNet's, best of both)."""
    neomx_imports = 'import neomx as mx\nfrom neomx import np, npx\nnpx.set_np()'
    mxnet_imports = 'import mxnet as mx\nfrom mxnet import np, npx\nnpx.set_np()'
    first = _wall_times(sys.executable, neomx_imports)
    mxnet = _wall_times(MXNET_PYTHON, mxnet_imports)
    second = _wall_times(sys.executable, neomx_imports)
    return {label: (min(first[label], second[label]), mxnet[label]) for label in mxnet}


def bench_np_functions():
    times = measure_torch()
    ratio = {n: a / b for n, (a, b) in times.items()}
    over = sorted((n for n in times if ratio[n] > TARGET), key=ratio.get, reverse=True)
    worst = max(times, key=ratio.get)
    rows = [Result('mx.np functions on small inputs vs their torch call: worst (%s)' % worst,
                   times[worst][0], times[worst][1], TARGET,
                   '%d calls timed, %d over %.1fx' % (len(times), len(over), TARGET))]
    rows += [Result('np.%s, small inputs' % n, times[n][0], times[n][1], TARGET,
                    "torch column: the operator's own implementation") for n in over]
    return rows


def _geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def bench_np_vs_mxnet():
    name = 'mx.np per-call overhead vs MXNet 1.9.1 mx.np (geometric mean of %d calls)' % len(CASES)
    if not os.path.exists(MXNET_PYTHON):
        return Result(name + ' (skipped: no ~/mxref)', 1.0, 1.0, MXNET_TARGET, note='skipped')
    times = measure_mxnet()
    worst = max(times, key=lambda n: times[n][0] / times[n][1])
    note = 'torch column: MXNet 1.9.1 (oracle subprocess, one compute thread each); target: >= 3x faster'
    return [Result(name, _geometric_mean([a for a, _ in times.values()]),
                   _geometric_mean([b for _, b in times.values()]), MXNET_TARGET, note),
            Result('mx.np per-call overhead vs MXNet 1.9.1: least faster (%s)' % worst, times[worst][0],
                   times[worst][1], MXNET_TARGET, note)]


BENCHMARKS = [bench_np_functions, bench_np_vs_mxnet]


def main():
    torch.set_num_threads(1)
    for label, (np_t, torch_t) in measure_torch().items():
        print('%-24s mx.np %7.2f us  torch %7.2f us  ratio %.2f%s' % (
            label, np_t * 1e6, torch_t * 1e6, np_t / torch_t, '' if np_t / torch_t <= TARGET else '  (over)'))
    if os.path.exists(MXNET_PYTHON):
        for label, (ours, theirs) in measure_mxnet().items():
            print('%-24s neomx %7.2f us  MXNet 1.9.1 %7.2f us  %.1fx faster' % (label, ours * 1e6, theirs * 1e6,
                                                                             theirs / ours))


if __name__ == '__main__':
    main()
