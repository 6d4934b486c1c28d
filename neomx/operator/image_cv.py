"""MXNet's OpenCV operators (``mx.nd._internal._cvimdecode``, ``_cvimread``, ``_cvimresize``,
``_cvcopyMakeBorder``), which ``mx.image``'s functions are made of.

Images are (H, W, C) arrays. Decoding is OpenCV's when the ``vision`` extra is installed
(Pillow's otherwise), resizing OpenCV's on uint8/float CPU images (torch's elsewhere), so
pixels match MXNet's; borders are exact. The decoders' output shapes depend on the data, so
a Symbol cannot infer them.

Example
-------
>>> img = mx.nd.array([[[1, 2, 3]]], dtype='uint8')
>>> mx.nd._internal._cvcopyMakeBorder(img, top=1, bot=0, left=0, right=1, values=(9, 8, 7)).asnumpy()[:, :, 0]
array([[9, 9],
       [1, 9]], dtype=uint8)
>>> mx.nd._internal._cvimresize(img, w=2, h=3).shape
(3, 2, 3)
"""
import numpy as np
import torch

from .._image_decode import decode_bytes
from .._image_resize import resize_hwc
from ..base import MXNetError
from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, FLOATS, INT, STR, check, register

__all__ = ['cvimdecode', 'cvimread', 'cvimresize', 'copy_make_border']

# OpenCV's border codes past CONSTANT (0): REPLICATE, REFLECT (edge repeated), WRAP, REFLECT_101
_BORDER_PAD_MODES = {1: 'edge', 2: 'symmetric', 3: 'wrap', 4: 'reflect'}
_DECODE_ATTRS = [('flag', INT, 1), ('to_rgb', BOOL, True)]


def _decoded(pixels):
    return torch.from_numpy(np.ascontiguousarray(pixels))


@register('_cvimdecode', inputs=('buf',), attrs=_DECODE_ATTRS, dtypes=DTypeRule(output='uint8'),
          differentiable=False)
def cvimdecode(buf, flag, to_rgb):
    """Decode an image (JPEG, PNG...) held in a 1-D uint8 buffer: (H, W, 3) uint8 in RGB order
    (``to_rgb``; OpenCV's BGR otherwise), or (H, W, 1) grayscale for ``flag=0``."""
    check(buf.dtype == torch.uint8, '_cvimdecode', 'input needs to be uint8 buffer, got %s', buf.dtype)
    return _decoded(decode_bytes(buf.detach().cpu().numpy().tobytes(), flag, to_rgb, 'buffer')).to(buf.device)


@register('_cvimread', attrs=[('filename', STR)] + _DECODE_ATTRS, dtypes=DTypeRule(output='uint8'),
          differentiable=False)
def cvimread(filename, flag, to_rgb):
    """Read and decode the image file ``filename`` (as ``_cvimdecode``)."""
    try:
        with open(filename, 'rb') as stream:
            encoded = stream.read()
    except OSError as err:
        raise MXNetError("Imread: '%s' couldn't open file: %s" % (filename, err.strerror)) from None
    return _decoded(decode_bytes(encoded, flag, to_rgb, filename))


@register('_cvimresize', inputs=('src',), attrs=[('w', INT), ('h', INT), ('interp', INT, 1)])
def cvimresize(src, w, h, interp):
    """Resize an (H, W, C) image to (h, w, C), keeping its dtype; ``interp`` is OpenCV's code
    (0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos)."""
    check(interp in range(5), '_cvimresize', 'unknown interpolation method %s', interp)
    check(src.dim() == 3 and w > 0 and h > 0, '_cvimresize',
          'expected an (H, W, C) image and a positive size, got shape %s, w=%s, h=%s', src.shape, w, h)
    if src.device.type == 'meta':
        return torch.empty((h, w, src.shape[2]), dtype=src.dtype, device='meta')
    return resize_hwc(src, w, h, interp)


@register('_cvcopyMakeBorder', inputs=('src',),
          attrs=[('top', INT), ('bot', INT), ('left', INT), ('right', INT), ('type', INT, 0),
                 ('value', FLOAT, 0.0), ('values', FLOATS, ())])
def copy_make_border(src, top, bot, left, right, type, value, values):  # pylint: disable=redefined-builtin
    """Pad an (H, W, C) image with a border, as OpenCV: ``type`` 0 constant (``values`` per
    channel, missing ones 0; else ``value`` everywhere), 1 replicate, 2 reflect (edge
    repeated), 3 wrap, 4 reflect (edge not repeated); OpenCV's ISOLATED flag (16) is accepted."""
    check(src.dim() == 3, '_cvcopyMakeBorder', 'expected an (H, W, C) image, got shape %s', src.shape)
    check(min(top, bot, left, right) >= 0, '_cvcopyMakeBorder', 'border widths must not be negative, got %s',
          (top, bot, left, right))
    height, width, channels = src.shape
    type &= ~16     # OpenCV's BORDER_ISOLATED changes nothing for a whole image
    check(type == 0 or type in _BORDER_PAD_MODES, '_cvcopyMakeBorder', 'unknown border type %s', type)
    if src.device.type == 'meta':
        return torch.empty((height + top + bot, width + left + right, channels), dtype=src.dtype, device='meta')
    if type == 0:
        fill = list(values)[:channels] + [0.0] * (channels - len(values)) if values else [value] * channels
        padded = src.new_empty((height + top + bot, width + left + right, channels))
        padded[:] = torch.tensor(fill).to(src.dtype)
        padded[top:top + height, left:left + width] = src
        return padded
    # gather rows and columns through the padded index ranges numpy computes
    rows = np.pad(np.arange(height), (top, bot), mode=_BORDER_PAD_MODES[type])
    cols = np.pad(np.arange(width), (left, right), mode=_BORDER_PAD_MODES[type])
    return src[torch.from_numpy(rows).to(src.device)][:, torch.from_numpy(cols).to(src.device)]
