"""``mx.util``: environment, GPU queries and the NumPy-semantics switches.

MXNet 1.9.1 can switch to NumPy shape semantics (zero-dim and zero-size shapes) and NumPy
array semantics (``mx.np.ndarray`` instead of ``NDArray``). neomx's arrays (torch tensors)
hold zero-dim and zero-size shapes in either mode, so the NumPy shape switch is a
per-thread flag (as in MXNet) that :func:`is_np_shape` reports and that graph shape
inference reads (0 is then a real size, not an unknown one). The NumPy array switch is a
per-thread flag too: Gluon and ``mx.npx`` read it to hand out ``mx.np.ndarray`` arrays.
"""
import functools
import os
import threading

import torch

from .base import MXNetError
from .context import gpu_memory_info, num_gpus

__all__ = ['is_np_shape', 'is_np_array', 'set_np_shape', 'np_shape', 'np_array',
           'use_np_shape', 'use_np_array', 'use_np', 'set_np', 'reset_np', 'set_np_array',
           'get_gpu_count', 'get_gpu_memory', 'get_cuda_compute_capability',
           'set_module', 'getenv', 'setenv']


_STATE = threading.local()


def is_np_shape():
    """Whether NumPy shape semantics are on in this thread."""
    return getattr(_STATE, 'np_shape', False)


def is_np_array():
    """Whether NumPy array semantics are on in this thread (``mx.np.ndarray`` results)."""
    return getattr(_STATE, 'np_array', False)


def set_np_array(active):
    """Turn NumPy array semantics on or off in this thread; returns the previous state."""
    previous = is_np_array()
    _STATE.np_array = bool(active)
    return previous


def set_np_shape(active):
    """Turn NumPy shape semantics on or off in this thread; returns the previous state."""
    previous = is_np_shape()
    _STATE.np_shape = bool(active)
    return previous


class _NumpyShapeScope:
    """``with`` scope that sets NumPy shape semantics and restores the previous state on exit."""

    def __init__(self, active):
        self._active, self._previous = active, None

    def __enter__(self):
        self._previous = set_np_shape(self._active)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        set_np_shape(self._previous)


class _NumpyArrayScope(_NumpyShapeScope):
    """``with`` scope that sets NumPy array semantics and restores the previous state on exit."""

    def __enter__(self):
        self._previous = set_np_array(self._active)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        set_np_array(self._previous)


def np_shape(active=True):
    """Scope with NumPy shape semantics ``active``."""
    return _NumpyShapeScope(active)


def np_array(active=True):
    """Scope with NumPy array semantics ``active``."""
    return _NumpyArrayScope(active)


def _with_semantics(scope, func):
    """``func`` (a function, or every method of a class) run inside ``scope(True)``."""
    if isinstance(func, type):
        for name, method in list(vars(func).items()):
            if callable(method) and not isinstance(method, type):
                setattr(func, name, _with_semantics(scope, method))
            elif isinstance(method, property):
                setattr(func, name, property(*(None if f is None else _with_semantics(scope, f)
                                               for f in (method.fget, method.fset, method.fdel)),
                                             method.__doc__))
        return func
    if not callable(func):
        raise TypeError('use_np_*: expected a function or a class, got %s' % type(func).__name__)

    @functools.wraps(func)
    def with_semantics(*args, **kwargs):
        with scope(True):
            return func(*args, **kwargs)
    return with_semantics


def use_np_shape(func):
    """Decorator that runs a function (or every method of a class) with NumPy shape semantics."""
    return _with_semantics(np_shape, func)


def use_np_array(func):
    """Decorator that runs a function (or every method of a class) with NumPy array semantics."""
    return _with_semantics(np_array, func)


def use_np(func):
    """Decorator that runs a function (or every method of a class) with NumPy shape and array
    semantics, as ``use_np_shape(use_np_array(func))``."""
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True):
    """Set NumPy shape and array semantics together.

    Raises
    ------
    ValueError
        When array semantics are asked for without shape semantics (as MXNet).
    """
    if array and not shape:
        raise ValueError('NumPy Shape semantics is required in using NumPy array semantics.')
    set_np_shape(shape)
    set_np_array(array)


def reset_np():
    """Turn NumPy shape and array semantics off."""
    set_np(shape=False, array=False)


def get_gpu_count():
    """Number of GPUs visible to torch."""
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """``(free, total)`` memory of GPU ``gpu_dev_id`` in bytes.

    Raises
    ------
    MXNetError
        When that GPU does not exist.
    """
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx):
    """CUDA compute capability of a GPU context as an int (70 for ``sm_70``).

    Raises
    ------
    ValueError
        When ``ctx`` is not a GPU context.
    """
    if ctx.device_type != 'gpu':
        raise ValueError('Expecting a gpu context to get cuda compute capability, while received ctx %s'
                         % ctx)
    if ctx.device_id >= num_gpus():
        raise MXNetError('gpu(%d) is not available: this machine has %d GPU(s) visible to torch'
                         % (ctx.device_id, num_gpus()))
    major, minor = torch.cuda.get_device_capability(ctx.device_id)
    return major * 10 + minor


def set_module(module):
    """Decorator that sets ``__module__`` of a function or class (unless ``module`` is None)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def getenv(name):
    """The value of environment variable ``name``, or None when it is not set."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to ``value``; ``None`` removes it."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
