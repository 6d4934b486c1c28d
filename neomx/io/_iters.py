"""Data iterators: DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter, PrefetchingIter,
MXDataIter."""
import threading
from collections import OrderedDict, namedtuple

import numpy as np

from ..base import MXNetError, check_batch_size
from ..ndarray.ndarray import NDArray, array

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter',
           'MXDataIter']


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """Name, shape, dtype and layout of one input of a network.

    A ``(name, shape)`` named tuple (so old code unpacking pairs keeps working) that also
    carries ``dtype`` (default float32) and ``layout`` (default ``'NCHW'``).

    Example
    -------
    >>> desc = mx.io.DataDesc('data', (32, 3, 28, 28))
    >>> desc
    DataDesc[data,(32, 3, 28, 28),<class 'numpy.float32'>,NCHW]
    >>> name, shape = desc                      # still a (name, shape) pair
    >>> name, shape, desc.layout
    ('data', (32, 3, 28, 28), 'NCHW')
    >>> mx.io.DataDesc.get_batch_axis('TNC')
    1
    """

    def __new__(cls, name, shape, dtype=np.float32, layout='NCHW'):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return 'DataDesc[%s,%s,%s,%s]' % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """Position of ``N`` in ``layout`` (0 when the layout is None)."""
        return 0 if layout is None else layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optional ``[(name, dtype)]``."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types)
        return [DataDesc(name, shape, dtypes[name]) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label arrays.

    Parameters
    ----------
    data, label : list of NDArray
    pad : int
        Number of padding samples at the end of the batch (filled from the start).
    index : numpy array, optional
        Indices of the samples.
    provide_data, provide_label : list of DataDesc, optional

    Example
    -------
    >>> batch = mx.io.DataBatch(data=[mx.nd.ones((4, 3))], label=[mx.nd.zeros(4)], pad=1)
    >>> print(batch)
    DataBatch: data shapes: [(4, 3)] label shapes: [(4,)]
    >>> batch.pad
    1
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), 'Data must be list of NDArrays'
        if label is not None:
            assert isinstance(label, (list, tuple)), 'Label must be list of NDArrays'
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        shapes = lambda arrays: [a.shape for a in arrays] if arrays else None
        return '{}: data shapes: {} label shapes: {}'.format(type(self).__name__, shapes(self.data),
                                                             shapes(self.label))


class DataIter:
    """Base class of data iterators: ``next()`` returns :class:`DataBatch` until StopIteration.

    Subclasses implement ``iter_next``, ``getdata``, ``getlabel`` (and optionally
    ``getindex``, ``getpad``) or override ``next`` itself.

    Example
    -------

    A minimal iterator, yielding three batches of constant data:

    >>> class Constant(mx.io.DataIter):
    ...     def __init__(self):
    ...         super().__init__(batch_size=2)
    ...         self.count = 0
    ...     def reset(self):
    ...         self.count = 0
    ...     def iter_next(self):
    ...         self.count += 1
    ...         return self.count <= 3
    ...     def getdata(self):
    ...         return [mx.nd.full((2, 2), self.count)]
    ...     def getlabel(self):
    ...         return [mx.nd.zeros(2)]
    >>> [float(batch.data[0][0, 0].asscalar()) for batch in Constant()]
    [1.0, 2.0, 3.0]
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Rewind to the first batch."""

    def next(self):
        """The next batch; StopIteration at the end of the epoch."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; whether there is one."""

    def getdata(self):
        """The data arrays of the current batch."""

    def getlabel(self):
        """The label arrays of the current batch."""

    def getindex(self):
        """The sample indices of the current batch (None when unknown)."""
        return None

    def getpad(self):
        """Number of padding samples in the current batch."""


def _named_arrays(data, allow_empty, default_name):
    """``[(name, NDArray)]`` sorted by name, from an array, a list or a dict of arrays.

    One unnamed array is called ``default_name``; several are ``_0_<default_name>``... As
    in MXNet, numpy data becomes float32 NDArrays whatever its dtype.
    """
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert data, 'NDArrayIter needs at least one data array'
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([('_%d_%s' % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError('Input must be NDArray, numpy.ndarray, a list of them or dict with them as values')
    named = []
    for name, values in data.items():
        if hasattr(values, 'tocsr') and hasattr(values, 'toarray'):     # scipy.sparse matrix
            from ..ndarray.sparse import csr_matrix
            values = csr_matrix(values)
        if not isinstance(values, NDArray):
            try:
                values = array(values)
            except Exception:
                raise TypeError("Invalid type '%s' for %s, should be NDArray or numpy.ndarray"
                                % (type(values), name)) from None
        named.append((name, values))
    return sorted(named, key=lambda item: item[0])


class NDArrayIter(DataIter):
    """Iterate over in-memory arrays in batches.

    Parameters
    ----------
    data, label : array, list of arrays or dict name -> array, optional
    batch_size : int
    shuffle : bool
        Shuffle the samples (at construction and at every ``reset``).
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        What to do with the incomplete last batch: fill it up with samples from the start
        (``pad``, reported by ``getpad``), drop it, or carry it over into the first batch
        of the next epoch (whose ``getpad`` then reports the carried count, as MXNet does).
    data_name, label_name : str
        Names of a single unnamed data/label array.
    layout : str, default 'NCHW'
        Layout of the arrays: the position of ``N`` is the batch axis they are sliced along
        (every array, labels too, must have it), and ``provide_data`` carries the layout.

    Example
    -------
    >>> it = mx.io.NDArrayIter(np.arange(10).reshape((5, 2)), np.arange(5), batch_size=2,
    ...                        last_batch_handle='pad')
    >>> it.provide_data
    [DataDesc[data,(2, 2),<class 'numpy.float32'>,NCHW]]
    >>> it.provide_label
    [DataDesc[softmax_label,(2,),<class 'numpy.float32'>,NCHW]]
    >>> [(batch.data[0].shape, batch.pad) for batch in it]
    [((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
    >>> it.reset()
    >>> next(it).label[0]
    <BLANKLINE>
    [0. 1.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle='pad',
                 data_name='data', label_name='softmax_label', layout='NCHW'):
        super().__init__(batch_size)
        check_batch_size(batch_size, 'NDArrayIter')
        self.layout = layout
        self._axis = DataDesc.get_batch_axis(layout)
        if last_batch_handle not in ('pad', 'discard', 'roll_over'):
            raise ValueError("last_batch_handle must be 'pad', 'discard' or 'roll_over', got %r"
                             % (last_batch_handle,))
        self._sources = (_named_arrays(data, False, data_name), _named_arrays(label, True, label_name))
        if last_batch_handle != 'discard' and any(
                v.stype == 'csr' for _, v in self._sources[0] + self._sources[1]):
            raise NotImplementedError("`NDArrayIter` only supports ``CSRNDArray`` with "
                                      "`last_batch_handle` set to `discard`.")
        self.data, self.label = self._sources
        # as MXNet: the first data array sets the number of samples; other arrays are sliced
        # by the same indices, so longer ones are cut and shorter ones fail at their batch
        n = self.data[0][1].shape[self._axis]
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.idx = np.arange(n)
        if shuffle:
            self._shuffle_data()
        self.num_data = n - n % batch_size if last_batch_handle == 'discard' else n
        self.num_source = len(self.data) + len(self.label)
        self.cursor = -batch_size
        self._carried = None        # roll_over: (data, label) of the last epoch's incomplete batch

    def _descs(self, named):
        axis = self._axis
        return [DataDesc(k, v.shape[:axis] + (self.batch_size,) + v.shape[axis + 1:], v.dtype,
                         layout=self.layout) for k, v in named]

    @property
    def provide_data(self):
        return self._descs(self.data)

    @property
    def provide_label(self):
        return self._descs(self.label)

    def hard_reset(self):
        """Rewind to the very start, dropping any rolled-over samples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._carried = None

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        if self._carried is not None:
            # the first batch of the new epoch takes only batch_size - len(carried) new samples
            self.cursor -= self.num_data + self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if self.cursor < 0:
            self._carried = None
        elif data[0].shape[self._axis] != self.batch_size:      # roll_over: keep the tail for next epoch
            self._carried = (data, label)
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def getdata(self):
        return self._batch_of(self.data, 0)

    def getlabel(self):
        return self._batch_of(self.label, 1)

    def getpad(self):
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _batch_of(self, sources, which):
        """The current batch of ``sources`` (data: which=0, label: which=1)."""
        assert self.cursor < self.num_data, 'DataIter needs reset.'
        end = self.cursor + self.batch_size
        if self.cursor < 0:
            from .. import ndarray as nd
            return [nd.concat(old, self._rows(values, slice(0, end)), dim=self._axis)
                    for old, (_, values) in zip(self._carried[which], sources)]
        if self.last_batch_handle == 'pad' and end > self.num_data:
            wrapped = np.arange(self.cursor, end) % self.num_data
            return [self._rows(values, wrapped) for _, values in sources]
        for name, values in sources:
            if min(end, self.num_data) > values.shape[self._axis]:
                raise MXNetError('NDArrayIter: %s has %d samples, too few for the batch [%d, %d)'
                                 % (name, values.shape[self._axis], self.cursor, end))
        return [self._rows(values, slice(self.cursor, end)) for _, values in sources]

    def _rows(self, values, index):
        """``values[index]`` along the batch axis (a slice or an index array)."""
        if self._axis == 0:
            return values[index]
        if isinstance(index, slice):
            return values.slice_axis(axis=self._axis, begin=index.start, end=index.stop)
        from .. import ndarray as nd
        return nd.take(values, nd.array(index, dtype='int64'), axis=self._axis)

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        self.data, self.label = ([(k, self._rows(v, self.idx)) for k, v in named]
                                 for named in self._sources)


class _WrappingIter(DataIter):
    """An iterator that serves batches it got from other iterators (``current_batch``)."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_WrappingIter):
    """Make an iterator yield exactly ``size`` batches per epoch (restarting it as needed).

    Parameters
    ----------
    data_iter : DataIter
    size : int
    reset_internal : bool
        Reset the inner iterator at every ``reset``.

    Example
    -------
    >>> inner = mx.io.NDArrayIter(np.arange(6).reshape((6, 1)), batch_size=2)      # 3 batches
    >>> resized = mx.io.ResizeIter(inner, 5)
    >>> [batch.data[0].asnumpy().ravel().tolist() for batch in resized]          # restarts inner
    [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [0.0, 1.0], [2.0, 3.0]]
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__(data_iter.batch_size)
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True



class PrefetchingIter(_WrappingIter):
    """Read batches of one or more iterators ahead, in background threads.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        Batches of several iterators are merged (their data and label lists concatenated).
    rename_data, rename_label : list of dict, optional
        Per iterator, new names for its provide_data/provide_label entries.

    Example
    -------
    >>> data = mx.io.NDArrayIter(np.arange(8).reshape((4, 2)), batch_size=2)
    >>> it = mx.io.PrefetchingIter(data)
    >>> [batch.data[0].shape for batch in it]
    [(2, 2), (2, 2)]
    >>> it.provide_data
    [DataDesc[data,(2, 2),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        self.iters = iters if isinstance(iters, list) else [iters]
        self.rename_data, self.rename_label = rename_data, rename_label
        self.batch_size = self.provide_data[0][1][0]
        self._ready = [threading.Event() for _ in self.iters]
        self._taken = [threading.Event() for _ in self.iters]
        self._batches = [None] * len(self.iters)
        self._started = True
        for taken in self._taken:
            taken.set()
        self._threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                         for i in range(len(self.iters))]
        for thread in self._threads:
            thread.start()
        self.current_batch = None

    def _prefetch(self, i):
        while True:
            self._taken[i].wait()
            if not self._started:
                return
            try:
                self._batches[i] = self.iters[i].next()
            except StopIteration:
                self._batches[i] = None
            self._taken[i].clear()
            self._ready[i].set()

    def __del__(self):
        self._started = False
        for taken in getattr(self, '_taken', ()):
            taken.set()

    def _descs(self, attr, renames):
        descs = []
        for i, it in enumerate(self.iters):
            for desc in getattr(it, attr):
                if renames is not None and isinstance(desc, DataDesc):
                    desc = DataDesc(renames[i].get(desc.name, desc.name), desc.shape, desc.dtype, desc.layout)
                elif renames is not None:
                    desc = (renames[i].get(desc[0], desc[0]), desc[1])
                descs.append(desc)
        return descs

    @property
    def provide_data(self):
        return self._descs('provide_data', self.rename_data)

    @property
    def provide_label(self):
        return self._descs('provide_label', self.rename_label)

    def reset(self):
        for ready in self._ready:
            ready.wait()
        for it in self.iters:
            it.reset()
        for ready, taken in zip(self._ready, self._taken):
            ready.clear()
            taken.set()

    def iter_next(self):
        for ready in self._ready:
            ready.wait()
        if self._batches[0] is None:
            for batch in self._batches:
                assert batch is None, 'Number of entries mismatches between iterators'
            return False
        for batch in self._batches:
            assert batch.pad == self._batches[0].pad, 'Number of entries mismatches between iterators'
        self.current_batch = DataBatch(sum([b.data for b in self._batches], []),
                                       sum([b.label or [] for b in self._batches], []),
                                       self._batches[0].pad, self._batches[0].index,
                                       provide_data=self.provide_data, provide_label=self.provide_label)
        for ready, taken in zip(self._ready, self._taken):
            ready.clear()
            taken.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration



class MXDataIter(_WrappingIter):
    """A single-input iterator over a backend iterator ``handle``, MXNet's wrapper of its C++
    iterators; in neomx the handle is any iterator of :class:`DataBatch` with ``next`` and
    ``reset`` (``ImageRecordIter``, ``CSVIter``...).

    The first batch is read at construction to describe the data (``provide_data``,
    ``provide_label`` under ``data_name``/``label_name``); ``getdata``/``getlabel`` return
    the batch's first data/label array.

    Examples
    --------
    >>> inner = mx.io.NDArrayIter(np.arange(8).reshape(4, 2), np.arange(4), batch_size=2)
    >>> it = mx.io.MXDataIter(inner, data_name='x', label_name='y')
    >>> it.provide_data
    [DataDesc[x,(2, 2),<class 'numpy.float32'>,NCHW]]
    >>> [b.label[0].asnumpy().tolist() for b in it]
    [[0.0, 1.0], [2.0, 3.0]]
    """

    def __init__(self, handle, data_name='data', label_name='softmax_label', **_):
        super().__init__(getattr(handle, 'batch_size', 0))
        self.handle = handle
        self.first_batch = self.current_batch = None
        self.first_batch = self.handle.next()
        data, label = self.first_batch.data[0], self.first_batch.label[0]
        self.provide_data = [DataDesc(data_name, data.shape, data.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, label.dtype)]
        self.batch_size = data.shape[0]

    def reset(self):
        self.first_batch = None
        self.handle.reset()

    def iter_next(self):
        if self.first_batch is not None:
            self.current_batch, self.first_batch = self.first_batch, None
            return True
        try:
            self.current_batch = self.handle.next()
        except StopIteration:
            return False
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())

    def getdata(self):
        return self.current_batch.data[0]

    def getlabel(self):
        return self.current_batch.label[0]
