"""``mx.image`` (alias ``mx.img``): image decoding, resizing, cropping, augmenters and ImageIter."""
from . import image
from .image import *  # noqa: F401,F403
from .augment import *  # noqa: F401,F403
from .iterator import ImageIter
