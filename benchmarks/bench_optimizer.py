"""Optimizer step over a ResNet-50-sized parameter list against ``torch.optim``.

SGD with momentum 0.9 over ResNet-50's 161 parameter arrays (25.6M values), through the
Updater's fused path (what Gluon's Trainer calls), against
``torch.optim.SGD(momentum=0.9, foreach=True)``.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import neomx as mx  # noqa: E402
from benchmarks.common import compare  # noqa: E402


def resnet50_shapes():
    """Shapes of ResNet-50's learnable parameters: 161 arrays, 25.6M values."""
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    in_ch = 64
    for width, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        for block in range(blocks):
            out_ch = 4 * width
            for conv in ((width, in_ch, 1, 1), (width, width, 3, 3), (out_ch, width, 1, 1)):
                shapes += [conv, (conv[0],), (conv[0],)]
            if block == 0:
                shapes += [(out_ch, in_ch, 1, 1), (out_ch,), (out_ch,)]
            in_ch = out_ch
    return shapes + [(1000, 2048), (1000,)]


def bench_sgd_momentum():
    shapes = resnet50_shapes()
    gen = torch.Generator().manual_seed(0)
    weights = [mx.nd.NDArray(torch.randn(s, generator=gen)) for s in shapes]
    grads = [mx.nd.NDArray(torch.randn(s, generator=gen)) for s in shapes]
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.01, momentum=0.9))
    indices = list(range(len(shapes)))

    def neomx_step():
        updater(indices, grads, weights)

    params = [torch.nn.Parameter(w._t.clone()) for w in weights]
    for p, g in zip(params, grads):
        p.grad = g._t.clone()
    sgd = torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=True)

    return compare('SGD momentum, ResNet-50 parameters (161 arrays, 25.6M values)', neomx_step, sgd.step,
                   target=1.2, note='torch.optim.SGD(momentum=0.9, foreach=True)', repeat=5, min_time=0.3)


BENCHMARKS = [bench_sgd_momentum]
