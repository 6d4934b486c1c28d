"""Gradients of integer arrays, as MXNet 1.9.1 computes them (values checked against it):
attach_grad on int arrays, int gradients through topk/indexing/boolean_mask/cast, executors
with integer arguments, and the in-place writes MXNet refuses while recording."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd


def test_int_variable_gets_int_gradient_through_topk():
    a = mx.nd.arange(0, 20, dtype=np.int32)
    a.attach_grad()
    assert a.grad.dtype == np.int32
    with autograd.record():
        b = mx.nd.topk(a, k=3, ret_typ='value')
    b.backward(mx.nd.array([1, 2, 3], dtype=np.int32))
    assert a.grad.dtype == np.int32
    np.testing.assert_array_equal(a.grad.asnumpy(), [0] * 17 + [3, 2, 1])


def test_int_gradient_through_indexing():
    x = mx.nd.array(np.arange(12).reshape(3, 4), dtype=np.int64)
    x.attach_grad()
    with autograd.record():
        y = x[1:, [0, 2]]
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0]])
    assert x.grad.dtype == np.int64


def test_int_gradients_accumulate_through_boolean_mask_and_sums():
    a = mx.nd.array(np.arange(15).reshape(5, 3), dtype=np.int32)
    grad = mx.nd.zeros_like(a)
    autograd.mark_variables([a], [grad], grad_reqs='add')
    bi, ci = mx.nd.array([1, 0, 1, 0, 0]), mx.nd.array([0, 0, 1, 1, 1])
    for _ in range(3):
        with autograd.record():
            su = mx.nd.contrib.boolean_mask(a, bi).sum() + mx.nd.contrib.boolean_mask(a, ci).sum()
        su.backward()
    np.testing.assert_array_equal(grad.asnumpy()[:, 0], [3, 0, 6, 3, 3])


def test_cast_to_int_passes_the_gradient_to_a_float_variable():
    x = mx.nd.array([1.5, 2.7, -3.2])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.cast(x, dtype='int32') * 2
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y.asnumpy(), [2, 4, -6])
    y.backward(mx.nd.array([1, 1, 1], dtype='int32'))
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 2])


def test_writes_into_an_int_variable_refresh_its_gradient_values():
    x = mx.nd.array([1, 2, 3], dtype=np.int32)
    x.attach_grad()
    x[:] = mx.nd.array([4, 5, 6], dtype=np.int32)
    with autograd.record():
        y = x * x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [8, 10, 12])


def test_float_arrays_do_not_take_the_integer_path():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * 3
    y.backward()
    assert y._t.grad_fn is not None and x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 3])


@pytest.mark.parametrize('src, dst', [(np.int32, np.float32), (np.float32, np.int32), (np.int32, np.int32),
                                      (np.float16, np.int32)])
def test_executor_cast_gradients(src, dst):
    x = mx.sym.Variable('x', dtype=src)
    exe = mx.sym.Cast(x, dtype=dst).simple_bind(ctx=mx.cpu(), x=(2, 3))
    values = np.array([[1.7, -2.4, 3.0], [-0.5, 9.9, -7.1]])
    exe.arg_arrays[0][:] = values
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(values, dtype=dst))
    assert exe.outputs[0].dtype == dst and exe.grad_arrays[0].dtype == src
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), values.astype(src).astype(dst), rtol=1e-3)
    np.testing.assert_allclose(exe.grad_arrays[0].asnumpy(), values.astype(dst).astype(src), rtol=1e-3)


def test_executor_int_length_argument_gets_zero_gradient():
    data, length = mx.sym.Variable('data'), mx.sym.Variable('length')
    sym = mx.sym.softmax(data=data, length=length, use_length=True, axis=1)
    exe = sym.bind(mx.cpu(), {'data': mx.nd.ones((2, 3)), 'length': mx.nd.array([1, 2], dtype='int32')},
                   args_grad={'data': mx.nd.zeros((2, 3)), 'length': mx.nd.ones((2,), dtype='int32')})
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([[1, 0, 0], [0, 1, 0]]))
    np.testing.assert_array_equal(exe.grad_dict['length'].asnumpy(), [0, 0])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), [[0, 0, 0], [-0.25, 0.25, 0]], atol=1e-6)


def test_take_gives_zero_gradient_to_int_indices():
    x, idx = mx.sym.Variable('x'), mx.sym.Variable('idx')
    exe = mx.sym.take(x, idx).simple_bind(ctx=mx.cpu(), x=(4, 2), idx=(3,),
                                          type_dict={'x': np.float32, 'idx': np.int32})
    exe.arg_dict['idx'][:] = np.array([0, 2, 2])
    exe.grad_dict['idx'][:] = 5
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((3, 2)))
    np.testing.assert_array_equal(exe.grad_dict['idx'].asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(exe.grad_dict['x'].asnumpy()[:, 0], [1, 0, 2, 0])


@pytest.mark.parametrize('write', [
    lambda x, y: x.__setitem__(0, y),
    lambda x, y: x.__setitem__([0, 1], y),
    lambda x, y: x.__iadd__(y.reshape((1, 4)).broadcast_to((3, 4))),
])
def test_inplace_write_of_a_recorded_value_is_refused(write):
    x, y = mx.nd.zeros((3, 4)), mx.nd.ones((4,))
    y.attach_grad()
    with autograd.record():
        with pytest.raises(mx.base.MXNetError, match='Inplace operations'):
            write(x, y)


def test_inplace_writes_mxnet_allows_while_recording():
    x, y = mx.nd.zeros((3, 4)), mx.nd.ones((3, 4))
    y.attach_grad()
    with autograd.record():
        x[0] = mx.nd.ones((4,)) * 2     # nothing requiring gradients
        x += 1
        z = mx.nd.zeros((3, 4))
        z[:] = y            # a copy of the whole array
    np.testing.assert_array_equal(x.asnumpy()[:, 0], [3, 1, 1])
    np.testing.assert_array_equal(z.asnumpy(), np.ones((3, 4)))


def test_parameter_load_with_saved_dtype_casts_initialized_arrays(tmp_path):
    f = str(tmp_path / 'p.params')
    saved = mx.gluon.ParameterDict('')
    saved.get('w0', shape=(2, 2), dtype='float32')
    saved.get('w1', shape=(2, 2), dtype='int8')
    saved.initialize(mx.init.One())
    saved.save(f)
    loaded = mx.gluon.ParameterDict('')
    loaded.get('w0', shape=(2, 2), dtype='float16')
    loaded.get('w1', shape=(2, 2), dtype='float64')
    loaded.load(f, cast_dtype=True, dtype_source='current')
    assert loaded['w0'].data().dtype == np.float16 and loaded['w1'].data().dtype == np.float64
    loaded.load(f, cast_dtype=True, dtype_source='saved')
    assert loaded['w0'].data().dtype == np.float32 and loaded['w1'].data().dtype == np.int8
    assert loaded['w1'].grad().dtype == np.int8


def test_bind_refuses_gradients_through_an_operator_without_one():
    x, idx = mx.sym.Variable('x'), mx.sym.Variable('idx')
    y = mx.sym.batch_take(x, idx)
    shapes = dict(x=(4, 3), idx=(4,), type_dict={'x': np.float32, 'idx': np.int32})
    with pytest.raises(mx.base.MXNetError, match='batch_take is non-differentiable'):
        y.simple_bind(ctx=mx.cpu(), **shapes)
    exe = mx.sym.stop_gradient(y).simple_bind(ctx=mx.cpu(), **shapes)     # blocked: fine
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict['x'].asnumpy(), np.zeros((4, 3)))
    y.simple_bind(ctx=mx.cpu(), grad_req='null', **shapes)     # no gradient asked for
