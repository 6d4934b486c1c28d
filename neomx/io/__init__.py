"""``mx.io``: data iterators (``NDArrayIter``, ``ImageRecordIter`` and its uint8/int8 forms,
``ImageDetRecordIter``, ``CSVIter``, ``MNISTIter``, ``LibSVMIter``) and their batch/description
types."""
from . import io, utils
from .io import *  # noqa: F401,F403
from .io import __all__
