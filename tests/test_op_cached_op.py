"""``_CachedOp``: a graph given as Symbol JSON run as one node (``mx.sym._internal._CachedOp``,
as MXNet's subgraph tests build it) computes and differentiates as the graph itself does."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _conv_bn_graph():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, no_bias=True, name='conv')
    return mx.sym.BatchNorm(conv, fix_gamma=False, output_mean_var=True, name='bn')


def _as_cached_op(graph):
    inputs = [mx.sym.var(name) for name in graph.list_inputs()]
    return mx.sym._internal._CachedOp(*inputs, subgraph=graph.tojson())


def test_cached_op_node_lists_the_graphs_inputs_and_outputs():
    graph = _conv_bn_graph()
    node = _as_cached_op(graph)
    assert node.list_arguments() == graph.list_arguments()
    assert node.list_auxiliary_states() == graph.list_auxiliary_states()
    assert len(node.list_outputs()) == 3
    assert node.infer_shape(data=(2, 3, 6, 6)) == graph.infer_shape(data=(2, 3, 6, 6))


def test_cached_op_forward_and_backward_match_the_graph():
    graph = _conv_bn_graph()
    node = _as_cached_op(graph)
    rng = np.random.RandomState(0)
    arg_shapes, _, aux_shapes = graph.infer_shape(data=(2, 3, 6, 6))
    values = {n: rng.uniform(-1, 1, s).astype('float32') for n, s in zip(graph.list_arguments(), arg_shapes)}
    values.update({n: np.ones(s, 'float32') for n, s in zip(graph.list_auxiliary_states(), aux_shapes)})
    results = []
    for sym in (graph, node):
        args = {n: mx.nd.array(v) for n, v in values.items()}
        grads = {n: mx.nd.zeros(values[n].shape) for n in graph.list_arguments()}
        exe = sym.bind(mx.cpu(), args={n: args[n] for n in graph.list_arguments()}, args_grad=grads,
                       aux_states={n: args[n] for n in graph.list_auxiliary_states()})
        outs = [o.asnumpy() for o in exe.forward(is_train=True)]
        exe.backward([mx.nd.array(np.linspace(-1, 1, o.size).reshape(o.shape)) for o in outs])
        results.append((outs, {n: g.asnumpy() for n, g in grads.items()}))
    (outs0, grads0), (outs1, grads1) = results
    for a, b in zip(outs0, outs1):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for name in grads0:
        np.testing.assert_allclose(grads0[name], grads1[name], rtol=1e-4, atol=1e-5)


def test_cached_op_on_ndarrays_and_its_input_count():
    graph = mx.sym.var('a') * mx.sym.var('b') + 1
    out = mx.nd._internal._CachedOp(mx.nd.array([1, 2]), mx.nd.array([3, 4]), subgraph=graph.tojson())
    assert out.asnumpy().tolist() == [4.0, 9.0]
    with pytest.raises(MXNetError, match='_CachedOp'):
        mx.nd._internal._CachedOp(mx.nd.array([1, 2]), subgraph=graph.tojson())
    assert mx.nd.op.CachedOp(graph)(mx.nd.array([1.]), mx.nd.array([2.])).asnumpy().tolist() == [3.0]
