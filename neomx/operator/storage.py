"""Storage-type rules: which operators keep sparse inputs sparse, and how (MXNet's ``FInferStorageType``).

neomx's sparse arrays hand operators torch sparse tensors: a ``csr`` array is a
``torch.sparse_csr`` tensor, a ``row_sparse`` array a coalesced ``torch.sparse_coo`` tensor
with one sparse dimension (its indices are the stored rows, its values the rows themselves).
Each operator MXNet gives a storage rule gets one here, attached to its registry spec as
``spec.storage = (rule, sparse_impl)``:

- ``rule(stypes, attrs)`` takes the inputs' storage types ('default', 'row_sparse', 'csr';
  None for an absent input) and the parsed attributes, and returns the output's storage type,
  or None where MXNet falls back to dense computation (the caller then densifies the inputs,
  runs ``spec.impl`` and logs MXNet's storage-fallback message);
- ``sparse_impl(*tensors, **attrs)`` computes on the sparse tensors and returns a tensor of
  the storage type the rule gave (sparse, or a dense ``torch.Tensor``);
- optionally ``spec.storage_kernel(stypes, attrs)``: the torch function that computes a call
  of these storage types and attributes directly on the tensors (``torch.mm`` for
  ``dot(csr, dense)``), or None; a call that is not recorded runs it without the checks of
  ``sparse_impl``, which runs instead (and reports the error) where it fails.

Every rule below was checked against MXNet 1.9.1's output storage types (CPU). Rules are
consulted only when some input is sparse: all-dense calls never come here.

Example
-------
>>> import torch
>>> from neomx.operator import storage
>>> x = storage.dense_to_rsp(torch.tensor([[0., 0.], [1., -2.]]))
>>> rule, impl = storage.rule_of('abs')
>>> rule(('row_sparse',), {})
'row_sparse'
>>> y = impl(x)
>>> storage.stype_of(y), y.indices().tolist(), y.values().tolist()
('row_sparse', [[1]], [[1.0, 2.0]])
"""
import math
import threading
import warnings

import numpy as np
import torch

from .._sparse_state import SPARSE_MADE
from .._torch_private import tensor_version
from ..base import MXNetError
from . import registry

__all__ = ['DEFAULT', 'ROW_SPARSE', 'CSR', 'stype_of', 'make_csr', 'make_rsp', 'rsp_parts', 'csr_parts',
           'csr_rows', 'distinct_ids', 'dense_to_rsp', 'dense_to_csr', 'to_dense', 'cast', 'with_values', 'rule_of',
           'infer_storage']

DEFAULT, ROW_SPARSE, CSR = 'default', 'row_sparse', 'csr'
_INDEX = torch.int64


# ------------------------------------------------------------ representation
def stype_of(t):
    """The MXNet storage type of a tensor (None for None)."""
    if t is None:
        return None
    layout = t.layout
    if layout is torch.sparse_csr:
        return CSR
    if layout is torch.sparse_coo:
        return ROW_SPARSE
    return DEFAULT


_CSR_WARNED = []


def make_csr(indptr, indices, values, shape):
    """A csr tensor from its parts (not checked: see ``check_format``)."""
    if not _CSR_WARNED:
        # torch warns once per process that its csr tensors are "beta": neomx's users did not
        # make one, so the first is made with that warning silenced (the filter is local)
        _CSR_WARNED.append(True)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return make_csr(indptr, indices, values, shape)
    return torch.sparse_csr_tensor(indptr.to(_INDEX), indices.to(_INDEX), values, size=tuple(shape),
                                   check_invariants=False)


def make_rsp(indices, values, shape):
    """A row_sparse tensor: the rows ``indices`` (sorted, unique) of ``shape`` hold ``values``."""
    return torch.sparse_coo_tensor(indices.to(_INDEX).reshape(1, -1), values, size=tuple(shape),
                                   is_coalesced=True, check_invariants=False)


def rsp_parts(t):
    """(row indices, values) of a row_sparse tensor."""
    if not t.is_coalesced():
        t = t.coalesce()
    return t.indices()[0], t.values()


def csr_parts(t):
    """(indptr, indices, values) of a csr tensor."""
    return t.crow_indices(), t.col_indices(), t.values()


def csr_rows(indptr):
    """The row of each stored entry of a csr matrix with row pointers ``indptr``."""
    # a 1 where each row after the first begins, summed up: a row's entries get its number
    # (torch.repeat_interleave over the row lengths is hundreds of times slower on CPU)
    starts = indptr[1:-1].to(torch.int64)
    marks = torch.zeros(int(indptr[-1]) + 1, dtype=torch.int64, device=indptr.device)
    marks.index_add_(0, starts, torch.ones_like(starts))
    return marks[:-1].cumsum(0)


# the answers of distinct_ids for the last index tensors asked about: [(tensor, key, answer)]
_DISTINCT = []
_DISTINCT_KEPT = 2
_DISTINCT_LOCK = threading.Lock()


def distinct_ids(ids):
    """``(distinct, position)`` of the 1-D int64 tensor ``ids``: its distinct values, sorted,
    and the position of each entry's value among them (``torch.unique(ids, return_inverse=True)``).

    A training step asks this twice of the same csr batch's columns: ``row_sparse_pull`` of the
    rows the batch uses, then ``dot(csr, weight)``, whose weight gradient holds those rows.
    Sorting them costs more than the rest of either call's index work, so the answers for the
    last few tensors are kept, keyed by their memory and torch's write counter (the tensor is
    kept too, so that its memory cannot be another tensor's while the answer is kept)."""
    if ids.numel() == 0:
        return torch.unique(ids, return_inverse=True)
    key = (ids.data_ptr(), ids.numel(), ids.stride(0), ids.dtype, ids.device, tensor_version(ids))
    for _, known, answer in _DISTINCT:
        if known == key:
            return answer
    if ids.device.type == 'cpu':
        # numpy's sort of int64 is several times faster than torch's on a CPU (15,000 ids:
        # about 0.2 ms against 0.6 ms, one thread)
        distinct, position = np.unique(ids.numpy(), return_inverse=True)
        answer = (torch.from_numpy(distinct), torch.from_numpy(position.astype(np.int64, copy=False)))
    else:
        answer = torch.unique(ids, return_inverse=True)
    with _DISTINCT_LOCK:        # row_sparse_pull may run on another thread than the step
        _DISTINCT.insert(0, (ids, key, answer))
        del _DISTINCT[_DISTINCT_KEPT:]
    return answer


def dense_to_rsp(dense):
    """The row_sparse form of a dense tensor: its rows holding a non-zero."""
    d = dense.detach()
    flat = d.reshape(d.shape[0], -1) if d.dim() > 1 else d.reshape(-1, 1)
    # one pass over a column (a linear model's weight), no mask made
    rows = torch.nonzero(flat[:, 0] if flat.shape[1] == 1 else flat.ne(0).any(dim=1)).reshape(-1)
    return make_rsp(rows, d[rows], d.shape)


def dense_to_csr(dense):
    """The csr form of a 2-D dense tensor: its non-zero entries."""
    d = dense.detach()
    rows, cols = torch.nonzero(d, as_tuple=True)
    counts = torch.bincount(rows, minlength=d.shape[0])
    indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    return make_csr(indptr, cols, d[rows, cols], d.shape)


def to_dense(t):
    """The dense form of a tensor. Written here rather than ``Tensor.to_dense`` so that a
    malformed array (indices out of range: see ``check_format``) raises instead of writing
    outside its memory."""
    if t.layout is torch.strided:
        return t
    if t.layout is torch.sparse_csr:
        indptr, cols, vals = csr_parts(t)
        out = vals.new_zeros(t.shape)
        out[csr_rows(indptr), cols] = vals
        return out
    idx, vals = rsp_parts(t)
    out = vals.new_zeros(t.shape)
    out[idx] = vals
    return out


def cast(t, stype):
    """``t`` in storage type ``stype`` (the same tensor where it already is)."""
    have = stype_of(t)
    if have == stype:
        return t
    if stype == DEFAULT:
        return to_dense(t)
    if stype == CSR:
        if t.dim() != 2:
            raise MXNetError('cast_storage: csr storage needs a 2-D array, got shape %s' % (tuple(t.shape),))
        if have == ROW_SPARSE:      # the stored rows' non-zeros, without a dense copy of the rest
            idx, vals = rsp_parts(t)
            sub = dense_to_csr(vals)
            rows = idx[csr_rows(sub.crow_indices())]
            counts = torch.bincount(rows, minlength=t.shape[0])
            indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
            return make_csr(indptr, sub.col_indices(), sub.values(), t.shape)
        return dense_to_csr(t)
    if have == CSR:                 # the rows holding entries
        indptr, cols, vals = csr_parts(t)
        rows = torch.nonzero(indptr[1:] > indptr[:-1]).reshape(-1)
        block = torch.zeros((len(rows), t.shape[1]), dtype=vals.dtype, device=vals.device)
        pos = torch.searchsorted(rows, csr_rows(indptr))
        block[pos, cols] = vals
        return make_rsp(rows, block, t.shape)
    return dense_to_rsp(t)


def values_of(t):
    return t.values()


def with_values(t, values):
    """A sparse tensor with ``t``'s structure holding ``values``."""
    if t.layout is torch.sparse_csr:
        indptr, cols, _ = csr_parts(t)
        return make_csr(indptr, cols, values, t.shape)
    idx, _ = rsp_parts(t)
    return make_rsp(idx, values, tuple(t.shape[:1]) + tuple(values.shape[1:]))


def _entry_keys(t):
    """For a csr tensor: each entry's position as row * ncols + col, and its values."""
    indptr, cols, vals = csr_parts(t)
    return csr_rows(indptr) * t.shape[1] + cols, vals


def _csr_from_keys(keys, values, shape):
    rows = torch.div(keys, shape[1], rounding_mode='floor')
    counts = torch.bincount(rows, minlength=shape[0])
    indptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    return make_csr(indptr, keys - rows * shape[1], values, shape)


def _scatter_into(union, keys, values):
    """``values`` (at sorted positions ``keys``) spread over the positions ``union``, zeros elsewhere."""
    out = values.new_zeros((len(union),) + tuple(values.shape[1:]))
    out[torch.searchsorted(union, keys)] = values
    return out


def _union_apply(fn, a, b):
    """``fn`` of two sparse tensors of one storage type, on the union of their stored positions:
    right for the operators whose value at two zeros is zero."""
    if a.layout is torch.sparse_csr:
        ka, va = _entry_keys(a)
        kb, vb = _entry_keys(b)
        union = torch.unique(torch.cat([ka, kb]))
        out = fn(_scatter_into(union, ka, va), _scatter_into(union, kb, vb))
        return _csr_from_keys(union, out, a.shape)
    ia, va = rsp_parts(a)
    ib, vb = rsp_parts(b)
    union = torch.unique(torch.cat([ia, ib]))
    out = fn(_scatter_into(union, ia, va), _scatter_into(union, ib, vb))
    return make_rsp(union, out, a.shape)


def _dense_at(sp, dense):
    """The values of ``dense`` (broadcast to ``sp``'s shape) at ``sp``'s stored positions."""
    dense = dense.expand(sp.shape)
    if sp.layout is torch.sparse_csr:
        indptr, cols, _ = csr_parts(sp)
        return dense[csr_rows(indptr), cols]
    idx, _ = rsp_parts(sp)
    return dense[idx]


# ------------------------------------------------------------ rules
def rule_of(name):
    """(rule, sparse_impl) of operator ``name``, or None where it has no storage rule."""
    return getattr(registry.get(name), 'storage', None)


def infer_storage(spec, stypes, attrs):
    """Output storage type of ``spec`` for inputs of ``stypes``: its rule's answer, 'default'
    where every input is dense or the operator falls back."""
    storage = getattr(spec, 'storage', None)
    if storage is None or all(s in (None, DEFAULT) for s in stypes):
        return DEFAULT
    return storage[0](tuple(stypes), attrs) or DEFAULT


def _attach(names, rule, impl_for):
    """Give each operator of ``names`` the storage rule ``rule`` and the sparse implementation
    ``impl_for(spec)``."""
    for name in names:
        spec = registry.get(name)
        spec.storage = (rule, impl_for(spec))


def _first_sparse(stypes, attrs):
    return stypes[0] if stypes[0] in (ROW_SPARSE, CSR) else None


def _on_values(spec):
    """The operator's dense implementation applied to the stored values only."""
    impl = spec.impl

    def run(data, **attrs):
        return with_values(data, impl(values_of(data), **attrs))
    return run


# Unary operators whose value at zero is zero: MXNet keeps their sparse inputs' storage.
_ZERO_PRESERVING = ('abs', 'sign', 'round', 'rint', 'ceil', 'floor', 'trunc', 'fix', 'square', 'sqrt',
                    'sin', 'tan', 'arcsin', 'arctan', 'sinh', 'tanh', 'arcsinh', 'arctanh', 'expm1',
                    'log1p', 'relu', 'negative', 'degrees', 'radians', 'cbrt', 'clip', '_copy',
                    'BlockGrad', 'make_loss', '_mul_scalar', '_div_scalar')
_attach(_ZERO_PRESERVING, _first_sparse, _on_values)


def _zero_stays_zero(spec):
    """Rule of scalar operators that MXNet keeps sparse where ``op(0, scalar)`` is 0 (``x + 0``,
    ``x > 0.5``; not ``x == 0``)."""
    impl = spec.impl

    def rule(stypes, attrs):
        if stypes[0] not in (ROW_SPARSE, CSR):
            return None
        zero = impl(torch.zeros(1), **attrs)
        return stypes[0] if not bool(zero.ne(0).any()) else None
    return rule


for _name in ('_plus_scalar', '_minus_scalar', '_equal_scalar', '_not_equal_scalar', '_greater_scalar',
              '_lesser_scalar', '_greater_equal_scalar', '_lesser_equal_scalar'):
    _spec = registry.get(_name)
    _spec.storage = (_zero_stays_zero(_spec), _on_values(_spec))


# the scatter operators compute at a sparse lhs's stored positions only (+ 2 leaves zeros zero)
_attach(('_scatter_plus_scalar', '_scatter_minus_scalar'), _first_sparse, _on_values)


def _scatter_div_rule(stypes, attrs):
    """_scatter_elemwise_div keeps a row_sparse lhs's rows, over any rhs (a csr lhs: dense)."""
    return ROW_SPARSE if stypes[0] == ROW_SPARSE else None


def _scatter_div(lhs, rhs):
    rhs = rhs if rhs.layout is torch.strided else to_dense(rhs)
    return with_values(lhs, _SCATTER_DIV.impl(values_of(lhs), _dense_at(lhs, rhs)))


_SCATTER_DIV = registry.get('_scatter_elemwise_div')
_SCATTER_DIV.storage = (_scatter_div_rule, _scatter_div)


def _quadratic_rule(stypes, attrs):
    """``a*x^2 + b*x + c`` keeps a csr input csr where ``c`` is 0 (MXNet has no row_sparse form)."""
    return CSR if stypes[0] == CSR and attrs['c'] == 0 else None


registry.get('_contrib_quadratic').storage = (_quadratic_rule, _on_values(registry.get('_contrib_quadratic')))


def _batch_norm_rule(stypes, attrs):
    """BatchNorm falls back to dense, except that MXNet refuses sparse inputs with ``fix_gamma``."""
    if attrs['fix_gamma'] and any(s in (ROW_SPARSE, CSR) for s in stypes):
        raise MXNetError('BatchNorm: fix_gamma=True is not supported for sparse ndarrays (input storage '
                         'types %s)' % ', '.join(s or 'none' for s in stypes))


registry.get('BatchNorm').storage = (_batch_norm_rule, None)
registry.get('BatchNorm').storage_recorded = _batch_norm_rule
# also checked when an executor binds sparse arguments (MXNet's storage inference at bind),
# which it densifies where they are differentiated (see neomx.symbol.sparse_storage)
registry.get('BatchNorm').storage_check = _batch_norm_rule


def _zeros_like_sparse(data):
    if data.layout is torch.sparse_csr:
        return make_csr(torch.zeros(data.shape[0] + 1, dtype=_INDEX, device=data.device),
                        torch.zeros(0, dtype=_INDEX, device=data.device),
                        data.values().new_zeros(0), data.shape)
    return make_rsp(torch.zeros(0, dtype=_INDEX, device=data.device),
                    data.values().new_zeros((0,) + tuple(data.shape[1:])), data.shape)


registry.get('zeros_like').storage = (_first_sparse, _zeros_like_sparse)


# ------------------------------------------------------------ binary element-wise
def _both_same_sparse(stypes, attrs):
    a, b = stypes
    return a if a == b and a in (ROW_SPARSE, CSR) else None


def _binary_impl(spec):
    """Sparse implementation of an element-wise binary operator: on the union of the stored
    positions for two sparse inputs, at the sparse input's positions against a dense one."""
    impl = spec.impl

    def run(lhs, rhs, **attrs):
        ls, rs = stype_of(lhs), stype_of(rhs)
        fn = (lambda a, b: impl(a, b, **attrs)) if attrs else impl
        if ls == rs:
            return _union_apply(fn, lhs, rhs)
        if ls != DEFAULT:
            return with_values(lhs, fn(values_of(lhs), _dense_at(lhs, rhs)))
        return with_values(rhs, fn(_dense_at(rhs, lhs), values_of(rhs)))
    return run


_attach(('elemwise_add', 'elemwise_sub', '_maximum', '_minimum', '_hypot'), _both_same_sparse, _binary_impl)


def _mul_rule(stypes, attrs):
    """elemwise_mul: a sparse input keeps its storage against a dense one or one of its kind."""
    a, b = stypes
    if a == b:
        return _both_same_sparse(stypes, attrs)
    if DEFAULT in (a, b):
        return a if a != DEFAULT else b
    return None


_attach(('elemwise_mul',), _mul_rule, _binary_impl)


def _broadcast_csr_rule(stypes, attrs):
    """broadcast_mul/div: csr times (or over) a dense array stays csr."""
    return CSR if tuple(stypes) == (CSR, DEFAULT) else None


_attach(('broadcast_mul', 'broadcast_div'), _broadcast_csr_rule, _binary_impl)


def _add_n_rule(stypes, attrs):
    return ROW_SPARSE if all(s == ROW_SPARSE for s in stypes) else None


def _add_n_sparse(*args, **attrs):
    idx = torch.unique(torch.cat([rsp_parts(a)[0] for a in args]))
    total = None
    for a in args:
        i, v = rsp_parts(a)
        part = _scatter_into(idx, i, v)
        total = part if total is None else total + part
    return make_rsp(idx, total, args[0].shape)


registry.get('add_n').storage = (_add_n_rule, _add_n_sparse)


# ------------------------------------------------------------ dot
def _dot_rule(stypes, attrs):
    """dot(csr, dense) is dense, dot(csr.T, dense) row_sparse; dot(csr, row_sparse) dense."""
    lhs, rhs = stypes
    if lhs == CSR and rhs in (DEFAULT, ROW_SPARSE) and not attrs['transpose_b']:
        return ROW_SPARSE if attrs['transpose_a'] and rhs == DEFAULT else DEFAULT
    return None


def _check_dot(lhs, rhs, transpose_a, transpose_b):
    if rhs.dim() != 2:      # MXNet's sparse dot, transposed or not
        raise MXNetError('dot: sparse dot only supports 2 dimensional rhs, got shape %s' % (tuple(rhs.shape),))
    if lhs.shape[0 if transpose_a else 1] != rhs.shape[0]:
        raise MXNetError('dot: shape error: %s X %s with transpose_a=%s transpose_b=%s'
                         % (tuple(lhs.shape), tuple(rhs.shape), transpose_a, transpose_b))
    if lhs.dtype != rhs.dtype:
        raise MXNetError('dot: operands have different dtypes %s and %s' % (lhs.dtype, rhs.dtype))


def _dot_sparse(lhs, rhs, transpose_a, transpose_b, forward_stype):
    if rhs.layout is not torch.strided:
        rhs = to_dense(rhs)         # a row_sparse weight: all its rows are read
    if not transpose_a:
        if rhs.requires_grad and torch.is_grad_enabled():
            _check_dot(lhs, rhs, transpose_a, transpose_b)
            # recorded: the gradient of rhs (a weight) is the rows the entries use (MXNet's
            # row_sparse gradient of dot(csr, dense)), several times faster than sparse.mm's
            # dense one; a computed rhs gets those rows in a dense gradient, which the
            # operators that made it can take (torch.mm's would transpose the csr: a sort of
            # its entries, hundreds of milliseconds for a batch of 64,000)
            return _DotCsrRows.apply(lhs, rhs, rhs.grad_fn is None)
        try:
            # torch.mm (sparse.mm's kernel, without its Python wrapper) checks the shapes and
            # dtypes itself: MXNet's messages are made only when it refuses (a batch of a
            # training loop is tens of microseconds, the checks a tenth of that)
            return torch.mm(lhs, rhs)
        except (RuntimeError, IndexError):
            _check_dot(lhs, rhs, transpose_a, transpose_b)
            raise
    _check_dot(lhs, rhs, transpose_a, transpose_b)
    # csr.T . dense: row c of the result gathers the rows of rhs that column c's entries scale;
    # only the columns holding entries are rows of the (row_sparse) result
    indptr, cols, vals = csr_parts(lhs)
    rows = csr_rows(indptr)
    held, slot = distinct_ids(cols)
    block = rhs.new_zeros((len(held),) + tuple(rhs.shape[1:]))
    block.index_add_(0, slot, vals.reshape((-1,) + (1,) * (rhs.dim() - 1)) * rhs[rows])
    return make_rsp(held, block, (lhs.shape[1],) + tuple(rhs.shape[1:]))


class _DotCsrRows(torch.autograd.Function):
    """``dot(csr, dense)`` whose ``dense`` gradient holds the rows the csr's columns name
    (their distinct ids found once, in the forward pass): a coalesced sparse tensor of them
    where ``sparse_grad``, else a dense tensor, zeros elsewhere."""

    @staticmethod
    def forward(ctx, lhs, rhs, sparse_grad):  # pylint: disable=arguments-differ
        indptr, cols, vals = csr_parts(lhs)
        rows = csr_rows(indptr)
        held, slot = distinct_ids(cols)
        ctx.save_for_backward(rows, vals, held, slot)
        ctx.rhs_shape, ctx.sparse_grad = tuple(rhs.shape), sparse_grad
        picked = rhs[cols] * vals.reshape((-1,) + (1,) * (rhs.dim() - 1))
        return rhs.new_zeros((lhs.shape[0],) + tuple(rhs.shape[1:])).index_add_(0, rows, picked)

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        rows, vals, held, slot = ctx.saved_tensors
        scaled = grad[rows] * vals.reshape((-1,) + (1,) * (grad.dim() - 1))
        block = grad.new_zeros((len(held),) + tuple(grad.shape[1:])).index_add_(0, slot, scaled)
        if not ctx.sparse_grad:
            return None, grad.new_zeros(ctx.rhs_shape).index_copy_(0, held, block), None
        SPARSE_MADE[0] = True   # a sparse gradient (the csr input made it true already)
        return None, torch.sparse_coo_tensor(held.reshape(1, -1), block, ctx.rhs_shape, is_coalesced=True,
                                             check_invariants=False), None


registry.get('dot').storage = (_dot_rule, _dot_sparse)
# not recorded, dot(csr, dense) is torch.mm itself (its checks made by _dot_sparse where it fails)
registry.get('dot').storage_kernel = lambda stypes, attrs: (
    torch.mm if stypes == (CSR, DEFAULT) and not attrs['transpose_a'] and not attrs['transpose_b'] else None)
# recorded (a weight autograd records against): dot(csr, dense) stays sparse, its weight's
# gradient the rows the batch uses (see _dot_sparse); the csr batch is never densified
registry.get('dot').storage_recorded = lambda stypes, attrs: (
    stypes == (CSR, DEFAULT) and not attrs['transpose_a'] and not attrs['transpose_b'])


# ------------------------------------------------------------ reductions
def _csr_reduce_rule(stypes, attrs):
    axis = attrs.get('axis')
    if stypes[0] == CSR and not attrs.get('exclude') and axis is not None and len(axis) == 1 \
            and axis[0] in (0, 1, -1, -2):
        return DEFAULT
    return None


def _csr_reduce(mean):
    def run(data, axis, keepdims, exclude):
        indptr, cols, vals = csr_parts(data)
        ax = axis[0] % 2
        if ax == 0:
            out = vals.new_zeros(data.shape[1]).index_add_(0, cols, vals)
        else:
            out = vals.new_zeros(data.shape[0]).index_add_(0, csr_rows(indptr), vals)
        if mean:
            n = data.shape[ax]
            out = out / n if out.is_floating_point() else torch.div(out, n, rounding_mode='trunc')
        return out.reshape((1, -1) if ax == 0 else (-1, 1)) if keepdims else out
    return run


registry.get('sum').storage = (_csr_reduce_rule, _csr_reduce(False))
registry.get('mean').storage = (_csr_reduce_rule, _csr_reduce(True))


def _norm_rule(stypes, attrs):
    if stypes[0] in (CSR, ROW_SPARSE) and attrs['axis'] is None and attrs['ord'] == 2 and not attrs['keepdims']:
        return DEFAULT
    return None


def _norm_sparse(data, **attrs):
    vals = values_of(data)
    return torch.sqrt(torch.sum(vals * vals)).reshape(1) if vals.numel() else vals.new_zeros(1)


registry.get('norm').storage = (_norm_rule, _norm_sparse)


# ------------------------------------------------------------ slicing and rows
def _slice_rule(stypes, attrs):
    step = attrs.get('step') or ()
    if stypes[0] == CSR and all(s in (None, 1) for s in step):
        return CSR
    return None


def _bounds(begin, end, size):
    b = 0 if begin is None else (begin + size if begin < 0 else begin)
    e = size if end is None else (end + size if end < 0 else end)
    return max(0, min(b, size)), max(0, min(e, size))


def csr_slice(data, row_begin, row_end, col_begin=0, col_end=None):
    """Rows [row_begin, row_end) and columns [col_begin, col_end) of a csr tensor, as csr."""
    indptr, cols, vals = csr_parts(data)
    col_end = data.shape[1] if col_end is None else col_end
    lo, hi = int(indptr[row_begin]), int(indptr[row_end])
    sub_ptr = indptr[row_begin:row_end + 1] - lo
    sub_cols, sub_vals = cols[lo:hi], vals[lo:hi]
    if col_begin == 0 and col_end == data.shape[1]:
        return make_csr(sub_ptr, sub_cols, sub_vals, (row_end - row_begin, data.shape[1]))
    keep = (sub_cols >= col_begin) & (sub_cols < col_end)
    rows = csr_rows(sub_ptr)[keep]
    counts = torch.bincount(rows, minlength=row_end - row_begin)
    new_ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    return make_csr(new_ptr, sub_cols[keep] - col_begin, sub_vals[keep], (row_end - row_begin, col_end - col_begin))


def _slice_csr(data, begin, end, step):
    begin, end = tuple(begin) + (None,) * (2 - len(begin)), tuple(end) + (None,) * (2 - len(end))
    r0, r1 = _bounds(begin[0], end[0], data.shape[0])
    c0, c1 = _bounds(begin[1], end[1], data.shape[1])
    return csr_slice(data, r0, max(r0, r1), c0, max(c0, c1))


registry.get('slice').storage = (_slice_rule, _slice_csr)


def _take_rule(stypes, attrs):
    if stypes[0] == CSR and stypes[1] == DEFAULT and attrs['axis'] == 0 and attrs['mode'] in ('clip', 'wrap'):
        return CSR
    return None


def csr_take_rows(data, rows):
    """The rows ``rows`` (int64, in range) of a csr tensor, in that order, as csr."""
    indptr, cols, vals = csr_parts(data)
    starts, counts = indptr[rows], indptr[rows + 1] - indptr[rows]
    new_ptr = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    # each output entry's source position: its row's start plus its offset within the row
    out_rows = torch.repeat_interleave(torch.arange(len(rows), device=rows.device), counts)
    src = starts[out_rows] + torch.arange(int(new_ptr[-1]), device=rows.device) - new_ptr[out_rows]
    return make_csr(new_ptr, cols[src], vals[src], (len(rows), data.shape[1]))


def _take_csr(a, indices, axis, mode):
    n = a.shape[0]
    idx = indices.reshape(-1).to(torch.float64).floor().to(_INDEX) if indices.is_floating_point() \
        else indices.reshape(-1).to(_INDEX)
    idx = idx.clamp(0, n - 1) if mode == 'clip' else torch.remainder(idx, n)
    return csr_take_rows(a, idx)


registry.get('take').storage = (_take_rule, _take_csr)


# ------------------------------------------------------------ operators made for sparse arrays
def _cast_storage_rule(stypes, attrs):
    return attrs['stype']


def _cast_storage_sparse(data, stype):
    if stype == CSR and data.dim() != 2:
        raise MXNetError('cast_storage: csr storage needs a 2-D array, got shape %s' % (tuple(data.shape),))
    out = cast(data, stype)
    return out.clone() if out is data else out


_spec = registry.get('cast_storage')
_spec.storage = (_cast_storage_rule, _cast_storage_sparse)
_spec.storage_by_attrs = True       # the output's storage comes from the attributes, inputs dense or not


def _retain_rule(stypes, attrs):
    return ROW_SPARSE if stypes[0] == ROW_SPARSE and stypes[1] == DEFAULT else None


def _retain_sparse(data, indices):
    """MXNet's retain: the result holds exactly the rows asked for (as given: MXNet expects
    them sorted), each the stored row or zeros where ``data`` has none."""
    idx, vals = rsp_parts(data)
    wanted = indices.reshape(-1).to(_INDEX)
    out = vals.new_zeros((len(wanted),) + tuple(vals.shape[1:]))
    if len(idx):
        pos = torch.searchsorted(idx, wanted).clamp(max=len(idx) - 1)
        found = idx[pos] == wanted
        out[found] = vals[pos[found]]
    return make_rsp(wanted, out, data.shape)


registry.get('_sparse_retain').storage = (_retain_rule, _retain_sparse)


def _square_sum_rule(stypes, attrs):
    axis = attrs['axis']
    if stypes[0] != ROW_SPARSE or attrs['exclude'] or axis is None or len(axis) != 1:
        return None
    if axis[0] % 2 == 1 and attrs['keepdims']:
        return ROW_SPARSE
    return DEFAULT


def _square_sum_sparse(data, axis, keepdims, exclude):
    idx, vals = rsp_parts(data)
    sq = (vals * vals).reshape(vals.shape[0], math.prod(vals.shape[1:]))    # no -1: 0 stored rows
    if axis[0] % 2 == 0:
        out = sq.sum(dim=0)
        return out.reshape(1, -1) if keepdims else out
    per_row = sq.sum(dim=1)
    if keepdims:
        return make_rsp(idx, per_row.reshape(-1, 1), (data.shape[0], 1))
    return per_row.new_zeros(data.shape[0]).index_copy_(0, idx, per_row)


registry.get('_square_sum').storage = (_square_sum_rule, _square_sum_sparse)


def _getnnz_rule(stypes, attrs):
    return DEFAULT if stypes[0] == CSR else None


def _getnnz_sparse(data, axis):
    if axis not in (None, 1, -1):
        raise MXNetError('_contrib_getnnz: getnnz with axis = %s is not supported yet' % (axis,))
    indptr, cols, _ = csr_parts(data)
    if axis is None:
        return torch.tensor([len(cols)], dtype=_INDEX, device=cols.device)
    return indptr[1:] - indptr[:-1]


registry.get('_contrib_getnnz').storage = (_getnnz_rule, _getnnz_sparse)


# ------------------------------------------------------------ optimizer updates: lazily, by rows
def _lazy_rule(stypes, attrs):
    """A dense weight with a row_sparse gradient (dense states) updates the gradient's rows
    only; with ``lazy_update=False`` MXNet updates every row (a dense update)."""
    if stypes[1] == ROW_SPARSE and all(s in (None, DEFAULT) for i, s in enumerate(stypes) if i != 1):
        return DEFAULT if attrs.get('lazy_update', True) else None
    return None


def _lazy_update(spec):
    impl = spec.impl

    def run(weight, grad, *states, **attrs):
        rows, g = rsp_parts(grad)
        parts = [s[rows].clone() for s in states]       # the states' rows, updated in place by impl
        new_rows = impl(weight[rows], g.to(weight.dtype) if g.dtype != weight.dtype else g, *parts, **attrs)
        for state, part in zip(states, parts):
            state[rows] = part
        out = weight.clone()
        out[rows] = new_rows
        return out
    return run


_attach(('sgd_update', 'sgd_mom_update', 'adam_update', 'ftrl_update', '_sparse_adagrad_update',
         '_contrib_group_adagrad_update'), _lazy_rule, _lazy_update)
