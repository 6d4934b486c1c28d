"""Reductions, norms, moments, cumsum, arg-reductions, sort/argsort/topk.

Values against numpy references and MXNet 1.9.1's recorded behaviour (shapes, dtypes,
errors); finite-difference gradient checks for every differentiable operator.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

X234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
# Distinct values so max/min/sort gradients are well defined for finite differences.
DISTINCT = np.random.RandomState(0).permutation(24).reshape(2, 3, 4) / 7.0 - 1.5


def _x():
    return mx.nd.array(X234)


# -------------------------------------------------------------- reductions
NUMPY_REDUCTIONS = {'sum': np.sum, 'mean': np.mean, 'prod': np.prod, 'max': np.max, 'min': np.min}


@pytest.mark.parametrize('name', sorted(NUMPY_REDUCTIONS))
@pytest.mark.parametrize('axis', [None, 0, -1, (0, 2)])
@pytest.mark.parametrize('keepdims', [False, True])
def test_reduction_matches_numpy(name, axis, keepdims):
    data = X234 / 10
    out = getattr(mx.nd, name)(mx.nd.array(data), axis=axis, keepdims=keepdims)
    expected = NUMPY_REDUCTIONS[name](data, axis=axis, keepdims=keepdims)
    expected = np.reshape(expected, (1,)) if np.ndim(expected) == 0 else expected   # MXNet: no 0-d
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_full_reduction_has_shape_1():
    assert mx.nd.ones((2, 3)).sum().shape == (1,)
    assert mx.nd.sum(_x(), axis=()).asnumpy().tolist() == [36]
    assert mx.nd.sum(_x(), keepdims=True).shape == (1, 1, 1)


def test_exclude_reduces_the_other_axes():
    x = _x()
    np.testing.assert_array_equal(mx.nd.sum(x, axis=1, exclude=True).asnumpy(), X234.sum(axis=(0, 2)))
    assert mx.nd.sum(x, axis=(0, 2), exclude=True, keepdims=True).shape == (2, 1, 4)
    np.testing.assert_array_equal(mx.nd.sum(x, axis=(0, 1, 2), exclude=True).asnumpy(), X234)


def test_aliases_and_methods():
    x = _x()
    np.testing.assert_array_equal(mx.nd.sum_axis(x, 1).asnumpy(), X234.sum(axis=1))
    np.testing.assert_array_equal(mx.nd.max_axis(x, axis=0).asnumpy(), X234.max(axis=0))
    np.testing.assert_array_equal(mx.nd.min_axis(x, axis=2).asnumpy(), X234.min(axis=2))
    np.testing.assert_array_equal(x.sum(0).asnumpy(), X234.sum(axis=0))
    np.testing.assert_array_equal(x.nansum(axis=2).asnumpy(), X234.sum(axis=2))


def test_integer_reductions_keep_dtype_and_truncate_means():
    x = mx.nd.array([[1, 2], [3, 4]], dtype='int32')
    assert x.sum(axis=0).dtype == np.int32 and x.sum(axis=0).asnumpy().tolist() == [4, 6]
    assert x.mean(axis=1).asnumpy().tolist() == [1, 3]
    assert mx.nd.array([[-1, -2]], dtype='int32').mean(axis=1).asnumpy().tolist() == [-1]
    assert x.prod().asnumpy().tolist() == [24] and x.max().asnumpy().tolist() == [4]
    assert mx.nd.array([100, 100], dtype='int8').sum().asnumpy().tolist() == [-56]     # wraps


def test_nan_reductions():
    x = mx.nd.array([[1, np.nan, 2], [np.nan, np.nan, 3]])
    np.testing.assert_array_equal(mx.nd.nansum(x, axis=1).asnumpy(), [3, 3])
    np.testing.assert_array_equal(mx.nd.nanprod(x, axis=1).asnumpy(), [2, 3])
    assert np.isnan(mx.nd.sum(x, axis=1).asnumpy()).all()
    assert np.isnan(mx.nd.max(mx.nd.array([1, np.nan, 3])).asnumpy()[0])


@pytest.mark.parametrize('axis, message', [(3, 'exceeds'), ((0, 0), 'duplicates'), ((0, -3), 'duplicates')])
def test_reduction_axis_errors(axis, message):
    with pytest.raises(mx.base.MXNetError, match='sum: .*' + message):
        mx.nd.sum(_x(), axis=axis)


@pytest.mark.parametrize('name', ['sum', 'mean', 'prod', 'nansum', 'nanprod', 'max', 'min'])
@pytest.mark.parametrize('axis', [None, 1, (0, 2)])
def test_reduction_gradient(name, axis):
    data = DISTINCT + 2.0 if 'prod' in name else DISTINCT
    check_numeric_gradient(lambda x: getattr(mx.nd, name)(x, axis=axis), [data])


def test_max_min_give_every_tie_the_full_gradient():
    def gradient(fn, values):
        x = mx.nd.array(values)
        x.attach_grad()
        with mx.autograd.record():
            y = fn(x)
        y.backward()
        return x.grad.asnumpy().tolist()
    assert gradient(mx.nd.max, [1, 3, 3]) == [0, 1, 1]
    assert gradient(lambda x: x.min(), [2, 2, 5]) == [1, 1, 0]
    assert gradient(lambda x: mx.nd.max(x, axis=1), [[1, 3, 3], [2, 2, 0]]) == [[0, 1, 1], [1, 1, 0]]
    assert gradient(lambda x: mx.nd.max(x, axis=1), [[1, np.inf, 3], [2, 2, 0]]) == [[0, 1, 0], [1, 1, 0]]


def test_nan_gradients_are_zero_at_nan():
    x = mx.nd.array([[1, np.nan, 2], [3, 4, np.nan]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.nanprod(x, axis=1) + mx.nd.nansum(x, axis=1)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3, 0, 2], [5, 4, 0]])


# ------------------------------------------------------------ norm, moments
def test_norm():
    x = mx.nd.array([[3, -4, 0], [1, 2, -2]])
    assert x.norm().shape == (1,)
    np.testing.assert_allclose(x.norm().asnumpy(), [np.sqrt(34)], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.norm(x, axis=1).asnumpy(), [5, 3], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.norm(x, ord=1, axis=0).asnumpy(), [4, 6, 2], rtol=1e-6)
    assert mx.nd.norm(x, axis=1, keepdims=True).shape == (2, 1)
    np.testing.assert_allclose(mx.nd.norm(x, ord=1, axis=(0, 1)).asnumpy(), [12], rtol=1e-6)
    assert mx.nd.norm(x, out_dtype='float64').dtype == np.float64
    assert mx.nd.norm(mx.nd.array([3, 4], dtype='float16')).dtype == np.float16
    with pytest.raises(mx.base.MXNetError, match='norm: .*ord'):
        mx.nd.norm(x, ord=3)


@pytest.mark.parametrize('ord_', [1, 2])
def test_norm_gradient(ord_):
    check_numeric_gradient(lambda x: mx.nd.norm(x, ord=ord_, axis=(0, 2)), [DISTINCT])


def test_moments():
    x = mx.nd.array([[1, 2, 3], [4, 5, 9]])
    mean, var = mx.nd.moments(x, axes=(1,))
    np.testing.assert_allclose(mean.asnumpy(), [2, 6], rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [2 / 3, 14 / 3], rtol=1e-6)
    mean, var = mx.nd.moments(x, axes=(0,), keepdims=True)
    assert mean.shape == var.shape == (1, 3)
    assert mx.nd.moments(x, axes=(0, 1))[0].shape == (1,)
    with pytest.raises(mx.base.MXNetError, match='moments: .*axes'):
        mx.nd.moments(x)


def test_moments_gradient():
    check_numeric_gradient(lambda x: mx.nd.moments(x, axes=(0, 2)), [DISTINCT[:, :2]])


def test_cumsum():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(mx.nd.cumsum(x, axis=0).asnumpy(), [[1, 2, 3], [5, 7, 9]])
    np.testing.assert_array_equal(mx.nd.cumsum(x).asnumpy(), [1, 3, 6, 10, 15, 21])
    assert mx.nd.cumsum(x, axis=1, dtype='float64').dtype == np.float64
    assert mx.nd.cumsum(mx.nd.array([1, 2], dtype='int32')).dtype == np.int32
    with pytest.raises(mx.base.MXNetError, match='cumsum'):
        mx.nd.cumsum(x, axis=2)
    check_numeric_gradient(lambda v: mx.nd.cumsum(v, axis=1), [DISTINCT[0]])


# ------------------------------------------------------------- arg-reductions
def test_argmax_argmin():
    x = mx.nd.array([[1, 9, 3], [7, 2, 7]])
    out = mx.nd.argmax(x, axis=1)
    assert out.dtype == np.float32 and out.asnumpy().tolist() == [1, 0]     # first index at ties
    assert x.argmin(axis=0).asnumpy().tolist() == [0, 1, 0]
    assert mx.nd.argmax(x, axis=1, keepdims=True).shape == (2, 1)
    assert mx.nd.argmax(x).asnumpy().tolist() == [1] and mx.nd.argmax(x).shape == (1,)
    assert mx.nd.argmax(x, keepdims=True).shape == (1, 1)
    assert mx.nd.argmax(mx.nd.array([1, 2, 0]), axis=0).shape == (1,)
    assert mx.nd.argmax(mx.nd.array([[1, 2]], dtype='int32'), axis=1).dtype == np.int32
    assert mx.nd.argmax_channel(mx.nd.array([[0, 4, 2], [9, 1, 3]])).asnumpy().tolist() == [1, 0]
    assert mx.nd.argmax_channel(_x()).shape == (2, 4)
    with pytest.raises(mx.base.MXNetError, match='argmax: .*axis 5'):
        mx.nd.argmax(x, axis=5)


# -------------------------------------------------------------------- ordering
def test_sort_and_argsort():
    x = mx.nd.array([[3, 1, 2], [0.5, -1, 9]])
    np.testing.assert_array_equal(mx.nd.sort(x).asnumpy(), [[1, 2, 3], [-1, 0.5, 9]])
    np.testing.assert_array_equal(x.sort(is_ascend=False).asnumpy(), [[3, 2, 1], [9, 0.5, -1]])
    np.testing.assert_array_equal(mx.nd.sort(x, axis=None).asnumpy(), [-1, 0.5, 1, 2, 3, 9])
    out = x.argsort()
    assert out.dtype == np.float32 and out.asnumpy().tolist() == [[1, 2, 0], [1, 0, 2]]
    assert mx.nd.argsort(x, dtype='int32').dtype == np.int32
    assert mx.nd.argsort(x, axis=0, is_ascend=False).asnumpy().tolist() == [[0, 0, 1], [1, 1, 0]]
    with pytest.raises(mx.base.MXNetError, match='sort'):
        mx.nd.sort(x, axis=2)


def test_topk():
    x = mx.nd.array([[3, 1, 4, 1.5], [9, 2, 6, 5]])
    assert mx.nd.topk(x, k=2).asnumpy().tolist() == [[2, 0], [0, 2]]
    values, indices = mx.nd.topk(x, k=2, ret_typ='both', dtype='int32')
    assert values.asnumpy().tolist() == [[4, 3], [9, 6]] and indices.dtype == np.int32
    assert mx.nd.topk(x, k=2, ret_typ='mask').asnumpy().tolist() == [[1, 0, 1, 0], [1, 0, 1, 0]]
    assert mx.nd.topk(x, k=3, ret_typ='value', is_ascend=True).asnumpy().tolist() == [[1, 1.5, 3], [2, 5, 6]]
    assert mx.nd.topk(x, axis=None, k=2).asnumpy().tolist() == [4, 6]
    assert mx.nd.topk(x, k=0, ret_typ='value').shape == (2, 4)      # k <= 0: the whole axis
    assert mx.nd.topk(mx.nd.array([1, 3, 3, 1]), k=2).asnumpy().tolist() == [1, 2]
    assert x.topk(axis=0).shape == (1, 4)
    with pytest.raises(mx.base.MXNetError, match='topk: .*k=5'):
        mx.nd.topk(x, k=5)
    with pytest.raises(mx.base.MXNetError, match='ret_typ'):
        mx.nd.topk(x, ret_typ='top')


def test_sort_and_topk_gradients():
    check_numeric_gradient(lambda x: mx.nd.sort(x, axis=1, is_ascend=False), [DISTINCT])
    check_numeric_gradient(lambda x: mx.nd.topk(x, k=2, ret_typ='value', axis=0), [DISTINCT])
    check_numeric_gradient(lambda x: mx.nd.topk(x, k=3, ret_typ='both')[0], [DISTINCT])
