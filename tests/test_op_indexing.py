"""Indexing operators: take, pick, batch_take, gather_nd/scatter_nd, one_hot, where,
boolean_mask, ravel/unravel, index_copy.

Expected values come from numpy references or literals recorded with MXNet 1.9.1.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient


def _a(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def _eq(got, want):
    np.testing.assert_array_equal(got.asnumpy(), want)


X = _a(3, 4)


def _x():
    return mx.nd.array(X)


def test_take_modes_and_float_indices():
    x = _x()
    # Float indices are truncated toward zero, then clipped: -1.5 -> -1 -> 0.
    _eq(mx.nd.take(x, mx.nd.array([0.6, 1.4, 2.9, -1.5, 7])),
                                  X[[0, 1, 2, 0, 2]])
    _eq(mx.nd.take(x, mx.nd.array([1, 2, 5, -1]), axis=1, mode='wrap'),
                                  X[:, [1, 2, 1, 3]])
    _eq(mx.nd.take(x, mx.nd.array([2, 0], dtype='int64')), X[[2, 0]])
    assert mx.nd.take(x, mx.nd.array([[0, 1]]), axis=-1).shape == (3, 1, 2)
    assert mx.nd.take(mx.nd.array([1, 2], dtype='int32'), mx.nd.array([0])).dtype == np.int32
    _eq(mx.nd.take(x, mx.nd.array([2]), mode='raise'), X[[2]])
    # as MXNet's kernel check: the call returns, the first read raises (once)
    out = mx.nd.take(x, mx.nd.array([-1]), mode='raise')
    with pytest.raises(mx.base.MXNetError, match=r'take: indices out of range \[0, 3\)'):
        out.asnumpy()
    out.asnumpy()
    out = mx.nd.take(x, mx.nd.array([3]), mode='raise')
    with pytest.raises(mx.base.MXNetError, match='out of range'):
        out.wait_to_read()


def test_take_raise_mode_reports_at_the_read_in_executors_too():
    exe = mx.sym.take(mx.sym.Variable('a'), mx.sym.Variable('i'), mode='raise').simple_bind(
        mx.cpu(), a=(3, 2), i=(2,))
    exe.arg_dict['a'][:] = 1
    exe.arg_dict['i'][:] = mx.nd.array([0, 6])
    exe.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match='take: indices out of range'):
        exe.outputs[0].asnumpy()
    exe.arg_dict['i'][:] = mx.nd.array([0, 2])
    exe.forward(is_train=True)
    assert exe.outputs[0].asnumpy().tolist() == [[1, 1], [1, 1]]


def test_pick():
    x3 = _a(2, 3, 4)
    idx = np.array([[0, 1, 2, 3], [2, 2, 2, 2]])
    want = np.take_along_axis(x3, np.clip(idx, 0, 2)[:, None, :], 1)   # mode='clip'
    _eq(mx.nd.pick(mx.nd.array(x3), mx.nd.array(idx), axis=1), want[:, 0])
    _eq(mx.nd.pick(mx.nd.array(x3), mx.nd.array(idx), 1, True), want)
    x = _x()
    _eq(mx.nd.pick(x, mx.nd.array([0.6, 1.5, 2.9])), [0, 5, 10])
    _eq(mx.nd.pick(x, mx.nd.array([[5], [-3], [1]])), [3, 4, 9])
    _eq(mx.nd.pick(x, mx.nd.array([5, -1, 4]), mode='wrap'), [1, 7, 8])
    _eq(mx.nd.pick(x, mx.nd.array([1, 2, 7], dtype='int64')), [1, 6, 11])             # MXNet 1.9.1
    _eq(mx.nd.pick(x, mx.nd.array([1, 2, -7], dtype='int64'), mode='wrap'), [1, 6, 9])
    _eq(mx.nd.pick(mx.nd.array([3, 4, 5]), mx.nd.array([2]), axis=0), [5])            # shape (1,)
    for bad_shape in ((2,), (1, 3)):                     # (1, 3) has the right size, not the shape
        with pytest.raises(mx.base.MXNetError, match='does not match'):
            mx.nd.pick(x, mx.nd.zeros(bad_shape))
    with pytest.raises(mx.base.MXNetError, match='axis=None'):
        mx.nd.pick(x, mx.nd.array([0]), axis=None)


def test_batch_take_clips():
    got = mx.nd.batch_take(_x(), mx.nd.array([5, -1, 2], dtype='int32'))
    _eq(got, [3, 4, 10])


def test_gather_nd_and_scatter_nd():
    x = _x()
    _eq(mx.nd.gather_nd(x, mx.nd.array([[1, 2]], dtype='int32')), X[[1, 2]])
    _eq(mx.nd.gather_nd(x, mx.nd.array([[1.7, -1], [2.2, 0]])), [6, 8])
    with pytest.raises(mx.base.MXNetError, match='gather_nd'):
        mx.nd.gather_nd(x, mx.nd.array([[0], [0], [0]]))
    rows = mx.nd.scatter_nd(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[2, 0]]), shape=(3, 2))
    _eq(rows, [[3, 4], [0, 0], [1, 2]])
    ints = mx.nd.scatter_nd(mx.nd.array([1, 2], dtype='int32'), mx.nd.array([[2, 0]]), shape=(3,))
    assert ints.dtype == np.int32
    _eq(ints, [2, 0, 1])


def test_one_hot():
    idx = mx.nd.array([1.7, 0.2, 3, -1])
    _eq(mx.nd.one_hot(idx, 3),
                                  [[0, 1, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]])
    out = mx.nd.one_hot(mx.nd.array([1, 2]), 3, 2.5, 0.5, 'int32')
    assert out.dtype == np.int32
    _eq(out, [[0, 2, 0], [0, 0, 2]])
    wide = mx.nd.one_hot(mx.nd.array([0]), 2, on_value=0.1, dtype='float64')
    assert wide.dtype == np.float64 and wide.asnumpy()[0, 0] == 0.1
    assert mx.nd.one_hot(mx.nd.array([[0, 1], [2, 0]]), 3).shape == (2, 2, 3)
    assert mx.nd.one_hot(mx.nd.array([1, 2]), 0).shape == (2, 0)


def test_where():
    x = _x()
    _eq(mx.nd.where(mx.nd.array([1, 0, 1]), x, x * 0),
                                  X * np.array([[1], [0], [1]]))
    cond = mx.nd.array([np.nan, 0, 0.5])                 # NaN is non-zero: chooses x
    _eq(mx.nd.where(cond, mx.nd.array([1, 2, 3]), mx.nd.array([4, 5, 6])),
                                  [1, 5, 3])
    with pytest.raises(mx.base.MXNetError, match='where'):
        mx.nd.where(mx.nd.array([1, 0]), x, x)
    with pytest.raises(mx.base.MXNetError, match='dtype'):
        mx.nd.where(mx.nd.array([1, 0, 1]), mx.nd.ones((3,)), mx.nd.ones((3,), dtype='int32'))


def test_boolean_mask():
    x = _x()
    _eq(mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 2, 1], dtype='int32')),
                                  X[1:])
    _eq(mx.nd.contrib.boolean_mask(x, mx.nd.array([1, 0, 0, 1]), axis=1),
                                  X[:, [0, 3]])
    assert mx.nd.contrib.boolean_mask(x, mx.nd.zeros((3,))).shape == (0, 4)
    with pytest.raises(mx.base.MXNetError, match='boolean_mask'):
        mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1]))


def test_ravel_and_unravel_keep_the_input_dtype():
    flat = mx.nd.ravel_multi_index(mx.nd.array([[1, 1], [2, 0], [3, 1]]), shape=(2, 3, 4))
    assert flat.dtype == np.float32
    _eq(flat, np.ravel_multi_index(([1, 1], [2, 0], [3, 1]), (2, 3, 4)))
    assert mx.nd.ravel_multi_index(mx.nd.array([[0], [2]], dtype='int32'), shape=(3, 4)).dtype == np.int32
    coords = mx.nd.unravel_index(mx.nd.array([13, 23, 7]), shape=(2, 3, 4))
    _eq(coords, np.unravel_index([13, 23, 7], (2, 3, 4)))
    # MXNet leaves the first coordinate unreduced: 13 in (3, 4) is (3, 1).
    _eq(mx.nd.unravel_index(mx.nd.array([13]), shape=(3, 4)), [[3], [1]])
    with pytest.raises(mx.base.MXNetError, match='ravel_multi_index'):
        mx.nd.ravel_multi_index(mx.nd.zeros((2, 2, 2)), shape=(3, 4))


def test_index_copy():
    new_rows = mx.nd.array([[1, 2], [3, 4]])
    out = mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.array([2, 0]), new_rows)
    _eq(out, [[3, 4], [0, 0], [1, 2], [0, 0]])
    with pytest.raises(mx.base.MXNetError, match='index_copy'):
        mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.array([2, 0]), mx.nd.ones((2, 3)))


GRADIENT_CASES = {
    'take_repeated_and_clipped': (lambda x: mx.nd.take(x, mx.nd.array([[0, 0], [5, 1]])), [(3, 2)]),
    'take_wrap_axis1': (lambda x: mx.nd.take(x, mx.nd.array([-1, 1, 1]), axis=1, mode='wrap'), [(2, 3)]),
    'pick': (lambda x: mx.nd.pick(x, mx.nd.array([0, 2]), axis=1, keepdims=True), [(2, 3)]),
    'batch_take': (lambda x: mx.nd.batch_take(x, mx.nd.array([1, 0], dtype='int32')), [(2, 3)]),
    'gather_nd': (lambda x: mx.nd.gather_nd(x, mx.nd.array([[1, 1, 0], [2, 2, 0]])), [(2, 3)]),
    'scatter_nd': (lambda d: mx.nd.scatter_nd(d, mx.nd.array([[0, 1], [2, 0]]), shape=(2, 3)), [(2,)]),
    'where': (lambda x, y: mx.nd.where(mx.nd.array([[1, 0], [0, 1]]), x * y, y), [(2, 2), (2, 2)]),
    'where_rows': (lambda x, y: mx.nd.where(mx.nd.array([0, 1]), x, y * y), [(2, 2), (2, 2)]),
    'boolean_mask': (lambda x: mx.nd.contrib.boolean_mask(x, mx.nd.array([1, 0, 1])), [(3, 2)]),
    'index_copy': (lambda old, new: mx.nd.contrib.index_copy(old, mx.nd.array([1]), new * new),
                   [(3, 2), (1, 2)]),
}


@pytest.mark.parametrize('name', sorted(GRADIENT_CASES))
def test_numeric_gradient(name):
    fn, shapes = GRADIENT_CASES[name]
    rng = np.random.RandomState(0)
    check_numeric_gradient(fn, [rng.uniform(-1, 1, size=s) for s in shapes])


def test_gather_nd_out_of_range_is_an_index_error():
    # MXNet raises IndexError for it; neomx's error is also an MXNetError naming the operator
    data = mx.nd.array([[0, 1, 2], [3, 4, 5]])
    for bad in ([[0, 1, 0], [0, 1, 3]], [[0, 1, 0], [0, 1, -5]]):
        with pytest.raises(IndexError, match='gather_nd'):
            mx.nd.gather_nd(data, mx.nd.array(bad))
        with pytest.raises(mx.base.MXNetError):
            mx.nd.gather_nd(data, mx.nd.array(bad))
    np.testing.assert_array_equal(mx.nd.gather_nd(data, mx.nd.array([[0, 1, -1], [0, 1, -2]])).asnumpy(),
                                  [0, 4, 4])
