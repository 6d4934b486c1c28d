"""``mx.io.io``: MXNet's module of data iterators, gathered at its import path.

The Python iterators live in ``_iters``; MXNet's C++ iterators (``ImageRecordIter`` and its
forms, ``ImageDetRecordIter``, ``CSVIter``, ``MNISTIter``, ``LibSVMIter``), which MXNet
registers into this module, in ``image_record_iter``, ``det_record_iter`` and
``native_iters``.
"""
from ..base import c_str_array, check_call, py_str  # noqa: F401  (MXNet's module exposes them)
from ..ndarray.ndarray import NDArray, array  # noqa: F401
from ..ndarray.sparse import CSRNDArray  # noqa: F401
from ._iters import *  # noqa: F401,F403
from ._iters import __all__ as _iter_names
from .image_record_iter import *  # noqa: F401,F403
from .image_record_iter import __all__ as _record_names
from .det_record_iter import ImageDetRecordIter
from .native_iters import CSVIter, LibSVMIter, MNISTIter

__all__ = _iter_names + _record_names + ['ImageDetRecordIter', 'CSVIter', 'MNISTIter',
                                         'LibSVMIter']
