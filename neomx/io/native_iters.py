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
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, dtype='float32', prefetch_buffer=4, ctx='cpu', **kwargs):
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
        super().__init__(data, label, batch_size, round_batch=round_batch, dtype=dtype)


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
    """

    def __init__(self, image='./train-images-idx3-ubyte', label='./train-labels-idx1-ubyte',
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx='cpu', dtype=None, **kwargs):
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
        super().__init__(images, labels, batch_size, round_batch=False, drop_last=True)


class LibSVMIter(_InMemoryIter):
    """Batches of a LibSVM text file (MXNet's ``mx.io.LibSVMIter``), as dense arrays.

    Each line is ``label index:value ...`` (zero-based indices). ``label_libsvm`` names a
    separate file of labels in the same format. neomx stores sparse arrays densely, so data
    batches are dense (batch, data_shape[0]) arrays.
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,), batch_size=1,
                 round_batch=True, num_parts=1, part_index=0, **kwargs):
        labels, data = self._parse(data_libsvm, data_shape[0])
        if label_libsvm is not None and label_libsvm != 'NULL':
            _, labels = self._parse(label_libsvm, label_shape[0])
        elif tuple(label_shape) != (1,):
            raise MXNetError('LibSVMIter: label_shape %s needs label_libsvm' % (tuple(label_shape),))
        if tuple(label_shape) == (1,) and labels.ndim == 2:
            labels = labels.reshape(len(labels))
        per_part = len(data) // num_parts
        part = slice(part_index * per_part, (part_index + 1) * per_part)
        super().__init__(data[part], labels[part], batch_size, round_batch=round_batch)

    @staticmethod
    def _parse(path, width):
        labels, rows = [], []
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                fields = line.split()
                if not fields:
                    continue
                row = np.zeros(width, dtype=np.float32)
                start = 0 if ':' in fields[0] else 1
                labels.append(float(fields[0]) if start else 0.0)
                for item in fields[start:]:
                    index, _, value = item.partition(':')
                    if not index.isdigit() or int(index) >= width:
                        raise MXNetError('LibSVMIter: %s line %d: bad entry %r for width %d'
                                         % (path, lineno, item, width))
                    row[int(index)] = float(value)
                rows.append(row)
        return np.array(labels, dtype=np.float32), np.array(rows, dtype=np.float32).reshape(-1, width)
