"""Checked collectives over the workers of a job (torch.distributed).

Every request first passes :meth:`Collectives.agree`: the workers all-gather a 63-bit hash of
what they are about to do (the operation, the keys, shapes and dtypes), so that a key pushed
by only some workers, or with another shape or dtype, raises a clear ``MXNetError`` on every
worker (listing what each rank asked for) instead of summing garbage or deadlocking. A failed
collective raises an ``MXNetError`` naming the lost ranks (see ``Group.diagnose``).
"""
import hashlib

import torch
import torch.distributed as dist

from ..base import MXNetError

__all__ = ['Collectives']


class Collectives:
    """Collectives of one :class:`~neomx.kvstore.rendezvous.Group`, in call order."""

    def __init__(self, group):
        self.group = group

    @property
    def size(self):
        return self.group.num_workers

    def _guard(self, what, run):
        try:
            return run()
        except MXNetError:
            raise
        except RuntimeError as err:      # gloo/NCCL errors (DistBackendError is one)
            raise self.group.diagnose(what, err) from None

    def agree(self, what, signature):
        """Check that every worker is doing ``signature`` (a str) now; MXNetError otherwise."""
        # numbered per process group (shared by every store of this process), the same on all workers
        self.group.calls = call = getattr(self.group, 'calls', 0) + 1
        if self.size == 1:
            return
        digest = int.from_bytes(hashlib.sha1(signature.encode()).digest()[:8], 'little') >> 1
        # one all_reduce of (digest, -digest) under MAX gives the largest and the smallest
        # digest: all equal exactly when both are this worker's (cheaper than an all_gather)
        extremes = torch.tensor([digest, -digest], dtype=torch.int64)
        self._guard(what, lambda: dist.all_reduce(extremes, op=dist.ReduceOp.MAX))
        if extremes.tolist() == [digest, -digest]:
            return
        store = self.group.store
        store.set('disagree/%d/%d' % (call, self.group.rank), signature)
        lines = []
        for rank in range(self.size):
            text = store.get('disagree/%d/%d' % (call, rank)).decode()
            lines.append('  rank %d: %s' % (rank, _shorten(text)))
        raise MXNetError('kvstore %s: the workers disagree on what to do (a key pushed by only some workers, '
                         'or with different shapes or dtypes, or workers at different steps):\n%s'
                         % (what, '\n'.join(lines)))

    def allreduce(self, what, buffers):
        """Sum each tensor of ``buffers`` in place over the workers (all in flight at once)."""
        if self.size == 1:
            return
        works = [self._guard(what, lambda b=b: dist.all_reduce(b, async_op=True)) for b in buffers]
        for work in works:
            self._guard(what, work.wait)

    def start_allreduce(self, what, buffer):
        """Begin summing ``buffer``; call ``.wait()`` on the result (None with one worker)."""
        if self.size == 1:
            return None
        return self._guard(what, lambda: dist.all_reduce(buffer, async_op=True))

    def wait(self, what, work):
        if work is not None:
            self._guard(what, work.wait)

    def broadcast(self, what, buffers):
        """Overwrite each tensor of ``buffers`` with rank 0's."""
        if self.size == 1:
            return
        works = [self._guard(what, lambda b=b: dist.broadcast(b, src=0, async_op=True)) for b in buffers]
        for work in works:
            self._guard(what, work.wait)

    def all_gather(self, what, tensor):
        """Every worker's ``tensor`` (same shape everywhere), in rank order."""
        if self.size == 1:
            return [tensor]
        every = [torch.empty_like(tensor) for _ in range(self.size)]
        self._guard(what, lambda: dist.all_gather(every, tensor))
        return every

    def barrier(self):
        """Wait until every worker reaches its barrier (and check that they all did)."""
        self.agree('barrier', 'barrier')


def _shorten(text, limit=400):
    return text if len(text) <= limit else text[:limit] + '... (%d characters)' % len(text)
