"""The fused recurrent operator ``RNN`` behind ``gluon.rnn.RNN/LSTM/GRU``, on torch's kernels.

MXNet passes every weight of every layer in ONE flat ``parameters`` vector: first, for each
layer and each direction, the input-to-hidden weight, the hidden-to-hidden weight (and, for
an LSTM with ``projection_size``, the projection weight); then, after all weights, the
input-to-hidden and hidden-to-hidden biases in the same layer/direction order. The gate
order matches torch's (LSTM i, f, g, o; GRU r, z, n, with the reset gate applied to
``W_hn h + b_hn``), so the kernels take views of the flat vector directly and gradients
flow back into it.

Two attributes follow MXNet's cuDNN (GPU) semantics, which its 1.9.1 CPU kernel silently
ignores: ``use_sequence_length`` (steps past a sequence's length output zeros and the
returned states are those at its last valid step) and ``lstm_state_clip_min/max`` (the
cell state is clamped at every step before the hidden state is computed from it; torch's
fused kernels cannot clip, so clipping LSTMs run a step-by-step loop).
"""
import contextlib
import functools
import math
import warnings

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from .. import autograd
from .._torch_private import rnn_kernel
from .registry import BOOL, FLOAT, INT, OPT_FLOAT, OPT_INT, check, choice, lazy, memoized, register

# torch notes once per process that oneDNN has no projected LSTM; the fallback is exact. The
# note is silenced around the first projected call only: the process's warning filters stay
# as the user has them.
_PROJECTION_NOTE = 'LSTM with projections is not supported with oneDNN'
_PROJECTION_NOTE_DUE = [True]


@contextlib.contextmanager
def _silenced_projection_note(projected):
    if not (projected and _PROJECTION_NOTE_DUE[0]):
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', message=_PROJECTION_NOTE)
        yield
    _PROJECTION_NOTE_DUE[0] = False

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}
_KERNELS = {mode: rnn_kernel(mode) for mode in _GATES}
_OUTPUT_NAMES = ('output', 'state_output', 'statecell_output')


@memoized(256)
def _parameter_layout(mode, num_layers, directions, input_size, state_size, projection_size):
    """Where each weight lies in MXNet's flat parameter vector, listed in torch's order.

    Returns
    -------
    (slots, total) : slots is a tuple of (offset, shape), per layer and direction
        ``w_ih, w_hh, b_ih, b_hh[, w_hr]`` as torch's kernels take them; total is the length
        of the flat vector.
    """
    gate_rows = _GATES[mode] * state_size
    output_size = projection_size or state_size
    weight_shapes = []
    for layer in range(num_layers):
        layer_input = input_size if layer == 0 else directions * output_size
        for _ in range(directions):
            shapes = [(gate_rows, layer_input), (gate_rows, output_size)]
            if projection_size:
                shapes.append((projection_size, state_size))
            weight_shapes.append(shapes)
    offset = 0
    weight_slots, bias_slots = [], []
    for shapes in weight_shapes:
        weight_slots.append([])
        for shape in shapes:
            weight_slots[-1].append((offset, shape))
            offset += math.prod(shape)
    for _ in weight_shapes:
        bias_slots.append([(offset, (gate_rows,)), (offset + gate_rows, (gate_rows,))])
        offset += 2 * gate_rows
    slots = []
    for weights, biases in zip(weight_slots, bias_slots):
        slots.extend(weights[:2] + biases + weights[2:])
    return tuple(slots), offset


@memoized(256)
def _split_order(slots):
    """``(sizes, slot of each piece)`` of the flat vector cut at the slots' offsets, in
    memory order (the slots list the weights in torch's order, biases interleaved)."""
    order = sorted(range(len(slots)), key=lambda k: slots[k][0])
    return tuple(math.prod(slots[k][1]) for k in order), tuple(order)


def _weight_views(parameters, slots):
    """Views of the flat ``parameters`` vector shaped as the slots say, in the slots' order.

    The vector is cut by ONE split: its backward writes the pieces' gradients into one
    gradient of the vector, where a slice per weight would make (and add up) a zero-filled
    vector-sized gradient for each of them -- the most of an RNN's backward pass."""
    sizes, order = _split_order(slots)
    weights = [None] * len(slots)
    for piece, k in zip(torch.split(parameters, sizes), order):
        weights[k] = piece.view(slots[k][1])
    return weights


def _layout_for(data_shape, attrs):
    return _parameter_layout(attrs['mode'], attrs['num_layers'], 2 if attrs['bidirectional'] else 1,
                             data_shape[2], attrs['state_size'], attrs['projection_size'] or 0)


def _state_shapes(data_shape, attrs):
    """Shapes of ``state`` and ``state_cell``: (layers * directions, N, size)."""
    stacked = attrs['num_layers'] * (2 if attrs['bidirectional'] else 1)
    hidden = (stacked, data_shape[1], attrs['projection_size'] or attrs['state_size'])
    return hidden, (stacked, data_shape[1], attrs['state_size'])


def _infer_rnn(shapes, attrs):
    data = shapes.get('data')
    if data is None:
        return {}
    hidden, cell = _state_shapes(data, attrs)
    inferred = {'parameters': (_layout_for(data, attrs)[1],), 'state': hidden}
    if attrs['mode'] == 'lstm':
        inferred['state_cell'] = cell
    if attrs['use_sequence_length']:
        inferred['sequence_length'] = (data[1],)
    return inferred


def _absent_inputs(attrs):
    absent = []
    if attrs['mode'] != 'lstm':
        absent.append('state_cell')
    if not attrs['use_sequence_length']:
        absent.append('sequence_length')
    return absent


def _count_outputs(attrs):
    if not attrs['state_outputs']:
        return 1
    return 3 if attrs['mode'] == 'lstm' else 2


# -------------------------------------------------------------- execution
def _dtype_list(tensors):
    return ', '.join(str(t.dtype) for t in tensors if t is not None)


def _run_packed(kernel, data, hx, weights, lengths, **flags):
    """Run ``kernel`` over sequences of different lengths (packed, as cuDNN does)."""
    steps = data.shape[0]
    check(bool(((lengths >= 1) & (lengths <= steps)).all()), 'RNN',
          'sequence_length values must lie in [1, %d], got %s', steps, lazy(lengths.tolist))
    packed = pack_padded_sequence(data, lengths.to('cpu', torch.int64), enforce_sorted=False)
    sort_states = functools.partial(torch.index_select, dim=1,
                                    index=packed.sorted_indices.to(data.device))
    hx = tuple(map(sort_states, hx)) if isinstance(hx, tuple) else sort_states(hx)
    result = kernel(packed.data, packed.batch_sizes, hx, weights, True, flags['num_layers'],
                    flags['dropout'], flags['train'], flags['bidirectional'])
    output = pad_packed_sequence(PackedSequence(result[0], packed.batch_sizes, packed.sorted_indices,
                                                packed.unsorted_indices), total_length=steps)[0]
    unsort = packed.unsorted_indices.to(data.device)
    return (output,) + tuple(s.index_select(1, unsort) for s in result[1:])


def _clip_cell(cell, clip_min, clip_max, clip_nan):
    """Clamp the cell state; with ``clip_nan`` a NaN becomes the lower bound (the upper one
    when only that is given), as cuDNN's non-propagating clip does."""
    if clip_nan:
        cell = torch.nan_to_num(cell, nan=clip_min if clip_min is not None else clip_max)
    return cell.clamp(clip_min, clip_max)


def _clipped_lstm_direction(inputs, h, c, weights, reverse, clip):
    """One LSTM layer in one direction, clipping the cell state at every step before the
    hidden state is computed from it."""
    w_ih, w_hh, b_ih, b_hh = weights[:4]
    projection = weights[4] if len(weights) > 4 else None
    outputs = [None] * inputs.shape[0]
    for t in (reversed(range(inputs.shape[0])) if reverse else range(inputs.shape[0])):
        in_gate, forget_gate, cell_gate, out_gate = (
            F.linear(inputs[t], w_ih, b_ih) + F.linear(h, w_hh, b_hh)).chunk(4, 1)
        c = _clip_cell(torch.sigmoid(forget_gate) * c + torch.sigmoid(in_gate) * torch.tanh(cell_gate),
                       *clip)
        h = torch.sigmoid(out_gate) * torch.tanh(c)
        if projection is not None:
            h = F.linear(h, projection)
        outputs[t] = h
    return torch.stack(outputs), h, c


def _clipped_lstm(data, hx, weights, clip, num_layers, dropout, train, bidirectional):
    """A multi-layer LSTM with cell-state clipping, which torch's fused kernel lacks."""
    directions = 2 if bidirectional else 1
    per_direction = len(weights) // (num_layers * directions)
    layer_input, final_h, final_c = data, [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            k = layer * directions + direction
            out, h, c = _clipped_lstm_direction(layer_input, hx[0][k], hx[1][k],
                                                weights[k * per_direction:(k + 1) * per_direction],
                                                direction == 1, clip)
            outputs.append(out)
            final_h.append(h)
            final_c.append(c)
        layer_input = torch.cat(outputs, -1)
        if dropout and train and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout)
    return layer_input, torch.stack(final_h), torch.stack(final_c)


@register('RNN', inputs=('data', 'parameters', 'state', 'state_cell', 'sequence_length'),
          attrs=[('state_size', INT), ('num_layers', INT), ('bidirectional', BOOL, False),
                 ('mode', choice('gru', 'lstm', 'rnn_relu', 'rnn_tanh')), ('p', FLOAT, 0.0),
                 ('state_outputs', BOOL, False), ('projection_size', OPT_INT, None),
                 ('lstm_state_clip_min', OPT_FLOAT, None), ('lstm_state_clip_max', OPT_FLOAT, None),
                 ('lstm_state_clip_nan', BOOL, False), ('use_sequence_length', BOOL, False)],
          optional_inputs=_absent_inputs, num_outputs=_count_outputs,
          output_names=lambda a: _OUTPUT_NAMES[:_count_outputs(a)], infer_args=_infer_rnn)
def rnn(data, parameters, state, state_cell, sequence_length, state_size, num_layers,
        bidirectional, mode, p, state_outputs, projection_size, lstm_state_clip_min,
        lstm_state_clip_max, lstm_state_clip_nan, use_sequence_length):
    """Multi-layer (bidirectional) vanilla RNN, LSTM or GRU over a time-major batch.

    Parameters
    ----------
    data : Tensor, shape (T, N, C)
    parameters : Tensor, shape (P,), every weight and bias in MXNet's packing
    state : Tensor, shape (num_layers * directions, N, projection_size or state_size)
    state_cell : Tensor, shape (num_layers * directions, N, state_size); LSTM only
    sequence_length : Tensor, shape (N,); with ``use_sequence_length`` only
    p : float
        Dropout between layers, applied in training mode.

    Returns
    -------
    output : Tensor, shape (T, N, directions * (projection_size or state_size))
    With ``state_outputs``, also the final state (and, for an LSTM, the final cell state),
    shaped like ``state`` (``state_cell``).
    """
    check(data.dim() == 3, 'RNN', 'data must be (T, N, C), got shape %s', data.shape)
    check(projection_size is None or mode == 'lstm', 'RNN', 'projection_size needs mode=lstm')
    attrs = {'mode': mode, 'num_layers': num_layers, 'bidirectional': bidirectional,
             'state_size': state_size, 'projection_size': projection_size}
    slots, total = _layout_for(data.shape, attrs)
    check(parameters.shape == (total,), 'RNN', 'parameters must have shape (%d,) for data %s, got %s',
          total, data.shape, parameters.shape)
    check(all(t.dtype == data.dtype for t in (parameters, state, state_cell) if t is not None), 'RNN',
          'data, parameters and states must have the same dtype, got %s',
          lazy(_dtype_list, (data, parameters, state, state_cell)))
    hidden_shape, cell_shape = _state_shapes(data.shape, attrs)
    check(tuple(state.shape) == hidden_shape, 'RNN', 'state must have shape %s, got %s',
          hidden_shape, state.shape)
    if mode == 'lstm':
        check(state_cell is not None and tuple(state_cell.shape) == cell_shape, 'RNN',
              'state_cell must have shape %s, got %s', cell_shape,
              None if state_cell is None else state_cell.shape)
    if data.device.type == 'meta':
        # shape inference: torch's RNN kernels decompose slowly on meta tensors; the shapes are known
        width = (2 if bidirectional else 1) * (projection_size or state_size)
        outputs = [data.new_empty((data.shape[0], data.shape[1], width)), state.new_empty(hidden_shape)]
        if mode == 'lstm':
            outputs.append(state_cell.new_empty(cell_shape))
        return tuple(outputs) if state_outputs else outputs[0]
    weights = _weight_views(parameters, slots)
    hx = (state, state_cell) if mode == 'lstm' else state
    flags = {'num_layers': num_layers, 'dropout': p, 'train': autograd.is_training(),
             'bidirectional': bidirectional}
    clip = (lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan)
    if mode == 'lstm' and (lstm_state_clip_min is not None or lstm_state_clip_max is not None):
        check(not use_sequence_length, 'RNN', 'lstm_state_clip_* with use_sequence_length is not supported')
        result = _clipped_lstm(data, hx, weights, clip, **flags)
    elif use_sequence_length:
        with _silenced_projection_note(projection_size is not None):
            result = _run_packed(_KERNELS[mode], data, hx, weights, sequence_length, **flags)
    else:
        with _silenced_projection_note(projection_size is not None):
            result = _KERNELS[mode](data, hx, weights, True, flags['num_layers'], flags['dropout'],
                                    flags['train'], flags['bidirectional'], False)
    return tuple(result) if state_outputs else result[0]
