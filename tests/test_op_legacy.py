"""Legacy operator names (neomx/operator/legacy.py): aliases, Pooling_v1, slice assignment,
NDArray utilities, and an old-style Symbol JSON using them. Expected values recorded from
MXNet 1.9.1."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry
from neomx.test_utils import assert_almost_equal, check_numeric_gradient

nd = mx.nd
X = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)


@pytest.mark.parametrize('old, new', [
    ('_Plus', 'elemwise_add'), ('_Div', 'elemwise_div'), ('_Not_Equal', '_not_equal'),
    ('_Logical_Xor', '_logical_xor'), ('_RMinusScalar', '_rminus_scalar'),
    ('_GreaterEqualScalar', '_greater_equal_scalar'), ('_LogicalXorScalar', '_logical_xor_scalar'),
    ('Convolution_v1', 'Convolution'), ('choose_element_0index', 'pick'), ('_grad_add', 'elemwise_add'),
    ('uniform', '_random_uniform'), ('random_normal', '_random_normal'),
    ('random_generalized_negative_binomial', '_random_generalized_negative_binomial'),
    ('random_randint', '_random_randint'), ('sample_gamma', '_sample_gamma'),
    ('sample_multinomial', '_sample_multinomial'), ('shuffle', '_shuffle'),
    ('_crop_assign', '_slice_assign'),
])
def test_alias_names_the_same_operator(old, new):
    assert registry.get(old) is registry.get(new)


@pytest.mark.parametrize('scatter, plain', [('_scatter_plus_scalar', '_plus_scalar'),
                                            ('_scatter_minus_scalar', '_minus_scalar'),
                                            ('_scatter_elemwise_div', 'elemwise_div')])
def test_scatter_operators_are_operators_of_their_own(scatter, plain):
    # the same on dense arrays, but not on sparse ones (tests/test_sparse_storage_inference.py)
    assert registry.get(scatter) is not registry.get(plain)
    assert registry.get(scatter).storage is not None
    assert registry.get(scatter).storage != registry.get(plain).storage


def test_scalar_and_binary_aliases_compute():
    x, y = nd.array(X), nd.array([[2, 2, 2], [3, 3, 3]])
    I = nd._internal
    assert_almost_equal(I._RDivScalar(x, scalar=6), 6 / X)
    assert_almost_equal(I._Hypot(x, y), np.hypot(X, y.asnumpy()))
    assert_almost_equal(I._Lesser_Equal(x, y), (X <= y.asnumpy()).astype(np.float32))
    xi = nd.array(X, dtype='int32')
    assert I._scatter_plus_scalar(xi, scalar=1.5).asnumpy().tolist() == [[2, 3, 4], [5, 6, 7]]
    with pytest.raises(mx.base.MXNetError, match='shapes'):
        I._Mul(x, nd.ones((3,)))


def test_random_aliases():
    assert nd.uniform(shape=(2, 3)).shape == (2, 3)
    assert nd.random_poisson(lam=2, shape=(4,)).dtype == np.float32
    assert nd.sample_normal(nd.zeros((2,)), nd.ones((2,)), shape=(3,)).shape == (2, 3)
    assert sorted(nd.shuffle(nd.arange(5)).asnumpy().tolist()) == [0, 1, 2, 3, 4]


def test_old_symbol_json_loads_and_runs():
    # A graph as MXNet 0.x wrote it: legacy operator names (MXNet 1.9.1 itself writes the
    # canonical ones); the expected output was computed by MXNet 1.9.1.
    nodes = [
        {'op': 'null', 'name': 'a', 'inputs': []}, {'op': 'null', 'name': 'b', 'inputs': []},
        {'op': '_Mul', 'name': 'm', 'inputs': [[0, 0, 0], [1, 0, 0]]},
        {'op': '_PlusScalar', 'name': 'p', 'attrs': {'scalar': '2.0'}, 'inputs': [[2, 0, 0]]},
        {'op': '_MaximumScalar', 'name': 'mx', 'attrs': {'scalar': '3.0'}, 'inputs': [[3, 0, 0]]},
        {'op': 'null', 'name': 'i', 'inputs': []},
        {'op': 'choose_element_0index', 'name': 'c', 'inputs': [[0, 0, 0], [5, 0, 0]]},
        {'op': 'Reshape', 'name': 'r', 'attrs': {'shape': '(2,1)'}, 'inputs': [[6, 0, 0]]},
        {'op': 'broadcast_to', 'name': 'bt', 'attrs': {'shape': '(2,3)'}, 'inputs': [[7, 0, 0]]},
        {'op': '_Plus', 'name': 'q', 'inputs': [[4, 0, 0], [8, 0, 0]]}]
    graph = {'nodes': nodes, 'arg_nodes': [0, 1, 5], 'node_row_ptr': list(range(11)),
             'heads': [[9, 0, 0]], 'attrs': {'mxnet_version': ['int', 901]}}
    sym = mx.sym.load_json(json.dumps(graph))
    assert sym.list_arguments() == ['a', 'b', 'i']
    ex = sym.bind(mx.cpu(), {'a': nd.array(X), 'b': nd.array([[2, 0, 1], [1, 1, -1]]), 'i': nd.array([2, 0])})
    assert ex.forward()[0].asnumpy().tolist() == [[7, 6, 8], [10, 11, 7]]


def test_pooling_v1_max_pads_with_zeros():
    x = nd.array(np.arange(25.).reshape(1, 1, 5, 5) - 12)
    out = nd.Pooling_v1(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    assert out.asnumpy()[0, 0].tolist() == [[0, 0, 0], [4, 6, 7], [9, 11, 12]]
    avg = nd.Pooling_v1(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg', pooling_convention='full')
    assert_almost_equal(avg, nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg',
                                        pooling_convention='full'))
    assert nd.Pooling_v1(x, kernel=(2, 2)).shape == (1, 1, 4, 4)
    with pytest.raises(mx.base.MXNetError, match='lp'):
        nd.Pooling_v1(x, kernel=(2, 2), pool_type='lp')
    check_numeric_gradient(lambda d: nd.Pooling_v1(d, kernel=(2, 2), pool_type='avg', pad=(1, 1)),
                           [np.random.RandomState(0).randn(1, 2, 3, 3)])


def test_slice_assign():
    I = nd._internal
    x = nd.array(X)
    assert I._slice_assign(x, nd.array([[7, 8]]), begin=(0, 0), end=(1, None), step=(1, 2)).asnumpy().tolist() \
        == [[7, 2, 8], [4, 5, 6]]
    assert I._crop_assign(x, nd.array([[7, 7]]), begin=(1, 0), end=(2, 2)).asnumpy().tolist() == [[1, 2, 3], [7, 7, 6]]
    assert I._slice_assign_scalar(x, scalar=9, begin=(None, None), end=(None, None), step=(1, -2)).asnumpy().tolist() \
        == [[9, 2, 9], [9, 5, 9]]
    assert I._crop_assign_scalar(x, 9, begin=(-1,), end=(None,)).asnumpy().tolist() == [[1, 2, 3], [9, 9, 9]]
    with pytest.raises(mx.base.MXNetError, match='does not fit'):
        I._slice_assign(x, nd.array([[7, 7, 7]]), begin=(1, 0), end=(2, 2))
    check_numeric_gradient(lambda a, b: I._slice_assign(a, b, begin=(0, 2), end=(2, 0), step=(1, -1)),
                           [np.random.RandomState(1).randn(2, 3), np.random.RandomState(2).randn(2, 2)])


def test_ndarray_utilities():
    I = nd._internal
    x = nd.array(X)
    assert nd.fill_element_0index(x, nd.array([9, 8]), nd.array([1, 2])).asnumpy().tolist() == [[1, 9, 3], [4, 5, 8]]
    assert nd.fill_element_0index(x, nd.array([9, 8]), nd.array([5, -1])).asnumpy().tolist() == X.tolist()
    assert I._onehot_encode(nd.array([1, 7]), nd.ones((2, 4))).asnumpy().tolist() == [[0, 1, 0, 0], [0, 0, 0, 0]]
    out = nd.zeros((2, 3), dtype='int32')
    I._copyto(x, out=out)
    assert out.dtype == np.int32 and out.asnumpy().tolist() == X.tolist()
    out = nd.zeros((2, 3))
    I._set_value(3.5, out=out)
    assert (out.asnumpy() == 3.5).all()
    target = nd.array(X)
    I._scatter_set_nd(target, nd.array([10, 20]), nd.array([[0, 1], [2, 0]]), shape=(2, 3), out=target)
    assert target.asnumpy().tolist() == [[1, 2, 10], [20, 5, 6]]
    assert I._identity_with_attr_like_rhs(x, nd.ones((2, 3))).asnumpy().tolist() == X.tolist()
    with pytest.raises(mx.base.MXNetError, match='shapes'):
        I._identity_with_attr_like_rhs(x, nd.ones((5,)))
    check_numeric_gradient(lambda a, b: I._identity_with_attr_like_rhs(a, b), [X, X], grad_nodes=[0])
