"""Tensor fusion for the synchronous distributed store: keys packed into flat buckets.

One allreduce per key would pay a round trip per key (ResNet-50 has 161); one allreduce of
everything could not start before the last key is packed. So, as Horovod's tensor fusion and
DDP's buckets do, keys of one dtype and device are packed in push order into flat buckets of
about ``NEOMX_KVSTORE_FUSION_BYTES`` (default 16 MiB; the first bucket is at most 4 MiB so that
communication starts early; a bigger key is a bucket alone). Each bucket's allreduce starts as
soon as it is packed, several are in flight at once, and the store waits for one only when a
value of that bucket is read.

The buffers are kept from push to push (fresh memory would page-fault on every push).
"""
import os

import torch

from ..base import MXNetError

__all__ = ['fusion_bytes', 'plan_buckets', 'FlatBuffers']

_FIRST_BUCKET_BYTES = 1 << 22
_MAX_CACHED = 64          # pushes of ever new key sets: do not hoard memory


def fusion_bytes():
    """Bytes of a bucket (``NEOMX_KVSTORE_FUSION_BYTES``, default 16 MiB; 0 means a key per bucket)."""
    value = os.environ.get('NEOMX_KVSTORE_FUSION_BYTES', '')
    if not value:
        return 1 << 24
    try:
        size = int(value)
    except ValueError:
        size = -1
    if size < 0:
        raise MXNetError('NEOMX_KVSTORE_FUSION_BYTES=%r: expected a number of bytes >= 0' % value)
    return size


def plan_buckets(nbytes, limit=None):
    """Split positions ``0..len(nbytes)-1`` (kept in order) into buckets of at most ``limit``
    bytes, the first at most 4 MiB; a key bigger than the limit is a bucket alone.

    >>> plan_buckets([3, 3, 3, 9, 1], limit=6)
    [[0, 1], [2], [3], [4]]
    """
    limit = fusion_bytes() if limit is None else limit
    cap = min(limit, _FIRST_BUCKET_BYTES)
    buckets, bucket, size = [], [], 0
    for pos, n in enumerate(nbytes):
        if bucket and size + n > cap:
            buckets.append(bucket)
            bucket, size, cap = [], 0, limit
        bucket.append(pos)
        size += n
    if bucket:
        buckets.append(bucket)
    return buckets


class FlatBuffers:
    """Reusable flat buffers, one per bucket of keys (by the keys, dtype and device), each kept
    with its views shaped as the keys' values (made once: a push of ResNet-50's 161 keys would
    otherwise spend more time slicing than the copies of small keys take)."""

    def __init__(self):
        self._flats = {}

    def _fresh(self, tag, shapes, dtype, device):
        if len(self._flats) > _MAX_CACHED:
            self._flats.clear()
        flat = torch.empty(sum(_numel(s) for s in shapes), dtype=dtype, device=device)
        views, offset = [], 0
        for shape in shapes:
            n = _numel(shape)
            views.append(flat[offset:offset + n].view(shape))
            offset += n
        found = self._flats[tag] = (flat, views)
        return found

    def scratch(self, keys, shapes, dtype, device):
        """``(flat, views)``: a buffer for the sums of ``keys`` (handed to an updater)."""
        tag = (tuple(keys), dtype, device)
        found = self._flats.get(tag)
        return found if found is not None else self._fresh(tag, shapes, dtype, device)

    def resident(self, keys, stored, dtype, device):
        """``(flat, views)``: a buffer whose views *are* the stored values of ``keys`` (moved in
        once), so that a push without updater sums straight into the store, with no copy back."""
        tag = ('resident', tuple(keys), dtype, device)
        found = self._flats.get(tag)
        if found is not None and all(v._t is view for v, view in zip(stored, found[1])):
            return found
        found = self._fresh(tag, [v._t.shape for v in stored], dtype, device)
        for v, view in zip(stored, found[1]):
            view.copy_(v._t)
            v._t = view            # the store's own array: nothing outside holds it
        return found


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n
