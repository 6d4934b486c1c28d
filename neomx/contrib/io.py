"""``mx.contrib.io``: :class:`DataLoaderIter`, a Gluon DataLoader as a Module data iterator."""
from ..io import DataIter, DataDesc
from .. import ndarray as nd

__all__ = ['DataLoaderIter', 'DataIter', 'DataDesc']


class DataLoaderIter(DataIter):
    """A ``DataIter`` over the ``(data, label)`` batches of a ``gluon.data.DataLoader``, so
    that Gluon data feeds a symbolic ``Module``.

    The batch size is that of the loader's first batch; a shorter last batch is padded
    (with zeros) to it and ``getpad()`` says by how many rows.

    Parameters
    ----------
    loader : gluon.data.DataLoader
        Yields ``(data, label)`` batches.
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
        The type both data and label are cast to.

    Shape
    -----
    Each batch: ``data`` (batch_size, ...) and ``label`` (batch_size, ...), as the loader's.

    Example
    -------
    >>> import neomx as mx
    >>> ds = mx.gluon.data.ArrayDataset(mx.nd.arange(10).reshape((5, 2)), mx.nd.arange(5))
    >>> it = mx.contrib.io.DataLoaderIter(mx.gluon.data.DataLoader(ds, batch_size=2))
    >>> [(b.data[0].shape, b.pad) for b in it]
    [((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
    """

    def __init__(self, loader, data_name='data', label_name='softmax_label', dtype='float32'):
        super().__init__()
        self._loader = loader
        self._iter = iter(self._loader)
        data, label = next(self._iter)
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        self._current_batch = next(self._iter, None)
        return self._current_batch is not None

    def _padded(self, part):
        arr = self._current_batch[part].astype(self.dtype)
        if not self.getpad():
            return [arr]
        full = nd.zeros((self.batch_size,) + tuple(arr.shape[1:]), dtype=self.dtype)
        full[:arr.shape[0]] = arr
        return [full]

    def getdata(self):
        return self._padded(0)

    def getlabel(self):
        return self._padded(1)

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
