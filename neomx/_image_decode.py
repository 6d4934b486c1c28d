"""Decoding encoded images (JPEG, PNG...) to numpy arrays with Pillow, OpenCV's way: below
``mx.nd`` and ``mx.image``, which both decode (``nd.imdecode``, ``image.imdecode``/``imread``)."""
import io

import numpy as np

from ._optional import require
from .base import MXNetError

__all__ = ['decode', 'decode_buffer']


def decode(stream, flag, to_rgb, source):
    """Decode a file object to an (H, W, 3) or (H, W, 1) uint8 array."""
    image_module = require('PIL.Image', 'vision', 'mx.image decoding')
    try:
        img = image_module.open(stream)
        if flag == 0 and img.format == 'JPEG':
            img.draft('L', img.size)  # decode luma directly, as libjpeg does for OpenCV
        img.load()
    except (OSError, ValueError) as err:
        raise MXNetError('Decoding failed. Invalid image file %s: %s' % (source, err)) from None
    if flag == 0:
        if img.mode != 'L':
            # OpenCV's (libpng's) conversion truncates the weighted sum.
            rgb = np.asarray(img.convert('RGB'), dtype=np.float64)
            return np.floor(rgb @ [0.299, 0.587, 0.114]).astype(np.uint8)[:, :, None]
        return np.asarray(img, dtype=np.uint8)[:, :, None]
    pixels = np.asarray(img.convert('RGB'), dtype=np.uint8)
    return pixels if to_rgb else pixels[:, :, ::-1]


def decode_buffer(buf, flag, to_rgb):
    """:func:`decode` for an image held in memory: bytes, bytearray, or a numpy array (or
    anything with ``asnumpy``, an NDArray) read as a uint8 buffer."""
    if hasattr(buf, 'asnumpy'):
        buf = buf.asnumpy()
    if not isinstance(buf, (bytes, bytearray, np.ndarray)):
        raise ValueError('buf must be of type bytes, bytearray or numpy.ndarray,'
                         'if you would like to input type str, please convert to bytes')
    data = buf.astype(np.uint8).tobytes() if isinstance(buf, np.ndarray) else bytes(buf)
    return decode(io.BytesIO(data), flag, to_rgb, 'buffer')
