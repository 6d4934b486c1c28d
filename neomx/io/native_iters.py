"""MXNet's built-in file iterators that need no image decoding: CSVIter, MNISTIter, LibSVMIter.

They read their files whole into memory (the files these iterators are used with are small
enough), then batch as MXNet's C++ iterators do: ``round_batch`` wraps the last batch around to
the start of the data and the next epoch goes on from there, MNISTIter drops an incomplete last
batch. Outputs are named ``data`` and ``softmax_label``.
"""
import gzip
import struct

import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import array
from ._iters import DataBatch, DataDesc, DataIter

__all__ = ['CSVIter', 'MNISTIter', 'LibSVMIter']


class _InMemoryIter(DataIter):
    """Batches of in-memory (data, label) numpy arrays with MXNet's C++ iterator batching."""

    def __init__(self, data, label, batch_size, round_batch=True, drop_last=False,
                 data_name='data', label_name='softmax_label', dtype=np.float32):
        super().__init__(batch_size)
        if batch_size <= 0:
            raise MXNetError('%s: batch_size must be positive, got %d' % (type(self).__name__, batch_size))
        if len(data) != len(label):
            raise MXNetError('%s: %d data rows but %d labels' % (type(self).__name__, len(data), len(label)))
        self._data, self._label = data, label
        self._round_batch, self._drop_last = round_batch, drop_last
        self._names = (data_name, label_name)
        self._dtype = dtype
        self._start = 0          # where the next epoch begins (round_batch carries the wrap over)
        self._cursor = None
        self._previous = None    # the last batch; round_batch=False pads with its stale rows
        self._batch = None
        self.reset()

    @property
    def provide_data(self):
        return [DataDesc(self._names[0], (self.batch_size,) + self._data.shape[1:], self._dtype)]

    @property
    def provide_label(self):
        return [DataDesc(self._names[1], (self.batch_size,) + self._label.shape[1:], np.float32)]

    def reset(self):
        self._cursor = self._start
        self._start = 0
        self._batch = None

    def iter_next(self):
        n = len(self._data)
        if self._cursor >= n:
            return False
        end = self._cursor + self.batch_size
        rows = np.arange(self._cursor, min(end, n))
        pad = end - n if end > n else 0
        if pad and self._drop_last:
            self._cursor = n
            return False
        if pad and self._round_batch:
            rows = np.concatenate([rows, np.arange(pad) % n])
            self._start = pad % n
        data, label = self._data[rows], self._label[rows]
        if pad and not self._round_batch:
            data = np.concatenate([data, self._stale(0, data.shape[1:], pad)])
            label = np.concatenate([label, self._stale(1, label.shape[1:], pad)])
        self._previous = (data, label)
        self._batch = (data, label, pad, rows)
        self._cursor = end
        return True

    def _stale(self, which, shape, pad):
        if self._previous is None:
            return np.zeros((pad,) + shape, dtype=self._data.dtype if which == 0 else np.float32)
        return self._previous[which][self.batch_size - pad:]

    def getdata(self):
        """The data of the current batch (one NDArray, as MXNet's C++ iterators return)."""
        return array(self._batch[0], dtype=self._dtype)

    def getlabel(self):
        """The label of the current batch (one NDArray)."""
        return array(self._batch[1], dtype=np.float32)

    def getpad(self):
        return self._batch[2]

    def getindex(self):
        return self._batch[3].astype(np.uint64)

    def next(self):
        if self.iter_next():
            return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                             index=self.getindex(), provide_data=self.provide_data,
                             provide_label=self.provide_label)
        raise StopIteration


def _read_csv(path, shape, dtype, what):
    try:
        values = np.loadtxt(path, delimiter=',', dtype=np.float64 if dtype == np.float32 else dtype,
                            ndmin=2)
    except (OSError, ValueError) as err:
        raise MXNetError('CSVIter: cannot read %s %s: %s' % (what, path, err)) from err
    if values.shape[1] != int(np.prod(shape)):
        raise MXNetError('CSVIter: %s %s has rows of %d values, %s_shape %s needs %d'
                         % (what, path, values.shape[1], what, tuple(shape), int(np.prod(shape))))
    return values.astype(dtype).reshape((len(values),) + tuple(shape))


class CSVIter(_InMemoryIter):
    """Batches of rows of a CSV file (MXNet's ``mx.io.CSVIter``).

    Parameters
    ----------
    data_csv : str
        CSV file of the data; each row holds ``prod(data_shape)`` values.
    data_shape : tuple
    label_csv : str, optional
        CSV file of the labels (zeros when not given).
    label_shape : tuple
        Shape of one label, ``(1,)`` by default (batches of labels are then 1-D).
    batch_size : int
    round_batch : bool
        Fill the last batch from the start of the data (and begin the next epoch after it);
        otherwise the last batch is padded with rows of the batch before it.
    dtype : {'float32', 'int32', 'int64'}
    data_name, label_name : str
        The names in ``provide_data`` / ``provide_label`` ('data', 'softmax_label').

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, 'data.csv')
    >>> np.savetxt(path, np.arange(10).reshape((5, 2)), delimiter=',')
    >>> it = mx.io.CSVIter(data_csv=path, data_shape=(2,), batch_size=2)
    >>> [(batch.data[0].asnumpy().tolist(), batch.pad) for batch in it]      # the last batch wraps
    [([[0.0, 1.0], [2.0, 3.0]], 0), ([[4.0, 5.0], [6.0, 7.0]], 0), ([[8.0, 9.0], [0.0, 1.0]], 1)]
    >>> folder.cleanup()
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, dtype='float32', prefetch_buffer=4, ctx='cpu', data_name='data',
                 label_name='softmax_label', **kwargs):
        dtype = np.dtype(dtype).type
        if dtype not in (np.float32, np.int32, np.int64):
            raise MXNetError('CSVIter: dtype must be float32, int32 or int64, got %s' % (dtype,))
        data = _read_csv(data_csv, data_shape, dtype, 'data')
        if label_csv is None or label_csv == 'NULL':
            label = np.zeros((len(data),) + tuple(label_shape), dtype=np.float32)
        else:
            label = _read_csv(label_csv, label_shape, np.float32, 'label')
        if tuple(label_shape) == (1,):
            label = label.reshape(len(label))
        super().__init__(data, label, batch_size, round_batch=round_batch, dtype=dtype,
                         data_name=data_name, label_name=label_name)


def _read_idx(path, what):
    opener = gzip.open if path.endswith('.gz') else open
    try:
        with opener(path, 'rb') as f:
            raw = f.read()
    except OSError as err:
        raise MXNetError('MNISTIter: cannot read %s file %s: %s' % (what, path, err)) from err
    if len(raw) < 8:
        raise MXNetError('MNISTIter: %s file %s is too short (%d bytes)' % (what, path, len(raw)))
    ndim = raw[3]
    dims = struct.unpack('>%dI' % ndim, raw[4:4 + 4 * ndim])
    body = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise MXNetError('MNISTIter: %s file %s holds %d bytes of values, its header says %s'
                         % (what, path, body.size, dims))
    return body.reshape(dims)


class MNISTIter(_InMemoryIter):
    """Batches of MNIST from its IDX files (MXNet's ``mx.io.MNISTIter``).

    Images are float32 in [0, 1) (pixel / 256), (batch, 1, 28, 28) or (batch, 784) when
    ``flat``; labels float32 (batch,). An incomplete last batch is dropped.

    Parameters
    ----------
    image, label : str
        IDX files (optionally gzipped).
    batch_size : int
    shuffle : bool
        Shuffle once, with ``seed``, when the files are read.
    flat : bool
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` equal parts (distributed training).
    data_name, label_name : str
        The names in ``provide_data`` / ``provide_label`` ('data', 'softmax_label').

    Example
    -------

    Two tiny IDX files of 4 images and their labels:

    >>> import os, struct, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> images, labels = os.path.join(folder.name, 'img'), os.path.join(folder.name, 'lbl')
    >>> with open(images, 'wb') as f:
    ...     _ = f.write(struct.pack('>4B3I', 0, 0, 8, 3, 4, 28, 28) + bytes(4 * 28 * 28))
    >>> with open(labels, 'wb') as f:
    ...     _ = f.write(struct.pack('>4BI', 0, 0, 8, 1, 4) + bytes([3, 1, 4, 1]))
    >>> it = mx.io.MNISTIter(image=images, label=labels, batch_size=2, shuffle=False)
    >>> batch = it.next()
    >>> batch.data[0].shape, batch.label[0].asnumpy()
    ((2, 1, 28, 28), array([3., 1.], dtype=float32))
    >>> mx.io.MNISTIter(image=images, label=labels, batch_size=2, flat=True).next().data[0].shape
    (2, 784)
    >>> folder.cleanup()
    """

    def __init__(self, image='./train-images-idx3-ubyte', label='./train-labels-idx1-ubyte',
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx='cpu', dtype=None, data_name='data',
                 label_name='softmax_label', **kwargs):
        images = _read_idx(image, 'image')
        labels = _read_idx(label, 'label').astype(np.float32)
        if len(images) != len(labels):
            raise MXNetError('MNISTIter: %d images in %s but %d labels in %s'
                             % (len(images), image, len(labels), label))
        per_part = len(images) // num_parts
        part = slice(part_index * per_part, (part_index + 1) * per_part)
        images, labels = images[part], labels[part]
        if shuffle:
            order = np.random.RandomState(seed).permutation(len(images))
            images, labels = images[order], labels[order]
        images = images.astype(np.float32) / 256.0
        images = images.reshape(len(images), -1) if flat else images.reshape(len(images), 1, *images.shape[1:])
        super().__init__(images, labels, batch_size, round_batch=False, drop_last=True,
                         data_name=data_name, label_name=label_name)


class LibSVMIter(_InMemoryIter):
    """Batches of a LibSVM text file (MXNet's ``mx.io.LibSVMIter``) as CSRNDArrays.

    Each line is ``label index:value ...`` (zero-based indices below ``data_shape[0]``). The
    file is read into compressed rows (memory proportional to its entries, never a dense
    matrix) and each batch is a ``(batch_size, data_shape[0])`` CSRNDArray. Labels are the
    lines' first numbers, or with ``label_libsvm`` the rows of that file as CSRNDArrays of
    ``label_shape``. The last batch wraps around to the start (``round_batch``, the only mode
    MXNet's sparse batch loader has) and reports the wrapped rows as ``pad``.
    ``num_parts``/``part_index`` read one of ``num_parts`` byte ranges of the file (a line
    belongs to the range holding its start), as MXNet's input splits do.

    Example
    -------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'train.libsvm')
    >>> with open(path, 'w') as f:
    ...     _ = f.write('1 0:0.5 3:2\\n0 1:1\\n')
    >>> it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(4,), batch_size=2)
    >>> batch = next(it)
    >>> batch.data[0].stype, batch.data[0].asnumpy().tolist(), batch.label[0].asnumpy().tolist()
    ('csr', [[0.5, 0.0, 0.0, 2.0], [0.0, 1.0, 0.0, 0.0]], [1.0, 0.0])
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,), batch_size=1,
                 round_batch=True, num_parts=1, part_index=0, data_name='data',
                 label_name='softmax_label', **kwargs):
        if not round_batch:
            raise MXNetError("LibSVMIter: sparse batch loader doesn't support round_batch == false yet")
        if not 0 <= part_index < num_parts:
            raise MXNetError('LibSVMIter: part_index %d out of range for num_parts %d' % (part_index, num_parts))
        labels, data = self._parse(data_libsvm, data_shape[0], num_parts, part_index)
        if label_libsvm is not None and label_libsvm != 'NULL':
            _, labels = self._parse(label_libsvm, label_shape[0], num_parts, part_index)
        elif tuple(label_shape) != (1,):
            raise MXNetError('LibSVMIter: label_shape %s needs label_libsvm' % (tuple(label_shape),))
        super().__init__(data, labels, batch_size, round_batch=True, data_name=data_name,
                         label_name=label_name)

    @staticmethod
    def _parse(path, width, num_parts=1, part_index=0):
        """(labels as numpy, rows as a CSRNDArray) of this part of a LibSVM file."""
        from ..ndarray.sparse_arrays import csr_matrix
        with open(path, 'rb') as f:
            text = f.read()
        lo, hi = len(text) * part_index // num_parts, len(text) * (part_index + 1) // num_parts
        # the part holds the lines starting in [lo, hi)
        start = 0 if lo == 0 else text.find(b'\n', lo - 1) + 1 or len(text)
        end = len(text) if part_index == num_parts - 1 else (text.find(b'\n', hi - 1) + 1 or len(text))
        labels, counts, pairs = [], [], []
        for line in text[start:end].decode().splitlines():
            fields = line.split()
            if not fields:
                continue
            first = 0 if ':' in fields[0] else 1
            labels.append(float(fields[0]) if first else 0.0)
            counts.append(len(fields) - first)
            pairs.extend(fields[first:])
        flat = np.array(' '.join(pairs).replace(':', ' ').split(), dtype=np.float64) if pairs else np.zeros(0)
        if flat.size != 2 * len(pairs):
            raise MXNetError('LibSVMIter: %s: every entry must be index:value' % path)
        index, values = flat[0::2], flat[1::2]
        bad = np.nonzero((index < 0) | (index >= width) | (index != np.floor(index)))[0]
        if bad.size:
            row = int(np.searchsorted(np.cumsum(counts), bad[0], side='right'))
            raise MXNetError('LibSVMIter: %s line %d: feature index %s out of range [0, %d)'
                             % (path, row + 1, pairs[bad[0]].split(':')[0], width))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        rows = csr_matrix((values.astype(np.float32), index.astype(np.int64), indptr), shape=(len(counts), width))
        return np.array(labels, dtype=np.float32), rows

    def getdata(self):
        return self._batch[0]

    def getlabel(self):
        label = self._batch[1]
        return label if not isinstance(label, np.ndarray) else array(label, dtype=np.float32)
