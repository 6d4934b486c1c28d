"""KVStore throughput against the same sums and copies written directly in torch.

``local`` store, 20 keys of 1M float32 values pushed from 4 contexts (``cpu(0..3)``), then
pulled back to the 4 contexts.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import neomx as mx  # noqa: E402
from benchmarks.common import compare  # noqa: E402

NUM_KEYS = 20
SIZE = 1 << 20
NUM_DEVICES = 4


def push_pull_steps(kind, devices, num_keys=NUM_KEYS, size=SIZE):
    """(neomx step, torch step): a ``kind`` store pushing ``num_keys`` keys of ``size``
    float32 values from one array on each of ``devices`` and pulling them back to them,
    and the same sums and copies written in torch."""
    keys = list(range(num_keys))
    grads = [[mx.nd.ones((size,), ctx) for ctx in devices] for _ in keys]
    outs = [[mx.nd.zeros((size,), ctx) for ctx in devices] for _ in keys]
    kv = mx.kv.create(kind)
    kv.init(keys, [mx.nd.zeros((size,), devices[0]) for _ in keys])

    def neomx_step():
        kv.push(keys, grads)
        kv.pull(keys, out=outs)

    grads_t = [[g._t for g in row] for row in grads]
    outs_t = [[o._t for o in row] for row in outs]
    stored = [torch.zeros(size, device=devices[0].torch_device) for _ in keys]

    def torch_step():
        # push every key, then pull every key: the order the store's API implies
        for row, target in zip(grads_t, stored):
            torch.add(row[0], row[1], out=target)
            for g in row[2:]:
                target.add_(g)
        for target, dests in zip(stored, outs_t):
            for d in dests:
                d.copy_(target)
    return neomx_step, torch_step


def bench_local_push_pull():
    neomx_step, torch_step = push_pull_steps('local', [mx.cpu(i) for i in range(NUM_DEVICES)])
    return compare('kvstore local push+pull (20 keys x 1M f32, 4 contexts)', neomx_step, torch_step,
                   target=1.3, note='sums and copies in plain torch', repeat=5, min_time=0.3)


BENCHMARKS = [bench_local_push_pull]
