"""``mx.io.ImageRecordIter``: batches of decoded, augmented, normalised images from a ``.rec`` file.

Each image goes through MXNet's default augmentation pipeline, in MXNet's order: decode (RGB,
or gray for one channel), shorter-edge ``resize``, MXNet's affine warp (shear ``max_shear_ratio``, rotation
``rotate``/``max_rotate_angle``, scale ``min/max_random_scale``, aspect ratio
``max_aspect_ratio``, size limits ``min/max_img_size``), a ``pad`` border, then either
``random_resized_crop`` or: growing an image smaller than ``data_shape`` (rows, then
columns), a square ``min/max_crop_size`` crop, and the centre (or random) crop; the mirror;
HLS shifts (``random_h/s/l``), ``brightness``, ``contrast``, ``saturation``, ``pca_noise``;
then ``((pixel - mean) * contrast + illumination) / std * scale`` per channel into NCHW
float32, contrast and illumination drawn from ``max_random_contrast`` and
``max_random_illumination`` (or the pixels, for uint8/int8 outputs). The deterministic settings give MXNet's pixels (tests/data holds batches
MXNet made). Batching follows MXNet too: with ``round_batch`` the last batch of an epoch is
completed with the first records of the next pass and ``pad`` counts them, and the epoch
after that resumes behind them. Not implemented (raising MXNetError when set):
a fourth channel (``mean_a``, ``std_a``).

Records are decoded and augmented by ``preprocess_threads`` worker threads, and
``prefetch_buffer`` batches are prepared ahead of the caller (see ``neomx._batch_workers``):
the batches are the same whatever the number of threads, because every record draws its
random choices from its own stream, seeded by (``seed_aug``, pass, record number).

Differences from MXNet: with the ``vision`` extra (OpenCV) decoding and resizing are
OpenCV's, as in MXNet, and the pixels are identical; without it images are decoded with
Pillow and resized in torch (JPEG and resized pixels may differ by a few levels). The
shuffled order and random augmentations are reproducible from ``seed``/``seed_aug`` but are
not MXNet's streams (MXNet's depend on its number of threads; neomx's do not). With
``round_batch=False`` the last batch is zero-filled and ``pad`` counts the filler (MXNet
leaves stale samples there and reports 0). ``DataBatch.index`` is all zeros, as in MXNet.

With a Context as ``ctx`` (neomx's extension; MXNet takes only its 'cpu'/'gpu' hint) each
batch is decoded (nvJPEG through torchvision on a GPU) and augmented with torch operations on
that device: see ``ImageRecordIter``'s docstring.
"""
import contextlib
import os
import random
import weakref

import numpy as np
import torch

from .. import _fileio, _recordio_parts, recordio
from .._batch_workers import BatchPipeline
from .._device_images import DeviceImageDecoder, hand_over, image_device, worker_stream
from .._image_decode import opencv
from .._recordio_format import read_record_at
from .._image_resize import pick_interp, resize_hwc, resize_pixels
from .._optional import MissingDependencyError
from ..base import MXNetError, check_batch_size
from ..context import cpu, cpu_pinned
from ..ndarray.ndarray import wrap_tensor
from ._iters import DataDesc, DataIter

__all__ = ['ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter', 'ImageRecordIter_v1',
           'ImageRecordUInt8Iter_v1']

# Accepted for compatibility; they tune MXNet's C++ buffers and logging.
_IGNORED = {'verbose', 'shuffle_chunk_size', 'shuffle_chunk_seed', 'aug_seq'}
# MXNet augmentations neomx does not implement, with the values that switch them off.
_UNSUPPORTED = {'mean_a': 0, 'std_a': 1}
# MXNet's inter_method: OpenCV's codes 0-4, 9 (by direction), 10 (random per image).
_INTERPOLATION = (0, 1, 2, 3, 4, 9, 10)
# Pillow decode flag by number of output channels.
_DECODE_FLAG = {1: 0, 3: 1}
_OUTPUT_DTYPES = {None: np.float32, 'float32': np.float32, 'float16': np.float16,
                  'float64': np.float64, 'int32': np.int32, 'int64': np.int64,
                  'uint8': np.uint8, 'int8': np.int8}
# Outputs computed in float32 and cast per batch.
_TORCH_DTYPES = {np.float16: torch.float16, np.float64: torch.float64, np.int32: torch.int32,
                 np.int64: torch.int64}


def check_options(options, unsupported, owner):
    """Reject unknown arguments and augmentations that are set but not implemented
    (``unsupported`` maps their names to the defaults that switch them off)."""
    for name, value in options.items():
        if name in _IGNORED:
            continue
        if name not in unsupported:
            raise MXNetError('%s: Cannot find argument \'%s\'' % (owner, name))
        if value != unsupported[name]:
            raise MXNetError('%s: argument %s=%r is not supported by neomx '
                             '(only its default %r)' % (owner, name, value, unsupported[name]))


def _record_offsets(path_imgrec, path_imgidx, num_parts, part_index):
    """Byte offsets of the records of part ``part_index`` of ``num_parts``, split as MXNet splits.

    With an index the records are split by count, ``ceil(records / num_parts)`` a part.
    Without one, the part holds the records that begin in its byte range of the file (see
    ``neomx._recordio_parts``), and only that range is read.
    """
    _recordio_parts.part_range(0, num_parts, part_index)       # checks part_index
    if path_imgidx:
        offsets = [offset for _, offset in recordio.read_index(path_imgidx)]
        step = -(-len(offsets) // num_parts)
        part = offsets[part_index * step:(part_index + 1) * step]
    else:
        with _fileio.open_for_read(path_imgrec) as stream:
            size = _recordio_parts.stream_size(stream, path_imgrec)
            part = [offset for offset, _ in _recordio_parts.part_offsets(stream, size, num_parts, part_index)]
    if not part:
        raise MXNetError('ImageRecordIter: part %d of %d of %s holds no record'
                         % (part_index, num_parts, path_imgrec))
    return part


def _read_list_labels(path):
    """{image index: float32 labels} of an .lst file (index, labels..., path; tab separated)."""
    labels = {}
    with open(path) as lines:
        for line in lines:
            fields = line.strip().split('\t')
            if len(fields) >= 3:
                labels[int(float(fields[0]))] = np.array(fields[1:-1], np.float32)
    return labels


def _grow_rows(height, width, min_height):
    """(height, width) scaled up, aspect kept, to ``min_height`` rows (integer division as MXNet)."""
    return min_height, width * min_height // height


# MXNet's gray level for contrast and saturation: ITU-R 601 weights applied to the channels
# in OpenCV's BGR order, as MXNet does (so red weighs 0.114 and blue 0.299).
_JITTER_GRAY = np.array([0.114, 0.587, 0.299], np.float32)
# AlexNet's PCA of ImageNet's RGB pixels, for pca_noise.
_EIGVAL = np.array([55.46, 4.794, 1.148], np.float32)
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]], np.float32)


def _hls_jitter(pixels, shifts):
    """Shift hue, lightness and saturation (OpenCV's 8-bit HLS: hue 0-180) by ``shifts``,
    clipped, as MXNet's random_h/random_l/random_s."""
    cv2 = opencv()
    if pixels.shape[2] != 3:
        raise MXNetError('ImageRecordIter: random_h/s/l need 3 channels')
    hls = cv2.cvtColor(np.ascontiguousarray(pixels), cv2.COLOR_RGB2HLS).astype(np.int16)
    hls += np.array(shifts, np.int16)
    np.clip(hls, 0, np.array([180, 255, 255], np.int16), out=hls)
    return cv2.cvtColor(hls.astype(np.uint8), cv2.COLOR_HLS2RGB)


_FLT_EPSILON = float(np.finfo(np.float32).eps)
# OpenCV's HLS -> RGB: the (blue, green, red) entries of [p2, p1, rising, falling] by hue sector.
_HLS_SECTORS = torch.tensor([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _tensor_hls_jitter(pixels, shifts):
    """:func:`_hls_jitter` of an (H, W, 3) uint8 tensor in torch, with OpenCV's 8-bit
    RGB <-> HLS conversions written out in float32 in OpenCV's order of operations (a pixel
    in a few thousand may round a hue differently)."""
    if pixels.shape[2] != 3:
        raise MXNetError('ImageRecordIter: random_h/s/l need 3 channels')
    device = pixels.device
    red, green, blue = pixels.permute(2, 0, 1).to(torch.float32) * np.float32(1 / 255)
    vmax = torch.maximum(torch.maximum(red, green), blue)
    vmin = torch.minimum(torch.minimum(red, green), blue)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    chromatic = diff > _FLT_EPSILON
    sat = torch.where(light < 0.5, diff / (vmax + vmin), diff / (2 - vmax - vmin))
    step = 60 / diff
    hue = torch.where(vmax == red, (green - blue) * step,
                      torch.where(vmax == green, (blue - red) * step + 120, (red - green) * step + 240))
    hue = torch.where(hue < 0, hue + 360, hue)
    hls = torch.stack([torch.where(chromatic, hue, 0) * 0.5, light * 255,
                       torch.where(chromatic, sat, 0) * 255]).round_().clamp_(0, 255)
    # The shifts, clipped to OpenCV's 8-bit ranges (hue 0-180), then back to RGB.
    shifted = (hls + torch.tensor(shifts, dtype=torch.float32, device=device)[:, None, None]).clamp_(min=0)
    hue, light, sat = torch.minimum(shifted, torch.tensor([180., 255., 255.], device=device)[:, None, None])
    light, sat = light * np.float32(1 / 255), sat * np.float32(1 / 255)
    high = torch.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    low = 2 * light - high
    hue = hue * np.float32(6 / 180)
    hue = torch.where(hue >= 6, hue - 6, hue)
    sector = hue.floor()
    frac = hue - sector
    table = torch.stack([high, low, low + (high - low) * (1 - frac), low + (high - low) * frac])
    picks = _HLS_SECTORS.to(device)[sector.long()]
    blue, green, red = (table.gather(0, picks[..., k][None])[0] for k in range(3))
    gray = sat == 0
    rgb = torch.stack([torch.where(gray, light, red), torch.where(gray, light, green),
                       torch.where(gray, light, blue)])
    return (rgb * 255).round_().clamp_(0, 255).to(torch.uint8).permute(1, 2, 0)


def _saturate(values):
    """float pixels back to uint8 as OpenCV's saturate_cast (round half to even, clip)."""
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def _jitter_draws(jitters, pca_noise, rng):
    """The random factors of MXNet's colour augmentations of one image, drawn from ``rng``
    in MXNet's order: the brightness, contrast and saturation factors ``1 + U(-x, x)`` (None
    for those switched off) and pca_noise's RGB offset (AlexNet's lighting noise, alpha ~
    N(0, pca_noise); None when off)."""
    factors = [np.float32(1 + rng.uniform(-spread, spread)) if spread > 0 else None
               for spread in jitters]
    offset = None
    if pca_noise > 0:
        alpha = np.array([rng.gauss(0, pca_noise) for _ in range(3)], np.float32)
        offset = _EIGVEC @ (alpha * _EIGVAL)
    return factors + [offset]


def _color_jitter(pixels, draws):
    """MXNet's colour augmentations of (H, W, 3) uint8 pixels, with the factors of
    :func:`_jitter_draws`, each rounded back to uint8: brightness scales the pixels,
    contrast blends them with the mean gray level, saturation with each pixel's gray
    level; pca_noise adds its offset."""
    brightness, contrast, saturation, offset = draws
    if pixels.shape[2] != 3:
        raise MXNetError('ImageRecordIter: brightness, contrast, saturation and pca_noise need '
                         '3 channels')
    if brightness is not None:
        pixels = _saturate(pixels * brightness)
    if contrast is not None:
        mean_gray = float((pixels.astype(np.float32) @ _JITTER_GRAY).mean())
        pixels = _saturate(pixels * contrast + (1 - contrast) * mean_gray)
    if saturation is not None:
        gray = (pixels.astype(np.float32) @ _JITTER_GRAY)[:, :, None]
        pixels = _saturate(pixels * saturation + (1 - saturation) * gray)
    if offset is not None:
        pixels = _saturate(pixels + offset)
    return pixels


def _tensor_color_jitter(pixels, draws):
    """:func:`_color_jitter` of an (H, W, 3) uint8 tensor, in torch on its device (computed on
    a (C, H, W) view: the images of the device path are planar in memory)."""
    brightness, contrast, saturation, offset = draws
    if pixels.shape[2] != 3:
        raise MXNetError('ImageRecordIter: brightness, contrast, saturation and pca_noise need '
                         '3 channels')
    gray_weights = torch.from_numpy(_JITTER_GRAY).to(pixels.device)
    values = pixels.permute(2, 0, 1).to(torch.float32)

    def gray_levels():
        return values.permute(1, 2, 0) @ gray_weights

    if brightness is not None:
        values = (values * float(brightness)).round_().clamp_(0, 255)
    if contrast is not None:
        mean_gray = gray_levels().mean()
        values = (values * float(contrast) + float(1 - contrast) * mean_gray).round_().clamp_(0, 255)
    if saturation is not None:
        values = (values * float(saturation) + float(1 - saturation) * gray_levels()).round_().clamp_(0, 255)
    if offset is not None:
        values = (values + torch.from_numpy(offset).to(pixels.device)[:, None, None]).round_().clamp_(0, 255)
    return values.to(torch.uint8).permute(1, 2, 0)


def _opencv_warp(pixels, matrix, size, interp, fill):
    """OpenCV's ``warpAffine`` of (H, W, C) uint8 pixels into ``size`` (w, h), the corners
    filled with ``fill``."""
    cv2 = opencv()
    out = cv2.warpAffine(np.ascontiguousarray(pixels), matrix, size, flags=interp,
                         borderMode=cv2.BORDER_CONSTANT, borderValue=(fill,) * 4)
    return out.reshape(size[1], size[0], pixels.shape[2])


# warpAffine's interpolations that torch's grid_sample has (area is bilinear in warpAffine).
_GRID_MODES = {0: 'nearest', 1: 'bilinear', 2: 'bicubic', 3: 'bilinear'}


def _tensor_warp(pixels, matrix, size, interp, fill):
    """:func:`_opencv_warp` of an (H, W, C) uint8 tensor with torch's ``grid_sample``: each
    output pixel samples the input at the inverse of ``matrix`` (pixel centres at whole
    coordinates, as OpenCV; no fixed-point rounding of the coordinates), outside the image
    ``fill``. Lanczos (``interp`` 4) is OpenCV's only."""
    rows, cols = pixels.shape[:2]
    width, height = size
    linear = np.asarray(matrix, np.float64)[:, :2]
    inverse = np.linalg.inv(linear)
    shift = np.asarray(matrix, np.float64)[:, 2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    src = np.einsum('ij,jhw->ihw', inverse, np.stack([xs - shift[0], ys - shift[1]]))
    # align_corners=True: -1 and 1 are the centres of the first and last pixels.
    grid = np.stack([src[0] * (2 / max(cols - 1, 1)) - 1, src[1] * (2 / max(rows - 1, 1)) - 1], -1)
    grid = torch.from_numpy(grid.astype(np.float32))[None].to(pixels.device)
    # Outside samples are zeros: shifted by fill, they are fill.
    image = pixels.permute(2, 0, 1).to(torch.float32)[None] - fill
    out = torch.nn.functional.grid_sample(image, grid, mode=_GRID_MODES[interp], padding_mode='zeros',
                                          align_corners=True)[0] + fill
    return out.round_().clamp_(0, 255).to(torch.uint8).permute(1, 2, 0)


def _per_image(factors, device):
    """One float32 factor per image of an (N, C, H, W) batch, on ``device``."""
    return torch.tensor(factors, dtype=torch.float32).reshape(-1, 1, 1, 1).to(device)


class _HostPixels:
    """The pixel operations of the augmentation pipeline on (H, W, C) uint8 numpy arrays."""
    resize = staticmethod(resize_pixels)
    color_jitter = staticmethod(_color_jitter)
    warp = staticmethod(_opencv_warp)
    hls_jitter = staticmethod(_hls_jitter)

    @staticmethod
    def pad(pixels, width, value):
        return np.pad(pixels, ((width, width), (width, width), (0, 0)), constant_values=value)

    @staticmethod
    def mirror(pixels):
        return pixels[:, ::-1]


class _TensorPixels:
    """The same operations on (H, W, C) uint8 torch tensors, on their device (the resizes
    follow OpenCV's definitions, see ``neomx._image_resize``). The tensors are (C, H, W)
    planes in memory, viewed as (H, W, C): every operation runs on the planar view, where
    torch's kernels read rows of pixels, and keeps its result planar."""
    resize = staticmethod(resize_hwc)
    color_jitter = staticmethod(_tensor_color_jitter)
    warp = staticmethod(_tensor_warp)
    hls_jitter = staticmethod(_tensor_hls_jitter)

    @staticmethod
    def pad(pixels, width, value):
        return torch.nn.functional.pad(pixels.permute(2, 0, 1), (width,) * 4,
                                       value=value).permute(1, 2, 0)

    @staticmethod
    def mirror(pixels):
        return pixels.permute(2, 0, 1).flip(2).permute(1, 2, 0)


def _shorter_edge_size(height, width, size):
    """(height, width) scaled so that the shorter edge is ``size`` (integer division as MXNet)."""
    if height > width:
        return size * height // width, size
    return size, size * width // height


def _record_seed(seed_aug, pass_number, record):
    """The seed of one record's augmentation stream in one pass over the data."""
    return ((seed_aug & 0xFFFFFFFF) << 64) | ((pass_number & 0xFFFFFFFF) << 32) | record


class ImageRecordIter(DataIter):
    """Iterate over image RecordIO files in batches of (N, C, H, W) images and their labels.

    All arguments are keyword-only, as in MXNet.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file (records made by ``recordio.pack_img`` or im2rec): a path or a URL
        (``s3://``, ``gs://``, ``hdfs://``, ``http(s)://``..., see ``neomx._fileio``).
    data_shape : tuple of int
        (channels, height, width) of one output image; channels 1 (gray) or 3 (RGB).
    batch_size : int
    path_imgidx : str
        Optional ``.idx`` file; the records are otherwise found by scanning the file.
    label_width : int
        Labels per image; must equal the number of labels of each record.
    shuffle : bool
        Reshuffle the records every pass, from ``seed``.
    seed : int
        Seed of the shuffle (and of augmentations when ``seed_aug`` is None).
    round_batch : bool
        Complete the last batch with the first records (see the module docstring).
    resize : int
        Resize the shorter edge to this before cropping (-1: no resize).
    rand_crop, rand_mirror, mirror : bool
        Random instead of centre crop; mirror half of the images; mirror all of them.
    mean_r, mean_g, mean_b, std_r, std_g, std_b, scale : float
        Output ``(pixel - mean) / std * scale`` per channel (float outputs only).
    inter_method : int
        OpenCV's interpolation: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos; 9 by
        direction (bicubic up, area down); 10 random per image.
    dtype : None or str
        Output dtype: float32 (None), float16, float64, int32, int64; uint8 and int8 output
        the cropped pixels without normalisation (int8 saturated at 127).
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` contiguous parts of the records, split
        as MXNet splits them: by record count with ``path_imgidx``, by bytes of the file
        without, reading only the part's byte range (for distributed training:
        ``num_parts=kv.num_workers, part_index=kv.rank``).
    seed_aug : int, optional
    data_name, label_name : str
    device_id : int
        Output context: ``cpu_pinned(device_id)``, or ``cpu(0)`` for -1.
    pad, fill_value : int
        Border of ``pad`` pixels of value ``fill_value`` added after ``resize``, before the
        crop (CIFAR-style training: ``pad=4, rand_crop=True``).
    random_resized_crop : bool
        Crop a window of random area (``[min_random_area, max_random_area]`` of the image)
        and aspect ratio (``[min_aspect_ratio, max_aspect_ratio]``, or ``1 -/+
        max_aspect_ratio`` without a minimum), resized to ``data_shape`` (ResNet's ImageNet
        preprocessing); ten tries, then the centred window.
    max_shear_ratio, min_random_scale, max_random_scale, max_aspect_ratio, min_img_size,
    max_img_size : float
        MXNet's affine warp (needs OpenCV): shear ``(x, y) -> (x + m y, y)`` with ``m`` in
        ``[-max_shear_ratio, max_shear_ratio]``, scale in ``[min_random_scale,
        max_random_scale]``, aspect ratio in ``1 -/+ max_aspect_ratio`` (the last two belong to
        ``random_resized_crop`` when it is set), size limited to ``[min_img_size,
        max_img_size]``.
    min_crop_size, max_crop_size : int
        Crop a square of random side in this range (random with ``rand_crop``, else centred),
        resized to ``data_shape`` (ignored with ``random_resized_crop``).
    rotate, max_rotate_angle : int
        Rotate by ``rotate`` degrees, or by a random whole number of degrees in
        ``[-max_rotate_angle, max_rotate_angle]``, about the centre, in the affine warp.
    random_h, random_s, random_l : int
        Shift hue, saturation and lightness (OpenCV's 8-bit HLS) by random whole amounts in
        ``[-v, v]`` (needs OpenCV).
    mean_img : str
        A mean image file (``nd.save`` of one (C, H, W) array) subtracted instead of
        ``mean_r/g/b``; computed over the data and saved there when it does not exist.
    path_imglist : str
        An .lst file (``index \\t labels... \\t path``) whose labels replace the records',
        matched by the records' image index (``IRHeader.id``).
    max_random_contrast, max_random_illumination : float
        Per image, the normalised pixels are ``(pixel - mean) * c + i`` (before ``/ std *
        scale``) with ``c`` in ``1 -/+ max_random_contrast`` and ``i`` in ``-/+
        max_random_illumination`` (float outputs).
    brightness, contrast, saturation, pca_noise : float
        Random colour augmentation of the crop, as MXNet's (see ``_color_jitter``).
    preprocess_threads : int, default 4
        Threads that decode and augment (0: on the caller's thread, when a batch is asked
        for). The batches do not depend on it.
    prefetch_buffer : int, default 4
        Batches prepared ahead of the caller.
    ctx : {'cpu', 'gpu'} or Context, default 'gpu'
        MXNet's strings are a hint, ignored. A Context is neomx's extension: decode and
        augment on its device (see below), the batches (data and labels) delivered there
        (``device_id`` is then unused).
    **options
        ``verbose``, ``aug_seq``, ``shuffle_chunk_*`` are ignored; MXNet's other
        augmentations raise MXNetError unless left at their defaults.

    Decoding and augmenting on a GPU (``ctx=mx.gpu(i)``, needs torchvision: the ``vision``
    extra): the ``preprocess_threads`` read the records and each prepares a whole batch, on its
    own CUDA stream: its JPEGs are decoded by nvJPEG in one call of
    ``torchvision.io.decode_jpeg`` (other formats, and JPEGs nvJPEG refuses, by the CPU
    decoder), then resized, warped, padded, cropped, mirrored, colour-shifted and normalised
    by torch on the GPU, with the random choices of the CPU path (each record's own stream):
    records, labels, ``pad`` and ``round_batch`` are those of the CPU iterator, and pixels
    differ as nvJPEG's IDCT and chroma upsampling differ from libjpeg-turbo's (a few levels),
    and by rounding where torch does OpenCV's work: resizes, the affine warp (``grid_sample``,
    within a level of ``warpAffine``), the HLS shifts (OpenCV's 8-bit conversions written out).
    A Lanczos warp (``inter_method`` 4 or 10 with ``rotate``, ``max_rotate_angle``,
    ``max_shear_ratio``, ``min/max_random_scale``, ``max_aspect_ratio`` or
    ``min/max_img_size``) is done on the CPU only: asking for it with a device context raises
    MXNetError. ``ctx=mx.cpu()`` runs the same tensor path on the CPU (torchvision's
    libjpeg-turbo decoder).
    nvJPEG does not apply a JPEG's EXIF orientation (OpenCV does).

    Shape
    -----
    data: (batch_size, C, H, W); label: (batch_size,) or (batch_size, label_width).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'a.rec')
    >>> writer = mx.recordio.MXRecordIO(path, 'w')
    >>> for i in range(3):
    ...     writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, i, i, 0),
    ...                                       np.full((12, 12, 3), 50 * i, np.uint8), img_fmt='.png'))
    >>> writer.close()
    >>> it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=2,
    ...                            preprocess_threads=2)
    >>> [(b.label[0].asnumpy().tolist(), b.pad) for b in it]
    [([0.0, 1.0], 0), ([2.0, 0.0], 1)]
    >>> it.close()
    """

    def __init__(self, *, path_imgrec, data_shape, batch_size, path_imgidx='', label_width=1,
                 shuffle=False, seed=0, round_batch=True, resize=-1, rand_crop=False,
                 rand_mirror=False, mirror=False, mean_r=0., mean_g=0., mean_b=0., std_r=1.,
                 std_g=1., std_b=1., scale=1., inter_method=1, dtype=None, num_parts=1,
                 part_index=0, seed_aug=None, data_name='data', label_name='softmax_label',
                 device_id=0, preprocess_threads=4, prefetch_buffer=4, pad=0, fill_value=255,
                 brightness=0., contrast=0., saturation=0., pca_noise=0.,
                 random_resized_crop=False, min_random_area=1., max_random_area=1.,
                 min_aspect_ratio=None, max_aspect_ratio=0., min_random_scale=1.,
                 max_random_scale=1., min_crop_size=-1, max_crop_size=-1, rotate=-1,
                 max_rotate_angle=0, random_h=0, random_s=0, random_l=0, max_shear_ratio=0.,
                 min_img_size=0., max_img_size=1e10, max_random_contrast=0.,
                 max_random_illumination=0., path_imglist='', mean_img='', ctx='gpu', **options):
        super().__init__(batch_size)
        check_batch_size(batch_size, 'ImageRecordIter')
        check_options(options, _UNSUPPORTED, type(self).__name__)
        self._check_arguments(data_shape, inter_method, dtype)
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        self.round_batch = round_batch
        self.resize = resize
        self.rand_crop = rand_crop
        self.rand_mirror = rand_mirror
        self.mirror = mirror
        self.pad = pad
        self.fill_value = fill_value
        self._jitters = (brightness, contrast, saturation)
        self._pca_noise = pca_noise
        self.random_resized_crop = random_resized_crop
        self._area_range = (min_random_area, max_random_area)
        self._ratio_range = (1 - max_aspect_ratio, 1 + max_aspect_ratio) \
            if min_aspect_ratio is None else (min_aspect_ratio, max_aspect_ratio)
        self._crop_size_range = (min_crop_size, max_crop_size)
        # MXNet's affine warp; scale and aspect ratio belong to random_resized_crop when set.
        self._affine = dict(shear=max_shear_ratio, rotate=rotate, max_angle=max_rotate_angle,
                            scale=(1., 1.) if random_resized_crop else (min_random_scale, max_random_scale),
                            aspect=0. if random_resized_crop else max_aspect_ratio,
                            size=(min_img_size, max_img_size))
        self._warps = (max_rotate_angle > 0 or max_shear_ratio > 0 or rotate > 0
                       or self._affine['scale'] != (1., 1.) or self._affine['aspect'] != 0
                       or max_img_size != 1e10 or min_img_size != 0)
        self._hls_jitter = (random_h, random_l, random_s)
        self._lighting = (max_random_contrast, max_random_illumination)
        self._list_labels = _read_list_labels(path_imglist) if path_imglist else None
        self._inter_method = inter_method
        self._dtype = _OUTPUT_DTYPES[dtype]
        channels = self.data_shape[0]
        self._mean = np.array([mean_r, mean_g, mean_b][:channels], np.float32).reshape(-1, 1, 1)
        # MXNet multiplies by the reciprocal: the same float32 rounding as its outputs.
        self._inv_std = 1 / np.array([std_r, std_g, std_b][:channels], np.float32).reshape(-1, 1, 1)
        self._scale = np.float32(scale)
        self._device = image_device(ctx, type(self).__name__)
        if self._device is None:
            self._ctx = cpu(0) if device_id == -1 else cpu_pinned(device_id)
        else:
            self._check_device_settings(ctx)
            self._ctx = ctx
        if (self._warps or any(self._hls_jitter)) and self._device is None and opencv() is None:
            raise MissingDependencyError('ImageRecordIter: rotation, shear, scale, aspect ratio, '
                                         'image size limits and random_h/s/l need OpenCV '
                                         '(opencv-python-headless): pip install "neomx[vision]"')
        self._path_imgrec = path_imgrec
        try:
            self._record = _fileio.open_for_read(path_imgrec)
        except MXNetError as err:
            raise MXNetError('ImageRecordIter: cannot open path_imgrec "%s" (%s)' % (path_imgrec, err)) from None
        try:
            self._offsets = _record_offsets(path_imgrec, path_imgidx, num_parts, part_index)
        except BaseException:
            self._record.close()
            raise
        # Records are numbered within this part (the file's numbers when num_parts is 1).
        self._record_number = {offset: i for i, offset in enumerate(self._offsets)}
        self._shuffle_rng = np.random.RandomState(seed)
        self._seed_aug = seed if seed_aug is None else seed_aug
        label_shape = (batch_size,) if label_width == 1 else (batch_size, label_width)
        self.provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape, self._dtype)]
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._batch = None
        self._passes = 0
        self._drawn_pass = None     # a pass drawn to complete a last batch not yet read
        self._resume = None         # (order, pass, cursor) after a completed last batch
        self._ended = False
        # Colour images are decoded in OpenCV's BGR order and their channels reversed by the
        # write into the batch (a view), which saves a colour conversion of the whole decoded
        # image, unless an augmentation looks at the colours.
        self._bgr_pixels = channels == 3 and opencv() is not None and not self._needs_rgb() \
            and self._device is None
        if self._device is None:
            self._pipeline = BatchPipeline(self._prepare, self._allocate, preprocess_threads,
                                           prefetch_buffer, name='ImageRecordIter')
        else:
            # A worker prepares a whole batch: one call of the device's decoder for all its
            # JPEGs, then the augmentations as tensor operations on the device.
            self._decoder = DeviceImageDecoder(self._device, channels)
            self._pipeline = BatchPipeline(self._prepare_on_device, self._allocate_on_device,
                                           preprocess_threads, prefetch_buffer,
                                           name='ImageRecordIter')
        if mean_img:
            self._mean = self._mean_image(mean_img)
        if self._device is not None:
            self._normalisation = tuple(torch.from_numpy(np.asarray(v, np.float32)).to(self._device)
                                        for v in (self._mean, self._inv_std))
        self._start(*self._draw_pass(), 0)

    def _mean_image(self, path):
        """The (C, H, W) float32 mean image saved at ``path`` (``nd.save``, as MXNet writes
        it), or, when there is none, the mean of this iterator's images (one pass, each with
        the stream of seed 0) saved there first, as MXNet does."""
        from ..ndarray import utils as nd_utils  # pylint: disable=import-outside-toplevel
        if os.path.exists(path):
            saved = nd_utils.load(path)
            mean = next(iter(saved.values())) if isinstance(saved, dict) else saved[0]
            return mean.asnumpy().astype(np.float32).reshape(self.data_shape)
        total = np.zeros(self.data_shape, np.float64)
        for offset in self._offsets:
            header, encoded = recordio.unpack(self._read_at(offset))
            pixels = self._mean_pixels(header, encoded, self._record_number[offset], random.Random(0))
            total += self._chw(pixels)
        mean = (total / len(self._offsets)).astype(np.float32)
        nd_utils.save(path, {'mean_img': wrap_tensor(torch.from_numpy(mean), cpu(0))})
        return mean

    def _mean_pixels(self, header, encoded, record, rng):
        """The (H, W, C) pixels of one record that the mean image averages."""
        del header
        return self._process(encoded, record, rng)

    def _check_device_settings(self, ctx):
        """Raise MXNetError for the settings that the device path does not do."""
        owner = type(self).__name__
        if type(self)._transform is not ImageRecordIter._transform:
            raise MXNetError('%s: ctx=%s (decoding and augmenting on the device) is only for '
                             'ImageRecordIter\'s own augmentations; leave ctx out' % (owner, ctx))
        if self._warps and self._inter_method in (4, 10):
            raise MXNetError('%s: inter_method %d (Lanczos) with the affine warp (rotate, '
                             'max_rotate_angle, max_shear_ratio, min/max_random_scale, '
                             'max_aspect_ratio, min/max_img_size) is done on the CPU only, not '
                             'with ctx=%s: choose inter_method 0-3 or 9, or leave ctx out'
                             % (owner, self._inter_method, ctx))

    @staticmethod
    def _check_arguments(data_shape, inter_method, dtype):
        if len(data_shape) != 3 or data_shape[0] not in _DECODE_FLAG:
            raise MXNetError('ImageRecordIter: data_shape must be (channels, height, width) with '
                             '1 or 3 channels, got %s' % (data_shape,))
        if inter_method not in _INTERPOLATION:
            raise MXNetError('ImageRecordIter: inter_method=%r is not one of MXNet\'s codes '
                             '0-4, 9, 10' % (inter_method,))
        if dtype not in _OUTPUT_DTYPES:
            raise MXNetError('ImageRecordIter: dtype=%r is not supported by neomx (one of %s)'
                             % (dtype, sorted(str(k) for k in _OUTPUT_DTYPES)))

    def close(self):
        """End the worker threads and close the file (the iterator cannot be used after)."""
        pipeline = getattr(self, '_pipeline', None)
        if pipeline is not None:
            pipeline.close()
        record = getattr(self, '_record', None)
        if record is not None:
            record.close()

    def __del__(self):
        self.close()

    def _draw_pass(self):
        """(order of the offsets, pass number) of a new pass (reshuffled when ``shuffle``)."""
        order = list(self._offsets)
        if self.shuffle:
            self._shuffle_rng.shuffle(order)
        self._passes += 1
        return order, self._passes

    def _start(self, order, pass_number, cursor):
        self._ended = False
        # The generator holds a proxy: the pipeline it is handed must not keep us alive.
        batches = type(self)._batches(weakref.proxy(self), order, pass_number, cursor)
        if self._device is not None:
            batches = (([samples], extra) for samples, extra in batches)
        self._pipeline.start(batches)

    def _batches(self, order, pass_number, cursor):
        """(samples, (pad, resume state)) of the batches of a pass, from ``cursor``.

        Runs on the caller's thread, ahead of it: records are read here, in order.
        """
        while cursor < len(order):
            taken = order[cursor:cursor + self.batch_size]
            cursor += len(taken)
            samples = [self._sample(offset, pass_number) for offset in taken]
            pad = self.batch_size - len(taken)
            resume = None
            if pad and self.round_batch:
                # MXNet completes the batch with the next pass's first records.
                next_order, next_pass = self._drawn_pass = self._draw_pass()
                samples += [self._sample(offset, next_pass) for offset in next_order[:pad]]
                if len(samples) < self.batch_size:
                    raise MXNetError('ImageRecordIter: batch_size %d is more than twice the %d records'
                                     % (self.batch_size, len(self._offsets)))
                resume = (next_order, next_pass, pad)
            yield samples, (pad, resume)

    def _sample(self, offset, pass_number):
        record = self._record_number[offset]
        # The record's random stream is seeded here, on the caller's thread, which mostly
        # waits for the workers: seeding a Mersenne Twister costs a few percent of an image.
        return (self._read_at(offset), record, offset,
                random.Random(_record_seed(self._seed_aug, pass_number, record)))

    def reset(self):
        if self.round_batch and self._resume is not None:
            # After a wrapped batch MXNet goes on behind the records it borrowed.
            state, self._resume = self._resume, None
        elif self._drawn_pass is not None:
            state = self._drawn_pass + (0,)     # drawn ahead already: the same as drawing now
        else:
            state = self._draw_pass() + (0,)
        self._drawn_pass = None
        self._start(*state)

    def iter_next(self):
        if self._ended:
            return False
        prepared = self._pipeline.next()
        if prepared is None:
            self._ended = True
            return False
        (data, label), (pad, resume) = prepared
        if self._device is not None:
            # Before the caller's stream writes the filler (the labels too were copied to
            # the device by the worker: a copy from pageable memory on the caller's stream
            # would wait for its queued training step).
            data, label = hand_over(data), hand_over(label)
        if resume is not None:
            self._resume, self._drawn_pass = resume, None
            self._ended = True          # the wrapped batch is the pass's last
        elif pad:
            data[self.batch_size - pad:] = 0    # the filler of a short last batch
        label = torch.from_numpy(label) if isinstance(label, np.ndarray) else label
        self._batch = ([wrap_tensor(self._batch_output(data), self._ctx)],
                       [wrap_tensor(label, self._ctx)], pad)
        return True

    def _allocate(self):
        # The data is left uninitialised (zeroing a batch of images costs as much as
        # normalising it): every slot is written, except the filler of a short last batch,
        # which iter_next zeroes.
        dtype = self._dtype if self._dtype in (np.uint8, np.int8) else np.float32
        return (np.empty((self.batch_size,) + self.data_shape, dtype), self._allocate_labels())

    def _allocate_labels(self):
        return np.zeros(self.provide_label[0].shape, np.float32)

    def _allocate_on_device(self):
        # [data: the device tensor _prepare_on_device makes, labels]
        return [None, self._allocate_labels()]

    def _prepare_on_device(self, samples, slot, buffers):
        """Decode and augment a batch of records on the device (runs on a worker thread):
        the (N, C, H, W) batch tensor into ``buffers[0]``, the labels into ``buffers[1]``
        (read into its numpy array, then copied to the device)."""
        del slot                    # the batch is the pipeline's one sample
        encoded = []
        for i, (raw, record, offset, _) in enumerate(samples):
            with self._naming_record(record, offset):
                header, image = recordio.unpack(raw)
                buffers[1][i] = self._label_of(header)
            encoded.append(image)

        def host_decode(i):
            _, record, offset, _ = samples[i]
            with self._naming_record(record, offset):
                return self._decode(encoded[i], record)

        with worker_stream(self._device):
            images = self._decoder.decode(encoded, host_decode)
            pixels = []
            for image, (_, record, offset, rng) in zip(images, samples):
                with self._naming_record(record, offset):
                    pixels.append(self._augment(image, rng, _TensorPixels))
            batch = self._normalised(torch.stack([image.permute(2, 0, 1) for image in pixels]),
                                     [sample[3] for sample in samples])
            if len(samples) < self.batch_size:     # a short last batch: iter_next zeroes the rest
                batch = torch.cat([batch, batch.new_empty((self.batch_size - len(samples),)
                                                          + batch.shape[1:])])
            buffers[0] = batch
            buffers[1] = torch.from_numpy(buffers[1]).to(self._device)

    def _normalised(self, batch, rngs):
        """The (N, C, H, W) uint8 batch as ``_write`` writes each image: normalised (with the
        lighting factors drawn from each image's stream) for float outputs."""
        if self._dtype == np.uint8:
            return batch
        if self._dtype == np.int8:
            return batch.clamp(max=127).to(torch.int8)
        mean, inv_std = self._normalisation
        out = batch.to(torch.float32) - mean
        contrasts, illuminations = zip(*[self._lighting_draws(rng) for rng in rngs])
        if contrasts[0] is not None:
            out *= _per_image(contrasts, out.device)
        if illuminations[0] is not None:
            out += _per_image(illuminations, out.device)
        out *= inv_std
        if self._scale != 1:
            out *= float(self._scale)
        return out

    @contextlib.contextmanager
    def _naming_record(self, record, offset):
        """Re-raise an MXNetError naming the record, its byte offset and the file."""
        try:
            yield
        except MXNetError as err:
            raise MXNetError('ImageRecordIter: record %d at byte offset %d of %s: %s'
                             % (record, offset, self._path_imgrec, err)) from None

    def _prepare(self, sample, slot, buffers):
        """Decode and augment one record into slot ``slot`` (runs on a worker thread)."""
        raw, record, offset, rng = sample
        with self._naming_record(record, offset):
            header, image = recordio.unpack(raw)
            buffers[1][slot] = self._transform(header, image, record, rng,
                                               buffers[0][slot])

    def _read_at(self, offset):
        """The bytes of the record at byte ``offset``."""
        try:
            record = read_record_at(self._record, offset)
        except MXNetError as err:
            record, problem = None, str(err)
        else:
            problem = 'past the end of the file'
        if record is None:
            raise MXNetError('ImageRecordIter: record %d at byte offset %d of %s: %s'
                             % (self._record_number[offset], offset, self._path_imgrec, problem))
        return record

    def _transform(self, header, encoded, record, rng, out):
        """Write the record's image into the batch slot ``out``; return its label."""
        label = self._label_of(header)
        self._write(self._process(encoded, record, rng), out, rng)
        return label

    def _label_of(self, header):
        if self._list_labels is not None:
            if header.id not in self._list_labels:
                raise MXNetError('image index %d is not in path_imglist' % header.id)
            label = self._list_labels[header.id]
            if label.size != self.label_width:
                raise MXNetError('path_imglist gives %d labels for image %d but label_width is '
                                 'set to %d' % (label.size, header.id, self.label_width))
            return label
        num_label = header.flag if header.flag > 0 else 1
        if num_label != self.label_width:
            raise MXNetError('the record provides %d-dimensional label but '
                             'label_width is set to %d' % (num_label, self.label_width))
        return header.label

    def _resized(self, pixels, height, width, rng, ops=_HostPixels):
        sizes = tuple(pixels.shape[:2]) + (height, width)
        interp = rng.randint(0, 4) if self._inter_method == 10 else \
            pick_interp(self._inter_method, sizes)
        return ops.resize(pixels, width, height, interp)

    def _needs_rgb(self):
        """Whether an augmentation needs the pixels in RGB order (not OpenCV's BGR)."""
        return any(self._hls_jitter) or any(self._jitters) or self._pca_noise > 0

    def _decode(self, encoded, record):
        pixels = recordio.decode_record_image(encoded, _DECODE_FLAG[self.data_shape[0]], record,
                                              self._path_imgrec, to_rgb=not self._bgr_pixels)
        return pixels[:, :, None] if pixels.ndim == 2 else pixels

    def _process(self, encoded, record, rng):
        """Decode, resize, crop and mirror the image of record number ``record`` to (H, W, C)
        uint8 pixels, drawing its random choices from ``rng``."""
        return self._augment(self._decode(encoded, record), rng, _HostPixels)

    def _augment(self, pixels, rng, ops):
        """Resize, crop, mirror and colour (H, W, C) uint8 pixels, drawing the random choices
        from ``rng``: numpy arrays with ``ops`` ``_HostPixels``, tensors on the iterator's
        device with ``_TensorPixels`` (the same draws, so the same choices)."""
        _, height, width = self.data_shape
        if self.resize > 0:
            pixels = self._resized(pixels, *_shorter_edge_size(*pixels.shape[:2], self.resize), rng, ops)
        if self._warps:
            pixels = self._warped(pixels, rng, ops)
        if self.pad > 0:
            pixels = ops.pad(pixels, self.pad, self.fill_value)
        if self.random_resized_crop:
            pixels = self._random_resized(pixels, height, width, rng, ops)
        # Too small an image grows as MXNet grows it: first to enough rows, then (if still
        # needed) to enough columns, two resizes.
        if pixels.shape[0] < height:
            pixels = self._resized(pixels, *_grow_rows(*pixels.shape[:2], height), rng, ops)
        if pixels.shape[1] < width:
            pixels = self._resized(pixels, *_grow_rows(pixels.shape[1], pixels.shape[0], width)[::-1],
                                   rng, ops)
        if self._crop_size_range != (-1, -1) and not self.random_resized_crop:
            pixels = self._sized_crop(pixels, height, width, rng, ops)
        pixels = self._crop(pixels, height, width, rng)
        if self.mirror or (self.rand_mirror and rng.random() < 0.5):
            pixels = ops.mirror(pixels)
        if any(self._hls_jitter):
            pixels = ops.hls_jitter(pixels, [rng.randint(-v, v) for v in self._hls_jitter])
        if any(self._jitters) or self._pca_noise > 0:
            pixels = ops.color_jitter(pixels, _jitter_draws(self._jitters, self._pca_noise, rng))
        return pixels

    def _lighting_draws(self, rng):
        """(contrast, illumination) of one image's normalisation (None for those off)."""
        max_contrast, max_illumination = self._lighting
        contrast = np.float32(1 + rng.uniform(-max_contrast, max_contrast)) if max_contrast > 0 else None
        illumination = np.float32(rng.uniform(-max_illumination, max_illumination)) \
            if max_illumination > 0 else None
        return contrast, illumination

    def _write(self, pixels, out, rng):
        """Write (H, W, C) uint8 pixels into the batch slot ``out`` (C, H, W): normalised in
        place for float outputs (numpy releases the GIL, so threads run this in parallel),
        the pixels for uint8, saturated at 127 for int8."""
        chw = self._chw(pixels)
        if self._dtype == np.uint8:
            out[...] = chw
        elif self._dtype == np.int8:
            np.minimum(chw, 127, out=out, casting='unsafe')
        else:
            # ((pixel - mean) * contrast + illumination) * (1 / std) * scale, in float32 as
            # MXNet rounds it.
            np.subtract(chw, self._mean, out=out)
            contrast, illumination = self._lighting_draws(rng)
            if contrast is not None:
                out *= contrast
            if illumination is not None:
                out += illumination
            out *= self._inv_std
            if self._scale != 1:
                out *= self._scale

    def _chw(self, pixels):
        """A (C, H, W) RGB view of the (H, W, C) pixels ``_process`` made."""
        chw = pixels.transpose(2, 0, 1)
        return chw[::-1] if self._bgr_pixels else chw

    def _batch_output(self, data):
        """The batch tensor: the slots' buffer, cast for outputs other than float32/uint8/int8."""
        tensor = torch.from_numpy(data) if isinstance(data, np.ndarray) else data
        return tensor.to(_TORCH_DTYPES[self._dtype]) if self._dtype in _TORCH_DTYPES else tensor

    def _random_resized(self, pixels, height, width, rng, ops=_HostPixels):
        """A window of random area fraction and aspect ratio (ten tries, else the largest
        centred window of the output's aspect ratio), resized to (height, width)."""
        rows, cols = pixels.shape[:2]
        for _ in range(10):
            area = rng.uniform(*self._area_range) * rows * cols
            ratio = rng.uniform(*self._ratio_range)
            if ratio <= 0:
                continue
            new_w, new_h = int(round(np.sqrt(area * ratio))), int(round(np.sqrt(area / ratio)))
            if 0 < new_w <= cols and 0 < new_h <= rows:
                y, x = rng.randint(0, rows - new_h), rng.randint(0, cols - new_w)
                break
        else:
            new_w, new_h = min(cols, rows * width // height), min(rows, cols * height // width)
            y, x = (rows - new_h) // 2, (cols - new_w) // 2
        return self._resized(pixels[y:y + new_h, x:x + new_w], height, width, rng, ops)

    def _warped(self, pixels, rng, ops=_HostPixels):
        """MXNet's affine augmentation: shear, rotation, scale and aspect ratio drawn in
        MXNet's order, the image warped about its centre into its scaled size (limited to
        [min_img_size, max_img_size]) (by OpenCV, or torch on a device), the corners filled
        with ``fill_value``."""
        settings = self._affine
        rows, cols = pixels.shape[:2]
        shear = rng.uniform(-settings['shear'], settings['shear'])
        angle = settings['rotate'] if settings['rotate'] > 0 else \
            rng.randint(-settings['max_angle'], settings['max_angle'])
        scale = np.float32(rng.uniform(*settings['scale']))
        ratio = np.float32(1 + rng.uniform(-settings['aspect'], settings['aspect']))
        cos, sin = np.float32(np.cos(angle / 180.0 * np.pi)), np.float32(np.sin(angle / 180.0 * np.pi))
        rows_scale = np.float32(2 * scale / (1 + ratio))
        cols_scale = ratio * rows_scale
        low, high = settings['size']
        new_cols = np.float32(max(low, min(high, scale * cols)))
        new_rows = np.float32(max(low, min(high, scale * rows)))
        matrix = np.array([[rows_scale * cos - shear * sin * cols_scale,
                            rows_scale * sin + shear * cos * cols_scale, 0],
                           [-sin * cols_scale, cos * cols_scale, 0]], np.float32)
        matrix[0, 2] = (new_cols - matrix[0, 0] * cols - matrix[0, 1] * rows) / 2
        matrix[1, 2] = (new_rows - matrix[1, 0] * cols - matrix[1, 1] * rows) / 2
        size = (int(new_cols), int(new_rows))
        interp = rng.randint(0, 4) if self._inter_method == 10 else \
            pick_interp(self._inter_method, (rows, cols, size[1], size[0]))
        return ops.warp(pixels, matrix, size, interp, self.fill_value)

    def _sized_crop(self, pixels, height, width, rng, ops=_HostPixels):
        """A square window of random side in [min_crop_size, max_crop_size] (at random with
        ``rand_crop``, else centred), resized to (height, width)."""
        low, high = self._crop_size_range
        low = high if low < 0 else low
        side = min(rng.randint(low, max(low, high)), *pixels.shape[:2])
        spare_y, spare_x = pixels.shape[0] - side, pixels.shape[1] - side
        if self.rand_crop:
            y, x = rng.randint(0, spare_y), rng.randint(0, spare_x)
        else:
            y, x = spare_y // 2, spare_x // 2
        return self._resized(pixels[y:y + side, x:x + side], height, width, rng, ops)

    def _crop(self, pixels, height, width, rng):
        """The (height, width) window at the centre, or at random with ``rand_crop``."""
        spare_y, spare_x = pixels.shape[0] - height, pixels.shape[1] - width
        if self.rand_crop:
            y, x = rng.randint(0, spare_y), rng.randint(0, spare_x)
        else:
            y, x = spare_y // 2, spare_x // 2
        return pixels[y:y + height, x:x + width]

    def getdata(self):
        return self._batch[0]

    def getlabel(self):
        return self._batch[1]

    def getpad(self):
        return self._batch[2]

    def getindex(self):
        return np.zeros(self.batch_size, np.uint64)


class ImageRecordUInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` with ``dtype='uint8'``: the cropped pixels, not normalised
    (MXNet deprecates it for ``ImageRecordIter(dtype='uint8')``).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'a.rec')
    >>> writer = mx.recordio.MXRecordIO(path, 'w')
    >>> writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, 1, 0, 0),
    ...                                   np.full((4, 4, 3), 200, np.uint8), img_fmt='.png'))
    >>> writer.close()
    >>> batch = mx.io.ImageRecordUInt8Iter(path_imgrec=path, data_shape=(3, 2, 2), batch_size=1).next()
    >>> batch.data[0].dtype, int(batch.data[0].asnumpy().max())
    (<class 'numpy.uint8'>, 200)
    """

    def __init__(self, **kwargs):
        kwargs.setdefault('dtype', 'uint8')
        super().__init__(**kwargs)


class ImageRecordInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` with ``dtype='int8'``: the cropped pixels saturated at 127
    (MXNet deprecates it for ``ImageRecordIter(dtype='int8')``).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'a.rec')
    >>> writer = mx.recordio.MXRecordIO(path, 'w')
    >>> writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, 1, 0, 0),
    ...                                   np.full((4, 4, 3), 200, np.uint8), img_fmt='.png'))
    >>> writer.close()
    >>> batch = mx.io.ImageRecordInt8Iter(path_imgrec=path, data_shape=(3, 2, 2), batch_size=1).next()
    >>> batch.data[0].dtype, int(batch.data[0].asnumpy().max())
    (<class 'numpy.int8'>, 127)
    """

    def __init__(self, **kwargs):
        kwargs.setdefault('dtype', 'int8')
        super().__init__(**kwargs)


# MXNet's first-generation C++ iterators, kept under their names: the same pipeline here.
ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter
