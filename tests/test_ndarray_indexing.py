"""NDArray ``__getitem__``/``__setitem__`` with MXNet 1.9.1's semantics.

Views: a basic index whose result is contiguous is a view that writes through; other basic
results (columns, steps) and advanced indexes are copies. ``x[i]`` of a 1-D array and a full
index of an N-D array give shape ``(1,)``. Index arrays of any dtype are truncated to
integers, booleans included (MXNet reads them as 0 and 1).
"""
import itertools

import numpy as np
import pytest

import neomx as mx
from neomx import autograd
from neomx.test_utils import check_numeric_gradient

X = np.arange(12, dtype=np.float32).reshape(3, 4)
X3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _x():
    return mx.nd.array(X)


@pytest.mark.parametrize('key', [
    1, -1, (1,), slice(1, 3), slice(5, 10), (slice(None), 1), (1, slice(2, None)),
    (slice(None, -2), slice(-2, None)), (slice(None, None, 2), slice(None, None, 2)),
    slice(None, None, -1), (slice(None, None, -2), slice(3, 0, -1)), (Ellipsis, 1), None,
    (slice(None), None), np.int64(1),
], ids=repr)
def test_basic_index_matches_numpy(key):
    np.testing.assert_array_equal(_x()[key].asnumpy(), X[key])


@pytest.mark.parametrize('key', [
    (0, Ellipsis, 1), (Ellipsis, None), (Ellipsis, slice(None, None, -1)),
    (slice(None), slice(None, None, -1), slice(-1, 0, -2)), ([1, 0], slice(None, None, -1), [2, 3]),
    ([0, 1], slice(None), [0, 1]),
], ids=repr)
def test_3d_index_matches_numpy(key):
    np.testing.assert_array_equal(mx.nd.array(X3)[key].asnumpy(), X3[key])


def test_full_index_gives_shape_1():
    x = _x()
    assert x[2, 3].shape == (1,) and x[2, 3].asscalar() == 11
    assert mx.nd.array(X3)[1, 2, 3].shape == (1,)
    assert mx.nd.array([10, 20, 30])[1].shape == (1,)
    assert mx.nd.array([10, 20, 30])[np.int64(-1)].asnumpy().tolist() == [30]


def test_advanced_index_arrays():
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(4, 3))
    a = x.asnumpy()
    np.testing.assert_array_equal(x[mx.nd.array([3, 0, 0], dtype='int32')].asnumpy(), a[[3, 0, 0]])
    np.testing.assert_array_equal(x[mx.nd.array([0.7, 2.2])].asnumpy(), a[[0, 2]])     # truncated
    np.testing.assert_array_equal(x[mx.nd.array([2, 0], dtype='int64')].asnumpy(), a[[2, 0]])
    np.testing.assert_array_equal(x[[1, 2]].asnumpy(), a[[1, 2]])
    np.testing.assert_array_equal(x[np.array([0, 2])].asnumpy(), a[[0, 2]])
    np.testing.assert_array_equal(x[[0, 2, 3], [2, 1, 0]].asnumpy(), a[[0, 2, 3], [2, 1, 0]])
    np.testing.assert_array_equal(x[1:, [0, 2]].asnumpy(), a[1:, [0, 2]])
    np.testing.assert_array_equal(x[1, [0, 2]].asnumpy(), a[1, [0, 2]])
    np.testing.assert_array_equal(x[[[0], [2]], [1, 2]].asnumpy(), a[[[0], [2]], [1, 2]])
    np.testing.assert_array_equal(x[mx.nd.array([[0, 1], [2, 2]])].asnumpy(), a[[[0, 1], [2, 2]]])
    # MXNet 1.9.1 reads boolean index arrays as integers 0 and 1, not as masks.
    np.testing.assert_array_equal(x[np.array([True, False, True])].asnumpy(), a[[1, 0, 1]])
    np.testing.assert_array_equal(x[[True, False]].asnumpy(), a[[1, 0]])


@pytest.mark.parametrize('key,writes_through', [
    (1, True), ((1, 2), True), ((1, slice(1, 3)), True), (slice(1, 3), True), (None, True),
    ((slice(None), 1), False), (slice(None, None, 2), False), ((Ellipsis, 1), False), ([0, 1], False),
], ids=repr)
def test_views_only_for_contiguous_basic_results(key, writes_through):
    a = mx.nd.zeros((3, 4))
    part = a[key]
    part[:] = 5
    assert (a.asnumpy().sum() > 0) == writes_through


def test_slice_contiguity_rule_matches_numpy_and_views():
    shape = (4, 5, 6)
    base = np.arange(np.prod(shape)).reshape(shape)
    steps = [slice(None), slice(1, 3), slice(0, 1), slice(None, None, 2), slice(None, None, -1),
             slice(3, None, -2), slice(2, 2)]
    is_contiguous = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    for key in itertools.product(steps, repeat=3):
        assert is_contiguous(key, shape) == base[key].flags.contiguous, key
        if is_contiguous(key, shape) and base[key].size > 1:
            a = mx.nd.array(base)
            a[key][:] = -1              # a contiguous basic slice is a view
            assert (a[key].asnumpy() == -1).all(), key


def test_1d_int_index_is_a_view():
    a = mx.nd.zeros((4,))
    b = a[2]
    b += 1
    np.testing.assert_array_equal(a.asnumpy(), [0, 0, 1, 0])


def test_index_errors():
    x = _x()
    for key in (3, -4, (1, 4), (1, 2, 3)):
        with pytest.raises(IndexError):
            x[key]
    with pytest.raises(IndexError, match='out of bounds'):
        mx.nd.ones((3,))[5]
    with pytest.raises(ValueError, match='step'):
        x[::0]


def _set(key, value, base=X):
    y = mx.nd.array(base, dtype=base.dtype)
    y[key] = value
    return y.asnumpy()


def _np_set(key, value, base=X):
    y = base.copy()
    y[key] = value
    return y


@pytest.mark.parametrize('key,value', [
    (1, 7), (1, np.arange(4)), ((slice(None), 1), np.array([1, 2, 3])),
    ((slice(None, None, 2), slice(None, None, 2)), 9), ((slice(None, None, -1), 0), np.array([1, 2, 3])),
    ((slice(None, None, -2), slice(3, 0, -1)), np.arange(6).reshape(2, 3)),
    ([0, 2], np.arange(8).reshape(2, 4)), (([0, 2], [1, 3]), np.array([5, 6])), ((1, 2), 3.5),
    (Ellipsis, 1), ((slice(0, 2), slice(1, 3)), np.array([[1, 2], [3, 4]])), (1, np.ones((1, 4))),
    ((slice(1, None), [0, 2]), 8), (0, np.float32(3)), (slice(None), np.arange(4)),
], ids=repr)
def test_setitem_matches_numpy(key, value):
    nd_value = mx.nd.array(value) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(_set(key, nd_value), _np_set(key, value))


def test_setitem_value_kinds_and_casts():
    np.testing.assert_array_equal(_set(1, [1, 2, 3, 4]), _np_set(1, [1, 2, 3, 4]))
    np.testing.assert_array_equal(_set(1, np.arange(4.0)), _np_set(1, np.arange(4.0)))
    np.testing.assert_array_equal(_set(slice(None), mx.nd.ones((3, 4), dtype='int32')), np.ones((3, 4)))
    ints = X.astype(np.int32)
    np.testing.assert_array_equal(_set(1, 2.7, ints), _np_set(1, 2, ints))      # scalar cast first
    np.testing.assert_array_equal(_set(mx.nd.array([1]), 3), _np_set([1], 3))
    # Booleans index rows 1 and 0, as integers.
    np.testing.assert_array_equal(_set(np.array([True, False, True]), 0), _np_set([1, 0], 0))
    np.testing.assert_array_equal(_set(1, 9, np.array([1, 2, 3], np.float32)), [1, 9, 3])


def test_setitem_from_an_overlapping_view():
    # MXNet 1.9.1 copies row by row here (every row becomes row 0); neomx gives numpy's result.
    y = _x()
    y[1:] = y[:-1]
    np.testing.assert_array_equal(y.asnumpy(), _np_set(slice(1, None), X[:-1].copy()))


def test_setitem_errors():
    with pytest.raises(ValueError, match='cannot assign'):
        _set(slice(None), mx.nd.ones((2,)))
    with pytest.raises(ValueError, match='cannot assign'):
        _set(1, mx.nd.ones((3,)))
    with pytest.raises(IndexError):
        _set(5, 1)


def test_setitem_while_recording_a_variable_is_rejected():
    x = _x()
    x.attach_grad()
    with autograd.record():
        with pytest.raises(mx.base.MXNetError, match='Inplace'):
            x[0] = 1


@pytest.mark.parametrize('index', [
    lambda x: x[1:3] * 2, lambda x: x[:, ::-2], lambda x: x[[0, 0, 2]], lambda x: x[1, 2],
    lambda x: x[mx.nd.array([2, 0]), 1:], lambda x: x[..., None][0],
], ids=['slice', 'negative_step', 'repeated_rows', 'element', 'array_and_slice', 'none_ellipsis'])
def test_numeric_gradient_through_indexing(index):
    check_numeric_gradient(index, [np.random.RandomState(0).uniform(-1, 1, size=(3, 4))])
