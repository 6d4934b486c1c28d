"""Recurrent cells: one time step per call, or a whole sequence with ``unroll``.

A cell maps ``(inputs, states)`` of one step, inputs shaped (N, C) and each state (N, H),
to ``(output, new_states)``. ``unroll`` runs it over a sequence given either as one array
with a time axis (layout ``'NTC'`` or ``'TNC'``) or as a list of per-step (N, C) arrays.

Gate orders follow MXNet, so weights move between cells and the fused layers of
:mod:`.rnn_layer` unchanged: LSTM ``i, f, c, o`` and GRU ``r, z, n``, the GRU's reset gate
multiplying the hidden-to-hidden projection (bias included) of the candidate.
Automatic names use the layers' counters: an ``LSTMCell`` is ``lstm0_`` like an ``LSTM``.
"""
import contextlib
import numbers

from ... import ndarray
from ...ndarray import NDArray
from ...symbol import Symbol
from ...util import is_np_array
from ..block import Block, HybridBlock, _indent
from ..nn.activations import LeakyReLU

__all__ = ['RecurrentCell', 'HybridRecurrentCell', 'RNNCell', 'LSTMCell', 'GRUCell',
           'SequentialRNNCell', 'HybridSequentialRNNCell', 'DropoutCell', 'ModifierCell',
           'ZoneoutCell', 'ResidualCell', 'BidirectionalCell']

# Activations that MXNet's cells apply with their own operators (F.tanh...), not Activation.
_OWN_OPERATOR_ACTIVATIONS = ('tanh', 'relu', 'sigmoid', 'softsign')


def numpy_interface(states):
    """``states`` (arrays or Symbols) as ``mx.np`` arrays / ``mx.sym.np`` Symbols under NumPy
    array semantics, where MXNet's ``begin_state`` makes them with ``mx.np.zeros``."""
    if not is_np_array():
        return states
    return [s.as_np_ndarray() for s in states]


# ------------------------------------------------------------ sequence helpers
def _as_list(arrays):
    """A list of arrays from a split's result: a list of NDArrays or a Symbol with one
    output per piece, and a lone NDArray for one piece."""
    return list(arrays) if isinstance(arrays, (list, tuple, Symbol)) else [arrays]


def _namespace_of(array):
    """The ``F`` that computes on ``array``: ``mx.nd`` for NDArrays, ``mx.sym`` for Symbols."""
    if isinstance(array, NDArray):
        return ndarray
    from ... import symbol
    return symbol


def _format_sequence(length, inputs, layout, merge):
    """Bring a sequence into the form asked for.

    Parameters
    ----------
    length : int or None
        The number of steps, checked against ``inputs`` when given.
    inputs : array shaped by ``layout``, or list of arrays shaped (N, C)
    layout : {'NTC', 'TNC'}
    merge : bool or None
        True: one array shaped by ``layout``; False: a list of steps; None: as given.

    Returns
    -------
    (inputs, time_axis, F, batch_size) : batch_size is 0 for Symbols.
    """
    time_axis = layout.find('T')
    if isinstance(inputs, (list, tuple)):
        assert length is None or len(inputs) == length, \
            'unroll of %s steps got a list of %d inputs' % (length, len(inputs))
        F = _namespace_of(inputs[0])
        batch_size = inputs[0].shape[0] if F is ndarray else 0
        if merge:
            inputs = F.stack(*inputs, axis=time_axis)
        return (inputs if merge else list(inputs)), time_axis, F, batch_size
    F = _namespace_of(inputs)
    batch_size = inputs.shape[layout.find('N')] if F is ndarray else 0
    if merge is False:
        steps = inputs.shape[time_axis] if F is ndarray else length
        assert length is None or length == steps, \
            'unroll of %s steps got inputs of shape %s (layout %s)' % (length, inputs.shape, layout)
        inputs = _as_list(F.split(inputs, num_outputs=steps, axis=time_axis, squeeze_axis=1))
    return inputs, time_axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zero the steps of every sequence past its ``valid_length``; merged or as a list."""
    if isinstance(data, list):
        data = F.stack(*data, axis=time_axis)
    masked = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                            axis=time_axis)
    if merge:
        return masked
    return _as_list(F.split(masked, num_outputs=length, axis=time_axis, squeeze_axis=True))


def _reverse_sequences(steps, length, valid_length):
    """A list of steps in reverse time order; with ``valid_length`` each sequence reverses
    only its valid steps (the padding stays at the end)."""
    if valid_length is None:
        return list(reversed(steps))
    F = _namespace_of(steps[0])
    reversed_steps = F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length,
                                       use_sequence_length=True)
    return _as_list(F.split(reversed_steps, num_outputs=length, axis=0, squeeze_axis=True))


def _begin_state_for(cell, F, begin_state, inputs, batch_size):
    """``begin_state`` when given, else zeros on the context and in the dtype of the inputs
    (an array or a list of steps)."""
    if begin_state is not None:
        return begin_state
    if F is not ndarray:
        return cell.begin_state(batch_size, func=F.zeros)
    first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
    return cell.begin_state(batch_size, ctx=first.context, dtype=first.dtype)


_get_begin_state = _begin_state_for     # MXNet's name (downstream code imports it)


def _cells_state_info(cells, batch_size):
    return [info for cell in cells for info in cell.state_info(batch_size)]


def _cells_begin_state(cells, batch_size, func, **kwargs):
    return [state for cell in cells for state in cell.begin_state(batch_size, func=func, **kwargs)]


def _split_states(cells, states):
    """``states`` cut into the share of each cell, in order."""
    start = 0
    for cell in cells:
        count = len(cell.state_info())
        yield states[start:start + count]
        start += count


@contextlib.contextmanager
def _unmodified(cell):
    """Let a cell wrapped by a ModifierCell make its own states for a while."""
    cell._modified = False
    try:
        yield cell
    finally:
        cell._modified = True


# ------------------------------------------------------------------ bases
class RecurrentCell(Block):
    """Base class of recurrent cells.

    Subclasses define ``state_info`` and ``forward(inputs, states)`` returning
    ``(output, new_states)``. Every call advances the step counter that names the
    symbols of the step (``t0_``, ``t1_``...); :meth:`reset` restarts it.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional
        Share the parameters of another cell.

    Example
    -------
    A cell keeping a running sum of its inputs:

    >>> class RunningSum(mx.gluon.rnn.RecurrentCell):
    ...     def state_info(self, batch_size=0):
    ...         return [{'shape': (batch_size, 2), '__layout__': 'NC'}]
    ...     def forward(self, inputs, states):
    ...         total = states[0] + inputs
    ...         return total, [total]
    >>> cell = RunningSum()
    >>> outputs, states = cell.unroll(3, mx.nd.ones((1, 3, 2)), layout='NTC', merge_outputs=True)
    >>> outputs
    <BLANKLINE>
    [[[1. 1.]
      [2. 2.]
      [3. 3.]]]
    <NDArray 1x3x2 @cpu(0)>
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and begin-state counters, here and in the child cells."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """One dict per state: its ``shape`` (and ``__layout__``) for a batch of this size."""
        raise NotImplementedError

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states, made by ``func(name=..., shape=..., **kwargs)``.

        Parameters
        ----------
        batch_size : int
        func : callable
            ``mx.nd.zeros`` by default; any creator taking ``shape`` (``mx.nd.ones``,
            ``mx.sym.var``...).
        **kwargs
            Passed on to ``func`` (``ctx``, ``dtype``).

        Returns
        -------
        list of NDArray, each shaped as :meth:`state_info` says
        """
        assert not self._modified, (
            'After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called '
            'directly. Call the modifier cell instead.')
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            name = '%sbegin_state_%d' % (self._prefix, self._init_counter)
            states.append(func(name=name, **dict(info, **kwargs)))
        return numpy_interface(states)


    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` steps.

        Parameters
        ----------
        length : int
        inputs : NDArray shaped by ``layout``, or list of ``length`` NDArrays shaped (N, C)
        begin_state : list of NDArray, optional
            Zeros by default.
        layout : {'NTC', 'TNC'}
        merge_outputs : bool, optional
            True: one array shaped by ``layout``; False: a list of (N, H) steps; None: a
            list, unless ``valid_length`` is given.
        valid_length : NDArray, shape (N,), optional
            Outputs past each sequence's length are zeros and the returned states are
            those of its last valid step.

        Returns
        -------
        (outputs, states)
        """
        self.reset()
        steps, time_axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _begin_state_for(self, F, begin_state, steps, batch_size)
        outputs, history = [], []
        for step in steps:
            output, states = self(step, states)
            outputs.append(output)
            history.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*per_step, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for per_step in zip(*history)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length,
                                                     time_axis, True)
        return _format_sequence(length, outputs, layout, merge_outputs)[0], states

    @staticmethod
    def _activate(F, x, activation, name=None):
        """Apply an activation given by name (``'tanh'``) or as a block/callable.

        As in MXNet's cells, the names with an operator of their own run it and the others
        run ``Activation``; ``name`` names the node.
        """
        if activation in _OWN_OPERATOR_ACTIVATIONS:
            return getattr(F, activation)(x, name=name)
        if isinstance(activation, str):
            return F.Activation(x, act_type=activation, name=name)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(x, act_type='leaky', slope=activation._alpha, name=name)
        return activation(x)

    def __call__(self, inputs, states):
        """One step: ``(output, new_states)``."""
        self._counter += 1
        return super().__call__(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell written as ``hybrid_forward(F, inputs, states, **params)``.

    Example
    -------
    A cell scaling its input by a learned factor and adding its state:

    >>> class Leaky(mx.gluon.rnn.HybridRecurrentCell):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         self.scale = self.params.get('scale', shape=(1,), init=mx.init.Constant(0.5))
    ...     def state_info(self, batch_size=0):
    ...         return [{'shape': (batch_size, 2), '__layout__': 'NC'}]
    ...     def hybrid_forward(self, F, inputs, states, scale):
    ...         out = F.broadcast_mul(inputs, scale) + states[0]
    ...         return out, [out]
    >>> cell = Leaky()
    >>> cell.initialize()
    >>> cell.hybridize()
    >>> outputs, _ = cell.unroll(2, mx.nd.ones((1, 2, 2)), layout='NTC', merge_outputs=True)
    >>> outputs
    <BLANKLINE>
    [[[0.5 0.5]
      [1.  1. ]]]
    <NDArray 1x2x2 @cpu(0)>
    """


# ------------------------------------------------------------- gated cells
class _GatedCell(HybridRecurrentCell):
    """A cell whose gates come from two projections, ``i2h`` of the input and ``h2h`` of
    the hidden state, each with ``_num_gates * hidden_size`` rows (MXNet's parameters
    ``i2h_weight``, ``h2h_weight``, ``i2h_bias``, ``h2h_bias``)."""
    _num_gates = 1
    _num_states = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._num_gates * hidden_size
        self.i2h_weight = self.params.get('i2h_weight', shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get('h2h_weight', shape=(rows, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}
                for _ in range(self._num_states)]

    def _repr_extra(self):
        return ''

    def __repr__(self):
        rows, inputs = self.i2h_weight.shape
        return '%s(%s -> %d%s)' % (type(self).__name__, inputs or None, rows, self._repr_extra())

    def _projections(self, F, inputs, hidden, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """(i2h, h2h): the input's and the hidden state's contributions to the gates."""
        rows = self._num_gates * self._hidden_size
        step = 't%d_' % self._counter
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=rows, name=step + 'i2h')
        h2h = F.FullyConnected(hidden, h2h_weight, h2h_bias, num_hidden=rows, name=step + 'h2h')
        return i2h, h2h


class RNNCell(_GatedCell):
    r"""Elman cell: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
    activation : str or callable
        ``'tanh'``, ``'relu'``, ``'sigmoid'``, ``'softrelu'``, ``'softsign'``, or a block.
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    input_size : int
        0 to infer it from the first input.
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    inputs : ``(N, C)``.
    states : ``[(N, hidden_size)]``.
    out : ``output`` ``(N, hidden_size)`` and the new states ``[output]``.

    Example
    -------
    >>> cell = mx.gluon.rnn.RNNCell(hidden_size=3, input_size=2)
    >>> cell.initialize(mx.init.Constant(0.1))
    >>> out, states = cell(mx.nd.ones((4, 2)), cell.begin_state(batch_size=4))
    >>> out
    <BLANKLINE>
    [[0.19737533 0.19737533 0.19737533]
     [0.19737533 0.19737533 0.19737533]
     [0.19737533 0.19737533 0.19737533]
     [0.19737533 0.19737533 0.19737533]]
    <NDArray 4x3 @cpu(0)>
    >>> outputs, states = cell.unroll(5, mx.nd.ones((4, 5, 2)), layout='NTC', merge_outputs=True)
    >>> outputs.shape
    (4, 5, 3)
    """

    def __init__(self, hidden_size, activation='tanh', i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return 'rnn'

    def _repr_extra(self):
        return ', %s' % (self._activation,)

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        step = 't%d_' % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        output = self._activate(F, F.elemwise_add(i2h, h2h, name=step + 'plus0'), self._activation,
                                name=step + 'out')
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long short-term memory cell, gates in MXNet's order input, forget, cell, output.

    .. math::
        i, f, g, o = \sigma(\cdot), \sigma(\cdot), act(\cdot), \sigma(\cdot)
            \text{ of the four slices of } W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}

        c_t = f c_{t-1} + i g, \quad h_t = o \, act(c_t)

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    input_size : int
        0 to infer it from the first input.
    prefix : str, optional
    params : ParameterDict, optional
    activation : str or callable
        :math:`act`, ``'tanh'`` by default.
    recurrent_activation : str or callable
        :math:`\sigma`, ``'sigmoid'`` by default.

    Shape
    -----
    inputs : ``(N, C)``.
    states : ``[h (N, hidden_size), c (N, hidden_size)]``.
    out : ``h_t`` ``(N, hidden_size)`` and the new states ``[h_t, c_t]``.

    Example
    -------
    >>> cell = mx.gluon.rnn.LSTMCell(hidden_size=3)
    >>> cell.initialize()
    >>> out, (h, c) = cell(mx.nd.ones((4, 2)), cell.begin_state(batch_size=4))
    >>> out.shape, h.shape, c.shape
    ((4, 3), (4, 3), (4, 3))
    """
    _num_gates = 4
    _num_states = 2

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None, activation='tanh', recurrent_activation='sigmoid'):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return 'lstm'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        step = 't%d_' % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=step + 'plus0'), num_outputs=4,
                               name=step + 'slice')
        in_gate, forget_gate, cell_input, out_gate = [
            self._activate(F, gate, activation, name=step + letter)
            for gate, activation, letter in zip(gates, self._gate_activations(), 'ifco')]
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=step + 'mul0'),
                                F.elemwise_mul(in_gate, cell_input, name=step + 'mul1'),
                                name=step + 'state')
        cell_output = (F.Activation(next_c, act_type=self._activation, name=step + 'activation0')
                       if isinstance(self._activation, str) else self._activate(F, next_c, self._activation))
        next_h = F.elemwise_mul(out_gate, cell_output, name=step + 'out')
        return next_h, [next_h, next_c]

    def _gate_activations(self):
        """The activations of the input, forget, cell and output slices."""
        gate = self._recurrent_activation
        return gate, gate, self._activation, gate


class GRUCell(_GatedCell):
    r"""Gated recurrent unit, gates in MXNet's order reset, update, new.

    .. math::
        r = \sigma(i2h_r + h2h_r), \quad z = \sigma(i2h_z + h2h_z), \quad
        n = \tanh(i2h_n + r \, h2h_n), \quad h_t = (1 - z) n + z h_{t-1}

    where ``i2h = W_ih x_t + b_ih`` and ``h2h = W_hh h_{t-1} + b_hh``.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    input_size : int
        0 to infer it from the first input.
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    inputs : ``(N, C)``.
    states : ``[(N, hidden_size)]``.
    out : ``h_t`` ``(N, hidden_size)`` and the new states ``[h_t]``.

    Example
    -------
    >>> cell = mx.gluon.rnn.GRUCell(hidden_size=3)
    >>> cell.initialize()
    >>> out, states = cell(mx.nd.ones((4, 2)), cell.begin_state(batch_size=4))
    >>> out.shape, len(states)
    ((4, 3), 1)
    """
    _num_gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return 'gru'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        previous = states[0]
        step = 't%d_' % self._counter
        i2h, h2h = self._projections(F, inputs, previous, i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, name=step + 'i2h_slice')
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, name=step + 'h2h_slice')
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=step + 'plus0'),
                                  act_type='sigmoid', name=step + 'r_act')
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=step + 'plus1'),
                                   act_type='sigmoid', name=step + 'z_act')
        candidate = F.Activation(F.elemwise_add(i2h_n, F.elemwise_mul(reset_gate, h2h_n, name=step + 'mul0'),
                                                name=step + 'plus2'),
                                 act_type='tanh', name=step + 'h_act')
        keep = F.elemwise_sub(F.ones_like(update_gate, name=step + 'ones_like0'), update_gate,
                              name=step + 'minus0')
        next_h = F.elemwise_add(F.elemwise_mul(keep, candidate, name=step + 'mul1'),
                                F.elemwise_mul(update_gate, previous, name=step + 'mul20'),
                                name=step + 'out')
        return next_h, [next_h]


# -------------------------------------------------------------- containers
class _CellStack:
    """What SequentialRNNCell and HybridSequentialRNNCell share: cells applied in turn,
    each on its own share of the states."""

    def add(self, cell):
        """Append a cell; its input is the previous cell's output."""
        self.register_child(cell)

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)

    def __repr__(self):
        cells = '\n'.join('(%s): %s' % (key, _indent(repr(cell), 2))
                          for key, cell in self._children.items())
        return '%s(\n%s\n)' % (type(self).__name__, cells)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        return _cells_begin_state(self._children.values(), batch_size, func, **kwargs)

    def _step(self, inputs, states):
        cells = list(self._children.values())
        next_states = []
        for cell, cell_states in zip(cells, _split_states(cells, states)):
            inputs, cell_states = cell(inputs, cell_states)
            next_states.extend(cell_states)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Unroll each cell in turn over the whole sequence (see :meth:`RecurrentCell.unroll`)."""
        self.reset()
        _, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _begin_state_for(self, F, begin_state, inputs, batch_size)
        cells = list(self._children.values())
        next_states = []
        for i, (cell, states) in enumerate(zip(cells, _split_states(cells, begin_state))):
            merge = merge_outputs if i == len(cells) - 1 else None
            inputs, states = cell.unroll(length, inputs, states, layout, merge, valid_length)
            next_states.extend(states)
        return inputs, next_states


class SequentialRNNCell(_CellStack, RecurrentCell):
    """A stack of cells: each step runs them in the order added.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    As the last cell's output; states: the cells' states in order.

    Example
    -------
    >>> stack = mx.gluon.rnn.SequentialRNNCell()
    >>> stack.add(mx.gluon.rnn.LSTMCell(4))
    >>> stack.add(mx.gluon.rnn.GRUCell(3))
    >>> stack.initialize()
    >>> outputs, states = stack.unroll(5, mx.nd.ones((2, 5, 6)), layout='NTC', merge_outputs=True)
    >>> outputs.shape, [s.shape for s in states]              # LSTM's h, c, then GRU's h
    ((2, 5, 3), [(2, 4), (2, 4), (2, 3)])
    """

    def forward(self, inputs, states):
        return self._step(inputs, states)


class HybridSequentialRNNCell(_CellStack, HybridRecurrentCell):
    """A stack of hybrid cells: each step runs them in the order added.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    As the last cell's output; states: the cells' states in order.

    Example
    -------
    >>> stack = mx.gluon.rnn.HybridSequentialRNNCell()
    >>> stack.add(mx.gluon.rnn.RNNCell(4))
    >>> stack.add(mx.gluon.rnn.RNNCell(3))
    >>> stack.initialize()
    >>> out, states = stack(mx.nd.ones((2, 6)), stack.begin_state(batch_size=2))    # one step
    >>> out.shape, len(states)
    ((2, 3), 2)
    """

    def hybrid_forward(self, F, inputs, states):
        return self._step(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs of each step (training mode only); no states.

    Parameters
    ----------
    rate : float
        Probability of zeroing an element.
    axes : tuple of int
        Axes along which the same mask is shared.
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    Output as the input; no states.

    Example
    -------
    >>> cell = mx.gluon.rnn.DropoutCell(0.5)
    >>> out, states = cell(mx.nd.ones((2, 3)), [])
    >>> out                                           # no dropout outside training
    <BLANKLINE>
    [[1. 1. 1.]
     [1. 1. 1.]]
    <NDArray 2x3 @cpu(0)>
    >>> mx.random.seed(0)
    >>> with mx.autograd.train_mode():
    ...     dropped = cell(mx.nd.ones((2, 3)), [])[0]
    >>> sorted(set(dropped.asnumpy().ravel().tolist()))    # dropped, or kept and scaled by 1 / (1 - 0.5)
    [0.0, 2.0]
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        assert isinstance(rate, numbers.Real), 'rate must be a number, but got %r' % (rate,)
        self._rate = rate
        self._axes = axes

    def _alias(self):
        return 'dropout'

    def __repr__(self):
        return '%s(rate=%s, axes=%s)' % (type(self).__name__, self._rate, self._axes)

    def state_info(self, batch_size=0):
        return []

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(inputs, p=self._rate, axes=self._axes,
                               name='t%d_fwd' % self._counter)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """A merged sequence is dropped out in one go; otherwise step by step.

        ``valid_length`` is ignored (the padding is not zeroed), as in MXNet.
        """
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, list):
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, None)
        return self.hybrid_forward(F, inputs, begin_state or [])


class ModifierCell(HybridRecurrentCell):
    """Base class of cells that wrap another cell and change what it computes.

    The wrapped cell's parameters are this cell's parameters; once wrapped, the base cell
    no longer makes its own begin states (use the modifier's).

    Parameters
    ----------
    base_cell : RecurrentCell

    Example
    -------
    A modifier that doubles its base cell's output:

    >>> class Double(mx.gluon.rnn.ModifierCell):
    ...     def hybrid_forward(self, F, inputs, states):
    ...         output, states = self.base_cell(inputs, states)
    ...         return output * 2, states
    >>> base = mx.gluon.rnn.RNNCell(2, input_size=2)
    >>> base.initialize(mx.init.Constant(0.1))
    >>> cell = Double(base)
    >>> cell.unroll(1, mx.nd.ones((1, 1, 2)), layout='NTC', merge_outputs=True)[0]   # 2 * tanh(0.1 + 0.1)
    <BLANKLINE>
    [[[0.39475065 0.39475065]]]
    <NDArray 1x1x2 @cpu(0)>
    """

    def __init__(self, base_cell):
        assert not base_cell._modified, \
            'Cell %s is already modified. One cell cannot be modified twice' % base_cell.name
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        with _unmodified(self.base_cell):
            return self.base_cell.begin_state(batch_size, func=func, **kwargs)

    def __repr__(self):
        return '%s(%r)' % (type(self).__name__, self.base_cell)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): in training, each element of the output and of the
    states keeps its previous value with the given probability.

    Parameters
    ----------
    base_cell : RecurrentCell
        Not a BidirectionalCell (it cannot step).
    zoneout_outputs : float
        Probability of keeping an output element of the previous step.
    zoneout_states : float
        Probability of keeping a state element of the previous step.

    Shape
    -----
    As ``base_cell``'s.

    Example
    -------
    >>> cell = mx.gluon.rnn.ZoneoutCell(mx.gluon.rnn.GRUCell(3), zoneout_outputs=0.5, zoneout_states=0.5)
    >>> cell.initialize()
    >>> outputs, states = cell.unroll(4, mx.nd.ones((2, 4, 5)), layout='NTC', merge_outputs=True)
    >>> outputs.shape, states[0].shape
    ((2, 4, 3), (2, 3))
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        assert not isinstance(base_cell, BidirectionalCell), (
            "BidirectionalCell doesn't support zoneout since it doesn't support step. Please "
            "add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states

    def _alias(self):
        return 'zoneout'

    def __repr__(self):
        return '%s(p_out=%s, p_state=%s, %r)' % (type(self).__name__, self.zoneout_outputs,
                                                self.zoneout_states, self.base_cell)

    def reset(self):
        super().reset()
        self._prev_output = None

    @staticmethod
    def _zoneout(F, probability, new, old):
        """``new`` with each element replaced by ``old`` with ``probability`` (Dropout's
        mask, so only in training mode)."""
        if probability == 0:
            return new
        return F.where(F.Dropout(F.ones_like(new), p=probability), new, old)

    def hybrid_forward(self, F, inputs, states):
        output, next_states = self.base_cell(inputs, states)
        previous = F.zeros_like(output) if self._prev_output is None else self._prev_output
        output = self._zoneout(F, self.zoneout_outputs, output, previous)
        next_states = [self._zoneout(F, self.zoneout_states, new, old)
                       for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds each step's input to the base cell's output (which must be of the same size).

    Parameters
    ----------
    base_cell : RecurrentCell

    Shape
    -----
    As ``base_cell``'s, whose output size must equal the input's.

    Example
    -------
    >>> base = mx.gluon.rnn.RNNCell(2, input_size=2)
    >>> base.initialize(mx.init.Zero())                # the base cell outputs 0
    >>> cell = mx.gluon.rnn.ResidualCell(base)
    >>> cell.unroll(1, mx.nd.array([[[1, 2]]]), layout='NTC', merge_outputs=True)[0]   # 0 + the input
    <BLANKLINE>
    [[[1. 2.]]]
    <NDArray 1x1x2 @cpu(0)>
    """

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name='t%d_fwd' % self._counter), states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """The base cell's unroll, plus the inputs (masked like the outputs)."""
        self.reset()
        with _unmodified(self.base_cell):
            outputs, states = self.base_cell.unroll(length, inputs, begin_state, layout,
                                                    merge_outputs, valid_length)
        merge = not isinstance(outputs, list)
        inputs, time_axis, F, _ = _format_sequence(length, inputs, layout, merge)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, time_axis,
                                                    merge)
        if merge:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(output, step) for output, step in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs one cell forward and another backward in time and concatenates their outputs
    (channels: forward first). It can only be unrolled, not stepped.

    Parameters
    ----------
    l_cell : HybridRecurrentCell
        The forward-time cell.
    r_cell : HybridRecurrentCell
        The backward-time cell.
    output_prefix : str
        Prefix of the names of the concatenated outputs (symbols).

    Shape
    -----
    ``unroll``: (N, T, C) in, (N, T, l_hidden + r_hidden) out with ``layout='NTC'``.

    Example
    -------
    >>> cell = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.LSTMCell(3), mx.gluon.rnn.LSTMCell(3))
    >>> cell.initialize()
    >>> outputs, states = cell.unroll(5, mx.nd.ones((2, 5, 4)), layout='NTC', merge_outputs=True)
    >>> outputs.shape, len(states)
    ((2, 5, 6), 4)
    """

    def __init__(self, l_cell, r_cell, output_prefix='bi_'):
        super().__init__(prefix='', params=None)
        self.register_child(l_cell, 'l_cell')
        self.register_child(r_cell, 'r_cell')
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError('Bidirectional cannot be stepped. Please use unroll')

    def __repr__(self):
        return '%s(forward=%r, backward=%r)' % (type(self).__name__, self._children['l_cell'],
                                                self._children['r_cell'])

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        return _cells_begin_state(self._children.values(), batch_size, func, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Outputs have 2 * hidden channels: the forward cell's, then the backward cell's
        (re-aligned in time); states are the forward cell's, then the backward cell's."""
        self.reset()
        steps, time_axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_steps = _reverse_sequences(steps, length, valid_length)    # first, as MXNet names
        states = _begin_state_for(self, F, begin_state, steps, batch_size)
        l_cell, r_cell = self._children.values()
        l_count = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, steps, states[:l_count], layout,
                                            merge_outputs, valid_length)
        r_outputs, r_states = r_cell.unroll(length, reversed_steps, states[l_count:], layout, False,
                                            valid_length)
        r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = not isinstance(l_outputs, list)
        l_outputs = _format_sequence(length, l_outputs, layout, merge_outputs)[0]
        if merge_outputs:
            outputs = F.concat(l_outputs, F.stack(*r_outputs, axis=time_axis), dim=2,
                               name='%sout' % self._output_prefix)
        else:
            outputs = [F.concat(l_out, r_out, dim=1, name='%st%d' % (self._output_prefix, i))
                       for i, (l_out, r_out) in enumerate(zip(l_outputs, r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, time_axis,
                                                     merge_outputs)
        return outputs, l_states + r_states
