"""MXNet 1.x's symbolic recurrent cells: each cell builds ``mx.sym`` nodes for one time step.

Unrolling a cell over ``length`` steps makes one graph whose node and parameter names equal
MXNet's (``lstm_t0_i2h``, ``lstm_i2h_weight``...), so checkpoints and ``tojson()`` move between
the two libraries unchanged.  Gate orders follow MXNet: LSTM ``i, f, c, o``, GRU ``r, z, o``.
"""
import functools
import warnings

from .. import initializer, ndarray, symbol
from ..base import numeric_types, string_types

__all__ = ['RNNParams', 'BaseRNNCell', 'RNNCell', 'LSTMCell', 'GRUCell', 'FusedRNNCell',
           'SequentialRNNCell', 'DropoutCell', 'ModifierCell', 'ZoneoutCell', 'ResidualCell',
           'BidirectionalCell', 'BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']

# Gate suffixes of the packed weights, per mode of the fused ``RNN`` operator.
_GATE_NAMES = {'rnn_relu': ('',), 'rnn_tanh': ('',), 'lstm': ('_i', '_f', '_c', '_o'),
               'gru': ('_r', '_z', '_o')}

_MODIFIED_MESSAGE = ('After applying modifier cells (e.g. DropoutCell) the base cell cannot be '
                     'called directly. Call the modifier cell instead.')


def _normalize_sequence(length, inputs, layout, merge):
    """Turn ``inputs`` into a list of per-step symbols (``merge=False``), one merged symbol
    (``merge=True``) or leave it as it is (``merge=None``).

    Parameters
    ----------
    length : int or None
        Number of time steps.
    inputs : Symbol or list of Symbol
        One symbol with the time axis where ``layout`` has ``'T'``, or one (N, C) symbol a step.
    layout : str
        ``'NTC'`` or ``'TNC'``.
    merge : bool or None

    Returns
    -------
    inputs : Symbol or list of Symbol
    axis : int
        The time axis of ``layout``.
    """
    assert inputs is not None, ('unroll(inputs=None) has been deprecated. '
                                'Please create input variables outside unroll.')
    axis = layout.find('T')
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            assert len(inputs.list_outputs()) == 1, (
                "unroll doesn't allow grouped symbol as input. Please convert to list with "
                "list(inputs) first or let unroll handle splitting.")
            inputs = list(symbol.split(inputs, axis=axis, num_outputs=length, squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs], dim=axis)
    return inputs, axis


class RNNParams:
    """The variables of one or more cells, created on first request: cells given the same
    container share their weights.

    Parameters
    ----------
    prefix : str
        Prepended to the name of every variable made here.

    Example
    -------
    >>> params = mx.rnn.RNNParams('shared_')
    >>> weight = params.get('weight')
    >>> weight.name, params.get('weight') is weight
    ('shared_weight', True)
    >>> a = mx.rnn.RNNCell(3, prefix='a_', params=params)    # both cells use shared_i2h_weight...
    >>> b = mx.rnn.RNNCell(3, prefix='b_', params=params)
    >>> a.params is b.params
    True
    """

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, made by ``symbol.Variable(name, **kwargs)`` if new."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Base class of the cells: ``cell(inputs, states)`` builds one step, ``unroll`` many.

    Parameters
    ----------
    prefix : str
        Prefix of node names, and of weight names when ``params`` is None.
    params : RNNParams, optional
        Weights shared with other cells; a new container (with ``prefix``) when None.

    Example
    -------
    Every cell has this interface (here an :class:`RNNCell`):

    >>> cell = mx.rnn.RNNCell(3, prefix='rnn_')
    >>> isinstance(cell, mx.rnn.BaseRNNCell), cell.state_info
    (True, [{'shape': (0, 3), '__layout__': 'NC'}])
    >>> out, states = cell(mx.sym.var('x'), cell.begin_state())     # one step
    >>> out.list_arguments()
    ['x', 'rnn_i2h_weight', 'rnn_i2h_bias', 'rnn_h2h_weight', 'rnn_h2h_bias']
    >>> outputs, states = cell.unroll(4, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(2, 4, 5))[1]
    [(2, 4, 3)]
    """

    def __init__(self, prefix='', params=None):
        self._own_params = params is None
        self._prefix = prefix
        self._params = RNNParams(prefix) if params is None else params
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and state counters (node names) before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One time step.

        Parameters
        ----------
        inputs : Symbol
            (N, C) input of this step.
        states : list of Symbol
            The states of the previous step, or ``begin_state()``.

        Returns
        -------
        output : Symbol
        states : list of Symbol
            The new states, structured as ``begin_state()``.
        """
        raise NotImplementedError()

    @property
    def params(self):
        """The cell's :class:`RNNParams`; once handed out, they count as shared."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """list of dict: ``shape`` (0 for the batch size) and ``__layout__`` of each state."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        """list of tuple: the shape of each state."""
        return [info['shape'] for info in self.state_info]

    @property
    def _gate_names(self):
        """Suffixes of the gates stacked in the i2h/h2h weights; none for gate-less cells."""
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The symbols of the initial states, named ``<prefix>begin_state_<k>``.

        Parameters
        ----------
        func : callable, default symbol.zeros
            Called as ``func(name=..., shape=..., __layout__=..., **kwargs)``; ``symbol.Variable``
            makes the states inputs of the graph.
        **kwargs
            Further arguments of ``func`` (``dtype``...).

        Returns
        -------
        list of Symbol
        """
        assert not self._modified, _MODIFIED_MESSAGE
        states = []
        for info in self.state_info:
            self._init_counter += 1
            kwargs.update(info or {})
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter),
                               **kwargs))
        return states

    def _weight_names(self, group, gates):
        return ['%s%s%s_%s' % (self._prefix, group, gate, kind)
                for kind in ('weight', 'bias') for gate in gates]

    def unpack_weights(self, args):
        """Split the gate-stacked ``i2h``/``h2h`` weights and biases into one array a gate.

        Parameters
        ----------
        args : dict of str -> NDArray
            Packed parameters, e.g. ``Module.get_params()[0]``.

        Returns
        -------
        dict of str -> NDArray
            A new dict: ``lstm_i2h_weight`` (4H, C) becomes ``lstm_i2h_i_weight`` ... (H, C) each.
        """
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ('i2h', 'h2h'):
            packed = [args.pop(name) for name in self._weight_names(group, [''])]
            names = self._weight_names(group, self._gate_names)
            pieces = [arr[j * h:(j + 1) * h].copy() for arr in packed
                      for j in range(len(self._gate_names))]
            args.update(zip(names, pieces))
        return args

    def pack_weights(self, args):
        """Inverse of :meth:`unpack_weights`: concatenate the per-gate arrays."""
        args = args.copy()
        if not self._gate_names:
            return args
        num_gates = len(self._gate_names)
        for group in ('i2h', 'h2h'):
            pieces = [args.pop(name) for name in self._weight_names(group, self._gate_names)]
            packed = self._weight_names(group, [''])
            args[packed[0]] = ndarray.concatenate(pieces[:num_gates])
            args[packed[1]] = ndarray.concatenate(pieces[num_gates:])
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """Apply the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol or list of Symbol
            (N, T, C) for ``layout='NTC'``, (T, N, C) for ``'TNC'``, or ``length`` (N, C) symbols.
        begin_state : list of Symbol, optional
            Initial states; ``begin_state()`` when None.
        layout : str, default 'NTC'
        merge_outputs : bool, optional
            True: one symbol in ``layout``; False: a list of (N, C) symbols; None: whichever the
            cell makes.

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
            The states after the last step.
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for step in range(length):
            output, states = self(inputs[step], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    @staticmethod
    def _get_activation(inputs, activation, **kwargs):
        """``activation`` given as an ``act_type`` name or as a symbol function."""
        if isinstance(activation, string_types):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class _ProjectionCell(BaseRNNCell):
    """What RNN, LSTM and GRU cells share: ``num_gates * num_hidden`` wide fully connected
    projections of the input (i2h) and of the previous output (h2h)."""

    _num_gates = 1
    _num_states = 1

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._hW = self.params.get('h2h_weight')
        bias_kwargs = {} if i2h_bias_init is None else {'init': i2h_bias_init}
        self._iB = self.params.get('i2h_bias', **bias_kwargs)
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}
                for _ in range(self._num_states)]

    def _step_name(self):
        """Advance the step counter; the node name prefix of this step (``lstm_t3_``)."""
        self._counter += 1
        return '%st%d_' % (self._prefix, self._counter)

    def _projections(self, inputs, prev_output, name):
        """i2h and h2h fully connected nodes named ``<name>i2h`` and ``<name>h2h``."""
        width = self._num_hidden * self._num_gates
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=width, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=prev_output, weight=self._hW, bias=self._hB,
                                    num_hidden=width, name='%sh2h' % name)
        return i2h, h2h


class RNNCell(_ProjectionCell):
    """Elman cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
        Width H of the output and state, (N, H).
    activation : str or callable, default 'tanh'
        An ``act_type`` of ``Activation`` or a symbol function.
    prefix : str, default 'rnn_'
    params : RNNParams, optional

    Shape
    -----
    Per step, input (N, C) and output (N, num_hidden); ``unroll`` with ``layout='NTC'`` and
    ``merge_outputs=True``: (N, T, C) in, (N, T, num_hidden) out.

    Example
    -------
    >>> cell = mx.rnn.RNNCell(3, prefix='rnn_')
    >>> outputs, states = cell.unroll(4, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(2, 4, 5))[1]
    [(2, 4, 3)]
    >>> sorted(outputs.list_arguments())
    ['data', 'rnn_h2h_bias', 'rnn_h2h_weight', 'rnn_i2h_bias', 'rnn_i2h_weight']
    """

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._projections(inputs, states[0], name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class LSTMCell(_ProjectionCell):
    """Long short-term memory cell; states ``[h, c]``, each (N, H).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams, optional
    forget_bias : float, default 1.0
        Initial bias of the forget gate (``i2h_bias`` carries an ``LSTMBias`` initializer).

    Shape
    -----
    Per step, input (N, C) and output (N, num_hidden); ``unroll`` with ``layout='NTC'`` and
    ``merge_outputs=True``: (N, T, C) in, (N, T, num_hidden) out.
    States h and c: (N, num_hidden).

    Example
    -------
    >>> cell = mx.rnn.LSTMCell(3, prefix='lstm_')
    >>> outputs, states = cell.unroll(4, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> mx.sym.Group([outputs] + states).infer_shape(data=(2, 4, 5))[1]
    [(2, 4, 3), (2, 3), (2, 3)]
    >>> dict(zip(outputs.list_arguments(), outputs.infer_shape(data=(2, 4, 5))[0]))['lstm_i2h_weight']
    (12, 5)
    """

    _num_gates = 4
    _num_states = 2

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params,
                         i2h_bias_init=initializer.LSTMBias(forget_bias=forget_bias))

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._projections(inputs, states[0], name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name='%sslice' % name)
        in_gate, forget_gate, in_transform, out_gate = [
            symbol.Activation(gates[k], act_type=act, name='%s%s' % (name, gate))
            for k, (gate, act) in enumerate(zip('ifco', ('sigmoid', 'sigmoid', 'tanh', 'sigmoid')))]
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                     name='%sstate' % name)
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type='tanh'),
                                     name='%sout' % name)
        return next_h, [next_h, next_c]


class GRUCell(_ProjectionCell):
    """Gated recurrent unit, cuDNN's variant (the reset gate scales the h2h projection).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams, optional

    Shape
    -----
    Per step, input (N, C) and output (N, num_hidden); ``unroll`` with ``layout='NTC'`` and
    ``merge_outputs=True``: (N, T, C) in, (N, T, num_hidden) out.

    Example
    -------
    >>> cell = mx.rnn.GRUCell(3, prefix='gru_')
    >>> outputs, states = cell.unroll(4, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(2, 4, 5))[1]
    [(2, 4, 3)]
    >>> dict(zip(outputs.list_arguments(), outputs.infer_shape(data=(2, 4, 5))[0]))['gru_h2h_weight']
    (9, 3)
    """

    _num_gates = 3

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super().__init__(num_hidden, prefix, params)

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        # MXNet names this cell's inner nodes with a doubled underscore (gru_t0__i2h).
        name = self._step_name()
        prev_h = states[0]
        i2h, h2h = self._projections(inputs, prev_h, name + '_')
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid', name='%s_r_act' % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid', name='%s_z_act' % name)
        candidate = symbol.Activation(i2h + reset_gate * h2h, act_type='tanh',
                                      name='%s_h_act' % name)
        next_h = symbol.elemwise_add((1. - update_gate) * candidate, update_gate * prev_h,
                                     name='%sout' % name)
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """All layers and steps in one ``RNN`` operator, with every weight packed in one vector
    ``<prefix>parameters``.

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'lstm', 'gru', 'rnn_tanh', 'rnn_relu'}, default 'lstm'
    bidirectional : bool, default False
        The output width doubles to 2H.
    dropout : float, default 0.
        Dropout between layers, in training.
    get_next_state : bool, default False
        Whether ``unroll`` returns the final states (else an empty list).
    forget_bias : float, default 1.0
    prefix : str, optional
        ``'<mode>_'`` when None.
    params : RNNParams, optional

    Shape
    -----
    ``unroll`` with ``layout='TNC'``: (T, N, C) in, (T, N, num_hidden) out (2 * num_hidden bidirectional).

    Example
    -------
    >>> cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode='lstm', prefix='f_')
    >>> outputs, _ = cell.unroll(3, mx.sym.var('data'), layout='TNC', merge_outputs=True)
    >>> arg_shapes, out_shapes, _ = outputs.infer_shape(data=(3, 2, 5))
    >>> out_shapes, outputs.list_arguments()
    ([(3, 2, 4)], ['data', 'f_parameters'])
    >>> stack = cell.unfuse()                       # the same network as separate LSTM cells
    >>> type(stack).__name__, len(stack._cells)
    ('SequentialRNNCell', 2)
    """

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        super().__init__(prefix='%s_' % mode if prefix is None else prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        self._parameter = self.params.get('parameters', init=FusedRNN(
            None, num_hidden, num_layers, mode, bidirectional, forget_bias))

    @property
    def state_info(self):
        shape = (len(self._directions) * self._num_layers, 0, self._num_hidden)
        return [{'shape': shape, '__layout__': 'LNC'}
                for _ in range(1 + (self._mode == 'lstm'))]

    @property
    def _gate_names(self):
        return list(_GATE_NAMES[self._mode])

    def _packed_layout(self, num_input):
        """(name, shape) of every piece of the packed vector, in cuDNN's order: all weights
        (per layer, direction: i2h gates then h2h gates), then all biases in the same order."""
        h = self._num_hidden
        weights, biases = [], []
        for layer in range(self._num_layers):
            layer_input = num_input if layer == 0 else len(self._directions) * h
            for direction in self._directions:
                for group, width in (('i2h', layer_input), ('h2h', h)):
                    for gate in self._gate_names:
                        name = '%s%s%d_%s%s' % (self._prefix, direction, layer, group, gate)
                        weights.append((name + '_weight', (h, width)))
                        biases.append((name + '_bias', (h,)))
        return weights + biases

    def _num_input(self, packed_size):
        """The input width C solving ``packed_size`` = the size of the packed vector."""
        b, m, h = len(self._directions), len(self._gate_names), self._num_hidden
        return packed_size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2

    def unpack_weights(self, args):
        args = args.copy()
        packed = args.pop(self._parameter.name)
        offset = 0
        for name, shape in self._packed_layout(self._num_input(packed.size)):
            size = shape[0] * (shape[1] if len(shape) == 2 else 1)
            args[name] = packed[offset:offset + size].reshape(shape).copy()
            offset += size
        assert offset == packed.size, 'Invalid parameters size for FusedRNNCell'
        return args

    def pack_weights(self, args):
        args = args.copy()
        num_input = args['%sl0_i2h%s_weight' % (self._prefix, self._gate_names[0])].shape[1]
        pieces = [args.pop(name).reshape((-1,)) for name, _ in self._packed_layout(num_input)]
        args[self._parameter.name] = ndarray.concatenate(pieces)
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError('FusedRNNCell cannot be stepped. Please use unroll')

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        assert axis in (0, 1), 'Unsupported layout %s' % layout
        if axis == 1:
            warnings.warn('NTC layout detected. Consider using TNC for FusedRNNCell for faster speed')
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        states = self.begin_state() if begin_state is None else begin_state
        state_inputs = dict(zip(('state', 'state_cell'), states))
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + 'rnn', **state_inputs)
        if self._get_next_state:
            outputs, states = rnn[0], [rnn[k] for k in range(1, len(self.state_info) + 1)]
            for state in states:
                state._set_attr(__layout__='LNC')
        else:
            outputs, states = rnn, []
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The equivalent stack of step-wise cells, named as the unpacked weights.

        Returns
        -------
        SequentialRNNCell
        """
        def make_cell(cell_prefix):
            if self._mode.startswith('rnn_'):
                return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=cell_prefix)
            cell_class = LSTMCell if self._mode == 'lstm' else GRUCell
            return cell_class(self._num_hidden, prefix=cell_prefix)

        stack = SequentialRNNCell()
        for layer in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make_cell('%sl%d_' % (self._prefix, layer)),
                                            make_cell('%sr%d_' % (self._prefix, layer)),
                                            output_prefix='%sbi_l%d_' % (self._prefix, layer)))
            else:
                stack.add(make_cell('%sl%d_' % (self._prefix, layer)))
            if self._dropout > 0 and layer != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix='%s_dropout%d_' % (self._prefix, layer)))
        return stack


class _CellGroup(BaseRNNCell):
    """What sequential and bidirectional cells share: child cells, their parameters merged
    into this cell's container, and states concatenated in child order."""

    def __init__(self, params):
        super().__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def _adopt(self, cell):
        if self._override_cell_params:
            assert cell._own_params, ('Either specify params for %s or child cells, not both.'
                                      % type(self).__name__)
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)
        self._cells.append(cell)

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        assert not self._modified, _MODIFIED_MESSAGE
        return [state for cell in self._cells for state in cell.begin_state(**kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def _split_states(self, states):
        """``states`` cut into one list a child cell."""
        per_cell, start = [], 0
        for cell in self._cells:
            count = len(cell.state_info)
            per_cell.append(states[start:start + count])
            start += count
        return per_cell


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each takes the previous cell's output as input.

    Parameters
    ----------
    params : RNNParams, optional
        Shared by all children (which then must not have been given their own).

    Shape
    -----
    As the last cell's.

    Example
    -------
    >>> stack = mx.rnn.SequentialRNNCell()
    >>> stack.add(mx.rnn.LSTMCell(4, prefix='l0_'))
    >>> stack.add(mx.rnn.GRUCell(3, prefix='l1_'))
    >>> outputs, states = stack.unroll(2, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(2, 2, 5))[1], len(states)     # LSTM's h, c, then GRU's h
    ([(2, 2, 3)], 3)
    """

    def __init__(self, params=None):
        super().__init__(params)

    def add(self, cell):
        """Append ``cell`` on top of the stack."""
        self._adopt(cell)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, cell_states in zip(self._cells, self._split_states(states)):
            assert not isinstance(cell, BidirectionalCell)
            inputs, cell_states = cell(inputs, cell_states)
            next_states.extend(cell_states)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        states = self.begin_state() if begin_state is None else begin_state
        last = len(self._cells) - 1
        next_states = []
        for i, (cell, cell_states) in enumerate(zip(self._cells, self._split_states(states))):
            # Inner cells hand over whatever they make; only the top one honours merge_outputs.
            inputs, cell_states = cell.unroll(length, inputs=inputs, begin_state=cell_states,
                                              layout=layout,
                                              merge_outputs=merge_outputs if i == last else None)
            next_states.extend(cell_states)
        return inputs, next_states


class BidirectionalCell(_CellGroup):
    """One cell over the sequence forwards, one backwards, outputs concatenated (N, 2H).

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
        The forward and the backward cell.
    params : RNNParams, optional
    output_prefix : str, default 'bi_'
        Prefix of the ``Concat`` nodes (``bi_t0`` per step, ``bi_out`` merged).

    Shape
    -----
    (N, T, C) in, (N, T, 2 * num_hidden) out with ``layout='NTC'``.

    Example
    -------
    >>> cell = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(3, prefix='l_'), mx.rnn.GRUCell(3, prefix='r_'))
    >>> outputs, states = cell.unroll(4, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(2, 4, 5))[1], len(states)
    ([(2, 4, 6)], 2)
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super().__init__(params)
        self._output_prefix = output_prefix
        self._adopt(l_cell)
        self._adopt(r_cell)

    def __call__(self, inputs, states):
        raise NotImplementedError('Bidirectional cannot be stepped. Please use unroll')

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """As :meth:`BaseRNNCell.unroll`; the states come back as ``[l_states, r_states]``."""
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        (l_cell, r_cell), (l_begin, r_begin) = self._cells, self._split_states(states)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=l_begin,
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=r_begin, layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, symbol.Symbol) and \
                isinstance(r_outputs, symbol.Symbol)
            if not merge_outputs:
                l_outputs, r_outputs = [_split_steps(out, axis, length)
                                        for out in (l_outputs, r_outputs)]
        if merge_outputs:
            outputs = symbol.Concat(l_outputs, symbol.reverse(r_outputs, axis=axis), dim=2,
                                    name='%sout' % self._output_prefix)
        else:
            outputs = [symbol.Concat(l_out, r_out, dim=1, name='%st%d' % (self._output_prefix, i))
                       for i, (l_out, r_out) in enumerate(zip(l_outputs, reversed(r_outputs)))]
        return outputs, [l_states, r_states]


def _split_steps(outputs, axis, length):
    """A merged output cut into one symbol a step; a list is returned as it is."""
    if isinstance(outputs, symbol.Symbol):
        return list(symbol.SliceChannel(outputs, axis=axis, num_outputs=length, squeeze_axis=1))
    return outputs


class DropoutCell(BaseRNNCell):
    """Dropout on the input of each step; no states.

    Parameters
    ----------
    dropout : float
        Probability of dropping an element.
    prefix : str, default 'dropout_'
    params : RNNParams, optional

    Shape
    -----
    Output as the input.

    Example
    -------
    >>> cell = mx.rnn.DropoutCell(0.5, prefix='drop_')
    >>> outputs, states = cell.unroll(2, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(3, 2, 4))[1], states
    ([(3, 2, 4)], [])
    >>> outputs.eval(data=mx.nd.ones((3, 2, 4)))[0].shape     # no dropout outside training
    (3, 2, 4)
    """

    def __init__(self, dropout, prefix='dropout_', params=None):
        super().__init__(prefix, params)
        assert isinstance(dropout, numeric_types), 'dropout probability must be a number'
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            # A merged sequence needs one Dropout node, not one a step.
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base of the cells that wrap another (``base_cell``) and change what it computes.

    Once wrapped, ``base_cell`` refuses ``begin_state``; use the modifier.

    Parameters
    ----------
    base_cell : BaseRNNCell

    Example
    -------
    A modifier that doubles its base cell's output:

    >>> class Double(mx.rnn.ModifierCell):
    ...     def __call__(self, inputs, states):
    ...         output, states = self.base_cell(inputs, states)
    ...         return output * 2, states
    >>> cell = Double(mx.rnn.RNNCell(3, prefix='rnn_'))
    >>> outputs, _ = cell.unroll(2, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(4, 2, 5))[1], cell.params is cell.base_cell.params
    ([(4, 2, 3)], True)
    """

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):  # pylint: disable=arguments-differ
        assert not self._modified, _MODIFIED_MESSAGE
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError()


class ZoneoutCell(ModifierCell):
    """Zoneout: in training, each output/state element keeps its previous value with
    probability ``zoneout_outputs``/``zoneout_states`` (Krueger et al., 2016).

    Parameters
    ----------
    base_cell : BaseRNNCell
        A cell that can be stepped (not fused, not bidirectional).
    zoneout_outputs : float, default 0.
    zoneout_states : float, default 0.

    Shape
    -----
    As ``base_cell``'s.

    Example
    -------
    >>> cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(3, prefix='rnn_'), zoneout_outputs=0.5, zoneout_states=0.5)
    >>> outputs, states = cell.unroll(2, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(4, 2, 5))[1]
    [(4, 2, 3)]
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        assert not isinstance(base_cell, FusedRNNCell), \
            "FusedRNNCell doesn't support zoneout. Please unfuse first."
        assert not _is_bidirectional(base_cell), \
            "Bidirectional cells don't support zoneout since they can't be stepped. " \
            "Please add ZoneoutCell to the cells underneath instead."
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)
        # The previous output before the first step: zeros, broadcast by ``where``'s shape rule.
        prev_output = symbol.zeros((0, 0)) if self.prev_output is None else self.prev_output
        output = _zoneout(self.zoneout_outputs, next_output, prev_output)
        if self.zoneout_states != 0.:
            next_states = [_zoneout(self.zoneout_states, new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


def _is_bidirectional(cell):
    return isinstance(cell, BidirectionalCell) or (
        isinstance(cell, SequentialRNNCell) and any(map(_is_bidirectional, cell._cells)))


def _zoneout(probability, new, old):
    """``new`` where a dropout mask of ones keeps it, else ``old``; ``new`` when p is 0."""
    if probability == 0.:
        return new
    mask = symbol.Dropout(symbol.ones_like(new), p=probability)
    return symbol.where(mask, new, old)


class ResidualCell(ModifierCell):
    """Adds the input to the output of ``base_cell`` (Wu et al., 2016); the nodes are named
    ``<output name>_plus_residual``.

    Parameters
    ----------
    base_cell : BaseRNNCell
        Its output width must equal the input width.

    Shape
    -----
    As ``base_cell``'s, whose output width must equal the input's.

    Example
    -------
    >>> cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(5, prefix='gru_'))
    >>> outputs, states = cell.unroll(2, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    >>> outputs.infer_shape(data=(4, 2, 5))[1]
    [(4, 2, 5)]
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return _add_residual(output, inputs), states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                    layout=layout, merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            return _add_residual(outputs, inputs), states
        return [_add_residual(out, inp) for out, inp in zip(outputs, inputs)], states


def _add_residual(output, inputs):
    return symbol.elemwise_add(output, inputs, name='%s_plus_residual' % output.name)


class BaseConvRNNCell(BaseRNNCell):
    """What the convolutional cells share: i2h and h2h are convolutions (Shi et al., 2015),
    ``num_gates * num_hidden`` filters each; the state has the i2h convolution's output shape.

    Parameters
    ----------
    input_shape : tuple of int
        The shape of one step's input, e.g. (N, C, H, W); the state shape follows from it.
    num_hidden : int
        Channels of the output and state.
    h2h_kernel : tuple of int
        Odd sizes (the h2h convolution keeps the state's spatial shape).
    h2h_dilate, i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer
        Initializers of the four parameters (``<prefix>i2h_weight``...).
    activation : str or callable
        An ``act_type`` of ``Activation`` or a symbol function.
    prefix : str
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'

    Example
    -------
    The convolutional cells (here a :class:`ConvLSTMCell`) share this interface:

    >>> cell = mx.rnn.ConvLSTMCell(input_shape=(1, 3, 8, 8), num_hidden=4, prefix='conv_')
    >>> isinstance(cell, mx.rnn.BaseConvRNNCell), len(cell.state_info)
    (True, 2)
    >>> cell.state_info[0]              # h (and c) have the i2h convolution's output shape
    {'shape': (0, 4, 8, 8), '__layout__': 'NCHW'}
    """
    _num_states = 2     # MXNet's base state_info: [h, c]; the RNN and GRU cells have one

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
                 i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, activation, prefix='', params=None, conv_layout='NCHW'):
        super().__init__(prefix=prefix, params=params)
        assert h2h_kernel[0] % 2 == 1 and h2h_kernel[1] % 2 == 1, \
            'Only support odd number, get h2h_kernel= %s' % str(h2h_kernel)
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2, h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel, self._i2h_stride = i2h_kernel, i2h_stride
        self._i2h_pad, self._i2h_dilate = i2h_pad, i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable('data'), num_filter=num_hidden, kernel=i2h_kernel,
                                   stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate, layout=conv_layout)
        self._state_shape = (0,) + tuple(probe.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._num_states)]

    def _step_name(self):
        self._counter += 1
        return '%st%d_' % (self._prefix, self._counter)

    def _conv_forward(self, inputs, states, name):
        """The i2h and h2h convolutions of one step, named ``<name>i2h`` and ``<name>h2h``."""
        width = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs, num_filter=width, kernel=self._i2h_kernel,
                                 stride=self._i2h_stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0], num_filter=width, kernel=self._h2h_kernel,
                                 dilate=self._h2h_dilate, pad=self._h2h_pad, stride=(1, 1),
                                 weight=self._hW, bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError('BaseConvRNNCell is abstract class for convolutional RNN')


_LEAKY = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional Elman cell: ``h' = activation(conv_i(x) + conv_h(h))``.

    Parameters are those of :class:`BaseConvRNNCell`, with MXNet's defaults: 3x3 kernels,
    i2h stride 1 and pad 1, zero biases, leaky ReLU (slope 0.2) activation, prefix 'ConvRNN_'.

    Shape
    -----
    Input (N, C, H, W) per step; output and state (N, num_hidden, H', W') (the i2h
    convolution's output shape).

    Example
    -------
    >>> cell = mx.rnn.ConvRNNCell(input_shape=(1, 3, 8, 8), num_hidden=4, prefix='c_')
    >>> outputs, _ = cell.unroll(2, [mx.sym.var('x0'), mx.sym.var('x1')])
    >>> mx.sym.Group(outputs).infer_shape(x0=(1, 3, 8, 8), x1=(1, 3, 8, 8))[1]
    [(1, 4, 8, 8), (1, 4, 8, 8)]
    """
    _num_states = 1

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3),
                 i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvRNN_', params=None, conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
                         i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (Shi et al., 2015); states ``[h, c]``, gates ``i, f, c, o``.

    Parameters are those of :class:`ConvRNNCell` (prefix 'ConvLSTM_'); ``activation`` is used
    for the candidate and for the cell state's output.

    Shape
    -----
    Input (N, C, H, W) per step; output and both states (N, num_hidden, H', W').

    Example
    -------
    >>> cell = mx.rnn.ConvLSTMCell(input_shape=(1, 3, 8, 8), num_hidden=4, prefix='l_')
    >>> outputs, states = cell.unroll(2, [mx.sym.var('x0'), mx.sym.var('x1')])
    >>> len(states), mx.sym.Group(outputs).infer_shape(x0=(1, 3, 8, 8), x1=(1, 3, 8, 8))[1]
    (2, [(1, 4, 8, 8), (1, 4, 8, 8)])
    """

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3),
                 i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvLSTM_', params=None, conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
                         i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, axis=self._conv_layout.find('C'),
                                    name='%sslice' % name)
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        in_transform = self._get_activation(gates[2], self._activation, name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform, name='%sstate' % name)
        next_h = symbol.elemwise_mul(out_gate, self._get_activation(next_c, self._activation),
                                     name='%sout' % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell; gates ``r, z, o``.

    Parameters are those of :class:`ConvRNNCell` (prefix 'ConvGRU_').

    Shape
    -----
    Input (N, C, H, W) per step; output and state (N, num_hidden, H', W').

    Example
    -------
    >>> cell = mx.rnn.ConvGRUCell(input_shape=(1, 3, 8, 8), num_hidden=4, prefix='g_')
    >>> outputs, _ = cell.unroll(2, [mx.sym.var('x0'), mx.sym.var('x1')])
    >>> mx.sym.Group(outputs).infer_shape(x0=(1, 3, 8, 8), x1=(1, 3, 8, 8))[1]
    [(1, 4, 8, 8), (1, 4, 8, 8)]
    """
    _num_states = 1

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3),
                 i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvGRU_', params=None, conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad,
                         i2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, activation, prefix=prefix, params=params, conv_layout=conv_layout)

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid', name='%s_r_act' % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid', name='%s_z_act' % name)
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation, name='%s_h_act' % name)
        next_h = symbol.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                     name='%sout' % name)
        return next_h, [next_h]


@initializer.register
class FusedRNN(initializer.Initializer):
    """Initializes the packed vector of a :class:`FusedRNNCell` piece by piece, as the
    unfused cells' weights would be.

    Parameters
    ----------
    init : Initializer or str or None
        For every piece; the model's global initializer when None.
    num_hidden, num_layers, mode, bidirectional, forget_bias
        As given to the :class:`FusedRNNCell`; LSTM forget-gate biases get ``forget_bias``.
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False, forget_bias=1.0):
        if init is not None:
            init = initializer.create(init)
        super().__init__(init=None if init is None else init.dumps(), num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional,
                         forget_bias=forget_bias)
        self._init = init
        self._cell_args = (num_hidden, num_layers, mode, bidirectional)
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        cell = FusedRNNCell(*self._cell_args, forget_bias=self._forget_bias, prefix='')
        # each piece of the packed vector initialized in place, through a view, in the
        # order (and so with the random draws) of unpack_weights' pieces: no copies out
        # and back of a vector that holds every weight
        offset = 0
        for name, shape in cell._packed_layout(cell._num_input(arr.size)):
            size = shape[0] * (shape[1] if len(shape) == 2 else 1)
            piece = arr[offset:offset + size].reshape(shape)
            offset += size
            if cell._mode == 'lstm' and name.endswith('_f_bias'):
                piece[:] = self._forget_bias
            else:
                (self._init or desc.global_init)(
                    initializer.InitDesc(name, global_init=desc.global_init), piece)
        assert offset == arr.size, 'Invalid parameters size for FusedRNNCell'


# mx.init.FusedRNN: it initializes FusedRNNCell's packed weights, so it lives beside the cell
# and is offered to the initializer module (a lower layer, which never imports this one)
initializer.FusedRNN = FusedRNN
