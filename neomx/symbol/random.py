"""``mx.sym.random``: sampling nodes with MXNet 1.9.1's signatures.

With numbers as distribution parameters a ``_random_*`` node draws an array of ``shape``;
with Symbols (all of one shape ``S``) a ``_sample_*`` node draws ``shape`` samples per
element, giving ``S + shape``. Unset ``shape``/``dtype`` are left out of the node, as MXNet does.
"""
from ..base import numeric_types
from ..ndarray.random import GENERATED
from . import _internal, random_internal
from .symbol import Symbol

globals().update({_name: getattr(random_internal, _name) for _name in GENERATED})

__all__ = ['uniform', 'normal', 'randn', 'poisson', 'exponential', 'gamma', 'multinomial',
           'negative_binomial', 'generalized_negative_binomial', 'shuffle', 'randint'] + list(GENERATED)


def _sample(dist, params, shape, dtype, kwargs):
    """A ``_sample_<dist>`` node for Symbol parameters, ``_random_<dist>`` for numbers."""
    if shape is not None:
        kwargs['shape'] = shape
    if dtype is not None:
        kwargs['dtype'] = dtype
    if isinstance(params[0], Symbol):
        if not all(isinstance(p, Symbol) for p in params):
            raise AssertionError('Distribution parameters must all be Symbols or all numbers')
        return getattr(_internal, '_sample_' + dist)(*params, **kwargs)
    if not all(isinstance(p, numeric_types) for p in params):
        raise ValueError('Distribution parameters must be either Symbol or numbers, but got %s'
                         % [type(p).__name__ for p in params])
    return getattr(_internal, '_random_' + dist)(*params, **kwargs)


def uniform(low=0, high=1, shape=None, dtype=None, **kwargs):
    """Samples of the uniform distribution on [low, high)."""
    return _sample('uniform', [low, high], shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs):
    """Samples of the normal distribution with mean ``loc`` and standard deviation ``scale``."""
    return _sample('normal', [loc, scale], shape, dtype, kwargs)


def randn(*shape, **kwargs):
    """Samples of the normal distribution of output shape ``shape`` (``loc``/``scale`` keywords)."""
    return _sample('normal', [kwargs.pop('loc', 0), kwargs.pop('scale', 1)], shape or None,
                   kwargs.pop('dtype', None), kwargs)


def poisson(lam=1, shape=None, dtype=None, **kwargs):
    """Samples of the Poisson distribution of rate ``lam``."""
    return _sample('poisson', [lam], shape, dtype, kwargs)


def exponential(scale=1, shape=None, dtype=None, **kwargs):
    """Samples of the exponential distribution of mean ``scale``."""
    return _sample('exponential', [1.0 / scale], shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, **kwargs):
    """Samples of the gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _sample('gamma', [alpha, beta], shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, **kwargs):
    """Failures before the ``k``-th success of trials succeeding with probability ``p``."""
    return _sample('negative_binomial', [k, p], shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, **kwargs):
    """Samples of mean ``mu`` and variance ``mu + alpha * mu**2``."""
    return _sample('generalized_negative_binomial', [mu, alpha], shape, dtype, kwargs)


def randint(low, high, shape=None, dtype=None, **kwargs):
    """Integers drawn uniformly from [low, high)."""
    return _sample('randint', [low, high], shape, dtype, kwargs)


def multinomial(data, shape=None, get_prob=True, dtype='int32', **kwargs):
    """Category indices drawn from the distributions on the last axis of ``data``."""
    if shape is not None:
        kwargs['shape'] = shape
    return _internal._sample_multinomial(data, get_prob=get_prob, dtype=dtype, **kwargs)


def shuffle(data, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return _internal._shuffle(data, **kwargs)
