"""HybridBlock's graph API beyond hybridize: optimize_for, infer_shape, infer_type and
register_op_hook, against MXNet 1.9.1's behaviour (names recorded from the oracle)."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon


def _mlp():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(3, activation='relu'), gluon.nn.Dense(2))
    return net


X = np.random.RandomState(0).uniform(-1, 1, (2, 4)).astype(np.float32)


def test_op_hook_reports_each_operator_output_by_mxnet_names():
    net = _mlp()
    net.initialize(mx.init.Xavier())
    want = net(mx.nd.array(X)).asnumpy()
    hidden = net[0](mx.nd.array(X)).asnumpy()
    net.hybridize()
    seen = []
    net.register_op_hook(lambda name, op, array: seen.append((name, op, array.asnumpy())))
    np.testing.assert_allclose(net(mx.nd.array(X)).asnumpy(), want, rtol=1e-6)
    # recorded from MXNet 1.9.1 (for the prefix hybridsequential0_)
    prefix = net.prefix.encode()
    assert [(n, o) for n, o, _ in seen] == [
        (prefix + b'dense0_fwd_output', b'FullyConnected'),
        (prefix + b'dense0_relu_fwd_output', b'Activation'),
        (prefix + b'dense1_fwd_output', b'FullyConnected')]
    np.testing.assert_allclose(seen[1][2], hidden, rtol=1e-6)
    np.testing.assert_allclose(seen[2][2], want, rtol=1e-6)


def test_op_hook_with_monitor_all_reports_inputs_first_and_keeps_gradients():
    net, reference = _mlp(), _mlp()
    for model in (net, reference):
        model.initialize(mx.init.Constant(0.5))
        model.hybridize()
    names = []
    net.register_op_hook(lambda name, op, array: names.append(name), monitor_all=True)
    grads = []
    for model in (net, reference):
        with autograd.record():
            loss = model(mx.nd.array(X)).sum()
        loss.backward()
        grads.append([p.grad().asnumpy() for p in model.collect_params().values()])
    assert names[:4] == [net.prefix.encode() + b'dense0_fwd_' + part for part in (b'data', b'weight', b'bias',
                                                                                 b'output')]
    assert len(names) == 10
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_infer_shape_sets_shapes_without_initializing():
    net = _mlp()
    net.initialize()
    net.infer_shape(mx.nd.ones((5, 7)))
    assert net[0].weight.shape == (3, 7) and net[1].weight.shape == (2, 3)
    with pytest.raises(gluon.parameter.DeferredInitializationError):
        net[0].weight.data()
    assert net(mx.nd.ones((5, 7))).shape == (5, 2)


def test_infer_type_keeps_matching_types():
    net = gluon.nn.Dense(2)
    net.initialize()
    net.infer_type(mx.nd.ones((1, 4)))
    assert net.weight.dtype == np.float32


@pytest.mark.parametrize('backend', [None, 'MKLDNN', 'ONEDNN'])
def test_optimize_for_prepares_the_graph_without_running(backend):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3), gluon.nn.BatchNorm(), gluon.nn.Activation('relu'))
    net.initialize()
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (1, 3, 8, 8)))
    net.optimize_for(x, backend=backend)
    assert net[0].weight.shape == (4, 3, 3, 3)
    bound = next(iter(net._cached_graph._bound.values()))
    assert bound.infer is not bound.run             # fused for inference, bound before any call
    want = mx.nd.relu(mx.nd.BatchNorm(net[0](x), *[p.data() for p in net[1].collect_params().values()],
                                      eps=1e-5, fix_gamma=False))
    net.hybridize(False)
    np.testing.assert_allclose(net(x).asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_optimize_for_an_unknown_backend_is_an_error():
    net = gluon.nn.Dense(2)
    net.initialize()
    with pytest.raises(mx.base.MXNetError, match="backend 'TensorRT' cannot be found"):
        net.optimize_for(mx.nd.ones((1, 4)), backend='TensorRT')


def test_op_hook_names_inputs_as_mxnet_per_operator():
    net = gluon.nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(gluon.nn.Dense(2), gluon.nn.Activation('relu'))
    net.initialize()
    net.hybridize()
    names, ops = [], []
    net.register_op_hook(lambda name, op, array: (names.append(name), ops.append(op)),
                         monitor_all=True)
    net(mx.nd.ones((2, 3)))
    # recorded from MXNet 1.9.1: Activation declares no input names, FullyConnected does
    assert names == [b'net_dense0_fwd_data', b'net_dense0_fwd_weight', b'net_dense0_fwd_bias',
                     b'net_dense0_fwd_output', b'net_relu0_fwd_input0', b'net_relu0_fwd_output']
    assert ops[-1] == b'Activation'


def test_monitor_input_names_of_binary_and_scalar_operators():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    out = mx.sym._internal._mul_scalar(mx.sym.elemwise_add(a, b, name='add'), scalar=2.0,
                                       name='twice')
    exe = out.bind(mx.cpu(), {'a': mx.nd.ones((2,)), 'b': mx.nd.ones((2,))})
    names = []
    exe.set_monitor_callback(lambda name, array: names.append(name), monitor_all=True)
    exe.forward()
    # as MXNet 1.9.1: elemwise_add names its inputs lhs/rhs, _mul_scalar does not
    assert [n for n in names if n.startswith((b'add_', b'twice_'))] == [
        b'add_lhs', b'add_rhs', b'add_output', b'twice_input0', b'twice_output']
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [4, 4])
