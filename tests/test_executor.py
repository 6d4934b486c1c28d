"""Executor: bind/simple_bind, forward/backward values and gradients, grad_req, aux states, reshape.

Literals marked as MXNet's were recorded with MXNet 1.9.1; others are checked against mx.nd
with autograd, the imperative path over the same operators.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.symbol.graph import compiled


def _fc_args():
    return {'data': mx.nd.array([[1.0, 2.0], [3.0, -1.0]]),
            'fc_weight': mx.nd.array([[0.5, -0.5], [1.0, 0.25], [0.0, 1.0]]),
            'fc_bias': mx.nd.array([0.1, 0.2, 0.3]), 'softmax_label': mx.nd.array([2, 0])}


def test_bind_forward_backward_matches_mxnet():
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc'), name='softmax')
    args = _fc_args()
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items() if k != 'softmax_label'}
    ex = net.bind(mx.cpu(), args=args, args_grad=grads)
    out = ex.forward(is_train=True)
    assert isinstance(out, list) and out[0] is ex.outputs[0]
    ex.backward()
    np.testing.assert_allclose(out[0].asnumpy(), [[0.04158713, 0.3396076, 0.61880535],
                                                  [0.2940781, 0.688039, 0.01788291]], rtol=1e-5)
    np.testing.assert_allclose(grads['fc_weight'].asnumpy(), [[-2.0761786, 0.7890961], [2.4037247, -0.008823812],
                                                              [-0.3275459, -0.7802722]], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads['data'].asnumpy(), [[0.36040115, -0.3170863], [0.33507806, 0.5428536]],
                               rtol=1e-5)
    assert sorted(ex.grad_dict) == ['data', 'fc_bias', 'fc_weight', 'softmax_label']
    assert ex.grad_dict['softmax_label'] is None and ex.grad_arrays[3] is None


def test_gradients_match_imperative_autograd():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    y = mx.sym.sum(mx.sym.tanh(mx.sym.dot(x, w)) * x, axis=1)
    xv, wv = np.random.RandomState(0).rand(3, 4), np.random.RandomState(1).rand(4, 4)
    ex = y.simple_bind(mx.cpu(), x=(3, 4), w=(4, 4))
    head = mx.nd.array([1.0, -2.0, 0.5])
    ex.forward(is_train=True, x=mx.nd.array(xv), w=mx.nd.array(wv))
    ex.backward(head)
    xn, wn = mx.nd.array(xv), mx.nd.array(wv)
    xn.attach_grad()
    wn.attach_grad()
    with mx.autograd.record():
        yn = mx.nd.sum(mx.nd.tanh(mx.nd.dot(xn, wn)) * xn, axis=1)
    yn.backward(head)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), yn.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict['x'].asnumpy(), xn.grad.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict['w'].asnumpy(), wn.grad.asnumpy(), rtol=1e-5)


def test_numeric_gradient_through_symbol():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    y = mx.sym.broadcast_add(mx.sym.FullyConnected(x, w, num_hidden=3, no_bias=True) * 2, mx.sym.sin(x).sum())
    rng = np.random.RandomState(0)
    mx.test_utils.check_numeric_gradient(y, [rng.rand(2, 4), rng.rand(3, 4)])


def test_simple_bind_matches_mxnet():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    ex = mx.sym.sum(mx.sym.broadcast_mul(x, w) ** 2).simple_bind(mx.cpu(), x=(2, 2), w=(1, 2))
    ex.arg_dict['x'][:] = mx.nd.array([[1, 2], [3, 4]])
    ex.arg_dict['w'][:] = mx.nd.array([[0.5, -1]])
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((1,)))
    assert ex.outputs[0].asnumpy().tolist() == [22.5]
    assert ex.grad_dict['x'].asnumpy().tolist() == [[0.5, 4.0], [1.5, 8.0]]
    assert ex.grad_dict['w'].asnumpy().tolist() == [[10.0, -40.0]]
    label = mx.sym.SoftmaxOutput(x, name='s').simple_bind(mx.cpu(), x=(2, 5), s_label=(2,))
    assert [g.shape for g in label.grad_arrays] == [(2, 5), (2,)]


def test_grad_req_add_write_null():
    x = mx.sym.var('x')
    y = x * 3
    g = mx.nd.ones((2,))
    ex = y.bind(mx.cpu(), args={'x': mx.nd.array([1.0, 2.0])}, args_grad={'x': g}, grad_req='add')
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((2,)))
    assert g.asnumpy().tolist() == [7.0, 7.0]         # MXNet: 1 + 3 + 3
    ex = y.bind(mx.cpu(), args={'x': mx.nd.array([1.0, 2.0])}, args_grad={'x': g}, grad_req='write')
    ex.forward(is_train=True)
    ex.backward(mx.nd.array([1.0, 2.0]))
    assert g.asnumpy().tolist() == [3.0, 6.0]
    ex = y.bind(mx.cpu(), args={'x': mx.nd.array([1.0, 2.0])}, args_grad={'x': g}, grad_req='null')
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2,)))
    assert g.asnumpy().tolist() == [3.0, 6.0] and ex.grad_dict['x'] is None
    with pytest.raises(ValueError, match='grad_req'):
        y.bind(mx.cpu(), args={'x': mx.nd.ones((2,))}, grad_req='sometimes')


def test_forward_kwargs_and_inference_mode():
    x = mx.sym.var('x')
    ex = (mx.sym.relu(x) + 1).simple_bind(mx.cpu(), x=(3,), grad_req='null')
    assert ex.outputs[0].shape == (3,)
    out = ex.forward(is_train=False, x=mx.nd.array([-1, 0, 2]))
    assert out[0].asnumpy().tolist() == [1.0, 1.0, 3.0]
    assert ex.arg_dict['x'].asnumpy().tolist() == [-1, 0, 2]
    with pytest.raises(ValueError, match='Unknown argument'):
        ex.forward(y=mx.nd.ones((3,)))
    with pytest.raises(mx.base.MXNetError, match='shape'):
        ex.forward(x=mx.nd.ones((4,)))


def test_batchnorm_training_matches_mxnet():
    bn = mx.sym.BatchNorm(mx.sym.var('data'), fix_gamma=False, momentum=0.5, name='bn')
    ex = bn.simple_bind(mx.cpu(), data=(3, 2))
    assert sorted(ex.aux_dict) == ['bn_moving_mean', 'bn_moving_var']
    ex.arg_dict['data'][:] = mx.nd.array([[1, 2], [3, 5], [0, -1]])
    ex.arg_dict['bn_gamma'][:] = mx.nd.array([1.0, 2.0])
    ex.aux_dict['bn_moving_var'][:] = 1
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), [[-0.2671754, 0.0], [1.3358768, 2.4492855], [-1.0687015, -2.4492855]],
                               rtol=1e-5, atol=1e-6)
    ex.backward(mx.nd.array([[1, 0], [0, 1], [1, 1]]))
    np.testing.assert_allclose(ex.aux_dict['bn_moving_mean'].asnumpy(), [0.6666667, 1.0], rtol=1e-6)
    np.testing.assert_allclose(ex.aux_dict['bn_moving_var'].asnumpy(), [1.2777778, 3.5], rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict['bn_gamma'].asnumpy(), [-1.3358769, 0.0], atol=1e-6)
    np.testing.assert_allclose(ex.forward(is_train=False)[0].asnumpy(),
                               [[0.29476854, 1.0688924], [2.06338, 4.2755694], [-0.5895371, -2.1377847]], rtol=1e-5)


def test_dropout_follows_is_train():
    ex = mx.sym.Dropout(mx.sym.var('x'), p=0.5).simple_bind(mx.cpu(), x=(1000,), grad_req='null')
    ex.arg_dict['x'][:] = 1
    assert ex.forward(is_train=False)[0].asnumpy().tolist() == [1.0] * 1000
    values = set(ex.forward(is_train=True)[0].asnumpy().tolist())
    assert values == {0.0, 2.0}


def test_bind_errors_and_aux_states():
    y = mx.sym.var('x') * 2
    with pytest.raises(ValueError, match='x'):
        y.bind(mx.cpu(), args={})
    with pytest.raises(ValueError):
        y.bind(mx.cpu(), args=[])
    bn = mx.sym.BatchNorm(mx.sym.var('data'), name='bn')
    args = [mx.nd.ones((2, 2)), mx.nd.ones((2,)), mx.nd.zeros((2,))]
    with pytest.raises(ValueError, match='aux_states'):
        bn.bind(mx.cpu(), args=args)
    ex = bn.bind(mx.cpu(), args=args, aux_states=[mx.nd.zeros((2,)), mx.nd.ones((2,))])
    assert ex.aux_arrays[1].asnumpy().tolist() == [1, 1] and len(ex.arg_arrays) == 3


def test_copy_params_from():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    ex = fc.simple_bind(mx.cpu(), data=(1, 2))
    ex.copy_params_from({'fc_weight': mx.nd.array([[1, 0], [0, 1]], dtype='float64'),
                         'fc_bias': mx.nd.array([1, 2])})
    assert ex.arg_dict['fc_weight'].dtype == np.float32
    assert ex.forward(data=mx.nd.array([[3, 4]]))[0].asnumpy().tolist() == [[4, 6]]
    with pytest.raises(ValueError, match='nope'):
        ex.copy_params_from({'nope': mx.nd.ones((1,))})
    ex.copy_params_from({'nope': mx.nd.ones((1,))}, allow_extra_params=True)


def test_reshape_shares_unchanged_arrays():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    ex = fc.simple_bind(mx.cpu(), data=(4, 3))
    small = ex.reshape(data=(2, 3))
    assert small.arg_dict['fc_weight'] is ex.arg_dict['fc_weight']
    assert small.arg_dict['data'].shape == (2, 3) and small.outputs[0].shape == (2, 2)
    assert small._graph is ex._graph       # compiled once per context, not per shape
    with pytest.raises(mx.base.MXNetError, match='larger'):
        ex.reshape(data=(8, 3))
    assert ex.reshape(data=(8, 3), allow_up_sizing=True).outputs[0].shape == (8, 2)


def test_compiled_graph_is_flat_and_cached():
    x = mx.sym.var('x')
    y = mx.sym.exp(mx.sym.split(x, num_outputs=2, axis=0)[1]) + 1
    graph = compiled(y, mx.cpu())
    assert graph is compiled(y, mx.cpu())
    assert graph.source.count(' = op') == 3
    assert [op for op, _ in graph.calls()] == ['SliceChannel', 'exp', '_plus_scalar']     # one call per operator, in order
    assert graph.input_names == ['x']
    out = y.eval(x=mx.nd.array([[0.0], [1.0]]))[0]
    np.testing.assert_allclose(out.asnumpy(), [[np.e + 1]], rtol=1e-6)


def test_cached_op_runs_a_symbol_imperatively():
    sym = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc') + 1
    op = mx.nd.CachedOp(sym)
    data, weight, bias = mx.nd.ones((3, 4)), mx.nd.ones((2, 4)), mx.nd.zeros((2,))
    np.testing.assert_allclose(op(data, weight, bias).asnumpy(), np.full((3, 2), 5))
    out = mx.nd.zeros((3, 2))
    assert op(data, weight, bias, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), np.full((3, 2), 5))
    weight.attach_grad()
    with mx.autograd.record():
        y = op(data * 2, weight, bias) * 3
    y.backward()
    np.testing.assert_allclose(weight.grad.asnumpy(), np.full((2, 4), 18))
    a = mx.sym.var('a')
    pair = mx.nd.CachedOp(mx.sym.Group([a * 2, a - 1]))(mx.nd.ones(2))
    assert [p.asnumpy().tolist() for p in pair] == [[2, 2], [0, 0]]
    with pytest.raises(mx.base.MXNetError, match='takes 3 inputs'):
        op(data, weight)


def test_executor_backward_refuses_head_gradients_of_another_size():
    x = mx.sym.Variable('x')
    exe = (x * 2).simple_bind(mx.cpu(), x=(4, 5))
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((5, 4))])          # same size, another shape: taken, as MXNet
    with pytest.raises(mx.base.MXNetError, match=r'out_grads\[0\] has shape \(2, 5\), but output 0 has shape'):
        exe.backward([mx.nd.ones((2, 5))])


def test_integer_arguments_take_zero_gradients():
    # softmax with lengths: the int32 length wants a gradient buffer like every argument
    data, length = mx.sym.var('data'), mx.sym.var('length', dtype='int32')
    out = mx.sym.softmax(data, length, axis=1, use_length=True)
    exe = out.simple_bind(mx.cpu(), data=(2, 3), length=(2,), type_dict={'length': 'int32'})
    exe.arg_dict['data'][:] = mx.nd.array([[1, 2, 3], [1, 2, 3]])
    exe.arg_dict['length'][:] = mx.nd.array([2, 3], dtype='int32')
    exe.grad_dict['length'][:] = 7
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([[1, 0, 0], [0, 0, 1]]))
    assert exe.grad_dict['length'].asnumpy().tolist() == [0, 0]
    p = exe.outputs[0].asnumpy()
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy()[0, :2], p[0, :2] * ([1, 0] - p[0, 0]), rtol=1e-5)


def test_float_lengths_fail_when_run_not_when_bound():
    # as MXNet 1.9.1: binding infers shapes and types; the operator refuses float lengths
    out = mx.sym.softmax(mx.sym.var('data'), mx.sym.var('length'), axis=1, use_length=True)
    exe = out.simple_bind(mx.cpu(), data=(2, 3), length=(2,), grad_req='null')
    with pytest.raises(mx.base.MXNetError, match='integer length'):
        exe.forward()


def test_backward_does_not_read_head_gradients_of_zero_gradient_operators():
    # MXNet checks a head gradient's shape only where the gradient is read; operators that
    # back-propagate zeros (MultiProposal) take any array, as in MXNet's own kit
    rng = np.random.RandomState(0)
    sym = mx.sym.contrib.MultiProposal(mx.sym.Variable('c'), mx.sym.Variable('b'), mx.sym.Variable('i'),
                                       feature_stride=16, scales=(2, 4, 8), rpn_post_nms_top_n=10)
    exe = sym.simple_bind(mx.cpu(), c=(2, 18, 5, 6), b=(2, 36, 5, 6), i=(2, 3))
    exe.arg_dict['c'][:] = rng.rand(2, 18, 5, 6)
    exe.arg_dict['i'][:] = np.array([[70, 90, 1.0], [60, 50, 0.8]])
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((10, 5))])
    assert all(float(g.abs().sum().asscalar()) == 0 for g in exe.grad_arrays)


def _internals_after_binding(sym, eliminate, monkeypatch, **shapes):
    monkeypatch.setenv('MXNET_ELIMINATE_COMMON_EXPR', '1' if eliminate else '0')
    exe = sym.simple_bind(mx.cpu(), **shapes)
    return exe, exe.get_optimized_symbol().get_internals().list_outputs()


def test_common_subexpressions_are_merged_as_mxnet(monkeypatch):
    a, b = mx.sym.var('a'), mx.sym.var('b')
    d = a + 1
    # counts as MXNet 1.9.1's test_eliminate_common_expr expects them
    for sym, saved in [((a + 1) + (a + 2), 0), ((a + b) + (a + b), 1),
                       (mx.sym.Group([a * d, a * d]), 0),       # a copy keeps the outputs apart
                       (mx.sym.Group([a * d + b, a * d + b]), 1),
                       (mx.sym.Dropout(a, p=0.5) + mx.sym.Dropout(a, p=0.5), 0)]:
        shapes = {n: (2, 3) for n in sym.list_inputs()}
        plain, before = _internals_after_binding(sym, False, monkeypatch, **shapes)
        merged, after = _internals_after_binding(sym, True, monkeypatch, **shapes)
        assert len(after) + saved == len(before), (sym, before, after)
        values = {n: mx.nd.array(np.random.RandomState(0).uniform(size=(2, 3))) for n in shapes}
        if not any('dropout' in n for n in before):     # random: values differ by design
            for x, y in zip(plain.forward(is_train=True, **values), merged.forward(is_train=True, **values)):
                np.testing.assert_allclose(x.asnumpy(), y.asnumpy(), rtol=1e-6)
            ones = [mx.nd.ones((2, 3)) for _ in plain.outputs]
            plain.backward(ones)
            merged.backward(ones)
            for name in shapes:
                np.testing.assert_allclose(plain.grad_dict[name].asnumpy(), merged.grad_dict[name].asnumpy(),
                                           rtol=1e-6)
    repeated = mx.sym.Group([a * (a + 1), a * (a + 1)])
    exe, _ = _internals_after_binding(repeated, True, monkeypatch, a=(2, 3))
    first, second = exe.forward(a=mx.nd.ones((2, 3)))
    assert first is not second and first.asnumpy().tolist() == second.asnumpy().tolist() == [[2.0] * 3] * 2


def test_debug_str_totals_what_the_backward_pass_keeps():
    import re
    data = mx.sym.var('data')
    for _ in range(4):
        data = data * data

    def total(sym, grad_req):
        text = sym.simple_bind(mx.cpu(), data=(256, 1024), grad_req=grad_req).debug_str()
        return int(re.search(r'Total (\d+) MB allocated', text).group(1))
    # one MB per array of 256 x 1024 float32: four products kept for backward, else the output
    assert total(data, 'write') == 4
    assert total(data, 'null') == 1
    assert total(mx.sym.stop_gradient(data), 'write') == 1


def test_bind_refuses_arguments_and_gradients_off_the_global_context():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    here, there = mx.nd.ones(2, ctx=mx.cpu(0)), mx.nd.ones(2, ctx=mx.cpu(1))
    with pytest.raises(mx.MXNetError, match=r'Input array is in cpu\(1\) while binding with ctx=cpu\(0\)'):
        (x + y).bind(mx.cpu(0), {'x': here, 'y': there})
    with pytest.raises(mx.MXNetError, match=r'Gradient array is in cpu\(1\).*All gradients must be in global'):
        (x + y).bind(mx.cpu(0), {'x': here, 'y': here}, args_grad={'x': there, 'y': here})
    # with group2ctx the arrays may live anywhere, and auxiliary states are not checked (as MXNet)
    with mx.AttrScope(ctx_group='dev1'):
        z = x + y
    exe = z.bind(mx.cpu(0), {'x': there, 'y': there}, group2ctx={'dev1': mx.cpu(1)})
    assert exe.forward()[0].asnumpy().tolist() == [2.0, 2.0]
    bn = mx.sym.BatchNorm(mx.sym.var('d'), name='bn')
    exe = bn.bind(mx.cpu(0), {'d': mx.nd.ones((2, 3)), 'bn_gamma': mx.nd.ones(3), 'bn_beta': mx.nd.zeros(3)},
                  aux_states={'bn_moving_mean': mx.nd.zeros(3, ctx=mx.cpu(2)), 'bn_moving_var': mx.nd.ones(3)})
    assert exe.forward()[0].shape == (2, 3)


def test_reshape_to_smaller_shares_memory_of_arguments_and_outputs():
    # As MXNet: a smaller argument is the first elements of the old one, and a smaller
    # output is written into the first elements of the old executor's output.
    x = mx.sym.var('x')
    exe = mx.sym.FullyConnected(x, num_hidden=4, name='fc').simple_bind(mx.cpu(), x=(5, 4), grad_req='null')
    exe.arg_dict['x'][:] = mx.nd.arange(20).reshape((5, 4))
    exe.arg_dict['fc_weight'][:] = 1
    exe.arg_dict['fc_bias'][:] = 0
    small = exe.reshape(x=(3, 4))
    np.testing.assert_array_equal(small.arg_dict['x'].asnumpy(), np.arange(12).reshape(3, 4))
    small.arg_dict['x'][:] = 1                  # writes the old executor's argument
    assert exe.arg_dict['x'].asnumpy()[:3].tolist() == [[1] * 4] * 3
    small.forward()
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), np.full((3, 4), 4))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy()[:3], np.full((3, 4), 4))
    exe.forward()
    assert exe.outputs[0].shape == (5, 4)
