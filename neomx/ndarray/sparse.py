"""``mx.nd.sparse``: sparse array types and constructors, and the operators.

Operators generated from the registry (filled in by ``neomx.ndarray``) are here; every other
operator name resolves to its ``mx.nd`` version, since sparse arrays are stored densely.
"""
from .sparse_arrays import (BaseSparseNDArray, CSRNDArray, RowSparseNDArray,  # noqa: F401
                            csr_matrix, empty, row_sparse_array, zeros)
from .sparse_arrays import sparse_array as array  # noqa: F401
from .sparse_arrays import with_stype as _with_stype
from .._op_fallback import fallback_to_op


def retain(data, indices):
    """A row_sparse array of the rows ``indices`` of ``data`` (other rows zero)."""
    if not isinstance(data, RowSparseNDArray):
        data = _with_stype(data._t, data.context, 'row_sparse')
    return data.retain(indices)


__getattr__ = fallback_to_op(__package__, 'mx.nd.sparse')
