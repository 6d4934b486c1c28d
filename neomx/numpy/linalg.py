"""``mx.np.linalg`` (MXNet 1.9.1's ``mxnet.numpy.linalg``): the registry's ``_npi_*`` linear
algebra operators, plus the functions MXNet hands to official NumPy (:mod:`.fallback_linalg`).
"""
import numpy as _np

from ._array import ndarray
from ._invoke import run
from .fallback_linalg import *  # noqa: F401,F403  pylint: disable=wildcard-import
from . import fallback_linalg

__all__ = ['norm', 'svd', 'cholesky', 'inv', 'det', 'slogdet', 'solve', 'tensorinv', 'tensorsolve', 'pinv',
           'eigvals', 'eig', 'eigvalsh', 'eigh'] + fallback_linalg.__all__

LinAlgError = _np.linalg.LinAlgError


def _result_type(fn, *args):
    """The type this NumPy's ``fn`` returns (NumPy 2: named tuples such as ``SVDResult``)."""
    kind = type(fn(*args))
    return kind if issubclass(kind, tuple) and hasattr(kind, '_fields') else tuple


_SVD, _EIG, _EIGH, _SLOGDET = (_result_type(_np.linalg.svd, _np.eye(1)), _result_type(_np.linalg.eig, _np.eye(1)),
                               _result_type(_np.linalg.eigh, _np.eye(1)), _result_type(_np.linalg.slogdet, _np.eye(1)))


def _as(kind, res):
    if isinstance(res, tuple) and kind is not tuple:
        return kind(*res)
    return res


def norm(x, ord=None, axis=None, keepdims=False):  # pylint: disable=redefined-builtin
    """Matrix or vector norm (Frobenius / 2-norm by default)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    return run('_npi_norm', (x,), (ord, axis, keepdims))


def svd(a):
    """Singular value decomposition ``a = ut @ diag(l) @ v``: returns (ut, l, v)."""
    return _as(_SVD, run('_npi_svd', (a,)))


def cholesky(a):
    """Lower Cholesky factor of a symmetric positive-definite matrix."""
    return run('_npi_cholesky', (a,))


def inv(a):
    """The inverse of a square matrix."""
    return run('_npi_inv', (a,))


def det(a):
    """The determinant."""
    return run('_npi_det', (a,))


def slogdet(a):
    """The sign and log of the absolute determinant."""
    return _as(_SLOGDET, run('_npi_slogdet', (a,)))


def solve(a, b):
    """The solution x of ``a @ x = b``."""
    return run('_npi_solve', (a, b))


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a matrix of its first ``ind`` axes by the rest."""
    return run('_npi_tensorinv', (a,), (ind,))


def tensorsolve(a, b, axes=None):
    """The x with ``tensordot(a, x, x.ndim) == b``."""
    return run('_npi_tensorsolve', (a, b), (axes,))


def pinv(a, rcond=1e-15, hermitian=False):
    """The Moore-Penrose pseudo-inverse (``rcond`` a scalar or an array)."""
    if isinstance(rcond, ndarray) or hasattr(rcond, '_heads'):     # an array, or a Symbol
        return run('_npi_pinv', (a, rcond), (hermitian,))
    return run('_npi_pinv_scalar_rcond', (a,), (float(rcond), hermitian))


def eigvals(a):
    """Eigenvalues of a matrix with real eigenvalues."""
    return run('_npi_eigvals', (a,))


def eig(a):
    """Eigenvalues and right eigenvectors of a matrix with real eigenvalues."""
    return _as(_EIG, run('_npi_eig', (a,)))


def eigvalsh(a, UPLO='L'):  # pylint: disable=invalid-name
    """Eigenvalues of a symmetric matrix."""
    return run('_npi_eigvalsh', (a,), (UPLO,))


def eigh(a, UPLO='L'):  # pylint: disable=invalid-name
    """Eigenvalues and eigenvectors of a symmetric matrix."""
    return _as(_EIGH, run('_npi_eigh', (a,), (UPLO,)))
