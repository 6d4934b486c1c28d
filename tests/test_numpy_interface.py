"""mx.np: the ndarray class, its semantics (dtypes, indexing, repr, autograd), functions from
the registry, NumPy's dispatch protocols and the fallback functions."""
import json

import numpy as onp
import pytest

import neomx as mx
from neomx import np
from neomx.base import MXNetError


def test_ndarray_is_a_legacy_ndarray_sharing_memory_both_ways():
    a = np.array([1, 2, 3])
    assert isinstance(a, mx.nd.NDArray) and type(a) is np.ndarray
    legacy = a.as_nd_ndarray()
    assert type(legacy) is mx.nd.NDArray
    legacy[:] = 7
    assert a.tolist() == [7.0, 7.0, 7.0]
    back = mx.nd.ones((2,)).as_np_ndarray()
    assert type(back) is np.ndarray and back.dtype == onp.float32


def test_mixing_legacy_and_numpy_arrays_raises_mxnets_type_errors():
    a, b = np.ones((2,)), mx.nd.ones((2,))
    with pytest.raises(TypeError, match='not supported'):
        a + b
    with pytest.raises(TypeError, match='legacy operator'):
        b + a
    with pytest.raises(ValueError, match='as_np_ndarray'):
        np.array(b)


def test_default_dtypes_are_float32_and_int_true_division_gives_float32():
    assert np.array([1, 2]).dtype == onp.float32
    assert np.arange(3).dtype == onp.float32
    assert np.ones((2,)).dtype == onp.float32
    assert np.random.uniform(size=2).dtype == onp.float32
    a = np.array([1, 2], dtype='int32')
    assert (a / a).dtype == onp.float32 and (a / 2).tolist() == [0.5, 1.0]
    assert (a + 1.5).dtype == onp.int32     # MXNet casts the scalar to the array's type
    assert (a == a).dtype == onp.bool_
    assert np.array(onp.array([1, 2], dtype='int64')).dtype == onp.int64


def test_zero_dim_and_zero_size_arrays():
    s = np.array(2.5)
    assert s.shape == () and s.ndim == 0 and float(s + 1) == 3.5
    assert np.array([[1, 2], [3, 4]])[0, 1].shape == ()
    assert np.sum(np.ones((2, 3))).shape == ()
    e = np.zeros((0, 3))
    assert e.shape == (0, 3) and np.sum(e, axis=0).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(TypeError, match='unsized'):
        len(s)


def test_numpy_indexing():
    a = np.arange(12).reshape(3, 4)
    assert a[a > 8].tolist() == [9.0, 10.0, 11.0]
    assert a[[0, 2], [1, 3]].tolist() == [1.0, 11.0]
    assert a[None, ..., 1].shape == (1, 3)
    assert a[:, ::-1][0].tolist() == [3.0, 2.0, 1.0, 0.0]
    row = a[1]
    row[:] = 0                                  # a contiguous basic index is a view
    assert a[1].tolist() == [0.0] * 4
    a[a > 10] = -1
    assert a[2].tolist() == [8.0, 9.0, 10.0, -1.0]
    with pytest.raises(IndexError):
        a[5]


def test_repr_str_item_tolist():
    with mx.cpu():      # as MXNet, repr and str name a non-cpu context (', ctx=gpu(0)', ' @gpu(0)')
        assert repr(np.array([1, 2])) == 'array([1., 2.])'
        assert repr(np.array([1, 2], dtype='int32')) == 'array([1, 2], dtype=int32)'
        assert repr(np.array([True])) == 'array([1.])'
        assert repr(np.array(3.0)) == 'array(3.)'
        assert str(np.array([1, 2])) == '[1. 2.]'
    assert repr(np.array([1, 2], ctx=mx.cpu(1))) == 'array([1., 2.])'
    pinned = mx.cpu_pinned(0)       # any other device type is named (MXNet 1.9.1's output), but a scalar's str
    assert (str(np.array([1, 2], ctx=pinned)), str(np.array(3.0, ctx=pinned))) == ('[1. 2.] @cpu_pinned(0)', '3.0')
    assert repr(np.array(3.0, ctx=pinned)) == 'array(3., ctx=cpu_pinned(0))'
    assert np.array([[1, 2]]).item(1) == 2.0 and np.array([[1, 2]]).tolist() == [[1.0, 2.0]]
    assert onp.asarray(np.array([1, 2])).dtype == onp.float32


def test_autograd_grad_buffer_is_an_np_array():
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = np.sum(x * x)
    y.backward()
    assert type(x.grad) is np.ndarray and x.grad.tolist() == [2.0, 4.0, 6.0]


def test_zero_dim_arrays_take_a_gradient_buffer_again():
    x = np.array(2.0)
    x.attach_grad()
    with mx.autograd.record():
        y = x * x
    y.backward()
    x.attach_grad()         # the old buffer is zeroed in place: a zero-dim one too
    assert type(x.grad) is np.ndarray and x.grad.shape == () and x.grad.item() == 0.0
    with mx.autograd.record():
        y = x * x * x
    y.backward()
    assert x.grad.item() == 12.0


def test_copyto_context_and_copy():
    a = np.array([1.0, 2.0])
    b = np.zeros((2,))
    assert a.copyto(b) is b and b.tolist() == [1.0, 2.0]
    here = mx.current_context()
    c = a.as_in_context(here)
    assert c is a and a.ctx == here and a.context == here
    assert a.copy().tolist() == [1.0, 2.0]


def test_functions_match_numpy():
    x = onp.random.RandomState(0).uniform(-1, 1, (3, 4)).astype('float32')
    a = np.array(x)
    checks = [
        (np.sum(a, axis=1), x.sum(axis=1)), (np.mean(a, axis=0, keepdims=True), x.mean(0, keepdims=True)),
        (np.max(a), x.max()), (np.argmax(a, axis=1), x.argmax(1)), (np.std(a), x.std()),
        (np.cumsum(a), x.cumsum()), (np.transpose(a), x.T), (np.concatenate([a, a], axis=1), onp.concatenate([x, x], 1)),
        (np.stack([a, a]), onp.stack([x, x])), (np.where(a > 0, a, 0), onp.where(x > 0, x, 0)),
        (np.dot(a, a.T), x.dot(x.T)), (np.einsum('ij,kj->ik', a, a), onp.einsum('ij,kj->ik', x, x)),
        (np.tril(a), onp.tril(x)), (np.flip(a, 0), onp.flip(x, 0)), (np.roll(a, 1, axis=1), onp.roll(x, 1, 1)),
        (np.clip(a, -0.5, 0.5), onp.clip(x, -0.5, 0.5)), (np.sort(a, axis=0), onp.sort(x, 0)),
        (np.sqrt(np.abs(a)), onp.sqrt(onp.abs(x))), (np.maximum(a, 0), onp.maximum(x, 0)),
        (np.linalg.norm(a), onp.linalg.norm(x)), (np.percentile(a, 50), onp.percentile(x, 50)),
        (np.pad(a, 1), onp.pad(x, 1)), (np.diff(a), onp.diff(x)), (np.tile(a, 2), onp.tile(x, 2)),
    ]
    for got, want in checks:
        assert type(got) is np.ndarray
        assert got.shape == onp.shape(want)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    parts = np.split(a, 2, axis=1)
    assert [p.shape for p in parts] == [(3, 2), (3, 2)]
    assert [t.tolist() for t in np.nonzero(np.array([0, 3, 0, 4]))] == [[1, 3]]


def test_functions_come_from_registry_operators():
    from neomx.operator import registry
    for op in ('_npi_add', '_npi_add_scalar', '_np_sum', '_npi_mean', '_np_reshape', '_npi_concatenate',
               '_npi_zeros', '_npi_uniform', '_npi_svd', '_npi_einsum'):
        assert registry.get(op).impl is not None
    assert hasattr(mx.nd._internal, '_npi_add')


def test_bad_input_raises_numpys_exception_types():
    a = np.ones((2, 3))
    with pytest.raises(ValueError):
        np.add(a, np.ones((4,)))
    with pytest.raises(ValueError, match='cannot reshape'):
        np.reshape(a, (4, 2))
    with pytest.raises(IndexError):
        np.sum(a, axis=5)
    with pytest.raises(MXNetError):
        np.sum(a, axis=5)
    with pytest.raises(onp.linalg.LinAlgError):
        np.linalg.inv(np.ones((2, 3)))


def test_official_numpy_functions_dispatch_to_mx_np():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert type(onp.sum(a)) is np.ndarray and float(onp.sum(a)) == 10.0
    assert type(onp.add(a, 1)) is np.ndarray
    assert type(onp.linalg.inv(a)) is np.ndarray
    # not in MXNet's list: NumPy's own code on copies, mx.np arrays back
    res = onp.argwhere(a > 2)
    assert type(res) is np.ndarray and res.tolist() == [[1, 0], [1, 1]]
    assert np.allclose(a, a) and np.isclose(a, a).all()
    with mx.autograd.record():
        with pytest.raises(ValueError, match='autograd'):
            onp.argwhere(a)


def test_legacy_only_methods_raise_attribute_error():
    with pytest.raises(AttributeError, match='has no attribute exp'):
        np.ones((2,)).exp()


def test_random_and_linalg():
    mx.random.seed(1)
    a = np.random.normal(0, 1, size=(100,))
    mx.random.seed(1)
    b = np.random.normal(0, 1, size=(100,))
    assert a.tolist() == b.tolist() and a.dtype == onp.float32
    u = np.random.uniform(np.zeros((3,)), 1.0)
    assert u.shape == (3,) and bool(((u >= 0) & (u < 1)).all())
    m = np.array([[4.0, 1.0], [1.0, 3.0]])
    l_ = np.linalg.cholesky(m)
    onp.testing.assert_allclose((l_ @ l_.T).asnumpy(), m.asnumpy(), rtol=1e-5)
    w, v = np.linalg.eigh(m)
    assert w.shape == (2,) and v.shape == (2, 2)


@pytest.mark.parametrize('a_shape, b_shape, x_shape', [
    ((), (), ()), ((), (1, 1, 1), ()), ((1, 1, 1), (), (1, 1, 1)), ((1, 1), (1, 1), (1, 1)),
    ((1, 1), (1, 1, 1, 1, 1), ()), ((4, 4), (4,), (4,))])
def test_tensorsolve_shapes_as_mxnet(a_shape, b_shape, x_shape):
    """MXNet 1.9.1's shapes, including its one-element cases where a has no more axes than b."""
    a = np.array(onp.eye(4) * 2 if a_shape == (4, 4) else onp.full(a_shape, 2.0))
    b = np.array(onp.full(b_shape, 3.0))
    x = np.linalg.tensorsolve(a, b)
    assert x.shape == x_shape
    onp.testing.assert_allclose(x.asnumpy(), onp.full(x_shape, 1.5), rtol=1e-6)
    with pytest.raises(ValueError):
        np.linalg.tensorsolve(np.ones((2, 2)), np.ones((2, 2)))


def test_numpy_op_fallback_custom_operators():
    """mxnet.numpy_op_fallback: NumPy functions as custom operators, mx.np arrays in and out,
    callable from mx.nd.np._internal and recorded as MXNet's Custom nodes."""
    from neomx import numpy_op_fallback
    a = np.arange(6).reshape(2, 3)
    resized = mx.nd.np._internal.Custom(a, new_shape=(3, 3), op_type='resize_fallback')
    assert type(resized) is np.ndarray and resized.asnumpy().tolist() == onp.resize(onp.arange(6.0), (3, 3)).tolist()
    index = mx.nd.np._internal.unravel_index_fallback(np.array([5, 1], dtype='int64'), shape=(2, 3))
    assert index.asnumpy().tolist() == [[1, 0], [2, 1]]
    empty = mx.nd.np._internal.empty_like_fallback(a, dtype='int32', order='C', subok=False, shape=None)
    assert empty.shape == (2, 3) and empty.dtype == onp.int32
    mx.random.seed(0)
    draws = mx.nd.np._internal.Custom(np.zeros(2), np.eye(2), size=(500,), op_type='mvn_fallback')
    assert draws.shape == (500, 2) and abs(float(draws.std()) - 1) < 0.15
    graph = json.loads(mx.sym.np._internal.unravel_index_fallback(mx.sym.var('x').as_np_ndarray(), shape=(2, 3)).tojson())
    assert graph['nodes'][1]['op'] == 'Custom' and graph['nodes'][1]['attrs']['op_type'] == 'unravel_index_fallback'
    with pytest.raises(ValueError, match='Duplicate name'):
        numpy_op_fallback.register('unravel_index_fallback')(numpy_op_fallback.Unravel_indexProp)
    a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.np._internal.Custom(a, new_shape=(3, 3), op_type='resize_fallback')
    with pytest.raises(MXNetError, match='does not support gradient'):
        out.backward()
