"""Statistical checks of random generators: chi-square goodness of fit, mean and variance."""
import numpy as np
import torch

__all__ = ['gen_buckets_probs_with_ppf', 'chi_square_check', 'verify_generator', 'mean_check',
           'var_check']


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equally likely intervals of a distribution given its inverse CDF ``ppf``.

    Returns (buckets, probs): buckets as (low, high) pairs, probs all ``1 / nbuckets``.
    """
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def _chi2_sf(stat, dof):
    """P(chi-square with ``dof`` degrees of freedom > stat)."""
    value = torch.special.gammaincc(torch.tensor(dof / 2.0, dtype=torch.float64),
                                    torch.tensor(stat / 2.0, dtype=torch.float64))
    return float(value)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square test of ``generator(nsamples)`` against bucket probabilities.

    ``buckets`` are (low, high) intervals (continuous) or values (discrete).
    Returns (p_value, observed counts, expected counts).
    """
    if not np.isclose(np.sum(probs), 1.0):
        raise ValueError('bucket probabilities must sum to 1, got %s' % np.sum(probs))
    samples = generator(nsamples)
    samples = samples.asnumpy() if hasattr(samples, 'asnumpy') else np.asarray(samples)
    samples = samples.reshape(-1)
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        obs = np.array([np.count_nonzero((samples >= low) & (samples < high))
                        for low, high in buckets], dtype=np.float64)
    else:
        obs = np.array([np.count_nonzero(samples == value) for value in buckets], dtype=np.float64)
    expected = np.asarray(probs, dtype=np.float64) * nsamples
    keep = expected > 0
    stat = float(np.sum((obs[keep] - expected[keep]) ** 2 / expected[keep]))
    return _chi2_sf(stat, max(int(keep.sum()) - 1, 1)), obs, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Repeat ``chi_square_check``; fail unless at least ``success_rate`` of runs have p > alpha.

    Returns the p-values.
    """
    p_values = [chi_square_check(generator, buckets, probs, nsamples)[0] for _ in range(nrepeat)]
    passed = sum(p > alpha for p in p_values)
    if passed < success_rate * nrepeat:
        raise AssertionError('Generator test fails, Chi-square p=%s, obs=%s, expected=%s, '
                             'success rate %d/%d below %s'
                             % (str(p_values), 'see above', str(probs), passed, nrepeat,
                                success_rate))
    return p_values


def _samples(generator, nsamples):
    samples = generator(nsamples)
    return samples.asnumpy() if hasattr(samples, 'asnumpy') else np.asarray(samples)


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the sample mean lies within three standard errors of ``mu``."""
    mean = _samples(generator, nsamples).astype(np.float64).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < mean < mu + bound)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance lies within three standard errors of ``sigma ** 2``."""
    var = _samples(generator, nsamples).astype(np.float64).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < var < sigma ** 2 + bound)
