"""Per-call overhead of imperative operators: neomx's NDArray path against the bare torch call.

Small inputs on purpose: the kernels take microseconds, so the ratio shows what neomx's
frontend (argument handling, attribute parsing, NDArray wrapping) adds to each call.
"""
import numpy as np
import torch
import torch.nn.functional as F

import neomx as mx
from common import compare


def _arrays(*shapes):
    """NDArrays with fixed random float32 values, and the torch tensors behind them."""
    rng = np.random.RandomState(0)
    arrays = [mx.nd.array(rng.uniform(-1, 1, size=s)) for s in shapes]
    return arrays, [a.as_torch() for a in arrays]


def bench_add():
    (a, b), (ta, tb) = _arrays((10, 10), (10, 10))
    return compare('NDArray a + b, 10x10 float32', lambda: a + b, lambda: torch.add(ta, tb), 1.5)


def bench_fully_connected():
    (x, w, b), (tx, tw, tb) = _arrays((32, 64), (64, 64), (64,))
    return compare('nd.FullyConnected 32x64 -> 64',
                   lambda: mx.nd.FullyConnected(x, w, b, num_hidden=64),
                   lambda: F.linear(tx, tw, tb), 2.0)


def bench_convolution():
    (x, w, b), (tx, tw, tb) = _arrays((1, 3, 16, 16), (8, 3, 3, 3), (8,))
    return compare('nd.Convolution 1x3x16x16, 8 filters 3x3, pad 1',
                   lambda: mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=8, pad=(1, 1)),
                   lambda: F.conv2d(tx, tw, tb, padding=(1, 1)), 1.5)


def bench_dot():
    (a, b), (ta, tb) = _arrays((64, 64), (64, 64))
    return compare('nd.dot 64x64 float32', lambda: mx.nd.dot(a, b), lambda: torch.mm(ta, tb), 1.5)


BENCHMARKS = [bench_add, bench_fully_connected, bench_convolution, bench_dot]
