"""What blocks accept as inputs and attributes, as MXNet 1.9.1: None and nested lists as
HybridBlock inputs, the errors of mixed or absent arrays, and the warning for blocks kept
in plain containers."""
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import gluon


class _AddOptional(gluon.HybridBlock):
    """a + b where either may be None (or a list of arrays to sum)."""

    def hybrid_forward(self, F, a, b=None):
        a = sum(a) if isinstance(a, (list, tuple)) else a
        b = sum(b) if isinstance(b, (list, tuple)) else b
        if a is None:
            return b * 2
        return a if b is None else a + b


class _Nested(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.inner = _AddOptional()

    def hybrid_forward(self, F, a, b):
        return self.inner(a, b) + 1


@pytest.mark.parametrize('hybridize', [False, True])
@pytest.mark.parametrize('a, b, want', [(None, 3.0, 7.0), (2.0, None, 3.0), (2.0, 3.0, 6.0)])
def test_none_inputs_reach_hybrid_forward(hybridize, a, b, want):
    net = _Nested()
    if hybridize:
        net.hybridize()
    args = [None if v is None else mx.nd.full((2,), v) for v in (a, b)]
    for _ in range(2):              # the second call runs the cached graph
        np.testing.assert_array_equal(net(*args).asnumpy(), [want, want])


@pytest.mark.parametrize('hybridize', [False, True])
def test_list_inputs_reach_hybrid_forward(hybridize):
    net = _AddOptional()
    if hybridize:
        net.hybridize()
    out = net([mx.nd.ones((3,)), mx.nd.ones((3,))], [mx.nd.ones((3,))] * 3)
    np.testing.assert_array_equal(out.asnumpy(), [5, 5, 5])


def test_a_hybridized_graph_keeps_its_none_inputs_but_trailing_ones_are_optional():
    net = _AddOptional()
    net.hybridize()
    np.testing.assert_array_equal(net(mx.nd.ones((2,))).asnumpy(), [1, 1])
    np.testing.assert_array_equal(net(mx.nd.ones((2,)), None).asnumpy(), [1, 1])
    with pytest.raises(ValueError, match='does not match the cached version'):
        net(mx.nd.ones((2,)), mx.nd.ones((2,)))
    other = _AddOptional()
    other.hybridize()
    other(None, mx.nd.ones((2,)))
    with pytest.raises(ValueError, match='does not match the cached version'):
        other(mx.nd.ones((2,)), mx.nd.ones((2,)))


@pytest.mark.parametrize('hybridize', [False, True])
def test_inputs_must_hold_arrays_of_one_kind(hybridize):
    net = _AddOptional()
    if hybridize:
        net.hybridize()
    with pytest.raises(ValueError, match='one NDArray or one Symbol'):
        net(None, None)
    with pytest.raises(ValueError, match='mixed NDArrays and Symbols'):
        net(mx.nd.ones((2,)), mx.sym.var('b'))
    with pytest.raises(ValueError, match='mixed NDArrays and Symbols'):
        net(mx.sym.var('a'), mx.nd.ones((2,)))


def test_hybridized_inputs_are_arrays_on_one_context():
    net = _AddOptional()
    np.testing.assert_array_equal(net(mx.nd.ones((2,)), 1).asnumpy(), [2, 2])
    net.hybridize()
    with pytest.raises(ValueError, match='list of Symbol or NDArray'):
        net(mx.nd.ones((2,)), 1)
    with pytest.raises(ValueError, match='multiple contexts'):
        net(mx.nd.ones((2,), ctx=mx.cpu(1)), mx.nd.ones((2,), ctx=mx.cpu(2)))


def test_blocks_in_plain_containers_warn_and_are_not_collected():
    class Holder(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.layers = {'a': [gluon.nn.Dense(2), gluon.nn.Dense(3)]}
                self.data = {'a': '4', 'b': 123}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        params = Holder().collect_params()
    assert len(params) == 0
    assert ['Holder.layers' in str(w.message) for w in caught] == [True]

    class Registered(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.layers = [gluon.nn.Dense(2)]
                self.register_child(self.layers[0])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        params = Registered().collect_params()
    assert len(params) == 2 and not caught


def test_symbol_block_refuses_row_sparse_variables():
    data = mx.sym.var('data')
    weight = mx.sym.var('weight', stype='row_sparse')
    out = mx.sym.dot(data, weight)
    with pytest.raises(AssertionError, match="Parameter 'weight'.*row_sparse"):
        gluon.SymbolBlock(out, data)
    dense = gluon.SymbolBlock(mx.sym.dot(data, mx.sym.var('weight')), data)
    assert list(dense.collect_params().keys()) == ['weight']
