"""``mx.nd.sparse``: sparse array types and constructors, and the operators.

Operators generated from the registry (filled in by ``neomx.ndarray``) are here; every other
operator name resolves to its ``mx.nd`` version, which keeps sparse inputs sparse where the
operator has a storage rule (see :mod:`neomx.operator.storage`) and computes densely otherwise.
"""
import numpy as np

from .ndarray import NDArray
from .sparse_arrays import (BaseSparseNDArray, CSRNDArray, RowSparseNDArray,  # noqa: F401
                            csr_matrix, empty, row_sparse_array, zeros, from_sparse_tensor)
from .sparse_arrays import sparse_array as array  # noqa: F401
from .sparse_arrays import _ufunc, _op
from .._op_fallback import fallback_to_op
from ..context import current_context

__all__ = ['BaseSparseNDArray', 'CSRNDArray', 'RowSparseNDArray', 'csr_matrix', 'row_sparse_array',
           'zeros', 'empty', 'array', 'add', 'subtract', 'multiply', 'divide']


def _binary(lhs, rhs, elemwise, broadcast, scalar_op, reflected_scalar_op):
    if isinstance(lhs, BaseSparseNDArray):
        return _ufunc(lhs, rhs, elemwise, broadcast, scalar_op)
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        return _op(elemwise if lhs.shape == rhs.shape else broadcast)(lhs, rhs)
    if isinstance(rhs, BaseSparseNDArray) and isinstance(lhs, (int, float, np.generic)):
        return _op(reflected_scalar_op)(rhs, scalar=float(lhs))
    if isinstance(lhs, NDArray) and isinstance(rhs, (int, float, np.generic)):
        return _op(scalar_op)(lhs, scalar=float(rhs))
    raise TypeError('type %s and %s not supported' % (type(lhs).__name__, type(rhs).__name__))


def add(lhs, rhs):
    """Element-wise sum with broadcasting: ``elemwise_add`` for equal shapes (row_sparse +
    row_sparse stays row_sparse, csr + csr stays csr), ``broadcast_add`` otherwise."""
    return _binary(lhs, rhs, 'elemwise_add', 'broadcast_add', '_plus_scalar', '_plus_scalar')


def subtract(lhs, rhs):
    """Element-wise difference with broadcasting (see :func:`add`)."""
    return _binary(lhs, rhs, 'elemwise_sub', 'broadcast_sub', '_minus_scalar', '_rminus_scalar')


def multiply(lhs, rhs):
    """Element-wise product with broadcasting: a sparse operand keeps its storage against a
    dense one of the same shape (``elemwise_mul``), csr against a broadcast dense one."""
    return _binary(lhs, rhs, 'elemwise_mul', 'broadcast_mul', '_mul_scalar', '_mul_scalar')


def divide(lhs, rhs):
    """Element-wise quotient with broadcasting (csr over a broadcast dense array stays csr)."""
    return _binary(lhs, rhs, 'elemwise_div', 'broadcast_div', '_div_scalar', '_rdiv_scalar')


def _ndarray_cls(handle, writable=True, stype=-1):
    """The NDArray of a torch tensor (``handle``): CSRNDArray, RowSparseNDArray or NDArray by
    its layout."""
    return from_sparse_tensor(handle, current_context())


__getattr__ = fallback_to_op(__package__, 'mx.nd.sparse')
