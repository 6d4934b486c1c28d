"""gluon.contrib.rnn: convolutional RNN/LSTM/GRU cells, VariationalDropoutCell and LSTMPCell.

Expected values were recorded with MXNet 1.9.1 on the same deterministic parameters
(``_fill``) and inputs (``_sequence``). MXNet's CPU build cannot run channel-last
convolutions, so those are checked against the channel-first cells instead."""
import inspect

import numpy as np
import pytest

import neomx as mx
import neomx.gluon.contrib.rnn as crnn
from neomx.test_utils import check_numeric_gradient


def _fill(cell):
    """Set every parameter from its rank in name order and its shape (as recorded)."""
    for rank, (_, param) in enumerate(sorted(cell.collect_params().items())):
        values = np.sin(np.arange(np.prod(param.shape)) * 0.37 + rank) * 0.4
        param.set_data(mx.nd.array(values.reshape(param.shape)))
    return cell


def _ready(cell):
    cell.initialize()
    return _fill(cell)


def _sequence(*shape):
    return mx.nd.array(np.cos(np.arange(np.prod(shape)) * 0.23).reshape(shape))


def _close(got, expected, atol=1e-5):
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5, atol=atol)


# ----------------------------------------------------------- names and shapes
def test_parameters_states_and_reprs_match_mxnet():
    cells = [
        (crnn.Conv2DLSTMCell((3, 5, 6), 4, 3, 3, i2h_pad=1),
         'Conv2DLSTMCell(3 -> 16, tanh, NCHW)', [(16, 3, 3, 3), (16, 4, 3, 3), (16,), (16,)],
         [(2, 4, 5, 6)] * 2),
        (crnn.Conv1DGRUCell((3, 7), 4, (3,), 5), 'Conv1DGRUCell(3 -> 12, tanh, NCW)',
         [(12, 3, 3), (12, 4, 5), (12,), (12,)], [(2, 4, 5)]),
        (crnn.Conv3DRNNCell((2, 4, 5, 6), 3, 2, 3, h2h_dilate=2, activation='relu'),
         'Conv3DRNNCell(2 -> 3, relu, NCDHW)', [(3, 2, 2, 2, 2), (3, 3, 3, 3, 3), (3,), (3,)],
         [(2, 3, 3, 4, 5)]),
        (crnn.Conv2DRNNCell((5, 6, 3), 4, 3, 3, conv_layout='NHWC'),
         'Conv2DRNNCell(3 -> 4, tanh, NHWC)', [(4, 3, 3, 3), (4, 3, 3, 4), (4,), (4,)],
         [(2, 3, 4, 4)]),
        (crnn.LSTMPCell(5, 3), 'LSTMPCell(None -> 20 -> 3)',
         [(20, 0), (20, 3), (3, 5), (20,), (20,)], [(2, 3), (2, 5)]),
    ]
    suffixes = ['i2h_weight', 'h2h_weight', 'i2h_bias', 'h2h_bias']
    for cell, text, shapes, state_shapes in cells:
        names = suffixes[:2] + ['h2r_weight'] + suffixes[2:] if len(shapes) == 5 else suffixes
        params = cell.collect_params()
        assert list(params.keys()) == [cell.prefix + name for name in names]
        assert [p.shape for p in params.values()] == shapes
        assert repr(cell) == text
        assert [info['shape'] for info in cell.state_info(2)] == state_shapes
    assert cells[0][0].state_info()[0] == {'shape': (0, 4, 5, 6), '__layout__': 'NCHW'}
    assert [c.prefix[:-2] for c, *_ in cells] == ['conv_lstm', 'conv_gru', 'conv_rnn',
                                                   'conv_rnn', 'lstmp']
    dropout = crnn.VariationalDropoutCell(cells[-1][0], 0.1, 0.2, 0.3)
    assert dropout.prefix == cells[-1][0].prefix + 'vardrop'
    assert repr(dropout) == 'VariationalDropoutCell(p_out = 0.3, p_state = 0.2)'
    assert list(dropout.collect_params().keys()) == list(cells[-1][0].collect_params().keys())


def test_signatures_and_exports_match_mxnet():
    assert crnn.__all__ == ['Conv1DRNNCell', 'Conv2DRNNCell', 'Conv3DRNNCell', 'Conv1DLSTMCell',
                            'Conv2DLSTMCell', 'Conv3DLSTMCell', 'Conv1DGRUCell', 'Conv2DGRUCell',
                            'Conv3DGRUCell', 'VariationalDropoutCell', 'LSTMPCell']
    assert str(inspect.signature(crnn.Conv3DGRUCell)) == (
        "(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0, 0, 0), "
        "i2h_dilate=(1, 1, 1), h2h_dilate=(1, 1, 1), i2h_weight_initializer=None, "
        "h2h_weight_initializer=None, i2h_bias_initializer='zeros', "
        "h2h_bias_initializer='zeros', conv_layout='NCDHW', activation='tanh', prefix=None, "
        "params=None)")
    assert "i2h_pad=(0,)" in str(inspect.signature(crnn.Conv1DLSTMCell))
    assert "conv_layout='NCHW'" in str(inspect.signature(crnn.Conv2DRNNCell))
    assert str(inspect.signature(crnn.VariationalDropoutCell)) == (
        '(base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0)')
    assert str(inspect.signature(crnn.LSTMPCell)) == (
        "(hidden_size, projection_size, i2h_weight_initializer=None, "
        "h2h_weight_initializer=None, h2r_weight_initializer=None, i2h_bias_initializer='zeros', "
        "h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None)")
    assert crnn.Conv2DGRUCell.__name__ == 'Conv2DGRUCell'
    assert 'NHWC' in crnn.Conv2DGRUCell.__doc__


def test_bad_convolution_settings():
    with pytest.raises(AssertionError, match='Only support odd number, get h2h_kernel= 2'):
        crnn.Conv2DRNNCell((5, 6, 3), 4, 3, 2)
    with pytest.raises(AssertionError, match='For 2D convolution, the convolution settings'):
        crnn.Conv2DRNNCell((5, 6, 3), 4, (3, 3, 3), 3)


# --------------------------------------------------------------------- values
# name: (cell, input shape (N, T, ...), output shape, sums of [output, *states],
#        six elements of the flat output evenly spaced from the first)
_RECORDED = {
    'lstm2d': (lambda: crnn.Conv2DLSTMCell((2, 4, 5), 3, 3, 3, i2h_pad=1), (2, 3, 2, 4, 5),
               (2, 3, 3, 4, 5), [-26.32867, -11.74948, -48.98537],
               [-0.003005, -0.077923, 0.002081, -0.09392, -0.111841, -0.121408]),
    'gru1d': (lambda: crnn.Conv1DGRUCell((2, 7), 2, 3, (5,), i2h_dilate=2), (2, 3, 2, 7),
              (2, 3, 2, 3), [1.64603, 0.7918],
              [-0.130688, 0.403338, 0.148464, 0.393932, 0.115777, 0.412364]),
    'rnn3d': (lambda: crnn.Conv3DRNNCell((2, 3, 4, 4), 2, 2, 3, activation='relu'),
              (1, 2, 2, 3, 4, 4), (1, 2, 2, 2, 3, 3), [72.05455, 48.05103],
              [0.0, 1.452322, 0.0, 2.342169, 0.0, 3.145434]),
    'gru2d': (lambda: crnn.Conv2DGRUCell((1, 4, 4), 2, (1, 3), 3, activation='sigmoid'),
              (2, 2, 1, 4, 4), (2, 2, 2, 4, 2), [17.64249, 11.55871],
              [0.436233, 0.207889, 0.437146, 0.323258, 0.211058, 0.446634]),
    'lstmp': (lambda: crnn.LSTMPCell(4, 3, input_size=5), (2, 3, 5), (2, 3, 3),
              [0.23643, 0.10991, -1.63034],
              [0.052163, -0.005217, -0.085059, -0.066522, -0.047841, 0.030237]),
}


@pytest.mark.parametrize('name', sorted(_RECORDED))
def test_unroll_matches_mxnet(name):
    make, in_shape, out_shape, sums, elements = _RECORDED[name]
    cell = _ready(make())
    output, states = cell.unroll(in_shape[1], _sequence(*in_shape), merge_outputs=True)
    assert output.shape == out_shape
    assert [s.shape for s in states] == [tuple(i['shape']) for i in cell.state_info(in_shape[0])]
    np.testing.assert_allclose([a.sum().asscalar() for a in [output] + states], sums,
                               rtol=1e-5, atol=1e-4)
    flat = output.asnumpy().ravel()
    _close(mx.nd.array(flat[::max(1, flat.size // 6)][:6]), elements)


@pytest.mark.parametrize('name', ['lstm2d', 'gru1d', 'lstmp'])
def test_hybridized_steps_equal_imperative_unroll(name):
    make, in_shape, *_ = _RECORDED[name]
    cell = _ready(make())
    data = _sequence(*in_shape)
    expected, expected_states = cell.unroll(in_shape[1], data, layout='NTC', merge_outputs=False)
    cell.hybridize()
    states = cell.begin_state(in_shape[0])
    for t, want in enumerate(expected):
        output, states = cell(data[:, t], states)
        _close(output, want.asnumpy(), atol=1e-6)
    for got, want in zip(states, expected_states):
        _close(got, want.asnumpy(), atol=1e-6)


@pytest.mark.parametrize('family', ['RNN', 'LSTM', 'GRU'])
def test_channel_last_layout_equals_channel_first(family):
    make = getattr(crnn, 'Conv2D%sCell' % family)
    first = _ready(make((2, 4, 5), 3, 3, 3, i2h_pad=(1, 0), h2h_dilate=(1, 2)))
    last = make((4, 5, 2), 3, 3, 3, i2h_pad=(1, 0), h2h_dilate=(1, 2), conv_layout='NHWC')
    last.initialize()
    for source, target in zip(first.collect_params().values(), last.collect_params().values()):
        value = source.data()
        target.set_data(value.transpose((0, 2, 3, 1)) if value.ndim == 4 else value)
    data = _sequence(2, 3, 2, 4, 5)
    expected, expected_states = first.unroll(3, data, merge_outputs=True)
    output, states = last.unroll(3, data.transpose((0, 1, 3, 4, 2)), merge_outputs=True)
    assert output.shape == (2, 3, 4, 3, 3)
    _close(output.transpose((0, 1, 4, 2, 3)), expected.asnumpy(), atol=1e-6)
    for got, want in zip(states, expected_states):
        _close(got.transpose((0, 3, 1, 2)), want.asnumpy(), atol=1e-6)


def test_symbolic_unroll_names_and_shapes_match_mxnet():
    cell = crnn.Conv1DLSTMCell((2, 5), 2, 3, 3, prefix='conv_lstm1_')
    output, states = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)
    assert output.list_arguments() == ['data', 'conv_lstm1_i2h_weight', 'conv_lstm1_i2h_bias',
                                       'conv_lstm1_h2h_weight', 'conv_lstm1_h2h_bias']
    assert output.infer_shape(data=(4, 3, 2, 5))[1] == [(4, 3, 2, 3)]
    assert [s.infer_shape(data=(4, 3, 2, 5))[1] for s in states] == [[(4, 2, 3)]] * 2


def test_lstmp_infers_its_input_size():
    cell = crnn.LSTMPCell(4, 3)
    cell.initialize()
    output, states = cell(mx.nd.ones((2, 6)), cell.begin_state(2))
    assert cell.i2h_weight.shape == (16, 6)
    assert output.shape == (2, 3) and [s.shape for s in states] == [(2, 3), (2, 4)]
    assert repr(cell) == 'LSTMPCell(6 -> 16 -> 3)'


@pytest.mark.parametrize('make', [lambda: crnn.Conv1DLSTMCell((1, 4), 1, 3, 3, i2h_pad=1),
                                  lambda: crnn.Conv1DGRUCell((1, 4), 1, 3, 3, i2h_pad=1),
                                  lambda: crnn.Conv1DRNNCell((1, 4), 1, 1, 3),
                                  lambda: crnn.LSTMPCell(2, 1, input_size=1)])
def test_numeric_gradient(make):
    cell = make()
    cell.initialize()
    cell.cast('float64')
    _fill(cell)
    state_shape = cell.state_info(2)[0]['shape']
    inputs = np.random.RandomState(1).uniform(-1, 1, size=(2, 2) + state_shape[1:])
    hidden = np.random.RandomState(2).uniform(-1, 1, size=state_shape)

    def run(data, first_state):
        begin = [first_state] + cell.begin_state(2, dtype='float64')[1:]
        return cell.unroll(2, data, begin, merge_outputs=True)[0]

    check_numeric_gradient(run, [inputs, hidden])


# ------------------------------------------------------- variational dropout
def test_variational_dropout_is_identity_in_inference_and_matches_mxnet():
    cell = _ready(crnn.VariationalDropoutCell(crnn.LSTMPCell(4, 3, input_size=5),
                                              drop_inputs=0.3, drop_outputs=0.2))
    output, states = cell.unroll(3, _sequence(2, 3, 5), valid_length=mx.nd.array([2, 3]),
                                 merge_outputs=True)
    _close(output, [[[0.052163, 0.022055, -0.048164], [-0.005217, 0.062535, 0.016557],
                     [0.0, 0.0, 0.0]],
                    [[-0.066522, -0.003692, 0.065852], [-0.047841, 0.0262, 0.052592],
                     [0.030237, 0.022766, -0.026108]]])
    _close(states[0], [[-0.005217, 0.062535, 0.016557], [0.030237, 0.022766, -0.026108]])
    _close(states[1], [[-0.113269, 0.260999, -0.354409, -0.213853],
                       [0.112928, 0.27571, -0.850939, 0.009648]])


def _zeros_of(steps):
    return [step.asnumpy() == 0 for step in steps]


@pytest.mark.parametrize('stepped', [False, True])
def test_variational_dropout_masks_are_fixed_across_steps(stepped):
    cell = crnn.VariationalDropoutCell(mx.gluon.rnn.DropoutCell(0.), drop_inputs=0.5)
    data = mx.nd.ones((4, 5, 30))

    def dropped_steps():
        with mx.autograd.record():
            if not stepped:
                return cell.unroll(5, data, merge_outputs=False)[0]
            cell.reset()
            return [cell(data[:, t], [])[0] for t in range(5)]

    outputs = dropped_steps()
    zeros = _zeros_of(outputs)
    assert 0.2 < zeros[0].mean() < 0.8
    assert all((z == zeros[0]).all() for z in zeros)
    assert set(np.unique(outputs[0].asnumpy())) == {0., 2.}
    assert not (_zeros_of(dropped_steps())[0] == zeros[0]).all()     # reset: new masks


def test_variational_dropout_hybridized_steps_keep_their_masks():
    base = _ready(mx.gluon.rnn.RNNCell(20, input_size=4))
    cell = crnn.VariationalDropoutCell(base, drop_states=0.5, drop_outputs=0.5)
    cell.hybridize()
    data = _sequence(3, 4, 4)
    mx.random.seed(3)
    with mx.autograd.record():
        outputs, states = cell.unroll(4, data)
    zeros = _zeros_of(outputs)
    assert all((z == zeros[0]).all() for z in zeros)
    assert cell.drop_states_mask.shape == (3, 20)
    cell.hybridize(False)
    mx.random.seed(3)
    with mx.autograd.record():
        expected, expected_states = cell.unroll(4, data)
    for got, want in zip(outputs + states, expected + expected_states):
        _close(got, want.asnumpy(), atol=1e-6)


def test_variational_dropout_inside_a_hybridized_block():
    class Model(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.cell = crnn.VariationalDropoutCell(
                    crnn.Conv1DGRUCell((2, 7), 2, 3, (5,), i2h_dilate=2), drop_states=0.5,
                    drop_outputs=0.5)

        def hybrid_forward(self, F, x):
            return self.cell.unroll(3, x, merge_outputs=True)[0]

    model = Model()
    model.initialize()
    _fill(model)
    data = _sequence(2, 3, 2, 7)
    expected = model(data)
    model.hybridize()
    _close(model(data), expected.asnumpy(), atol=1e-6)
    with mx.autograd.record():
        dropped = model(data)
    zeros = _zeros_of([dropped[:, t] for t in range(3)])
    assert zeros[0].any() and all((z == zeros[0]).all() for z in zeros)


def test_variational_dropout_refuses_state_dropout_of_a_bidirectional_cell():
    both = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(2), mx.gluon.rnn.GRUCell(2))
    with pytest.raises(AssertionError, match="doesn't support variational state dropout"):
        crnn.VariationalDropoutCell(both, drop_states=0.5)
    crnn.VariationalDropoutCell(both, drop_inputs=0.5)
