"""mx.nd.random / mx.random samplers: distributions, shapes, dtypes, seeding, errors.

Statistics use 20000 draws and loose bounds (several standard errors), so they are
deterministic in practice and each test is seeded anyway.
"""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.test_utils import check_numeric_gradient

rnd = mx.nd.random
N = 20000


@pytest.fixture(autouse=True)
def _seed():
    mx.random.seed(1234)


def _moments(arr):
    x = arr.asnumpy().astype(np.float64)
    return x.mean(), x.var()


# name -> (sampler call with scalar parameters, expected mean, expected variance)
SCALAR_CASES = {
    'uniform': (lambda: rnd.uniform(-1, 3, shape=(N,)), 1.0, 16 / 12),
    'normal': (lambda: rnd.normal(2, 0.5, shape=(N,)), 2.0, 0.25),
    'randn': (lambda: rnd.randn(N, loc=-1, scale=2), -1.0, 4.0),
    'gamma': (lambda: rnd.gamma(2, 3, shape=(N,)), 6.0, 18.0),
    'exponential': (lambda: rnd.exponential(2, shape=(N,)), 2.0, 4.0),
    'poisson': (lambda: rnd.poisson(3, shape=(N,)), 3.0, 3.0),
    'negative_binomial': (lambda: rnd.negative_binomial(3, 0.4, shape=(N,)), 4.5, 11.25),
    'generalized_negative_binomial': (lambda: rnd.generalized_negative_binomial(3, 0.4, shape=(N,)), 3.0, 6.6),
    'generalized_negative_binomial_poisson_limit':
        (lambda: rnd.generalized_negative_binomial(3, 0, shape=(N,)), 3.0, 3.0),
    'randint': (lambda: rnd.randint(-2, 8, shape=(N,)), 2.5, 99 / 12),
}


@pytest.mark.parametrize('case', sorted(SCALAR_CASES))
def test_scalar_parameter_moments(case):
    draw, mean, var = SCALAR_CASES[case]
    got_mean, got_var = _moments(draw())
    assert abs(got_mean - mean) < 0.05 * max(1.0, abs(mean)), (got_mean, mean)
    assert abs(got_var - var) < 0.08 * var, (got_var, var)


def test_supports_and_integrality():
    u = rnd.uniform(2, 5, shape=(N,)).asnumpy()
    assert u.min() >= 2 and u.max() < 5
    r = rnd.randint(-3, 4, shape=(N,)).asnumpy()
    assert set(np.unique(r)) == set(range(-3, 4))
    for counts in [rnd.poisson(2, shape=(100,)), rnd.negative_binomial(2, 0.5, shape=(100,))]:
        c = counts.asnumpy()
        assert counts.dtype == np.float32 and (c >= 0).all() and (c == np.round(c)).all()
    assert (rnd.negative_binomial(3, 1, shape=(5,)).asnumpy() == 0).all()     # p = 1: no failures
    assert (rnd.poisson(0, shape=(5,)).asnumpy() == 0).all()


def test_array_parameters_sample_per_element():
    mu = mx.nd.array([[0.0, 10.0], [-10.0, 100.0]])
    sigma = mx.nd.array([[1.0, 0.1], [2.0, 0.5]])
    out = rnd.normal(mu, sigma, shape=(N // 4,))
    assert out.shape == (2, 2, N // 4) and out.dtype == np.float32
    x = out.asnumpy()
    np.testing.assert_allclose(x.mean(axis=-1), mu.asnumpy(), atol=0.1)
    np.testing.assert_allclose(x.std(axis=-1), sigma.asnumpy(), rtol=0.05)
    lam = mx.nd.array([1.0, 4.0])
    np.testing.assert_allclose(rnd.exponential(1 / lam, shape=(N,)).asnumpy().mean(axis=-1), [1.0, 0.25],
                               rtol=0.05)
    np.testing.assert_allclose(rnd.poisson(lam, shape=(N,)).asnumpy().mean(axis=-1), [1.0, 4.0], rtol=0.05)
    g = rnd.gamma(mx.nd.array([1.0, 5.0]), mx.nd.array([2.0, 0.5]), shape=(N,)).asnumpy()
    np.testing.assert_allclose(g.mean(axis=-1), [2.0, 2.5], rtol=0.05)
    nb = rnd.negative_binomial(mx.nd.array([2.0, 5.0]), mx.nd.array([0.5, 0.8]), shape=(N,)).asnumpy()
    np.testing.assert_allclose(nb.mean(axis=-1), [2.0, 1.25], rtol=0.06)
    gnb = rnd.generalized_negative_binomial(mx.nd.array([2.0, 3.0]), mx.nd.array([0.0, 0.5]),
                                            shape=(N,)).asnumpy()
    np.testing.assert_allclose(gnb.mean(axis=-1), [2.0, 3.0], rtol=0.05)
    np.testing.assert_allclose(gnb.var(axis=-1), [2.0, 7.5], rtol=0.1)
    u = rnd.uniform(mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 11.0]), shape=(3,)).asnumpy()
    assert ((u[0] >= 0) & (u[0] < 1)).all() and ((u[1] >= 10) & (u[1] < 11)).all()


def test_shapes_dtypes_and_contexts():
    assert rnd.uniform().shape == (1,)                       # one sample by default
    assert rnd.normal(shape=3).shape == (3,)
    assert rnd.randn(2, 3).shape == (2, 3)
    for dtype in ['float16', 'float32', 'float64']:
        assert rnd.gamma(2, 2, shape=(2,), dtype=dtype).dtype == np.dtype(dtype)
    assert rnd.randint(0, 5, shape=(2,)).dtype == np.int32
    assert rnd.randint(0, 5, shape=(2,), dtype='int64').dtype == np.int64
    assert rnd.uniform(shape=(2,), ctx=mx.cpu(1)).context == mx.cpu(1)
    with mx.cpu(2):
        assert rnd.poisson(shape=(2,)).context == mx.cpu(2)
    # Array parameters: float32 unless told (even for float64 parameters), their context.
    lo = mx.nd.array([0, 1], dtype='float64', ctx=mx.cpu(1))
    hi = mx.nd.array([1, 2], dtype='float64', ctx=mx.cpu(1))
    s = rnd.uniform(lo, hi)
    assert s.shape == (2,) and s.dtype == np.float32 and s.context == mx.cpu(1)
    assert rnd.uniform(lo, hi, shape=(3, 4), dtype='float64').shape == (2, 3, 4)
    # out= decides shape and dtype.
    out = mx.nd.zeros((2, 3), dtype='float64')
    res = rnd.uniform(5, 6, out=out)
    assert res is out and out.dtype == np.float64 and (out.asnumpy() >= 5).all()


def test_like_samplers_follow_their_input():
    data = mx.nd.zeros((3, 4), dtype='float64', ctx=mx.cpu(1))
    for sample in [rnd.uniform_like(data, low=2, high=3), rnd.normal_like(data), rnd.gamma_like(data),
                   rnd.exponential_like(data, lam=4), rnd.poisson_like(data), rnd.negative_binomial_like(data),
                   rnd.generalized_negative_binomial_like(data)]:
        assert sample.shape == (3, 4) and sample.dtype == np.float64 and sample.context == mx.cpu(1)
    assert rnd.exponential_like(mx.nd.zeros((N,)), lam=4).asnumpy().mean() == pytest.approx(0.25, rel=0.05)


def test_seed_makes_every_sampler_reproducible():
    def draws():
        p = mx.nd.array([[0.2, 0.3, 0.5]])
        return [rnd.uniform(shape=(4,)), rnd.normal(mx.nd.zeros((2,)), mx.nd.ones((2,)), shape=(2,)),
                rnd.gamma(0.5, 1, shape=(4,)), rnd.poisson(3, shape=(4,)), rnd.randint(0, 100, shape=(4,)),
                rnd.generalized_negative_binomial(2, 1, shape=(4,)), rnd.multinomial(p, shape=4),
                rnd.shuffle(mx.nd.arange(10))]
    mx.random.seed(7)
    first = [d.asnumpy() for d in draws()]
    mx.random.seed(7)
    second = [d.asnumpy() for d in draws()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], rnd.uniform(shape=(4,)).asnumpy())


def test_mx_random_reexports_samplers():
    for name in ['uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson',
                 'negative_binomial', 'generalized_negative_binomial', 'multinomial', 'shuffle']:
        assert getattr(mx.random, name) is getattr(rnd, name)
    for op in ['_random_uniform', '_random_normal', '_random_randint', '_random_gamma', '_random_exponential',
               '_random_poisson', '_random_negative_binomial', '_random_generalized_negative_binomial',
               '_sample_uniform', '_sample_normal', '_sample_gamma', '_sample_exponential', '_sample_poisson',
               '_sample_negative_binomial', '_sample_generalized_negative_binomial', '_sample_multinomial',
               '_shuffle']:
        assert callable(getattr(mx.nd._internal, op))
    # Registry functions take MXNet's attribute order: parameters, shape, ctx, dtype.
    assert mx.nd._internal._random_normal(5, 1e-6, (2,), None, 'float64').asnumpy() == pytest.approx([5, 5])


def test_multinomial_shapes_dtypes_and_log_probabilities():
    probs = mx.nd.array([[0.1, 0.2, 0.7], [1.0, 0.0, 0.0]])
    assert rnd.multinomial(mx.nd.array([0.1, 0.2, 0.7])).shape == (1,)
    assert rnd.multinomial(probs).shape == (2,)
    samples = rnd.multinomial(probs, shape=(2, 3))
    assert samples.shape == (2, 2, 3) and samples.dtype == np.int32
    assert (samples.asnumpy()[1] == 0).all()
    assert rnd.multinomial(probs, dtype='float32').dtype == np.float32
    idx, log_p = rnd.multinomial(probs, shape=4, get_prob=True)
    assert idx.shape == log_p.shape == (2, 4) and log_p.dtype == np.float32
    expected = np.log(np.take_along_axis(probs.asnumpy(), idx.asnumpy().astype(int), axis=1))
    np.testing.assert_allclose(log_p.asnumpy(), expected, rtol=1e-6)
    freq = np.bincount(rnd.multinomial(mx.nd.array([0.1, 0.2, 0.7]), shape=N).asnumpy(), minlength=3) / N
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.015)


def test_multinomial_log_probability_gradient():
    def log_prob(p):
        mx.random.seed(3)            # the same draws for every finite-difference evaluation
        return rnd.multinomial(p, shape=3, get_prob=True)[1]
    check_numeric_gradient(log_prob, [np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])])


@pytest.mark.parametrize('dtype', ['int32', 'uint8', 'float32'])
def test_multinomial_gradient_belongs_to_the_returned_draws(dtype):
    # d log p[y] / d p = 1 / p[y] for each returned draw y: the operator runs once while
    # recording, also for integer samples (the dtype is the samples', not a cast)
    rnd = mx.nd.random
    p = mx.nd.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    p.attach_grad()
    with mx.autograd.record():
        y, log_p = rnd.multinomial(p, shape=500, get_prob=True, dtype=dtype)
    log_p.backward()
    assert y.dtype == np.dtype(dtype)
    draws, probs = y.asnumpy().astype(int), p.asnumpy()
    expected = np.zeros_like(probs)
    for row in range(2):
        np.add.at(expected[row], draws[row], 1.0 / probs[row, draws[row]])
    np.testing.assert_allclose(p.grad.asnumpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(log_p.asnumpy(), np.log(probs[np.arange(2)[:, None], draws]), rtol=1e-6)


def test_shuffle_permutes_first_axis_and_its_gradient():
    x = mx.nd.arange(12).reshape((4, 3))
    y = rnd.shuffle(x).asnumpy()
    assert y.shape == (4, 3)
    np.testing.assert_array_equal(np.sort(y[:, 0]), [0, 3, 6, 9])
    np.testing.assert_array_equal(y - y[:, :1], np.tile([0, 1, 2], (4, 1)))    # rows stay whole
    assert rnd.shuffle(mx.nd.arange(5, dtype='int32')).dtype == np.int32

    def shuffled(a):
        mx.random.seed(5)
        return rnd.shuffle(a) * mx.nd.array([[1.0], [2.0], [3.0]], dtype='float64')
    check_numeric_gradient(shuffled, [np.arange(6.0).reshape(3, 2)])


def test_no_gradient_flows_into_distribution_parameters():
    mu, x = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    mu.attach_grad()
    x.attach_grad()
    with mx.autograd.record():
        y = (x * rnd.normal(mu, mx.nd.ones((2,)))).sum()
    y.backward()
    np.testing.assert_array_equal(mu.grad.asnumpy(), [0, 0])
    assert np.abs(x.grad.asnumpy()).sum() > 0


@pytest.mark.parametrize('call, error, message', [
    (lambda: rnd.uniform(2, 1, shape=(2,)).asnumpy(), mx.base.MXNetError, 'low must be less or equal to high'),
    (lambda: rnd.normal(0, -1, shape=(2,)).asnumpy(), mx.base.MXNetError, 'scale must be positive'),
    (lambda: rnd.gamma(0, 1, shape=(2,)).asnumpy(), mx.base.MXNetError, 'alpha must be positive'),
    (lambda: rnd.poisson(-1, shape=(2,)).asnumpy(), mx.base.MXNetError, 'lam must be non-negative'),
    (lambda: rnd.negative_binomial(1.5, 0.5, shape=(2,)), mx.base.MXNetError, "argument 'k'"),
    (lambda: rnd.generalized_negative_binomial(1, -1, shape=(2,)).asnumpy(), mx.base.MXNetError,
     'alpha must be non-negative'),
    (lambda: rnd.uniform(shape=(2,), dtype='int32'), mx.base.MXNetError, "'float16', 'float32', 'float64'"),
    (lambda: rnd.randint(0, 5, dtype='float32'), mx.base.MXNetError, "'int32', 'int64'"),
    (lambda: rnd.randint(5, 5), mx.base.MXNetError, 'low must be less than high'),
    (lambda: rnd.uniform(shape=()), mx.base.MXNetError, 'shape must be given'),
    (lambda: rnd.uniform(mx.nd.zeros((2,)), 1), AssertionError, 'same type'),
    (lambda: rnd.uniform('a', 1), ValueError, 'NDArray or numbers'),
    (lambda: rnd.uniform(mx.nd.zeros((2,)), mx.nd.ones((3,))), mx.base.MXNetError, 'high has shape'),
    (lambda: rnd.uniform_like(mx.nd.zeros((2,), dtype='int32')), mx.base.MXNetError, 'floating point'),
    (lambda: rnd.multinomial(mx.nd.array([0.5, 0.5]), dtype='int64'), mx.base.MXNetError, "argument 'dtype'"),
    (lambda: rnd.shuffle(mx.nd.NDArray(torch.tensor(1.0))), mx.base.MXNetError, 'one axis'),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_bad_parameter_values_are_reported_at_the_read_as_mxnet():
    # MXNet checks them in the sampling kernel: the call returns, the first read (of the
    # result or of what is computed from it) or waitall raises, once
    a = rnd.normal(0, -1, shape=(2, 2))
    b = mx.nd.dot(a, a)
    with pytest.raises(mx.base.MXNetError, match='scale must be positive'):
        b.asnumpy()
    a.asnumpy()         # spent
    c = rnd.uniform(2, 1, shape=(2,))
    with pytest.raises(mx.base.MXNetError, match='low must be less or equal to high'):
        mx.nd.waitall()
    mx.nd.waitall()
    c.asnumpy()
    out = mx.sym.dot(mx.sym.var('x'), mx.sym.random.normal(0, -1, shape=(2, 2)))
    exe = out.bind(mx.current_context(), {'x': mx.nd.ones((2, 2))})
    res, = exe.forward()
    with pytest.raises(mx.base.MXNetError, match='scale must be positive'):
        res.asnumpy()


def test_an_error_whose_arrays_all_died_is_dropped_as_in_mxnet():
    # MXNet's waitall stays quiet about a failed result nobody holds any more (its own
    # test_exc_handling runs waitall after such calls), outside and inside compiled graphs
    def unread():
        mx.nd.dot(rnd.normal(0, -1, shape=(2, 2)), mx.nd.ones((2, 2)))
    unread()
    exe = mx.sym.random.normal(0, -1, shape=(2, 2)).bind(mx.cpu(), {})
    exe.forward()
    del exe
    import gc
    gc.collect()
    mx.nd.waitall()
    kept = rnd.normal(0, -1, shape=(2,))
    with pytest.raises(mx.base.MXNetError, match='scale must be positive'):
        mx.nd.waitall()
    del kept
