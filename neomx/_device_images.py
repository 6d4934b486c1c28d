"""Decoding and augmenting batches of images on a torch device (issue 27's ``ctx=mx.gpu()``).

The image iterators (``mx.io.ImageRecordIter``, ``mx.image.ImageIter``) take a Context as
``ctx``: their worker threads then read the records as usual, but decode each batch's JPEGs
in one call of ``torchvision.io.decode_jpeg(list, device=...)`` (nvJPEG on a GPU,
libjpeg-turbo on the CPU) and augment the decoded images with torch operations on that
device. Other formats (PNG...) and JPEGs that nvJPEG refuses (CMYK...) are decoded on the
CPU (``neomx._image_decode``) and copied there.

On a GPU every worker thread computes on its own CUDA stream (so that preparing batches
overlaps the training step on the default stream) and waits for its batch before handing
it over; :func:`hand_over` marks the batch as used by the consumer's stream, so that the
caching allocator does not give its memory back to the worker's stream too early.
"""
import contextlib
import threading

import numpy as np
import torch

from ._optional import require
from .base import MXNetError
from .context import Context, num_gpus

__all__ = ['image_device', 'DeviceImageDecoder', 'hand_over', 'worker_stream']

_JPEG_MAGIC = b'\xff\xd8'
# MXNet's ctx argument of the C++ iterators: a hint it accepts and ignores.
_CONTEXT_HINTS = ('cpu', 'gpu')


def image_device(ctx, owner):
    """The torch device on which ``owner`` decodes and augments, or None for the host path.

    ``ctx`` is MXNet's hint (None, ``'cpu'`` or ``'gpu'``: ignored, as MXNet's C++ iterators
    do) or neomx's extension, a Context: its device. Asking for a device needs torchvision
    (the ``vision`` extra) and, for ``gpu(i)``, a CUDA device ``i``.
    """
    if ctx is None or (isinstance(ctx, str) and ctx in _CONTEXT_HINTS):
        return None
    if not isinstance(ctx, Context):
        raise MXNetError("%s: ctx=%r must be 'cpu' or 'gpu' (MXNet's hint, ignored) or a "
                         "Context such as mx.gpu(0) (decode and augment on that device)"
                         % (owner, ctx))
    require('torchvision.io', 'vision', '%s(ctx=%s) (decoding on the device)' % (owner, ctx))
    if ctx.device_type == 'gpu' and ctx.device_id >= num_gpus():
        raise MXNetError('%s: ctx=%s asks to decode and augment on a GPU, but torch sees %d '
                         'CUDA device(s) here' % (owner, ctx, num_gpus()))
    return torch.device('cuda', ctx.device_id) if ctx.device_type == 'gpu' else torch.device('cpu')


class DeviceImageDecoder:
    """Decode lists of encoded images to (H, W, C) uint8 tensors on ``device``.

    Parameters
    ----------
    device : torch.device
    channels : int
        1 (gray, JPEG's luma) or 3 (RGB).
    """

    def __init__(self, device, channels):
        self.device = device
        self.channels = channels
        io = require('torchvision.io', 'vision', 'decoding on the device')
        self._decode_jpeg = io.decode_jpeg
        self._mode = io.ImageReadMode.GRAY if channels == 1 else io.ImageReadMode.RGB

    def decode(self, encoded, host_decode):
        """The images of the byte strings ``encoded`` (a list), as (H, W, C) uint8 tensors on
        the device (views of (C, H, W) planes). ``host_decode(i)`` decodes image ``i`` on the
        CPU to an (H, W, C) uint8 numpy array (RGB), raising an MXNetError that names it when
        it is not an image: it serves the images that are not JPEGs or that the device's
        decoder refuses."""
        images = [None] * len(encoded)
        jpegs = [i for i, data in enumerate(encoded) if bytes(data[:2]) == _JPEG_MAGIC]
        if jpegs:
            try:
                decoded = self._jpegs([encoded[i] for i in jpegs])
            except RuntimeError:
                # One bad image fails the whole batch: decode them one by one.
                decoded = [self._one_jpeg(encoded[i], i, host_decode) for i in jpegs]
            for i, image in zip(jpegs, decoded):
                images[i] = image
        for i, image in enumerate(images):
            if image is None:
                images[i] = self._on_host(i, host_decode)
        return images

    def _jpegs(self, encoded):
        # bytearray: torch.frombuffer warns about read-only buffers (and the copy is small).
        tensors = [torch.frombuffer(bytearray(data), dtype=torch.uint8) for data in encoded]
        return [image.permute(1, 2, 0) for image in
                self._decode_jpeg(tensors, mode=self._mode, device=self.device)]

    def _one_jpeg(self, data, index, host_decode):
        try:
            return self._jpegs([data])[0]
        except RuntimeError:        # a JPEG nvJPEG does not take (CMYK, lossless...) or broken
            return self._on_host(index, host_decode)

    def _on_host(self, index, host_decode):
        # (C, H, W) planes in memory viewed as (H, W, C), as the device's decoder gives them.
        pixels = np.ascontiguousarray(host_decode(index).transpose(2, 0, 1))
        return torch.from_numpy(pixels).to(self.device).permute(1, 2, 0)


_STREAMS = threading.local()


def worker_stream(device):
    """A context in which this thread computes on its own CUDA stream of ``device``, and
    which waits for that stream's work at its end (nothing to do on the CPU)."""
    if device.type != 'cuda':
        return contextlib.nullcontext()
    return _on_own_stream(device)


@contextlib.contextmanager
def _on_own_stream(device):
    streams = getattr(_STREAMS, 'streams', None)
    if streams is None:
        streams = _STREAMS.streams = {}
    if device not in streams:
        streams[device] = torch.cuda.Stream(device)
    stream = streams[device]
    with torch.cuda.stream(stream):
        yield
    stream.synchronize()


def hand_over(tensor):
    """Mark ``tensor`` (made by a worker on its stream) as used by this thread's current
    stream, so that its memory is not reused before the consumer's work on it is done."""
    if tensor.device.type == 'cuda':
        tensor.record_stream(torch.cuda.current_stream(tensor.device))
    return tensor
