"""Convolutional recurrent cells: RNN, LSTM and GRU cells whose projections are convolutions.

Each step maps ``inputs`` shaped ``(N,) + input_shape`` and states shaped
``(N,) + state_shape`` (layout ``conv_layout``) to the next states. The input-to-hidden
convolution (``i2h``: kernel, padding and dilation given, stride 1) sets the spatial size
of the states; the hidden-to-hidden one (``h2h``, odd kernel) is padded to keep it.
Parameters, shapes and gate orders follow MXNet's ``gluon.contrib.rnn``: weights
``(gates * hidden_channels, channels, *kernel)``, channel-last for channel-last layouts.
"""
from ...rnn.rnn_cell import HybridRecurrentCell
from .rnn_cell import _lstm_update

__all__ = ['Conv1DRNNCell', 'Conv2DRNNCell', 'Conv3DRNNCell',
           'Conv1DLSTMCell', 'Conv2DLSTMCell', 'Conv3DLSTMCell',
           'Conv1DGRUCell', 'Conv2DGRUCell', 'Conv3DGRUCell']

# per number of spatial dimensions: (channel-first layout, the default; channel-last layout)
_LAYOUTS = {1: ('NCW', 'NWC'), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}


def _per_dimension(spec, dims):
    """A convolution setting as a tuple of ``dims`` values; an int applies to every one."""
    return (spec,) * dims if isinstance(spec, int) else tuple(spec)


def _conv_output_size(sizes, kernel, pad, dilate):
    """Spatial size after a stride-1 convolution; an unknown size (0) stays unknown."""
    return tuple(size + 2 * p - d * (k - 1) if size else 0
                 for size, k, p, d in zip(sizes, kernel, pad, dilate))


class _ConvRecurrentCell(HybridRecurrentCell):
    """What the convolutional cells share: settings, parameters, states and the two
    convolutions of a step. Subclasses set ``_num_gates``, ``_num_states`` and ``_family``
    (``'RNN'``...) and compute the next states from the convolutions in ``_step``; the
    public classes set ``_dims``."""
    _num_gates = 1
    _num_states = 1
    _dims = None

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate,
                 h2h_dilate, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, conv_layout, activation, prefix, params):
        super().__init__(prefix=prefix, params=params)
        dims = self._dims
        assert all(isinstance(spec, int) or len(spec) == dims
                   for spec in (i2h_kernel, i2h_pad, i2h_dilate, h2h_kernel, h2h_dilate)), (
            'For {dims}D convolution, the convolution settings can only be either int or '
            'list/tuple of length {dims}'.format(dims=dims))
        self._h2h_kernel = _per_dimension(h2h_kernel, dims)
        assert all(k % 2 == 1 for k in self._h2h_kernel), \
            'Only support odd number, get h2h_kernel= %s' % str(h2h_kernel)
        self._i2h_kernel = _per_dimension(i2h_kernel, dims)
        self._i2h_pad = _per_dimension(i2h_pad, dims)
        self._i2h_dilate = _per_dimension(i2h_dilate, dims)
        self._h2h_dilate = _per_dimension(h2h_dilate, dims)
        self._stride = (1,) * dims
        # 'same' padding: the recurrent convolution keeps the state's spatial size
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        self._input_shape = input_shape
        self._hidden_channels = hidden_channels
        self._conv_layout = conv_layout
        self._activation = activation
        self._channel_axis = conv_layout.find('C')
        self._make_parameters(i2h_weight_initializer, h2h_weight_initializer,
                              i2h_bias_initializer, h2h_bias_initializer)

    def _make_parameters(self, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer):
        """Create the parameters and the state shape from ``input_shape`` and the settings."""
        channels_first = self._channel_axis == 1
        in_channels = self._input_shape[0 if channels_first else -1]
        spatial = self._input_shape[1:] if channels_first else self._input_shape[:-1]
        state_size = _conv_output_size(spatial, self._i2h_kernel, self._i2h_pad,
                                       self._i2h_dilate)

        def channels_and(size, channels):
            return (channels,) + size if channels_first else size + (channels,)

        rows = self._num_gates * self._hidden_channels
        self._state_shape = channels_and(state_size, self._hidden_channels)
        self.i2h_weight = self.params.get(
            'i2h_weight', shape=(rows,) + channels_and(self._i2h_kernel, in_channels),
            init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get(
            'h2h_weight', shape=(rows,) + channels_and(self._h2h_kernel, self._hidden_channels),
            init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _alias(self):
        return 'conv_' + self._family.lower()

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return '%s(%s -> %d, %s, %s)' % (type(self).__name__, in_channels or None, shape[0],
                                         self._activation, self._conv_layout)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size,) + self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._num_states)]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        step = 't%d_' % self._counter
        rows = self._num_gates * self._hidden_channels
        i2h = F.Convolution(inputs, i2h_weight, i2h_bias, kernel=self._i2h_kernel,
                            stride=self._stride, dilate=self._i2h_dilate, pad=self._i2h_pad,
                            num_filter=rows, layout=self._conv_layout, name=step + 'i2h')
        h2h = F.Convolution(states[0], h2h_weight, h2h_bias, kernel=self._h2h_kernel,
                            stride=self._stride, dilate=self._h2h_dilate, pad=self._h2h_pad,
                            num_filter=rows, layout=self._conv_layout, name=step + 'h2h')
        return self._step(F, i2h, h2h, states, step)

    def _step(self, F, i2h, h2h, states, step):
        """``(output, next_states)`` from the two convolutions of the step (names as
        MXNet's, after the step's prefix ``step``)."""
        raise NotImplementedError

    def _activate_as_configured(self, F):
        """The cell's activation as ``fn(x, name=None)``."""
        return lambda x, name=None: self._activate(F, x, self._activation, name=name)


class _ConvRNNCell(_ConvRecurrentCell):
    _family = 'RNN'

    def _step(self, F, i2h, h2h, states, step):
        output = self._activate(F, i2h + h2h, self._activation, name=step + 'out')
        return output, [output]


class _ConvLSTMCell(_ConvRecurrentCell):
    _family = 'LSTM'
    _num_gates = 4
    _num_states = 2

    def _step(self, F, i2h, h2h, states, step):
        next_h, next_c = _lstm_update(F, i2h + h2h, states[1], self._activate_as_configured(F), step,
                                      'out', axis=self._channel_axis)
        return next_h, [next_h, next_c]


class _ConvGRUCell(_ConvRecurrentCell):
    _family = 'GRU'
    _num_gates = 3

    def _step(self, F, i2h, h2h, states, step):
        axis = self._channel_axis
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, axis=axis, name=step + 'i2h_slice')
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, axis=axis, name=step + 'h2h_slice')
        reset_gate = F.Activation(i2h_r + h2h_r, act_type='sigmoid', name=step + 'r_act')
        update_gate = F.Activation(i2h_z + h2h_z, act_type='sigmoid', name=step + 'z_act')
        candidate = self._activate(F, i2h_n + reset_gate * h2h_n, self._activation, name=step + 'h_act')
        next_h = F.elemwise_add((1. - update_gate) * candidate, update_gate * states[0], name=step + 'out')
        return next_h, [next_h]


_EQUATIONS = {
    'RNN': r"""
    .. math::
        h_t = act(W \ast x_t + b_W + R \ast h_{t-1} + b_R)
""",
    'LSTM': r"""
    Convolutional LSTM of Shi et al., NIPS 2015 (arXiv:1506.04214), gates in MXNet's order
    input, forget, cell, output:

    .. math::
        i, f, g, o = \sigma(\cdot), \sigma(\cdot), act(\cdot), \sigma(\cdot)
            \text{ of the four slices of } W \ast x_t + b_W + R \ast h_{t-1} + b_R

        c_t = f \circ c_{t-1} + i \circ g, \quad h_t = o \circ act(c_t)
""",
    'GRU': r"""
    Gates in MXNet's order reset, update, new, with ``i2h = W * x_t + b_W`` and
    ``h2h = R * h_{t-1} + b_R``:

    .. math::
        r = \sigma(i2h_r + h2h_r), \quad z = \sigma(i2h_z + h2h_z), \quad
        n = act(i2h_n + r \circ h2h_n), \quad h_t = (1 - z) \circ n + z \circ h_{t-1}
""",
}

_DOC = """{dims}-D convolutional {family} cell (``*`` is convolution).
{equations}
    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step of one sample, in ``conv_layout`` without the batch axis
        (``{example}`` for ``'{layout}'``).
    hidden_channels : int
        Channels of the states.
    i2h_kernel, h2h_kernel : int or tuple of {dims} int
        Kernels of the input and recurrent convolutions; ``h2h_kernel`` must be odd.
    i2h_pad, i2h_dilate, h2h_dilate : int or tuple of {dims} int
        Padding and dilation of the input convolution, dilation of the recurrent one.
    i2h_weight_initializer, h2h_weight_initializer : Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str
    conv_layout : {{'{layout}', '{channel_last}'}}
        Layout of the inputs, states and weights.
    activation : str or callable
        ``act`` above: an ``Activation`` name (``'tanh'``) or a block.
    prefix : str, optional
        ``conv_{alias}<n>_`` by default.
    params : ParameterDict, optional
        Share the parameters of another cell.

    Inputs: ``inputs`` (N, *input_shape) and ``states`` as :meth:`state_info` gives them,
    (N, hidden_channels, *spatial) for the default layout.
    Outputs: ``h_t`` and the list of next states.

    Shape
    -----
    inputs: ``(N, *input_shape)`` per step; out: ``(N, hidden_channels, *spatial)``, the
    spatial size of the i2h convolution's output (for the default layout).

    Example
    -------
    >>> cell = mx.gluon.contrib.rnn.Conv{dims}D{family}Cell({example_shape}, 4, i2h_kernel=3, h2h_kernel=3,
    ...                                              i2h_pad=1)
    >>> cell.initialize()
    >>> out, states = cell(mx.nd.ones((2,) + {example_shape}), cell.begin_state(batch_size=2))
    >>> out.shape, len(states)
    ({out_shape}, {num_states})
"""


def _public_cell(family_cell, dims):
    """The public class of ``family_cell`` over ``dims`` spatial dimensions, with MXNet's
    signature and its defaults for that many dimensions."""
    layout, channel_last = _LAYOUTS[dims]

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0,) * dims,
                 i2h_dilate=(1,) * dims, h2h_dilate=(1,) * dims, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', conv_layout=layout, activation='tanh',
                 prefix=None, params=None):
        family_cell.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                             i2h_pad, i2h_dilate, h2h_dilate, i2h_weight_initializer,
                             h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                             conv_layout, activation, prefix, params)

    family = family_cell._family
    name = 'Conv%dD%sCell' % (dims, family)
    __init__.__qualname__ = name + '.__init__'
    doc = _DOC.format(dims=dims, family=family, equations=_EQUATIONS[family], layout=layout,
                      channel_last=channel_last, example=tuple('C' + layout[2:]),
                      alias=family.lower(), example_shape=(3,) + (5,) * dims,
                      out_shape=(2, 4) + (5,) * dims, num_states=2 if family == 'LSTM' else 1)
    return type(name, (family_cell,), {'__init__': __init__, '__doc__': doc, '_dims': dims,
                                       '__module__': __name__, '__qualname__': name})


Conv1DRNNCell = _public_cell(_ConvRNNCell, 1)
Conv2DRNNCell = _public_cell(_ConvRNNCell, 2)
Conv3DRNNCell = _public_cell(_ConvRNNCell, 3)
Conv1DLSTMCell = _public_cell(_ConvLSTMCell, 1)
Conv2DLSTMCell = _public_cell(_ConvLSTMCell, 2)
Conv3DLSTMCell = _public_cell(_ConvLSTMCell, 3)
Conv1DGRUCell = _public_cell(_ConvGRUCell, 1)
Conv2DGRUCell = _public_cell(_ConvGRUCell, 2)
Conv3DGRUCell = _public_cell(_ConvGRUCell, 3)
