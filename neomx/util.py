"""``mx.util``: environment, GPU queries and the NumPy-semantics switches.

MXNet 1.9.1 can switch to NumPy shape semantics (zero-dim and zero-size shapes) and NumPy
array semantics (``mx.np.ndarray`` instead of ``NDArray``). neomx's arrays (torch tensors)
hold zero-dim and zero-size shapes in either mode, so the NumPy shape switch is a
per-thread flag (as in MXNet) that :func:`is_np_shape` reports and that graph shape
inference reads (0 is then a real size, not an unknown one). neomx implements only the
legacy ``mx.nd`` array interface: NumPy array semantics can be turned OFF (a no-op), and
asking to turn them ON raises ``NotImplementedError``.
"""
import functools
import os
import threading

import torch

from .base import MXNetError
from .context import gpu_memory_info, num_gpus

__all__ = ['is_np_shape', 'is_np_array', 'set_np_shape', 'np_shape', 'np_array',
           'use_np_shape', 'use_np_array', 'use_np', 'set_np', 'reset_np',
           'get_gpu_count', 'get_gpu_memory', 'get_cuda_compute_capability',
           'set_module', 'getenv', 'setenv']

# names MXNet's module also holds (imported from its base module)
from .base import c_str, check_call, py_str  # noqa: E402,F401


def _refuse_numpy_semantics(semantics, active):
    """Raise unless ``active`` is false: neomx can only stay in legacy semantics."""
    if active:
        raise NotImplementedError(
            'neomx has no NumPy interface (mx.np / mx.npx): NumPy %s semantics cannot be '
            'turned on; only the legacy mx.nd semantics are available' % semantics)


_STATE = threading.local()


def is_np_shape():
    """Whether NumPy shape semantics are on in this thread."""
    return getattr(_STATE, 'np_shape', False)


def is_np_array():
    """Whether NumPy array semantics are on: always False in neomx."""
    return False


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


class _LegacySemanticsScope:
    """``with`` scope that keeps (only) the legacy semantics: entering and leaving change nothing."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


def np_shape(active=True):
    """Scope with NumPy shape semantics ``active``."""
    return _NumpyShapeScope(active)


def np_array(active=True):
    """Scope with NumPy array semantics ``active``; only ``active=False`` is supported."""
    _refuse_numpy_semantics('array', active)
    return _LegacySemanticsScope()


def _numpy_decorator(semantics):
    """A decorator like MXNet's ``use_np_*``: it would run ``func`` with ``semantics`` on.

    Decorating succeeds (so modules that decorate some of their functions still import);
    calling the decorated function, or creating an instance of the decorated class, raises.
    """
    def decorator(func):
        if isinstance(func, type):
            def refuse_init(self, *args, **kwargs):
                _refuse_numpy_semantics(semantics, True)
            return type(func.__name__, (func,), {'__init__': refuse_init, '__doc__': func.__doc__,
                                                 '__module__': func.__module__})

        @functools.wraps(func)
        def refuse(*args, **kwargs):
            _refuse_numpy_semantics(semantics, True)
        return refuse
    decorator.__name__ = 'use_np' if semantics == 'shape and array' else 'use_np_' + semantics
    decorator.__doc__ = ('Decorator that runs a function or class with NumPy %s semantics: '
                         'calling what it decorates raises NotImplementedError in neomx.' % semantics)
    return decorator


def use_np_shape(func):
    """Decorator that runs a function (or every method of a class) with NumPy shape semantics."""
    if isinstance(func, type):
        for name, method in list(vars(func).items()):
            if callable(method) and not isinstance(method, type):
                setattr(func, name, use_np_shape(method))
        return func

    @functools.wraps(func)
    def with_np_shape(*args, **kwargs):
        with np_shape(True):
            return func(*args, **kwargs)
    return with_np_shape


use_np_array = _numpy_decorator('array')
use_np = _numpy_decorator('shape and array')


def set_np(shape=True, array=True):
    """Set NumPy shape and array semantics together; array semantics only off.

    Raises
    ------
    ValueError
        When array semantics are asked for without shape semantics (as MXNet).
    NotImplementedError
        When array semantics are asked for.
    """
    if array and not shape:
        raise ValueError('NumPy Shape semantics is required in using NumPy array semantics.')
    _refuse_numpy_semantics('array', array)
    set_np_shape(shape)


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
