"""``mx.util``: environment, GPU queries and the NumPy-semantics switches.

MXNet 1.9.1 has two per-thread switches. NumPy *shape* semantics make ``()`` the shape of a
scalar and ``0`` a real size (not an unknown one) in shape inference; neomx's arrays (torch
tensors) hold such shapes either way, and graph shape inference reads the flag. NumPy *array*
semantics make Gluon create ``mx.np.ndarray`` parameters and outputs (and ``mx.sym.np``
symbols when hybridizing) instead of legacy ``NDArray`` objects. ``npx.set_np()`` turns both on.
"""
import functools
import inspect
import os

import numpy as _np
import torch

from .base import MXNetError, c_str, check_call, py_str  # noqa: F401  (MXNet's util has them)
from .context import gpu_memory_info, num_gpus
from . import _np_semantics
from ._np_semantics import STATE as _STATE

__all__ = ['is_np_shape', 'is_np_array', 'set_np_shape', 'np_shape', 'np_array',
           'use_np_shape', 'use_np_array', 'use_np', 'set_np', 'reset_np',
           'get_gpu_count', 'get_gpu_memory', 'get_cuda_compute_capability',
           'set_module', 'getenv', 'setenv', 'np_ufunc_legal_option',
           'wrap_np_unary_func', 'wrap_np_binary_func']




def is_np_shape():
    """Whether NumPy shape semantics are on in this thread.

    >>> import neomx as mx
    >>> mx.util.is_np_shape()
    False
    """
    return _STATE.np_shape


def is_np_array():
    """Whether NumPy array semantics are on in this thread: Gluon then creates
    ``mx.np.ndarray`` parameters and outputs instead of ``NDArray``.

    >>> import neomx as mx
    >>> mx.util.is_np_array()
    False
    """
    return _STATE.np_array


def set_np_shape(active):
    """Turn NumPy shape semantics on or off in this thread; returns the previous state.

    Raises
    ------
    ValueError
        When turning them off while NumPy array semantics are on (as MXNet).
    """
    if not active and is_np_array():
        raise ValueError('Deactivating NumPy shape semantics while NumPy array semantics is still'
                         ' active is not allowed. Please consider calling `npx.reset_np()` to'
                         ' deactivate both of them.')
    previous = is_np_shape()
    _STATE.np_shape = bool(active)
    return previous


def _set_np_array(active):
    """Turn NumPy array semantics on or off in this thread; returns the previous state."""
    previous = is_np_array()
    _np_semantics.set_np_array(active)
    return previous


class _SemanticsScope:
    """``with`` scope that sets one of the switches and restores its previous state on exit."""

    def __init__(self, setter, active):
        self._setter, self._active, self._previous = setter, active, None

    def __enter__(self):
        self._previous = self._setter(self._active)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._setter(self._previous)


def _set_np_shape_in_scope(active):
    # A scope may leave shape semantics while array semantics are on (use_np's order).
    previous = is_np_shape()
    _STATE.np_shape = bool(active)
    return previous


class _NumpyShapeScope(_SemanticsScope):
    """MXNet's name for the scope :func:`np_shape` returns (``_is_np_shape``: its state).

    >>> with mx.util._NumpyShapeScope(True) as scope:
    ...     mx.util.is_np_shape(), scope._is_np_shape
    (True, True)
    """

    def __init__(self, is_np_shape):
        super().__init__(_set_np_shape_in_scope, is_np_shape)
        self._is_np_shape = is_np_shape


class _NumpyArrayScope(_SemanticsScope):
    """MXNet's name for the scope :func:`np_array` returns (``_is_np_array``: its state).

    >>> with mx.util._NumpyArrayScope(True) as scope:
    ...     mx.util.is_np_array(), scope._is_np_array
    (True, True)
    """

    def __init__(self, is_np_array):
        super().__init__(_set_np_array, is_np_array)
        self._is_np_array = is_np_array


def np_shape(active=True):
    """Scope (``with``) with NumPy shape semantics ``active``.

    >>> import neomx as mx
    >>> with mx.util.np_shape(True):
    ...     mx.util.is_np_shape()
    True
    """
    return _NumpyShapeScope(active)


def np_array(active=True):
    """Scope (``with``) with NumPy array semantics ``active``.

    >>> import neomx as mx
    >>> with mx.util.np_array(True):
    ...     mx.util.is_np_array()
    True
    """
    return _NumpyArrayScope(active)


def _scoped_decorator(scope, decorator_name):
    """A decorator running a function -- or every function, method and property of a class --
    inside ``scope(True)``."""
    def decorate(func):
        if inspect.isclass(func):
            members = inspect.getmembers(
                func, predicate=lambda f: inspect.isfunction(f) or inspect.ismethod(f)
                or isinstance(f, property))
            for name, method in members:
                if isinstance(method, property):
                    setattr(func, name, property(decorate(method.__get__), method.__set__,
                                                 method.__delattr__, method.__doc__))
                else:
                    setattr(func, name, decorate(method))
            return func
        if not callable(func):
            raise TypeError('%s can only decorate classes and callable objects, while received a %s'
                            % (decorator_name, type(func)))

        @functools.wraps(func)
        def scoped(*args, **kwargs):
            with scope(True):
                return func(*args, **kwargs)
        return scoped
    decorate.__name__ = decorate.__qualname__ = decorator_name
    return decorate


use_np_shape = _scoped_decorator(np_shape, 'use_np_shape')
use_np_shape.__doc__ = """Decorator running a function, or every method and property of a class,
with NumPy shape semantics on.

>>> import neomx as mx
>>> @mx.util.use_np_shape
... def f():
...     return mx.util.is_np_shape()
>>> f()
True
"""
use_np_array = _scoped_decorator(np_array, 'use_np_array')
use_np_array.__doc__ = """Decorator running a function, or every method and property of a class
(a Gluon Block: its parameters and outputs become ``mx.np`` arrays), with NumPy array semantics on.

>>> import neomx as mx
>>> @mx.util.use_np_array
... def f():
...     return mx.util.is_np_array()
>>> f()
True
"""


def use_np(func):
    """Decorator running a function, or every method and property of a class, with NumPy
    shape and array semantics on (:func:`use_np_shape` of :func:`use_np_array`).

    >>> import neomx as mx
    >>> @mx.util.use_np
    ... def f():
    ...     return mx.util.is_np_shape(), mx.util.is_np_array()
    >>> f()
    (True, True)
    """
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True):
    """Set NumPy shape and array semantics together, in this thread.

    Raises
    ------
    ValueError
        When array semantics are asked for without shape semantics (as MXNet).

    >>> import neomx as mx
    >>> mx.util.set_np()
    >>> mx.util.is_np_array(), mx.util.is_np_shape()
    (True, True)
    >>> mx.util.reset_np()
    """
    if array and not shape:
        raise ValueError('NumPy Shape semantics is required in using NumPy array semantics.')
    _set_np_array(array)
    set_np_shape(shape)


def reset_np():
    """Turn NumPy shape and array semantics off."""
    set_np(shape=False, array=False)


# The keywords of NumPy's ufuncs and their defaults: MXNet's np functions accept them only
# with these values.
_NP_UFUNC_DEFAULT_KWARGS = {'where': True, 'casting': 'same_kind', 'order': 'K', 'dtype': None,
                            'subok': True}


_NP_UFUNC_DTYPES = {'int8', 'uint8', 'int32', 'int64', 'float16', 'float32', 'float64',
                    _np.int8, _np.uint8, _np.int32, _np.int64, _np.float16, _np.float32, _np.float64}


def np_ufunc_legal_option(key, value):
    """Whether ``value`` is a value NumPy accepts for the ufunc keyword ``key``.

    >>> import neomx as mx
    >>> mx.util.np_ufunc_legal_option('casting', 'unsafe'), mx.util.np_ufunc_legal_option('casting', 'bad')
    (True, False)
    """
    if key == 'where':
        return True
    if key == 'casting':
        return value in ('no', 'equiv', 'safe', 'same_kind', 'unsafe')
    if key == 'order':
        return isinstance(value, str)
    if key == 'dtype':
        return value in _NP_UFUNC_DTYPES
    if key == 'subok':
        return isinstance(value, bool)
    return False


def _check_ufunc_kwargs(func_name, kwargs, not_implemented_message):
    for key, value in kwargs.items():
        if key not in _NP_UFUNC_DEFAULT_KWARGS:
            raise TypeError("{} is an invalid keyword to function '{}'".format(key, func_name))
        if value != _NP_UFUNC_DEFAULT_KWARGS[key]:
            if np_ufunc_legal_option(key, value):
                raise NotImplementedError(not_implemented_message.format(key=key, value=value,
                                                                         name=func_name))
            raise TypeError('{}={} not understood for operator {}'.format(key, value, func_name))


def wrap_np_unary_func(func):
    """Decorator for an np unary ufunc ``func(x, out=None)``: NumPy's ufunc keywords are
    accepted with their default values; others raise TypeError, other legal values
    NotImplementedError (as MXNet's)."""
    @functools.wraps(func)
    def wrapped(x, out=None, **kwargs):
        if kwargs:
            _check_ufunc_kwargs(func.__name__, kwargs, '{key}={value} is not implemented yet for operator {name}')
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func):
    """Decorator for an np binary ufunc ``func(x1, x2, out=None)``, as :func:`wrap_np_unary_func`."""
    @functools.wraps(func)
    def wrapped(x1, x2, out=None, **kwargs):
        if kwargs:
            _check_ufunc_kwargs(func.__name__, kwargs, '{key}={value} is not implemented yet')
        return func(x1, x2, out=out)
    return wrapped


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
