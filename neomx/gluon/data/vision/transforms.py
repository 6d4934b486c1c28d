"""Image transforms for ``Dataset.transform_first``: Blocks over HWC images.

Deterministic per-pixel transforms are HybridBlocks calling ``F.image.*`` operators, so a
:class:`Compose` of them hybridizes; transforms that choose a region in Python
(``CenterCrop``, ``RandomResizedCrop``) or rotate (``Rotate``, ``RandomRotation``) are plain
Blocks running ``mx.image``'s functions, as in MXNet, with its random streams (Python's
``random``, numpy's global generator).
"""
import random

import numpy as np

from .... import image
from ....base import numeric_types  # noqa: F401  (MXNet's module exposes it)
from ....util import is_np_array  # noqa: F401
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ['Compose', 'Cast', 'ToTensor', 'Normalize', 'Resize', 'CenterCrop', 'RandomResizedCrop',
           'CropResize', 'Rotate', 'RandomRotation', 'RandomApply',
           'RandomFlipLeftRight', 'RandomFlipTopBottom', 'RandomBrightness', 'RandomContrast',
           'RandomSaturation', 'RandomHue', 'RandomColorJitter', 'RandomLighting']


class Compose(Sequential):
    """Apply ``transforms`` in order; runs of consecutive HybridBlocks are grouped into a
    hybridized HybridSequential.

    Parameters
    ----------
    transforms : list of Block
    """

    def __init__(self, transforms):
        super().__init__()
        with self.name_scope():
            run = []
            for transform in list(transforms) + [None]:
                if isinstance(transform, HybridBlock):
                    run.append(transform)
                    continue
                self._add_run(run)
                run = []
                if transform is not None:
                    self.add(transform)

    def _add_run(self, run):
        if len(run) == 1:
            self.add(run[0])
        elif run:
            group = HybridSequential()
            group.add(*run)
            group.hybridize()
            self.add(group)


class Cast(HybridBlock):
    """Cast the input to ``dtype`` (default float32)."""

    def __init__(self, dtype='float32'):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (or NHWC) image in [0, 255] -> CHW (NCHW) float32 in [0, 1]."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a CHW (NCHW) tensor.

    Parameters
    ----------
    mean, std : float or tuple of float
        One value for all channels, or one per channel.
    """

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


class Resize(HybridBlock):
    """Resize an HWC (NHWC) image.

    Parameters
    ----------
    size : int or (width, height)
        An int gives a square, or with ``keep_ratio`` the length of the shorter side.
    keep_ratio : bool
    interpolation : int
        0 nearest, 1 bilinear, 2 bicubic, 3 area.
    """

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._size = size
        self._keep = keep_ratio
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


def _pair(size):
    return (size, size) if isinstance(size, numeric_types) else tuple(size)


class CropResize(HybridBlock):
    """Crop the ``width`` x ``height`` region at column ``x``, row ``y`` of an HWC (NHWC)
    image, then resize it to ``size`` if given.

    Parameters
    ----------
    x, y, width, height : int
    size : int or (width, height), optional
    interpolation : int, optional
        OpenCV's code (see ``mx.nd.image.resize``).

    Shape
    -----
    (H, W, C) or (N, H, W, C) in; (height, width, C) or the size, batched likewise, out.

    Examples
    --------
    >>> crop = mx.gluon.data.vision.transforms.CropResize(x=0, y=0, width=4, height=2)
    >>> crop(mx.nd.zeros((6, 6, 3), dtype='uint8')).shape
    (2, 4, 3)
    """

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


class CenterCrop(Block):
    """Crop the centre of an HWC image to ``size`` = (width, height) (an int: a square);
    an image smaller than that is cropped to the largest window of that aspect ratio and
    resized (``mx.image.center_crop``).

    Parameters
    ----------
    size : int or (width, height)
    interpolation : int
        Used only when the image must be resized (never for a crop within the image).
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class RandomResizedCrop(Block):
    """Crop a random region (random area fraction and aspect ratio), resized to ``size``
    (``mx.image.random_size_crop``: ten draws, then the centre crop).

    Parameters
    ----------
    size : int or (width, height)
    scale : (float, float)
        Range of the region's area as a fraction of the image's.
    ratio : (float, float)
        Range of the region's aspect ratio (width / height), sampled log-uniformly.
    interpolation : int
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


def _require_float32(x):
    if x.dtype != np.float32:
        raise TypeError("This transformation only supports float32. "
                        "Consider calling it after ToTensor")


class Rotate(Block):
    """Rotate a CHW image or NCHW batch by ``rotation_degrees`` (``mx.image.imrotate``).

    Parameters
    ----------
    rotation_degrees : float
    zoom_in, zoom_out : bool
        Scale so that no border shows, or so that the whole image stays in view.

    Shape
    -----
    (C, H, W) or (N, C, H, W) float32 in and out.

    Examples
    --------
    >>> rotate = mx.gluon.data.vision.transforms.Rotate(90)
    >>> rotate(mx.nd.ones((1, 3, 3))).shape
    (1, 3, 3)
    """

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _require_float32(x)
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """With probability ``rotate_with_proba``, rotate by an angle drawn from
    ``angle_limits`` (degrees; ``mx.image.random_rotate``, numpy's global generator).

    Parameters
    ----------
    angle_limits : (float, float)
    zoom_in, zoom_out : bool
    rotate_with_proba : float, default 1.0

    Shape
    -----
    (C, H, W) or (N, C, H, W) float32 in and out.

    Examples
    --------
    >>> rotate = mx.gluon.data.vision.transforms.RandomRotation((-10, 10))
    >>> rotate(mx.nd.ones((1, 4, 4))).shape
    (1, 4, 4)
    """

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        _require_float32(x)
        return image.random_rotate(x, *self._args)


class RandomApply(Sequential):
    """Apply ``transforms`` with probability ``p`` (Python's ``random``).

    Examples
    --------
    >>> flip = mx.gluon.data.vision.transforms.RandomApply(
    ...     mx.gluon.data.vision.transforms.Cast('float16'), p=1.0)
    >>> flip(mx.nd.ones((2, 2, 3))).dtype
    <class 'numpy.float16'>
    """

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)


class RandomFlipLeftRight(HybridBlock):
    """Mirror an HWC image horizontally with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip an HWC image vertically with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _RandomFactor(HybridBlock):
    """Scales one image property by a factor drawn from [max(0, 1 - amount), 1 + amount]."""
    _op = None

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomFactor):
    """Multiply pixel values by a random factor in [max(0, 1 - brightness), 1 + brightness]."""
    _op = 'random_brightness'

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_RandomFactor):
    """Blend with the mean gray level by a random factor in [1 - contrast, 1 + contrast]."""
    _op = 'random_contrast'

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_RandomFactor):
    """Blend with each pixel's gray level by a random factor in [1 - saturation, 1 + saturation]."""
    _op = 'random_saturation'

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_RandomFactor):
    """Rotate the hue by a random factor in [1 - hue, 1 + hue] turns (1 turn: unchanged)."""
    _op = 'random_hue'

    def __init__(self, hue):
        super().__init__(hue)


class RandomColorJitter(HybridBlock):
    """Random brightness, contrast, saturation and hue changes, in random order.

    Parameters
    ----------
    brightness, contrast, saturation, hue : float
        Jitter amounts (0 disables that change).
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise with standard deviation ``alpha``."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)
