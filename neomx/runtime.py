"""``mx.runtime``: which features this build of neomx has, under MXNet 1.9.1's names.

MXNet reports the options its C++ library was compiled with. neomx's compute is torch, so
each feature says what torch (and neomx on top of it) can actually do here: CUDA when torch
sees a GPU, MKLDNN when torch's oneDNN backend is available, the BLAS torch was built with,
and so on. Features neomx has no counterpart for (TensorRT, Caffe, TVM, ...) are off.
"""
import collections
import faulthandler
import platform
import re

import torch

from ._torch_private import has_lapack

__all__ = ['Feature', 'Features', 'feature_list']

# names MXNet's module also holds (imported from its base module)
from .base import check_call  # noqa: E402,F401


class Feature:
    """One compile-time feature: ``name`` and whether it is ``enabled``.

    Example
    -------
    >>> feature = mx.runtime.Features()['CUDA']
    >>> feature.name, isinstance(feature.enabled, bool)
    ('CUDA', True)
    """
    __slots__ = ('name', 'enabled')

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return '%s %s' % ('✔' if self.enabled else '✖', self.name)


def _blas_vendor():
    """The BLAS torch was built with ('mkl', 'open', 'accelerate'...), from its build summary."""
    found = re.search(r'BLAS_INFO=(\w+)', torch.__config__.show())
    return found.group(1).lower() if found else ''


def _simd_levels():
    """The x86 instruction-set features torch's CPU kernels use on this machine.

    SSE and SSE2 are the x86-64 baseline; torch dispatches to its AVX2 (or AVX-512) kernels
    only on CPUs that also have SSE3 to SSE4.2, AVX and F16C.
    """
    if platform.machine().lower() not in ('x86_64', 'amd64'):
        return set()
    levels = {'CPU_SSE', 'CPU_SSE2', 'SSE'}
    if torch.backends.cpu.get_cpu_capability() in ('AVX2', 'AVX512'):
        levels |= {'CPU_SSE3', 'CPU_SSE4_1', 'CPU_SSE4_2', 'CPU_AVX', 'CPU_AVX2', 'F16C'}
    return levels


def _distributed_has(backend_check):
    return torch.distributed.is_available() and backend_check()


def _detect():
    """(name, enabled) for every feature MXNet 1.9.1 lists, in its order."""
    cuda = torch.cuda.is_available()
    blas = _blas_vendor()
    simd = _simd_levels()
    return [
        ('CUDA', cuda),
        ('CUDNN', cuda and torch.backends.cudnn.is_available()),
        ('NCCL', cuda and _distributed_has(torch.distributed.is_nccl_available)),
        ('CUDA_RTC', False),            # neomx has no mx.rtc
        ('TENSORRT', False),
        ('CPU_SSE', 'CPU_SSE' in simd),
        ('CPU_SSE2', 'CPU_SSE2' in simd),
        ('CPU_SSE3', 'CPU_SSE3' in simd),
        ('CPU_SSE4_1', 'CPU_SSE4_1' in simd),
        ('CPU_SSE4_2', 'CPU_SSE4_2' in simd),
        ('CPU_SSE4A', False),           # an AMD-only extension torch never targets
        ('CPU_AVX', 'CPU_AVX' in simd),
        ('CPU_AVX2', 'CPU_AVX2' in simd),
        ('OPENMP', torch.backends.openmp.is_available()),
        ('SSE', 'SSE' in simd),
        ('F16C', 'F16C' in simd),
        ('JEMALLOC', False),
        ('BLAS_OPEN', blas == 'open'),
        ('BLAS_ATLAS', blas == 'atlas'),
        ('BLAS_MKL', blas == 'mkl'),
        ('BLAS_APPLE', blas in ('accelerate', 'apple')),
        ('LAPACK', has_lapack()),
        ('MKLDNN', torch.backends.mkldnn.is_available()),
        ('OPENCV', False),              # neomx decodes images with Pillow
        ('CAFFE', False),
        ('PROFILER', torch.autograd.kineto_available()),   # mx.profiler runs on torch.profiler
        ('DIST_KVSTORE', False),        # mx.kv.create('dist_*') is not available
        ('CXX14', True),                # torch is built with C++17, a superset
        ('INT64_TENSOR_SIZE', True),    # torch sizes and indices are always 64-bit
        ('SIGNAL_HANDLER', faulthandler.is_enabled()),  # stack traces on fatal signals
        ('DEBUG', torch.version.debug),
        ('TVM_OP', False),
    ]


class Features(collections.OrderedDict):
    """Ordered mapping of feature name to :class:`Feature`; one shared instance.

    The features are detected on first use; ``Features()`` always returns the same object.

    Example
    -------
    >>> features = mx.runtime.Features()
    >>> features is mx.runtime.Features(), 'CUDNN' in features
    (True, True)
    >>> features.is_enabled('CUDA') == (mx.context.num_gpus() > 0)
    True
    """
    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__((name, Feature(name, on)) for name, on in _detect())
        return cls.instance

    def __init__(self):     # the mapping is filled once, in __new__
        pass

    def __repr__(self):
        return repr(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether the feature ``feature_name`` (any case) is enabled.

        Raises
        ------
        RuntimeError
            For a name MXNet does not know.
        """
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError("Feature '%s' is unknown, known features are: %s" % (name, list(self.keys())))
        return self[name].enabled


def feature_list():
    """The features as a list of :class:`Feature`, in MXNet's order."""
    return list(Features().values())
