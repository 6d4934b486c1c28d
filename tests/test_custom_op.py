"""Python custom operators (mx.operator.CustomOp / CustomOpProp / register, the Custom operator)
against numpy and MXNet 1.9.1's recorded results."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

# What the operators below saw, for the tests to inspect: (event, details) pairs.
CALLS = []


# ------------------------------------------------------------------ the custom operators
class Softmax(mx.operator.CustomOp):
    """MXNet's documentation example: softmax forward, cross-entropy gradient backward."""

    def forward(self, is_train, req, in_data, out_data, aux):
        CALLS.append(('forward', (is_train, req, [type(a).__name__ for a in in_data + out_data])))
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(y / y.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        CALLS.append(('backward', (req, [type(a).__name__ for a in in_grad])))
        label = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register('test_softmax')
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self, **kwargs):
        CALLS.append(('prop', kwargs))
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ['data', 'label']

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        CALLS.append(('create', (str(ctx), shapes, dtypes)))
        return Softmax()


class ScaledPair(mx.operator.CustomOp):
    """Outputs ``data * weight * k`` and ``data + 1``; counts its forward calls in ``aux``."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, is_train, req, in_data, out_data, aux):
        data, weight = in_data
        self.assign(out_data[0], req[0], data * weight * self.k)
        self.assign(out_data[1], req[1], data + 1)
        if aux:
            aux[0][:] = aux[0] + 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        data, weight = in_data
        self.assign(in_grad[0], req[0], out_grad[0] * weight * self.k + out_grad[1])
        self.assign(in_grad[1], req[1], (out_grad[0] * data * self.k).sum(axis=0, keepdims=True))


@mx.operator.register('test_scaled_pair')
class ScaledPairProp(mx.operator.CustomOpProp):
    def __init__(self, k='1', with_aux='0'):
        super().__init__(need_top_grad=True)
        self.k, self.with_aux = float(k), with_aux == '1'

    def list_arguments(self):
        return ['data', 'weight']

    def list_outputs(self):
        return ['out', 'plus']

    def list_auxiliary_states(self):
        return ['count'] if self.with_aux else []

    def infer_shape(self, in_shape):
        data = in_shape[0]
        return [data, [1, data[1]]], [data, data], ([[1]] if self.with_aux else [])

    def create_operator(self, ctx, shapes, dtypes):
        return ScaledPair(self.k)


class Dense(mx.operator.CustomOp):
    """``data @ weight.T`` with a learnable ``weight`` of shape (num_hidden, in_units)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.dot(in_data[0], in_data[1], transpose_b=True))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], mx.nd.dot(out_grad[0], in_data[1]))
        self.assign(in_grad[1], req[1], mx.nd.dot(out_grad[0], in_data[0], transpose_a=True))


@mx.operator.register('test_dense')
class DenseProp(mx.operator.CustomOpProp):
    def __init__(self, num_hidden):
        super().__init__()
        self.num_hidden = int(num_hidden)

    def list_arguments(self):
        return ['data', 'weight']

    def infer_shape(self, in_shape):
        data = in_shape[0]
        return [data, [self.num_hidden, data[1]]], [[data[0], self.num_hidden]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Dense()


def _events(kind):
    return [details for event, details in CALLS if event == kind]


@pytest.fixture(autouse=True)
def _fresh_calls():
    CALLS.clear()


# ------------------------------------------------------------------ module API
def test_module_exposes_the_custom_op_api():
    assert {'CustomOp', 'CustomOpProp', 'register', 'get_all_registered_operators',
            'get_operator_arguments'} <= set(dir(mx.operator))
    ops = mx.operator.get_all_registered_operators()
    assert ops == sorted(ops) and {'Custom', 'FullyConnected', 'concat'} <= set(ops)
    # MXNet 1.9.1's answers.
    fc = mx.operator.get_operator_arguments('FullyConnected')
    assert fc.narg == 6 and fc.names == ['data', 'weight', 'bias', 'num_hidden', 'no_bias', 'flatten']
    assert fc.types[:4] == ['NDArray-or-Symbol'] * 3 + ['int, required']
    assert fc.types[4] == 'boolean, optional, default=0'
    custom = mx.operator.get_operator_arguments('Custom')
    assert custom.names == ['data', 'op_type'] and custom.types[0] == 'NDArray-or-Symbol[]'
    with pytest.raises(mx.base.MXNetError, match='nope is not registered'):
        mx.operator.get_operator_arguments('nope')


def test_prop_defaults_match_mxnet():
    prop = mx.operator.CustomOpProp()
    assert prop.need_top_grad_ is True
    assert (prop.list_arguments(), prop.list_outputs(), prop.list_auxiliary_states()) == (['data'], ['output'], [])
    assert prop.infer_shape([[2, 3]]) == ([[2, 3]], ([2, 3],), ())
    assert prop.infer_type([np.float32]) == ([np.float32], [np.float32], [])
    assert prop.declare_backward_dependency([10], [20], [30]) == [10, 20, 30]
    assert mx.operator.CustomOpProp(need_top_grad=False).declare_backward_dependency([10], [20], [30]) == [20, 30]
    assert prop.infer_storage_type(['default']) == (['default'], ['default'], [])
    assert isinstance(prop.create_operator(mx.cpu(), [[2]], [0]), mx.operator.CustomOp)


def test_assign_honours_req():
    op, dst = mx.operator.CustomOp(), mx.nd.zeros((2,))
    op.assign(dst, 'write', mx.nd.ones((2,)))
    op.assign(dst, 'add', mx.nd.ones((2,)))
    op.assign(dst, 'null', mx.nd.ones((2,)) * 7)
    assert dst.asnumpy().tolist() == [2.0, 2.0]
    op.assign(dst, 'inplace', mx.nd.ones((2,)) * 5)
    op.assign(dst, 'add', 3)
    assert dst.asnumpy().tolist() == [8.0, 8.0]


def test_registering_again_replaces_with_a_warning():
    with pytest.warns(UserWarning, match='overriding existing custom operator test_twice'):
        for scale in (2.0, 3.0):
            @mx.operator.register('test_twice')
            class Twice(mx.operator.CustomOpProp):   # pylint: disable=unused-variable
                def create_operator(self, ctx, shapes, dtypes, scale=scale):
                    op = mx.operator.CustomOp()
                    op.forward = lambda is_train, req, in_data, out_data, aux: op.assign(
                        out_data[0], req[0], in_data[0] * scale)
                    return op
    assert mx.nd.Custom(mx.nd.ones((2,)), op_type='test_twice').asnumpy().tolist() == [3.0, 3.0]


# ------------------------------------------------------------------ imperative
_X = np.array([[1, 2, 3], [1, 1, 0.5]], dtype='float32')
_LABEL = np.array([2, 0], dtype='float32')
# MXNet 1.9.1: the softmax of _X and the gradient of the loss op for _LABEL.
_SOFTMAX = [[0.09003057, 0.24472846, 0.66524094], [0.38365173, 0.38365173, 0.23269653]]
_SOFTMAX_GRAD = [[0.09003057, 0.24472846, -0.33475906], [-0.61634827, 0.38365173, 0.23269653]]


def test_softmax_forward_backward_and_what_the_op_sees():
    x = mx.nd.array(_X)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, mx.nd.array(_LABEL), op_type='test_softmax', foo=3, bar=1.5)
    # need_top_grad=False: the head gradient is ignored, as for MXNet's loss operators.
    y.backward(mx.nd.ones((2, 3)) * 5)
    np.testing.assert_allclose(y.asnumpy(), _SOFTMAX, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), _SOFTMAX_GRAD, rtol=1e-6)
    assert _events('prop') == [{'foo': '3', 'bar': '1.5'}]       # keyword arguments arrive as strings
    assert _events('create') == [(str(mx.current_context()), [[2, 3], [2]], [0, 0])]
    assert _events('forward') == [(1, ['write'], ['NDArray'] * 3)]
    assert _events('backward') == [(['write', 'null'], ['NDArray', 'NDArray'])]
    mx.nd.Custom(x, mx.nd.array(_LABEL), op_type='test_softmax', foo=3, bar=1.5)
    assert _events('forward')[-1][0] == 0                         # is_train outside record()


def test_multiple_outputs_aux_states_and_kwargs():
    x, w, count = mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[2, 3]]), mx.nd.zeros((1,))
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        out, plus = mx.nd.Custom(x, w, count, op_type='test_scaled_pair', k=2, with_aux=1)
        loss = (out * 3).sum() + plus.sum()
    loss.backward()
    # MXNet 1.9.1's results.
    assert out.asnumpy().tolist() == [[4, 12], [12, 24]] and plus.asnumpy().tolist() == [[2, 3], [4, 5]]
    assert x.grad.asnumpy().tolist() == [[13, 19], [13, 19]] and w.grad.asnumpy().tolist() == [[24, 36]]
    assert count.asnumpy().tolist() == [1.0]


def test_numeric_gradient_of_a_hand_written_backward():
    rng = np.random.RandomState(1)
    check_numeric_gradient(lambda x, w: mx.nd.Custom(x, w, op_type='test_scaled_pair', k=1.5),
                           [rng.randn(3, 2), rng.randn(1, 2)])
    check_numeric_gradient(lambda x, w: mx.nd.Custom(x, w, op_type='test_dense', num_hidden=4),
                           [rng.randn(3, 5), rng.randn(4, 5)])


def test_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(mx.base.MXNetError, match='Cannot find custom operator unknown_op'):
        mx.nd.Custom(x, op_type='unknown_op')
    with pytest.raises(mx.base.MXNetError, match='Cannot find custom operator unknown_op'):
        mx.sym.Custom(mx.sym.var('x'), op_type='unknown_op')
    with pytest.raises(mx.base.MXNetError, match="'op_type' is missing"):
        mx.nd.Custom(x)
    with pytest.raises(mx.base.MXNetError, match='expects 2 inputs, but got 1'):
        mx.nd.Custom(x, op_type='test_softmax')
    with pytest.raises(mx.base.MXNetError, match="cannot create custom operator test_dense .*'bad'"):
        mx.nd.Custom(x, x, op_type='test_dense', num_hidden=2, bad=1)


class _Failing(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        if self.where == 'forward':
            assert False, 'user forward failed'
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise KeyError('user backward failed')


@mx.operator.register('test_failing')
class _FailingProp(mx.operator.CustomOpProp):
    def __init__(self, where):
        super().__init__(need_top_grad=True)
        self.where = where

    def create_operator(self, ctx, in_shapes, in_dtypes):
        op = _Failing()
        op.where = self.where
        return op


def test_errors_in_user_code_become_mxnet_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(mx.base.MXNetError, match='_Failing.forward failed: AssertionError: user forward'):
        mx.nd.Custom(x, op_type='test_failing', where='forward')
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type='test_failing', where='backward')
    np.testing.assert_array_equal(y.asnumpy(), np.full((2, 3), 2))
    with pytest.raises(mx.base.MXNetError, match="_Failing.backward failed: KeyError: 'user backward"):
        y.backward()


class _NumpySquare(mx.operator.NumpyOp):
    def list_arguments(self):
        return ['a', 'b']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] ** 2 + in_data[1]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]
        in_grad[1][:] = out_grad[0]


class _NDArrayScale(mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 3

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 3


@pytest.mark.filterwarnings('ignore:.*has been deprecated')
def test_legacy_python_operators_in_executors():
    sym = _NumpySquare().get_symbol(mx.sym.var('x'), mx.sym.var('y'), name='sq')
    assert sym.list_arguments() == ['x', 'y'] and sym.list_outputs() == ['sq_output']
    x, y = mx.nd.array([1.0, -2.0]), mx.nd.array([0.5, 0.5])
    grads = {'x': mx.nd.zeros(2), 'y': mx.nd.zeros(2)}
    exe = sym.bind(mx.cpu(), {'x': x, 'y': y}, args_grad=grads)
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), [1.5, 4.5])
    exe.backward(mx.nd.array([1.0, 10.0]))
    np.testing.assert_allclose(grads['x'].asnumpy(), [2, -40])
    np.testing.assert_allclose(grads['y'].asnumpy(), [1, 10])

    exe = _NDArrayScale()(mx.sym.var('x')).bind(mx.cpu(), {'x': x}, args_grad={'x': grads['x']})
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), [3, -6])
    exe.backward(mx.nd.ones(2))
    np.testing.assert_allclose(grads['x'].asnumpy(), [3, 3])
    with pytest.raises(NotImplementedError):
        mx.operator.PythonOp().get_symbol(mx.sym.var('x'))


# ------------------------------------------------------------------ symbolic
# MXNet 1.9.1's JSON of mx.sym.Custom(data, op_type='test_scaled_pair', k=2, with_aux=1, name='sc').
_SCALED_PAIR_JSON = {
    'nodes': [
        {'op': 'null', 'name': 'data', 'inputs': []},
        {'op': 'null', 'name': 'sc_weight', 'attrs': {'k': '2', 'op_type': 'test_scaled_pair', 'with_aux': '1'},
         'inputs': []},
        {'op': 'null', 'name': 'sc_count', 'attrs': {'k': '2', 'op_type': 'test_scaled_pair', 'with_aux': '1'},
         'inputs': []},
        {'op': 'Custom', 'name': 'sc', 'attrs': {'k': '2', 'op_type': 'test_scaled_pair', 'with_aux': '1'},
         'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 1]]}],
    'arg_nodes': [0, 1, 2], 'node_row_ptr': [0, 1, 2, 3, 5], 'heads': [[3, 0, 0], [3, 1, 0]],
    'attrs': {'mxnet_version': ['int', 10901]}}


def test_symbol_names_json_and_shape_inference():
    sym = mx.sym.Custom(mx.sym.var('data'), op_type='test_scaled_pair', k=2, with_aux=1, name='sc')
    assert sym.list_arguments() == ['data', 'sc_weight'] and sym.list_auxiliary_states() == ['sc_count']
    assert sym.list_outputs() == ['sc_out', 'sc_plus']
    assert json.loads(sym.tojson()) == _SCALED_PAIR_JSON
    assert mx.sym.load_json(sym.tojson()).tojson() == sym.tojson()
    assert sym.infer_shape(data=(3, 2)) == ([(3, 2), (1, 2)], [(3, 2), (3, 2)], [(1,)])
    assert _events('forward') == []         # shape inference runs no user code
    auto = mx.sym.Custom(mx.sym.var('data'), op_type='test_scaled_pair')
    assert auto.name.startswith('custom') and auto.list_arguments() == ['data', auto.name + '_weight']
    named = mx.sym.Custom(data=mx.sym.var('data'), weight=mx.sym.var('w'), op_type='test_scaled_pair')
    assert named.list_arguments() == ['data', 'w']
    with pytest.raises(TypeError, match='not both'):
        mx.sym.Custom(mx.sym.var('w'), data=mx.sym.var('data'), op_type='test_scaled_pair')


def test_executor_forward_backward_and_aux_update():
    sym = mx.sym.Custom(mx.sym.var('data'), op_type='test_scaled_pair', k=2, with_aux=1, name='sc')
    exe = sym.simple_bind(mx.cpu(), data=(2, 2))
    exe.arg_dict['data'][:] = mx.nd.array([[1, 2], [3, 4]])
    exe.arg_dict['sc_weight'][:] = mx.nd.array([[2, 3]])
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2])
    exe.forward(is_train=False)
    # MXNet 1.9.1's results.
    assert exe.outputs[0].asnumpy().tolist() == [[4, 12], [12, 24]]
    assert exe.grad_dict['data'].asnumpy().tolist() == [[6, 8], [6, 8]]
    assert exe.aux_dict['sc_count'].asnumpy().tolist() == [2.0]


def test_operators_made_per_call_imperatively_and_once_per_executor_node():
    # MXNet 1.9.1: three nd.Custom calls create three operators; a bound executor keeps
    # one per node across passes (MXNet makes it at bind time, neomx at the first pass);
    # new shapes (a reshaped executor) make new ones.
    x, label = mx.nd.array(_X), mx.nd.array(_LABEL)
    del CALLS[:]
    for _ in range(3):
        mx.nd.Custom(x, label, op_type='test_softmax')
    assert len(_events('create')) == 3
    sym = mx.sym.Custom(mx.sym.var('data'), mx.sym.var('label'), op_type='test_softmax', name='sm')
    exe = sym.simple_bind(mx.cpu(), data=(2, 3), label=(2,))
    del CALLS[:]
    for _ in range(3):
        exe.forward(is_train=True, data=x, label=label)
        exe.backward()
    exe.forward(is_train=False)
    assert _events('create') == [('cpu(0)', [[2, 3], [2]], [0, 0])]      # the executor's context
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), _SOFTMAX_GRAD, rtol=1e-6)
    exe.reshape(allow_up_sizing=True, data=(4, 3), label=(4,)).forward(is_train=False,
                                                                     data=mx.nd.array(np.vstack([_X, _X])))
    assert _events('create')[-1] == ('cpu(0)', [[4, 3], [4]], [0, 0])


def test_module_fit_learns_a_custom_weight():
    rng = np.random.RandomState(0)
    features = rng.randn(40, 4).astype('float32')
    labels = (features[:, 0] > 0).astype('float32')
    hidden = mx.sym.Custom(mx.sym.var('data'), op_type='test_dense', num_hidden=2, name='dense')
    net = mx.sym.Custom(hidden, mx.sym.var('softmax_label'), op_type='test_softmax', name='softmax')
    assert net.list_arguments() == ['data', 'dense_weight', 'softmax_label']
    batches = mx.io.NDArrayIter(features, labels, batch_size=10)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(batches, num_epoch=10, optimizer='sgd', optimizer_params={'learning_rate': 0.5},
            initializer=mx.init.Xavier())
    assert mod.score(batches, 'acc')[0][1] >= 0.95
    weight = mod.get_params()[0]['dense_weight'].asnumpy()
    assert weight.shape == (2, 4) and abs(weight[0, 0] - weight[1, 0]) > 1     # feature 0 decides


# ------------------------------------------------------------------ Gluon
class _CustomDense(mx.gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(3, 4))

    def hybrid_forward(self, F, x, weight):    # pylint: disable=arguments-differ
        out, plus = F.Custom(x, F.ones_like(x).slice_axis(axis=0, begin=0, end=1), op_type='test_scaled_pair', k=2)
        return F.Custom(out * plus, weight, op_type='test_dense', num_hidden=3)


def _run_block(hybridize):
    block = _CustomDense()
    block.initialize(mx.init.Constant(mx.nd.array(np.arange(12).reshape(3, 4) / 10)))
    if hybridize:
        block.hybridize()
    x = mx.nd.array(np.arange(8).reshape(2, 4) / 4)
    x.attach_grad()
    with mx.autograd.record():
        y = block(x)
        (y * y).sum().backward()
    return y.asnumpy(), x.grad.asnumpy(), block.weight.grad().asnumpy()


def test_hybridized_block_matches_imperative():
    imperative = _run_block(hybridize=False)
    hybrid = _run_block(hybridize=True)
    for a, b in zip(imperative, hybrid):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    x = np.arange(8).reshape(2, 4) / 4
    weight = np.arange(12).reshape(3, 4) / 10
    np.testing.assert_allclose(imperative[0], (2 * x * (x + 1)) @ weight.T, rtol=1e-5)


# ------------------------------------------------------------------ sparse storage
class SparseSquare(mx.operator.CustomOp):
    """Squares the stored values of a csr input (example/numpy-ops/custom_sparse_sqr.py's op)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0]
        CALLS.append(('sparse_forward', (x.stype, out_data[0].stype)))
        if x.stype == 'csr':
            out = mx.nd.sparse.csr_matrix((x.data * x.data, x.indices, x.indptr), shape=x.shape)
        else:
            out = x * x
        self.assign(out_data[0], req[0], out)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0].tostype('default') * out_grad[0])


@mx.operator.register('test_sparse_square')
class SparseSquareProp(mx.operator.CustomOpProp):
    def infer_storage_type(self, in_stype):
        return (in_stype, ['csr' if in_stype[0] == 'csr' else 'default'], [])

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        return ograd_stype, in_stype, out_stype, ['default'], aux_stype

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return SparseSquare()


_DENSE_VALUES = np.array([[0., 2., 0.], [-3., 0., 1.]], dtype=np.float32)


def test_sparse_input_reaches_forward_in_its_storage_and_output_follows_infer_storage_type():
    # MXNet gives the user's forward the csr array and a csr output (infer_storage_type says so)
    del CALLS[:]
    x = mx.nd.array(_DENSE_VALUES).tostype('csr')
    y = mx.nd.Custom(x, op_type='test_sparse_square')
    assert CALLS == [('sparse_forward', ('csr', 'csr'))]
    assert isinstance(y, mx.nd.sparse.CSRNDArray) and y.stype == 'csr'
    np.testing.assert_array_equal(y.asnumpy(), _DENSE_VALUES ** 2)
    np.testing.assert_array_equal(y.indices.asnumpy(), [1, 0, 2])
    np.testing.assert_array_equal(y.indptr.asnumpy(), [0, 1, 3])
    del CALLS[:]
    dense = mx.nd.Custom(mx.nd.array(_DENSE_VALUES), op_type='test_sparse_square')
    assert CALLS == [('sparse_forward', ('default', 'default'))] and dense.stype == 'default'


def test_recorded_sparse_variable_runs_dense_with_gradient():
    # under record() with the csr array as a variable the call is computed densely, so that its
    # gradient flows (MXNet's own backward fails on this operator)
    x = mx.nd.array(_DENSE_VALUES).tostype('csr')
    x.attach_grad(stype='default')
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type='test_sparse_square')
    y.backward(mx.nd.ones(y.shape))
    np.testing.assert_array_equal(y.asnumpy(), _DENSE_VALUES ** 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * _DENSE_VALUES)


def test_default_infer_storage_type_refuses_sparse_inputs():
    # as MXNet's default CustomOpProp.infer_storage_type (an assertion, reported as MXNetError)
    with pytest.raises(AssertionError, match="found non default stype 'row_sparse' for in_stype\\[1\\]"):
        mx.operator.CustomOpProp().infer_storage_type(['default', 'row_sparse'])
    x = mx.nd.array(_DENSE_VALUES).tostype('csr')
    with pytest.raises(mx.MXNetError, match="Default infer_storage_type implementation doesnt allow non default "
                                            "stypes: found non default stype 'csr' for in_stype\\[0\\]"):
        mx.nd.Custom(x, mx.nd.zeros((4, 3)), op_type='test_dense', num_hidden=4)
