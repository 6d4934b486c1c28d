"""Operator errors reported when a result is read, as MXNet's asynchronous engine reports them.

MXNet checks some operator inputs inside the kernel (``take`` with ``mode='raise'`` and an
out-of-range index, a sampler's ``scale`` that is not positive): the call returns, and the
error is raised by the first ``asnumpy()``, ``asscalar()`` or ``wait_to_read()`` of the
result -- or of anything computed from it -- or by ``mx.nd.waitall()``, once. neomx keeps
such an error on the result's tensor (:func:`defer_error`); imperative operators hand it on
to their results (:func:`carry`, only while some error is pending: ``LIVE``), the
NDArray's read methods call :func:`raise_deferred` and ``waitall`` :func:`raise_pending`.
A compiled graph (executors, hybridized blocks) hands the first error deferred while it ran to
all its outputs (:data:`RUN`, :func:`hand_on`). Errors of arguments (shapes, attribute values) stay
immediate.
"""
import threading
import weakref

__all__ = ['defer_error', 'carries_error', 'raise_deferred', 'raise_pending', 'carry', 'hand_on', 'LIVE', 'RUN', 'DEPTH', 'MADE']

_ATTR = '_mx_deferred_error'
LIVE = [0]              # deferred errors not raised yet (a cheap test for the operators)
_PENDING = weakref.WeakSet()


class _RunState(threading.local):
    """This thread's graph runs. ``counts``: [compiled graphs running on this thread, nested;
    errors deferred by this thread so far], in one list, as a graph reads and writes both on
    every call (one thread-local read, then list items, cheaper than thread-local attributes).
    ``during_run``: the errors deferred while a graph runs, oldest first (strong: a graph frees
    its intermediates, and an error on one must still reach the outputs)."""
    during_run = ()

    def __init__(self):
        self.counts = [0, 0]


DEPTH, MADE = 0, 1      # the items of RUN.counts


RUN = _RunState()       # this thread's graph runs (see hand_on)


class _Deferred:
    """One deferred error, shared by every array computed from the failed result."""
    __slots__ = ('error', 'raised', '__weakref__')

    def __init__(self, error):
        self.error, self.raised = error, False
        LIVE[0] += 1
        _PENDING.add(self)

    def take(self):
        """The error, the first time (then it is spent everywhere, as in MXNet)."""
        if self.raised:
            return None
        self.raised = True
        LIVE[0] -= 1
        return self.error

    def __del__(self):
        if not self.raised:
            LIVE[0] -= 1


def defer_error(tensor, error):
    """Have the first read of ``tensor`` (or of arrays computed from it) raise ``error``;
    returns ``tensor``."""
    record = _Deferred(error)
    setattr(tensor, _ATTR, record)
    state = RUN
    counts = state.counts
    counts[MADE] += 1
    if counts[DEPTH]:
        state.during_run += (record,)
    # outside a graph nothing else holds the record: when every array carrying it dies, the
    # error dies too, as in MXNet (waitall does not raise it)
    return tensor


def carries_error(tensor):
    """Whether ``tensor`` carries a deferred error not raised yet."""
    record = getattr(tensor, _ATTR, None)
    return record is not None and not record.raised


def hand_on(started, results):
    """Hand the first error deferred during a compiled graph's run on to its ``results`` (a
    tensor or a sequence of them; None when the graph raised).

    A graph brackets its run on :data:`RUN` inline (the protocol, cheaper than calls on every
    graph call): with ``counts = RUN.counts``, ``counts[DEPTH] += 1`` and
    ``started = counts[MADE]`` as it starts; as it ends (also when it raised)
    ``counts[DEPTH] -= 1``, then this, only where ``counts[MADE] != started`` (errors were
    deferred while it ran; otherwise the errors deferred during runs, if any, are those of
    enclosing graphs, which hand them on as they end). Counting is cheaper than collecting
    on every call, when errors are rare.
    """
    state = RUN
    new = state.counts[MADE] - started
    if new > 0 and state.during_run:
        first = state.during_run[-min(new, len(state.during_run))]
        if results is not None:
            for r in (results if isinstance(results, (tuple, list)) else (results,)):
                if r is not None and hasattr(r, '__dict__'):
                    setattr(r, _ATTR, first)
    if not state.counts[DEPTH] and state.during_run:
        state.during_run = ()


def raise_deferred(tensor):
    """Raise the error deferred on ``tensor``, if it was not raised yet."""
    record = tensor.__dict__.get(_ATTR)
    if record is not None:
        error = record.take()
        if error is not None:
            raise error


def raise_pending():
    """Raise one deferred error not raised yet, if any (``mx.nd.waitall``)."""
    for record in list(_PENDING):
        error = record.take()
        if error is not None:
            raise error


def carry(inputs, results):
    """Hand an input's pending error on to ``results`` (a tensor or a sequence of them);
    called by operators only while ``LIVE[0]``. Returns ``results``."""
    for t in inputs:
        record = getattr(t, '__dict__', {}).get(_ATTR) if t is not None else None
        if record is not None and not record.raised:
            for r in (results if isinstance(results, (tuple, list)) else (results,)):
                if r is not None and r is not t:
                    setattr(r, _ATTR, record)
            break
    return results
