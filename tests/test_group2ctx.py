"""Model parallelism: bind/simple_bind(group2ctx=...) place each operator on its ctx_group's
context (as MXNet's PlaceDevice), and values and gradients are those of the unplaced graph.
On CPU, cpu(0)/cpu(1)/cpu(2) are one torch device, so the placement plan itself is checked."""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.base import MXNetError
from neomx.symbol.placement import argument_contexts, placement


def _two_group_net():
    data = mx.sym.var('data')
    with mx.AttrScope(ctx_group='dev1'):
        fc1 = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
        act = mx.sym.relu(fc1, name='act')
    with mx.AttrScope(ctx_group='dev2'):
        fc2 = mx.sym.FullyConnected(act, num_hidden=2, name='fc2')
    return mx.sym.sum(fc2 * 2, name='total')        # no group: placed after its input


GROUPS = {'dev1': mx.cpu(1), 'dev2': mx.cpu(2)}


def test_placement_follows_groups_then_inputs_then_consumers():
    net = _two_group_net()
    devices = {n.name: str(c) for n, c in placement(net, mx.cpu(0), GROUPS).items()}
    assert devices['fc1'] == devices['act'] == 'cpu(1)'
    assert devices['fc2'] == 'cpu(2)'
    assert devices['total'] == 'cpu(2)' and [c for n, c in devices.items() if n.startswith('_mul')] == ['cpu(2)']
    # an operator whose inputs are all variables takes its consumer's context
    a = mx.sym.var('a')
    first = mx.sym.exp(a, name='first')
    with mx.AttrScope(ctx_group='dev2'):
        second = mx.sym.log(first, name='second')
    assert {n.name: str(c) for n, c in placement(second, mx.cpu(0), GROUPS).items()} == {
        'first': 'cpu(2)', 'second': 'cpu(2)'}
    # without group2ctx (or an unknown group) everything runs on the bound context
    assert set(map(str, placement(net, mx.cpu(0), None).values())) == {'cpu(0)'}
    assert set(map(str, placement(net, mx.cpu(0), {'other': mx.cpu(3)}).values())) == {'cpu(0)'}


def test_simple_bind_allocates_on_the_groups_contexts_and_matches_the_unplaced_graph():
    net = _two_group_net()
    contexts = {k: str(v) for k, v in argument_contexts(net, mx.cpu(0), GROUPS).items()}
    assert contexts == {'data': 'cpu(0)', 'fc1_weight': 'cpu(1)', 'fc1_bias': 'cpu(1)',
                        'fc2_weight': 'cpu(2)', 'fc2_bias': 'cpu(2)'}
    placed = net.simple_bind(mx.cpu(0), data=(3, 5), group2ctx=GROUPS)
    plain = net.simple_bind(mx.cpu(0), data=(3, 5))
    assert {k: str(v.context) for k, v in placed.arg_dict.items()} == contexts
    assert str(placed.outputs[0].context) == 'cpu(2)'
    rng = np.random.RandomState(0)
    for name, arr in placed.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape)
        plain.arg_dict[name][:] = arr.asnumpy()
    for exe in (placed, plain):
        exe.forward(is_train=True)
        exe.backward()
    np.testing.assert_allclose(placed.outputs[0].asnumpy(), plain.outputs[0].asnumpy(), rtol=1e-6)
    for name in placed.grad_dict:
        np.testing.assert_allclose(placed.grad_dict[name].asnumpy(), plain.grad_dict[name].asnumpy(), rtol=1e-6)
    # inference passes run placed as well
    np.testing.assert_allclose(placed.forward(is_train=False)[0].asnumpy(), plain.forward()[0].asnumpy(), rtol=1e-6)


def test_bind_and_module_take_group2ctx():
    # MXNet's test_model_parallel.py::test_chain on one device pair
    data1, data2, data3 = mx.sym.var('data1'), mx.sym.var('data2'), mx.sym.var('data3')
    with mx.AttrScope(ctx_group='dev1'):
        net = (data1 + data2) * 3
    with mx.AttrScope(ctx_group='dev2'):
        net = net + data3
    args = [mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2, mx.nd.ones((2, 2), ctx=mx.cpu(1)) * 3]
    grads = [mx.nd.zeros((2, 2)) for _ in range(3)]
    exe = net.bind(mx.cpu(0), args=args, args_grad=grads, group2ctx={'dev1': mx.cpu(0), 'dev2': mx.cpu(1)})
    assert exe.forward(is_train=True)[0].asnumpy().tolist() == [[12.0, 12.0]] * 2
    exe.backward(mx.nd.ones((2, 2)))
    assert [g.asnumpy()[0, 0] for g in grads] == [3.0, 3.0, 1.0]
    reshaped = exe.reshape(data1=(1, 2), data2=(1, 2), data3=(1, 2), allow_up_sizing=True)
    assert reshaped._group2ctx == {'dev1': mx.cpu(0), 'dev2': mx.cpu(1)}


def test_executor_and_kvstore_take_mxnets_parameter_names():
    net = mx.sym.var('a') * 2
    exe = mx.executor.Executor(net, mx.cpu(), [mx.nd.ones(2)], group2ctx=None, handle=None)
    assert exe.forward()[0].asnumpy().tolist() == [2.0, 2.0]
    with pytest.raises(MXNetError, match='handle'):
        mx.executor.Executor(net, mx.cpu(), [mx.nd.ones(2)], handle=object())
    with pytest.raises(MXNetError, match='handle'):
        mx.kv.KVStore(handle=object())


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a GPU')
def test_operators_run_on_their_groups_device():
    net = _two_group_net()
    exe = net.simple_bind(mx.cpu(0), data=(3, 5), group2ctx={'dev1': mx.cpu(0), 'dev2': mx.gpu(0)})
    assert exe.arg_dict['fc2_weight'].context == mx.gpu(0)
    for arr in exe.arg_dict.values():
        arr[:] = 0.5
    out = exe.forward(is_train=True)[0]
    assert out.context == mx.gpu(0) and out._t.device.type == 'cuda'
    exe.backward()
    assert exe.grad_dict['fc1_weight']._t.device.type == 'cpu'
    assert exe.grad_dict['fc2_weight']._t.device.type == 'cuda'


@pytest.mark.parametrize('contexts, group2ctxs, grad_contexts', [
    ([mx.cpu(0)], {'dev1': mx.cpu(1), 'dev2': mx.cpu(2)}, [mx.cpu(1), mx.cpu(2)]),
    ([mx.cpu(0), mx.cpu(1)], [{'dev1': mx.cpu(2), 'dev2': mx.cpu(3)}, {'dev1': mx.cpu(4), 'dev2': mx.cpu(5)}], None),
    ([mx.cpu(0), mx.cpu(1)], {'dev1': [mx.cpu(2), mx.cpu(4)], 'dev2': [mx.cpu(3), mx.cpu(5)]}, None),
])
def test_module_places_inputs_and_their_gradients_by_group(contexts, group2ctxs, grad_contexts):
    # MXNet's test_module.py::test_module_ctx_group
    with mx.AttrScope(ctx_group='dev1'):
        a = mx.sym.var('a') * 2
    with mx.AttrScope(ctx_group='dev2'):
        c = a + mx.sym.var('b')
    shape = (2, 5)
    grads = []
    for groups in (group2ctxs, None):
        mod = mx.mod.Module(c, context=contexts, data_names=['a', 'b'], label_names=None, group2ctxs=groups)
        mod.bind(data_shapes=[['a', shape], ['b', shape]], inputs_need_grad=True)
        mod.init_params()
        mod.forward(mx.io.DataBatch(data=[mx.nd.ones(shape), mx.nd.ones(shape)]), is_train=True)
        mod.backward([mx.nd.ones(shape)])
        grads.append(mod.get_input_grads())
    if grad_contexts is not None:
        assert [g.context for g in grads[0]] == grad_contexts
    for placed, plain in zip(*grads):
        np.testing.assert_array_equal(placed.asnumpy(), plain.asnumpy())
