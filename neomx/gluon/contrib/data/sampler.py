"""Contributed dataset samplers."""
from ...data import sampler

__all__ = ['IntervalSampler']


class IntervalSampler(sampler.Sampler):
    """Indices of ``[0, length)`` taken every ``interval`` steps.

    The first pass yields ``0, interval, 2 * interval, ...``; with ``rollover`` further
    passes start at offsets ``1, 2, ..., interval - 1`` so that every index is visited
    exactly once (``IntervalSampler(13, 3)`` gives ``0, 3, 6, 9, 12, 1, 4, ..., 11``).

    Parameters
    ----------
    length : int
        Number of indices.
    interval : int
        Step between two consecutive samples of a pass; at most ``length``.
    rollover : bool, default True
        Continue from the skipped offsets after the first pass; without it only the first
        pass is yielded.

    Notes
    -----
    As in MXNet, ``len()`` is ``length`` even when ``rollover=False`` yields fewer indices.

    Example
    -------
    >>> list(mx.gluon.contrib.data.IntervalSampler(7, 3))
    [0, 3, 6, 1, 4, 2, 5]
    >>> list(mx.gluon.contrib.data.IntervalSampler(7, 3, rollover=False))
    [0, 3, 6]
    """

    def __init__(self, length, interval, rollover=True):
        if interval > length:
            raise AssertionError('Interval {} must be smaller than or equal to length {}'
                                 .format(interval, length))
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for offset in range(self._interval if self._rollover else 1):
            yield from range(offset, self._length, self._interval)

    def __len__(self):
        return self._length
