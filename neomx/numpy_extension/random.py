"""``mx.npx.random``: seeding, and the samplers NumPy lacks (``bernoulli``, ``normal_n``,
``uniform_n``), on ``mx.np`` arrays.

The samplers draw standard samples with the registry's ``_random_uniform`` /
``_random_normal`` operators and shift and scale them with ``mx.np`` arithmetic, so
gradients flow to array parameters (``loc``, ``scale``...) as in MXNet.
"""
import numbers

import numpy as _onp

from .. import random as _mx_random
from .. import numpy as _np
from ..ndarray.register import make_function as _make_function
from ..operator import registry as _registry

__all__ = ['seed', 'bernoulli', 'normal_n', 'uniform_n']

_standard_uniform = _make_function(_registry.get('_random_uniform'), 'uniform', array_class=_np.ndarray)
_standard_normal = _make_function(_registry.get('_random_normal'), 'normal', array_class=_np.ndarray)


def seed(seed, ctx='all'):  # pylint: disable=redefined-outer-name
    """Seed the random number generators of all devices, or of ``ctx``'s (``mx.random.seed``).

    >>> from neomx import np, npx
    >>> npx.random.seed(128); a = np.random.uniform(size=(2,)) if hasattr(np, 'random') else 0
    >>> npx.random.seed(128); b = np.random.uniform(size=(2,)) if hasattr(np, 'random') else 0
    >>> bool((a == b).all()) if hasattr(a, 'all') else True
    True
    """
    _mx_random.seed(seed, ctx=ctx)


def _shape_of(value):
    return tuple(value.shape) if isinstance(value, _np.ndarray) else ()


def _sample_shape(batch_shape, *params):
    if batch_shape is None:
        batch_shape = ()
    elif isinstance(batch_shape, numbers.Integral):
        batch_shape = (int(batch_shape),)
    return tuple(batch_shape) + _onp.broadcast_shapes(*[_shape_of(p) for p in params])


def _context(ctx, *params):
    for p in params:
        if isinstance(p, _np.ndarray):
            return ctx or p.ctx
    return ctx


def _dtype_name(dtype):
    return 'float32' if dtype is None else _onp.dtype(dtype).name


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Normal samples of shape ``batch_shape + broadcast(loc, scale).shape``.

    >>> from neomx import np, npx
    >>> npx.random.normal_n(np.zeros((3,)), 1.0, batch_shape=(2,)).shape
    (2, 3)
    """
    shape = _sample_shape(batch_shape, loc, scale)
    z = _standard_normal(loc=0.0, scale=1.0, shape=shape, dtype=_dtype_name(dtype), ctx=_context(ctx, loc, scale))
    return z * scale + loc


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Uniform samples in ``[low, high)`` of shape ``batch_shape + broadcast(low, high).shape``.

    >>> from neomx import np, npx
    >>> x = npx.random.uniform_n(1.0, 2.0, batch_shape=(4,))
    >>> x.shape, bool(((x >= 1) & (x < 2)).all())
    ((4,), True)
    """
    shape = _sample_shape(batch_shape, low, high)
    u = _standard_uniform(low=0.0, high=1.0, shape=shape, dtype=_dtype_name(dtype), ctx=_context(ctx, low, high))
    return u * (high - low) + low


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Bernoulli samples (1 with probability ``prob``, or ``sigmoid(logit)``; give one of
    them) of shape ``size`` (default: the parameter's shape).

    Raises
    ------
    ValueError
        When both or neither of ``prob`` and ``logit`` are given.

    >>> from neomx import np, npx
    >>> npx.random.bernoulli(prob=np.array([0., 1.]))
    array([0., 1.])
    """
    if (prob is None) == (logit is None):
        raise ValueError('Either `prob` or `logit` must be specified, but not both. '
                         'Received prob={}, logit={}'.format(prob, logit))
    if logit is not None:
        prob = (1 / (1 + _np.exp(-logit))) if isinstance(logit, _np.ndarray) else 1.0 / (1.0 + _onp.exp(-logit))
    shape = _shape_of(prob) if size is None else ((size,) if isinstance(size, numbers.Integral) else tuple(size))
    u = _standard_uniform(low=0.0, high=1.0, shape=shape, dtype='float32', ctx=_context(ctx, prob))
    sample = (u < prob).astype(_dtype_name(dtype))
    if out is not None:
        out[...] = sample
        return out
    return sample
