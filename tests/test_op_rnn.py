"""The fused RNN operator: MXNet's flat parameter packing, the four modes, multi-layer and
bidirectional stacks, states, sequence lengths, cell clipping, projections, gradients."""
import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry
from neomx.test_utils import check_numeric_gradient

from device_tolerance import kernel_tolerance

GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def _rand(*shape, seed=0, scale=1.0):
    return (np.random.RandomState(seed).uniform(-1, 1, size=shape) * scale).astype('float32')


def _num_params(mode, layers, dirs, inputs, hidden):
    rows = GATES[mode] * hidden
    per_layer = [rows * (inputs if layer == 0 else dirs * hidden) + rows * hidden + 2 * rows
                 for layer in range(layers)]
    return dirs * sum(per_layer)


def _unpack(flat, mode, layers, dirs, inputs, hidden):
    """[w_ih, w_hh, b_ih, b_hh] per layer and direction: all weights come first, then all biases."""
    rows, offset, cells = GATES[mode] * hidden, 0, []
    for layer in range(layers):
        in_size = inputs if layer == 0 else dirs * hidden
        for _ in range(dirs):
            w_ih = flat[offset:offset + rows * in_size].reshape(rows, in_size)
            offset += rows * in_size
            cells.append([w_ih, flat[offset:offset + rows * hidden].reshape(rows, hidden)])
            offset += rows * hidden
    for cell in cells:
        cell += [flat[offset:offset + rows], flat[offset + rows:offset + 2 * rows]]
        offset += 2 * rows
    return cells


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _step(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, clip):
    gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if mode == 'rnn_tanh':
        return np.tanh(gi + gh), c
    if mode == 'rnn_relu':
        return np.maximum(gi + gh, 0), c
    if mode == 'gru':
        (ir, iz, i_n), (hr, hz, hn) = np.split(gi, 3, 1), np.split(gh, 3, 1)
        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
        return (1 - z) * np.tanh(i_n + r * hn) + z * h, c
    i, f, g, o = np.split(gi + gh, 4, 1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    if clip:
        c = np.clip(c, *clip)
    return _sigmoid(o) * np.tanh(c), c


def _reference(mode, x, flat, h0, c0, layers, dirs, clip=None):
    """A plain numpy multi-layer (bidirectional) recurrence; returns (output, h_n, c_n)."""
    cells = _unpack(flat, mode, layers, dirs, x.shape[2], h0.shape[2])
    layer_input, h_n, c_n = x, [], []
    for layer in range(layers):
        outputs = []
        for d in range(dirs):
            k = layer * dirs + d
            h, c, out = h0[k], c0[k], [None] * len(x)
            for t in (range(len(x)) if d == 0 else reversed(range(len(x)))):
                h, c = _step(mode, layer_input[t], h, c, *cells[k], clip)
                out[t] = h
            outputs.append(np.stack(out))
            h_n.append(h)
            c_n.append(c)
        layer_input = np.concatenate(outputs, -1)
    return layer_input, np.stack(h_n), np.stack(c_n)


def _inputs(mode, layers=2, dirs=2, steps=4, batch=2, inputs=3, hidden=3):
    x = _rand(steps, batch, inputs)
    flat = _rand(_num_params(mode, layers, dirs, inputs, hidden), seed=1, scale=.6)
    h0 = _rand(layers * dirs, batch, hidden, seed=2, scale=.5)
    c0 = _rand(layers * dirs, batch, hidden, seed=3, scale=.5)
    return x, flat, h0, c0


def _call(mode, x, flat, h0, c0, layers=2, bidirectional=True, **kwargs):
    states = [mx.nd.array(h0, dtype=h0.dtype)] + ([mx.nd.array(c0, dtype=c0.dtype)] if mode == 'lstm' else [])
    if isinstance(flat, np.ndarray):
        flat = mx.nd.array(flat, dtype=flat.dtype)
    return mx.nd.RNN(mx.nd.array(x, dtype=x.dtype), flat, *states, state_size=h0.shape[2],
                     num_layers=layers, bidirectional=bidirectional, mode=mode, **kwargs)


@pytest.mark.parametrize('mode', sorted(GATES))
def test_rnn_matches_numpy_reference(mode):
    x, flat, h0, c0 = _inputs(mode)
    outs = _call(mode, x, flat, h0, c0, state_outputs=True)
    assert len(outs) == (3 if mode == 'lstm' else 2)
    expect = _reference(mode, x, flat, h0, c0, 2, 2)
    assert outs[0].shape == (4, 2, 6)
    for got, want in zip(outs, expect):       # (on a GPU: cuDNN's kernels, TF32 where allowed)
        np.testing.assert_allclose(got.asnumpy(), want, **kernel_tolerance(1e-4, 1e-5))


@pytest.mark.parametrize('mode, first, last', [   # values recorded from MXNet 1.9.1
    ('lstm', [0.259103, 0.263533, 0.49837, 0.511209], [0.072678, 0.091828, 0.280148, 0.296711]),
    ('gru', [0.183563, 0.184268, 0.326596, 0.329232], [0.052918, 0.087243, 0.191102, 0.195383]),
    ('rnn_tanh', [0.609517, 0.637413, 0.740322, 0.80568], [-0.28677, -0.036852, 0.601254, 0.701981]),
    ('rnn_relu', [0.708152, 0.753804, 0.965525, 1.154939], [0., 0., 0.695109, 0.871196]),
])
def test_rnn_packing_matches_mxnet(mode, first, last):
    x = mx.nd.array(np.arange(8, dtype='float32').reshape(2, 2, 2) / 8 - .3)
    flat = mx.nd.array(np.linspace(-.5, .5, _num_params(mode, 1, 2, 2, 2)))
    states = [mx.nd.zeros((2, 2, 2))] * (2 if mode == 'lstm' else 1)
    out = mx.nd.RNN(x, flat, *states, state_size=2, num_layers=1, bidirectional=True, mode=mode)
    assert isinstance(out, mx.nd.NDArray)
    np.testing.assert_allclose(out.asnumpy()[0, 0], first, **kernel_tolerance(1e-4, 1e-6))
    np.testing.assert_allclose(out.asnumpy()[1, 1], last, **kernel_tolerance(1e-4, 1e-6))


@pytest.mark.parametrize('mode', sorted(GATES))
def test_rnn_numeric_gradient(mode):
    x, flat, h0, c0 = _inputs(mode, layers=1, steps=2, batch=1, inputs=2, hidden=2)
    inputs = [x, flat, h0] + ([c0] if mode == 'lstm' else [])

    def rnn(*arrays):
        return mx.nd.RNN(*arrays, state_size=2, num_layers=1, bidirectional=True, mode=mode,
                         state_outputs=True)
    check_numeric_gradient(rnn, inputs, rtol=1e-3)


def test_rnn_two_layer_gradient_reaches_flat_parameters():
    x, flat, h0, c0 = _inputs('lstm', steps=2, batch=1, inputs=2, hidden=2)
    x, h0, c0 = x.astype('float64'), h0.astype('float64'), c0.astype('float64')
    check_numeric_gradient(lambda p: _call('lstm', x, p, h0, c0), [flat], rtol=1e-3)


def test_rnn_infer_args():
    spec = registry.get('RNN')
    attrs = spec.parse_attrs({'state_size': 3, 'num_layers': 2, 'bidirectional': True, 'mode': 'lstm'})
    assert spec.infer_args({'data': (5, 2, 4)}, attrs) == {
        'parameters': (480,), 'state': (4, 2, 3), 'state_cell': (4, 2, 3)}
    attrs = spec.parse_attrs({'state_size': 3, 'num_layers': 2, 'mode': 'lstm', 'projection_size': 2})
    assert spec.infer_args({'data': (5, 2, 4)}, attrs)['parameters'] == (180,)
    attrs = spec.parse_attrs({'state_size': 3, 'num_layers': 2, 'mode': 'gru', 'use_sequence_length': True})
    assert spec.infer_args({'data': (5, 2, 4)}, attrs) == {
        'parameters': (_num_params('gru', 2, 1, 4, 3),), 'state': (2, 2, 3), 'sequence_length': (2,)}
    assert spec.list_outputs(spec.parse_attrs({'state_size': 3, 'num_layers': 1, 'mode': 'gru',
                                               'state_outputs': True})) == ('output', 'state_output')


def test_rnn_sequence_length_cudnn_semantics():
    x, flat, h0, c0 = _inputs('gru')
    lengths = [4, 2]
    out, h_n = _call('gru', x, flat, h0, c0, sequence_length=mx.nd.array(lengths),
                     use_sequence_length=True, state_outputs=True)
    for n, length in enumerate(lengths):
        sample = _reference('gru', x[:length, n:n + 1], flat, h0[:, n:n + 1], c0[:, n:n + 1], 2, 2)
        np.testing.assert_allclose(out.asnumpy()[:length, n:n + 1], sample[0], **kernel_tolerance(1e-4, 1e-5))
        np.testing.assert_array_equal(out.asnumpy()[length:, n], 0)
        np.testing.assert_allclose(h_n.asnumpy()[:, n:n + 1], sample[1], **kernel_tolerance(1e-4, 1e-5))


def test_rnn_gru_takes_positional_sequence_length():
    # MXNet fills the inputs present for the attributes: a GRU has no state_cell
    x, flat, h0, _ = _inputs('gru', layers=1, dirs=1)
    lengths = mx.nd.array([3, 1])
    positional = mx.nd.RNN(mx.nd.array(x), mx.nd.array(flat), mx.nd.array(h0), lengths, state_size=3,
                           num_layers=1, mode='gru', use_sequence_length=True)
    named = mx.nd.RNN(mx.nd.array(x), mx.nd.array(flat), mx.nd.array(h0), sequence_length=lengths,
                      state_size=3, num_layers=1, mode='gru', use_sequence_length=True)
    np.testing.assert_array_equal(positional.asnumpy(), named.asnumpy())


def test_rnn_lstm_state_clip():
    x, flat, h0, c0 = _inputs('lstm')
    outs = _call('lstm', x, flat, h0, c0, state_outputs=True, lstm_state_clip_min=-.2, lstm_state_clip_max=.3)
    expect = _reference('lstm', x, flat, h0, c0, 2, 2, clip=(-.2, .3))
    for got, want in zip(outs, expect):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings('ignore:LSTM with projections')
def test_rnn_projection_kernel_matches_step_loop():
    # the clipping path is a step-by-step loop; with bounds never reached it equals the kernel
    x = _rand(3, 2, 4)
    flat = _rand(180, seed=1, scale=.6)
    h0, c0 = _rand(2, 2, 2, seed=2), _rand(2, 2, 3, seed=3)
    kwargs = dict(state_size=3, num_layers=2, mode='lstm', projection_size=2, state_outputs=True)
    fused = mx.nd.RNN(mx.nd.array(x), mx.nd.array(flat), mx.nd.array(h0), mx.nd.array(c0), **kwargs)
    looped = mx.nd.RNN(mx.nd.array(x), mx.nd.array(flat), mx.nd.array(h0), mx.nd.array(c0),
                       lstm_state_clip_min=-1e3, lstm_state_clip_max=1e3, **kwargs)
    assert [o.shape for o in fused] == [(3, 2, 2), (2, 2, 2), (2, 2, 3)]
    for a, b in zip(fused, looped):     # (on a GPU the kernel is cuDNN's, TF32 where allowed)
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), **kernel_tolerance(1e-5, 1e-6))


def test_rnn_dropout_only_in_training():
    x, flat, h0, c0 = _inputs('rnn_tanh')
    plain = _call('rnn_tanh', x, flat, h0, c0)
    with_p = _call('rnn_tanh', x, flat, h0, c0, p=.5)
    np.testing.assert_array_equal(plain.asnumpy(), with_p.asnumpy())


def test_rnn_errors():
    x, flat, h0, c0 = _inputs('lstm')
    with pytest.raises(mx.base.MXNetError, match='parameters must have shape'):
        _call('lstm', x, flat[:-1], h0, c0)
    with pytest.raises(mx.base.MXNetError, match='state must have shape'):
        _call('lstm', x, flat, h0[:2], c0)
    with pytest.raises(mx.base.MXNetError, match='same dtype'):
        _call('lstm', x, flat.astype('float64'), h0, c0)
    with pytest.raises(mx.base.MXNetError, match='projection_size needs mode=lstm'):
        _call('gru', x, _rand(_num_params('gru', 2, 2, 3, 3)), h0, c0, projection_size=2)
    with pytest.raises(mx.base.MXNetError, match=r"'mode'"):
        mx.nd.RNN(mx.nd.array(x), mx.nd.array(flat), mx.nd.array(h0), state_size=3, num_layers=2,
                  mode='elman')
