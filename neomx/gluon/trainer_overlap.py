"""Sending gradients to a synchronous distributed store while backward is still running.

MXNet's engine starts a gradient's push as soon as backward has written it. The Trainer does
the same with a store that offers ``bucketed_push`` (``dist_sync``; see
:mod:`neomx.kvstore.bucketed_push`, which plans the buckets in the order backward writes the
gradients): the hook that writes a gradient declares it ready, which starts the pushes of the
buckets it completes while backward goes on with the layers below, and ``Trainer.step`` ends
the round (pushing the rest) and then pulls as before. The weights are exactly those of
pushing everything at the step: the same sums over workers, the optimizer once on each,
``update_on_kvstore`` either way.

Used when every trained parameter is dense with ``grad_req='write'`` on one CPU context and
the store compresses nothing and ``NEOMX_TRAINER_OVERLAP=1`` asks for it; otherwise the
Trainer pushes everything at the step.
"""
import functools
import os

__all__ = ['GradientOverlap', 'can_overlap']


def can_overlap(store, trained, compression_params):
    """Whether the Trainer may start ``store``'s pushes from backward for ``trained``
    (``NEOMX_TRAINER_OVERLAP=1`` turns it on: off by default, since on CPUs with few cores
    the hooks' all_reduces compete with backward for them and the step got 5-12% slower in
    ``benchmarks/bench_dist.py`` on 2 cores)."""
    if os.environ.get('NEOMX_TRAINER_OVERLAP', '0') != '1':
        return False
    if store is None or not callable(getattr(store, 'bucketed_push', None)) or compression_params:
        return False
    for _, param, arrays in trained:
        if param._stype != 'default' or getattr(param, '_grad_stype', 'default') != 'default':
            return False
        if len(arrays) != 1 or param.grad_req != 'write' or arrays[0].context.device_type != 'cpu':
            return False
    return True


class GradientOverlap:
    """Declares the gradients of ``trained`` (the Trainer's ``[(key, Parameter, [array])]``)
    ready to ``store``'s bucketed push as backward writes them; :meth:`flush` at the step
    ends the round."""

    def __init__(self, store, trained):
        self._slots = [arrays[0]._grad for _, _, arrays in trained]
        self.pushes = store.bucketed_push([k for k, _, _ in trained], [slot.buf for slot in self._slots])
        for pos, slot in enumerate(self._slots):
            slot.ready = functools.partial(self.pushes.ready, pos)

    def detach(self):
        """Stop listening to the gradients (the Trainer's parameters changed)."""
        for slot in self._slots:
            slot.ready = None

    def flush(self):
        """At the step: push what backward has not started (a handle on the pushes)."""
        return self.pushes.finish()
