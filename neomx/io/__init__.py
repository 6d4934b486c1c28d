"""``mx.io``: data iterators (``NDArrayIter``) and their batch/description types."""
from .io import DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter, PrefetchingIter

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter']
