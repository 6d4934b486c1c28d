"""``mx.nd.random``: sampling functions with MXNet 1.9.1's signatures.

Each sampler takes its distribution parameters either as numbers -- then ``shape``
(default ``(1,)``), ``dtype`` and ``ctx`` describe the new array and the ``_random_*``
operator draws it -- or as NDArrays of one shape ``S`` -- then the ``_sample_*`` operator
draws ``shape`` samples from each element's distribution, giving shape ``S + shape`` on
the parameters' context. ``mx.random.seed`` makes the draws reproducible.
"""
from ..base import numeric_types
from ..context import current_context
from . import _internal, random_internal
from .ndarray import NDArray

# The ``*_like`` samplers and the ``pdf_*`` densities are the registry's ``_random_*``
# operators as they stand (MXNet generates both into this module).
GENERATED = ('exponential_like', 'gamma_like', 'generalized_negative_binomial_like', 'negative_binomial_like',
             'normal_like', 'poisson_like', 'uniform_like', 'pdf_uniform', 'pdf_normal', 'pdf_gamma',
             'pdf_exponential', 'pdf_poisson', 'pdf_negative_binomial', 'pdf_generalized_negative_binomial',
             'pdf_dirichlet')
globals().update({_name: getattr(random_internal, _name) for _name in GENERATED})

__all__ = ['uniform', 'normal', 'randn', 'poisson', 'exponential', 'gamma', 'multinomial',
           'negative_binomial', 'generalized_negative_binomial', 'shuffle', 'randint'] + list(GENERATED)


def _require_same_kind(params, kind):
    # MXNet asserts this; the AssertionError is kept so that callers catching it still work.
    for p in params[1:]:
        if not isinstance(p, kind):
            raise AssertionError('Distribution parameters must all have the same type, but got both %s and %s.'
                                 % (type(params[0]), type(p)))


def _sample(dist, params, shape, dtype, ctx, out, kwargs):
    """Draw from distribution ``dist`` with ``params`` all numbers or all NDArrays.

    Raises
    ------
    AssertionError
        When numbers and NDArrays are mixed (as MXNet does).
    ValueError
        When the parameters are neither.
    """
    first = params[0]
    if isinstance(first, NDArray):
        _require_same_kind(params, NDArray)
        sampler = getattr(_internal, '_sample_' + dist, None)
        if sampler is None:
            raise TypeError('%s takes numbers as parameters, not NDArrays' % dist)
        return sampler(*params, shape=() if shape is None else shape, dtype=dtype, out=out, **kwargs)
    if isinstance(first, numeric_types):
        _require_same_kind(params, numeric_types)
        if shape is None:
            # Without a shape the output decides it, else one sample.
            shape = (1,) if out is None else out.shape
            if out is not None and dtype is None:
                dtype = out.dtype
        return getattr(_internal, '_random_' + dist)(
            *params, shape=shape, dtype=dtype, ctx=ctx or current_context(), out=out, **kwargs)
    raise ValueError('Distribution parameters must be either NDArray or numbers, but got %s.' % type(first))


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the uniform distribution on [low, high).

    Parameters
    ----------
    low, high : float or NDArray
        Bounds; NDArrays of one shape ``S`` give one distribution per element.
    shape : int or tuple of int, optional
        Number of samples: the output shape with numbers (default ``(1,)``), appended to
        ``S`` with NDArrays.
    dtype : {'float16', 'float32', 'float64'}, optional
        Output dtype, float32 by default.
    ctx : Context, optional
        Device of the output when the parameters are numbers (default: current context).
    out : NDArray, optional
        Array to write the samples into.

    Returns
    -------
    NDArray
    """
    return _sample('uniform', [low, high], shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the normal distribution with mean ``loc`` and standard deviation ``scale``.

    Parameters, shapes and dtypes as in :func:`uniform`.
    """
    return _sample('normal', [loc, scale], shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs):
    """Samples of the normal distribution with output shape ``shape`` (``randn(2, 3)``).

    Keyword arguments ``loc`` (0), ``scale`` (1), ``dtype``, ``ctx`` and ``out`` as in
    :func:`normal`.
    """
    loc = kwargs.pop('loc', 0)
    scale = kwargs.pop('scale', 1)
    return _sample('normal', [loc, scale], shape or None, kwargs.pop('dtype', None), kwargs.pop('ctx', None),
                   kwargs.pop('out', None), kwargs)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high), int32 unless ``dtype='int64'``.

    ``low`` and ``high`` are integers; ``shape``, ``ctx`` and ``out`` as in :func:`uniform`.
    """
    return _sample('randint', [low, high], shape, dtype, ctx, out, kwargs)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with mean ``scale`` (rate ``1 / scale``).

    Parameters, shapes and dtypes as in :func:`uniform`.
    """
    return _sample('exponential', [1.0 / scale], shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta``.

    Parameters, shapes and dtypes as in :func:`uniform`.
    """
    return _sample('gamma', [alpha, beta], shape, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the Poisson distribution with rate ``lam`` (whole numbers, float dtype).

    Parameters, shapes and dtypes as in :func:`uniform`.
    """
    return _sample('poisson', [lam], shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Number of failures before the ``k``-th success, each trial succeeding with probability ``p``.

    Parameters, shapes and dtypes as in :func:`uniform`.
    """
    return _sample('negative_binomial', [k, p], shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples with mean ``mu`` and variance ``mu + alpha * mu**2`` (Poisson when ``alpha=0``).

    Parameters, shapes and dtypes as in :func:`uniform`.
    """
    return _sample('generalized_negative_binomial', [mu, alpha], shape, dtype, ctx, out, kwargs)


def multinomial(data, shape=None, get_prob=False, out=None, dtype='int32', **kwargs):
    """Category indices drawn from the distributions on the last axis of ``data``.

    Parameters
    ----------
    data : NDArray, shape (..., k)
        Probabilities of the k categories, summing to one on the last axis.
    shape : int or tuple of int, optional
        Samples per distribution; the output has shape ``data.shape[:-1] + shape``.
    get_prob : bool
        Also return the log-probability of each sample (differentiable w.r.t. ``data``).
    out : NDArray, optional
    dtype : {'int32', 'uint8', 'float16', 'float32', 'float64'}
        Dtype of the indices.

    Returns
    -------
    NDArray, or [samples, log_probabilities] with ``get_prob``
    """
    return _internal._sample_multinomial(data, shape=() if shape is None else shape, get_prob=get_prob,
                                         out=out, dtype=dtype, **kwargs)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted.

    Parameters
    ----------
    data : NDArray, shape (n, ...)

    Returns
    -------
    NDArray, shape (n, ...)
    """
    return _internal._shuffle(data, **kwargs)
