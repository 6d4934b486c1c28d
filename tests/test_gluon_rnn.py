"""gluon.rnn: fused RNN/LSTM/GRU layers and the recurrent cells.

Expected values were recorded with MXNet 1.9.1 on the same deterministic weights
(``_fill``) and inputs (``_data``)."""

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

from device_tolerance import kernel_tolerance

rnn = mx.gluon.rnn


def _fill(block, scale=0.5):
    """Set every parameter from its shape only (as the recorded runs did)."""
    for param in block.collect_params().values():
        n = int(np.prod(param.shape))
        param.set_data(mx.nd.array((np.sin(np.arange(n) * 0.7 + 0.3 * n) * scale).reshape(param.shape)))


def _data(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype('float32')


def _ready(block, dtype='float32'):
    block.initialize()
    block.cast(dtype)
    _fill(block)
    return block


def _run_layer(layer, x, states=None):
    _ready(layer)
    x = mx.nd.array(x)
    return layer(x) if states is None else layer(x, [mx.nd.array(s) for s in states])


def _close(got, expected, atol=2e-6):
    # fused layers on a GPU run cuDNN's kernels (TF32 where torch allows it)
    np.testing.assert_allclose(got.asnumpy(), np.array(expected, dtype='float32'),
                               **kernel_tolerance(1e-5, atol))


# ------------------------------------------------------------ names and shapes
def test_layer_parameter_names_and_shapes_match_mxnet():
    with mx.name.NameManager():
        lstm = rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2)
        proj = rnn.LSTM(3, projection_size=2, input_size=4)
        gru = rnn.GRU(3)
    names = list(lstm.collect_params().keys())
    assert names[:5] == ['lstm0_l0_i2h_weight', 'lstm0_l0_h2h_weight', 'lstm0_l0_i2h_bias',
                         'lstm0_l0_h2h_bias', 'lstm0_r0_i2h_weight']
    assert names[-1] == 'lstm0_r1_h2h_bias' and len(names) == 16
    assert lstm.params['lstm0_l1_i2h_weight'].shape == (12, 6)
    assert [(k, v.shape) for k, v in proj.collect_params().items()] == [
        ('lstm1_l0_i2h_weight', (12, 4)), ('lstm1_l0_h2h_weight', (12, 2)),
        ('lstm1_l0_i2h_bias', (12,)), ('lstm1_l0_h2h_bias', (12,)), ('lstm1_l0_h2r_weight', (2, 3))]
    assert gru.l0_i2h_weight.shape == (9, 0)       # input size deferred


def test_cells_share_counters_with_layers_and_modifiers_take_base_prefix():
    with mx.name.NameManager():
        layer = rnn.LSTM(3)
        cell = rnn.LSTMCell(3)
        zoneout = rnn.ZoneoutCell(cell)
        residual = rnn.ResidualCell(rnn.GRUCell(3))
        stack = rnn.SequentialRNNCell()
        with stack.name_scope():
            stack.add(rnn.LSTMCell(3))
    assert (layer.prefix, cell.prefix, zoneout.prefix, residual.prefix) == (
        'lstm0_', 'lstm1_', 'lstm1_zoneout', 'gru0_residualcell')
    assert list(cell.collect_params().keys()) == [
        'lstm1_i2h_weight', 'lstm1_h2h_weight', 'lstm1_i2h_bias', 'lstm1_h2h_bias']
    assert list(zoneout.collect_params().keys()) == list(cell.collect_params().keys())
    assert list(stack.collect_params().keys())[0] == 'sequentialrnncell0_lstm0_i2h_weight'


def test_reprs_match_mxnet():
    assert repr(rnn.LSTM(3, input_size=2, num_layers=2, bidirectional=True)) == \
        'LSTM(2 -> 3, TNC, num_layers=2, bidirectional)'
    assert repr(rnn.RNN(4, activation='tanh', dropout=0.5, layout='NTC')) == \
        'RNN(None -> 4, NTC, dropout=0.5)'
    assert repr(rnn.RNNCell(3, input_size=4)) == 'RNNCell(4 -> 3, tanh)'
    assert repr(rnn.GRUCell(2, input_size=5)) == 'GRUCell(5 -> 6)'
    assert repr(rnn.ZoneoutCell(rnn.LSTMCell(3), 0.5, 0.5)) == \
        'ZoneoutCell(p_out=0.5, p_state=0.5, LSTMCell(None -> 12))'
    assert repr(rnn.DropoutCell(0.5)) == 'DropoutCell(rate=0.5, axes=())'
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(3, input_size=3))
    assert repr(stack) == 'SequentialRNNCell(\n(0): LSTMCell(3 -> 12)\n)'
    assert repr(rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2))) == \
        'BidirectionalCell(forward=GRUCell(None -> 6), backward=GRUCell(None -> 6))'


def test_save_parameters_uses_mxnet_unfused_keys_and_round_trips(tmp_path):
    layer = _ready(rnn.LSTM(2, num_layers=2, bidirectional=True, input_size=2))
    gru = _ready(rnn.GRU(2, input_size=2))
    layer.save_parameters(str(tmp_path / 'lstm.params'))
    gru.save_parameters(str(tmp_path / 'gru.params'))
    keys = list(mx.nd.load(str(tmp_path / 'lstm.params')).keys())
    assert keys[:2] == ['_unfused.0.l_cell.i2h_weight', '_unfused.0.l_cell.h2h_weight']
    assert keys[-1] == '_unfused.1.r_cell.h2h_bias'
    assert list(mx.nd.load(str(tmp_path / 'gru.params')).keys()) == [
        '_unfused.0.i2h_weight', '_unfused.0.h2h_weight', '_unfused.0.i2h_bias',
        '_unfused.0.h2h_bias']
    loaded = rnn.LSTM(2, num_layers=2, bidirectional=True)      # input size from the file
    # without ctx MXNet loads onto cpu(), whatever the current context
    loaded.load_parameters(str(tmp_path / 'lstm.params'), ctx=mx.current_context())
    x = mx.nd.array(_data(3, 2, 2))
    np.testing.assert_array_equal(loaded(x).asnumpy(), layer(x).asnumpy())


# --------------------------------------------------------------- layer values
def test_rnn_layer_tanh_and_relu():
    x = _data(3, 2, 2)
    _close(_run_layer(rnn.RNN(2, activation='tanh', input_size=2), x),
           [[[0.671666, 0.741938], [0.606202, 0.765536]],
            [[0.860587, 0.768147], [0.909032, 0.746699]],
            [[0.928994, 0.881442], [0.927586, 0.857757]]])
    _close(_run_layer(rnn.RNN(2, input_size=2), x),       # relu is RNN's default
           [[[0.813772, 0.954776], [0.702895, 1.009453]],
            [[1.462532, 1.035632], [1.682392, 0.971137]],
            [[2.058073, 1.516249], [2.107406, 1.466426]]])


def test_gru_layer_with_states():
    out, states = _run_layer(rnn.GRU(2, input_size=2), _data(3, 2, 2), [_data(1, 2, 2, seed=1)])
    _close(out, [[[-0.422423, -0.270245], [-0.842916, -0.370251]],
                 [[-0.585754, -0.436999], [-0.814775, -0.505038]],
                 [[-0.594835, -0.548478], [-0.733809, -0.514163]]])
    assert isinstance(states, list) and len(states) == 1
    _close(states[0], [[[-0.594835, -0.548478], [-0.733809, -0.514163]]])


def test_lstm_layer_with_states():
    out, (h, c) = _run_layer(rnn.LSTM(2, input_size=2), _data(3, 2, 2),
                             [_data(1, 2, 2, seed=1), _data(1, 2, 2, seed=2)])
    _close(out, [[[-0.346284, -0.303364], [-0.12625, -0.046075]],
                 [[-0.285709, -0.137376], [-0.35687, -0.132369]],
                 [[-0.346348, -0.228299], [-0.354547, -0.18671]]])
    _close(h, [[[-0.346348, -0.228299], [-0.354547, -0.18671]]])
    _close(c, [[[-0.689237, -0.317317], [-0.703059, -0.26596]]])


def test_lstm_bidirectional_two_layers_ntc():
    layer = rnn.LSTM(2, num_layers=2, bidirectional=True, layout='NTC', input_size=2)
    out, (h, c) = _run_layer(layer, _data(2, 3, 2), [_data(4, 2, 2, seed=1), _data(4, 2, 2, seed=2)])
    _close(out, [[[-0.294949, -0.105352, -0.312123, -0.002173],
                  [-0.30091, -0.051565, -0.318803, -0.014979],
                  [-0.31325, -0.040788, -0.391519, 0.00354]],
                 [[-0.235191, -0.072039, -0.331545, -0.048243],
                  [-0.280804, -0.044609, -0.336673, 0.019391],
                  [-0.304242, -0.020304, -0.289581, 0.157222]]])
    _close(h, [[[-0.314838, -0.12032], [-0.347835, -0.203384]],
               [[-0.35466, -0.150265], [-0.390166, -0.128324]],
               [[-0.31325, -0.040788], [-0.304242, -0.020304]],
               [[-0.312123, -0.002173], [-0.331545, -0.048243]]])
    _close(c, [[[-0.638969, -0.183766], [-0.695744, -0.291321]],
               [[-0.687722, -0.220382], [-0.756601, -0.191303]],
               [[-0.748833, -0.056879], [-0.767129, -0.027276]],
               [[-0.825772, -0.002873], [-0.772716, -0.067189]]])


def test_lstm_projection():
    out, (h, c) = _run_layer(rnn.LSTM(3, projection_size=2, input_size=2), _data(3, 2, 2),
                             [_data(1, 2, 2, seed=1), _data(1, 2, 3, seed=2)])
    _close(out, [[[0.024702, 0.005446], [0.031035, -0.019316]],
                 [[0.067361, -0.059711], [0.097323, -0.087183]],
                 [[0.108447, -0.100764], [0.120608, -0.113498]]])
    _close(c, [[[0.478285, 0.109886, 0.119261], [0.462065, 0.264284, 0.033465]]])


def test_layouts_agree_and_states_are_optional():
    x = _data(3, 2, 2)
    tnc = _ready(rnn.GRU(2, input_size=2))
    ntc = _ready(rnn.GRU(2, input_size=2, layout='NTC'))
    out = tnc(mx.nd.array(x))
    assert isinstance(out, mx.nd.NDArray) and out.shape == (3, 2, 2)
    np.testing.assert_allclose(ntc(mx.nd.array(x.transpose(1, 0, 2))).asnumpy(),
                               out.asnumpy().transpose(1, 0, 2), atol=1e-6)
    single_state = tnc(mx.nd.array(x), mx.nd.zeros((1, 2, 2)))     # a lone state is a list of one
    np.testing.assert_allclose(single_state[0].asnumpy(), out.asnumpy(), atol=1e-6)


def test_forward_hooks_see_what_the_caller_gets():
    layer = _ready(rnn.GRU(2, input_size=2))
    seen = []
    layer.register_forward_hook(lambda block, inputs, outputs: seen.append(outputs))
    x = mx.nd.array(_data(3, 2, 2))
    out = layer(x)
    out_and_states = layer(x, layer.begin_state(2))
    assert seen[0] is out and seen[1] is out_and_states and len(out_and_states[1]) == 1


def test_begin_state_shapes_dtype_and_func():
    layer = rnn.LSTM(5, num_layers=2, bidirectional=True, projection_size=3, dtype='float64')
    states = layer.begin_state(batch_size=4)
    assert [s.shape for s in states] == [(4, 4, 3), (4, 4, 5)]
    assert all(s.dtype == np.float64 and not s.asnumpy().any() for s in states)
    ones = rnn.GRU(2).begin_state(3, func=mx.nd.ones, dtype='float32')
    assert len(ones) == 1 and ones[0].asnumpy().tolist() == np.ones((1, 3, 2)).tolist()
    assert rnn.GRU(3).state_info(2) == [{'shape': (1, 2, 3), '__layout__': 'LNC', 'dtype': 'float32'}]


def test_deferred_input_size_and_uninitialized_layer():
    layer = rnn.LSTM(2, num_layers=2, bidirectional=True)
    with pytest.raises(RuntimeError, match='lstm.*l0_i2h_weight.*not been initialized'):
        layer(mx.nd.ones((3, 2, 5)))
    layer.initialize()
    assert layer(mx.nd.ones((3, 2, 5))).shape == (3, 2, 4)
    assert layer.l0_i2h_weight.shape == (8, 5) and layer.r0_i2h_weight.shape == (8, 5)


def test_layer_errors_name_layer_and_shapes():
    layer = rnn.LSTM(3, input_size=2)
    layer.initialize()
    x = mx.nd.ones((4, 5, 2))
    with pytest.raises(ValueError, match=r'Expecting \(1, 5, 3\), got \(1, 4, 3\)'):
        layer(x, [mx.nd.zeros((1, 4, 3)), mx.nd.zeros((1, 5, 3))])
    with pytest.raises(mx.base.MXNetError, match=r"'lstm\d+' \(LSTM\).*2 features.*\(4, 5, 3\)"):
        layer(mx.nd.ones((4, 5, 3)))
    with pytest.raises(mx.base.MXNetError, match='3-D input'):
        layer(mx.nd.ones((4, 5)))
    with pytest.raises(mx.base.MXNetError, match='2 recurrent states, got 1'):
        layer(x, [mx.nd.zeros((1, 5, 3))])
    with pytest.raises(AssertionError, match='Invalid layout'):
        rnn.GRU(3, layout='CTN')


def test_sequence_length_masks_outputs_past_each_end():
    layer = _ready(rnn.GRU(2, input_size=2, use_sequence_length=True))
    x = mx.nd.array(_data(3, 2, 2))
    out = layer(x, sequence_length=mx.nd.array([1, 3]))
    assert not out.asnumpy()[1:, 0].any()
    np.testing.assert_allclose(out.asnumpy()[:, 1], layer(x[:, 1:2], sequence_length=mx.nd.array([3]))
                               .asnumpy()[:, 0], atol=1e-6)


def test_layer_dropout_only_between_layers_in_training():
    layer = _ready(rnn.LSTM(2, num_layers=2, dropout=0.999, input_size=2))
    x = mx.nd.array(_data(3, 2, 2))
    reference = layer(x).asnumpy()
    with mx.autograd.train_mode():
        dropped = layer(x).asnumpy()
    assert not np.allclose(dropped, reference)
    single = _ready(rnn.GRU(2, dropout=0.999, input_size=2))     # one layer: nothing to drop
    with mx.autograd.train_mode():
        np.testing.assert_array_equal(single(x).asnumpy(), single(x).asnumpy())


# ---------------------------------------------------------------- cell values
def test_cell_steps():
    x = mx.nd.array(_data(2, 2))
    h0, c0 = mx.nd.array(_data(2, 3, seed=1)), mx.nd.array(_data(2, 3, seed=2))
    out, states = _ready(rnn.RNNCell(3, input_size=2))(x, [h0])
    _close(out, [[0.855664, 0.673691, 0.228286], [0.848181, 0.894243, -0.214416]])
    assert len(states) == 1 and states[0] is out
    out, (h, c) = _ready(rnn.LSTMCell(3, input_size=2))(x, [h0, c0])
    _close(h, [[0.13487, -0.091334, 0.060446], [0.253035, -0.012534, -0.044706]])
    _close(c, [[0.30082, -0.41484, 0.214108], [0.474396, -0.076679, -0.154385]])
    out, (h,) = _ready(rnn.GRUCell(3, input_size=2))(x, [h0])
    _close(h, [[0.44113, 0.61302, -0.29057], [0.228316, 0.095319, -0.102402]])


def test_cell_deferred_input_size_and_state_info():
    cell = rnn.LSTMCell(3)
    cell.initialize()
    out, _ = cell(mx.nd.ones((2, 5)), cell.begin_state(batch_size=2))
    assert out.shape == (2, 3) and cell.i2h_weight.shape == (12, 5)
    assert cell.state_info(4) == [{'shape': (4, 3), '__layout__': 'NC'}] * 2
    with pytest.raises(mx.base.MXNetError, match=r"'lstm\d+' \(LSTMCell\).*\(2, 4\)"):
        cell(mx.nd.ones((2, 4)), cell.begin_state(batch_size=2))


def test_unroll_merge_layouts_and_counters():
    cell = _ready(rnn.GRUCell(2, input_size=2))
    x = _data(2, 3, 2)
    merged, states = cell.unroll(3, mx.nd.array(x), layout='NTC', merge_outputs=True)
    assert merged.shape == (2, 3, 2) and cell._counter == 2 and cell._init_counter == 0
    steps, _ = cell.unroll(3, mx.nd.array(x.transpose(1, 0, 2)), layout='TNC')
    assert isinstance(steps, list) and len(steps) == 3
    np.testing.assert_allclose(np.stack([s.asnumpy() for s in steps], 1), merged.asnumpy(), atol=1e-6)
    from_list, _ = cell.unroll(3, [mx.nd.array(x[:, t]) for t in range(3)], layout='TNC',
                               merge_outputs=True)
    np.testing.assert_allclose(from_list.asnumpy(), merged.asnumpy().transpose(1, 0, 2), atol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy(), steps[-1].asnumpy(), atol=1e-6)
    with pytest.raises(AssertionError, match='unroll of 4 steps'):
        cell.unroll(4, mx.nd.array(x), layout='NTC')


def test_unroll_valid_length():
    cell = _ready(rnn.GRUCell(2, input_size=2))
    outs, states = cell.unroll(3, mx.nd.array(_data(2, 3, 2)), layout='NTC', merge_outputs=True,
                               valid_length=mx.nd.array([2, 3]))
    _close(outs, [[[-0.344601, -0.445907], [-0.527467, -0.502577], [0.0, 0.0]],
                  [[-0.341971, -0.459053], [-0.479274, -0.578516], [-0.571705, -0.57792]]])
    _close(states[0], [[-0.527467, -0.502577], [-0.571705, -0.57792]])


def test_bidirectional_cell():
    cell = _ready(rnn.BidirectionalCell(rnn.LSTMCell(2, input_size=2), rnn.GRUCell(2, input_size=2)))
    x = mx.nd.array(_data(3, 2, 2))
    outs, states = cell.unroll(3, x, layout='TNC', merge_outputs=True)
    _close(outs, [[[-0.293851, -0.154231, -0.632907, -0.533053],
                   [-0.271232, -0.154078, -0.618466, -0.478294]],
                  [[-0.305836, -0.111512, -0.530465, -0.471365],
                   [-0.372287, -0.131611, -0.541125, -0.581015]],
                  [[-0.351013, -0.217849, -0.312629, -0.431676],
                   [-0.362263, -0.18561, -0.32969, -0.438754]]])
    assert [s.shape for s in states] == [(2, 2)] * 3
    _close(states[2], [[-0.632907, -0.533053], [-0.618466, -0.478294]])
    masked, states = cell.unroll(3, x, layout='TNC', merge_outputs=False,
                                 valid_length=mx.nd.array([1, 3]))
    _close(masked[0], [[-0.293851, -0.154231, -0.344601, -0.445907],
                       [-0.271232, -0.154078, -0.618466, -0.478294]])
    assert not masked[1].asnumpy()[0].any()
    _close(states[1], [[-0.501702, -0.215416], [-0.72595, -0.264848]])
    with pytest.raises(NotImplementedError, match='cannot be stepped'):
        cell(x[0], cell.begin_state(batch_size=2))


def test_sequential_cells_step_and_unroll():
    for stack_type in (rnn.SequentialRNNCell, rnn.HybridSequentialRNNCell):
        stack = stack_type()
        stack.add(rnn.LSTMCell(3, input_size=2))
        stack.add(rnn.GRUCell(2, input_size=3))
        _ready(stack)
        assert len(stack) == 2 and isinstance(stack[1], rnn.GRUCell)
        x = mx.nd.array(_data(2, 4, 2))
        out, states = stack(x[:, 0], stack.begin_state(batch_size=2))
        assert out.shape == (2, 2) and [s.shape for s in states] == [(2, 3), (2, 3), (2, 2)]
        outs, states = stack.unroll(4, x, layout='NTC', merge_outputs=True)
        manual, _ = stack[1].unroll(4, stack[0].unroll(4, x, layout='NTC')[0], layout='NTC',
                                    merge_outputs=True)
        np.testing.assert_allclose(outs.asnumpy(), manual.asnumpy(), atol=1e-6)


def test_modifier_cells():
    base = rnn.LSTMCell(2, input_size=2)
    zoneout = _ready(rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5))
    reference = _ready(rnn.LSTMCell(2, input_size=2))
    x = mx.nd.array(_data(2, 3, 2))
    np.testing.assert_allclose(zoneout.unroll(3, x, merge_outputs=True)[0].asnumpy(),
                               reference.unroll(3, x, merge_outputs=True)[0].asnumpy(), atol=1e-6)
    with pytest.raises(AssertionError, match='base cell cannot be called directly'):
        base.begin_state(batch_size=2)
    zoneout.reset()                 # the first step's previous output is zeros
    with mx.autograd.train_mode():
        h0 = [mx.nd.ones((2, 2)) * 5, mx.nd.ones((2, 2)) * 5]
        out, (h, c) = zoneout(x[:, 0], h0)
        fresh = reference(x[:, 0], h0)[0].asnumpy()
    kept = h.asnumpy()
    assert np.all((kept == 5) | np.isclose(kept, fresh))          # each element: old or new
    assert np.all((out.asnumpy() == 0) | np.isclose(out.asnumpy(), fresh))
    residual = _ready(rnn.ResidualCell(rnn.GRUCell(2, input_size=2)))
    plain = _ready(rnn.GRUCell(2, input_size=2))
    for merge in (True, False):
        got, _ = residual.unroll(3, x, merge_outputs=merge)
        base_out, _ = plain.unroll(3, x, merge_outputs=True)
        got = got if merge else mx.nd.stack(*got, axis=1)
        np.testing.assert_allclose(got.asnumpy(), base_out.asnumpy() + x.asnumpy(), atol=1e-6)
    with pytest.raises(AssertionError, match='already modified'):
        rnn.ResidualCell(base)


def test_dropout_cell():
    cell = rnn.DropoutCell(0.5)
    x = mx.nd.ones((2, 3, 4))
    assert cell.state_info(2) == []
    out, states = cell.unroll(3, x, merge_outputs=True)
    assert states == [] and out.asnumpy().tolist() == x.asnumpy().tolist()
    with mx.autograd.train_mode():
        steps, _ = cell.unroll(3, x, merge_outputs=False)
    values = np.stack([s.asnumpy() for s in steps])
    assert len(steps) == 3 and set(np.unique(values)) <= {0.0, 2.0}


# --------------------------------------------------- layers and cells agree
def _copy_cell_weights(layer, cell, key):
    """Give ``cell`` the weights of the layer's parameters ``<key>_*`` (``l0``, ``r1``...)."""
    for kind in ('i2h_weight', 'h2h_weight', 'i2h_bias', 'h2h_bias'):
        getattr(cell, kind).set_data(getattr(layer, '%s_%s' % (key, kind)).data())


@pytest.mark.parametrize('layer_type, cell_type', [(rnn.LSTM, rnn.LSTMCell), (rnn.GRU, rnn.GRUCell)])
def test_bidirectional_stacked_layer_equals_unrolled_cells(layer_type, cell_type):
    layer = _ready(layer_type(3, num_layers=2, bidirectional=True, input_size=2))
    stack = rnn.SequentialRNNCell()
    for layer_index, in_size in enumerate((2, 6)):
        pair = [cell_type(3, input_size=in_size) for _ in range(2)]
        stack.add(rnn.BidirectionalCell(*pair))
        for cell, direction in zip(pair, 'lr'):
            cell.initialize()
            _copy_cell_weights(layer, cell, '%s%d' % (direction, layer_index))
    x = mx.nd.array(_data(4, 2, 2, seed=3))
    np.testing.assert_allclose(stack.unroll(4, x, layout='TNC', merge_outputs=True)[0].asnumpy(),
                               layer(x).asnumpy(), **kernel_tolerance(1e-7, 1e-5))


@pytest.mark.parametrize('make, dropout_cells', [
    (lambda: rnn.LSTM(2, num_layers=3, bidirectional=True, input_size=2), 0),
    (lambda: rnn.GRU(2, num_layers=2, dropout=0.3, input_size=2), 1),
    (lambda: rnn.RNN(2, activation='relu', input_size=2), 0)])
def test_unfuse_gives_the_equivalent_cells_sharing_parameters(make, dropout_cells):
    layer = make()
    stack = layer._unfuse()
    assert isinstance(stack, rnn.HybridSequentialRNNCell)
    assert sum(isinstance(c, rnn.DropoutCell) for c in stack._children.values()) == dropout_cells
    cells = stack.collect_params()
    assert sorted(cells.keys()) == sorted(layer.collect_params().keys())
    assert all(cells[k] is p for k, p in layer.collect_params().items())
    layer.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(_data(3, 2, 2, seed=4))
    np.testing.assert_allclose(stack.unroll(3, x, layout='TNC', merge_outputs=True)[0].asnumpy(),
                               layer(x).asnumpy(), **kernel_tolerance(1e-7, 1e-5))


def test_lstm_unfused_matches_mxnet_values():
    layer = rnn.LSTM(2, num_layers=6, bidirectional=True)
    stack = layer._unfuse()
    layer.initialize(mx.init.One())
    x = mx.nd.ones((2, 2, 2))
    # MXNet 1.9.1's output for this network (test_lstm_cpu_inference)
    want = np.array([[0.72045636, 0.72045636, 0.95215213, 0.95215213]] * 2 +
                    [[0.95215213, 0.95215213, 0.72045636, 0.72045636]] * 2).reshape(2, 2, 4)
    np.testing.assert_allclose(layer(x).asnumpy(), want, **kernel_tolerance(1e-5))
    np.testing.assert_allclose(stack.unroll(2, x, layout='TNC', merge_outputs=True)[0].asnumpy(),
                               want, **kernel_tolerance(1e-5))
    with pytest.raises(AssertionError, match='projection'):
        rnn.LSTM(2, projection_size=1)._unfuse()


def test_layer_and_cell_gradients_agree():
    layer = _ready(rnn.LSTM(3, input_size=2))
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    _copy_cell_weights(layer, cell, 'l0')
    x = mx.nd.array(_data(4, 2, 2))
    for block, run in ((layer, lambda: layer(x)),
                       (cell, lambda: cell.unroll(4, x, layout='TNC', merge_outputs=True)[0])):
        with mx.autograd.record():
            loss = (run() ** 2).sum()
        loss.backward()
    for got, want in ((cell.i2h_weight.grad(), layer.l0_i2h_weight.grad()),
                      (cell.h2h_bias.grad(), layer.l0_h2h_bias.grad())):
        want = want.asnumpy()
        np.testing.assert_allclose(got.asnumpy(), want,
                                   **kernel_tolerance(1e-4, 1e-6, scale=np.abs(want).max()))


# ----------------------------------------------------------------- gradients
@pytest.mark.parametrize('make', [lambda: rnn.RNN(2, activation='tanh', input_size=2),
                                  lambda: rnn.GRU(2, bidirectional=True, input_size=2),
                                  lambda: rnn.LSTM(2, num_layers=2, input_size=2, layout='NTC')])
def test_layer_numeric_gradient(make):
    layer = make()
    layer.initialize()
    layer.cast('float64')
    _fill(layer)
    check_numeric_gradient(lambda x: layer(x), [_data(3, 2, 2, seed=5)])


@pytest.mark.parametrize('make', [lambda: rnn.RNNCell(2, input_size=2),
                                  lambda: rnn.LSTMCell(2, input_size=2),
                                  lambda: rnn.GRUCell(2, input_size=2)])
def test_cell_numeric_gradient(make):
    cell = make()
    cell.initialize()
    cell.cast('float64')
    _fill(cell)
    check_numeric_gradient(lambda x, h: cell.unroll(3, x, [h] * len(cell.state_info()),
                                                     merge_outputs=True)[0],
                           [_data(2, 3, 2, seed=5), _data(2, 2, seed=6)])
