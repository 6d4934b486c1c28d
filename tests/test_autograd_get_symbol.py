"""mx.autograd.get_symbol: the recorded computation of an array as a Symbol of registry operators,
as MXNet 1.9.1 returns it (operators, attributes as given, var<N>/null<N> variables, node_<N> names)."""
import gc
import json
import weakref

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _nodes(sym):
    return json.loads(sym.tojson())['nodes']


def test_operators_attributes_and_variables_as_mxnet_records_them():
    x = mx.nd.array([[1., -2., 3.], [4., 5., -6.]])
    x.attach_grad()
    w = mx.nd.array([1., 2., 3.])
    with mx.autograd.record():
        z = mx.nd.sum(mx.nd.relu(x * 2 + w), axis=1)
    sym = mx.autograd.get_symbol(z)
    nodes = _nodes(sym)
    assert [n['op'] for n in nodes] == ['null', '_mul_scalar', 'null', 'broadcast_add', 'relu', 'sum']
    assert nodes[1]['attrs'] == {'scalar': '2.0'}
    assert nodes[5]['attrs'] == {'axis': '1'}       # only the attributes given, as MXNet's
    assert 'attrs' not in nodes[4]
    assert nodes[0]['name'].startswith('var') and nodes[2]['name'].startswith('null')
    assert all(n['name'].startswith('node_') for n in nodes if n['op'] != 'null')
    assert sym.list_outputs() == [nodes[5]['name'] + '_output']
    # the Symbol computes what was recorded, and differentiates as autograd did
    z.backward()
    xv, wv = sym.list_arguments()
    exe = sym.bind(mx.cpu(), {xv: x, wv: w}, args_grad={xv: mx.nd.zeros((2, 3))}, grad_req={xv: 'write', wv: 'null'})
    out = exe.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), z.asnumpy())
    exe.backward(mx.nd.ones((2,)))
    np.testing.assert_allclose(exe.grad_dict[xv].asnumpy(), x.grad.asnumpy())


def test_the_same_array_is_one_variable_and_arithmetic_maps_to_mxnet_operators():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = (1 - x) / (x ** 2) + abs(-x) % 3
    nodes = _nodes(mx.autograd.get_symbol(y))
    assert sum(n['op'] == 'null' for n in nodes) == 1
    assert sorted(n['op'] for n in nodes if n['op'] != 'null') == sorted(
        ['_rminus_scalar', '_power_scalar', 'broadcast_div', '_mul_scalar', 'abs', '_mod_scalar', 'broadcast_add'])


def test_multiple_outputs_keep_their_index():
    x = mx.nd.arange(6).reshape((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        a, b, c = mx.nd.split(x, num_outputs=3, axis=1)
        y = c - a
    sym = mx.autograd.get_symbol(y)
    nodes = json.loads(sym.tojson())['nodes']
    split = [i for i, n in enumerate(nodes) if n['op'] == 'SliceChannel']
    assert len(split) == 1
    assert [e[:2] for e in nodes[-1]['inputs']] == [[split[0], 2], [split[0], 0]]
    np.testing.assert_allclose(sym.eval(**{sym.list_arguments()[0]: x})[0].asnumpy(), y.asnumpy())


def test_gluon_eager_and_hybridized_with_inline_limit():
    # MXNet's test_gluon.py::test_inline: a graph of no more operators than inline_limit is
    # recorded operator by operator, a larger one as a single _CachedOp node
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3), mx.gluon.nn.Dense(4), mx.gluon.nn.Dense(2))
    net.initialize()
    x = mx.nd.ones((1, 3))
    with mx.autograd.record():
        eager = net(x)
    assert [n['op'] for n in _nodes(mx.autograd.get_symbol(eager)) if n['op'] != 'null'] == ['FullyConnected'] * 3
    net.hybridize(inline_limit=3)
    with mx.autograd.record():
        y = net(x)
    inlined = _nodes(mx.autograd.get_symbol(y))
    y.backward()
    net.hybridize(inline_limit=0)
    with mx.autograd.record():
        y = net(x)
    sym = mx.autograd.get_symbol(y)
    cached = _nodes(sym)
    y.backward()
    assert len(inlined) == len(cached) + 2 == 10
    assert [n['op'] for n in cached if n['op'] != 'null'] == ['_CachedOp']
    arguments = dict(zip(sym.list_arguments(), [x] + [p.data() for p in net.collect_params().values()]))
    np.testing.assert_allclose(sym.eval(**arguments)[0].asnumpy(), y.asnumpy(), rtol=1e-6)


def test_function_is_a_custom_function_node():
    class Double(mx.autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2

    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = Double()(x) + 1
    assert [n['op'] for n in _nodes(mx.autograd.get_symbol(y))] == ['null', '_CustomFunction', '_plus_scalar']


def test_errors_and_what_is_not_recorded():
    x = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match='not part of a computation graph'):
        mx.autograd.get_symbol(x + 1)
    x.attach_grad()
    assert [n['op'] for n in _nodes(mx.autograd.get_symbol(x))] == ['null']    # a marked variable
    y = x * 2                   # outside record(): nothing recorded
    with pytest.raises(MXNetError, match='not part of a computation graph'):
        mx.autograd.get_symbol(y)
    with pytest.raises(AssertionError, match='get_symbol'):
        mx.autograd.get_symbol(np.ones(2))


def test_the_record_keeps_no_array_alive():
    x = mx.nd.ones((3,))
    x.attach_grad()
    with mx.autograd.record():
        h = x * 2
        y = h + 1
    alive = weakref.ref(h)
    del h
    gc.collect()
    assert alive() is None
    assert [n['op'] for n in _nodes(mx.autograd.get_symbol(y))] == ['null', '_mul_scalar', '_plus_scalar']


def test_attach_grad_makes_a_recorded_result_a_new_variable():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
    y.attach_grad()
    with mx.autograd.record():
        z = y + 1
    assert [n['op'] for n in _nodes(mx.autograd.get_symbol(z))] == ['null', '_plus_scalar']


@pytest.mark.parametrize('method, ops', [
    (lambda a: a.reshape((3, 2)), ['Reshape']),
    (lambda a: a.astype('float64'), ['Cast']),
    (lambda a: a.T, ['transpose']),
    (lambda a: a.copy(), ['_copyto']),
    (lambda a: a[1], ['slice', 'Reshape']),
    (lambda a: a[-1, 0:2], ['slice', 'Reshape']),
    (lambda a: a[:, ::2], ['slice']),
])
def test_array_methods_and_basic_indexing_are_recorded(method, ops):
    x = mx.nd.arange(6).reshape((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = method(x * 1)
    sym = mx.autograd.get_symbol(y)
    assert [n['op'] for n in _nodes(sym)] == ['null', '_mul_scalar'] + ops
    value = sym.eval(**{sym.list_arguments()[0]: x})[0]
    assert value.dtype == y.dtype
    np.testing.assert_array_equal(value.asnumpy(), y.asnumpy())
