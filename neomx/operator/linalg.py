"""Matrix products (dot, batch_dot) and the ``linalg`` family (``mx.nd.linalg.*``).

MXNet conventions kept here:

* ``dot`` of N-d arrays contracts the last axis of ``lhs`` with the first axis of ``rhs``
  (``transpose_a`` contracts ``lhs``' first axis instead, ``transpose_b`` ``rhs``' last);
  a 0-d result (vector . vector) has shape (1,).
* ``linalg`` operators work on the last two axes and treat leading axes as a batch
  (``gemm``/``gemm2`` take the row axis from ``axis``); results that would be 0-d per
  matrix (``det``, ``sumlogdiag``) have shape (1,) for a single matrix.
* Triangular-packing operators (``extracttrian``/``maketrian``) order a lower triangle row
  by row and an upper triangle column by column.
"""
import math

import torch

from .reduce import at_least_1d
from .registry import BOOL, FLOAT, INT, check, choice, lazy, register

_FORWARD_STYPE = ('forward_stype', choice('None', 'csr', 'default', 'row_sparse'), None)


def _shape_list(tensors):
    return ', '.join(str(tuple(t.shape)) for t in tensors)


def _check_same_dtype(op, lhs, rhs):
    check(lhs.dtype == rhs.dtype, op, 'operands have different dtypes %s and %s (shapes %s X %s)',
          lhs.dtype, rhs.dtype, lhs.shape, rhs.shape)


def _transposed(t, transpose):
    """``t`` with its last two axes swapped when ``transpose`` is set (a view)."""
    return t.mT if transpose else t


# -------------------------------------------------------------------- dot
def _as_matrix(t, contract_first):
    """View ``t`` as a matrix whose rows (``contract_first``) or columns run along the
    contracted axis; returns the matrix and the shape of the uncontracted axes."""
    if contract_first:
        return t.reshape(t.shape[0], -1), t.shape[1:]
    return t.reshape(-1, t.shape[-1]), t.shape[:-1]


def _check_contracted(a, b, lhs, rhs, transpose_a, transpose_b):
    check(a.shape[1] == b.shape[0], 'dot', 'shape error: %s X %s with transpose_a=%s transpose_b=%s',
          lhs.shape, rhs.shape, transpose_a, transpose_b)


@register('dot', inputs=('lhs', 'rhs'),
          attrs=[('transpose_a', BOOL, False), ('transpose_b', BOOL, False), _FORWARD_STYPE])
def dot(lhs, rhs, transpose_a, transpose_b, forward_stype):
    """Tensor dot product contracting one axis of each input.

    Shapes: ``lhs (a..., k)`` and ``rhs (k, b...)`` give ``(a..., b...)``. ``transpose_a``
    reads ``lhs`` as ``(k, a...)``, ``transpose_b`` reads ``rhs`` as ``(b..., k)``.
    ``forward_stype`` (sparse storage) is accepted and ignored: storage is always dense.
    """
    if (lhs.dim() == 2 and rhs.dim() == 2 and not (transpose_a or transpose_b) and lhs.dtype == rhs.dtype
            and lhs.shape[1] == rhs.shape[0]):
        return torch.mm(lhs, rhs)       # the common call, every check passed in one test
    _check_same_dtype('dot', lhs, rhs)
    if lhs.dim() == 2 and rhs.dim() == 2:      # matrix . matrix: no reshaping
        a, b = _transposed(lhs, transpose_a), _transposed(rhs, transpose_b)
        _check_contracted(a, b, lhs, rhs, transpose_a, transpose_b)
        return torch.mm(a, b)
    check(not (lhs.dim() == 1 and rhs.dim() == 1 and (transpose_a or transpose_b)), 'dot',
          'cannot transpose vectors (shapes %s X %s)', lhs.shape, rhs.shape)
    a, a_rest = _as_matrix(lhs, contract_first=transpose_a)
    b, b_rest = _as_matrix(rhs, contract_first=not transpose_b)
    a, b = _transposed(a, transpose_a), _transposed(b, transpose_b)
    _check_contracted(a, b, lhs, rhs, transpose_a, transpose_b)
    return at_least_1d(torch.mm(a, b).reshape(a_rest + b_rest))


@register('batch_dot', inputs=('lhs', 'rhs'),
          attrs=[('transpose_a', BOOL, False), ('transpose_b', BOOL, False), _FORWARD_STYPE])
def batch_dot(lhs, rhs, transpose_a, transpose_b, forward_stype):
    """Matrix products of the last two axes, batched over equal leading axes.

    Shapes: ``lhs (B..., m, k)`` and ``rhs (B..., k, n)`` give ``(B..., m, n)``; the
    transpose flags swap the last two axes of an input first. Inputs have at least 3 dims.
    """
    _check_same_dtype('batch_dot', lhs, rhs)
    check(lhs.dim() >= 3 and lhs.dim() == rhs.dim(), 'batch_dot',
          'only N-d x N-d arrays with N >= 3 are supported, got %s X %s', lhs.shape, rhs.shape)
    check(lhs.shape[:-2] == rhs.shape[:-2], 'batch_dot',
          'the leading batch dimensions must be equal: %s X %s', lhs.shape, rhs.shape)
    a, b = _transposed(lhs, transpose_a), _transposed(rhs, transpose_b)
    check(a.shape[-1] == b.shape[-2], 'batch_dot', 'shape error: %s X %s with transpose_a=%s transpose_b=%s',
          lhs.shape, rhs.shape, transpose_a, transpose_b)
    return torch.matmul(a, b)


@register('khatri_rao', variadic='num_args', attrs=[('num_args', INT)])
def khatri_rao(*args, num_args):
    """Column-wise Kronecker product of matrices with the same number of columns.

    Shapes: ``(m1, n), (m2, n), ...`` give ``(m1 * m2 * ..., n)``; row ``i * m2 + j`` is the
    element-wise product of row ``i`` of the first and row ``j`` of the second.
    """
    columns = args[0].shape[-1]
    for m in args:
        check(m.dim() == 2 and m.shape[1] == columns, 'khatri_rao', 'inputs must be matrices with '
              'the same number of columns, got %s', lazy(_shape_list, args))
    out = args[0]
    for m in args[1:]:
        out = (out.unsqueeze(1) * m.unsqueeze(0)).reshape(-1, columns)
    return out


# ----------------------------------------------------------------- linalg
def _check_float(op, *tensors):
    for t in tensors:
        check(t.dtype in (torch.float32, torch.float64), op,
              'only float32 and float64 inputs are supported, got %s (shape %s)',
              t.dtype, t.shape)


def _check_matrices(op, *tensors):
    _check_float(op, *tensors)
    for t in tensors:
        check(t.dim() >= 2, op, 'inputs must have at least 2 dims, got shape %s', t.shape)


def _check_square(op, a):
    _check_matrices(op, a)
    check(a.shape[-1] == a.shape[-2], op, "the last two dims of A must be equal, got shape %s",
          a.shape)


def _matmul_along(op, a, b, transpose_a, transpose_b, axis):
    """``op(A) @ op(B)`` for matrices whose rows lie along ``axis`` and columns along the last
    axis; the remaining axes are a batch. Returns the product and the normalized row axis."""
    _check_matrices(op, a, b)
    check(a.dim() == b.dim(), op, 'A and B must have the same number of dims: %s X %s', a.shape, b.shape)
    row_axis = axis % a.dim()
    left = _transposed(a.movedim(row_axis, -2), transpose_a)
    right = _transposed(b.movedim(row_axis, -2), transpose_b)
    check(left.shape[-1] == right.shape[-2] and left.shape[:-2] == right.shape[:-2], op,
          'incompatible matrix dimensions for multiplication: %s X %s with transpose_a=%s transpose_b=%s '
          'and axis=%d', a.shape, b.shape, transpose_a, transpose_b, axis)
    return torch.matmul(left, right), row_axis


_GEMM_FLAGS = [('transpose_a', BOOL, False), ('transpose_b', BOOL, False), ('alpha', FLOAT, 1.0)]


@register('_linalg_gemm', aliases=('linalg_gemm',), inputs=('A', 'B', 'C'),
          attrs=_GEMM_FLAGS + [('beta', FLOAT, 1.0), ('axis', INT, -2)])
def linalg_gemm(A, B, C, transpose_a, transpose_b, alpha, beta, axis):
    """``alpha * op(A) @ op(B) + beta * C`` on matrices (rows along ``axis``), batched."""
    product, row_axis = _matmul_along('linalg_gemm', A, B, transpose_a, transpose_b, axis)
    return (alpha * product).movedim(-2, row_axis) + beta * C


@register('_linalg_gemm2', aliases=('linalg_gemm2',),
          inputs=('A', 'B'), attrs=_GEMM_FLAGS + [('axis', INT, -2)])
def linalg_gemm2(A, B, transpose_a, transpose_b, alpha, axis):
    """``alpha * op(A) @ op(B)`` on matrices (rows along ``axis``), batched."""
    product, row_axis = _matmul_along('linalg_gemm2', A, B, transpose_a, transpose_b, axis)
    return (alpha * product).movedim(-2, row_axis)


@register('_linalg_potrf', aliases=('linalg_potrf',), inputs=('A',), attrs=[('lower', BOOL, True)])
def linalg_potrf(A, lower):
    """Cholesky factor of symmetric positive-definite ``A``: lower ``L`` with ``A = L @ L.T``
    (only ``A``'s lower triangle is read), or with ``lower=False`` upper ``U`` with
    ``A = U.T @ U`` (only the upper triangle is read)."""
    _check_square('linalg_potrf', A)
    if lower:
        return torch.linalg.cholesky(A)
    return torch.linalg.cholesky(A.mT).mT


@register('_linalg_potri', aliases=('linalg_potri',), inputs=('A',), attrs=[('lower', BOOL, True)])
def linalg_potri(A, lower):
    """Inverse of ``L @ L.T`` given its lower Cholesky factor ``L`` (the input; only its
    lower triangle is read, and only that triangle gets a gradient); with ``lower=False``
    inverse of ``U.T @ U`` given the upper factor ``U``."""
    _check_square('linalg_potri', A)
    if lower:
        return torch.cholesky_inverse(torch.tril(A))
    return torch.cholesky_inverse(torch.triu(A), upper=True)


_TRIANGULAR_FLAGS = [('transpose', BOOL, False), ('rightside', BOOL, False), ('lower', BOOL, True),
                     ('alpha', FLOAT, 1.0)]


@register('_linalg_trsm', aliases=('linalg_trsm',), inputs=('A', 'B'), attrs=_TRIANGULAR_FLAGS)
def linalg_trsm(A, B, transpose, rightside, lower, alpha):
    """Solve ``op(A) @ X = alpha * B`` (``X @ op(A) = alpha * B`` with ``rightside``) for X,
    with ``A`` triangular (only its ``lower`` or upper triangle is read)."""
    _check_square('linalg_trsm', A)
    _check_matrices('linalg_trsm', B)
    if transpose:
        A, lower = A.mT, not lower
    return torch.linalg.solve_triangular(A, alpha * B, upper=not lower, left=not rightside)


@register('_linalg_trmm', aliases=('linalg_trmm',), inputs=('A', 'B'), attrs=_TRIANGULAR_FLAGS)
def linalg_trmm(A, B, transpose, rightside, lower, alpha):
    """``alpha * op(A) @ B`` (``alpha * B @ op(A)`` with ``rightside``), reading only the
    ``lower`` or upper triangle of ``A``."""
    _check_square('linalg_trmm', A)
    _check_matrices('linalg_trmm', B)
    A = _transposed(torch.tril(A) if lower else torch.triu(A), transpose)
    return alpha * (torch.matmul(B, A) if rightside else torch.matmul(A, B))


@register('_linalg_syrk', aliases=('linalg_syrk',),
          inputs=('A',), attrs=[('transpose', BOOL, False), ('alpha', FLOAT, 1.0)])
def linalg_syrk(A, transpose, alpha):
    """``alpha * A @ A.T`` (``alpha * A.T @ A`` with ``transpose``)."""
    _check_matrices('linalg_syrk', A)
    return alpha * (torch.matmul(A.mT, A) if transpose else torch.matmul(A, A.mT))


@register('_linalg_inverse', aliases=('linalg_inverse',), inputs=('A',))
def linalg_inverse(A):
    """Inverse of square matrices; MXNetError for a singular one."""
    _check_square('linalg_inverse', A)
    return torch.linalg.inv(A)


@register('_linalg_det', aliases=('linalg_det',), inputs=('A',))
def linalg_det(A):
    """Determinant of square matrices: shape ``A.shape[:-2]``, or (1,) for one matrix."""
    _check_square('linalg_det', A)
    return at_least_1d(torch.linalg.det(A))


@register('_linalg_slogdet', aliases=('linalg_slogdet',), inputs=('A',), num_outputs=2)
def linalg_slogdet(A):
    """Sign and log of the absolute value of the determinant, each of shape
    ``A.shape[:-2]`` (or (1,) for one matrix)."""
    _check_square('linalg_slogdet', A)
    sign, logabsdet = torch.linalg.slogdet(A)
    return at_least_1d(sign), at_least_1d(logabsdet)


@register('_linalg_sumlogdiag', aliases=('linalg_sumlogdiag',), inputs=('A',))
def linalg_sumlogdiag(A):
    """Sum of the logs of the diagonal: shape ``A.shape[:-2]``, or (1,) for one matrix."""
    _check_square('linalg_sumlogdiag', A)
    return at_least_1d(torch.log(torch.diagonal(A, dim1=-2, dim2=-1)).sum(-1))


@register('_linalg_extractdiag', shares_input=True, aliases=('linalg_extractdiag',),
          inputs=('A',), attrs=[('offset', INT, 0)])
def linalg_extractdiag(A, offset):
    """Diagonal ``offset`` (above the main one when positive) of the last two axes."""
    _check_matrices('linalg_extractdiag', A)
    return at_least_1d(torch.diagonal(A, offset, -2, -1))


@register('_linalg_makediag', aliases=('linalg_makediag',),
          inputs=('A',), attrs=[('offset', INT, 0)])
def linalg_makediag(A, offset):
    """Square matrices with the last axis of ``A`` on diagonal ``offset``, zeros elsewhere."""
    _check_float('linalg_makediag', A)
    return torch.diag_embed(A, offset)


def _packing_indices(n, offset, lower, device):
    """Row and column indices of the packed triangle of an n x n matrix, in packing order.

    A lower triangle (``offset < 0``, or 0 with ``lower``) is read row by row; an upper one
    column by column, i.e. as the lower triangle of the transpose.
    """
    use_lower = offset < 0 or (offset == 0 and lower)
    rows, cols = torch.tril_indices(n, n, -abs(offset), device=device)
    return (rows, cols) if use_lower else (cols, rows)


@register('_linalg_extracttrian', aliases=('linalg_extracttrian',),
          inputs=('A',), attrs=[('offset', INT, 0), ('lower', BOOL, True)])
def linalg_extracttrian(A, offset, lower):
    """The triangle of the last two axes at ``offset`` packed into a vector.

    ``offset > 0`` takes the part above diagonal ``offset``, ``offset < 0`` the part below
    it; ``offset == 0`` the ``lower`` or upper triangle with the diagonal.
    """
    _check_square('linalg_extracttrian', A)
    rows, cols = _packing_indices(A.shape[-1], offset, lower, A.device)
    return A[..., rows, cols]


@register('_linalg_maketrian', aliases=('linalg_maketrian',),
          inputs=('A',), attrs=[('offset', INT, 0), ('lower', BOOL, True)])
def linalg_maketrian(A, offset, lower):
    """Inverse of ``extracttrian``: square matrices with the packed vector (last axis of
    ``A``) unpacked into the triangle at ``offset``, zeros elsewhere."""
    _check_float('linalg_maketrian', A)
    packed = A.shape[-1]
    side = (math.isqrt(8 * packed + 1) - 1) // 2
    check(side * (side + 1) // 2 == packed, 'linalg_maketrian',
          'the last axis of size %d is not a triangular number (shape %s)', packed, A.shape)
    n = side + abs(offset)
    rows, cols = _packing_indices(n, offset, lower, A.device)
    out = A.new_zeros(A.shape[:-1] + (n, n))
    out[..., rows, cols] = A
    return out


@register('_linalg_syevd', inputs=('A',), num_outputs=2)
def linalg_syevd(A):
    """Eigendecomposition of symmetric matrices: ``U`` with the eigenvectors as rows and the
    eigenvalues ``L`` in ascending order, so that ``A = U.T @ diag(L) @ U``.

    Each eigenvector's sign is chosen, as MXNet does, so that its largest-magnitude element
    is positive.
    """
    _check_square('linalg_syevd', A)
    eigenvalues, eigenvectors = torch.linalg.eigh(A)
    rows = eigenvectors.mT
    largest = torch.gather(rows, -1, rows.abs().argmax(-1, keepdim=True))
    return rows * torch.sign(largest), eigenvalues


@register('_linalg_gelqf', aliases=('linalg_gelqf',), inputs=('A',), num_outputs=2)
def linalg_gelqf(A):
    """LQ factorization ``A = L @ Q`` of wide matrices (rows <= columns): ``Q`` has
    orthonormal rows, ``L`` is lower triangular."""
    _check_matrices('linalg_gelqf', A)
    check(A.shape[-2] <= A.shape[-1], 'linalg_gelqf', 'A must have no more rows than columns, got '
          'shape %s', A.shape)
    # The LQ factors of A are the transposed QR factors of A.T.
    q, r = torch.linalg.qr(A.mT)
    return q.mT, r.mT
