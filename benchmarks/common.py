"""Shared timing helpers: every figure is a ratio against raw PyTorch measured in the same run.

A benchmark module defines ``BENCHMARKS``: a list of functions, each returning a
:class:`Result`. ``python benchmarks/run.py`` runs them all and writes RESULTS.md.
"""
import gc
import time
from dataclasses import dataclass

import torch


@dataclass
class Result:
    """One comparison: neomx's time and raw torch's time for the same work, per call."""
    name: str
    neomx_s: float
    torch_s: float
    target: float          # the ratio neomx/torch must not exceed (lower is better)
    note: str = ''

    @property
    def ratio(self):
        return self.neomx_s / self.torch_s

    @property
    def ok(self):
        return self.ratio <= self.target


def best_time(fn, repeat=7, min_time=0.2):
    """Seconds per call of ``fn``: best over ``repeat`` rounds, each at least ``min_time`` long."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / 4 or n >= 1 << 24:
            break
        n *= 4
    n = max(1, int(n * (min_time / max(dt, 1e-9))))
    best = float('inf')
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best = min(best, (time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    return best


def compare(name, neomx_fn, torch_fn, target, note='', rounds=3, statistic=min, **kw):
    """Time both, interleaving ``rounds`` rounds so machine noise hits both alike; each side's
    figure is ``statistic`` (the best by default) of its rounds' best times."""
    a, b = [], []
    for _ in range(rounds):
        a.append(best_time(neomx_fn, **kw))
        with torch.enable_grad():
            b.append(best_time(torch_fn, **kw))
    return Result(name, statistic(a), statistic(b), target, note)
