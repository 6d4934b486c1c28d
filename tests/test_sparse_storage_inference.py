"""Storage types of executor outputs, MXNet's scatter operators, and the gradients MXNet gives
at the poles of cbrt, gamma and gammaln. Every expected value and storage type is what MXNet
1.9.1 gives for the same call (run on the oracle)."""
import math

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import assign_each, assign_each2, create_sparse_array_zd


def _rsp(row=(1, -3, 2)):
    """A (4, 3) row_sparse array storing ``row`` as its row 2."""
    return mx.nd.sparse.row_sparse_array((np.array([row], dtype='float32'), [2]), shape=(4, 3))


def _bound(sym, args, grads=None):
    return sym.bind(mx.cpu(), args, args_grad=grads)


# ------------------------------------------------------------ executor outputs
@pytest.mark.parametrize('differentiated', [False, True])
def test_relu_of_a_row_sparse_argument_is_row_sparse_whether_differentiated_or_not(differentiated):
    x = mx.sym.var('x', stype='row_sparse')
    grads = {'x': mx.nd.zeros((4, 3)).tostype('row_sparse')} if differentiated else None
    exe = _bound(mx.sym.relu(x), {'x': _rsp()}, grads)
    out = exe.forward(is_train=differentiated)[0]
    assert out.stype == 'row_sparse'
    assert out.indices.asnumpy().tolist() == [2]
    np.testing.assert_array_equal(out.asnumpy()[2], [1, 0, 2])
    if differentiated:
        exe.backward(mx.nd.ones((4, 3)))
        grad = exe.grad_dict['x']
        assert grad.stype == 'row_sparse'
        np.testing.assert_array_equal(grad.asnumpy(), [[0, 0, 0], [0, 0, 0], [1, 0, 1], [0, 0, 0]])


def test_simple_bind_allocates_outputs_of_the_inferred_storage_type():
    x = mx.sym.var('x', stype='row_sparse')
    exe = mx.sym.relu(x).simple_bind(mx.cpu(), x=(4, 3), stype_dict={'x': 'row_sparse'})
    assert exe.outputs[0].stype == 'row_sparse'
    first = exe.outputs[0]
    exe.arg_dict['x'][:] = _rsp()
    exe.forward(is_train=True)
    assert exe.outputs[0] is first and first.stype == 'row_sparse'
    np.testing.assert_array_equal(first.asnumpy()[2], [1, 0, 2])


@pytest.mark.parametrize('lhs, rhs, stype', [
    ('default', 'row_sparse', 'row_sparse'), ('row_sparse', 'default', 'row_sparse'),
    ('default', 'csr', 'csr'), ('csr', 'default', 'csr'), ('row_sparse', 'csr', 'default'),
])
def test_differentiated_elemwise_mul_has_mxnets_output_storage(lhs, rhs, stype):
    dense = np.arange(12, dtype='float32').reshape(4, 3)
    arrays = {'default': mx.nd.array(dense), 'row_sparse': _rsp(), 'csr': _rsp().tostype('default').tostype('csr')}
    a, b = arrays[lhs], arrays[rhs]
    out = mx.sym.sparse.elemwise_mul(mx.sym.var('a', stype=lhs), mx.sym.var('b', stype=rhs))
    exe = _bound(out, {'a': a, 'b': b}, {'a': mx.nd.zeros((4, 3)), 'b': mx.nd.zeros((4, 3))})
    result = exe.forward(is_train=True)[0]
    assert result.stype == stype
    np.testing.assert_allclose(result.asnumpy(), a.asnumpy() * b.asnumpy())
    exe.backward(mx.nd.ones((4, 3)))
    np.testing.assert_allclose(exe.grad_dict['a'].asnumpy(), b.asnumpy())
    np.testing.assert_allclose(exe.grad_dict['b'].asnumpy(), a.asnumpy())


@pytest.mark.parametrize('stype', ['row_sparse', 'csr'])
def test_hypot_of_two_arrays_of_one_sparse_kind_keeps_it(stype):
    a = mx.nd.array([[0, 0, 0], [0, 0, 0], [3, 0, 2], [0, 0, 0]]).tostype(stype)
    b = mx.nd.array([[0, 0, 0], [4, 0, 0], [0, 0, 0], [0, 0, 0]]).tostype(stype)
    expected = [[0, 0, 0], [4, 0, 0], [3, 0, 2], [0, 0, 0]]
    out = mx.nd._internal._hypot(a, b)
    assert out.stype == stype
    np.testing.assert_allclose(out.asnumpy(), expected)
    exe = _bound(mx.sym._internal._hypot(mx.sym.var('a', stype=stype), mx.sym.var('b', stype=stype)),
                 {'a': a, 'b': b})
    assert exe.forward()[0].stype == stype
    assert mx.nd._internal._hypot(a, a.tostype('default')).stype == 'default'


def test_an_operator_falling_back_gives_a_dense_output():
    exe = _bound(mx.sym.exp(mx.sym.var('x', stype='row_sparse')), {'x': _rsp()},
                 {'x': mx.nd.zeros((4, 3))})
    out = exe.forward(is_train=True)[0]
    assert out.stype == 'default'
    np.testing.assert_allclose(out.asnumpy(), np.exp(_rsp().asnumpy()), rtol=1e-6)


# ------------------------------------------------------------ recorded nd calls
def test_recorded_calls_on_a_row_sparse_variable_keep_mxnets_storage_and_gradients():
    x = _rsp()
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x)
        z = mx.nd.elemwise_mul(y, mx.nd.full((4, 3), 3.0))
    assert (y.stype, z.stype) == ('row_sparse', 'row_sparse')
    np.testing.assert_array_equal(z.asnumpy()[2], [3, 0, 6])
    z.backward()
    assert x.grad.stype == 'row_sparse'
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 0, 0], [0, 0, 0], [3, 0, 3], [0, 0, 0]])


def test_recorded_dense_times_csr_is_csr_and_differentiates_the_dense_input():
    d = mx.nd.ones((4, 3))
    d.attach_grad()
    c = mx.nd.array([[0, 1, 0], [0, 0, 0], [2, 0, 0], [0, 0, 0]]).tostype('csr')
    with mx.autograd.record():
        w = mx.nd.elemwise_mul(d, c)
    assert w.stype == 'csr'
    w.backward()
    np.testing.assert_array_equal(d.grad.asnumpy(), c.asnumpy())


# ------------------------------------------------------------ scatter operators
def _scatter_inputs():
    dense = mx.nd.array(np.arange(1, 13).reshape(4, 3))
    csr = mx.nd.sparse.csr_matrix((np.array([3., 5.], dtype='float32'), [0, 2], [0, 1, 1, 2, 2]), shape=(4, 3))
    return dense, csr


@pytest.mark.parametrize('name, value', [('_scatter_plus_scalar', [3, 2, 4]), ('_scatter_minus_scalar', [-1, -2, 0])])
def test_scatter_scalar_ops_change_the_stored_rows_only(name, value):
    op = getattr(mx.nd._internal, name)
    out = op(_rsp((1, 0, 2)), 2.0)
    assert out.stype == 'row_sparse' and out.indices.asnumpy().tolist() == [2]
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0, 0], [0, 0, 0], value, [0, 0, 0]])
    dense, csr = _scatter_inputs()
    out = op(csr, 2.0)
    assert out.stype == 'csr'
    np.testing.assert_array_equal(out.data.asnumpy(), [3 + (2 if name == '_scatter_plus_scalar' else -2),
                                                        5 + (2 if name == '_scatter_plus_scalar' else -2)])
    out = op(dense, 2.0)        # dense: the plain scalar operator
    np.testing.assert_array_equal(out.asnumpy(), getattr(mx.nd._internal, name.replace('_scatter', ''))(dense, 2.0).asnumpy())
    exe = _bound(getattr(mx.sym._internal, name)(mx.sym.var('x', stype='csr'), 2.0), {'x': csr})
    assert exe.forward()[0].stype == 'csr'


def test_scatter_elemwise_div_divides_the_rows_of_a_row_sparse_lhs_only():
    dense, csr = _scatter_inputs()
    lhs = _rsp((1, 0, 2))
    rhs_rsp = mx.nd.sparse.row_sparse_array((np.array([[2, 2, 2], [4, 0, 4]], dtype='float32'), [1, 2]), shape=(4, 3))
    cases = [(dense, [1 / 7, 0, 2 / 9]), (rhs_rsp, [0.25, math.nan, 0.5]), (csr, [math.inf, math.nan, 0.4])]
    for rhs, row in cases:
        out = mx.nd._internal._scatter_elemwise_div(lhs, rhs)
        assert out.stype == 'row_sparse' and out.indices.asnumpy().tolist() == [2]
        np.testing.assert_allclose(out.asnumpy()[2], row, rtol=1e-6)
        assert not out.asnumpy()[[0, 1, 3]].any()
    out = mx.nd._internal._scatter_elemwise_div(csr, dense)     # a csr lhs: dense, as elemwise_div
    assert out.stype == 'default'
    np.testing.assert_allclose(out.asnumpy(), csr.asnumpy() / dense.asnumpy())
    exe = _bound(mx.sym._internal._scatter_elemwise_div(mx.sym.var('a', stype='row_sparse'), mx.sym.var('b')),
                 {'a': lhs, 'b': dense})
    out = exe.forward()[0]
    assert out.stype == 'row_sparse'
    np.testing.assert_allclose(out.asnumpy()[2], [1 / 7, 0, 2 / 9], rtol=1e-6)


# ------------------------------------------------------------ gradients at the poles
def _gradient(name, values, create_graph=False):
    x = mx.nd.array(values)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x)
        if create_graph:
            y = mx.autograd.grad(y, [x], create_graph=True, retain_graph=True)[0]
    y.backward()
    return x.grad.asnumpy()


def test_cbrt_gradient_is_infinite_at_zero_and_its_second_order_follows():
    np.testing.assert_allclose(_gradient('cbrt', [0., 8., -1., 0.125]), [math.inf, 1 / 12, 1 / 3, 4 / 3], rtol=1e-6)
    np.testing.assert_allclose(_gradient('cbrt', [0., 8., -1., 0.125], create_graph=True),
                               [-math.inf, -2 / 288, 2 / 9, -64 / 9], rtol=1e-5)


def test_gamma_and_gammaln_gradients_are_mxnets_at_the_poles():
    points = [0., -1., -2., 0.5, 1., 2.]
    np.testing.assert_allclose(_gradient('gamma', points),
                               [math.inf, math.nan, math.nan, -3.4802322, -0.5772157, 0.4227843], rtol=1e-5)
    np.testing.assert_allclose(_gradient('gammaln', points),
                               [math.inf, math.inf, math.inf, -1.9635108, -0.5772157, 0.4227843], rtol=1e-5)


# ------------------------------------------------------------ test utilities
def test_assign_each_gives_float64_of_the_input_shape_even_when_empty():
    out = assign_each(np.array([1, -2], dtype='int32'), lambda v: v > 0)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.0]
    assert assign_each(np.zeros((0, 3), 'float32'), lambda v: 2).shape == (0, 3)
    assert assign_each2(np.zeros(0), np.zeros(0), lambda a, b: a + b).shape == (0,)


@pytest.mark.parametrize('stype', ['row_sparse', 'csr'])
def test_an_empty_sparse_array_with_a_modifier_is_all_zeros(stype):
    arr = create_sparse_array_zd((4, 3), stype, density=0.0, modifier_func=lambda v: 2, rsp_indices=[])
    assert arr.stype == stype and not arr.asnumpy().any()


def test_dot_of_csr_and_a_computed_rhs_gives_a_dense_gradient_with_zeros_for_unused_rows():
    # column 1 of the batch holds nothing: row 1 of the computed rhs gets a zero gradient
    dense = np.array([[2, 0, 0], [1, 0, 3]], dtype=np.float32)
    csr = mx.nd.array(dense).tostype('csr')
    v = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    v.attach_grad()
    head = np.array([[1, -1], [2, 0.5]], dtype=np.float32)
    with mx.autograd.record():
        y = mx.nd.dot(csr, v * 3)
    y.backward(mx.nd.array(head))
    assert v.grad.stype == 'default'
    np.testing.assert_allclose(y.asnumpy(), dense @ (3 * v.asnumpy()))
    np.testing.assert_allclose(v.grad.asnumpy(), 3 * dense.T @ head)
