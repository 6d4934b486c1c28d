"""Image resizing with OpenCV's interpolation codes: by OpenCV itself when the ``vision``
extra's ``opencv-python-headless`` is installed (MXNet's own arithmetic, bit for bit, and it
releases the GIL), otherwise computed in torch.

MXNet resizes with OpenCV. Nearest, bilinear and bicubic (codes 0-2) are exactly torch's
``interpolate`` modes (half-pixel centres, no antialiasing, cubic coefficient -0.75). Area (3)
and Lanczos (4) have no torch twin, so they are written as separable per-axis weight matrices
that follow OpenCV's definitions: ``out = Wy @ image @ Wx.T`` per channel.
"""

import numpy as np
import torch
import torch.nn.functional as F

from ._image_decode import opencv
from ._sample_streams import pyrandom

NEAREST, LINEAR, CUBIC, AREA, LANCZOS4 = range(5)

_TORCH_MODES = {NEAREST: ('nearest', {}), LINEAR: ('bilinear', {'align_corners': False}),
                CUBIC: ('bicubic', {'align_corners': False})}


def _clamped_taps(weights, n_in, first_tap, taps):
    """Scatter ``taps`` (n_out x k) weights starting at ``first_tap`` into an (n_out, n_in) matrix.

    Out-of-range taps are clamped to the border pixel, which is OpenCV's replicated border.
    """
    n_out, k = taps.shape
    cols = np.clip(first_tap[:, None] + np.arange(k), 0, n_in - 1)
    np.add.at(weights, (np.repeat(np.arange(n_out), k), cols.ravel()), taps.ravel())
    return weights


def _area_shrink_weights(n_in, n_out):
    """Each output pixel averages the source interval it covers, with fractional edges."""
    scale = n_in / n_out
    starts = np.arange(n_out)[:, None] * scale
    pixel = np.arange(n_in)[None, :]
    overlap = np.minimum(pixel + 1, starts + scale) - np.maximum(pixel, starts)
    return np.clip(overlap, 0, None) / scale


def _area_linear_weights(n_in, n_out):
    """OpenCV's INTER_AREA when an axis does not only shrink: two taps with 'area' fractions."""
    scale = n_in / n_out
    dst = np.arange(n_out)
    first = np.floor(dst * scale).astype(np.int64)
    frac = (dst + 1) - (first + 1) / scale
    frac = np.where(frac <= 0, 0.0, frac - np.floor(frac))
    taps = np.stack([1 - frac, frac], axis=1)
    return _clamped_taps(np.zeros((n_out, n_in)), n_in, first, taps)


def _lanczos4_weights(n_in, n_out):
    """Eight taps of sinc(t) * sinc(t / 4) around each half-pixel-centred source position."""
    pos = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    first = np.floor(pos).astype(np.int64)
    dist = (pos - first)[:, None] + 3 - np.arange(8)
    taps = np.sinc(dist) * np.sinc(dist / 4)
    taps /= taps.sum(axis=1, keepdims=True)
    return _clamped_taps(np.zeros((n_out, n_in)), n_in, first - 3, taps)


def _axis_weights(interp, shrinks_both):
    if interp == LANCZOS4:
        return _lanczos4_weights
    return _area_shrink_weights if shrinks_both else _area_linear_weights


# The dtypes OpenCV's resize takes (it has no int32/int64 kernels, and float16 is rare).
_OPENCV_DTYPES = (torch.uint8, torch.float32, torch.float64)


def resize_pixels(pixels, w, h, interp):
    """Resize an (H, W, C) numpy array to (h, w, C) with OpenCV interpolation code ``interp``."""
    cv2 = opencv()
    if cv2 is not None and pixels.dtype in (np.uint8, np.float32, np.float64):
        out = cv2.resize(np.ascontiguousarray(pixels), (w, h), interpolation=interp)
        return out.reshape(h, w, pixels.shape[2])
    return resize_hwc(torch.from_numpy(np.require(pixels, requirements=['C', 'W'])), w, h, interp).numpy()


def resize_hwc(tensor, w, h, interp):
    """Resize an (H, W, C) tensor to (h, w, C) with OpenCV interpolation code ``interp``.

    Integer images are computed in float32 and rounded back with saturation, as OpenCV does.
    """
    if tensor.device.type == 'cpu' and tensor.dtype in _OPENCV_DTYPES and opencv() is not None \
            and not tensor.requires_grad:
        return torch.from_numpy(resize_pixels(tensor.numpy(), w, h, interp))
    src_h, src_w = tensor.shape[:2]
    image = tensor.permute(2, 0, 1).to(torch.float32)
    if interp in _TORCH_MODES:
        mode, options = _TORCH_MODES[interp]
        out = F.interpolate(image[None], size=(h, w), mode=mode, **options)[0]
    else:
        make = _axis_weights(interp, src_h >= h and src_w >= w)
        rows = torch.as_tensor(make(src_h, h), dtype=torch.float32, device=tensor.device)
        cols = torch.as_tensor(make(src_w, w), dtype=torch.float32, device=tensor.device)
        out = rows @ image @ cols.T
    out = out.permute(1, 2, 0)
    if not tensor.dtype.is_floating_point:
        info = torch.iinfo(tensor.dtype)
        out = out.round().clamp(info.min, info.max)
    return out.to(tensor.dtype)


def pick_interp(interp, sizes=()):
    """Resolve MXNet's meta codes: 9 picks by direction (cubic up, area down), 10 at random.

    ``sizes`` is (old_h, old_w, new_h, new_w). Other codes must be OpenCV's 0-4.
    """
    if interp == 9:
        if not sizes:
            return CUBIC
        old_h, old_w, new_h, new_w = sizes
        if new_h > old_h and new_w > old_w:
            return CUBIC
        if new_h < old_h and new_w < old_w:
            return AREA
        return LINEAR
    if interp == 10:
        return pyrandom.randint(0, 4)
    if interp not in range(5):
        raise ValueError('Unknown interp method %d' % interp)
    return interp

