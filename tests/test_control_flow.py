"""Control flow: mx.nd/mx.sym.contrib.foreach, while_loop, cond and the _foreach/_while_loop/_cond nodes."""
import collections
import numpy as np
import pytest

import neomx as mx
from neomx import autograd
from neomx.test_utils import check_numeric_gradient

# MXNet 1.9.1's tojson() of the graphs built by _foreach_sym, _while_sym and _cond_sym
# in a fresh process, in that order.
FOREACH_JSON = '{\n  "nodes": [\n    {\n      "op": "null", \n      "name": "data", \n      "inputs": []\n    }, \n    {\n      "op": "null", \n      "name": "s0", \n      "inputs": []\n    }, \n    {\n      "op": "null", \n      "name": "w", \n      "inputs": []\n    }, \n    {\n      "op": "_mul_scalar", \n      "name": "_mulscalar0", \n      "attrs": {"scalar": "3"}, \n      "inputs": [[2, 0, 0]]\n    }, \n    {\n      "op": "_foreach", \n      "name": "_foreach0", \n      "attrs": {\n        "in_data_locs": "[0]", \n        "in_state_locs": "[2]", \n        "num_args": "4", \n        "num_out_data": "2", \n        "num_outputs": "3", \n        "remain_locs": "[1]"\n      }, \n      "inputs": [[0, 0, 0], [1, 0, 0], [3, 0, 0]], \n      "subgraphs": [\n        {\n          "nodes": [\n            {\n              "op": "null", \n              "name": "data-0", \n              "attrs": {"__subgraph_name__": "foreach0"}, \n              "inputs": []\n            }, \n            {\n              "op": "null", \n              "name": "_mulscalar0_output", \n              "inputs": []\n            }, \n            {\n              "op": "elemwise_mul", \n              "name": "_mul0", \n              "attrs": {"__subgraph_name__": "foreach0"}, \n              "inputs": [[0, 0, 0], [1, 0, 0]]\n            }, \n            {\n              "op": "null", \n              "name": "s0-0", \n              "attrs": {"__subgraph_name__": "foreach0"}, \n              "inputs": []\n            }, \n            {\n              "op": "elemwise_add", \n              "name": "_plus0", \n              "attrs": {"__subgraph_name__": "foreach0"}, \n              "inputs": [[2, 0, 0], [3, 0, 0]]\n            }, \n            {\n              "op": "_copy", \n              "name": "identity0", \n              "attrs": {"__subgraph_name__": "foreach0"}, \n              "inputs": [[0, 0, 0]]\n            }, \n            {\n              "op": "_copy", \n              "name": "identity1", \n              "attrs": {"__subgraph_name__": "foreach0"}, \n              "inputs": [[4, 0, 0]]\n            }\n          ], \n          "arg_nodes": [0, 1, 3], \n          "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7], \n          "heads": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]\n        }\n      ]\n    }\n  ], \n  "arg_nodes": [0, 1, 2], \n  "node_row_ptr": [0, 1, 2, 3, 4, 7], \n  "heads": [[4, 0, 0], [4, 1, 0], [4, 2, 0]], \n  "attrs": {"mxnet_version": ["int", 10901]}\n}'
WHILE_JSON = '{\n  "nodes": [\n    {\n      "op": "null", \n      "name": "i", \n      "inputs": []\n    }, \n    {\n      "op": "null", \n      "name": "s", \n      "inputs": []\n    }, \n    {\n      "op": "_while_loop", \n      "name": "_while_loop0", \n      "attrs": {\n        "cond_input_locs": "[0]", \n        "func_input_locs": "[1, 0]", \n        "func_var_locs": "[1, 0]", \n        "max_iterations": "5", \n        "num_args": "4", \n        "num_out_data": "1", \n        "num_outputs": "3"\n      }, \n      "inputs": [[0, 0, 0], [1, 0, 0]], \n      "subgraphs": [\n        {\n          "nodes": [\n            {\n              "op": "null", \n              "name": "i-0", \n              "attrs": {"__subgraph_name__": "while_loop_cond0"}, \n              "inputs": []\n            }, \n            {\n              "op": "_lesser_scalar", \n              "name": "_lesser_scalar0", \n              "attrs": {\n                "__subgraph_name__": "while_loop_cond0", \n                "scalar": "3"\n              }, \n              "inputs": [[0, 0, 0]]\n            }, \n            {\n              "op": "sum", \n              "name": "sum0", \n              "attrs": {"__subgraph_name__": "while_loop_cond0"}, \n              "inputs": [[1, 0, 0]]\n            }, \n            {\n              "op": "_greater_scalar", \n              "name": "_greater_scalar0", \n              "attrs": {\n                "__subgraph_name__": "while_loop_cond0", \n                "scalar": "0"\n              }, \n              "inputs": [[2, 0, 0]]\n            }\n          ], \n          "arg_nodes": [0], \n          "node_row_ptr": [0, 1, 2, 3, 4], \n          "heads": [[3, 0, 0]]\n        }, \n        {\n          "nodes": [\n            {\n              "op": "null", \n              "name": "s-0", \n              "attrs": {"__subgraph_name__": "while_loop_func0"}, \n              "inputs": []\n            }, \n            {\n              "op": "_mul_scalar", \n              "name": "_mulscalar1", \n              "attrs": {\n                "__subgraph_name__": "while_loop_func0", \n                "scalar": "2"\n              }, \n              "inputs": [[0, 0, 0]]\n            }, \n            {\n              "op": "null", \n              "name": "i-0", \n              "attrs": {"__subgraph_name__": "while_loop_func0"}, \n              "inputs": []\n            }, \n            {\n              "op": "_plus_scalar", \n              "name": "_plusscalar0", \n              "attrs": {\n                "__subgraph_name__": "while_loop_func0", \n                "scalar": "1"\n              }, \n              "inputs": [[2, 0, 0]]\n            }, \n            {\n              "op": "elemwise_add", \n              "name": "_plus1", \n              "attrs": {"__subgraph_name__": "while_loop_func0"}, \n              "inputs": [[0, 0, 0], [2, 0, 0]]\n            }\n          ], \n          "arg_nodes": [0, 2], \n          "node_row_ptr": [0, 1, 2, 3, 4, 5], \n          "heads": [[1, 0, 0], [3, 0, 0], [4, 0, 0]]\n        }\n      ]\n    }\n  ], \n  "arg_nodes": [0, 1], \n  "node_row_ptr": [0, 1, 2, 5], \n  "heads": [[2, 0, 0], [2, 1, 0], [2, 2, 0]], \n  "attrs": {"mxnet_version": ["int", 10901]}\n}'
COND_JSON = '{\n  "nodes": [\n    {\n      "op": "null", \n      "name": "a", \n      "inputs": []\n    }, \n    {\n      "op": "null", \n      "name": "b", \n      "inputs": []\n    }, \n    {\n      "op": "_lesser", \n      "name": "_lesser0", \n      "inputs": [[0, 0, 0], [1, 0, 0]]\n    }, \n    {\n      "op": "sum", \n      "name": "sum1", \n      "inputs": [[2, 0, 0]]\n    }, \n    {\n      "op": "_greater_scalar", \n      "name": "_greater_scalar1", \n      "attrs": {"scalar": "0"}, \n      "inputs": [[3, 0, 0]]\n    }, \n    {\n      "op": "_cond", \n      "name": "_cond0", \n      "attrs": {\n        "cond_input_locs": "[0]", \n        "else_input_locs": "[2]", \n        "num_args": "6", \n        "num_outputs": "1", \n        "then_input_locs": "[1]"\n      }, \n      "inputs": [[4, 0, 0], [0, 0, 0], [1, 0, 0]], \n      "subgraphs": [\n        {\n          "nodes": [\n            {\n              "op": "null", \n              "name": "_greater_scalar1_output", \n              "inputs": []\n            }, \n            {\n              "op": "_copy", \n              "name": "identity2", \n              "attrs": {"__subgraph_name__": "cond_pred0"}, \n              "inputs": [[0, 0, 0]]\n            }\n          ], \n          "arg_nodes": [0], \n          "node_row_ptr": [0, 1, 2], \n          "heads": [[1, 0, 0]]\n        }, \n        {\n          "nodes": [\n            {\n              "op": "null", \n              "name": "a", \n              "inputs": []\n            }, \n            {\n              "op": "_mul_scalar", \n              "name": "_mulscalar2", \n              "attrs": {\n                "__subgraph_name__": "cond_then0", \n                "scalar": "2"\n              }, \n              "inputs": [[0, 0, 0]]\n            }\n          ], \n          "arg_nodes": [0], \n          "node_row_ptr": [0, 1, 2], \n          "heads": [[1, 0, 0]]\n        }, \n        {\n          "nodes": [\n            {\n              "op": "null", \n              "name": "b", \n              "inputs": []\n            }, \n            {\n              "op": "_plus_scalar", \n              "name": "_plusscalar1", \n              "attrs": {\n                "__subgraph_name__": "cond_else0", \n                "scalar": "1"\n              }, \n              "inputs": [[0, 0, 0]]\n            }\n          ], \n          "arg_nodes": [0], \n          "node_row_ptr": [0, 1, 2], \n          "heads": [[1, 0, 0]]\n        }\n      ]\n    }\n  ], \n  "arg_nodes": [0, 1], \n  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6], \n  "heads": [[5, 0, 0]], \n  "attrs": {"mxnet_version": ["int", 10901]}\n}'


def _foreach_sym():
    data, s0, w = mx.sym.var('data'), mx.sym.var('s0'), mx.sym.var('w')
    w3 = w * 3

    def body(x, states):
        out = x * w3 + states[0]
        return [out, x], [out]
    outs, states = mx.sym.contrib.foreach(body, data, [s0])
    return mx.sym.Group(outs + states)


def _while_sym():
    i, s = mx.sym.var('i'), mx.sym.var('s')
    outs, loop_vars = mx.sym.contrib.while_loop(lambda i, s: (i < 3).sum() > 0,
                                                lambda i, s: ([s * 2], [i + 1, s + i]), [i, s], max_iterations=5)
    return mx.sym.Group(outs + loop_vars)


def _cond_sym():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    return mx.sym.contrib.cond((a < b).sum() > 0, lambda: a * 2, lambda: b + 1)


@pytest.fixture
def fresh_names(monkeypatch):
    """Name counters as in a fresh process, so node names match the recorded JSON."""
    monkeypatch.setattr(mx.AttrScope, '_subgraph_names', collections.defaultdict(int))
    with mx.name.NameManager():
        yield


def test_symbol_json_matches_mxnet(fresh_names):
    for build, expected in ((_foreach_sym, FOREACH_JSON), (_while_sym, WHILE_JSON), (_cond_sym, COND_JSON)):
        sym = build()
        assert sym.tojson() == expected
        assert mx.sym.load_json(expected).tojson() == expected


def test_foreach_symbol_lists_and_shapes():
    sym = _foreach_sym()
    assert sym.list_arguments() == ['data', 's0', 'w']
    assert len(sym.list_outputs()) == 3
    args, outs, _ = sym.infer_shape(data=(3, 2), s0=(2,), w=(2,))
    assert outs == [(3, 2), (3, 2), (2,)]


def _foreach_reference(data, s0, w):
    state, outs = s0, []
    for x in data:
        state = x * w * 3 + state
        outs.append(state)
    return np.stack(outs), state


def test_foreach_executor_and_gradients():
    rng = np.random.RandomState(0)
    data, s0, w = rng.rand(4, 3), rng.rand(3), rng.rand(3)
    sym = _foreach_sym()
    args = {'data': mx.nd.array(data), 's0': mx.nd.array(s0), 'w': mx.nd.array(w)}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads)
    outs = exe.forward(is_train=True)
    expected_outs, expected_state = _foreach_reference(data, s0, w)
    np.testing.assert_allclose(outs[0].asnumpy(), expected_outs, rtol=1e-5)
    np.testing.assert_allclose(outs[1].asnumpy(), data, rtol=1e-6)
    np.testing.assert_allclose(outs[2].asnumpy(), expected_state, rtol=1e-5)
    exe.backward([mx.nd.ones((4, 3)), mx.nd.zeros((4, 3)), mx.nd.zeros(3)])
    # d(sum of all step outputs)/d s0 = number of steps; /d w = 3 * sum_t (T - t) x_t
    np.testing.assert_allclose(grads['s0'].asnumpy(), np.full(3, 4.0), rtol=1e-6)
    weights = np.arange(4, 0, -1)[:, None]
    np.testing.assert_allclose(grads['w'].asnumpy(), 3 * (weights * data).sum(0), rtol=1e-5)


def test_while_loop_executor_pads_with_zeros():
    exe = _while_sym().bind(mx.cpu(), {'i': mx.nd.array([0, 0]), 's': mx.nd.array([1, 2])}, grad_req='null')
    outs = [o.asnumpy().tolist() for o in exe.forward()]
    assert outs == [[[2, 4], [2, 4], [4, 6], [0, 0], [0, 0]], [3, 3], [4, 5]]


def test_cond_executor_takes_branches():
    sym = _cond_sym()
    for a, b, expected in (([1.], [2.], [2.]), ([3.], [2.], [3.])):
        out = sym.eval(a=mx.nd.array(a), b=mx.nd.array(b))[0]
        assert out.asnumpy().tolist() == expected


def test_nd_foreach_values_and_structure():
    data = mx.nd.array([[1, 2], [3, 4]])
    outs, states = mx.nd.contrib.foreach(lambda x, s: (x + s, s * 2), data, mx.nd.array([1, 1]))
    assert outs.asnumpy().tolist() == [[2, 3], [5, 6]] and states.asnumpy().tolist() == [4, 4]
    outs, states = mx.nd.contrib.foreach(lambda x, s: ([], [s[0] + x[1]]), [data, mx.nd.array([5, 6])],
                                         [mx.nd.array([1, 1])])
    assert outs == [] and states[0].asnumpy().tolist() == [12, 12]


def test_nd_while_loop():
    i, s = mx.nd.array([0, 0]), mx.nd.array([1, 2])
    cond = lambda i, s: (i < 3).sum() > 0  # noqa: E731
    outs, loop_vars = mx.nd.contrib.while_loop(cond, lambda i, s: (s * 2, (i + 1, s + i)), (i, s), max_iterations=5)
    assert outs.asnumpy().tolist() == [[2, 4], [2, 4], [4, 6], [0, 0], [0, 0]]
    assert [v.asnumpy().tolist() for v in loop_vars] == [[3, 3], [4, 5]]
    outs, loop_vars = mx.nd.contrib.while_loop(lambda i, s: (i < 0).sum() > 0, lambda i, s: ([s], [i + 1, s]),
                                               [i, s], max_iterations=2)
    assert outs == [] and loop_vars[1].asnumpy().tolist() == [1, 2]
    with pytest.raises(ValueError, match='max_iterations should be specified'):
        mx.nd.contrib.while_loop(cond, lambda i, s: ([s], [i, s]), [i, s])
    with pytest.raises(ValueError, match='max_iterations should be specified'):
        mx.sym.contrib.while_loop(cond, lambda i, s: ([s], [i, s]), [mx.sym.var('i'), mx.sym.var('s')])


def test_nd_cond():
    a = mx.nd.array([1, 2])
    assert mx.nd.contrib.cond(mx.nd.array([1]), lambda: a + 1, lambda: [a]).asnumpy().tolist() == [2, 3]
    assert mx.nd.contrib.cond(mx.nd.array([0]), lambda: a + 1, lambda: [a])[0].asnumpy().tolist() == [1, 2]


def test_nd_foreach_numeric_gradient():
    def run(data, state):
        outs, final = mx.nd.contrib.foreach(lambda x, s: (x * s, x + s * 0.5), data, state)
        return outs.sum() + final.sum()
    rng = np.random.RandomState(1)
    check_numeric_gradient(run, [rng.rand(3, 2), rng.rand(2)])


class _RNN(mx.gluon.HybridBlock):
    """A tanh RNN over time steps: h_t = tanh(x_t W^T + h_{t-1} U^T)."""

    def __init__(self, hidden, inputs, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get('w', shape=(hidden, inputs))
            self.u = self.params.get('u', shape=(hidden, hidden))

    def hybrid_forward(self, F, x, h0, w, u):
        def step(xt, states):
            h = F.tanh(F.dot(xt, w, transpose_b=True) + F.dot(states[0], u, transpose_b=True))
            return h, [h]
        outs, states = F.contrib.foreach(step, x, [h0])
        return outs, states[0]


def _run_rnn(net, x, h0):
    with autograd.record():
        outs, last = net(x, h0)
        loss = outs.sum() + last.sum()
    loss.backward()
    return outs.asnumpy(), last.asnumpy(), {k: p.grad().asnumpy() for k, p in net.collect_params().items()}


def test_hybridized_foreach_rnn_matches_imperative():
    rng = np.random.RandomState(2)
    x, h0 = mx.nd.array(rng.rand(5, 2, 3)), mx.nd.array(rng.rand(2, 4))
    net = _RNN(4, 3)
    net.initialize(mx.init.Uniform(0.5))
    imperative = _run_rnn(net, x, h0)
    net.hybridize()
    hybrid = _run_rnn(net, x, h0)
    for a, b in zip(imperative[:2], hybrid[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for key in imperative[2]:
        np.testing.assert_allclose(imperative[2][key], hybrid[2][key], rtol=1e-4, atol=1e-6)
    # The imperative loop against numpy.
    w, u = net.w.data().asnumpy(), net.u.data().asnumpy()
    h = h0.asnumpy()
    for t in range(5):
        h = np.tanh(x.asnumpy()[t] @ w.T + h @ u.T)
    np.testing.assert_allclose(imperative[1], h, rtol=1e-5)


def test_foreach_mixed_dtypes_1d_data_and_inferred_states():
    # as MXNet: inputs keep their own dtypes, 1-D data steps are (1,), and an LSTM-like
    # state that only the body types gets its shape from the body
    def step(data, states):
        h, c = states
        return data * mx.sym.cast(h, 'float32'), [h + 1, c + data]
    data, h, c = mx.sym.var('data'), mx.sym.var('h', dtype='float64'), mx.sym.var('c')
    outs, states = mx.sym.contrib.foreach(step, data, [h, c])
    group = mx.sym.Group([outs] + states)
    args, out_shapes, _ = group.infer_shape(data=(3,), h=(1,))
    assert dict(zip(group.list_arguments(), args)) == {'data': (3,), 'h': (1,), 'c': (1,)}
    assert out_shapes == [(3, 1), (1,), (1,)]
    exe = group.bind(mx.cpu(), {'data': mx.nd.arange(3), 'h': mx.nd.ones((1,), dtype='float64'),
                                'c': mx.nd.zeros((1,))})
    out, h_end, c_end = exe.forward()
    assert out.asnumpy().ravel().tolist() == [0.0, 2.0, 6.0]
    assert h_end.dtype == np.float64 and h_end.asnumpy().tolist() == [4.0] and c_end.asnumpy().tolist() == [3.0]


def test_foreach_unused_state_is_an_assertion_error_as_mxnet():
    with pytest.raises(AssertionError, match='state arrays have to be used'):
        mx.sym.contrib.foreach(lambda d, s: (d, [d]), mx.sym.var('d'), [mx.sym.var('s')])


def test_cached_op_runs_a_json_subgraph_with_its_aux_states_as_mxnet():
    data = mx.sym.var('data')
    orig = mx.sym.BatchNorm(data, fix_gamma=False, output_mean_var=True, name='bn')
    inputs = [mx.sym.var(n) for n in orig.list_inputs()]
    node = mx.sym._internal._CachedOp(*inputs, subgraph=orig.tojson())
    assert node.list_arguments() == orig.list_arguments()
    assert node.list_auxiliary_states() == orig.list_auxiliary_states()
    assert node.infer_shape(data=(4, 3)) == orig.infer_shape(data=(4, 3))
    rng = np.random.RandomState(0)
    arrays = {'data': rng.rand(4, 3), 'bn_gamma': rng.rand(3), 'bn_beta': rng.rand(3),
              'bn_moving_mean': np.zeros(3), 'bn_moving_var': np.ones(3)}
    outs = []
    for sym in (orig, node):
        args = {k: mx.nd.array(v) for k, v in arrays.items()}
        grads = {k: mx.nd.zeros(v.shape) for k, v in arrays.items() if not k.startswith('bn_moving')}
        exe = sym.bind(mx.cpu(), args=args, args_grad=grads, aux_states=args)
        res = [o.asnumpy() for o in exe.forward(is_train=True)]
        exe.backward([mx.nd.ones((4, 3)), mx.nd.zeros(3), mx.nd.zeros(3)])
        outs.append((res, {k: g.asnumpy() for k, g in exe.grad_dict.items() if g is not None}))
    for a, b in zip(outs[0][0], outs[1][0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for name, grad in outs[0][1].items():
        np.testing.assert_allclose(grad, outs[1][1][name], rtol=1e-5, atol=1e-6)
