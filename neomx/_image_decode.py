"""Decoding encoded images (JPEG, PNG...) to numpy arrays, OpenCV's way: below ``mx.nd``,
``mx.recordio`` and ``mx.image``, which all decode.

With the ``vision`` extra's OpenCV (``opencv-python-headless``) the bytes are decoded by
``cv2.imdecode``, the libjpeg-turbo/libpng that MXNet itself calls (same pixels, and it
releases the GIL, so the input pipelines' threads decode in parallel); without it by Pillow,
which releases the GIL while decoding too.
"""
import io

import numpy as np

from ._optional import require
from .base import MXNetError

__all__ = ['buffer_bytes', 'decode', 'decode_buffer', 'decode_bytes', 'opencv']

_OPENCV = []


def opencv():
    """The ``cv2`` module, or None when OpenCV is not installed (imported once, on first use)."""
    if not _OPENCV:
        try:
            import cv2  # pylint: disable=import-outside-toplevel
        except ImportError:
            cv2 = None
        _OPENCV.append(cv2)
    return _OPENCV[0]


def decode_bytes(data, flag, to_rgb, source):
    """Decode encoded bytes to uint8 (H, W, 3) (``flag`` 1), (H, W, 1) (``flag`` 0), or the
    stored channels (``flag`` -1: (H, W, 1) gray, (H, W, 3) or (H, W, 4) with alpha).

    Raises MXNetError naming ``source`` when the bytes are not an image.
    """
    cv2 = opencv()
    if cv2 is not None:
        return _decode_opencv(cv2, data, flag, to_rgb, source)
    return decode(io.BytesIO(data), flag, to_rgb, source)


def _decode_opencv(cv2, data, flag, to_rgb, source):
    mode = cv2.IMREAD_GRAYSCALE if flag == 0 else cv2.IMREAD_COLOR if flag == 1 else cv2.IMREAD_UNCHANGED
    img = cv2.imdecode(np.frombuffer(data, np.uint8), mode) if len(data) else None
    if img is None:
        raise MXNetError('Decoding failed. Invalid image file %s' % (source,))
    if img.ndim == 2:
        return img[:, :, None]
    if to_rgb:
        code = cv2.COLOR_BGRA2RGBA if img.shape[2] == 4 else cv2.COLOR_BGR2RGB
        img = cv2.cvtColor(img, code)
    return img


def decode(stream, flag, to_rgb, source):
    """Decode a file object with Pillow to an (H, W, 3), (H, W, 1) or, for ``flag`` -1, the
    stored channels' uint8 array."""
    image_module = require('PIL.Image', 'vision', 'mx.image decoding')
    try:
        img = image_module.open(stream)
        if flag == 0 and img.format == 'JPEG':
            img.draft('L', img.size)  # decode luma directly, as libjpeg does for OpenCV
        img.load()
    except (OSError, ValueError, SyntaxError) as err:
        raise MXNetError('Decoding failed. Invalid image file %s: %s' % (source, err)) from None
    if flag == 0:
        if img.mode != 'L':
            # OpenCV's (libpng's) conversion truncates the weighted sum.
            rgb = np.asarray(img.convert('RGB'), dtype=np.float64)
            return np.floor(rgb @ [0.299, 0.587, 0.114]).astype(np.uint8)[:, :, None]
        return np.asarray(img, dtype=np.uint8)[:, :, None]
    if flag < 0 and img.mode in ('L', 'RGBA'):
        pixels = np.asarray(img, dtype=np.uint8)
        if pixels.ndim == 2:
            return pixels[:, :, None]
        return pixels if to_rgb else pixels[:, :, [2, 1, 0, 3]]
    pixels = np.asarray(img.convert('RGB'), dtype=np.uint8)
    return pixels if to_rgb else pixels[:, :, ::-1]


def decode_buffer(buf, flag, to_rgb):
    """:func:`decode_bytes` for an image held in memory: bytes, bytearray, or a numpy array (or
    anything with ``asnumpy``, an NDArray) read as a uint8 buffer."""
    return decode_bytes(buffer_bytes(buf), flag, to_rgb, 'buffer')


def buffer_bytes(buf):
    """The bytes of an encoded image held in memory: bytes, bytearray, or a numpy array (or
    anything with ``asnumpy``, an NDArray) read as a uint8 buffer."""
    if hasattr(buf, 'asnumpy'):
        buf = buf.asnumpy()
    if not isinstance(buf, (bytes, bytearray, np.ndarray)):
        raise ValueError('buf must be of type bytes, bytearray or numpy.ndarray,'
                         'if you would like to input type str, please convert to bytes')
    return buf.astype(np.uint8).tobytes() if isinstance(buf, np.ndarray) else bytes(buf)
