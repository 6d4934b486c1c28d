"""Per-thread switches read on hot paths, with a process-wide count of the threads that
have them on.

A ``threading.local`` attribute costs several times a global's read. Where a switch is off
nearly always (NumPy array semantics, a block's trace), the readers test the count first,
``if SWITCH.on[0] and STATE.flag:``: while no thread has it on, one list read answers.
"""
import threading

__all__ = ['ThreadCount']


class ThreadCount:
    """How many threads have a per-thread switch on now: ``on[0]`` (a thread that ended
    with it on still counts, which only costs its readers the thread-local read).

    Example
    -------
    >>> from neomx._thread_switches import ThreadCount
    >>> count = ThreadCount()
    >>> count.turned(False, True)       # this thread's switch goes on
    >>> count.on[0]
    1
    >>> count.turned(True, True)        # no change
    >>> count.turned(True, False)
    >>> count.on[0]
    0
    """

    def __init__(self):
        self.on = [0]
        self._lock = threading.Lock()      # += on a list item is no atomic step

    def turned(self, was_on, now_on):
        """Count a thread's switch going from ``was_on`` to ``now_on``."""
        if bool(was_on) != bool(now_on):
            with self._lock:
                self.on[0] += 1 if now_on else -1
