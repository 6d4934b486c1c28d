"""Image transforms for ``Dataset.transform_first``: Blocks over HWC images.

Deterministic per-pixel transforms are HybridBlocks calling ``F.image.*`` operators, so a
:class:`Compose` of them hybridizes; transforms that choose a region in Python
(``CenterCrop``, ``RandomResizedCrop``) are plain Blocks, as in MXNet.
"""
import math
import random

from .... import ndarray as nd
from ....base import MXNetError
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ['Compose', 'Cast', 'ToTensor', 'Normalize', 'Resize', 'CenterCrop', 'RandomResizedCrop',
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
    return (size, size) if isinstance(size, int) else tuple(size)


def _crop_resize(x, x0, y0, width, height, size, interpolation):
    """The (width, height) region at (x0, y0), resized to ``size`` = (w, h) when it differs."""
    out = nd.image.crop(x, x0, y0, width, height)
    if (width, height) != size:
        out = nd.image.resize(out, size, False, interpolation)
    return out


class CenterCrop(Block):
    """Crop the centre of an HWC image to ``size`` = (width, height) (an int: a square).

    Parameters
    ----------
    size : int or (width, height)
    interpolation : int
        Used only when the image must be resized (never for a crop within the image).
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size = _pair(size)
        self._interpolation = interpolation

    def forward(self, x):
        height, width = x.shape[-3], x.shape[-2]
        new_w, new_h = self._size
        if new_w > width or new_h > height:
            raise MXNetError('CenterCrop: crop size (width, height) = %s is larger than the image of shape %s'
                             % (self._size, x.shape))
        return _crop_resize(x, (width - new_w) // 2, (height - new_h) // 2, new_w, new_h,
                            self._size, self._interpolation)


class RandomResizedCrop(Block):
    """Crop a random region (random area fraction and aspect ratio), resized to ``size``.

    Parameters
    ----------
    size : int or (width, height)
    scale : (float, float)
        Range of the region's area as a fraction of the image's.
    ratio : (float, float)
        Range of the region's aspect ratio (width / height), sampled log-uniformly.
    interpolation : int

    Ten draws are tried; if none fits the image, the largest central region with an
    in-range aspect ratio is used.
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._size = _pair(size)
        self._scale = scale
        self._ratio = ratio
        self._interpolation = interpolation

    def _region(self, height, width):
        area = height * width
        log_ratio = (math.log(self._ratio[0]), math.log(self._ratio[1]))
        for _ in range(10):
            target = random.uniform(*self._scale) * area
            aspect = math.exp(random.uniform(*log_ratio))
            w = int(round(math.sqrt(target * aspect)))
            h = int(round(math.sqrt(target / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return random.randint(0, width - w), random.randint(0, height - h), w, h
        aspect = min(max(width / height, self._ratio[0]), self._ratio[1])
        w, h = min(width, int(round(height * aspect))), min(height, int(round(width / aspect)))
        return (width - w) // 2, (height - h) // 2, w, h

    def forward(self, x):
        x0, y0, w, h = self._region(x.shape[-3], x.shape[-2])
        return _crop_resize(x, x0, y0, w, h, self._size, self._interpolation)


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
    """Multiply pixel values by a random factor in [1 - brightness, 1 + brightness]."""
    _op = 'random_brightness'


class RandomContrast(_RandomFactor):
    """Blend with the mean gray level by a random factor in [1 - contrast, 1 + contrast]."""
    _op = 'random_contrast'


class RandomSaturation(_RandomFactor):
    """Blend with each pixel's gray level by a random factor in [1 - saturation, 1 + saturation]."""
    _op = 'random_saturation'


class RandomHue(_RandomFactor):
    """Rotate the hue by a random factor in [1 - hue, 1 + hue] turns (1 turn: unchanged)."""
    _op = 'random_hue'


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
