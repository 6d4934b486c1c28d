"""``mx.nd.sparse``: operators generated from the registry (filled in by ``neomx.ndarray``)."""


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype`` ('row_sparse', 'csr' or 'default'); neomx
    stores sparse arrays densely."""
    from ..base import MXNetError
    from .ndarray import zeros as dense_zeros
    if stype not in ('default', 'row_sparse', 'csr'):
        raise MXNetError("sparse.zeros: unknown storage type %r; expected 'row_sparse', 'csr' or 'default'"
                         % (stype,))
    return dense_zeros(shape, ctx=ctx, dtype=dtype)
