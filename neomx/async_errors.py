"""Operator errors reported when a result is read, as MXNet's asynchronous engine reports them.

MXNet checks some operator inputs inside the kernel (``take`` with ``mode='raise'`` and an
out-of-range index, a sampler's ``scale`` that is not positive): the call returns, and the
error is raised by the first ``asnumpy()``, ``asscalar()`` or ``wait_to_read()`` of the
result -- or of anything computed from it -- or by ``mx.nd.waitall()``, once. neomx keeps
such an error on the result's tensor (:func:`defer_error`); imperative operators hand it on
to their results (:func:`carry`, only while some error is pending: ``LIVE``), the
NDArray's read methods call :func:`raise_deferred` and ``waitall`` :func:`raise_pending`.
A compiled graph (executors, hybridized blocks) hands the errors deferred while it ran to
all its outputs (:class:`collected`). Errors of arguments (shapes, attribute values) stay
immediate.
"""
import threading
import weakref

__all__ = ['defer_error', 'raise_deferred', 'raise_pending', 'carry', 'collected', 'deferred_count',
           'attach_deferred_since', 'LIVE']

_ATTR = '_mx_deferred_error'
LIVE = [0]              # deferred errors not raised yet (a cheap test for the operators)
_PENDING = weakref.WeakSet()


class _Collecting(threading.local):
    bucket = None       # the errors deferred while the current ``collected`` scope runs
    made = 0            # errors deferred by this thread so far
    recent = ()         # the last of them (at most _RECENT), newest last


_RECENT = 64


_COLLECTING = _Collecting()


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
    state = _COLLECTING
    if state.bucket is not None:
        state.bucket.append(record)
    state.made += 1
    state.recent = (state.recent + (record,))[-_RECENT:]
    return tensor


def deferred_count():
    """How many errors this thread has deferred: a compiled graph compares it before and
    after running (cheaper than a ``collected`` scope on every call, when errors are rare)."""
    return _COLLECTING.made


def attach_deferred_since(count, results):
    """Put the first error this thread deferred after :func:`deferred_count` gave ``count``
    on ``results`` (a tensor or a sequence of them); returns ``results``."""
    state = _COLLECTING
    new = state.made - count
    if new > 0 and state.recent:
        first = state.recent[-min(new, len(state.recent))]
        for r in (results if isinstance(results, (tuple, list)) else (results,)):
            if r is not None and hasattr(r, '__dict__'):
                setattr(r, _ATTR, first)
    return results


class collected:
    """``with collected() as errors:`` lists (and keeps alive) the errors deferred inside;
    ``errors.attach(results)`` puts the first on ``results`` (a tensor or a sequence)."""
    __slots__ = ('records', 'outer')

    def __enter__(self):
        self.outer, self.records = _COLLECTING.bucket, []
        _COLLECTING.bucket = self.records
        return self

    def __exit__(self, *exc):
        _COLLECTING.bucket = self.outer
        if self.outer is not None:
            self.outer.extend(self.records)

    def attach(self, results):
        if self.records:
            for r in (results if isinstance(results, (tuple, list)) else (results,)):
                if r is not None and hasattr(r, '__dict__'):
                    setattr(r, _ATTR, self.records[0])
        return results


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
