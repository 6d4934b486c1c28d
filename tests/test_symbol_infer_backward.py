"""Symbol shape/type inference backwards: a known output shape reaching an unknown input.

MXNet 1.9.1 infers in both directions for operators whose shape rule is element-wise
(relu, scalar arithmetic, Cast, clip...; the registry's ``same_shape``), and only forwards
for others whose output merely happens to have the data's shape (softmax, Dropout,
BatchNorm, LeakyReLU...). Every expected value here was recorded with MXNet 1.9.1.
"""
import numpy as np
import pytest

import neomx as mx

S = mx.sym
x, y, z = S.var('x'), S.var('y'), S.var('z')

# (label, symbol whose output has the shape of x) -- MXNet infers x from the output.
BACKWARD = [
    ('relu', lambda: S.relu(x)),
    ('sigmoid', lambda: S.sigmoid(x)),
    ('tanh', lambda: S.tanh(x)),
    ('exp', lambda: S.exp(x)),
    ('log', lambda: S.log(x)),
    ('abs', lambda: S.abs(x)),
    ('negative', lambda: S.negative(x)),
    ('sqrt', lambda: S.sqrt(x)),
    ('square', lambda: S.square(x)),
    ('sin', lambda: S.sin(x)),
    ('logical_not', lambda: S.logical_not(x)),
    ('Activation', lambda: S.Activation(x, act_type='tanh')),
    ('Activation softrelu', lambda: S.Activation(x, act_type='softrelu')),
    ('Cast', lambda: S.Cast(x, dtype='int32')),
    ('cast', lambda: S.cast(x, dtype='float16')),
    ('amp_cast', lambda: S.amp_cast(x, dtype='float16')),
    ('_copy', lambda: S._copy(x)),
    ('identity', lambda: S.identity(x)),
    ('BlockGrad', lambda: S.BlockGrad(x)),
    ('stop_gradient', lambda: S.stop_gradient(x)),
    ('clip', lambda: S.clip(x, 0, 1)),
    ('hard_sigmoid', lambda: S.hard_sigmoid(x)),
    ('smooth_l1', lambda: S.smooth_l1(x)),
    ('zeros_like', lambda: S.zeros_like(x)),
    ('ones_like', lambda: S.ones_like(x)),
    ('log_softmax', lambda: S.log_softmax(x)),
    ('softmin', lambda: S.softmin(x)),
    ('SoftmaxActivation', lambda: S.SoftmaxActivation(x)),
    ('make_loss', lambda: S.make_loss(x)),
    ('_plus_scalar', lambda: x + 2),
    ('_mul_scalar', lambda: x * 2),
    ('_rminus_scalar', lambda: 2 - x),
    ('_rdiv_scalar', lambda: 2 / x),
    ('_power_scalar', lambda: x ** 2),
    ('_greater_scalar', lambda: x > 0),
    ('_equal_scalar', lambda: x == 0),
    ('reverse', lambda: S.reverse(x, axis=0)),
    ('cumsum with axis', lambda: S.cumsum(x, axis=1)),
    ('_random_normal_like', lambda: S._internal._random_normal_like(x)),
    ('_shuffle', lambda: S._shuffle(x)),
    ('exp(relu)', lambda: S.exp(S.relu(x))),
    ('sqrt(tanh(relu))', lambda: S.sqrt(S.tanh(S.relu(x)))),
    ('ones_like(relu)', lambda: S.ones_like(S.relu(x))),
]

# Output has the shape of x, but MXNet's shape rule runs only forwards: x stays unknown.
FORWARD_ONLY = [
    ('softmax', lambda: S.softmax(x)),
    ('softmax axis=0', lambda: S.softmax(x, axis=0)),
    ('Dropout', lambda: S.Dropout(x)),
    ('LeakyReLU leaky', lambda: S.LeakyReLU(x, act_type='leaky')),
    ('LeakyReLU elu', lambda: S.LeakyReLU(x, act_type='elu')),
    ('LeakyReLU gelu', lambda: S.LeakyReLU(x, act_type='gelu')),
    ('MakeLoss', lambda: S.MakeLoss(x)),
    ('SwapAxis', lambda: S.SwapAxis(x)),
    ('squeeze', lambda: S.squeeze(x)),
    ('broadcast_axis', lambda: S.broadcast_axis(x)),
    ('Flatten', lambda: S.Flatten(x)),
]


def _shapes(sym, known):
    args, outs, aux = sym.infer_shape_partial(**known)
    return dict(zip(sym.list_arguments(), args)), outs, aux


# ------------------------------------------------------------------- shapes
@pytest.mark.parametrize('label, make', BACKWARD, ids=[c[0] for c in BACKWARD])
def test_output_shape_reaches_input(label, make):
    s = make() + y
    assert s.infer_shape(y=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert s.infer_shape_partial(y=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])


@pytest.mark.parametrize('label, make', FORWARD_ONLY, ids=[c[0] for c in FORWARD_ONLY])
def test_forward_only_operators_leave_input_unknown(label, make):
    s = make() + y
    assert s.infer_shape_partial(y=(2, 3)) == ([(), (2, 3)], [(2, 3)], [])
    with pytest.warns(UserWarning, match='x'):
        assert s.infer_shape(y=(2, 3)) == (None, None, None)


def test_backward_from_a_multiplication():
    s = S.Activation(x, act_type='tanh') * y
    assert s.infer_shape(y=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])


def test_backward_through_channel_softmax_activation():
    s = S.SoftmaxActivation(x, mode='channel') + y
    assert s.infer_shape(y=(2, 3, 4)) == ([(2, 3, 4), (2, 3, 4)], [(2, 3, 4)], [])


def test_backward_fills_every_input_of_add_n():
    s = S.add_n(x, z) + y
    assert s.infer_shape(y=(2, 3)) == ([(2, 3), (2, 3), (2, 3)], [(2, 3)], [])


def test_backward_between_two_branches():
    # z's shape reaches x through the sum and back down through relu.
    s = S.relu(x) + S.sigmoid(z)
    assert s.infer_shape(z=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])


def test_backward_then_forward_to_weights():
    s = S.FullyConnected(S.relu(x) + y, num_hidden=4, name='fc')
    assert s.infer_shape(y=(2, 3)) == ([(2, 3), (2, 3), (4, 3), (4,)], [(2, 4)], [])


def test_batch_norm_is_forward_only():
    s = S.BatchNorm(x, name='bn') + y
    args, outs, aux = _shapes(s, {'y': (2, 3, 4, 5)})
    assert args == {'x': (), 'bn_gamma': (), 'bn_beta': (), 'y': (2, 3, 4, 5)}
    assert outs == [(2, 3, 4, 5)] and aux == [(), ()]
    # Forwards, the data gives the parameters and moving statistics their shapes.
    assert s.infer_shape(x=(2, 3, 4, 5)) == (
        [(2, 3, 4, 5), (3,), (3,), (2, 3, 4, 5)], [(2, 3, 4, 5)], [(3,), (3,)])


def test_layer_norm_and_prelu_are_forward_only():
    norm = S.LayerNorm(x, name='ln') + y
    assert _shapes(norm, {'y': (2, 3)})[0] == {'x': (), 'ln_gamma': (), 'ln_beta': (), 'y': (2, 3)}
    prelu = S.LeakyReLU(x, act_type='prelu', name='act') + y
    assert _shapes(prelu, {'y': (2, 3)})[0] == {'x': (), 'act_gamma': (), 'y': (2, 3)}


def test_conflicting_shapes_raise_naming_the_operator():
    with pytest.raises(mx.base.MXNetError, match='elemwise_add'):
        (S.relu(x) + y).infer_shape(x=(2, 3), y=(3, 2))
    shared = S.relu(x)
    # The two sums ask relu's output for different shapes.
    for infer in (S.Group([shared + y, shared + z]).infer_shape,
                  S.Group([shared + y, shared + z]).infer_shape_partial):
        with pytest.raises(mx.base.MXNetError, match='elemwise_add'):
            infer(y=(2, 3), z=(3, 2))


# -------------------------------------------------------------------- dtypes
@pytest.mark.parametrize('make, dtype', [
    (lambda: S.relu(x), np.float64),
    (lambda: S.exp(S.relu(x)), np.float16),
    (lambda: S.Activation(x, act_type='tanh'), np.float64),
    (lambda: x * 2, np.int32),
    (lambda: S.relu(x), np.int32),
    (lambda: S.clip(x, 0, 1), np.float64),
    (lambda: S.SoftmaxActivation(x), np.float64),
    (lambda: S.BatchNorm(x, name='bn'), np.float64),
], ids=['relu', 'exp(relu)', 'Activation', 'mul_scalar', 'relu int32', 'clip', 'SoftmaxActivation',
        'BatchNorm'])
def test_output_dtype_reaches_input(make, dtype):
    s = make() + y
    args, outs, aux = s.infer_type(y=dtype)
    assert args == [dtype] * len(s.list_arguments()) and outs == [dtype]
    assert aux == [dtype] * len(aux)


@pytest.mark.parametrize('make', [
    lambda: S.Cast(x, dtype='int32'), lambda: S.amp_cast(x, dtype='int32'), lambda: S.softmax(x),
    lambda: S.log_softmax(x)], ids=['Cast', 'amp_cast', 'softmax', 'log_softmax'])
def test_dtype_attribute_stops_the_dtype_going_back(make):
    # The output dtype comes from the attribute (or is the input's), never the other way.
    assert (make() + y).infer_type(y='int32') == (None, None, None)


# -------------------------------------------------------------------- Gluon
class _Offset(mx.gluon.HybridBlock):
    """``relu(offset) * 2 + x``: the offset's deferred shape comes only from x, backwards."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.offset = self.params.get('offset', shape=(0, 0), allow_deferred_init=True)

    def hybrid_forward(self, F, x, offset):
        return F.relu(offset) * 2 + x


@pytest.mark.parametrize('hybridize', [True, False])
def test_deferred_parameter_shape_inferred_backwards(hybridize):
    net = _Offset()
    net.initialize(mx.init.One())
    if hybridize:
        net.hybridize()
    out = net(mx.nd.ones((2, 3)))
    assert net.offset.shape == (2, 3)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 3.0, np.float32))


# ------------------------------------- arrays created with shapes left to inference
def test_zeros_with_unknown_dims_take_their_shape_from_readers():
    x = mx.sym.var('x')
    assert (mx.sym.relu(x) + mx.sym.zeros((0, 4))).infer_shape(x=(3, 4)) == ([(3, 4)], [(3, 4)], [])
    rnn = mx.sym.RNN(x, mx.sym.var('p'), mx.sym.zeros((1, 0, 8)), mode='gru', state_size=8, num_layers=1)
    # recorded from MXNet 1.9.1
    assert rnn.infer_shape(x=(5, 3, 4)) == ([(5, 3, 4), (336,)], [(5, 3, 8)], [])
    with pytest.raises(mx.base.MXNetError, match=r'_zeros.*\(0, 5\)'):
        (x + mx.sym.zeros((0, 5))).infer_shape(x=(3, 4))


def test_fully_connected_gives_the_batch_size_to_a_zero_batch_state():
    x, state = mx.sym.var('x'), mx.sym.zeros((0, 8))
    out = mx.sym.FullyConnected(x, num_hidden=6, name='i2h') + mx.sym.FullyConnected(state, num_hidden=6,
                                                                                       name='h2h')
    arg_shapes, out_shapes, _ = out.infer_shape(x=(3, 5))
    assert out_shapes == [(3, 6)]
    assert dict(zip(out.list_arguments(), arg_shapes))['h2h_weight'] == (6, 8)


def test_executor_and_hybridized_cells_resolve_zero_batch_states_per_batch_size():
    cell = mx.gluon.rnn.LSTMCell(8, input_size=4)

    class Unrolled(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.cell = cell

        def hybrid_forward(self, F, x):
            return self.cell.unroll(5, x, layout='NTC', merge_outputs=True)[0]

    net = Unrolled()
    net.initialize(mx.init.Xavier())
    inputs = [mx.nd.array(np.random.RandomState(b).uniform(-1, 1, (b, 5, 4))) for b in (3, 6)]
    imperative = [net(x).asnumpy() for x in inputs]
    net.hybridize()
    for _ in range(2):
        for x, want in zip(inputs, imperative):
            np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    x = mx.sym.var('x')
    exe = (x + mx.sym.zeros((0, 4))).simple_bind(mx.cpu(), x=(2, 4))
    assert exe.forward(x=mx.nd.ones((2, 4)))[0].asnumpy().tolist() == [[1.0] * 4] * 2


def _arg_shapes(sym, **shapes):
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    return dict(zip(sym.list_arguments(), arg_shapes))


def test_a_later_output_of_a_split_gives_its_input_shape():
    a = S.var('a', shape=(0, 10))
    parts = S.SliceChannel(a, num_outputs=10, axis=1, squeeze_axis=True)
    assert _arg_shapes(parts[1] + S.var('c', shape=(5,)))['a'] == (5, 10)
    a = S.var('a', shape=(0, 15, 0))
    parts = S.SliceChannel(a, num_outputs=3, squeeze_axis=False)
    assert _arg_shapes(parts[1] + S.var('c', shape=(3, 5, 2)))['a'] == (3, 15, 2)


def test_three_unknown_dimensions_of_a_convolution_input():
    a = S.var('a', shape=(0, 10, 0, 0))
    conv = S.Convolution(a, num_filter=21, kernel=(3, 3), pad=(1, 1), name='conv')
    shapes = _arg_shapes(conv + S.var('c', shape=(5, 21, 32, 32)))
    assert shapes['a'] == (5, 10, 32, 32)
    assert shapes['conv_weight'] == (21, 10, 3, 3)


def test_concat_of_inputs_of_unknown_batch():
    a, b = S.var('a', shape=(0, 10)), S.var('b', shape=(0, 5))
    cat = S.Concat(a, b, num_args=2, dim=1)
    arg_shapes, out_shapes, _ = cat.infer_shape_partial()
    assert out_shapes == [(0, 15)]         # known before the batch is
    shapes = _arg_shapes(S.var('d', shape=(2, 0)) + cat)
    assert (shapes['a'], shapes['b'], shapes['d']) == ((2, 10), (2, 5), (2, 15))


def test_an_output_that_does_not_decide_its_inputs_leaves_them_unknown():
    a, b = S.var('a', shape=(0, 3)), S.var('b', shape=(0, 3))
    summed = S.sum(S.Concat(a, b, num_args=2, dim=0), axis=0)
    with pytest.warns(UserWarning, match='Cannot decide the shape'):
        arg_shapes, _, _ = (summed + S.var('c', shape=(3,))).infer_shape()
    assert arg_shapes is None
