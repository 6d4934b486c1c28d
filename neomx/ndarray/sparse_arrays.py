"""MXNet's sparse arrays: ``CSRNDArray`` and ``RowSparseNDArray``, stored compressed.

A sparse array holds a torch sparse tensor (see :mod:`neomx.operator.storage`): a
``sparse_csr`` tensor for ``csr``, a coalesced ``sparse_coo`` tensor with one sparse dimension
for ``row_sparse``. Its memory is proportional to the stored entries. Operators with a
storage rule compute on that form (``dot(csr, dense)`` through ``torch.sparse.mm``,
element-wise operators on the stored values); any other use of the array reads ``_t``, its
dense form, which is built on first use and kept (MXNet's storage fallback, logged as MXNet
logs it unless ``MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0``). Once a dense form exists it is the
array's value: writes into it (``x[:] = ...``, an optimizer step) are seen by the compressed
parts, which are recomputed from it after any write (torch's version counter tells).
"""
import logging
import os
import sys
import weakref

import numpy as np
import torch

from .._autograd_state import STATE as _AUTOGRAD
from .._sparse_state import SPARSE_MADE  # noqa: F401  (the operators' storage entries read it here too)
from .._torch_private import tensor_version
from ..autograd import is_recording, run_untracked
from ..base import MXNetError, np_dtype, torch_dtype
from ..context import Context, context_naming, current_context
from ..operator import storage
from ..operator.storage import CSR, DEFAULT, ROW_SPARSE
from .ndarray import NDArray, _new, array, on_waitall, register_sparse_storage

__all__ = ['BaseSparseNDArray', 'RowSparseNDArray', 'CSRNDArray', 'with_stype', 'from_sparse_tensor',
           'row_sparse_array', 'csr_matrix', 'zeros', 'empty', 'sparse_array', 'storage_dispatch', 'DENSE_CALL',
           'stype_of_array', 'cast_storage_of', 'rows_array', 'sum_row_sparse', 'set_rows', 'hold_value',
           'arrive_later']

STYPES = (DEFAULT, ROW_SPARSE, CSR)
_DENSE = NDArray.__dict__['_t']        # NDArray's slot: a sparse array's dense form, once made
_STRIDED = torch.strided
_TENSOR = torch.Tensor
_NO_DENSE = object()     # ``_synced`` of an array whose value is its sparse tensor alone
_LOG = logging.getLogger('neomx.storage')
_LOGGED = set()


def storage_fallback_log(op_name, stypes, attrs):
    """MXNet's storage-fallback warning, once per operator and storage types."""
    if os.environ.get('MXNET_STORAGE_FALLBACK_LOG_VERBOSE', '1') in ('0', 'false', 'False'):
        return
    key = (op_name, tuple(stypes))
    if key in _LOGGED:
        return
    _LOGGED.add(key)
    _LOG.warning(
        '\nStorage type fallback detected:\noperator = %s\ninput storage types = [%s]\n'
        'output storage types = [default, ]\nparams = {%s}\ncontext.dev_mask = cpu\n'
        'The operator with default storage type will be dispatched for execution. You\'re seeing this '
        'warning message because the operator above is unable to process the given ndarrays with '
        'specified storage types, context and parameter. Temporary dense ndarrays are generated in '
        'order to execute the operator. This does not affect the correctness of the programme. You can '
        'set environment variable MXNET_STORAGE_FALLBACK_LOG_VERBOSE to 0 to suppress this warning.',
        op_name, ''.join('%s, ' % s for s in stypes),
        ''.join('"%s" : %s, ' % (k, v) for k, v in (attrs or {}).items()))


def _calling_operator():
    """The operator (its registry spec) whose call is densifying a sparse input, found in the
    caller frames of the generated nd functions (their ``spec``); None for other callers."""
    frame = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return None
        spec = frame.f_locals.get('spec')
        if spec is not None and hasattr(spec, 'impl') and hasattr(spec, 'name'):
            return spec
        frame = frame.f_back
    return None


class BaseSparseNDArray(NDArray):
    """The common base of :class:`CSRNDArray` and :class:`RowSparseNDArray`.

    Example
    -------
    >>> x = mx.nd.array([[0, 1], [0, 0]]).tostype('csr')
    >>> isinstance(x, mx.nd.sparse.BaseSparseNDArray), x.stype
    (True, 'csr')
    """

    __slots__ = ('_sp', '_synced', '_pending')
    _STYPE = None
    _NUM_AUX = 0

    def __init__(self, handle, writable=True):  # pylint: disable=super-init-not-called,unused-argument
        """Wrap ``handle``: a torch sparse tensor of this storage type, or a dense tensor
        (then compressed)."""
        SPARSE_MADE[0] = True
        self._ctx, self._grad, self._synced = context_naming(handle), None, _NO_DENSE
        self._sp = handle if storage.stype_of(handle) == self._STYPE else storage.cast(handle, self._STYPE)

    def __getattr__(self, name):
        # reached only where an attribute is missing: ``_sp`` of an array whose value is still
        # coming (see ``arrive_later``), which the first read brings in
        if name == '_sp':
            try:
                bring = _PENDING.__get__(self)
            except AttributeError:
                bring = None
            if bring is not None:
                bring()             # sets _sp (an error leaves the array waiting: reads raise it again)
                return self._sp
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    # ----------------------------------------------------------- the two forms
    @property
    def _t(self):
        """The dense form (made on first use, then kept: see the module docstring)."""
        try:
            return _DENSE.__get__(self)
        except AttributeError:
            pass
        spec = _calling_operator()
        if spec is not None:
            storage_fallback_log(spec.name, [self._STYPE], None)
        dense = storage.to_dense(self._sp)
        _DENSE.__set__(self, dense)
        self._synced = tensor_version(dense)
        return dense

    @_t.setter
    def _t(self, tensor):
        if tensor.layout is not torch.strided:     # a sparse gradient handed to a row_sparse buffer
            self._set_sparse(storage.cast(tensor.coalesce() if tensor.layout is torch.sparse_coo else tensor,
                                          self._STYPE))
            return
        if _waiting(self):
            self._pending = None     # written before it was read: the value coming is dropped
            self._sp = None
        _DENSE.__set__(self, tensor)
        self._synced = None

    def _has_dense(self):
        try:
            _DENSE.__get__(self)
            return True
        except AttributeError:
            return False

    def _sparse(self):
        """The torch sparse tensor of this array (recomputed after writes to the dense form)."""
        if self._synced is _NO_DENSE:
            return self._sp
        try:
            dense = _DENSE.__get__(self)
        except AttributeError:
            return self._sp
        version = tensor_version(dense)
        if self._sp is None or self._synced is None or self._synced != version:
            self._sp = storage.cast(dense.detach(), self._STYPE)
            self._synced = version
        return self._sp

    def _set_sparse(self, sp):
        """Make ``sp`` (a torch sparse tensor of this storage type) this array's value."""
        try:
            dense = _DENSE.__get__(self)
        except AttributeError:
            dense = None
        if dense is not None and dense.requires_grad and dense.is_leaf:
            # a variable that autograd records against (attach_grad, a Gluon parameter): keep
            # that tensor and write the new value into it, so the gradient stays attached
            with torch.no_grad():
                dense.copy_(storage.to_dense(sp))
            self._sp, self._synced = sp, tensor_version(dense)
            return
        if dense is not None:
            _DENSE.__delete__(self)
        self._sp, self._synced = sp, _NO_DENSE
        if _waiting(self):
            self._pending = None     # a value coming for it is older than this one

    def _either(self):
        """The dense form where one exists, else the sparse tensor: for shape, dtype, device."""
        try:
            return _DENSE.__get__(self)
        except AttributeError:
            return self._sp

    # ----------------------------------------------------------- properties
    @property
    def stype(self):
        return self._STYPE

    @property
    def shape(self):
        return tuple(self._either().shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def ndim(self):
        return len(self._either().shape)

    @property
    def dtype(self):
        return np_dtype(self._either().dtype)

    @property
    def _num_aux(self):
        return self._NUM_AUX

    @property
    def _aux_types(self):
        return [np.int64] * self._NUM_AUX

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return '\n<%s %s @%s>' % (type(self).__name__, 'x'.join(str(d) for d in self.shape), self._ctx)

    def asnumpy(self):
        dense = self._either()
        t = dense.detach() if dense.layout is torch.strided else storage.to_dense(dense)
        if t.dtype is torch.bfloat16:
            t = t.float()
        return t.cpu().numpy().copy() if t.device.type != 'cpu' else t.numpy().copy()

    def wait_to_read(self):
        pass

    def _values_array(self):
        return _new(self._sparse().values().detach(), self._ctx)

    @property
    def data(self):
        """The stored values (a dense NDArray)."""
        return self._values_array()

    def _data(self):
        return self.data

    def _aux_data(self, i):
        """The ``i``-th index array (row_sparse: 0 = indices; csr: 0 = indptr, 1 = indices)."""
        return self._aux_arrays()[i]

    # ----------------------------------------------------------- autograd
    def attach_grad(self, grad_req='write', stype=None):
        """As :meth:`NDArray.attach_grad`; the gradient's storage type defaults to this array's,
        as in MXNet."""
        super().attach_grad(grad_req, self._STYPE if stype is None else stype)

    def detach(self):
        """This array's value, cut from the recorded graph, in the same storage type."""
        return from_sparse_tensor(self._sparse().detach(), self._ctx)

    # ----------------------------------------------------------- copies
    def copy(self):
        return from_sparse_tensor(self._sparse().clone(), self._ctx)

    def copyto(self, other):
        """Copy into ``other`` (an NDArray, whose storage type is kept) or onto a Context."""
        if isinstance(other, Context):
            return from_sparse_tensor(_to_device(self._sparse(), other), other)
        if isinstance(other, NDArray):
            if other is self:
                return other
            _assign(other, self)
            return other
        raise TypeError('copyto does not support type %s' % type(other).__name__)

    def as_in_context(self, context):
        return self if context == self._ctx else self.copyto(context)

    def astype(self, dtype, copy=True):
        tdt = torch_dtype(dtype, 'astype')
        if not copy and tdt is self._either().dtype:
            return self
        sp = self._sparse()
        return from_sparse_tensor(storage.with_values(sp, sp.values().to(tdt)), self._ctx)

    def tostype(self, stype):
        """This array in storage type ``stype``. csr and row_sparse do not convert into each
        other (ValueError), as in MXNet."""
        if stype not in STYPES:
            raise MXNetError("tostype: unknown storage type %r; expected one of %s" % (stype, STYPES))
        if stype == DEFAULT:
            return _new(storage.to_dense(self._sparse()), self._ctx)
        if stype != self._STYPE:
            raise ValueError('cast_storage from %s to %s is not supported' % (self._STYPE, stype))
        return self.copy()

    def check_format(self, full_check=True):
        """Check the compressed parts; MXNetError naming the array and the offending position.

        ``full_check=False`` checks the parts' sizes only, not their values."""
        _check_format(self, full_check)

    def reshape(self, *args, **kwargs):
        raise MXNetError('reshape is not supported for %s (a %s array)' % (type(self).__name__, self._STYPE))

    def __setitem__(self, key, value):
        if isinstance(key, slice) and key == slice(None):
            _assign(self, value)
            return
        raise MXNetError('%s only supports [:] for assignment, got key %r' % (type(self).__name__, key))

    # ----------------------------------------------------------- arithmetic
    def __neg__(self):
        return _op('negative')(self)

    def __add__(self, other):
        return _ufunc(self, other, 'elemwise_add', 'broadcast_add', '_plus_scalar')

    __radd__ = __add__

    def __sub__(self, other):
        return _ufunc(self, other, 'elemwise_sub', 'broadcast_sub', '_minus_scalar')

    def __rsub__(self, other):
        return _ufunc(self, other, None, None, '_rminus_scalar')

    def __mul__(self, other):
        return _ufunc(self, other, 'elemwise_mul', 'broadcast_mul', '_mul_scalar')

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _ufunc(self, other, 'elemwise_div', 'broadcast_div', '_div_scalar')

    def __rtruediv__(self, other):
        return _ufunc(self, other, None, None, '_rdiv_scalar')

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __pow__(self, other):
        return _ufunc(self, other, '_power', 'broadcast_power', '_power_scalar')

    def __rpow__(self, other):
        return _ufunc(self, other, None, None, '_rpower_scalar')

    def __eq__(self, other):
        return _ufunc(self, other, 'broadcast_equal', 'broadcast_equal', '_equal_scalar')

    def __ne__(self, other):
        return _ufunc(self, other, 'broadcast_not_equal', 'broadcast_not_equal', '_not_equal_scalar')

    def __gt__(self, other):
        return _ufunc(self, other, 'broadcast_greater', 'broadcast_greater', '_greater_scalar')

    def __ge__(self, other):
        return _ufunc(self, other, 'broadcast_greater_equal', 'broadcast_greater_equal', '_greater_equal_scalar')

    def __lt__(self, other):
        return _ufunc(self, other, 'broadcast_lesser', 'broadcast_lesser', '_lesser_scalar')

    def __le__(self, other):
        return _ufunc(self, other, 'broadcast_lesser_equal', 'broadcast_lesser_equal', '_lesser_equal_scalar')

    __hash__ = NDArray.__hash__

    def __iadd__(self, other):
        _assign(self, self + other)
        return self

    def __isub__(self, other):
        _assign(self, self - other)
        return self

    def __imul__(self, other):
        _assign(self, self * other)
        return self

    def __itruediv__(self, other):
        _assign(self, self / other)
        return self

    def __reduce__(self):
        parts = [self.data.asnumpy()] + [a.asnumpy() for a in self._aux_arrays()]
        return (_rebuild_sparse, (self._STYPE, self.shape, parts, str(self._ctx.device_type), self._ctx.device_id))


_PENDING = BaseSparseNDArray.__dict__['_pending']
_SP = BaseSparseNDArray.__dict__['_sp']


def _waiting(arr):
    try:
        return _PENDING.__get__(arr) is not None
    except AttributeError:
        return False


def arrive_later(out, fetch):
    """Let the value of the RowSparseNDArray ``out`` arrive later, as MXNet's engine lets a
    ``row_sparse_pull`` run on while the program goes on: ``fetch()`` gives ``(rows, values)``
    (rows sorted, unique), called at the first read of ``out`` (any operator, property or
    method that reads it; a write first drops the value coming). False, with nothing done,
    where ``out`` cannot wait (a dense form autograd records against): then set it now."""
    if not isinstance(out, RowSparseNDArray):
        return False
    try:
        dense = _DENSE.__get__(out)
    except AttributeError:
        dense = None
    if dense is not None and dense.requires_grad:
        return False
    shape, dtype, device = out.shape, out._either().dtype, out._ctx.torch_device

    def bring():
        rows, values = fetch()
        out._set_sparse(storage.make_rsp(rows.to(device), values.to(device=device, dtype=dtype), shape))

    if dense is not None:
        _DENSE.__delete__(out)
    try:
        _SP.__delete__(out)
    except AttributeError:
        pass
    out._synced = _NO_DENSE
    out._pending = bring
    _ARRIVING[id(out)] = out
    return True


def _bring_arriving():
    # waitall(): every value still coming arrives now. A failed one leaves its array waiting, and
    # reading the array raises the error (waitall does not: the array may be garbage in a cycle
    # that no one will read, whose error MXNet's engine would drop with it)
    for key, arr in list(_ARRIVING.items()):
        del _ARRIVING[key]
        if _waiting(arr):
            try:
                arr._sp     # pylint: disable=pointless-statement
            except Exception:   # pylint: disable=broad-except
                _ARRIVING[key] = arr


_ARRIVING = weakref.WeakValueDictionary()     # id -> array (arrays compare elementwise: no set)
on_waitall(_bring_arriving)


class RowSparseNDArray(BaseSparseNDArray):
    """A row_sparse array: only some rows are stored (``indices``), each whole (``data``).

    Shape: any of 1 or more dimensions; ``data`` is ``(len(indices),) + shape[1:]``.

    Example
    -------
    >>> a = mx.nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2))
    >>> a.indices.asnumpy().tolist(), a.data.asnumpy().tolist()
    ([1], [[1.0, 2.0]])
    """

    __slots__ = ()
    _STYPE = ROW_SPARSE
    _NUM_AUX = 1

    @property
    def indices(self):
        """Indices (int64, ascending) of the stored rows."""
        return _new(storage.rsp_parts(self._sparse())[0], self._ctx)

    def _aux_arrays(self):
        return [self.indices]

    def retain(self, *args, **kwargs):
        """A row_sparse array keeping only the rows ``indices`` (see ``nd.sparse.retain``)."""
        return _op('_sparse_retain')(self, *args, **kwargs)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D matrix in compressed sparse row form: row ``i``'s entries are
    ``data[indptr[i]:indptr[i+1]]`` in columns ``indices[indptr[i]:indptr[i+1]]``.

    Shape: ``(rows, columns)``.

    Example
    -------
    >>> m = mx.nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
    >>> m.indptr.asnumpy().tolist(), m.asnumpy().tolist()
    ([0, 2, 2, 3], [[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    """

    __slots__ = ()
    _STYPE = CSR
    _NUM_AUX = 2

    @property
    def indptr(self):
        """Row pointers (int64): row i's entries are ``indices[indptr[i]:indptr[i+1]]``."""
        return _new(self._sparse().crow_indices(), self._ctx)

    @property
    def indices(self):
        """Column indices (int64) of the stored entries, row by row."""
        return _new(self._sparse().col_indices(), self._ctx)

    def _aux_arrays(self):
        return [self.indptr, self.indices]

    def __getitem__(self, key):
        """Rows ``key`` (an integer, a slice of step 1 or an integer array) as a CSRNDArray."""
        if isinstance(key, tuple) and len(key) == 1:       # x[(slice,)], as split_data indexes
            key = key[0]
        n = self.shape[0]
        if isinstance(key, (int, np.integer)):
            k = int(key) + n if key < 0 else int(key)
            if not 0 <= k < n:
                raise IndexError('index %d is out of bounds for axis 0 with size %d' % (key, n))
            begin, end = k, k + 1
        elif isinstance(key, slice) and key.step in (None, 1):
            begin, end, _ = key.indices(n)
            end = max(begin, end)
        elif isinstance(key, (np.ndarray, list, NDArray)):      # rows in any order (a shuffle)
            host = _host(key, np.int64).reshape(-1)
            if len(host) and host[0] >= 0 and host[-1] < n and host[-1] - host[0] == len(host) - 1 \
                    and (len(host) < 2 or bool((np.diff(host) == 1).all())):     # a run: a slice, no copy
                return from_sparse_tensor(storage.csr_slice(self._sparse(), int(host[0]), int(host[-1]) + 1), self._ctx)
            rows = torch.as_tensor(host, device=self._ctx.torch_device)
            if len(rows) and (int(rows.min()) < -n or int(rows.max()) >= n):
                raise IndexError('CSRNDArray: row index out of range for %d rows' % n)
            return from_sparse_tensor(storage.csr_take_rows(self._sparse(), torch.remainder(rows, n)), self._ctx)
        else:
            raise MXNetError('CSRNDArray only supports an integer, a slice of step 1 or an array of '
                             'rows as index, got %r' % (key,))
        return from_sparse_tensor(storage.csr_slice(self._sparse(), begin, end), self._ctx)

    def asscipy(self):
        """This matrix as a ``scipy.sparse.csr_matrix`` (needs scipy)."""
        import scipy.sparse
        sp = self._sparse()
        return scipy.sparse.csr_matrix(
            (sp.values().detach().cpu().numpy(), sp.col_indices().cpu().numpy(), sp.crow_indices().cpu().numpy()),
            shape=self.shape)


_CLASS_OF_STYPE = {ROW_SPARSE: RowSparseNDArray, CSR: CSRNDArray}


# ------------------------------------------------------------------ constructors
def from_sparse_tensor(sp, ctx):
    """The NDArray of a torch tensor (sparse csr or row_sparse coo, or dense), not copied."""
    stype = storage.stype_of(sp)
    if stype == DEFAULT:
        return _new(sp, ctx)
    SPARSE_MADE[0] = True
    arr = object.__new__(_CLASS_OF_STYPE[stype])
    arr._ctx, arr._grad, arr._sp, arr._synced = ctx, None, sp, _NO_DENSE
    return arr


def with_stype(tensor, ctx, stype):
    """An NDArray of storage type ``stype`` whose value is the dense ``tensor`` (shared, not
    copied: writes to either are seen by both); its compressed parts are computed on demand."""
    if stype not in STYPES:
        raise MXNetError("unknown storage type %r; expected one of %s" % (stype, STYPES))
    if stype == DEFAULT:
        return _new(tensor, ctx)
    if stype == CSR and tensor.dim() != 2:
        raise ValueError('csr storage needs a 2-D array, got shape %s' % (tuple(tensor.shape),))
    SPARSE_MADE[0] = True
    arr = object.__new__(_CLASS_OF_STYPE[stype])
    arr._ctx, arr._grad, arr._sp = ctx, None, None
    arr._t = tensor
    return arr


def stype_of_array(x):
    return x.stype if isinstance(x, NDArray) else DEFAULT


def _to_device(sp, ctx):
    return sp if sp.device == ctx.torch_device else sp.to(ctx.torch_device)


def _ctx(ctx):
    return Context(ctx) if ctx is not None and not isinstance(ctx, Context) else (ctx or current_context())


def _host(x, dtype=None):
    """A numpy array of ``x`` (NDArray, numpy, list), cast to ``dtype`` where given."""
    values = x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)
    return values if dtype is None else values.astype(np.dtype(dtype), copy=False)


def _default_dtype(x, dtype):
    if dtype is not None:
        return np_dtype(torch_dtype(dtype, 'sparse'))
    if isinstance(x, (NDArray, np.ndarray)):
        return x.dtype
    return np.float32


def _is_shape(arg):
    return isinstance(arg, tuple) and all(isinstance(d, (int, np.integer)) for d in arg)


def _tensor(values, ctx, dtype=None):
    t = torch.from_numpy(np.ascontiguousarray(values))
    return t.to(device=ctx.torch_device, dtype=torch_dtype(dtype, 'sparse') if dtype is not None else None)


def _check_shape(given, shape, what):
    if shape is not None and tuple(int(d) for d in shape) != tuple(given):
        raise ValueError('%s: shape %s does not match the source shape %s' % (what, tuple(shape), tuple(given)))


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from ``(data, indices)`` (with ``shape``, inferred where absent),
    a shape (all zeros), a RowSparseNDArray, or a dense array (NDArray, numpy, list)."""
    ctx = _ctx(ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2 and not _is_shape(arg1):
        data, indices = arg1
        dt = _default_dtype(data, dtype)
        values = _host(data, dt)
        idx = _host(indices, np.int64).reshape(-1)
        if shape is None:
            if values.ndim == 0 or (idx.size == 0 and values.ndim < 1):
                raise ValueError('row_sparse_array: cannot infer the shape of empty data')
            shape = (int(idx.max()) + 1 if idx.size else 0,) + values.shape[1:]
        shape = tuple(int(d) for d in shape)
        if values.shape[0] != idx.size:
            values = values.reshape((idx.size,) + shape[1:])
        return from_sparse_tensor(storage.make_rsp(_tensor(idx, ctx), _tensor(values, ctx), shape), ctx)
    if _is_shape(arg1):
        if shape is not None and tuple(shape) != tuple(arg1):
            raise ValueError('row_sparse_array: shape %s does not match the given shape %s' % (tuple(shape), arg1))
        return zeros(ROW_SPARSE, arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape, 'row_sparse_array')
        return sparse_array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, BaseSparseNDArray):
        raise ValueError('row_sparse_array: unexpected source %s' % type(arg1).__name__)
    dense = array(arg1, ctx=ctx, dtype=_default_dtype(arg1, dtype))
    _check_shape(dense.shape, shape, 'row_sparse_array')
    return from_sparse_tensor(storage.dense_to_rsp(dense._t), ctx)


def _coo_to_csr(values, rows, cols, shape):
    """CSR parts of COO entries: sorted by (row, column), duplicates summed."""
    keys = rows.astype(np.int64) * shape[1] + cols.astype(np.int64)
    uniq, inverse = np.unique(keys, return_inverse=True)
    summed = np.zeros(len(uniq), dtype=values.dtype)
    np.add.at(summed, inverse, values)
    r = uniq // shape[1]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=shape[0]))]).astype(np.int64)
    return summed, uniq - r * shape[1], indptr


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from ``(data, indices, indptr)`` or ``(data, (row, col))`` (with
    ``shape``, inferred where absent), a shape (all zeros), a scipy sparse matrix, a
    CSRNDArray or a 2-D dense array."""
    ctx = _ctx(ctx)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        dt = _default_dtype(data, dtype)
        values = _host(data, dt).reshape(-1)
        idx, ptr = _host(indices, np.int64).reshape(-1), _host(indptr, np.int64).reshape(-1)
        if shape is None:
            if idx.size == 0:
                raise ValueError('csr_matrix: cannot infer the shape of an empty matrix')
            shape = (len(ptr) - 1, int(idx.max()) + 1)
        return from_sparse_tensor(storage.make_csr(_tensor(ptr, ctx), _tensor(idx, ctx), _tensor(values, ctx),
                                                   tuple(int(d) for d in shape)), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2 and not _is_shape(arg1):
        data, (rows, cols) = arg1
        dt = _default_dtype(data, dtype)
        values = _host(data, dt).reshape(-1)
        rows, cols = _host(rows, np.int64).reshape(-1), _host(cols, np.int64).reshape(-1)
        if shape is None:
            shape = (int(rows.max()) + 1, int(cols.max()) + 1)
        shape = tuple(int(d) for d in shape)
        return csr_matrix(_coo_to_csr(values, rows, cols, shape), shape=shape, ctx=ctx, dtype=dt)
    if _is_shape(arg1):
        if len(arg1) != 2:
            raise ValueError('csr_matrix: a shape of 2 dimensions expected, got %s' % (arg1,))
        if shape is not None and tuple(shape) != tuple(arg1):
            raise ValueError('csr_matrix: shape %s does not match the given shape %s' % (tuple(shape), arg1))
        return zeros(CSR, arg1, ctx=ctx, dtype=dtype)
    if hasattr(arg1, 'tocsr') and hasattr(arg1, 'toarray'):          # scipy.sparse
        m = arg1.tocsr()
        if not getattr(m, 'has_canonical_format', True):
            m = m.copy()
            m.sum_duplicates()
        m.sort_indices()
        _check_shape(m.shape, shape, 'csr_matrix')
        return csr_matrix((m.data, m.indices, m.indptr), shape=m.shape, ctx=ctx, dtype=dtype or m.dtype)
    if isinstance(arg1, CSRNDArray):
        _check_shape(arg1.shape, shape, 'csr_matrix')
        return sparse_array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, BaseSparseNDArray):
        raise ValueError('csr_matrix: unexpected source %s' % type(arg1).__name__)
    dense = array(arg1, ctx=ctx, dtype=_default_dtype(arg1, dtype))
    if dense.ndim != 2:
        raise ValueError('csr_matrix: a 2-D source expected, got shape %s' % (dense.shape,))
    _check_shape(dense.shape, shape, 'csr_matrix')
    return from_sparse_tensor(storage.dense_to_csr(dense._t), ctx)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype`` (nothing stored)."""
    if stype not in STYPES:
        raise ValueError("zeros: unknown storage type %r; expected one of %s" % (stype, STYPES))
    ctx = _ctx(ctx)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    tdt = torch_dtype(dtype, 'sparse.zeros')
    dense_zero = torch.zeros(shape, dtype=tdt, device=ctx.torch_device) if stype == DEFAULT else None
    if stype == DEFAULT:
        return _new(dense_zero, ctx)
    if stype == CSR and len(shape) != 2:
        raise ValueError('zeros: csr storage needs a 2-D shape, got %s' % (shape,))
    empty_values = torch.zeros((0,) + (shape[1:] if stype == ROW_SPARSE else ()), dtype=tdt, device=ctx.torch_device)
    no_index = torch.zeros(0, dtype=torch.int64, device=ctx.torch_device)
    if stype == CSR:
        sp = storage.make_csr(torch.zeros(shape[0] + 1, dtype=torch.int64, device=ctx.torch_device),
                              no_index, empty_values, shape)
    else:
        sp = storage.make_rsp(no_index, empty_values, shape)
    return from_sparse_tensor(sp, ctx)


def empty(stype, shape, ctx=None, dtype=None):
    """An array of storage type ``stype`` with nothing stored (all zeros)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def sparse_array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse NDArray or a scipy sparse matrix (MXNet's ``sparse.array``)."""
    if isinstance(source_array, BaseSparseNDArray):
        ctx = _ctx(ctx)
        sp = source_array._sparse()
        if dtype is not None:
            sp = storage.with_values(sp, sp.values().to(torch_dtype(dtype, 'sparse.array')))
        else:
            sp = sp.clone()
        return from_sparse_tensor(_to_device(sp, ctx), ctx)
    if hasattr(source_array, 'tocsr'):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError('Unexpected source_array type %s: expected a sparse NDArray or a scipy '
                     'sparse matrix' % type(source_array).__name__)


def _rebuild_sparse(stype, shape, parts, dev_type, dev_id):
    ctx = Context(dev_type, dev_id)
    if stype == CSR:
        return csr_matrix((parts[0], parts[2], parts[1]), shape=shape, ctx=ctx, dtype=parts[0].dtype)
    return row_sparse_array((parts[0], parts[1]), shape=shape, ctx=ctx, dtype=parts[0].dtype)


# ------------------------------------------------------------------ writes
def _assign(target, value):
    """``target[:] = value`` (an NDArray of any storage, a numpy array or a scalar); a sparse
    target keeps its storage type."""
    shape = target.shape
    if isinstance(target, BaseSparseNDArray) and isinstance(value, (int, float, np.generic, bool)) \
            and value == 0:     # (zero_grad of a row_sparse gradient) nothing dense is made
        dtype = target._either().dtype
        target._set_sparse(zeros(target._STYPE, shape, ctx=target._ctx, dtype=np_dtype(dtype))._sparse())
        return
    if isinstance(value, NDArray):
        if tuple(value.shape) != tuple(shape):
            raise MXNetError('cannot assign an array of shape %s to one of shape %s' % (value.shape, shape))
        src = value._sparse() if isinstance(value, BaseSparseNDArray) else value._t.detach()
    elif isinstance(value, (int, float, np.generic, bool)):
        src = torch.full(shape, value, dtype=target._either().dtype if isinstance(target, BaseSparseNDArray)
                         else target._t.dtype, device=target._ctx.torch_device)
    else:
        src = torch.as_tensor(np.asarray(value)).reshape(shape)
    if not isinstance(target, BaseSparseNDArray):
        target._t.copy_(storage.to_dense(src).to(target._t.dtype).expand(shape))
        return
    dtype = target._either().dtype
    if storage.stype_of(src) == DEFAULT:
        src = src.to(device=target._ctx.torch_device, dtype=dtype).expand(shape).contiguous()
    else:
        src = storage.with_values(src, src.values().to(dtype)) if src.values().dtype != dtype else src.clone()
        if storage.stype_of(src) != target._STYPE:
            src = storage.to_dense(src)
        if src.device != target._ctx.torch_device:      # a copy between devices
            src = src.to(target._ctx.torch_device)
    target._set_sparse(storage.cast(src, target._STYPE))


# ------------------------------------------------------------------ operators
def _op(name):
    from . import _internal, op
    return getattr(op, name, None) or getattr(_internal, name)


def _ufunc(lhs, rhs, elemwise, broadcast, scalar_op):
    """``lhs <op> rhs`` for a sparse ``lhs``, as MXNet's sparse arrays: the element-wise
    operator for equal shapes, the broadcasting one otherwise, the scalar one for a number."""
    if isinstance(rhs, (int, float, np.generic, bool)):
        return _op(scalar_op)(lhs, scalar=float(rhs))
    if isinstance(rhs, np.ndarray):
        rhs = array(rhs, ctx=lhs._ctx, dtype=rhs.dtype)
    if not isinstance(rhs, NDArray):
        return NotImplemented
    if elemwise is None:        # reflected: rhs <op> lhs with rhs an array never comes here
        return NotImplemented
    return _op(elemwise if tuple(lhs.shape) == tuple(rhs.shape) else broadcast)(lhs, rhs)


DENSE_CALL = object()    # storage_dispatch's answer for a call its operator's dense path takes


def storage_dispatch(spec, dense_function):
    """The storage rule of ``spec`` as a test the operator's generated mx.nd function makes
    first, once a sparse array exists (``SPARSE_MADE``) or where the attributes choose the
    output's storage (``cast_storage``): ``dispatch(args, kwargs, out, name)`` gives the
    result of a call with a sparse input or output, or :data:`DENSE_CALL` for an all-dense
    call, which the function then runs itself. ``dense_function`` is the generated function
    without this test: the rule's dense fallback (sparse inputs densified) calls it."""
    rule, sparse_impl = spec.storage
    inputs = spec.inputs
    variadic = spec.variadic
    n_in = len(inputs)
    input_pos = {n: i for i, n in enumerate(inputs)}
    by_attrs = getattr(spec, 'storage_by_attrs', False)     # cast_storage: output type from attributes
    all_dense = (DEFAULT,) * n_in

    parsed = {}     # attributes parsed per keyword set (a training loop repeats a few)
    # (input storage types, keywords): (attributes, the rule's output storage type, the torch
    # function that computes such a call directly, or None: ``spec.storage_kernel``)
    ruled = {}
    storage_kernel = getattr(spec, 'storage_kernel', None)

    def parse(kwargs):
        try:
            attrs = parsed.get(tuple(kwargs.items()))
        except TypeError:       # an unhashable value (a list)
            return spec.parse_attrs(kwargs)
        if attrs is None:
            attrs = spec.parse_attrs(kwargs)
            if len(parsed) < 64:
                parsed[tuple(kwargs.items())] = attrs
        return attrs

    def dispatch(args, kwargs, out, name):
        arrays = args if variadic else args[:n_in]
        for a in arrays:
            if isinstance(a, BaseSparseNDArray):
                break
        else:   # all-dense positional inputs: every dense call, so the cheapest tests first
            if not ((out is not None and isinstance(out, BaseSparseNDArray)) or
                    (kwargs and any(isinstance(kwargs.get(n), BaseSparseNDArray) for n in inputs if n in kwargs))):
                if not by_attrs:
                    return DENSE_CALL
                if (len(args) == n_in and input_pos.keys().isdisjoint(kwargs)
                        and rule(all_dense, parse(kwargs)) == DEFAULT):
                    return DENSE_CALL       # cast_storage(dense, 'default'): the dense copy
        if not variadic and len(args) == n_in and out is None and (not kwargs or input_pos.keys().isdisjoint(kwargs)):
            # the common sparse call: inputs by position, attributes by keyword
            if _AUTOGRAD.recording:
                res = _run_sparse(spec, rule, sparse_impl, args, parse(kwargs),
                                  tuple([a._STYPE if isinstance(a, BaseSparseNDArray) else DEFAULT for a in args]))
                if res is not None:
                    return res
            else:
                # a batch of a training loop: ``dot(csr_batch, weight)`` is tens of microseconds,
                # so this is written flat (one pass over the inputs, the rule's answer kept)
                stypes, tensors = [], []
                for a in args:
                    if isinstance(a, BaseSparseNDArray):
                        stypes.append(a._STYPE)
                        tensors.append(a._sp if a._synced is _NO_DENSE else a._sparse())
                    else:
                        stypes.append(DEFAULT)
                        tensors.append(a._t)
                stypes = tuple(stypes)
                # keyed by the storage types alone where no keyword is given (a tuple of
                # strings, never equal to a (types, keywords) pair)
                key = (stypes, tuple(kwargs.items())) if kwargs else stypes
                try:
                    attrs, out_stype, kernel = ruled[key]
                except (KeyError, TypeError):      # not asked yet, or an unhashable value (a list)
                    attrs = parse(kwargs)
                    out_stype = rule(stypes, attrs)
                    kernel = None if out_stype is None or storage_kernel is None else storage_kernel(stypes, attrs)
                    if len(ruled) < 64:
                        try:
                            ruled[key] = attrs, out_stype, kernel
                        except TypeError:
                            pass
                if out_stype is not None:
                    res = None
                    if kernel is not None:
                        for t in tensors:
                            if t.requires_grad:     # the general call runs it untracked
                                break
                        else:
                            try:
                                res = kernel(*tensors)
                            except (RuntimeError, IndexError, ValueError, TypeError):
                                res = None          # the general call says what is wrong
                    if res is None:
                        res = _call_sparse(spec, sparse_impl, tensors, attrs, stypes, args)
                    if res.__class__ is _TENSOR and res.layout is _STRIDED:    # a dense result
                        return _new(res, args[0]._ctx)
                    return _wrap_results(res, args[0]._ctx)
        return _storage_call(spec, rule, sparse_impl, dense_function, args, kwargs, out, name, n_in, input_pos)
    return dispatch


def _records_gradient(arrays):
    """Whether autograd must record this call: recording, and an input is a variable or comes
    from one. torch does not differentiate most sparse kernels used here, so such a call runs
    the operator's dense implementation, which autograd records (MXNet's gradient values),
    except where ``_recorded_tensors`` finds the sparse one differentiable."""
    if not is_recording():
        return False
    for a in arrays:
        if isinstance(a, BaseSparseNDArray):
            if a._has_dense() and _DENSE.__get__(a).requires_grad:
                return True
        elif isinstance(a, NDArray) and a._t.requires_grad:
            return True
    return False


def _recorded_tensors(spec, arrays, attrs):
    """Under ``record()`` with a variable among ``arrays``: the tensors to run the operator's
    sparse implementation on, recorded, where torch differentiates it for these storage types
    (``spec.storage_recorded(stypes, attrs)``, e.g. ``dot(csr, weight)``, whose weight gradient
    torch gives as the rows the batch uses); None otherwise (the recorded dense implementation
    runs). A sparse variable (a row_sparse weight autograd records against) enters as the dense
    tensor it already has, so its gradient flows; no other input is densified."""
    recorded = getattr(spec, 'storage_recorded', None)
    if recorded is None:
        return None
    stypes, tensors = [], []
    for a in arrays:
        if a is None:
            stypes.append(None)
            tensors.append(None)
        elif not isinstance(a, BaseSparseNDArray):
            stypes.append(DEFAULT)
            tensors.append(a._t)
        elif a._has_dense() and _DENSE.__get__(a).requires_grad:
            stypes.append(DEFAULT)
            tensors.append(_DENSE.__get__(a))
        else:
            stypes.append(a._STYPE)
            tensors.append(a._sparse())
    return tensors if recorded(tuple(stypes), attrs) else None


def _run_sparse(spec, rule, sparse_impl, arrays, attrs, stypes):
    """The result of the sparse implementation for these inputs (of storage types ``stypes``),
    or None where the rule falls back (the caller then goes the general way, which logs and
    densifies).

    The path of a sparse call under ``record()`` (``dot(csr_batch, weight)`` of a training
    step costs tens of microseconds), so it is written flat: no generators, a dense result
    wrapped directly. A call that is not recorded goes a flatter way still (``dispatch``)."""
    if is_recording() and _records_gradient(arrays):
        tensors = _recorded_tensors(spec, arrays, attrs)
        if tensors is None:
            return None
    elif rule(stypes, attrs) is None:
        return None
    else:
        tensors = [a._sparse() if isinstance(a, BaseSparseNDArray) else a._t for a in arrays]
    res = _call_sparse(spec, sparse_impl, tensors, attrs, stypes, arrays)
    ctx = arrays[0]._ctx
    if res.__class__ is torch.Tensor and res.layout is _STRIDED:       # a dense result, the usual one
        return _new(res, ctx)
    return _wrap_results(res, ctx)


def _wrap_results(res, ctx):
    """The NDArray of a sparse implementation's result, or the list of them for an operator
    with several outputs (DGL's samplers give dense and csr arrays together)."""
    if isinstance(res, (tuple, list)):
        return [from_sparse_tensor(r, ctx) for r in res]
    return from_sparse_tensor(res, ctx)


def _storage_call(spec, rule, sparse_impl, nd_function, args, kwargs, out, name, n_in, input_pos):
    if spec.variadic:
        arrays = list(args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args)
        attr_kwargs = dict(kwargs)
        if isinstance(spec.variadic, str):
            attr_kwargs.setdefault(spec.variadic, len(arrays))
    else:
        arrays = list(args[:n_in]) + [None] * max(0, n_in - len(args))
        attr_kwargs = {k: v for k, v in kwargs.items() if k not in input_pos}
        attr_kwargs.update(zip(spec.attr_names, args[n_in:]))
        for k, v in kwargs.items():
            if k in input_pos:
                arrays[input_pos[k]] = v
        while arrays and arrays[-1] is None:
            arrays.pop()
    attrs = spec.parse_attrs(attr_kwargs)
    stypes = [None if a is None else stype_of_array(a) for a in arrays]
    recorded = _records_gradient([a for a in arrays if a is not None])
    ctx = next((a._ctx for a in arrays if isinstance(a, NDArray)), None) or attrs.get('ctx') or current_context()
    tensors = _recorded_tensors(spec, arrays, attrs) if recorded else None
    if tensors is not None:
        result = _wrap_results(_call_sparse(spec, sparse_impl, tensors, attrs, stypes, arrays), ctx)
        if out is None:
            return result
        _assign(out, result)
        return out
    out_stype = rule(tuple(stypes), attrs)
    if recorded or out_stype is None:
        if not recorded and any(s not in (None, DEFAULT) for s in stypes):
            storage_fallback_log(spec.name, [s for s in stypes if s is not None], attr_kwargs)
        res = nd_function(*args, name=name, **kwargs)
        if recorded and out_stype not in (None, DEFAULT) and res.__class__ is NDArray:
            # recorded, the call ran dense (torch differentiates it); its result still has the
            # storage type MXNet gives it, its dense form the recorded tensor gradients flow through
            res = with_stype(res._t, res._ctx, out_stype)
        if out is None:
            return res
        _assign(out, res)
        return out
    tensors = [None if a is None else (a._sparse() if isinstance(a, BaseSparseNDArray) else a._t) for a in arrays]
    result = _wrap_results(_call_sparse(spec, sparse_impl, tensors, attrs, stypes, arrays), ctx)
    if out is None:
        return result
    _assign(out, result)
    return out


def _call_sparse(spec, sparse_impl, tensors, attrs, stypes, arrays):
    """``sparse_impl`` on ``tensors``, recorded under ``record()`` where one requires gradients;
    its errors as MXNetError naming the operator and the inputs."""
    try:
        for t in tensors:
            if t is not None and t.requires_grad and t.layout is _STRIDED:
                return run_untracked(sparse_impl, *tensors, **attrs)
        return sparse_impl(*tensors, **attrs)
    except MXNetError:
        raise
    except (RuntimeError, IndexError, ValueError, TypeError) as err:
        raise MXNetError('%s: %s (inputs: %s)' % (spec.name, str(err).split('\n')[0], ', '.join(
            '%s %s' % (s, tuple(a.shape)) for s, a in zip(stypes, arrays) if a is not None))) from None


# ------------------------------------------------------------------ check_format
def _fail(arr, what, pos, detail):
    raise MXNetError('check_format: %s of shape %s: %s at position %d (%s)'
                     % (type(arr).__name__, arr.shape, what, pos, detail))


def _first_true(mask):
    hits = torch.nonzero(mask).reshape(-1)
    return int(hits[0]) if len(hits) else None


def _check_format(arr, full_check):
    sp = arr._sparse()
    if isinstance(arr, CSRNDArray):
        indptr, indices, values = storage.csr_parts(sp)
        nrows, ncols = arr.shape
        if len(indptr) != nrows + 1:
            _fail(arr, 'indptr has %d entries, expected rows + 1 = %d' % (len(indptr), nrows + 1),
                  len(indptr), 'length')
        if len(indices) != len(values):
            _fail(arr, 'indices and data differ in length', min(len(indices), len(values)),
                  '%d indices, %d values' % (len(indices), len(values)))
        if not full_check:
            return
        if len(indptr) and int(indptr[0]) != 0:
            _fail(arr, 'indptr does not start at 0', 0, 'indptr[0] = %d' % int(indptr[0]))
        pos = _first_true(indptr < 0)
        if pos is not None:
            _fail(arr, 'indptr is negative', pos, 'indptr[%d] = %d' % (pos, int(indptr[pos])))
        pos = _first_true(indptr[1:] < indptr[:-1])
        if pos is not None:
            _fail(arr, 'indptr decreases', pos + 1, 'indptr[%d] = %d < indptr[%d] = %d'
                  % (pos + 1, int(indptr[pos + 1]), pos, int(indptr[pos])))
        if int(indptr[-1]) != len(indices):
            _fail(arr, 'indptr does not end at the number of indices', nrows,
                  'indptr[-1] = %d, %d indices' % (int(indptr[-1]), len(indices)))
        pos = _first_true((indices < 0) | (indices >= ncols))
        if pos is not None:
            _fail(arr, 'column index out of range [0, %d)' % ncols, pos, 'indices[%d] = %d' % (pos, int(indices[pos])))
        rows = storage.csr_rows(indptr)
        pos = _first_true((rows[1:] == rows[:-1]) & (indices[1:] <= indices[:-1]))
        if pos is not None:
            _fail(arr, 'column indices not strictly ascending within row %d' % int(rows[pos + 1]), pos + 1,
                  'indices[%d] = %d after %d' % (pos + 1, int(indices[pos + 1]), int(indices[pos])))
        return
    indices, values = storage.rsp_parts(sp)
    if len(indices) != values.shape[0]:
        _fail(arr, 'indices and data rows differ in number', min(len(indices), values.shape[0]),
              '%d indices, %d rows of data' % (len(indices), values.shape[0]))
    if not full_check:
        return
    pos = _first_true((indices < 0) | (indices >= arr.shape[0]))
    if pos is not None:
        _fail(arr, 'row index out of range [0, %d)' % arr.shape[0], pos, 'indices[%d] = %d' % (pos, int(indices[pos])))
    pos = _first_true(indices[1:] <= indices[:-1])
    if pos is not None:
        _fail(arr, 'row indices not strictly ascending', pos + 1,
              'indices[%d] = %d after %d' % (pos + 1, int(indices[pos + 1]), int(indices[pos])))


def cast_storage_of(arr, stype):
    """``arr.tostype(stype)`` for a dense ``arr``: a compressed copy (csr needs 2-D: ValueError)."""
    if stype not in STYPES:
        raise MXNetError("tostype: unknown storage type %r; expected one of %s" % (stype, STYPES))
    if stype == DEFAULT:
        return _new(arr._t.detach().clone(), arr._ctx)
    if stype == CSR and arr.ndim != 2:
        raise ValueError('tostype: csr storage needs a 2-D array, got shape %s' % (arr.shape,))
    return from_sparse_tensor(storage.cast(arr._t.detach(), stype), arr._ctx)


# ------------------------------------------------------------------ row_sparse helpers (kvstore)
def rows_array(rows, values, shape, ctx):
    """A RowSparseNDArray of ``shape`` holding ``values`` at the (sorted, unique) ``rows``
    (torch tensors, not copied)."""
    return from_sparse_tensor(storage.make_rsp(rows, values, shape), ctx)


def sum_row_sparse(arrays, ctx):
    """The sum of row_sparse arrays (on any devices) as a RowSparseNDArray on ``ctx``: the
    union of their rows, nothing dense made."""
    dev = ctx.torch_device
    tensors = [_to_device(a._sparse(), ctx) if a._sparse().device != dev else a._sparse() for a in arrays]
    total = tensors[0].clone() if len(tensors) == 1 else storage.registry.get('add_n').storage[1](*tensors)
    return from_sparse_tensor(total, ctx)


def storage_tensor(arr):
    """The torch tensor holding ``arr``'s value in its own storage type: a sparse array's
    sparse tensor (its dense form is not made), a dense array's tensor."""
    return arr._sparse() if isinstance(arr, BaseSparseNDArray) else arr._t


def set_rows(out, rows, values):
    """Make ``out`` (any storage) hold ``values`` at ``rows`` (sorted, unique) and zeros
    elsewhere: a RowSparseNDArray stores just those rows."""
    if isinstance(out, RowSparseNDArray):
        dev = out._ctx.torch_device
        out._set_sparse(storage.make_rsp(rows.to(dev), values.to(device=dev, dtype=out._either().dtype), out.shape))
        return
    with torch.no_grad():
        out._t.zero_()
        out._t[rows.to(out._t.device)] = values.to(device=out._t.device, dtype=out._t.dtype)


register_sparse_storage(with_stype, zeros, cast_storage_of, sparse_array)


def hold_value(out, tensor):
    """Make the sparse array ``out`` hold ``tensor``'s value (not copied, not recorded by
    autograd): a sparse tensor of ``out``'s storage type as it is, any other tensor (dense, or
    of the other sparse layout) as ``out``'s dense form, compressed when first asked for."""
    tensor = tensor.detach()
    if storage.stype_of(tensor) == out.stype:
        out._set_sparse(tensor)
    else:
        out._t = tensor if tensor.layout is _STRIDED else storage.to_dense(tensor)
