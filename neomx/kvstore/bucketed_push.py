"""Pushing a fixed list of keys bucket by bucket while their values are still being written.

MXNet's engine starts a gradient's push as soon as backward has written it; PyTorch's DDP
starts a bucket's allreduce when its last gradient is ready and lets a communication hook
return a future for it (``torch/distributed/algorithms/ddp_comm_hooks/``). A synchronous store
offers the same through :meth:`DistSyncKVStore.bucketed_push`: the caller declares each value
ready as it is written (:meth:`BucketedPush.ready`) and ends each round with
:meth:`BucketedPush.finish`, which starts what is left and returns a :class:`PushHandle`.

The store owns the bucket plan. The first round pushes everything at :meth:`finish` and
records the order in which the values became ready; every worker checks that the others saw
the same order (else the keys are taken in reverse, roughly backward's order) and the order is
cut into buckets: the first holds 1 MiB so that it starts early, the others the store's fusion
size. From the second round on, a bucket's push starts as soon as its last value is ready,
buckets in their order only (a complete bucket waits for the ones before it), so every worker
issues the same collectives in the same order; the sums are applied in push order when read,
so the values are exactly those of pushing everything at the end of the round. A value
declared ready twice in a round (two backward passes before a step) makes :meth:`finish` drop
what the round started and push everything again.
"""
import hashlib

import torch

from .fusion import fusion_bytes

__all__ = ['BucketedPush', 'PushHandle', 'plan_in_ready_order']

_FIRST_BUCKET_BYTES = 1 << 20      # started as early as possible: the last layers' gradients


def plan_in_ready_order(order, nbytes):
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


class PushHandle:
    """The pushes of one round, in flight: :meth:`wait` applies their sums (the store also
    applies them by itself when one of the keys is read). :meth:`BucketedPush.finish` returns
    it; see :class:`BucketedPush`' example."""

    def __init__(self, store, keys):
        self._store, self._keys = store, keys

    def wait(self):
        """Block until the round's sums are applied to the store's values."""
        self._store._settle_keys(set(self._keys))


class BucketedPush:
    """Rounds of pushes of ``keys`` (with ``values``, one NDArray per key, read when pushed)
    to a synchronous distributed ``store``, started bucket by bucket; see the module doc.

    Example
    -------
    >>> kv = mx.kv.create('dist_sync')          # a job of one worker here
    >>> kv.init([10, 11], [mx.nd.zeros(2), mx.nd.zeros(3)])
    >>> grads = [mx.nd.ones(2), mx.nd.ones(3) * 2]
    >>> pushes = kv.bucketed_push([10, 11], grads)
    >>> for index in (1, 0):                  # the order backward writes them
    ...     pushes.ready(index)
    >>> pushes.finish().wait()
    >>> out = mx.nd.zeros(3)
    >>> kv.pull(11, out=out)
    >>> out.asnumpy().tolist()
    [2.0, 2.0, 2.0]
    """

    # The store's own module: it uses the store's internals (the push without the workers'
    # agreement, the buckets in flight, the collectives).
    def __init__(self, store, keys, values):
        self._store = store
        self._keys = list(keys)
        self._values = list(values)
        self._order = []            # positions, in the order the first round declared them ready
        self._buckets = None
        self._bucket_of = {}
        self._new_round()

    @property
    def buckets(self):
        """The plan: lists of positions in ``keys``, in push order (None before the first
        round ended)."""
        return self._buckets

    @property
    def started(self):
        """How many buckets of this round have been started."""
        return self._next

    def _new_round(self):
        self._ready = set()
        self._next = 0              # the next bucket to start
        self._missing = None if self._buckets is None else [len(b) for b in self._buckets]
        self._in_flight = []        # what the store started this round (to drop if rewritten)
        self._rewritten = False

    def ready(self, index):
        """Value ``index`` (a position in ``keys``) holds its final value for this round:
        start the buckets it completes."""
        if index in self._ready:
            self._rewritten = True          # a second write in the round
            return
        self._ready.add(index)
        if self._buckets is None:
            self._order.append(index)
            return
        if self._rewritten:
            return
        self._missing[self._bucket_of[index]] -= 1
        while self._next < len(self._buckets) and self._missing[self._next] == 0:
            self._start(self._next)

    def finish(self):
        """End the round: push what is not started yet (everything in the first round, or
        after a value was rewritten) and return the round's :class:`PushHandle`."""
        try:
            if self._buckets is None or self._rewritten:
                self._store._discard(self._in_flight)
                self._store.push(self._keys, self._values)
                if self._buckets is None and self._order:   # else no value was declared ready
                    self._make_plan()
            else:
                while self._next < len(self._buckets):
                    self._start(self._next)
            return PushHandle(self._store, self._keys)
        finally:
            self._new_round()

    def _start(self, b):
        if b == 0:      # one check per round that every worker pushes the same keys
            self._store._agree_push(self._keys, self._values)
        positions = self._buckets[b]
        self._in_flight += self._store._push_agreed([self._keys[p] for p in positions],
                                                    [self._values[p] for p in positions])
        self._next = b + 1

    def _make_plan(self):
        """Buckets in the order the first round declared the values ready (then those it did
        not, last), when every worker saw that order (else in reverse key order)."""
        n = len(self._keys)
        seen = set(self._order)
        order = self._order + [pos for pos in reversed(range(n)) if pos not in seen]
        digest = int.from_bytes(hashlib.sha1(repr(order).encode()).digest()[:8], 'little') >> 1
        every = self._store._comm.all_gather('push order', torch.tensor([digest], dtype=torch.int64))
        if any(int(t) != digest for t in every):
            order = list(reversed(range(n)))
        nbytes = [v._t.numel() * v._t.element_size() for v in self._values]
        self._buckets = plan_in_ready_order(order, nbytes)
        self._bucket_of = {pos: b for b, bucket in enumerate(self._buckets) for pos in bucket}
