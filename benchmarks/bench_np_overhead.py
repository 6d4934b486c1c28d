"""Per-call overhead of ``mx.np`` functions against their own torch call.

Each case is an ``mx.np`` call on small arrays (a few dozen values) and the registry
implementation it reaches (``spec.impl``) called on the same tensors with the same
attributes: the ratio is what the ``mx.np`` frontend adds (argument handling, the scalar
forms, ndarray wrapping). Rounds of the two alternate; the best round of each counts,
in thread CPU time (``time.thread_time``), as ``bench_op_overhead.py`` does for ``mx.nd``.

``python benchmarks/bench_np_overhead.py`` prints every case's ratio (target 1.5).
"""
import gc
import time

import torch

import neomx as mx
from neomx.operator import registry

TARGET = 1.5
ROUNDS = 9
ROUND_S = 1e-3


def _cases():
    np = mx.np
    a = np.ones((4, 8))
    b = np.ones((4, 8))
    ta, tb = a._t, b._t

    def impl(op):
        return registry.get(op).impl

    return [
        ('add(a, b)', lambda: np.add(a, b), lambda: impl('_npi_add')(ta, tb)),
        ('a + b', lambda: a + b, lambda: torch.add(ta, tb)),
        ('multiply(a, 2.0)', lambda: np.multiply(a, 2.0), lambda: impl('_npi_multiply_scalar')(ta, 2.0, False)),
        ('exp(a)', lambda: np.exp(a), lambda: impl('_npi_exp')(ta)),
        ('sum(a, axis=1)', lambda: np.sum(a, axis=1), lambda: impl('_np_sum')(ta, 1, None, False, None)),
        ('mean(a)', lambda: np.mean(a), lambda: impl('_npi_mean')(ta, None, None, False, None)),
        ('reshape(a, (8, 4))', lambda: np.reshape(a, (8, 4)), lambda: impl('_np_reshape')(ta, (8, 4), 'C').clone()),
        ('transpose(a)', lambda: np.transpose(a), lambda: impl('_np_transpose')(ta, None).clone()),
        ('concatenate([a, b])', lambda: np.concatenate([a, b]),
         lambda: impl('_npi_concatenate')(ta, tb, num_args=2, dim=0)),
        ('dot(a, b.T)', lambda: np.dot(a, b.T), lambda: impl('_np_dot')(ta, tb.T)),
        ('where(a > 0, a, b)', lambda: np.where(a, a, b), lambda: impl('_npi_where')(ta, ta, tb)),
        ('maximum(a, 0.0)', lambda: np.maximum(a, 0.0), lambda: impl('_npi_maximum_scalar')(ta, 0.0, False)),
    ]


def _best(fn, rounds=ROUNDS):
    n = 1
    while True:         # calls per round: about ROUND_S of work
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        if time.thread_time() - t0 > ROUND_S or n > 1 << 16:
            break
        n *= 2
    best = float('inf')
    for _ in range(rounds):
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        best = min(best, (time.thread_time() - t0) / n)
    return best


def main():
    gc.disable()
    rows = []
    for name, np_call, torch_call in _cases():
        np_t = min(_best(np_call, 1) for _ in range(ROUNDS))
        torch_t = min(_best(torch_call, 1) for _ in range(ROUNDS))
        rows.append((name, np_t * 1e6, torch_t * 1e6, np_t / torch_t))
    for name, np_us, torch_us, ratio in rows:
        print('%-24s mx.np %7.2f us  torch %7.2f us  ratio %.2f%s'
              % (name, np_us, torch_us, ratio, '' if ratio <= TARGET else '  (over %.1f)' % TARGET))


if __name__ == '__main__':
    main()
