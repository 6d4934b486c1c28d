"""Densities of samples under MXNet's distributions: ``_random_pdf_<dist>``
(``mx.nd.random.pdf_normal``, ``mx.nd.random_pdf_normal``...).

The parameters have one shape ``S`` (one distribution per element); ``sample`` has shape
``S + T``: every element of its trailing part is a sample of the distribution at its
leading index, and the output has ``sample``'s shape. Dirichlet's ``alpha`` is ``S + (k,)``
and ``sample`` ``S + T + (k,)``, giving ``S + T``.

As MXNet's kernels, the formulas are applied without checking the support (a uniform
density is ``1 / (high - low)`` everywhere, Poisson's extends to real samples through
``lgamma``), ``gamma``'s ``beta`` is a rate and ``negative_binomial``'s ``p`` the success
probability. Gradients with respect to the samples (zero for the discrete distributions,
as in MXNet) and the parameters come from torch.
"""
import torch

from .registry import BOOL, check, register


def _log_uniform(x, low, high):
    return -torch.log(high - low).expand_as(x)


def _log_normal(x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - torch.log(sigma) - 0.5 * torch.log(x.new_tensor(2 * torch.pi))


def _log_gamma(x, alpha, beta):
    return alpha * torch.log(beta) + (alpha - 1) * torch.log(x) - beta * x - torch.lgamma(alpha)


def _log_exponential(x, lam):
    return torch.log(lam) - lam * x


def _log_poisson(x, lam):
    return x * torch.log(lam) - torch.lgamma(x + 1) - lam


def _log_negative_binomial(x, k, p):
    return (torch.lgamma(x + k) - torch.lgamma(x + 1) - torch.lgamma(k)
            + k * torch.log(p) + x * torch.log1p(-p))


def _log_generalized_negative_binomial(x, mu, alpha):
    # Mean mu and variance mu + alpha * mu^2: a negative binomial with k = 1 / alpha and
    # success probability 1 / (1 + alpha * mu).
    return _log_negative_binomial(x, 1 / alpha, 1 / (1 + alpha * mu))


def _log_dirichlet(x, alpha):
    return (((alpha - 1) * torch.log(x)).sum(-1) + torch.lgamma(alpha.sum(-1))
            - torch.lgamma(alpha).sum(-1))


_DISCRETE = frozenset(['poisson', 'negative_binomial', 'generalized_negative_binomial'])
_DENSITIES = {
    'uniform': (_log_uniform, ('low', 'high')),
    'normal': (_log_normal, ('mu', 'sigma')),
    'gamma': (_log_gamma, ('alpha', 'beta')),
    'exponential': (_log_exponential, ('lam',)),
    'poisson': (_log_poisson, ('lam',)),
    'negative_binomial': (_log_negative_binomial, ('k', 'p')),
    'generalized_negative_binomial': (_log_generalized_negative_binomial, ('mu', 'alpha')),
    'dirichlet': (_log_dirichlet, ('alpha',)),
}


def _aligned(op, names, sample, params, vector):
    """The parameters reshaped to broadcast against ``sample`` (trailing sample axes added)."""
    first = params[0]
    for name, p in zip(names[1:], params[1:]):
        check(p.shape == first.shape, op, 'parameter %s has shape %s but %s has shape %s', name, p.shape,
              names[0], first.shape)
    lead = first.dim() - 1 if vector else first.dim()
    check(sample.dim() >= first.dim() and sample.shape[:lead] == first.shape[:lead]
          and (not vector or sample.shape[-1] == first.shape[-1]), op,
          'the parameters of shape %s must match the leftmost part of sample, of shape %s',
          first.shape, sample.shape)
    extra = sample.dim() - first.dim()
    if vector:
        return [p.reshape(p.shape[:-1] + (1,) * extra + p.shape[-1:]) for p in params]
    return [p.reshape(p.shape + (1,) * extra) for p in params]


def _register_density(dist, log_density, names):
    op = '_random_pdf_' + dist
    vector = dist == 'dirichlet'

    def density(sample, *params, is_log):
        params = _aligned(op, names, sample, params, vector)
        if dist in _DISCRETE:       # counts: MXNet gives their samples no gradient
            sample = sample.detach()
        log_pdf = log_density(sample, *params)
        return log_pdf if is_log else torch.exp(log_pdf)
    density.__name__ = 'pdf_' + dist
    density.__doc__ = ('The %s density (``is_log``: its logarithm) of each sample under the distribution '
                       'of parameters %s at its leading index.' % (dist, ', '.join(names)))
    register(op, aliases=('random_pdf_' + dist,), inputs=('sample',) + names,
             attrs=[('is_log', BOOL, False)])(density)


for _dist, (_log_density, _names) in _DENSITIES.items():
    _register_density(_dist, _log_density, _names)
