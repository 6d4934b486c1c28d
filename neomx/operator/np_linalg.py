"""Linear algebra of MXNet's NumPy interface (``_npi_inv``, ``_npi_svd``, ``_npi_norm``...),
on torch.linalg; stacked matrices in the last two axes.
"""
import math

import numpy as _np
import torch

from .dtype_rules import DTypeRule
from .np_reduce import OPT_AXES, axes_of
from .registry import ANY, BOOL, FLOAT, INT, Attr, register

__all__ = ['LinAlgError']

LinAlgError = _np.linalg.LinAlgError


def _square(a, op):
    if a.dim() < 2:
        raise LinAlgError('%d-dimensional array given. Array must be at least two-dimensional' % a.dim())
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError('Last 2 dimensions of the array must be square')


def _float(a):
    return a if a.dtype.is_floating_point else a.to(torch.float32)


def _guarded(fn, op):
    try:
        return fn()
    except torch.linalg.LinAlgError as err:
        raise LinAlgError('%s: %s' % (op, str(err).split('\n')[0])) from None


@register('_npi_cholesky', inputs=('A',))
def cholesky(A):    # pylint: disable=invalid-name
    """The lower Cholesky factor of a symmetric positive-definite matrix."""
    _square(A, 'cholesky')
    return _guarded(lambda: torch.linalg.cholesky(_float(A)), 'cholesky')


@register('_npi_det', inputs=('A',))
def det(A):     # pylint: disable=invalid-name
    """The determinant."""
    _square(A, 'det')
    return torch.linalg.det(_float(A))


@register('_npi_slogdet', inputs=('A',), num_outputs=2)
def slogdet(A):     # pylint: disable=invalid-name
    """The sign and the log of the absolute value of the determinant."""
    _square(A, 'slogdet')
    sign, logabs = torch.linalg.slogdet(_float(A))
    return sign, logabs


@register('_npi_inv', inputs=('A',))
def inv(A):     # pylint: disable=invalid-name
    """The inverse."""
    _square(A, 'inv')
    return _guarded(lambda: torch.linalg.inv(_float(A)), 'inv')


@register('_npi_eig', inputs=('A',), num_outputs=2)
def eig(A):     # pylint: disable=invalid-name
    """Eigenvalues and right eigenvectors of a matrix with real eigenvalues."""
    _square(A, 'eig')
    w, v = _guarded(lambda: torch.linalg.eig(_float(A)), 'eig')
    return w.real.to(_float(A).dtype), v.real.to(_float(A).dtype)


@register('_npi_eigvals', inputs=('A',))
def eigvals(A):     # pylint: disable=invalid-name
    """Eigenvalues of a matrix with real eigenvalues."""
    _square(A, 'eigvals')
    return _guarded(lambda: torch.linalg.eigvals(_float(A)), 'eigvals').real.to(_float(A).dtype)


_UPLO = Attr('str', str, 'L', ('L', 'U'))


@register('_npi_eigh', inputs=('A',), attrs=[('UPLO', _UPLO)], num_outputs=2)
def eigh(A, UPLO):  # pylint: disable=invalid-name
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix."""
    _square(A, 'eigh')
    return _guarded(lambda: torch.linalg.eigh(_float(A), UPLO=UPLO), 'eigh')


@register('_npi_eigvalsh', inputs=('A',), attrs=[('UPLO', _UPLO)])
def eigvalsh(A, UPLO):  # pylint: disable=invalid-name
    """Eigenvalues (ascending) of a symmetric matrix."""
    _square(A, 'eigvalsh')
    return _guarded(lambda: torch.linalg.eigvalsh(_float(A), UPLO=UPLO), 'eigvalsh')


@register('_npi_solve', inputs=('A', 'B'))
def solve(A, B):    # pylint: disable=invalid-name
    """The solution x of A x = B."""
    _square(A, 'solve')
    a, b = _float(A), _float(B)
    if b.dim() == a.dim() - 1:
        return _guarded(lambda: torch.linalg.solve(a, b.unsqueeze(-1)).squeeze(-1), 'solve')
    return _guarded(lambda: torch.linalg.solve(a, b), 'solve')


@register('_npi_svd', inputs=('A',), num_outputs=3)
def svd(A):     # pylint: disable=invalid-name
    """The singular value decomposition ``A = U @ diag(L) @ V`` (MXNet's order: U, L, V)."""
    if A.dim() < 2:
        raise LinAlgError('%d-dimensional array given. Array must be at least two-dimensional' % A.dim())
    u, s, vh = torch.linalg.svd(_float(A), full_matrices=False)
    return u, s, vh


@register('_npi_pinv', inputs=('A', 'rcond'), attrs=[('hermitian', BOOL, False)])
def pinv(A, rcond, hermitian):  # pylint: disable=invalid-name
    """The pseudo-inverse, cutting singular values below ``rcond`` times the largest."""
    return torch.linalg.pinv(_float(A), rtol=rcond.to(_float(A).dtype), hermitian=hermitian)


@register('_npi_pinv_scalar_rcond', inputs=('A',), attrs=[('rcond', FLOAT, 1e-15), ('hermitian', BOOL, False)])
def pinv_scalar_rcond(A, rcond, hermitian):     # pylint: disable=invalid-name
    """The pseudo-inverse with a scalar ``rcond``."""
    return torch.linalg.pinv(_float(A), rtol=rcond, hermitian=hermitian)


@register('_npi_tensorinv', inputs=('a',), attrs=[('ind', INT, 2)])
def tensorinv(a, ind):
    """The inverse of ``a`` seen as a matrix of its first ``ind`` axes by the rest."""
    if ind <= 0:
        raise ValueError('Invalid ind argument.')
    return _guarded(lambda: torch.linalg.tensorinv(_float(a), ind=ind), 'tensorinv')


def _tensorsolve_short_a(a, b, dims):
    """MXNet's tensorsolve where ``a`` has no more axes than ``b``: x takes the shape
    ``a_shape[-(a.ndim - b.ndim):]`` (with ``dims`` moved last; all of it for equal ranks),
    the system being the square matrix of a's elements against b's."""
    order = [k for k in range(a.dim()) if k not in (dims or ())] + list(dims or ())
    a = a.permute(order) if a.dim() else a
    x_shape = tuple(a.shape)[-(a.dim() - b.dim()):]
    size = math.prod(x_shape)
    if size * size != a.numel() or size != b.numel():
        raise ValueError('tensorsolve: a of shape %s is not square for b of shape %s'
                         % (tuple(a.shape), tuple(b.shape)))
    return torch.linalg.solve(a.reshape(size, size), b.reshape(size)).reshape(x_shape)


@register('_npi_tensorsolve', inputs=('a', 'b'), attrs=[('a_axes', ANY, None)])
def tensorsolve(a, b, a_axes):
    """The x with ``tensordot(a, x, x.ndim) == b``."""
    dims = None if not a_axes else tuple(a_axes)
    if a.dim() <= b.dim():
        return _tensorsolve_short_a(_float(a), _float(b), dims)
    return _guarded(lambda: torch.linalg.tensorsolve(_float(a), _float(b), dims=dims), 'tensorsolve')


@register('_npi_norm', inputs=('data',), attrs=[('ord', ANY, None), ('axis', OPT_AXES), ('keepdims', BOOL, False)])
def norm(data, ord, axis, keepdims):    # pylint: disable=redefined-builtin
    """Matrix or vector norm, as NumPy's ``linalg.norm``."""
    x = _float(data)
    if isinstance(ord, str) and ord not in ('fro', 'nuc'):
        ord = float(ord) if ord not in ('inf', '-inf') else float(ord)
    if axis is None:
        if ord is None:
            res = torch.linalg.vector_norm(x.reshape(-1), 2)
            return res.reshape((1,) * x.dim()) if keepdims else res
        if x.dim() == 1:
            return torch.linalg.vector_norm(x, ord, keepdim=keepdims)
        if x.dim() == 2:
            return torch.linalg.matrix_norm(x, ord, keepdim=keepdims)
        raise ValueError('Improper number of dimensions to norm.')
    dims = axes_of(axis, x.dim(), 'norm')
    if len(dims) == 1:
        return torch.linalg.vector_norm(x, 2 if ord is None else ord, dim=dims, keepdim=keepdims)
    if len(dims) == 2:
        return torch.linalg.matrix_norm(x, 'fro' if ord is None else ord, dim=dims, keepdim=keepdims)
    raise ValueError('Improper number of dimensions to norm.')
