"""Pooled host memory, as MXNet's ``static_alloc`` graphs and CPU storage pool keep it.

torch allocates every CPU tensor through ``malloc``, and glibc serves large blocks (above
its mmap threshold, at most 32 MiB) with fresh ``mmap`` pages that are unmapped again on
``free``: a convolution writing a 100 MB activation then pays a page fault for each of its
25,000 pages, every call, which costs a ResNet-18 at batch 32 about a sixth of its time.
MXNet keeps freed memory in its storage pool instead. :func:`pool_host_memory` makes
glibc do the same: large blocks come from the heap and freed memory stays there for the
next allocation rather than going back to the system.
"""
import ctypes
import functools
import os

__all__ = ['pool_host_memory']

# mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_NEVER_TRIM = 2 ** 31 - 1


@functools.lru_cache(maxsize=None)
def pool_host_memory():
    """Keep freed host memory in the process for reuse (once per process).

    Like MXNet, ``MXNET_CPU_MEM_POOL_TYPE=Unpooled`` leaves memory unpooled. Memory is
    pooled for the rest of the process: its resident size stays at its peak.

    Returns
    -------
    bool
        Whether memory is pooled: False when asked not to, or where the C library is not
        glibc.
    """
    if os.environ.get('MXNET_CPU_MEM_POOL_TYPE', '').strip().lower() == 'unpooled':
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt     # the process's C library
    except (OSError, AttributeError, TypeError):
        return False
    # Both settings are needed: without mmap, blocks come from the heap; without trimming,
    # freed blocks at the heap's top stay mapped.
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, _NEVER_TRIM))
