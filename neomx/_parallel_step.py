"""Parallel steps: the contexts of one data-parallel step meeting to exchange values.

A data-parallel step runs each context's part of the batch in its own thread (see
``neomx.gluon.contrib.parallel``), the threads sharing a :class:`StepGroup`. Code that
needs the values of every context, such as the ``_contrib_SyncBatchNorm`` operator, finds
its thread's :class:`DeviceStep` with :func:`current_step` and calls
:meth:`DeviceStep.allgather`, which waits for the same call on every other context.

This module is the mechanism alone, below both the operators and Gluon, so that operators
can synchronise without knowing who started the step.
"""
import contextlib
import threading

from .base import MXNetError

__all__ = ['StepGroup', 'DeviceStep', 'current_step', 'device_step', 'SyncTimeoutError',
           'PeerFailure']


class SyncTimeoutError(MXNetError):
    """The contexts of a parallel step did not all reach an exchange in time."""


class PeerFailure(MXNetError):
    """An exchange abandoned because another context of the step failed or finished
    without reaching it; the other context's error is the one to report."""


class _Exchange:
    """One meeting of the contexts: each deposits a value, waits for all, reads them all."""

    def __init__(self, num_devices):
        self.values = [None] * num_devices
        self.arrived = 0
        self.barrier = threading.Barrier(num_devices)


class StepGroup:
    """What the threads of one parallel step share: their pending exchanges.

    When a thread ends (returning or raising) it closes the group: an exchange it has not
    reached can never complete, so the threads waiting there are released with an error
    at once instead of at the timeout.

    Parameters
    ----------
    num_devices : int
        Number of contexts (threads) taking part in the step.
    timeout : float
        Seconds a context waits at an exchange for the others before giving up.
    """

    def __init__(self, num_devices, timeout):
        self.num_devices = num_devices
        self.timeout = timeout
        self._lock = threading.Lock()
        self._exchanges = {}
        self._closed_by = None          # rank of the first thread that ended

    def exchange(self, key, rank, value, who):
        """Deposit ``value`` for ``rank`` at exchange ``key``; the values of all ranks."""
        with self._lock:
            if self._closed_by is not None:
                raise self._peer_failure(who)
            meeting = self._exchanges.get(key)
            if meeting is None:
                meeting = self._exchanges[key] = _Exchange(self.num_devices)
            meeting.values[rank] = value
            meeting.arrived += 1
        try:
            meeting.barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            if self._closed_by is not None:
                raise self._peer_failure(who) from None
            raise SyncTimeoutError(
                '%s: context %d waited %g s for the other %d contexts of the parallel step, '
                'which did not all arrive (does every context call it the same number of '
                'times?)' % (who, rank, self.timeout, self.num_devices - 1)) from None
        return list(meeting.values)

    def close(self, rank):
        """Thread ``rank`` has ended: abort the exchanges still missing a context."""
        with self._lock:
            if self._closed_by is None:
                self._closed_by = rank
            incomplete = [m for m in self._exchanges.values() if m.arrived < self.num_devices]
        for meeting in incomplete:
            meeting.barrier.abort()

    def _peer_failure(self, who):
        return PeerFailure('%s: context %d of the parallel step ended without reaching this '
                           'synchronisation' % (who, self._closed_by))


class DeviceStep:
    """One context's view of a parallel step.

    Attributes
    ----------
    num_devices : int
        Number of contexts taking part in the step.
    rank : int
        This context's position among them (the order of the inputs).
    """

    def __init__(self, group, rank):
        self._group = group
        self.num_devices = group.num_devices
        self.rank = rank
        self._calls = {}                # caller -> number of exchanges it has made

    def allgather(self, caller, value, who):
        """Exchange ``value`` with the other contexts of the step.

        The n-th call for ``caller`` on each context meets the n-th call for it on every
        other context, so a layer used twice in a step synchronises twice.

        Parameters
        ----------
        caller : hashable
            What is synchronising: a layer, or a key naming it (the same on every context).
        value : object
            This context's contribution (any object; tensors keep their autograd history).
        who : str
            How errors name the caller.

        Returns
        -------
        list
            The contributions of all contexts, in rank order.

        Raises
        ------
        SyncTimeoutError
            When the other contexts do not arrive within the group's timeout.
        PeerFailure
            When another context ended without reaching this exchange.
        """
        count = self._calls.get(caller, 0)
        self._calls[caller] = count + 1
        return self._group.exchange((caller, count), self.rank, value, who)


class _CurrentStep(threading.local):
    step = None


_CURRENT = _CurrentStep()


def current_step():
    """The :class:`DeviceStep` of the calling thread, or None outside a parallel step."""
    return _CURRENT.step


@contextlib.contextmanager
def device_step(group, rank):
    """Run the body as context ``rank`` of ``group``'s step.

    Inside, :func:`current_step` returns the thread's :class:`DeviceStep`; on leaving
    (returning or raising) the thread closes the group, releasing any context that waits
    for it at an exchange it will never reach.
    """
    _CURRENT.step = DeviceStep(group, rank)
    try:
        yield _CURRENT.step
    finally:
        _CURRENT.step = None
        group.close(rank)
