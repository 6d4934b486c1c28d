"""Log-uniform (Zipfian) candidate sampling: ``mx.nd.contrib.rand_zipfian`` (with
replacement, as sampled softmax uses it) and ``_sample_unique_zipfian`` (without)."""
import math

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _probabilities(range_max):
    c = np.arange(range_max)
    return np.log((c + 2.0) / (c + 1.0)) / math.log(range_max + 1)


def test_rand_zipfian_expected_counts_and_dtypes():
    mx.random.seed(3)
    samples, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([3, 0]), 4, 5)
    assert samples.dtype == np.int64 and exp_true.dtype == np.float64 and samples.shape == (4,)
    # values MXNet 1.9.1 gives for true classes 3 and 0
    np.testing.assert_allclose(exp_true.asnumpy(), [0.49815515, 1.54741123], rtol=1e-7)
    np.testing.assert_allclose(exp_sampled.asnumpy(), _probabilities(5)[samples.asnumpy()] * 4, rtol=1e-7)


def test_rand_zipfian_follows_the_log_uniform_distribution():
    mx.random.seed(0)
    samples = mx.nd.contrib.rand_zipfian(mx.nd.array([0]), 20000, 6)[0].asnumpy()
    assert samples.min() >= 0 and samples.max() < 6
    freq = np.bincount(samples, minlength=6) / samples.size
    np.testing.assert_allclose(freq, _probabilities(6), atol=0.015)


def test_rand_zipfian_symbol_has_three_outputs():
    outs = mx.sym.contrib.rand_zipfian(mx.sym.var('t'), 3, 7)
    assert len(outs) == 3
    assert outs[1].eval(t=mx.nd.array([0]))[0].asnumpy().tolist() == pytest.approx([3 * math.log(2) / math.log(8)])


def test_sample_unique_zipfian_draws_distinct_classes():
    mx.random.seed(1)
    samples, trials = mx.nd._internal._sample_unique_zipfian(range_max=50, shape=(3, 20))
    assert samples.shape == (3, 20) and samples.dtype == np.int64 and trials.shape == (3,)
    for row, tries in zip(samples.asnumpy(), trials.asnumpy()):
        assert len(set(row.tolist())) == 20 and row.min() >= 0 and row.max() < 50
        assert tries >= 20
    with pytest.raises(MXNetError, match='distinct'):
        mx.nd._internal._sample_unique_zipfian(range_max=5, shape=(1, 6))
