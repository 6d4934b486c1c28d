"""``mx.np.random`` (MXNet 1.9.1's ``mxnet.numpy.random``): samplers from the registry's
``_npi_*`` random operators; float32 by default, seeded by ``mx.random.seed``."""
import numpy as _np

from ..context import as_context
from ._array import ndarray
from ._invoke import run, into_out

__all__ = ['randint', 'uniform', 'normal', 'choice', 'rand', 'multinomial', 'multivariate_normal',
           'logistic', 'gumbel', 'shuffle', 'randn', 'gamma', 'beta', 'chisquare', 'exponential', 'lognormal',
           'weibull', 'pareto', 'power', 'rayleigh']


def _draw(op, params, size, ctx, dtype, out):
    """Run sampler ``op``: each parameter an array input or a scalar attribute."""
    arrays, values = [], []
    for p in params:
        if isinstance(p, ndarray) or hasattr(p, '_heads'):     # an array, or a Symbol in a hybridized block
            arrays.append(p)
            values.append(None)
        elif isinstance(p, (list, tuple, _np.ndarray)):
            from ._array import array
            arrays.append(array(p, ctx=ctx))
            values.append(None)
        else:
            arrays.append(None)
            values.append(float(p))
    if size == ():
        size = None
    if ctx is None and not any(a is not None for a in arrays):
        ctx = as_context(None)
    res = run(op, arrays, tuple(values) + (size, ctx, dtype), ctx=None if ctx is None else as_context(ctx))
    return into_out(res, out)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples of the uniform distribution on [low, high)."""
    return _draw('_npi_uniform', (low, high), size, ctx, dtype, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples of the normal distribution."""
    return _draw('_npi_normal', (loc, scale), size, ctx, dtype, out)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples of the log-normal distribution."""
    from .multiarray import exp
    return into_out(exp(normal(mean, sigma, size, dtype, ctx)), out)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples of the logistic distribution."""
    return _draw('_npi_logistic', (loc, scale), size, ctx, None, out)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples of the Gumbel distribution."""
    return _draw('_npi_gumbel', (loc, scale), size, ctx, None, out)


def gamma(shape, scale=1.0, size=None, dtype=None, ctx=None, out=None):  # pylint: disable=redefined-outer-name
    """Samples of the gamma distribution."""
    return _draw('_npi_gamma', (shape, scale), size, ctx, dtype, out)


def beta(a, b, size=None, dtype=None, ctx=None):
    """Samples of the beta distribution (ratio of gamma draws)."""
    x = gamma(a, 1.0, size, 'float64', ctx)
    y = gamma(b, 1.0, size, 'float64', ctx)
    return (x / (x + y)).astype(dtype or 'float32')


def chisquare(df, size=None, dtype=None, ctx=None):
    """Samples of the chi-square distribution (gamma(df / 2, 2))."""
    return gamma(df / 2 if not isinstance(df, ndarray) else df / 2, 2.0, size, dtype, ctx)


def exponential(scale=1.0, size=None, ctx=None, out=None):
    """Samples of the exponential distribution."""
    return _draw('_npi_exponential', (scale,), size, ctx, None, out)


def weibull(a, size=None, ctx=None, out=None):
    """Samples of the Weibull distribution."""
    return _draw('_npi_weibull', (a,), size, ctx, None, out)


def pareto(a, size=None, ctx=None, out=None):
    """Samples of the Pareto II (Lomax) distribution."""
    return _draw('_npi_pareto', (a,), size, ctx, None, out)


def power(a, size=None):
    """Samples of the power distribution on [0, 1]."""
    return _draw('_npi_powerd', (a,), size, None, None, None)


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    """Samples of the Rayleigh distribution."""
    return _draw('_npi_rayleigh', (scale,), size, ctx, None, out)


def rand(*size, **kwargs):
    """Uniform samples on [0, 1) of shape ``size``."""
    return uniform(size=size or None, **kwargs)


def randn(*size, **kwargs):
    """Standard normal samples of shape ``size``."""
    return normal(size=size or None, **kwargs)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers drawn uniformly from [low, high) (int64 unless ``dtype``)."""
    if high is None:
        low, high = 0, low
    if size is None:
        size = ()
    res = run('_npi_random_randint', (), (int(low), int(high), size, ctx, dtype), ctx=as_context(ctx))
    return into_out(res, out)


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """Samples of ``a`` (an array, or range(a) for an int), uniformly or with probabilities ``p``."""
    ctx_ = as_context(ctx)
    if isinstance(a, ndarray) or hasattr(a, '_heads'):     # an array, or a Symbol
        res = run('_npi_choice', (a, p), (None, size, ctx, replace, p is not None), ctx=ctx_)
    else:
        res = run('_npi_choice', (None, p), (int(a), size, ctx, replace, p is not None), ctx=ctx_)
    return into_out(res, out)


def multinomial(n, pvals, size=None, **kwargs):
    """Counts of ``n`` draws over outcomes with probabilities ``pvals``."""
    if isinstance(pvals, ndarray):
        return run('_npi_multinomial', (pvals,), (n, None, size))
    return run('_npi_multinomial', (None,), (n, list(pvals), size), ctx=as_context(kwargs.get('ctx')))


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples of the multivariate normal distribution (``mean + L @ eps``, ``L`` the Cholesky
    factor of ``cov``), of shape ``size + batch + (k,)``."""
    if check_valid is not None or tol is not None:
        raise NotImplementedError('multivariate_normal: check_valid and tol are not supported (as in MXNet)')
    return run('_npi_mvn_fallback', (mean, cov), (size,))


def shuffle(x):
    """Shuffle ``x`` in place along its first axis."""
    x[...] = run('_npi_shuffle', (x,))
