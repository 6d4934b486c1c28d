"""Deformable convolution layers: ``DeformableConvolution`` (v1, Dai et al. 2017) and
``ModulatedDeformableConvolution`` (v2, Zhu et al. 2018).

Each layer holds two convolutions over the same input ``(batch, in_channels, height, width)``:
an ordinary one (parameters ``offset_weight``, ``offset_bias``) computing where to sample, and the
deformable one (``deformable_conv_weight``, ``deformable_conv_bias``) sampling there. The output
is ``(batch, channels, out_height, out_width)`` with, per spatial axis,
``out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1``.
"""
from ....base import numeric_types
from ...block import HybridBlock
from ...nn.basic_layers import _optional_activation
from ...nn.conv_layers import _infer_param_shapes, conv_repr

__all__ = ['DeformableConvolution', 'ModulatedDeformableConvolution']


def _pair(value, length=2):
    """An int repeated ``length`` times, or the given sequence unchanged."""
    return (value,) * length if isinstance(value, numeric_types) else value


class _DeformableConv(HybridBlock):
    """What both layers share: the offset convolution, the parameters and the forward pass.

    Subclasses set ``_OP`` (the deformable operator), ``_OFFSETS_PER_TAP`` (offset
    convolution channels per kernel tap and deformable group: 2 moves, plus 1 mask value
    for v2) and ``_OFFSET_PARAMS_FIRST`` (MXNet's parameter creation order, which
    ``collect_params`` shows).
    """
    _OP = None
    _OFFSETS_PER_TAP = 2
    _OFFSET_PARAMS_FIRST = True

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, num_deformable_group, layout,
                 use_bias, in_channels, activation, weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params):
        super().__init__(prefix=prefix, params=params)
        assert layout in ('NCHW', 'NHWC'), "Only supports 'NCHW' and 'NHWC' layout for now"
        kernel_size = _pair(kernel_size)
        ndim = len(kernel_size)
        self._channels = channels
        self._in_channels = in_channels
        self._op_name = op_name
        geometry = {'kernel': kernel_size, 'stride': _pair(strides, ndim), 'dilate': _pair(dilation, ndim),
                    'pad': _pair(padding, ndim)}
        taps = kernel_size[0] * kernel_size[1] * num_deformable_group
        # The first 2 * taps offset channels move the samples; v2 reads its mask from the rest.
        self._offset_split = 2 * taps
        self._kwargs_offset = dict(geometry, num_filter=self._OFFSETS_PER_TAP * taps, num_group=groups,
                                   no_bias=not offset_use_bias, layout=layout)
        self._kwargs_deformable_conv = dict(geometry, num_filter=channels, num_group=groups,
                                            num_deformable_group=num_deformable_group, no_bias=not use_bias,
                                            layout=layout)
        if adj:
            self._kwargs_offset['adj'] = adj
            self._kwargs_deformable_conv['adj'] = adj
        with self.name_scope():
            if self._OFFSET_PARAMS_FIRST:
                self._add_offset_params(in_channels, offset_use_bias, offset_weight_initializer,
                                        offset_bias_initializer)
            # The input size stays 0 (deferred) even when in_channels is given, as in MXNet.
            weight_shape = [0] * (ndim + 2)
            weight_shape[0], weight_shape[2:4] = channels, kernel_size[:2]
            self.deformable_conv_weight = self.params.get('deformable_conv_weight', shape=weight_shape,
                                                          init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get(
                'deformable_conv_bias', shape=(channels,), init=bias_initializer,
                allow_deferred_init=True) if use_bias else None
            if not self._OFFSET_PARAMS_FIRST:
                self._add_offset_params(in_channels, offset_use_bias, offset_weight_initializer,
                                        offset_bias_initializer)
            self.act = _optional_activation(activation)

    def _add_offset_params(self, in_channels, use_bias, weight_initializer, bias_initializer):
        """The offset convolution's weight (and bias), shaped from ``in_channels`` (0: deferred)."""
        layout = self._kwargs_offset['layout']
        data_shape = [0] * (len(self._kwargs_offset['kernel']) + 2)
        data_shape[layout.find('N')] = 1
        data_shape[layout.find('C')] = in_channels
        shapes = _infer_param_shapes('Convolution', tuple(data_shape), self._kwargs_offset)
        self.offset_weight = self.params.get('offset_weight', shape=shapes['weight'], init=weight_initializer,
                                             allow_deferred_init=True)
        self.offset_bias = self.params.get('offset_bias', shape=shapes['bias'], init=bias_initializer,
                                           allow_deferred_init=True) if use_bias else None

    def _sampling_inputs(self, F, offset):
        """The deformable operator's inputs computed from the offset convolution's output."""
        return {'offset': offset}

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset_inputs = (x, offset_weight) if offset_bias is None else (x, offset_weight, offset_bias)
        offset = F.Convolution(*offset_inputs, cudnn_off=True, **self._kwargs_offset)
        deformable = getattr(F.contrib, self._OP)
        bias = {} if deformable_conv_bias is None else {'bias': deformable_conv_bias}
        out = deformable(data=x, weight=deformable_conv_weight, name='fwd', **self._sampling_inputs(F, offset),
                         **bias, **self._kwargs_deformable_conv)
        return out if self.act is None else self.act(out)


class DeformableConvolution(_DeformableConv):
    """2-D deformable convolution v1: a convolution whose sampling grid is moved, per output
    position and kernel tap, by offsets that a second convolution computes from the input.

    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size, strides, padding, dilation : int or tuple of 2 ints
        Geometry shared by both convolutions (an int is repeated per axis).
    groups : int
        Channel groups of both convolutions.
    num_deformable_group : int
        Input channel groups sharing one set of offsets.
    layout : str
        'NCHW' (the deformable operator supports no other) or 'NHWC'.
    use_bias : bool
        Whether the deformable convolution adds ``deformable_conv_bias``.
    in_channels : int
        Input channels for the offset convolution's weight; 0 defers them to the first call.
    activation : str, optional
        Activation applied to the output.
    weight_initializer, bias_initializer : Initializer or str
        For ``deformable_conv_weight`` and ``deformable_conv_bias``.
    offset_weight_initializer, offset_bias_initializer : Initializer or str
        For ``offset_weight`` and ``offset_bias`` (zeros: the layer starts as a plain convolution).
    offset_use_bias : bool
        Whether the offset convolution has a bias.
    op_name : str
        Kept for MXNet compatibility; the layer always runs its own operator.
    adj : tuple of int, optional
        Passed to both operators, as MXNet does (which neither accepts).

    Inputs: ``data`` (batch, in_channels, height, width). Outputs: (batch, channels, out_height,
    out_width), see the module docstring.

    Shape
    -----
    data: ``(N, in_channels, H, W)``; out: ``(N, channels, H_out, W_out)`` as for
    :class:`~neomx.gluon.nn.Conv2D`.

    Example
    -------
    >>> layer = mx.gluon.contrib.cnn.DeformableConvolution(4, kernel_size=(3, 3), padding=(1, 1))
    >>> layer.initialize()                      # the offsets start at 0: a plain convolution
    >>> layer(mx.nd.ones((1, 2, 5, 5))).shape
    (1, 4, 5, 5)
    >>> layer.offset_weight.shape               # 2 offsets per tap of the 3x3 kernel
    (18, 2, 3, 3)
    """
    _OP = 'DeformableConvolution'

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 num_deformable_group=1, layout='NCHW', use_bias=True, in_channels=0, activation=None,
                 weight_initializer=None, bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True, op_name='DeformableConvolution', adj=None,
                 prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, num_deformable_group, layout,
                         use_bias, in_channels, activation, weight_initializer, bias_initializer,
                         offset_weight_initializer, offset_bias_initializer, offset_use_bias, op_name, adj, prefix,
                         params)

    def _alias(self):
        return 'deformable_conv'

    def __repr__(self):
        return conv_repr(self, self._kwargs_deformable_conv, self.deformable_conv_weight,
                         self.deformable_conv_bias)


class ModulatedDeformableConvolution(_DeformableConv):
    """2-D modulated deformable convolution v2: v1 whose every sample is also scaled by a mask
    in ``(0, 2)``, ``2 * sigmoid`` of further channels of the offset convolution.

    Parameters are those of :class:`DeformableConvolution`; the offset convolution has
    ``3 * kh * kw * num_deformable_group`` output channels (moves, then mask logits).
    The repr is Block's default, as in MXNet.

    Shape
    -----
    data: ``(N, in_channels, H, W)``; out: ``(N, channels, H_out, W_out)`` as for
    :class:`~neomx.gluon.nn.Conv2D`.

    Example
    -------
    >>> layer = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=(3, 3), padding=(1, 1))
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 2, 5, 5))).shape
    (1, 4, 5, 5)
    >>> layer.offset_weight.shape               # 2 offsets and 1 mask logit per tap
    (27, 2, 3, 3)
    """
    _OP = 'ModulatedDeformableConvolution'
    _OFFSETS_PER_TAP = 3
    _OFFSET_PARAMS_FIRST = False

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 num_deformable_group=1, layout='NCHW', use_bias=True, in_channels=0, activation=None,
                 weight_initializer=None, bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True, op_name='ModulatedDeformableConvolution',
                 adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, num_deformable_group, layout,
                         use_bias, in_channels, activation, weight_initializer, bias_initializer,
                         offset_weight_initializer, offset_bias_initializer, offset_use_bias, op_name, adj, prefix,
                         params)

    def _alias(self):
        return 'modulated_deformable_conv'

    def _sampling_inputs(self, F, offset):
        moves = F.slice_axis(offset, axis=1, begin=0, end=self._offset_split)
        logits = F.slice_axis(offset, axis=1, begin=self._offset_split, end=None)
        return {'offset': moves, 'mask': F.sigmoid(logits) * 2}
