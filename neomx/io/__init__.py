"""``mx.io``: data iterators (``NDArrayIter``, ``ImageRecordIter``, ``CSVIter``, ``MNISTIter``,
``LibSVMIter``) and their batch/description types."""
from .io import DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter, PrefetchingIter
from .image_record_iter import ImageRecordIter
from .native_iters import CSVIter, LibSVMIter, MNISTIter

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter',
           'ImageRecordIter', 'CSVIter', 'MNISTIter', 'LibSVMIter']
