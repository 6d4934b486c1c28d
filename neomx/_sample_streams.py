"""Random streams of one sample, for augmentation on worker threads.

MXNet's Python augmenters (``mx.image``) draw from Python's ``random`` and numpy's global
generator, so seeding those reproduces MXNet's augmentations. Threads cannot share those
streams deterministically, so augmentation code draws through :data:`pyrandom` and
:data:`nprandom`: the global modules, except inside :func:`sample_streams` on the current
thread, where they are the sample's own generators, seeded from the sample.

>>> import random
>>> with sample_streams(7):
...     first = pyrandom.random()
>>> with sample_streams(7):
...     first == pyrandom.random()
True
>>> pyrandom.random is random.random     # outside: the global stream, as in MXNet
True
"""
import contextlib
import random
import threading

import numpy as np

__all__ = ['pyrandom', 'nprandom', 'sample_streams']

_LOCAL = threading.local()


class _Stream:
    """Attribute access goes to this thread's sample stream, or to ``fallback``."""

    def __init__(self, slot, fallback):
        self._slot = slot
        self._fallback = fallback

    def __getattr__(self, name):
        return getattr(getattr(_LOCAL, self._slot, None) or self._fallback, name)


pyrandom = _Stream('py', random)
nprandom = _Stream('np', np.random)


@contextlib.contextmanager
def sample_streams(seed):
    """Within the block, :data:`pyrandom` and :data:`nprandom` on this thread are
    ``random.Random(seed)`` and ``numpy.random.RandomState`` seeded from ``seed``."""
    saved = getattr(_LOCAL, 'py', None), getattr(_LOCAL, 'np', None)
    _LOCAL.py = random.Random(seed)
    _LOCAL.np = np.random.RandomState(seed % (1 << 32))
    try:
        yield
    finally:
        _LOCAL.py, _LOCAL.np = saved
