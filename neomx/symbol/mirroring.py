"""Mirroring (``MXNET_BACKWARD_DO_MIRROR``): recompute runs of a graph's calls in the
backward pass instead of keeping their intermediate values."""
import math
import os

import torch
from torch.utils.checkpoint import checkpoint

from .. import autograd

__all__ = ['mirror_requested', 'mirror_segments', 'recompute']


def mirror_requested():
    """Whether ``MXNET_BACKWARD_DO_MIRROR`` asks for mirroring (a non-zero integer), read
    when a graph is compiled."""
    value = os.environ.get('MXNET_BACKWARD_DO_MIRROR', '').strip()
    return value.lstrip('-').isdigit() and int(value) != 0


def mirror_segments(calls):
    """Split the calls into ``[(recompute, calls)]`` runs for mirroring.

    The ``n`` calls form ``k = max(4, round(sqrt(n) / 4))`` runs of equal length. The
    forward pass keeps only each run's inputs, and the backward pass recomputes the run
    it is in; the last run is not recomputed (its backward starts right after the forward
    pass). Stored values fall to about ``1/k`` (one run's values plus the run inputs) for
    ``(k - 1) / k`` of a forward computation repeated: on a 100-layer MLP, 4 runs store 4x
    less than storing everything for three quarters of a forward pass more, where the
    memory-optimal ``sqrt(n)`` runs would save 7x but repeat nearly all of it. Deeper graphs
    get more runs, ``O(sqrt(n))``. Operators with auxiliary states (BatchNorm updates its
    moving statistics in place) run once, outside any run.
    """
    count = max(4, round(math.sqrt(len(calls)) / 4))
    size = max(1, math.ceil(len(calls) / count))
    segments, run = [], []
    for call in calls:
        if call.node.mutated_inputs():
            segments.extend([(True, run), (False, [call])] if run else [(False, [call])])
            run = []
            continue
        run.append(call)
        if len(run) == size:
            segments.append((True, run))
            run = []
    if run:
        segments.append((False, run))
    elif segments and segments[-1][0]:
        segments[-1] = (False, segments[-1][1])
    return segments


def _in_mode(mode, segment, *args):
    with mode():
        return segment(*args)


def recompute(segment, *args):
    """Run ``segment(*args)`` storing only ``args`` for the backward pass, which runs it
    again, in the training mode of this call, to get the values it needs.

    Random operators draw the same numbers both times (the RNG state is kept), so the
    gradients equal those of the stored run.
    """
    if not torch.is_grad_enabled():
        return segment(*args)
    mode = autograd.train_mode if autograd.is_training() else autograd.predict_mode
    return checkpoint(_in_mode, mode, segment, *args, use_reentrant=False)

