"""``mx.npx.random``: seeding, and the samplers NumPy lacks (``bernoulli``, ``normal_n``,
``uniform_n``), on ``mx.np`` arrays, from the registry's ``_npi_bernoulli``,
``_npi_normal_n`` and ``_npi_uniform_n`` operators. Like ``mx.np``'s functions they record
graph nodes when given Symbols (``F.npx.random.normal_n`` in ``hybrid_forward``)."""
import numbers

import numpy as _onp

from .. import random as _mx_random
from ..numpy import ndarray as _ndarray
from ..numpy.multiarray import run as _run

__all__ = ['seed', 'bernoulli', 'normal_n', 'uniform_n']


def seed(seed, ctx='all'):  # pylint: disable=redefined-outer-name
    """Seed the random number generators of all devices, or of ``ctx``'s (``mx.random.seed``).

    >>> from neomx import np, npx
    >>> npx.random.seed(128); a = np.random.uniform(size=(2,))
    >>> npx.random.seed(128); b = np.random.uniform(size=(2,))
    >>> bool((a == b).all())
    True
    """
    _mx_random.seed(seed, ctx=ctx)


def _is_number(value):
    return isinstance(value, (numbers.Number, _onp.generic))


def _two_parameters(op, first, second, batch_shape, dtype, ctx):
    arrays = [p for p in (first, second) if not _is_number(p)]
    numbers_ = [None if not _is_number(p) else float(p) for p in (first, second)]
    if isinstance(batch_shape, numbers.Integral):
        batch_shape = (int(batch_shape),)
    arrays += [None] * (2 - len(arrays))
    return _run(op, arrays, (numbers_[0], numbers_[1], batch_shape, ctx, dtype))


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Normal samples of shape ``batch_shape + broadcast(loc, scale).shape``.

    >>> from neomx import np, npx
    >>> npx.random.normal_n(np.zeros((3,)), 1.0, batch_shape=(2,)).shape
    (2, 3)
    """
    return _two_parameters('_npi_normal_n', loc, scale, batch_shape, dtype, ctx)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Uniform samples in ``[low, high)`` of shape ``batch_shape + broadcast(low, high).shape``.

    >>> from neomx import np, npx
    >>> x = npx.random.uniform_n(1.0, 2.0, batch_shape=(4,))
    >>> x.shape, bool(((x >= 1) & (x < 2)).all())
    ((4,), True)
    """
    return _two_parameters('_npi_uniform_n', low, high, batch_shape, dtype, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Bernoulli samples: 1 with probability ``prob`` (or ``sigmoid(logit)``; give one of
    them), of shape ``size`` (default: the parameter's shape).

    Raises
    ------
    ValueError
        When both or neither of ``prob`` and ``logit`` are given, or ``prob`` leaves [0, 1].

    >>> from neomx import np, npx
    >>> npx.random.bernoulli(prob=np.array([0., 1.]))
    array([0., 1.])
    """
    if (prob is None) == (logit is None):
        raise ValueError('Either `prob` or `logit` must be specified, but not both. '
                         'Received prob={}, logit={}'.format(prob, logit))
    is_logit = prob is None
    param = logit if is_logit else prob
    if isinstance(size, numbers.Integral):
        size = (int(size),)
    if _is_number(param):
        attrs = (None, float(param), size, ctx, dtype, True) if is_logit else \
            (float(param), None, size, ctx, dtype, False)
        return _run('_npi_bernoulli', (None,), attrs, out)
    return _run('_npi_bernoulli', (param,), (None, None, size, ctx, dtype, is_logit), out)
