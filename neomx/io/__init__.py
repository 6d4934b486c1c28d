"""``mx.io``: data iterators (``NDArrayIter``, ``ImageRecordIter`` and its uint8/int8 forms,
``ImageDetRecordIter``, ``CSVIter``, ``MNISTIter``, ``LibSVMIter``) and their batch/description
types."""
from .io import DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter, PrefetchingIter, MXDataIter
from .image_record_iter import (ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter,
                                ImageRecordIter_v1, ImageRecordUInt8Iter_v1)
from .native_iters import CSVIter, LibSVMIter, MNISTIter
from . import utils

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'ResizeIter', 'PrefetchingIter',
           'MXDataIter', 'ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
           'ImageRecordIter_v1', 'ImageRecordUInt8Iter_v1', 'CSVIter', 'MNISTIter', 'LibSVMIter']
