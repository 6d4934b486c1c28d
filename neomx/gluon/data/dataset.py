"""Datasets: indexable collections of samples, with lazy transforms and views."""
import os

from ... import recordio
from ...ndarray.ndarray import NDArray

__all__ = ['Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset']


class Dataset:
    """Abstract dataset: ``__getitem__(idx)`` returns a sample and ``__len__`` their number.

    Example
    -------
    >>> class Squares(mx.gluon.data.Dataset):
    ...     def __getitem__(self, idx):
    ...         return idx * idx
    ...     def __len__(self):
    ...         return 4
    >>> dataset = Squares()
    >>> [dataset[i] for i in range(len(dataset))]
    [0, 1, 4, 9]
    >>> squares = dataset.transform(lambda x: x + 1)
    >>> [squares[i] for i in range(len(squares))]
    [1, 2, 5, 10]
    >>> evens = dataset.filter(lambda x: x % 2 == 0)
    >>> [evens[i] for i in range(len(evens))]
    [0, 4]
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """A view of the samples for which ``fn(sample)`` is true."""
        from .sampler import FilterSampler
        return self.sample(FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Shard ``index`` of ``num_shards`` contiguous shards (the first ones one longer if uneven)."""
        assert index < num_shards, 'Shard index of out bound: %d out of %d' % (index, num_shards)
        assert num_shards > 0, 'Number of shards must be greater than 0'
        assert index >= 0, 'Index must be non-negative'
        from .sampler import SequentialSampler
        base, rest = divmod(len(self), num_shards)
        start = base * index + min(index, rest)
        return self.sample(SequentialSampler(base + (index < rest), start))

    def take(self, count):
        """A view of the first ``count`` samples (all of them when ``count`` is None or larger)."""
        from .sampler import SequentialSampler
        if count is None or count > len(self):
            count = len(self)
        return self.sample(SequentialSampler(count))

    def sample(self, sampler):
        """A view of the samples at the indices ``sampler`` yields."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError('Invalid sampler type: %s. Expected gluon.data.Sampler instead.' % type(sampler))
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Apply ``fn(*sample)`` to every sample, when read (``lazy``) or now.

        Returns
        -------
        Dataset
            A lazy view, or a :class:`SimpleDataset` of the transformed samples.
        """
        view = _LazyTransformDataset(self, fn)
        if lazy:
            return view
        return SimpleDataset([view[i] for i in range(len(view))])

    def transform_first(self, fn, lazy=True):
        """Apply ``fn`` to the first element of each sample only (the data, not the label)."""
        return self.transform(_TransformFirst(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any indexable sequence (a list, a numpy array...).

    Example
    -------
    >>> dataset = mx.gluon.data.SimpleDataset([1, 2, 3, 4])
    >>> len(dataset), dataset[2]
    (4, 3)
    >>> dataset.transform(lambda x: x * 10)[2]
    30
    """

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """Applies ``fn`` to each sample of ``data`` when it is read."""

    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirst:
    """``(x, *rest) -> (fn(x), *rest)``; a class rather than a closure so it pickles."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *rest):
        if rest:
            return (self._fn(x),) + rest
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the indices of ``sampler``, in order."""

    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._indices = list(sampler)

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Samples zipped from several equally long arrays (numpy, NDArray, lists...).

    A 1-D NDArray is converted to numpy so its items are scalars, as in MXNet. With one
    array the samples are its items; with several they are tuples.

    Example
    -------
    >>> dataset = mx.gluon.data.ArrayDataset(mx.nd.arange(6).reshape((3, 2)), [0, 1, 0])
    >>> len(dataset)
    3
    >>> x, y = dataset[1]
    >>> x.asnumpy(), y
    (array([2., 3.], dtype=float32), 1)
    """

    def __init__(self, *args):
        assert len(args) > 0, 'Needs at least 1 arrays'
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            assert len(data) == self._length, (
                'All arrays must have the same length; array[0] has length %d while array[%d] has %d.'
                % (self._length, i, len(data)))
            if isinstance(data, NDArray) and data.ndim == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a ``.rec`` file, as bytes, through its ``.idx`` index (same name).

    Parameters
    ----------
    filename : str
        Path of the ``.rec`` file; ``<name>.idx`` must sit next to it.

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> rec, idx = os.path.join(folder.name, 'data.rec'), os.path.join(folder.name, 'data.idx')
    >>> writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    >>> for i, text in enumerate([b'first', b'second', b'third']):
    ...     writer.write_idx(i, text)
    >>> writer.close()
    >>> dataset = mx.gluon.data.RecordFileDataset(rec)
    >>> len(dataset), dataset[1]
    (3, b'second')
    >>> folder.cleanup()
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + '.idx'
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, 'r')

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
