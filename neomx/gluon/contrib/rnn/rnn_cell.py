"""Contributed recurrent cells: variational dropout around a cell, and the projected LSTM.

Also holds the LSTM state update shared with the convolutional LSTM cells of
:mod:`.conv_rnn_cell`.
"""
from .... import ndarray
from ....ndarray import NDArray
from ...rnn.rnn_cell import (BidirectionalCell, HybridRecurrentCell, ModifierCell,
                             _begin_state_for, _format_sequence, _mask_sequence_variable_length)

__all__ = ['VariationalDropoutCell', 'LSTMPCell']


def _lstm_update(F, gates, previous_c, activate, step, out_name, axis=None):
    """One LSTM state update from the summed pre-activations of the four gates, with the
    operators and node names of MXNet's contrib cells.

    Parameters
    ----------
    F : mx.nd or mx.sym
    gates : NDArray or Symbol
        ``i2h + h2h``: the input, forget, cell and output gates, stacked in that order
        (MXNet's) along ``axis``.
    previous_c : NDArray or Symbol
        The cell state of the previous step, shaped like one gate.
    activate : callable(x, name=None)
        The activation of the cell input and of the new cell state.
    step : str
        The step's name prefix, ``'t%d_'``.
    out_name : str
        The name of the output node after ``step``.
    axis : int, optional
        The channel axis along which the gates are stacked; None for SliceChannel's default.

    Returns
    -------
    (next_h, next_c), each shaped like ``previous_c``.
    """
    slices = F.SliceChannel(gates, num_outputs=4, name=step + 'slice',
                            **({} if axis is None else {'axis': axis}))
    in_gate, forget_gate, out_gate = [F.Activation(slices[i], act_type='sigmoid', name=step + letter)
                                      for i, letter in ((0, 'i'), (1, 'f'), (3, 'o'))]
    cell_input = activate(slices[2], name=step + 'c')
    next_c = F.elemwise_add(forget_gate * previous_c, in_gate * cell_input, name=step + 'state')
    next_h = F.elemwise_mul(out_gate, activate(next_c), name=step + out_name)
    return next_h, next_c


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani, 2016, arXiv:1512.05287) around a cell: one
    dropout mask per sequence, the same at every step, for each of the inputs, the first
    state and the outputs (three independent masks).

    Masks are drawn at the first step after a :meth:`reset` (``unroll`` resets), so a cell
    stepped by hand should be reset between sequences. Dropout only acts in training mode.
    Hybridizing compiles the base cell only: the masks must outlive a step (MXNet's compiled
    step draws new ones at every step).

    Parameters
    ----------
    base_cell : RecurrentCell
        Not a BidirectionalCell when ``drop_states`` is set (it cannot step).
    drop_inputs : float
        Dropout rate of the inputs; 0 disables it.
    drop_states : float
        Dropout rate of the first state (the hidden state fed back); 0 disables it.
    drop_outputs : float
        Dropout rate of the outputs; 0 disables it.

    Shape
    -----
    As ``base_cell``'s.

    Example
    -------
    >>> mx.random.seed(0)
    >>> base = mx.gluon.rnn.RNNCell(4, input_size=4)
    >>> cell = mx.gluon.contrib.rnn.VariationalDropoutCell(base, drop_inputs=0.5)
    >>> cell.initialize(mx.init.One())
    >>> with mx.autograd.train_mode():
    ...     outputs, _ = cell.unroll(3, mx.nd.ones((1, 3, 4)), layout='NTC', merge_outputs=True)
    >>> outputs.shape
    (1, 3, 4)
    >>> outputs, _ = cell.unroll(3, mx.nd.ones((1, 3, 4)), layout='NTC', merge_outputs=True)
    >>> outputs[0, 0]                           # no dropout outside training: tanh(4)
    <BLANKLINE>
    [0.9993293 0.9993293 0.9993293 0.9993293]
    <NDArray 4 @cpu(0)>
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        assert not drop_states or not isinstance(base_cell, BidirectionalCell), (
            "BidirectionalCell doesn't support variational state dropout. Please add "
            "VariationalDropoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs

    def _alias(self):
        return 'vardrop'

    def __repr__(self):
        return '%s(p_out = %s, p_state = %s)' % (type(self).__name__, self.drop_outputs,
                                                 self.drop_states)

    def reset(self):
        """Restart the step counters and forget the masks: the next step draws new ones."""
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _mask(self, F, name, rate, like):
        """The mask kept as attribute ``name``; drawn now, shaped like ``like``, when there is
        none yet or the one kept is of the other kind (a Symbol for NDArrays, or back)."""
        mask = getattr(self, name)
        if not isinstance(mask, type(like)):
            mask = F.Dropout(F.ones_like(like), p=rate)
            setattr(self, name, mask)
        return mask

    def forward(self, inputs, states):
        """One step; NDArrays run imperatively even when hybridized, so that the masks drawn
        at the first step serve the following ones (the base cell runs compiled)."""
        if isinstance(inputs, NDArray):
            return self.hybrid_forward(ndarray, inputs, states)
        return super().forward(inputs, states)

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states:
            first = states[0] * self._mask(F, 'drop_states_mask', self.drop_states, states[0])
            states = [first] + list(states[1:])
        if self.drop_inputs:
            inputs = inputs * self._mask(F, 'drop_inputs_mask', self.drop_inputs, inputs)
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            output = output * self._mask(F, 'drop_outputs_mask', self.drop_outputs, output)
        return output, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Run over ``length`` steps (see :meth:`RecurrentCell.unroll`).

        Without state dropout the base cell unrolls as it likes (a fused layer may run the
        whole sequence at once) between a dropout of the whole input sequence and one of the
        whole output sequence, each sharing its mask along the time axis.
        """
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length)
        self.reset()
        inputs, time_axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _begin_state_for(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(time_axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout, merge_outputs=True,
                                                valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(time_axis,))
        if merge_outputs is None:
            merge_outputs = not isinstance(outputs, list)
        outputs = _format_sequence(length, outputs, layout, merge_outputs)[0]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, time_axis,
                                                     merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""LSTM cell with a projected recurrent state (Sak et al., 2014, arXiv:1402.1128).

    .. math::
        i, f, g, o = \sigma(\cdot), \sigma(\cdot), \tanh(\cdot), \sigma(\cdot)
            \text{ of the four slices of } W_{ih} x_t + b_{ih} + W_{hh} r_{t-1} + b_{hh}

        c_t = f c_{t-1} + i g, \quad h_t = o \tanh(c_t), \quad r_t = W_{hr} h_t

    Parameters
    ----------
    hidden_size : int
        Size of the cell state :math:`c` (and of :math:`h`).
    projection_size : int
        Size of the output and recurrent state :math:`r`.
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    input_size : int
        0 to infer it from the first input.
    prefix : str, optional
    params : ParameterDict, optional

    Inputs: ``inputs`` (N, C) and ``states`` [r (N, projection_size), c (N, hidden_size)].
    Outputs: ``r_t`` (N, projection_size) and ``[r_t, c_t]``.

    Shape
    -----
    inputs: ``(N, C)`` per step; out: ``(N, projection_size)``; states:
    ``[(N, projection_size), (N, hidden_size)]``.

    Example
    -------
    >>> cell = mx.gluon.contrib.rnn.LSTMPCell(hidden_size=8, projection_size=3)
    >>> cell.initialize()
    >>> out, (r, c) = cell(mx.nd.ones((2, 5)), cell.begin_state(batch_size=2))
    >>> out.shape, r.shape, c.shape
    ((2, 3), (2, 3), (2, 8))
    """

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._projection_size = projection_size
        self._input_size = input_size
        rows = 4 * hidden_size
        self.i2h_weight = self.params.get('i2h_weight', shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get('h2h_weight', shape=(rows, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get('h2r_weight', shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _alias(self):
        return 'lstmp'

    def __repr__(self):
        rows, inputs = self.i2h_weight.shape
        return '%s(%s -> %d -> %d)' % (type(self).__name__, inputs or None, rows,
                                       self._projection_size)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._projection_size), '__layout__': 'NC'},
                {'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        step = 't%d_' % self._counter
        rows = 4 * self._hidden_size
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=rows, name=step + 'i2h')
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=rows,
                               name=step + 'h2h')
        hidden, next_c = _lstm_update(F, i2h + h2h, states[1],
                                      lambda x, name=None: F.Activation(x, act_type='tanh', name=name),
                                      step, 'hidden')
        next_r = F.FullyConnected(hidden, h2r_weight, num_hidden=self._projection_size,
                                  no_bias=True, name=step + 'out')
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout='TNC', valid_length=None):
    """Unroll ``cell`` over ``inputs`` with the ``foreach`` operator: one graph node for the
    whole loop when hybridized, whatever the sequence length.

    Parameters
    ----------
    cell : RecurrentCell
    inputs : NDArray or Symbol
        Shaped by ``layout``.
    begin_state : list of NDArray or Symbol
        The cell's initial states.
    drop_inputs, drop_outputs : float, default 0
        Dropout on the inputs and on the outputs (the same mask along the time axis).
    layout : {'TNC', 'NTC'}, default 'TNC'
    valid_length : NDArray or Symbol, optional
        (N,) lengths: states stop changing and outputs are zero past each sequence's length.

    Returns
    -------
    outputs : NDArray or Symbol
        Shaped by ``layout``.
    states : list of NDArray or Symbol
        The states after the last (valid) step.

    Example
    -------
    >>> cell = mx.gluon.rnn.GRUCell(4)
    >>> cell.initialize()
    >>> x = mx.nd.ones((5, 2, 3))
    >>> out, states = dynamic_unroll(cell, x, cell.begin_state(2), valid_length=mx.nd.array([2, 5]))
    >>> out.shape, states[0].shape, float(out[3, 0].abs().sum().asscalar())
    ((5, 2, 4), (2, 4), 0.0)
    """
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    axes = None
    if axis != 0:       # foreach steps along axis 0
        axes = list(range(len(layout)))
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = begin_state
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if valid_length is None:
        def loop_body(step_inputs, step_states):
            return cell(step_inputs, step_states)
    else:
        # the step number travels as one more state; states past a sequence's end keep their value
        states = list(states) + [F.zeros((1,))]

        def loop_body(step_inputs, step_states):
            cell_states, step_no = step_states[:-1], step_states[-1]
            out, new_states = cell(step_inputs, cell_states)
            running = F.broadcast_greater(valid_length, step_no)
            new_states = [F.where(running, new, old) for new, old in zip(new_states, cell_states)]
            return out, new_states + [step_no + 1]
    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axes is not None:
        outputs = F.transpose(outputs, axes=axes)
    if valid_length is None:
        return outputs, states
    outputs = F.SequenceMask(outputs, sequence_length=valid_length, use_sequence_length=True, axis=axis)
    return outputs, states[:-1]
