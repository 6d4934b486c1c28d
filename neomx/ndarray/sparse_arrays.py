"""MXNet's sparse array types, stored densely: ``RowSparseNDArray`` and ``CSRNDArray``.

neomx keeps every array dense (PyTorch computes on dense tensors). An array converted with
``tostype('row_sparse')`` or made by ``mx.nd.sparse.row_sparse_array`` keeps its storage type as
a label: ``stype`` reports it, and ``data``/``indices``/``indptr`` give MXNet's compressed
parts, computed from the dense values (rows or entries that are non-zero). Operators take them
like any NDArray and return default-storage arrays.
"""
import numpy as np
import torch

from ..base import MXNetError, torch_dtype
from ..context import Context, current_context
from .ndarray import NDArray, _new, array, register_sparse_storage

__all__ = ['BaseSparseNDArray', 'RowSparseNDArray', 'CSRNDArray', 'with_stype', 'row_sparse_array',
           'csr_matrix', 'zeros', 'empty', 'sparse_array']

STYPES = ('default', 'row_sparse', 'csr')


class BaseSparseNDArray(NDArray):
    """An NDArray labelled with a sparse storage type (its values are stored densely)."""

    __slots__ = ()
    _STYPE = None

    @property
    def stype(self):
        return self._STYPE

    def __repr__(self):
        shape_info = 'x'.join(str(d) for d in self._t.shape)
        return '\n<%s %s @%s>' % (type(self).__name__, shape_info, self._ctx)

    def copy(self):
        return with_stype(self._t.clone(), self._ctx, self._STYPE)

    def copyto(self, other):
        out = super().copyto(other)
        if isinstance(other, Context):
            return with_stype(out._t, out._ctx, self._STYPE)
        return out

    def _nonzero_rows(self):
        t = self._t.detach()
        flat = t.reshape(t.shape[0], -1) if t.dim() else t.reshape(1, 1)
        return torch.nonzero(flat.ne(0).any(dim=1)).reshape(-1)


class RowSparseNDArray(BaseSparseNDArray):
    """Rows of a 2-D+ array of which only some are non-zero (MXNet's ``row_sparse``).

    Example
    -------
    >>> a = mx.nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2))
    >>> a.indices.asnumpy().tolist(), a.data.asnumpy().tolist()
    ([1], [[1.0, 2.0]])
    """

    __slots__ = ()
    _STYPE = 'row_sparse'

    @property
    def indices(self):
        """Indices (int64) of the rows that hold non-zero values."""
        return _new(self._nonzero_rows().to(torch.int64), self._ctx)

    @property
    def data(self):
        """The non-zero rows, (len(indices),) + shape[1:]."""
        return _new(self._t.detach()[self._nonzero_rows()], self._ctx)

    def retain(self, indices):
        """A row_sparse array keeping only the rows ``indices``."""
        idx = indices._t.long() if isinstance(indices, NDArray) else torch.as_tensor(indices).long()
        out = torch.zeros_like(self._t)
        out[idx] = self._t[idx]
        return with_stype(out, self._ctx, 'row_sparse')


class CSRNDArray(BaseSparseNDArray):
    """A 2-D matrix in compressed sparse row form (MXNet's ``csr``)."""

    __slots__ = ()
    _STYPE = 'csr'

    def _part(self, which):
        """indptr (0), column indices (1) or values (2) of the non-zero entries, row by row."""
        dense = self._t.detach()
        rows, cols = torch.nonzero(dense, as_tuple=True)
        if which == 0:
            counts = torch.bincount(rows, minlength=dense.shape[0])
            part = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
        else:
            part = cols if which == 1 else dense[rows, cols]
        return _new(part if which == 2 else part.to(torch.int64), self._ctx)

    @property
    def indptr(self):
        """Row pointers (int64): row i's entries are indices[indptr[i]:indptr[i+1]]."""
        return self._part(0)

    @property
    def indices(self):
        """Column indices (int64) of the non-zero entries."""
        return self._part(1)

    @property
    def data(self):
        """The non-zero values, row by row."""
        return self._part(2)

    def asscipy(self):
        """This matrix as a ``scipy.sparse.csr_matrix`` (needs scipy)."""
        import scipy.sparse
        return scipy.sparse.csr_matrix(self.asnumpy())


_CLASS_OF_STYPE = {'row_sparse': RowSparseNDArray, 'csr': CSRNDArray}


def with_stype(tensor, ctx, stype):
    """An NDArray of ``tensor`` (not copied) labelled with storage type ``stype``."""
    if stype not in STYPES:
        raise MXNetError("unknown storage type %r; expected one of %s" % (stype, STYPES))
    if stype == 'default':
        return _new(tensor, ctx)
    if stype == 'csr' and tensor.dim() != 2:
        raise MXNetError('csr storage needs a 2-D array, got shape %s' % (tuple(tensor.shape),))
    arr = object.__new__(_CLASS_OF_STYPE[stype])
    arr._t, arr._ctx, arr._grad = tensor, ctx, None
    return arr


def _ctx(ctx):
    return Context(ctx) if ctx is not None else current_context()


def _values(x, dtype):
    if isinstance(x, NDArray):
        return x.asnumpy() if dtype is None else x.asnumpy().astype(np.dtype(dtype))
    return np.asarray(x, dtype=dtype)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from ``(data, indices)`` (with ``shape``), a shape, or an array."""
    ctx = _ctx(ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2 and not all(isinstance(d, int) for d in arg1):
        data, indices = arg1
        data = _values(data, dtype or (data.dtype if hasattr(data, 'dtype') else np.float32))
        indices = _values(indices, np.int64).reshape(-1)
        if shape is None:
            shape = (int(indices.max()) + 1 if indices.size else 0,) + data.shape[1:]
        dense = np.zeros(shape, dtype=data.dtype)
        dense[indices] = data
        return with_stype(array(dense, ctx=ctx, dtype=dense.dtype)._t, ctx, 'row_sparse')
    if isinstance(arg1, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in arg1):
        return zeros('row_sparse', tuple(arg1), ctx=ctx, dtype=dtype)
    return array(arg1, ctx=ctx, dtype=dtype).tostype('row_sparse')


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from ``(data, indices, indptr)`` (with ``shape``), a shape, a dense array or
    a scipy sparse matrix."""
    ctx = _ctx(ctx)
    if hasattr(arg1, 'tocsr') and hasattr(arg1, 'toarray'):          # scipy.sparse
        return array(arg1.toarray(), ctx=ctx, dtype=dtype or arg1.dtype).tostype('csr')
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = (_values(v, None) for v in arg1)
        data = data.astype(dtype or (data.dtype if data.size else np.float32))
        rows = len(indptr) - 1
        if shape is None:
            shape = (rows, int(indices.max()) + 1 if indices.size else 0)
        dense = np.zeros(shape, dtype=data.dtype)
        for r in range(rows):
            dense[r, indices[indptr[r]:indptr[r + 1]].astype(np.int64)] = data[indptr[r]:indptr[r + 1]]
        return with_stype(array(dense, ctx=ctx, dtype=dense.dtype)._t, ctx, 'csr')
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(isinstance(d, (int, np.integer)) for d in arg1):
        return zeros('csr', tuple(arg1), ctx=ctx, dtype=dtype)
    return array(arg1, ctx=ctx, dtype=dtype).tostype('csr')


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype``."""
    ctx = _ctx(ctx)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return with_stype(torch.zeros(shape, dtype=torch_dtype(dtype, 'sparse.zeros'), device=ctx.torch_device), ctx, stype)


def empty(stype, shape, ctx=None, dtype=None):
    """An array of storage type ``stype`` (all zeros: a sparse array starts with no entries)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def sparse_array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse NDArray or a scipy sparse matrix (MXNet's ``sparse.array``)."""
    if isinstance(source_array, BaseSparseNDArray):
        return with_stype(source_array._t.to(torch_dtype(dtype, 'sparse.array')) if dtype else source_array._t.clone(),
                          _ctx(ctx), source_array.stype)
    if hasattr(source_array, 'tocsr'):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError('Unexpected source_array type %s: expected a sparse NDArray or a scipy '
                     'sparse matrix' % type(source_array).__name__)


register_sparse_storage(with_stype, zeros)
