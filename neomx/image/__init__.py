"""``mx.image`` (alias ``mx.img``): image decoding, resizing, cropping, rotation, augmenters,
``ImageIter`` and, for object detection, ``ImageDetIter`` with its augmenters."""
from .._image_decode import opencv
from . import image, detection
from . import detection as det
from .image import *  # noqa: F401,F403
from .image import numeric_types, is_np_array  # noqa: F401
from .detection import *  # noqa: F401,F403


def __getattr__(name):
    if name == 'cv2':
        return opencv()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
