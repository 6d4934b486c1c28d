"""``mx.image.image``: MXNet's module of image functions, augmenters and ``ImageIter``.

The names live in ``_ops`` (functions), ``augment`` (augmenters) and ``iterator``
(``ImageIter``); this module gathers them at MXNet's import path. ``cv2`` is OpenCV's module
when the ``vision`` extra is installed and None otherwise, as in MXNet.
"""
from ..base import numeric_types  # noqa: F401  (MXNet's module exposes it)
from ..util import is_np_array  # noqa: F401
from .._image_decode import opencv
from ._ops import *  # noqa: F401,F403
from ._ops import __all__ as _ops_names
from .augment import *  # noqa: F401,F403
from .augment import __all__ as _augment_names
from .iterator import ImageIter

__all__ = _ops_names + _augment_names + ['ImageIter']


def __getattr__(name):
    # OpenCV is imported on first use only: importing neomx stays light.
    if name == 'cv2':
        return opencv()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
