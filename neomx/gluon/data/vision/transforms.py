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

    Shape
    -----
    As the transforms make.

    Example
    -------
    >>> transforms = mx.gluon.data.vision.transforms
    >>> pipeline = transforms.Compose([transforms.Resize(4), transforms.ToTensor(),
    ...                                transforms.Normalize(0.5, 0.25)])
    >>> out = pipeline(mx.nd.full((8, 6, 3), 255, dtype='uint8'))
    >>> out.shape, out.dtype, float(out[0, 0, 0].asscalar())     # (1 - 0.5) / 0.25
    ((3, 4, 4), <class 'numpy.float32'>, 2.0)
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
    """Cast the input to ``dtype`` (default float32).

    Shape
    -----
    out: the input's shape, of ``dtype``.

    Example
    -------
    >>> cast = mx.gluon.data.vision.transforms.Cast('float16')
    >>> cast(mx.nd.ones((2, 2, 3), dtype='uint8')).dtype
    <class 'numpy.float16'>
    """

    def __init__(self, dtype='float32'):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (or NHWC) image in [0, 255] -> CHW (NCHW) float32 in [0, 1].

    Shape
    -----
    data: ``(H, W, C)`` or ``(N, H, W, C)``, uint8 or float; out: ``(C, H, W)`` or ``(N, C, H, W)`` float32.

    Example
    -------
    >>> to_tensor = mx.gluon.data.vision.transforms.ToTensor()
    >>> img = mx.nd.array([[[0, 51, 255], [102, 153, 204]]], dtype='uint8')     # 1x2 pixels, RGB
    >>> to_tensor(img)
    <BLANKLINE>
    [[[0.  0.4]]
    <BLANKLINE>
     [[0.2 0.6]]
    <BLANKLINE>
     [[1.  0.8]]]
    <NDArray 3x1x2 @cpu(0)>
    """

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a CHW (NCHW) tensor.

    Parameters
    ----------
    mean, std : float or tuple of float
        One value for all channels, or one per channel.

    Shape
    -----
    data: ``(C, H, W)`` or ``(N, C, H, W)`` float32; out: the same shape.

    Example
    -------
    >>> normalize = mx.gluon.data.vision.transforms.Normalize(mean=(0.5, 0.0, 1.0), std=(0.5, 2.0, 1.0))
    >>> normalize(mx.nd.ones((3, 1, 2)))
    <BLANKLINE>
    [[[1.  1. ]]
    <BLANKLINE>
     [[0.5 0.5]]
    <BLANKLINE>
     [[0.  0. ]]]
    <NDArray 3x1x2 @cpu(0)>
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

    Shape
    -----
    data: ``(H, W, C)`` or ``(N, H, W, C)``; out: ``(height, width, C)`` (with a batch axis for a batch).

    Example
    -------
    >>> img = mx.nd.ones((8, 12, 3), dtype='uint8')
    >>> mx.gluon.data.vision.transforms.Resize((3, 5))(img).shape           # (width, height)
    (5, 3, 3)
    >>> mx.gluon.data.vision.transforms.Resize(4, keep_ratio=True)(img).shape    # shorter side 4
    (4, 6, 3)
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

    Shape
    -----
    data: ``(H, W, C)``; out: ``(height, width, C)``.

    Example
    -------
    >>> img = mx.nd.arange(16).reshape((4, 4, 1))
    >>> mx.gluon.data.vision.transforms.CenterCrop(2)(img).reshape((2, 2))
    <BLANKLINE>
    [[ 5.  6.]
     [ 9. 10.]]
    <NDArray 2x2 @cpu(0)>
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

    Shape
    -----
    data: ``(H, W, C)``; out: ``(height, width, C)``.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> crop = mx.gluon.data.vision.transforms.RandomResizedCrop((4, 3), scale=(0.5, 1.0))
    >>> crop(mx.nd.ones((10, 10, 3), dtype='uint8')).shape
    (3, 4, 3)
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
    """Mirror an HWC image horizontally with probability 0.5.

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> flip = mx.gluon.data.vision.transforms.RandomFlipLeftRight()
    >>> img = mx.nd.arange(3).reshape((1, 3, 1))
    >>> sorted({tuple(flip(img).reshape((3,)).asnumpy().tolist()) for _ in range(20)})   # as is, or mirrored
    [(0.0, 1.0, 2.0), (2.0, 1.0, 0.0)]
    """

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip an HWC image vertically with probability 0.5.

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> flip = mx.gluon.data.vision.transforms.RandomFlipTopBottom()
    >>> img = mx.nd.arange(3).reshape((3, 1, 1))
    >>> sorted({tuple(flip(img).reshape((3,)).asnumpy().tolist()) for _ in range(20)})   # as is, or flipped
    [(0.0, 1.0, 2.0), (2.0, 1.0, 0.0)]
    """

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
    """Multiply pixel values by a random factor in [max(0, 1 - brightness), 1 + brightness].

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> out = mx.gluon.data.vision.transforms.RandomBrightness(0.5)(mx.nd.ones((2, 2, 3)) * 100)
    >>> out.shape, bool(50 <= out[0, 0, 0].asscalar() <= 150)     # every pixel times one factor
    ((2, 2, 3), True)
    """
    _op = 'random_brightness'

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_RandomFactor):
    """Blend with the mean gray level by a random factor in [1 - contrast, 1 + contrast].

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> gray = mx.nd.ones((2, 2, 3)) * 100                     # a flat image keeps its contrast
    >>> mx.gluon.data.vision.transforms.RandomContrast(0.5)(gray)[0, 0]
    <BLANKLINE>
    [100. 100. 100.]
    <NDArray 3 @cpu(0)>
    """
    _op = 'random_contrast'

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_RandomFactor):
    """Blend with each pixel's gray level by a random factor in [1 - saturation, 1 + saturation].

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> gray = mx.nd.ones((2, 2, 3)) * 100                     # a gray image has no saturation
    >>> mx.gluon.data.vision.transforms.RandomSaturation(0.5)(gray)[0, 0]
    <BLANKLINE>
    [100. 100. 100.]
    <NDArray 3 @cpu(0)>
    """
    _op = 'random_saturation'

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_RandomFactor):
    """Rotate the hue by a random factor in [1 - hue, 1 + hue] turns (1 turn: unchanged).

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> gray = mx.nd.ones((2, 2, 3)) * 100                     # a gray image has no hue
    >>> mx.gluon.data.vision.transforms.RandomHue(0.5)(gray)[0, 0].round()
    <BLANKLINE>
    [100. 100. 100.]
    <NDArray 3 @cpu(0)>
    """
    _op = 'random_hue'

    def __init__(self, hue):
        super().__init__(hue)


class RandomColorJitter(HybridBlock):
    """Random brightness, contrast, saturation and hue changes, in random order.

    Parameters
    ----------
    brightness, contrast, saturation, hue : float
        Jitter amounts (0 disables that change).

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> jitter = mx.gluon.data.vision.transforms.RandomColorJitter(brightness=0.2, contrast=0.2,
    ...                                                            saturation=0.2, hue=0.1)
    >>> out = jitter(mx.nd.random.uniform(0, 255, shape=(4, 4, 3)))
    >>> out.shape, out.dtype
    ((4, 4, 3), <class 'numpy.float32'>)
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise with standard deviation ``alpha``.

    Shape
    -----
    data: ``(H, W, C)`` image or ``(N, H, W, C)`` batch; out: the same shape.

    Example
    -------
    >>> mx.random.seed(0)
    >>> out = mx.gluon.data.vision.transforms.RandomLighting(0.1)(mx.nd.ones((2, 2, 3)) * 100)
    >>> out.shape, bool((out[0, 0] == out[1, 1]).min())     # the same shift for every pixel
    ((2, 2, 3), True)
    """

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)
