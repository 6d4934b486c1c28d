"""``mx.io``: data iterators (``NDArrayIter``, ``ImageRecordIter``) and their batch/description types."""
from .io import DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter, PrefetchingIter
from .image_record_iter import ImageRecordIter

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter', 'ImageRecordIter']
