"""Per-call overhead of every registry operator: ``mx.nd.<op>(...)`` against its torch call.

For each operator in the registry, a small valid call (``op_cases``: inputs of a few
dozen values) is timed through the generated ``mx.nd`` function and as the operator's
own torch implementation (``spec.impl``) called on the same tensors with the same parsed
attributes; for the operators whose implementation may return its input's memory (a
view: ``reshape``, ``BlockGrad``...), followed by the copy torch code needs to get a new
array, as MXNet's operator (and ``mx.nd``) gives. The ratio is what neomx's frontend adds per call: argument handling,
attribute parsing, autograd bookkeeping and NDArray wrapping. Rounds of the two
alternate and the best round of each counts. Rounds are timed in the thread's CPU time
(``time.thread_time``): the calls take microseconds, and on a shared machine the wall
clock would count the time other processes hold the core.

RESULTS.md gets one summary row (the worst operator's times; the note counts operators
timed, over the target and skipped) and one row per operator over the target.
``python benchmarks/bench_op_overhead.py`` prints every operator's ratio.
"""
import gc
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_cases  # noqa: E402
from common import Result  # noqa: E402

from neomx.base import MXNetError  # noqa: E402
from neomx.context import current_context  # noqa: E402

TARGET = 1.5
ROUNDS = 9
ROUND_S = 1e-3          # each timed round runs the call for about this long


def _calls(name, spec):
    """(nd call, torch call) of the operator's small case, as two thunks."""
    arrays, kwargs = op_cases.case(name, spec)
    nd_fn = op_cases.nd_function(name)
    attr_kwargs = dict(kwargs)
    if isinstance(spec.variadic, str):
        attr_kwargs.setdefault(spec.variadic, len(arrays))
    attrs = spec.parse_attrs(attr_kwargs)
    if spec.ctx_attrs:
        attrs = dict(attrs, ctx=attrs.get('ctx') or current_context())
    tensors = [a._t for a in arrays]
    if not spec.variadic:       # absent optional inputs are passed as None, as mx.nd does
        tensors += [None] * (len(spec.inputs) - len(tensors))
    impl = spec.impl
    if spec.nd_impl is not impl:    # may return its input's memory: torch code copies it
        return (lambda: nd_fn(*arrays, **kwargs)), (lambda: _copied(impl(*tensors, **attrs)))
    return (lambda: nd_fn(*arrays, **kwargs)), (lambda: impl(*tensors, **attrs))


def _copied(res):
    if isinstance(res, torch.Tensor):
        return res.clone()
    return [r.clone() for r in res]


def _round(fn, n):
    t0 = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - t0) / n


def _time_pair(nd_call, torch_call):
    """Best seconds per call of each, over interleaved rounds."""
    nd_call(), torch_call()
    n = 1
    while True:
        dt = _round(torch_call, n) * n
        if dt >= ROUND_S / 4 or n >= 1 << 16:
            break
        n *= 4
    n = max(1, int(n * ROUND_S / max(dt, 1e-9)))
    best_nd = best_torch = float('inf')
    gc.disable()
    try:
        for _ in range(ROUNDS):
            best_nd = min(best_nd, _round(nd_call, n))
            best_torch = min(best_torch, _round(torch_call, n))
    finally:
        gc.enable()
    return best_nd, best_torch


def measure():
    """({name: (nd seconds, torch seconds)}, {name: reason skipped})."""
    times, skipped = {}, {}
    for name, spec in op_cases.all_operators().items():
        if name.startswith(('_np_', '_npi_', '_npx_')):
            skipped[name] = 'an mx.np operator: bench_np_overhead and bench_numpy time it through mx.np'
            continue
        try:
            nd_call, torch_call = _calls(name, spec)
            nd_call()
        except KeyError as err:
            skipped[name] = err.args[0]
            continue
        except (MXNetError, IndexError, ValueError, TypeError, RuntimeError):
            # the generic small case does not fit this operator (square matrices, a
            # subgraph, required attributes): mx.np's are timed by bench_numpy instead
            skipped[name] = 'no generic small case'
            continue
        times[name] = _time_pair(nd_call, torch_call)
    return times, skipped


def bench_registry_operators():
    times, skipped = measure()
    ratio = {n: a / b for n, (a, b) in times.items()}
    over = sorted((n for n in times if ratio[n] > TARGET), key=ratio.get, reverse=True)
    worst = max(times, key=ratio.get)
    note = ('%d operators timed, %d over %.1fx%s; skipped: %s'
            % (len(times), len(over), TARGET, ' (rows below)' if over else '',
               '; '.join('%s: %s' % (reason, ', '.join(sorted(n for n in skipped if skipped[n] == reason)))
                         for reason in sorted(set(skipped.values()))) or 'none'))
    rows = [Result('every registry operator on small inputs: worst (%s)' % worst,
                   times[worst][0], times[worst][1], TARGET, note)]
    for n in over:
        rows.append(Result('nd.%s, small inputs' % n, times[n][0], times[n][1], TARGET,
                           'torch column: the operator\'s own implementation on the same tensors'))
    return rows


BENCHMARKS = [bench_registry_operators]


if __name__ == '__main__':
    torch.set_num_threads(1)
    all_times, all_skipped = measure()
    for op, (a, b) in sorted(all_times.items(), key=lambda kv: kv[1][0] / kv[1][1], reverse=True):
        print('%-45s %9.2f us %9.2f us  %5.2f%s' % (op, a * 1e6, b * 1e6, a / b, '  OVER' if a / b > TARGET else ''))
    for op, why in sorted(all_skipped.items()):
        print('%-45s skipped: %s' % (op, why))
