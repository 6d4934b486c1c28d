"""Samplers: iterables of dataset indices (or of batches of indices)."""
import numpy as np

from ...base import MXNetValueError, check_batch_size

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'FilterSampler', 'BatchSampler']

_LAST_BATCH = ('keep', 'discard', 'rollover')


def check_last_batch(last_batch):
    """Raise ValueError unless ``last_batch`` is 'keep', 'discard' or 'rollover'."""
    if last_batch not in _LAST_BATCH:
        raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', but got %s"
                         % last_batch)


class Sampler:
    """Base class: ``iter(sampler)`` yields indices, ``len(sampler)`` counts them.

    Example
    -------
    >>> class EvenSampler(mx.gluon.data.Sampler):
    ...     def __init__(self, length):
    ...         self._length = length
    ...     def __iter__(self):
    ...         return iter(range(0, self._length, 2))
    ...     def __len__(self):
    ...         return (self._length + 1) // 2
    >>> list(EvenSampler(7)), len(EvenSampler(7))
    ([0, 2, 4, 6], 4)
    """

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``.

    Example
    -------
    >>> list(mx.gluon.data.SequentialSampler(4)), list(mx.gluon.data.SequentialSampler(3, start=5))
    ([0, 1, 2, 3], [5, 6, 7])
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A fresh random permutation of ``range(length)`` every epoch (numpy's global RNG).

    Example
    -------
    >>> np.random.seed(0)
    >>> sampler = mx.gluon.data.RandomSampler(5)
    >>> sorted(sampler), len(sampler)                 # every index once, in a random order
    ([0, 1, 2, 3, 4], 5)
    """

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true.

    Example
    -------
    >>> dataset = mx.gluon.data.SimpleDataset([3, 8, 1, 10, 7])
    >>> list(mx.gluon.data.FilterSampler(lambda x: x > 5, dataset))
    [1, 3, 4]
    """

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
    batch_size : int
    last_batch : {'keep', 'discard', 'rollover'}
        The incomplete last batch is yielded, dropped, or prepended to the next epoch.
        Checked when iterated, as in MXNet.

    Example
    -------
    >>> sampler = mx.gluon.data.SequentialSampler(5)
    >>> list(mx.gluon.data.BatchSampler(sampler, 2, 'keep'))
    [[0, 1], [2, 3], [4]]
    >>> list(mx.gluon.data.BatchSampler(sampler, 2, 'discard'))
    [[0, 1], [2, 3]]
    >>> rollover = mx.gluon.data.BatchSampler(sampler, 2, 'rollover')
    >>> list(rollover), list(rollover)          # the left-over 4 starts the next epoch
    ([[0, 1], [2, 3]], [[4, 0], [1, 2], [3, 4]])
    """

    def __init__(self, sampler, batch_size, last_batch='keep'):
        check_batch_size(batch_size, 'BatchSampler', MXNetValueError)
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            check_last_batch(self._last_batch)
            if self._last_batch == 'keep':
                yield batch
            elif self._last_batch == 'rollover':
                self._prev = batch

    def __len__(self):
        check_last_batch(self._last_batch)
        if self._last_batch == 'keep':
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == 'discard':
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
