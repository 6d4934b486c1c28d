"""Engine properties: ``mx.engine.bulk`` and ``mx.engine.set_bulk_size``.

MXNet's asynchronous engine can bundle up to ``size`` consecutive operators into one
scheduled unit ("bulk execution"). neomx runs every operator eagerly through torch, so
there is nothing to bundle: the size is accepted and remembered per thread, as MXNet
keeps it, so code that sets and restores it runs unchanged, but it changes no behaviour.
"""
import operator
import threading

__all__ = ['set_bulk_size', 'bulk']

# names MXNet's module also holds (imported from its base module)
from .base import check_call  # noqa: E402,F401

_bulk = threading.local()       # MXNet's bulk size is a per-thread engine setting


def set_bulk_size(size):
    """Set the maximum number of operators bundled in a bulk (recorded only).

    Parameters
    ----------
    size : int
        Maximum number of operators per bulk.

    Returns
    -------
    int
        The previous bulk size of this thread (0 before any call).
    """
    size = operator.index(size)     # TypeError for floats, strings and None, as MXNet
    previous = getattr(_bulk, 'size', 0)
    _bulk.size = size
    return previous


class _BulkScope:
    """Context manager that sets the bulk size on entry and restores the old one on exit."""

    def __init__(self, size):
        self._size = size
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        set_bulk_size(self._old_size)


def bulk(size):
    """Scope within which the bulk size is ``size``.

    Examples
    --------
    >>> with mx.engine.bulk(10):
    ...     x = mx.nd.zeros((1,))
    ...     for i in range(100):
    ...         x += 1
    """
    return _BulkScope(size)
