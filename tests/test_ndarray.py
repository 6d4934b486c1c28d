"""NDArray creation, dtypes, properties, arithmetic, comparisons, in-place ops, copies."""
import re

import numpy as np
import pytest

import neomx as mx


def test_array_dtype_rules():
    assert mx.nd.array([[1, 2], [3, 4]]).dtype is np.float32
    assert mx.nd.array(np.arange(3, dtype='int64')).dtype is np.float32   # MXNet ignores numpy dtype
    assert mx.nd.array(np.arange(3), dtype='int64').dtype is np.int64
    src = mx.nd.array([1, 2], dtype='int32')
    assert mx.nd.array(src).dtype is np.int32                             # NDArray keeps its dtype
    for dt in ['float16', 'float32', 'float64', 'uint8', 'int8', 'int32', 'int64', 'bool']:
        a = mx.nd.array([1, 0, 1], dtype=dt)
        assert a.dtype == np.dtype(dt) and a.asnumpy().dtype == np.dtype(dt)


def test_bfloat16_round_trip():
    a = mx.nd.array([1.5, -2.0], dtype='bfloat16')
    assert a.dtype is mx.base.bfloat16
    np.testing.assert_array_equal(a.asnumpy(), np.array([1.5, -2.0], dtype='float32'))


def test_bad_dtype_and_ragged_list():
    with pytest.raises(TypeError, match='nope'):
        mx.nd.zeros((2,), dtype='nope')
    with pytest.raises(TypeError):
        mx.nd.array([[1, 2], [3]])


def test_integer_arange_truncates_start_and_step():
    # values recorded from MXNet 1.9.1: the length comes from the real values, start and step
    # are cut to integers, unsigned values wrap around
    assert mx.nd.arange(0.5, 10, 2.7, dtype='int32').asnumpy().tolist() == [0, 2, 4, 6]
    assert mx.nd.arange(-1.5, 10, 2.7, dtype='uint8').asnumpy().tolist() == [255, 1, 3, 5, 7]
    assert mx.nd.arange(10, -1.5, -2.7, dtype='int64').asnumpy().tolist() == [10, 8, 6, 4, 2]
    out = mx.nd.arange(1.3, 456.6, 1.3, repeat=3, dtype='int32')
    assert out.shape == (1053,) and out.asnumpy()[-4:].tolist() == [350, 351, 351, 351]
    exe = mx.sym.arange(0.5, 10, 2.7, dtype='int32').bind(mx.cpu(), {})
    assert exe.forward()[0].asnumpy().tolist() == [0, 2, 4, 6]


def test_creation_functions():
    np.testing.assert_array_equal(mx.nd.full((2, 2), 7).asnumpy(), np.full((2, 2), 7, 'float32'))
    np.testing.assert_array_equal(mx.nd.arange(1, 7, 2, repeat=3).asnumpy(),
                                  np.repeat(np.arange(1, 7, 2), 3).astype('float32'))
    np.testing.assert_array_equal(mx.nd.eye(3, 4, k=1).asnumpy(), np.eye(3, 4, 1, dtype='float32'))
    assert mx.nd.empty((3, 4)).shape == (3, 4)
    assert mx.nd.zeros(4).shape == (4,)
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))


def test_scalar_and_zero_size_creation_need_numpy_shape_semantics():
    # MXNet 1.9.1's legacy shapes: () and 0 sizes mean "unknown", so zeros/ones refuse them
    for make in (lambda s: mx.nd.zeros(s), lambda s: mx.nd.ones(shape=s),
                 lambda s: mx.nd.zeros(s, stype='row_sparse')):
        for shape in ((), (0, 1, 3, 0), (2, 0)):
            with pytest.raises(mx.base.MXNetError, match='shape %s' % re.escape(str(shape))):
                make(shape)
    with pytest.raises(mx.base.MXNetError, match='full'):
        mx.nd.full((), 3)
    assert mx.nd.full((0,), 3).shape == (0,)       # as MXNet: only () is refused
    assert mx.nd.empty(()).shape == () and mx.nd.array(3.0).shape == ()
    with mx.np_shape():
        assert mx.nd.ones(()).asnumpy() == np.ones((), np.float32)
        assert mx.nd.zeros((0, 1, 0, 4)).shape == (0, 1, 0, 4)
        assert mx.nd.full((), 2.0).asnumpy() == 2.0


def test_properties_and_repr():
    a = mx.nd.zeros((2, 3, 4))
    assert (a.shape, a.size, a.ndim, len(a)) == ((2, 3, 4), 24, 3, 2)
    assert type(a.shape) is tuple
    assert repr(mx.nd.array([[1, 2], [3, 4]])) == '\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @%s>' % mx.current_context()


def test_scalar_conversions():
    assert mx.nd.array([3.5]).asscalar() == np.float32(3.5)
    assert type(mx.nd.array([7], dtype='int32').asscalar()) is np.int32
    with pytest.raises(ValueError):
        mx.nd.ones((2,)).asscalar()
    with pytest.raises(ValueError):
        bool(mx.nd.ones((2,)))
    with pytest.raises(TypeError):
        float(mx.nd.ones((1,)))
    assert bool(mx.nd.array([2.0])) and not bool(mx.nd.zeros((1,)))


def test_arithmetic_matches_numpy():
    x = np.arange(1, 7, dtype='float32').reshape(2, 3)
    y = np.full((1, 3), 2.0, dtype='float32')
    a, b = mx.nd.array(x), mx.nd.array(y)
    for got, want in [(a + b, x + y), (a - b, x - y), (a * b, x * y), (a / b, x / y), (a ** b, x ** y),
                      (a % 4, x % 4), (10 - a, 10 - x), (8 / a, 8 / x), (2 ** a, 2 ** x), (7 % a, 7 % x),
                      (-a, -x), (abs(-a), x)]:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_integer_semantics():
    a = mx.nd.array([7, -7, 9], dtype='int32')
    np.testing.assert_array_equal((a / 2).asnumpy(), [3, -3, 4])          # truncates toward zero
    np.testing.assert_array_equal((a % 3).asnumpy(), [1, 2, 0])           # sign of the divisor
    np.testing.assert_array_equal((a + 1.9).asnumpy(), [8, -6, 10])       # scalar cast to int first
    assert (a + 1.9).dtype is np.int32


def test_comparisons_return_input_dtype():
    a = mx.nd.array([1, 2, 3])
    np.testing.assert_array_equal((a > 1.5).asnumpy(), np.array([0, 1, 1], 'float32'))
    assert (a == a).dtype is np.float32
    i = mx.nd.array([1, 2, 3], dtype='int32')
    assert (i > 1).dtype is np.int32
    np.testing.assert_array_equal((2 < a).asnumpy(), [0, 0, 1])


def test_inplace_keeps_object_and_views_write_through():
    a = mx.nd.array([1, 2, 3])
    h = a
    a += 1
    a *= 2
    a /= 4
    assert h is a
    np.testing.assert_allclose(a.asnumpy(), [1, 1.5, 2])
    m = mx.nd.zeros((4, 2))
    v = m[1:3]
    v[:] = 5
    r = m[3]
    r += 1
    np.testing.assert_array_equal(m.asnumpy(), [[0, 0], [5, 5], [5, 5], [1, 1]])


def test_binary_errors_name_shapes_and_dtypes():
    with pytest.raises(mx.base.MXNetError, match=r'\(2, 3\).*\(4, 5\)'):
        mx.nd.ones((2, 3)) + mx.nd.ones((4, 5))
    with pytest.raises(mx.base.MXNetError, match='float32.*float64'):
        mx.nd.ones((2,)) + mx.nd.ones((2,), dtype='float64')
    with pytest.raises(mx.base.MXNetError, match='elemwise_add|_plus'):
        mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))


def test_copies_and_contexts():
    a = mx.nd.array([1, 2, 3])
    assert a.as_in_context(mx.current_context()) is a
    b = a.as_in_context(mx.cpu(1))
    b[:] = 9
    assert str(b.context) == 'cpu(1)'
    np.testing.assert_array_equal(a.asnumpy(), [1, 2, 3])
    c = mx.nd.zeros((3,))
    assert a.copyto(c) is c
    with pytest.raises(mx.base.MXNetError, match='shape'):
        a.copyto(mx.nd.zeros((4,)))
    assert a.astype('float32', copy=False) is a
    assert a.astype('float32') is not a
    n = a.asnumpy()
    n[0] = 100
    assert a.asnumpy()[0] == 1


def test_numpy_and_dlpack_interop():
    a = mx.nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.asarray(a), [[1, 2], [3, 4]])
    b = mx.nd.from_dlpack(a)
    b[0, 0] = 10
    assert a.asnumpy()[0, 0] == 10                 # DLPack shares memory
    host = np.arange(3, dtype='int64')
    c = mx.nd.from_numpy(host)
    with pytest.raises(ValueError):                 # as MXNet: the numpy side becomes read-only
        host[1] = 7
    c[1] = 7
    assert c.dtype is np.int64 and host[1] == 7


def test_waitall_and_wait_to_read_return_none():
    a = mx.nd.ones((2,)) * 3
    assert a.wait_to_read() is None and mx.nd.waitall() is None


def test_iteration_yields_rows():
    rows = list(mx.nd.array(np.arange(6).reshape(3, 2)))
    assert len(rows) == 3 and rows[2].asnumpy().tolist() == [4, 5]


def test_pickle_round_trip_keeps_values_and_context():
    import pickle
    a = mx.nd.array([[1, 2]], ctx=mx.cpu(1), dtype='int32')
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype is np.int32 and str(b.context) == 'cpu(1)'
    np.testing.assert_array_equal(b.asnumpy(), [[1, 2]])


def test_asscalar_is_a_scalar_for_every_one_element_shape():
    # MXNet returns the (1, 1) array itself, which float() refuses under NumPy 2: neomx gives
    # the scalar (a listed difference), so float(loss.asscalar()) keeps working
    assert mx.nd.array([3]).asscalar() == 3 and np.ndim(mx.nd.array([3]).asscalar()) == 0
    assert np.ndim(mx.nd.array([[3]]).asscalar()) == 0 and float(mx.nd.array([[3]]).asscalar()) == 3.0
    assert np.ndim(mx.nd.array([[3]]).item()) == 0
    with pytest.raises(ValueError, match='not a scalar'):
        mx.nd.ones((2,)).asscalar()


def test_normalize_takes_one_or_three_channels_as_mxnet():
    from neomx.gluon.data.vision import transforms
    out = transforms.Normalize(0.5, 0.5)(mx.nd.ones((1, 2, 2)))
    assert np.allclose(out.asnumpy(), 1.0)
    with pytest.raises(mx.base.MXNetError, match='1 or 3 elements.*\\(2, 3, 3\\)'):
        transforms.Normalize(0.5, 0.5)(mx.nd.ones((2, 3, 3)))
