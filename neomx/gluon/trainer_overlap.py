"""Sending gradients to a synchronous distributed store while backward is still running.

MXNet's engine starts a gradient's push as soon as backward has written it. The Trainer does
the same with a ``dist_sync`` store: the parameters are grouped into buckets in the order
backward writes their gradients (seen at the first step, checked to be the same on every
worker), and the hook that writes a bucket's last gradient starts its push (allreduce in
flight) while backward goes on with the layers below. ``Trainer.step`` pushes the buckets not
started yet, in the same order, then pulls as before; the store applies the sums in push order,
so the weights are exactly those of pushing everything at the step: the same sums over workers,
the optimizer once on each, ``update_on_kvstore`` either way.

Buckets are started in their order only (a bucket whose gradients are ready waits for the
ones before it), so every worker issues the same collectives in the same order. A backward
pass that rewrites a gradient already sent (two backward passes before a step) makes the
step drop what was sent and push everything again.

Used when every trained parameter is dense with ``grad_req='write'`` on one CPU context and
the store compresses nothing and ``NEOMX_TRAINER_OVERLAP=1`` asks for it; otherwise the
Trainer pushes everything at the step.
"""
import hashlib
import os

import torch

from ..kvstore.fusion import fusion_bytes

__all__ = ['GradientOverlap', 'can_overlap']

_FIRST_BUCKET_BYTES = 1 << 20      # started as early as possible: the last layers' gradients


def can_overlap(store, trained, compression_params):
    """Whether the Trainer may start ``store``'s pushes from backward for ``trained``
    (``NEOMX_TRAINER_OVERLAP=1`` turns it on: off by default, since on CPUs with few cores
    the hooks' all_reduces compete with backward for them and the step got 5-12% slower in
    ``benchmarks/bench_dist.py`` on 2 cores)."""
    if os.environ.get('NEOMX_TRAINER_OVERLAP', '0') != '1':
        return False
    if store is None or not hasattr(store, '_push_agreed') or compression_params:
        return False
    for _, param, arrays in trained:
        if param._stype != 'default' or getattr(param, '_grad_stype', 'default') != 'default':
            return False
        if len(arrays) != 1 or param.grad_req != 'write' or arrays[0].context.device_type != 'cpu':
            return False
    return True


def _plan(order, nbytes):
    """Buckets of positions in ``order``: filled until they hold 1 MiB (the first) or the
    store's fusion size (the others)."""
    buckets, bucket, size, cap = [], [], 0, min(_FIRST_BUCKET_BYTES, fusion_bytes())
    for pos in order:
        bucket.append(pos)
        size += nbytes[pos]
        if size >= cap:
            buckets.append(bucket)
            bucket, size, cap = [], 0, fusion_bytes()
    if bucket:
        buckets.append(bucket)
    return buckets


class GradientOverlap:
    """Starts the pushes of ``trained`` (the Trainer's ``[(key, Parameter, [array])]``) from the
    gradient hooks; :meth:`flush` at the step pushes the rest."""

    def __init__(self, store, trained):
        self._store = store
        self._keys = [k for k, _, _ in trained]
        self._slots = [arrays[0]._grad for _, _, arrays in trained]
        self._order = []            # positions, in the order the first backward wrote them
        self._buckets = None
        self._reset()
        for pos, slot in enumerate(self._slots):
            slot.ready = lambda pos=pos: self._written(pos)

    def detach(self):
        """Stop listening to the gradients (the Trainer's parameters changed)."""
        for slot in self._slots:
            slot.ready = None

    def _reset(self):
        self._written_now = set()
        self._next = 0              # the next bucket to start
        self._missing = None if self._buckets is None else [len(b) for b in self._buckets]
        self._started = []          # what the store started this step (to drop if rewritten)
        self._rewritten = False

    # ---------------------------------------------------------------- hooks
    def _written(self, pos):
        if pos in self._written_now:
            self._rewritten = True          # a second backward before the step
            return
        self._written_now.add(pos)
        if self._buckets is None:
            self._order.append(pos)
            return
        if self._rewritten:
            return
        self._missing[self._bucket_of[pos]] -= 1
        while self._next < len(self._buckets) and self._missing[self._next] == 0:
            self._start(self._next)

    def _start(self, b):
        if b == 0:      # one check per step that every worker pushes the same keys
            self._store._agree_push(self._keys, self._grads(range(len(self._keys))))
        positions = self._buckets[b]
        self._started += self._store._push_agreed([self._keys[p] for p in positions], self._grads(positions))
        self._next = b + 1

    def _grads(self, positions):
        return [self._slots[p].buf for p in positions]

    # ----------------------------------------------------------------- step
    def flush(self):
        """At the step: push what backward has not started. False when the Trainer must push
        everything itself (no plan yet, or gradients rewritten after their push)."""
        try:
            if self._buckets is None:
                if self._order:     # else no backward was seen since the Trainer's first step
                    self._make_plan()
                return False
            if self._rewritten:
                self._store._discard(self._started)
                return False
            while self._next < len(self._buckets):
                self._start(self._next)
            return True
        finally:
            self._reset()

    def _make_plan(self):
        """Buckets in the order the first backward wrote the gradients (those it did not write
        last), when every worker saw that order (else in reverse key order: roughly backward's,
        from the last layer)."""
        n = len(self._keys)
        seen = set(self._order)
        order = self._order + [pos for pos in reversed(range(n)) if pos not in seen]
        digest = int.from_bytes(hashlib.sha1(repr(order).encode()).digest()[:8], 'little') >> 1
        every = self._store._comm.all_gather('gradient order', torch.tensor([digest], dtype=torch.int64))
        if any(int(t) != digest for t in every):
            order = list(reversed(range(n)))
        nbytes = [s.buf._t.numel() * s.buf._t.element_size() for s in self._slots]
        self._buckets = _plan(order, nbytes)
        self._bucket_of = {pos: b for b, bucket in enumerate(self._buckets) for pos in bucket}
