"""Image operators (``mx.nd.image.*``), the kernels of ``gluon.data.vision.transforms``.

Images are HWC (or NHWC batches) as decoded, except ``normalize`` which works on the CHW
(NCHW) float tensors ``to_tensor`` produces. Integer images keep their dtype; arithmetic
runs in float32 and is rounded and saturated back, as image libraries do. The random
operators draw from torch's generator (``mx.random.seed`` makes them reproducible).
"""
import functools
import math

import torch

from .._parsing import literal_eval
from .._image_decode import decode_bytes
from .._image_resize import resize_hwc
from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, FLOATS, INT, SHAPE, Attr, check, register

# ITU-R 601 luma weights (RGB -> gray), used by contrast and saturation.
_LUMA = (0.299, 0.587, 0.114)
# AlexNet's PCA of ImageNet RGB pixels, for lighting noise.
_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140), (-0.5836, -0.6948, 0.4203))
# RGB -> YIQ, for hue rotation: I and Q rows sum to 0 so grays stay gray; the exact inverse
# maps back, so a zero rotation changes nothing.
_TO_YIQ = torch.tensor(((0.299, 0.587, 0.114), (0.596, -0.274, -0.322), (0.211, -0.523, 0.312)),
                       dtype=torch.float64)
_FROM_YIQ = torch.linalg.inv(_TO_YIQ)


def _check_image(op, data):
    check(data.dim() in (3, 4), op, 'expected an image (3-D) or a batch of images (4-D), got shape %s',
          data.shape)


def _restore(values, like):
    """Float results back to ``like``'s dtype, rounded and saturated for integer images."""
    if like.dtype.is_floating_point:
        return values.to(like.dtype)
    info = torch.iinfo(like.dtype)
    return values.round().clamp(info.min, info.max).to(like.dtype)


def _as_float(data):
    return data if data.dtype.is_floating_point else data.float()


def _to_bytes(value):
    """An encoded image: bytes as given, or their ``repr`` (a Symbol's attribute string)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str) and value[:2] in ("b'", 'b"'):
        return literal_eval(value)
    raise TypeError('expected the encoded image as bytes, got %s' % type(value).__name__)


@register('_imdecode', inputs=('mean',), dtypes=DTypeRule(output='float32'),
          attrs=[('index', INT), ('x0', INT), ('y0', INT), ('x1', INT), ('y1', INT), ('c', INT), ('size', INT),
                 ('str_img', Attr('bytes', _to_bytes))])
def imdecode_legacy(mean, index, x0, y0, x1, y1, c, size, str_img):  # pylint: disable=unused-argument
    """Decode an image, clip to (x0, y0, x1, y1), subtract mean, and write to buffer.

    MXNet's legacy decoder behind ``mx.nd.imdecode``: the first ``size`` bytes of
    ``str_img`` decoded to a (c, h, w) float32 array, c 3 (RGB) or 1 (grey), cut to the
    rectangle where ``x1 > x0`` and ``y1 > y0``, minus ``mean`` unless ``mean`` is empty.
    ``index`` is the slice of a 4-D output buffer ``mx.nd.imdecode`` writes the image to.
    """
    check(c in (1, 3), '_imdecode', 'c must be 3 (colour) or 1 (grey), got %d', c)
    check(0 < size <= len(str_img), '_imdecode', 'size %d is not within the %d bytes of str_img',
          size, len(str_img))
    image = torch.from_numpy(decode_bytes(str_img[:size], 1 if c == 3 else 0, True, 'str_img'))
    if x1 > x0 and y1 > y0:
        image = image[y0:y1, x0:x1]
    image = image.permute(2, 0, 1).to(device=mean.device, dtype=torch.float32)
    return image - mean if mean.numel() else image


@register('_image_to_tensor', inputs=('data',), dtypes=DTypeRule(output='float32'))
def to_tensor(data):
    """HWC (NHWC) image with values in [0, 255] -> CHW (NCHW) float32 in [0, 1]."""
    _check_image('to_tensor', data)
    perm = (2, 0, 1) if data.dim() == 3 else (0, 3, 1, 2)
    return (data.float() / 255.0).permute(*perm).contiguous()


@register('_image_normalize', inputs=('data',),
          attrs=[('mean', FLOATS, (0.0, 0.0, 0.0, 0.0)), ('std', FLOATS, (1.0, 1.0, 1.0, 1.0))])
def normalize(data, mean, std):
    """(x - mean) / std per channel of a CHW (NCHW) tensor; one value applies to every channel."""
    _check_image('normalize', data)
    channels = data.shape[-3]
    check(channels in (1, 3), 'normalize', 'the first dimension of the input (the channels) must have '
          '1 or 3 elements, got input of shape %s', tuple(data.shape))
    for name, values in (('mean', mean), ('std', std)):
        check(len(values) == 1 or len(values) >= channels, 'normalize',
              '%s has %d values for %d channels', name, len(values), channels)
    return _restore((_as_float(data) - _per_channel(mean, channels, data.device))
                    / _per_channel(std, channels, data.device), data)


@functools.lru_cache(maxsize=64)
def _per_channel(values, channels, device):
    """A (channels, 1, 1) float32 constant (cached: transforms call this once per sample)."""
    values = values[:1] * channels if len(values) == 1 else values[:channels]
    return torch.tensor(values, dtype=torch.float32, device=device).reshape(channels, 1, 1)


def _target_size(height, width, size, keep_ratio):
    """(new_height, new_width) for ``size`` = (w,) or (w, h); keep_ratio scales the shorter side."""
    if len(size) == 1:
        if keep_ratio:
            short = size[0]
            if height < width:
                return short, int(width * short / height)
            return int(height * short / width), short
        return size[0], size[0]
    return size[1], size[0]


@register('_image_resize', inputs=('data',),
          attrs=[('size', SHAPE, ()), ('keep_ratio', BOOL, False), ('interp', INT, 1)])
def resize(data, size, keep_ratio, interp):
    """Resize an HWC (NHWC) image to ``size`` (an int, or (width, height)).

    ``interp``: OpenCV's codes, 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos. With
    the ``vision`` extra's OpenCV the pixels are OpenCV's, as MXNet's; otherwise torch
    computes OpenCV's sampling (see ``neomx._image_resize``).
    """
    _check_image('resize', data)
    check(len(size) in (1, 2), 'resize', 'size must be an int or (width, height), got %s', size)
    if len(size) == 1:
        check(size[0] > 0, 'resize', 'size should be greater than 0, but got %d', size[0])
    else:
        check(size[0] > 0, 'resize', 'width should be greater than 0, but got %d', size[0])
        check(size[1] > 0, 'resize', 'height should be greater than 0, but got %d', size[1])
    check(interp in range(5), 'resize', 'unsupported interp %d (use 0-4)', interp)
    batch = data if data.dim() == 4 else data.unsqueeze(0)
    new_h, new_w = _target_size(batch.shape[1], batch.shape[2], size, keep_ratio)
    out = torch.stack([resize_hwc(image, new_w, new_h, interp) for image in batch])
    return out if data.dim() == 4 else out[0]


@register('_image_crop', inputs=('data',),
          attrs=[('x', INT), ('y', INT), ('width', INT), ('height', INT)])
def crop(data, x, y, width, height):
    """The ``width`` x ``height`` region at column ``x``, row ``y`` of an HWC (NHWC) image."""
    _check_image('crop', data)
    rows, cols = data.shape[-3], data.shape[-2]
    check(0 <= x and 0 <= y and x + width <= cols and y + height <= rows, 'crop',
          'region x=%d y=%d width=%d height=%d lies outside the image of shape %s',
          x, y, width, height, data.shape)
    return data[..., y:y + height, x:x + width, :].contiguous()


def _flip(axis_from_end):
    def flip(data):
        _check_image('flip', data)
        return torch.flip(data, (data.dim() - axis_from_end,))
    return flip


def _random_flip(axis_from_end):
    def random_flip(data):
        _check_image('random_flip', data)
        if torch.rand(()) < 0.5:
            return torch.flip(data, (data.dim() - axis_from_end,))
        return data.clone()
    return random_flip


for _name, _axis in (('left_right', 2), ('top_bottom', 3)):
    register('_image_flip_' + _name, inputs=('data',))(_flip(_axis))
    register('_image_random_flip_' + _name, inputs=('data',))(_random_flip(_axis))


def _uniform(low, high):
    return float(torch.empty(()).uniform_(low, high))


def _gray(image):
    """Luma of an RGB float HWC (NHWC) image, keeping a trailing channel axis of 1."""
    weights = torch.tensor(_LUMA, dtype=image.dtype, device=image.device)
    return (image * weights).sum(-1, keepdim=True)


def _blend(image, other, alpha):
    return image * alpha + other * (1 - alpha)


def _brightness(image, alpha):
    return image * alpha


def _contrast(image, alpha):
    return _blend(image, _gray(image).mean(dim=(-3, -2, -1), keepdim=True), alpha)


def _saturation(image, alpha):
    return _blend(image, _gray(image), alpha)


def _hue(image, alpha):
    """Rotate the hue by ``alpha`` turns (a rotation of the IQ plane of YIQ)."""
    angle = alpha * 2 * math.pi
    cos, sin = math.cos(angle), math.sin(angle)
    rotation = torch.tensor(((1.0, 0.0, 0.0), (0.0, cos, -sin), (0.0, sin, cos)), dtype=torch.float64)
    matrix = _FROM_YIQ @ rotation @ _TO_YIQ
    return image @ matrix.T.to(device=image.device, dtype=image.dtype)


_ADJUSTMENTS = {'brightness': _brightness, 'contrast': _contrast, 'saturation': _saturation, 'hue': _hue}


def _random_adjustment(kind):
    adjust = _ADJUSTMENTS[kind]

    def random_adjust(data, min_factor, max_factor):
        _check_image('random_' + kind, data)
        return _restore(adjust(_as_float(data), _uniform(min_factor, max_factor)), data)
    random_adjust.__doc__ = 'Adjust the %s by a factor drawn uniformly from [min_factor, max_factor].' % kind
    return random_adjust


for _kind in _ADJUSTMENTS:
    register('_image_random_' + _kind, inputs=('data',),
             attrs=[('min_factor', FLOAT), ('max_factor', FLOAT)])(_random_adjustment(_kind))


@register('_image_random_color_jitter', inputs=('data',),
          attrs=[('brightness', FLOAT), ('contrast', FLOAT), ('saturation', FLOAT), ('hue', FLOAT)])
def random_color_jitter(data, brightness, contrast, saturation, hue):
    """Brightness, contrast, saturation and hue jitter, in random order.

    Each ``x`` in (0, 1) jitters by a factor in [1 - x, 1 + x] (hue: [-x, x] turns); 0 skips it.
    """
    _check_image('random_color_jitter', data)
    image = _as_float(data)
    amounts = {'brightness': brightness, 'contrast': contrast, 'saturation': saturation, 'hue': hue}
    for i in torch.randperm(4).tolist():
        kind = ('brightness', 'contrast', 'saturation', 'hue')[i]
        amount = amounts[kind]
        if amount > 0:
            factor = _uniform(-amount, amount) if kind == 'hue' else _uniform(1 - amount, 1 + amount)
            image = _ADJUSTMENTS[kind](image, factor)
    return _restore(image, data)


def _lighting(data, alpha):
    eigvec = torch.tensor(_EIGVEC, dtype=torch.float32, device=data.device)
    eigval = torch.tensor(_EIGVAL, dtype=torch.float32, device=data.device)
    shift = eigvec @ (torch.as_tensor(alpha, dtype=torch.float32, device=data.device) * eigval)
    return _restore(_as_float(data) + shift, data)


@register('_image_adjust_lighting', inputs=('data',), attrs=[('alpha', FLOATS)])
def adjust_lighting(data, alpha):
    """AlexNet-style PCA lighting: add ``eigvec @ (alpha * eigval)`` to every RGB pixel."""
    _check_image('adjust_lighting', data)
    check(len(alpha) == 3, 'adjust_lighting', 'alpha needs 3 values, got %d', len(alpha))
    return _lighting(data, alpha)


@register('_image_random_lighting', inputs=('data',), attrs=[('alpha_std', FLOAT, 0.05)])
def random_lighting(data, alpha_std):
    """PCA lighting noise with ``alpha ~ N(0, alpha_std)`` per component."""
    _check_image('random_lighting', data)
    return _lighting(data, torch.randn(3) * alpha_std)
