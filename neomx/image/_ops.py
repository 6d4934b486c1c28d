"""``mx.image``'s functions: decoding, resizing, cropping and rotating image NDArrays.

MXNet does these with OpenCV; neomx decodes with OpenCV too when the ``vision`` extra is
installed (Pillow otherwise) and resizes in torch (see ``_resize``). Decoded pixels of
lossless formats and every crop, flip and border are exact; resized uint8 pixels may differ
from OpenCV's fixed-point arithmetic by 1, and Pillow's JPEG decoding by the libjpeg build's
rounding.
"""
import numbers

import numpy as np
import torch
import torch.nn.functional as F

from .._image_decode import decode_buffer, decode_bytes
from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import wrap_tensor
from ..operator.image_cv import copy_make_border
from .._image_resize import pick_interp, resize_hwc
from .._sample_streams import nprandom, pyrandom

__all__ = ['imread', 'imdecode', 'imresize', 'scale_down', 'copyMakeBorder', 'resize_short',
           'fixed_crop', 'random_crop', 'center_crop', 'color_normalize', 'random_size_crop',
           'imrotate', 'random_rotate']

def _to_ndarray(pixels):
    # Decoded images live on the CPU whatever the current context, as MXNet's OpenCV decoders'
    # outputs do: the augmenters and DataLoader workers that read them work on the CPU.
    return wrap_tensor(torch.from_numpy(np.array(pixels)), cpu(0))


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image file.

    Parameters
    ----------
    filename : str
        Path of the image file.
    flag : int, default 1
        1 for colour (H, W, 3), 0 for grayscale (H, W, 1).
    to_rgb : bool, default True
        Channel order RGB (True) or OpenCV's BGR (False).
    out : NDArray, optional
        Receives the result.

    Returns
    -------
    NDArray
        uint8 image of shape (H, W, 3) or (H, W, 1), on cpu(0) (as MXNet's).
    """
    try:
        stream = open(filename, 'rb')
    except OSError as err:
        raise MXNetError("Imread: '%s' couldn't open file: %s" % (filename, err.strerror)) from None
    with stream:
        encoded = stream.read()
    return _write_out(_to_ndarray(decode_bytes(encoded, flag, to_rgb, filename)), out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an encoded image (JPEG, PNG, ...) held in memory.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        The encoded bytes (arrays are read as uint8 buffers).
    flag : int, default 1
        1 for colour (H, W, 3), 0 for grayscale (H, W, 1).
    to_rgb : bool, default True
        Channel order RGB (True) or OpenCV's BGR (False).
    out : NDArray, optional
        Receives the result.

    Returns
    -------
    NDArray
        uint8 image of shape (H, W, 3) or (H, W, 1), on cpu(0) (as MXNet's).
    """
    return _write_out(_to_ndarray(decode_buffer(buf, flag, to_rgb)), out)


def _write_out(result, out):
    if out is None:
        return result
    out[:] = result
    return out


def imresize(src, w, h, interp=1, out=None):
    """Resize an (H, W, C) image to (h, w, C), keeping its dtype.

    Parameters
    ----------
    src : NDArray
        Image of shape (H, W, C).
    w, h : int
        Output width and height.
    interp : int, default 1
        OpenCV's code: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (8x8).
    out : NDArray, optional
        Receives the result.

    Returns
    -------
    NDArray
        Image of shape (h, w, C).
    """
    if interp not in range(5):
        raise MXNetError('imresize: unknown interpolation method %s' % (interp,))
    if src.ndim != 3 or w <= 0 or h <= 0:
        raise MXNetError('imresize: expected an (H, W, C) image and a positive size, got '
                         'shape %s, w=%s, h=%s' % (src.shape, w, h))
    return _write_out(wrap_tensor(resize_hwc(src._t, int(w), int(h), interp), src._ctx), out)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):  # pylint: disable=redefined-builtin
    """Pad an (H, W, C) image with a border, OpenCV style.

    Parameters
    ----------
    src : NDArray
        Image of shape (H, W, C).
    top, bot, left, right : int
        Border widths.
    type : int, default 0
        0 constant, 1 replicate, 2 reflect (edge repeated), 3 wrap, 4 reflect (edge not repeated).
    value : float, default 0
        Constant fill for every channel when ``values`` is empty (deprecated in MXNet).
    values : tuple of float, default ()
        Constant fill per channel; missing channels are 0.
    out : NDArray, optional
        Receives the result.

    Returns
    -------
    NDArray
        Image of shape (H + top + bot, W + left + right, C).
    """
    values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
    padded = copy_make_border(src._t, int(top), int(bot), int(left), int(right), int(type), float(value), values)
    return _write_out(wrap_tensor(padded, src._ctx), out)


def scale_down(src_size, size):
    """Shrink a crop size (w, h) to fit in ``src_size`` (w, h), keeping its aspect ratio.

    Returns
    -------
    tuple of int
        The crop size (w, h), truncated to integers.
    """
    w, h = size
    src_w, src_h = src_size
    if src_h < h:
        w, h = float(w * src_h) / h, src_h
    if src_w < w:
        w, h = src_w, float(h * src_w) / w
    return int(w), int(h)


def resize_short(src, size, interp=2):
    """Resize an (H, W, C) image so that its shorter edge is ``size`` (aspect ratio kept).

    ``interp`` is an OpenCV code 0-4, or 9 (by direction) / 10 (random) as in MXNet.
    """
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=pick_interp(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop the (w, h) window at (x0, y0) of an (H, W, C) image, then resize it to ``size`` (w, h).

    Returns
    -------
    NDArray
        The crop (a view when no resize is needed).
    """
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=pick_interp(interp, sizes))
    return out


def _crop_at(src, size, interp, corner):
    """Crop the largest window of ``size``'s aspect ratio that fits, at ``corner(slack_w, slack_h)``."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = corner(w - new_w, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_crop(src, size, interp=2):
    """Crop a random window of ``size`` (w, h), shrunk to fit; resized back to ``size``.

    Returns
    -------
    tuple
        (cropped NDArray, (x0, y0, w, h) of the window in ``src``).
    """
    return _crop_at(src, size, interp, lambda dw, dh: (pyrandom.randint(0, dw), pyrandom.randint(0, dh)))


def center_crop(src, size, interp=2):
    """Crop the centred window of ``size`` (w, h), shrunk to fit; resized back to ``size``.

    Returns
    -------
    tuple
        (cropped NDArray, (x0, y0, w, h) of the window in ``src``).
    """
    return _crop_at(src, size, interp, lambda dw, dh: (int(dw / 2), int(dh / 2)))


def color_normalize(src, mean, std=None):
    """Subtract ``mean`` and divide by ``std`` (broadcast over the channels), in place."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """Crop a window of random area fraction and aspect ratio, resized to ``size`` (w, h).

    Parameters
    ----------
    src : NDArray
        Image of shape (H, W, C).
    size : tuple of int
        Output (w, h).
    area : float or tuple of float
        Range of the window's area as a fraction of the image (a float means (area, 1.0)).
    ratio : tuple of float
        Range of the window's aspect ratio w / h, sampled log-uniformly.
    interp : int, default 2
        Interpolation code (see :func:`resize_short`).

    Returns
    -------
    tuple
        (cropped NDArray, (x0, y0, w, h)); after 10 windows that do not fit, a center crop.
    """
    h, w, _ = src.shape
    if 'min_area' in kwargs:
        area = kwargs.pop('min_area')
    assert not kwargs, 'unexpected keyword arguments for `random_size_crop`.'
    if isinstance(area, numbers.Number):
        area = (area, 1.0)
    log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
    for _ in range(10):
        target_area = pyrandom.uniform(area[0], area[1]) * h * w
        aspect = np.exp(pyrandom.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * aspect)))
        new_h = int(round(np.sqrt(target_area / aspect)))
        if new_w <= w and new_h <= h:
            x0 = pyrandom.randint(0, w - new_w)
            y0 = pyrandom.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _rotation_zoom(height, width, radians, zoom_in):
    """Per image scale of the sampling grid: shrink it so that the rotated image fills the
    output (``zoom_in``) or grow it so that the whole image stays in view (zoom out)."""
    rho = np.hypot(height, width)
    corner = np.arctan(height / width)
    turn = torch.abs(radians).double()
    spans = [(torch.abs(rho * torch.cos(corner + sign * turn)),
              torch.abs(rho * torch.sin(corner + sign * turn))) for sign in (1, -1)]
    max_x = torch.maximum(spans[0][0], spans[1][0])
    max_y = torch.maximum(spans[0][1], spans[1][1])
    if zoom_in:
        return torch.minimum(width / max_x, height / max_y)
    return torch.maximum(max_x / width, max_y / height)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate a CHW image or NCHW batch about its centre by ``rotation_degrees``
    (counter-clockwise), bilinearly, with zeros where the rotated image does not reach.

    Parameters
    ----------
    src : NDArray
        float32 image (C, H, W) or batch (N, C, H, W).
    rotation_degrees : float or NDArray
        A scalar, or (for a batch) one angle per image.
    zoom_in : bool, default False
        Scale so that no padding is visible.
    zoom_out : bool, default False
        Scale so that the whole image stays visible.

    Returns
    -------
    NDArray
        Same shape as ``src``.

    Examples
    --------
    >>> img = mx.nd.ones((1, 4, 4))
    >>> mx.image.imrotate(img, 90).shape
    (1, 4, 4)
    """
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype != np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    batch = src._t
    if src.ndim == 3:
        if not isinstance(rotation_degrees, numbers.Number):
            raise TypeError("When a single image is passed the rotation angle is "
                            "required to be a scalar.")
        batch = batch[None]
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    if isinstance(rotation_degrees, numbers.Number):
        degrees = torch.full((batch.shape[0],), float(rotation_degrees))
    else:
        degrees = rotation_degrees._t.reshape(-1).float().cpu()
    if batch.shape[0] != degrees.shape[0]:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    _, _, height, width = batch.shape
    radians = degrees * (np.pi / 180)
    cos, sin = torch.cos(radians), torch.sin(radians)
    # The grid's pixel coordinates about the centre, rotated, then normalised to [-1, 1]
    # (after the rotation, so that the aspect ratio is kept).
    half_h, half_w = (height - 1) / 2, (width - 1) / 2
    rows = (torch.arange(height, dtype=torch.float32) - half_h)[None, :, None]
    cols = (torch.arange(width, dtype=torch.float32) - half_w)[None, None, :]
    cos, sin = cos[:, None, None], sin[:, None, None]
    grid_x = (cols * cos - rows * sin) / half_w
    grid_y = (cols * sin + rows * cos) / half_h
    grid = torch.stack([grid_x, grid_y], dim=-1)
    if zoom_in or zoom_out:
        grid = grid * _rotation_zoom(height, width, radians, zoom_in).float()[:, None, None, None]
    rotated = F.grid_sample(batch, grid.to(batch.device), mode='bilinear', padding_mode='zeros',
                            align_corners=True)
    return wrap_tensor(rotated[0] if src.ndim == 3 else rotated, src._ctx)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate ``src`` (CHW, or each image of an NCHW batch) by an angle drawn uniformly from
    ``angle_limits`` (degrees, numpy's global RNG); see :func:`imrotate`.

    Examples
    --------
    >>> mx.image.random_rotate(mx.nd.ones((2, 1, 4, 4)), (-5, 5)).shape
    (2, 1, 4, 4)
    """
    if src.ndim == 3:
        return imrotate(src, nprandom.uniform(*angle_limits), zoom_in=zoom_in, zoom_out=zoom_out)
    degrees = wrap_tensor(torch.as_tensor(nprandom.uniform(*angle_limits, size=src.shape[0]),
                                          dtype=torch.float32, device=src._t.device), src._ctx)
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)
