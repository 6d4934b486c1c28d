"""Image augmenters: callables from an (H, W, C) NDArray to an (H, W, C) NDArray.

Random choices use Python's ``random`` module (and numpy's global RNG for PCA lighting noise),
exactly as MXNet draws them, so seeding those generators reproduces MXNet's augmentations.
"""
import json

import numpy as np

from .. import ndarray as nd
from ..ndarray.ndarray import NDArray
from .._image_resize import pick_interp
from ._ops import center_crop, color_normalize, imresize, random_crop, random_size_crop, resize_short
from .._sample_streams import nprandom, pyrandom

__all__ = ['Augmenter', 'SequentialAug', 'ResizeAug', 'ForceResizeAug', 'RandomCropAug',
           'RandomSizedCropAug', 'CenterCropAug', 'RandomOrderAug', 'BrightnessJitterAug',
           'ContrastJitterAug', 'SaturationJitterAug', 'HueJitterAug', 'ColorJitterAug',
           'LightingAug', 'ColorNormalizeAug', 'RandomGrayAug', 'HorizontalFlipAug', 'CastAug',
           'CreateAugmenter']

_LUMA = (0.299, 0.587, 0.114)
# RGB <-> YIQ, the colour space in which a hue shift is a rotation of (I, Q).
_RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_YIQ_TO_RGB = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
# ImageNet's PCA of RGB pixels, used by CreateAugmenter's pca_noise.
IMAGENET_EIGVAL = np.array([55.46, 4.794, 1.148])
IMAGENET_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                             [-0.5808, -0.0045, -0.8140],
                             [-0.5836, -0.6948, 0.4203]])
_IMAGENET_MEAN = (123.68, 116.28, 103.53)
_IMAGENET_STD = (58.395, 57.12, 57.375)


class Augmenter:
    """Base augmenter: keeps its constructor arguments (arrays as lists) for :meth:`dumps`.

    Example
    -------
    >>> class Invert(mx.image.Augmenter):
    ...     def __init__(self, top=255):
    ...         super().__init__(top=top)
    ...         self.top = top
    ...     def __call__(self, src):
    ...         return self.top - src
    >>> aug = Invert()
    >>> aug.dumps()
    '["invert", {"top": 255}]'
    >>> aug(mx.nd.array([[[0, 100, 255]]]))
    <BLANKLINE>
    [[[255. 155.   0.]]]
    <NDArray 1x1x3 @cpu(0)>
    """

    def __init__(self, **kwargs):
        self._kwargs = {key: _jsonable(value) for key, value in kwargs.items()}

    def dumps(self):
        """JSON string ``[class name in lower case, constructor arguments]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError('Must override implementation.')


def _jsonable(value):
    if isinstance(value, NDArray):
        value = value.asnumpy()
    return value.tolist() if isinstance(value, np.ndarray) else value


class SequentialAug(Augmenter):
    """Apply the augmenters ``ts`` one after the other.

    Shape
    -----
    src: ``(H, W, C)`` image; out: what the last augmenter makes.

    Example
    -------
    >>> aug = mx.image.SequentialAug([mx.image.ForceResizeAug((4, 2)), mx.image.CastAug('float16')])
    >>> out = aug(mx.nd.ones((6, 6, 3), dtype='uint8'))
    >>> out.shape, out.dtype
    ((2, 4, 3), <class 'numpy.float16'>)
    """

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        """A list (not a string, as in MXNet): ``[name, [child dumps...]]``."""
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(SequentialAug):
    """Apply the augmenters ``ts`` in a random order (shuffled in place at every call).

    Shape
    -----
    src: ``(H, W, C)`` image; out: what the augmenters make.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> aug = mx.image.RandomOrderAug([mx.image.CastAug(), mx.image.ResizeAug(2)])
    >>> out = aug(mx.nd.ones((4, 6, 3), dtype='uint8'))
    >>> out.shape, out.dtype
    ((2, 3, 3), <class 'numpy.float32'>)
    """

    def __call__(self, src):
        pyrandom.shuffle(self.ts)
        return super().__call__(src)


class _SizedAug(Augmenter):
    """An augmenter parametrised by an output ``size`` and an interpolation code."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp


class ResizeAug(_SizedAug):
    """Resize the shorter edge to ``size`` (an int).

    Shape
    -----
    src: ``(H, W, C)`` image; out: ``(size, W * size / H, C)`` when H <= W, else ``(H * size / W, size, C)``.

    Example
    -------
    >>> mx.image.ResizeAug(4)(mx.nd.ones((8, 12, 3), dtype='uint8')).shape
    (4, 6, 3)
    """

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_SizedAug):
    """Resize to exactly ``size`` (w, h), ignoring the aspect ratio.

    Shape
    -----
    src: ``(H, W, C)`` image; out: ``(size[1], size[0], C)``.

    Example
    -------
    >>> mx.image.ForceResizeAug((5, 3))(mx.nd.ones((8, 12, 3), dtype='uint8')).shape
    (3, 5, 3)
    """

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=pick_interp(self.interp, sizes))


class RandomCropAug(_SizedAug):
    """Crop a random window of ``size`` (w, h); see :func:`random_crop`.

    Shape
    -----
    src: ``(H, W, C)`` image; out: ``(size[1], size[0], C)``.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> mx.image.RandomCropAug((4, 2))(mx.nd.ones((8, 12, 3), dtype='uint8')).shape
    (2, 4, 3)
    """

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class CenterCropAug(_SizedAug):
    """Crop the centred window of ``size`` (w, h); see :func:`center_crop`.

    Shape
    -----
    src: ``(H, W, C)`` image; out: ``(size[1], size[0], C)``.

    Example
    -------
    >>> img = mx.nd.arange(16).reshape((4, 4, 1))
    >>> mx.image.CenterCropAug((2, 2))(img).reshape((2, 2))
    <BLANKLINE>
    [[ 5.  6.]
     [ 9. 10.]]
    <NDArray 2x2 @cpu(0)>
    """

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Crop a window of random area and aspect ratio, resized to ``size``; see :func:`random_size_crop`.

    Shape
    -----
    src: ``(H, W, C)`` image; out: ``(size[1], size[0], C)``.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> aug = mx.image.RandomSizedCropAug((4, 4), area=(0.3, 1.0), ratio=(3 / 4, 4 / 3))
    >>> aug(mx.nd.ones((16, 16, 3), dtype='uint8')).shape
    (4, 4, 3)
    """

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        self.area = kwargs.pop('min_area', area)
        self.ratio = ratio
        self.interp = interp
        assert not kwargs, 'unexpected keyword arguments for `RandomSizedCropAug`.'

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


def _jitter_factor(spread):
    return 1.0 + pyrandom.uniform(-spread, spread)


class BrightnessJitterAug(Augmenter):
    """Scale all pixels by a factor in [1 - brightness, 1 + brightness] (in place).

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> mx.image.BrightnessJitterAug(0.5)(mx.nd.ones((1, 2, 3)) * 100)
    <BLANKLINE>
    [[[134.44218 134.44218 134.44218]
      [134.44218 134.44218 134.44218]]]
    <NDArray 1x2x3 @cpu(0)>
    """

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src *= _jitter_factor(self.brightness)
        return src


class ContrastJitterAug(Augmenter):
    """Blend the image with its mean gray level by a random factor (in place).

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> img = mx.nd.array([[[0, 0, 0], [200, 200, 200]]])        # mean gray level 100
    >>> mx.image.ContrastJitterAug(0.5)(img)
    <BLANKLINE>
    [[[-34.442184 -34.442184 -34.442184]
      [234.44218  234.44218  234.44218 ]]]
    <NDArray 1x2x3 @cpu(0)>
    """

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array([[_LUMA]])

    def __call__(self, src):
        alpha = _jitter_factor(self.contrast)
        gray = src * _on_context_of(src, self.coef)
        # 3 * mean of the weighted channels = the mean luma of the image.
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blend every pixel with its own luma by a random factor (in place).

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> mx.image.SaturationJitterAug(0.5)(mx.nd.array([[[200, 100, 0]]]))
    <BLANKLINE>
    [[[228.07037  93.62819 -40.81399]]]
    <NDArray 1x1x3 @cpu(0)>
    """

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array([[_LUMA]])

    def __call__(self, src):
        alpha = _jitter_factor(self.saturation)
        gray = nd.sum(src * _on_context_of(src, self.coef), axis=2, keepdims=True)
        gray *= (1.0 - alpha)
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotate the hue by a random angle in [-hue, hue] * pi, linearly in YIQ space.

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> gray = mx.nd.ones((1, 2, 3)) * 50                         # gray has no hue: unchanged
    >>> mx.image.HueJitterAug(0.5)(gray).round()
    <BLANKLINE>
    [[[50. 50. 50.]
      [50. 50. 50.]]]
    <NDArray 1x2x3 @cpu(0)>
    """

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue

    def __call__(self, src):
        angle = pyrandom.uniform(-self.hue, self.hue) * np.pi
        cos, sin = np.cos(angle), np.sin(angle)
        rotate_iq = np.array([[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]])
        transform = (_YIQ_TO_RGB @ rotate_iq @ _RGB_TO_YIQ).T
        return nd.dot(src, nd.array(transform, ctx=src.context))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (the non-zero ones) in a random order.

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> import random
    >>> random.seed(0)
    >>> aug = mx.image.ColorJitterAug(brightness=0.3, contrast=0, saturation=0.3)
    >>> [type(a).__name__ for a in aug.ts]                      # the non-zero jitters
    ['BrightnessJitterAug', 'SaturationJitterAug']
    >>> aug(mx.nd.ones((2, 2, 3)) * 100).shape
    (2, 2, 3)
    """

    def __init__(self, brightness, contrast, saturation):
        jitters = [(BrightnessJitterAug, brightness), (ContrastJitterAug, contrast),
                   (SaturationJitterAug, saturation)]
        super().__init__([kind(spread) for kind, spread in jitters if spread > 0])


class LightingAug(Augmenter):
    """AlexNet-style PCA noise: add ``eigvec @ (alpha * eigval)``, alpha ~ N(0, alphastd).

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> np.random.seed(0)
    >>> eigval = np.array([55.46, 4.794, 1.148])
    >>> eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
    ...                    [-0.5836, -0.6948, 0.4203]])
    >>> mx.image.LightingAug(0.1, eigval, eigvec)(mx.nd.zeros((1, 1, 3)))
    <BLANKLINE>
    [[[-5.3690863 -5.7745423 -5.795675 ]]]
    <NDArray 1x1x3 @cpu(0)>
    """

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src):
        alpha = nprandom.normal(0, self.alphastd, size=(3,))
        src += nd.array(np.dot(self.eigvec * alpha, self.eigval), ctx=src.context)
        return src


class ColorNormalizeAug(Augmenter):
    """Subtract ``mean`` and divide by ``std`` per channel; see :func:`color_normalize`.

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> aug = mx.image.ColorNormalizeAug(mean=[100, 50, 0], std=[50, 25, 1])
    >>> aug(mx.nd.array([[[150, 100, 3]]]))
    <BLANKLINE>
    [[[1. 2. 3.]]]
    <NDArray 1x1x3 @cpu(0)>
    """

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = _as_ndarray(mean)
        self.std = _as_ndarray(std)

    def __call__(self, src):
        return color_normalize(src, _on_context_of(src, self.mean), _on_context_of(src, self.std))


def _as_ndarray(value):
    return value if value is None or isinstance(value, NDArray) else nd.array(value)


def _on_context_of(src, value):
    """``value`` (an NDArray or None) on ``src``'s context: an augmenter's arrays are made on
    the context current where it is built, its images may come from elsewhere (decoded on
    the CPU, or augmented on an iterator's threads)."""
    return value if value is None else value.as_in_context(src.context)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace each channel by the pixel's gray level (3 channels kept).

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> aug = mx.image.RandomGrayAug(p=1.0)                     # always
    >>> aug(mx.nd.array([[[100, 200, 0]]]))                     # 0.21 R + 0.72 G + 0.07 B
    <BLANKLINE>
    [[[165. 165. 165.]]]
    <NDArray 1x1x3 @cpu(0)>
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21] * 3, [0.72] * 3, [0.07] * 3])

    def __call__(self, src):
        if pyrandom.random() < self.p:
            src = nd.dot(src, _on_context_of(src, self.mat))
        return src


class HorizontalFlipAug(Augmenter):
    """With probability ``p``, mirror the image left-right.

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same.

    Example
    -------
    >>> aug = mx.image.HorizontalFlipAug(p=1.0)                 # always
    >>> aug(mx.nd.arange(3).reshape((1, 3, 1))).reshape((3,))
    <BLANKLINE>
    [2. 1. 0.]
    <NDArray 3 @cpu(0)>
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if pyrandom.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast the image to dtype ``typ``.

    Shape
    -----
    src: ``(H, W, C)`` image; out: the same, of dtype ``typ``.

    Example
    -------
    >>> aug = mx.image.CastAug('float16')
    >>> aug(mx.nd.ones((2, 2, 3), dtype='uint8')).dtype
    <class 'numpy.float16'>
    >>> aug.dumps()
    '["castaug", {"type": "float16"}]'
    """

    def __init__(self, typ='float32'):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def imagenet_statistic(value, name):
    """A ``mean`` or ``std`` argument: True means ImageNet's (per RGB channel); otherwise
    None or an array of 1 or 3 values."""
    if value is True:
        return nd.array(_IMAGENET_MEAN if name == 'mean' else _IMAGENET_STD)
    if value is not None:
        assert isinstance(value, (np.ndarray, NDArray)) and value.shape[0] in (1, 3), \
            '%s must be an array of 1 or 3 values' % name
    return value


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False,
                    mean=None, std=None, brightness=0, contrast=0, saturation=0, hue=0,
                    pca_noise=0, rand_gray=0, inter_method=2):
    """The standard augmenter list for images of ``data_shape`` (C, H, W).

    Order: resize of the shorter edge, crop (random sized, random or center) to (W, H),
    mirror, cast to float32, colour jitter, hue jitter, PCA lighting, random gray,
    normalisation (``mean``/``std`` True = ImageNet's statistics).

    Returns
    -------
    list of Augmenter
    """
    augs = []
    if resize > 0:
        augs.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        assert rand_crop, 'rand_resize requires rand_crop'
        augs.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        augs.append(RandomCropAug(crop_size, inter_method))
    else:
        augs.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        augs.append(HorizontalFlipAug(0.5))
    augs.append(CastAug())
    if brightness or contrast or saturation:
        augs.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        augs.append(HueJitterAug(hue))
    if pca_noise > 0:
        augs.append(LightingAug(pca_noise, IMAGENET_EIGVAL, IMAGENET_EIGVEC))
    if rand_gray > 0:
        augs.append(RandomGrayAug(rand_gray))
    mean = imagenet_statistic(mean, 'mean')
    std = imagenet_statistic(std, 'std')
    if mean is not None or std is not None:
        augs.append(ColorNormalizeAug(mean, std))
    return augs
