"""Fused recurrent layers ``RNN``, ``LSTM`` and ``GRU`` on the ``RNN`` operator.

Each layer keeps one parameter per layer, direction and projection, named as MXNet 1.9.1
names them (``lstm0_l0_i2h_weight``, ``lstm0_r1_h2h_bias``: ``l`` forward, ``r`` backward)
with MXNet's shapes, so MXNet-trained weights load. Every call concatenates them into the
operator's flat vector: all weights (per layer, per direction: i2h, h2h[, h2r]), then all
biases in the same order.
"""
from ... import ndarray
from ...base import MXNetError
from ...ndarray import NDArray
from ..block import HybridBlock
from ..parameter import shape_is_known
from .rnn_cell import numpy_interface

__all__ = ['RNN', 'LSTM', 'GRU']

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


class _RNNLayer(HybridBlock):
    """What the three layers share: parameters, states, layouts, the call of ``F.RNN``.

    Parameters
    ----------
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    hidden_size, num_layers : int
    layout : {'TNC', 'NTC'}
    dropout : float
        Dropout between stacked layers, in training mode.
    bidirectional : bool
    input_size : int
        0 to infer it from the first input.
    initializers : dict
        ``i2h_weight``, ``h2h_weight``, ``i2h_bias``, ``h2h_bias``, ``h2r_weight`` ->
        Initializer, str or None.
    dtype : str
    projection_size : int, optional
        LSTM only: project the hidden state to this size.
    state_clip : (min, max, nan)
        LSTM only: clamp the cell state (``lstm_state_clip_*`` of the operator).
    use_sequence_length : bool
        Take a ``sequence_length`` (N,) input: outputs past a sequence's end are zeros.
    """

    def __init__(self, mode, hidden_size, num_layers, layout, dropout, bidirectional,
                 input_size, initializers, dtype, projection_size=None,
                 state_clip=(None, None, False), use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        assert layout in ('TNC', 'NTC'), \
            "Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout
        self._mode = mode
        self._hidden_size = hidden_size
        self._num_layers = num_layers
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._dtype = dtype
        self._projection_size = projection_size
        self._state_clip = state_clip
        self._use_sequence_length = use_sequence_length
        self._gates = _GATES[mode]
        self._structural_names = {}     # parameter attribute -> key in save_parameters files
        self._initializers = initializers
        self._register_params(initializers)
        self._flat_order = ([key for key in self._reg_params if key.endswith('weight')] +
                            [key for key in self._reg_params if key.endswith('bias')])

    def _register_params(self, init):
        """Create the parameters in MXNet's order (per layer, per direction)."""
        rows = self._gates * self._hidden_size
        output_size = self._projection_size or self._hidden_size
        layer_input = self._input_size
        for layer in range(self._num_layers):
            for direction in 'lr'[:self._dir]:
                shapes = [('i2h_weight', (rows, layer_input)), ('h2h_weight', (rows, output_size)),
                          ('i2h_bias', (rows,)), ('h2h_bias', (rows,))]
                if self._projection_size:
                    shapes.append(('h2r_weight', (self._projection_size, self._hidden_size)))
                for kind, shape in shapes:
                    self._register_param(layer, direction, kind, shape, init[kind])
            layer_input = output_size * self._dir

    def _register_param(self, layer, direction, kind, shape, init):
        key = '%s%d_%s' % (direction, layer, kind)
        setattr(self, key, self.params.get(key, shape=shape, init=init, allow_deferred_init=True,
                                           dtype=self._dtype))
        # MXNet saves fused layers under the names of the equivalent stack of cells.
        cell = '%s_cell.' % direction if self._dir == 2 else ''
        self._structural_names[key] = '_unfused.%d.%s%s' % (layer, cell, kind)

    def _unfuse(self):
        """The equivalent stack of recurrent cells (per layer an ``l<i>_`` cell, or a
        BidirectionalCell of ``l<i>_`` and ``r<i>_`` cells, with DropoutCells between
        layers), sharing this layer's parameters: what MXNet runs the layer as on CPUs
        and the names ``save_parameters`` writes."""
        assert not self._projection_size, "_unfuse does not support projection layer yet!"
        assert self._state_clip[0] is None and self._state_clip[1] is None, \
            "_unfuse does not support state clipping yet!"
        from . import rnn_cell
        init = self._initializers
        options = {'i2h_weight_initializer': init['i2h_weight'],
                   'h2h_weight_initializer': init['h2h_weight'],
                   'i2h_bias_initializer': init['i2h_bias'],
                   'h2h_bias_initializer': init['h2h_bias']}
        if self._mode.startswith('rnn_'):
            options['activation'] = self._mode[len('rnn_'):]
        make_cell = {'rnn_relu': rnn_cell.RNNCell, 'rnn_tanh': rnn_cell.RNNCell,
                     'lstm': rnn_cell.LSTMCell, 'gru': rnn_cell.GRUCell}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            input_size = self._input_size
            for layer in range(self._num_layers):
                cells = [make_cell(self._hidden_size, input_size=input_size,
                                   prefix='%s%d_' % (direction, layer), **options)
                         for direction in 'lr'[:self._dir]]
                stack.add(cells[0] if self._dir == 1 else rnn_cell.BidirectionalCell(*cells))
                if self._dropout > 0 and layer != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                input_size = self._hidden_size * self._dir
        return stack

    def _collect_params_with_prefix(self, prefix=''):
        prefix = prefix + '.' if prefix else ''
        return {prefix + self._structural_names[key]: param
                for key, param in self._reg_params.items()}

    def __repr__(self):
        rows, inputs = self.l0_i2h_weight.shape
        options = [self._layout]
        if self._num_layers != 1:
            options.append('num_layers=%s' % self._num_layers)
        if self._dropout != 0:
            options.append('dropout=%s' % self._dropout)
        if self._dir == 2:
            options.append('bidirectional')
        return '%s(%s -> %d, %s)' % (type(self).__name__, inputs or None, rows // self._gates,
                                     ', '.join(options))

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    # ------------------------------------------------------------------ states
    def state_info(self, batch_size=0):
        """One dict per state (``shape`` (num_layers * directions, N, size), ``__layout__``
        'LNC', ``dtype``): the hidden state, and for an LSTM the cell state."""
        stacked = self._num_layers * self._dir
        sizes = [self._projection_size or self._hidden_size]
        if self._mode == 'lstm':
            sizes.append(self._hidden_size)
        return [{'shape': (stacked, batch_size, size), '__layout__': 'LNC', 'dtype': self._dtype}
                for size in sizes]

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states, made by ``func(name=..., shape=..., dtype=..., **kwargs)``.

        Parameters
        ----------
        batch_size : int
        func : callable
            ``mx.nd.zeros`` by default.
        **kwargs
            Passed on to ``func`` (``ctx``, ``dtype``).

        Returns
        -------
        list of NDArray, shaped as :meth:`state_info` says
        """
        return numpy_interface([func(name='%sh0_%d' % (self._prefix, i), **dict(info, **kwargs))
                                for i, info in enumerate(self.state_info(batch_size))])

    # ----------------------------------------------------------------- calling
    def __call__(self, inputs, states=None, sequence_length=None):
        """Run the layer.

        Parameters
        ----------
        inputs : NDArray, shape (T, N, C) for 'TNC', (N, T, C) for 'NTC'
        states : NDArray or list of NDArray, optional
            Shaped as :meth:`state_info` says; zeros when absent.
        sequence_length : NDArray, shape (N,), optional
            With ``use_sequence_length`` only.

        Returns
        -------
        outputs : NDArray, shape (T, N, directions * hidden) in the input's layout
        states : list of NDArray
            The final states, returned only when ``states`` were given.
        """
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length)
        return super().__call__(inputs, states)

    def forward(self, inputs, states=None, sequence_length=None):
        """Fill in absent states, run ``hybrid_forward``, drop the states if not asked for
        (so forward hooks see what the caller gets)."""
        skip_states = states is None
        if skip_states:
            if isinstance(inputs, NDArray):
                batch_size = inputs.shape[self._layout.find('N')]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                from ... import symbol
                states = self.begin_state(0, func=symbol.zeros)
        if not isinstance(states, (list, tuple)):
            states = [states]
        if isinstance(inputs, NDArray):
            self._complete_input_size(inputs)
        args = (states, sequence_length) if self._use_sequence_length else (states,)
        outputs = super().forward(inputs, *args)
        return outputs[0] if skip_states else outputs

    def infer_shape(self, inputs, *args):
        """Complete the first layer's input size from ``inputs``, then infer the rest."""
        if isinstance(inputs, NDArray):
            self._complete_input_size(inputs)
        super().infer_shape(inputs, *args)

    def _complete_input_size(self, inputs):
        """Deferred initialization: the first layer's i2h weights take the input's features."""
        for direction in 'lr'[:self._dir]:
            param = self._reg_params['%s0_i2h_weight' % direction]
            if not shape_is_known(param.shape) and inputs.ndim == 3:
                param.shape = (param.shape[0], inputs.shape[2])

    def _check_shapes(self, inputs, states):
        """MXNet's errors for states that do not fit the input; clear ones for the input
        (HybridBlock adds the layer's name and input shapes to an MXNetError)."""
        if inputs.ndim != 3:
            raise MXNetError('expected a 3-D input (layout %s), got shape %s'
                             % (self._layout, inputs.shape))
        features = self.l0_i2h_weight.shape[1]
        if inputs.shape[2] != features:
            raise MXNetError('expected inputs with %d features (input_size), got shape %s'
                             % (features, inputs.shape))
        infos = self.state_info(inputs.shape[self._layout.find('N')])
        if len(states) != len(infos):
            raise MXNetError('expected %d recurrent states, got %d' % (len(infos), len(states)))
        for state, info in zip(states, infos):
            if state.shape != info['shape']:
                raise ValueError('Invalid recurrent state shape. Expecting %s, got %s.'
                                 % (str(info['shape']), str(state.shape)))

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **params):
        """``(outputs, states)``; the states are dropped by ``__call__`` when not asked for."""
        if isinstance(inputs, NDArray):
            self._check_shapes(inputs, states)
        if self._layout == 'NTC':
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        flat = F._internal._rnn_param_concat(*[F.reshape(params[key], shape=-1) for key in self._flat_order],
                                             dim=0)
        extra = [sequence_length] if self._use_sequence_length else []
        clip_min, clip_max, clip_nan = self._state_clip
        results = F.RNN(inputs, flat, *states, *extra, state_size=self._hidden_size,
                        num_layers=self._num_layers, bidirectional=self._dir == 2,
                        mode=self._mode, p=self._dropout, state_outputs=True,
                        projection_size=self._projection_size, lstm_state_clip_min=clip_min,
                        lstm_state_clip_max=clip_max, lstm_state_clip_nan=clip_nan,
                        use_sequence_length=self._use_sequence_length)
        outputs, states = results[0], list(results[1:])
        if self._layout == 'NTC':
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states


def _initializers(i2h_weight, h2h_weight, i2h_bias, h2h_bias, h2r_weight=None):
    return {'i2h_weight': i2h_weight, 'h2h_weight': h2h_weight, 'i2h_bias': i2h_bias,
            'h2h_bias': h2h_bias, 'h2r_weight': h2r_weight}


class RNN(_RNNLayer):
    r"""Multi-layer Elman RNN: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
    num_layers : int
    activation : {'relu', 'tanh'}
    layout : {'TNC', 'NTC'}
    dropout : float
        Dropout on the outputs of every layer but the last, in training mode.
    bidirectional : bool
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    input_size : int
        0 to infer it from the first input.
    dtype : str
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    inputs : ``(T, N, C)`` for 'TNC', ``(N, T, C)`` for 'NTC'.
    states : optional ``[(num_layers * directions, N, hidden_size)]``.
    out : ``(T, N, directions * hidden_size)`` in the input's layout, and the final states
        when states were given.

    Example
    -------
    >>> layer = mx.gluon.rnn.RNN(hidden_size=5, num_layers=2, layout='NTC')
    >>> layer.initialize()
    >>> x = mx.nd.ones((4, 3, 6))                    # (N, T, C)
    >>> out, states = layer(x, layer.begin_state(batch_size=4))
    >>> out.shape, states[0].shape
    ((4, 3, 5), (2, 4, 5))
    """

    def __init__(self, hidden_size, num_layers=1, activation='relu', layout='TNC', dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 dtype='float32', **kwargs):
        super().__init__('rnn_' + activation, hidden_size, num_layers, layout, dropout,
                         bidirectional, input_size,
                         _initializers(i2h_weight_initializer, h2h_weight_initializer,
                                       i2h_bias_initializer, h2h_bias_initializer),
                         dtype, **kwargs)


class LSTM(_RNNLayer):
    r"""Multi-layer LSTM (gates input, forget, cell, output as in :class:`LSTMCell`).

    Parameters
    ----------
    hidden_size : int
    num_layers : int
    layout : {'TNC', 'NTC'}
    dropout : float
        Dropout on the outputs of every layer but the last, in training mode.
    bidirectional : bool
    input_size : int
        0 to infer it from the first input.
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    projection_size : int, optional
        Project each hidden state to this size (``h2r_weight``, LSTMP).
    h2r_weight_initializer : Initializer, optional
    state_clip_min, state_clip_max : float, optional
        Clamp the cell state at every step.
    state_clip_nan : bool
        Whether clipping also turns NaN cell states into the bound.
    dtype : str
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    inputs : ``(T, N, C)`` for 'TNC', ``(N, T, C)`` for 'NTC'.
    states : optional ``[h, c]``: h ``(num_layers * directions, N, projection_size or
        hidden_size)``, c ``(num_layers * directions, N, hidden_size)``.
    out : ``(T, N, directions * (projection_size or hidden_size))`` in the input's layout,
        and the final ``[h, c]`` when states were given.

    Example
    -------
    >>> layer = mx.gluon.rnn.LSTM(hidden_size=5, num_layers=2)
    >>> layer.initialize()
    >>> x = mx.nd.ones((3, 4, 6))                    # (T, N, C)
    >>> layer(x).shape
    (3, 4, 5)
    >>> begin = layer.begin_state(batch_size=4)
    >>> out, (h, c) = layer(x, begin)
    >>> out.shape, h.shape, c.shape
    ((3, 4, 5), (2, 4, 5), (2, 4, 5))
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype='float32', **kwargs):
        super().__init__('lstm', hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size,
                         _initializers(i2h_weight_initializer, h2h_weight_initializer,
                                       i2h_bias_initializer, h2h_bias_initializer,
                                       h2r_weight_initializer),
                         dtype, projection_size=projection_size,
                         state_clip=(state_clip_min, state_clip_max, state_clip_nan), **kwargs)


class GRU(_RNNLayer):
    r"""Multi-layer GRU (gates reset, update, new as in :class:`GRUCell`).

    Parameters
    ----------
    hidden_size : int
    num_layers : int
    layout : {'TNC', 'NTC'}
    dropout : float
        Dropout on the outputs of every layer but the last, in training mode.
    bidirectional : bool
    input_size : int
        0 to infer it from the first input.
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    dtype : str
    prefix : str, optional
    params : ParameterDict, optional

    Shape
    -----
    inputs : ``(T, N, C)`` for 'TNC', ``(N, T, C)`` for 'NTC'.
    states : optional ``[(num_layers * directions, N, hidden_size)]``.
    out : ``(T, N, directions * hidden_size)`` in the input's layout, and the final states
        when states were given.

    Example
    -------
    >>> layer = mx.gluon.rnn.GRU(hidden_size=5, num_layers=2, layout='NTC', bidirectional=True)
    >>> layer.initialize()
    >>> x = mx.nd.ones((4, 3, 6))                    # (N, T, C)
    >>> out, states = layer(x, layer.begin_state(batch_size=4))
    >>> out.shape, states[0].shape
    ((4, 3, 10), (4, 4, 5))
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', dtype='float32',
                 **kwargs):
        super().__init__('gru', hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size,
                         _initializers(i2h_weight_initializer, h2h_weight_initializer,
                                       i2h_bias_initializer, h2h_bias_initializer),
                         dtype, **kwargs)
