"""Convolution layers: Conv1D/2D/3D, Conv1D/2D/3DTranspose, ReflectionPad2D; and the pooling layers.

Shapes (channel-first layouts): ``(batch, in_channels, *spatial)`` ->
``(batch, channels, *out_spatial)`` with, per spatial axis,
``out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1`` for a
convolution and ``out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 +
output_padding`` for a transposed one.
"""
from ...base import numeric_types
from ...operator import registry
from ..block import HybridBlock
from .basic_layers import _mapping, _optional_activation

__all__ = ['Conv1D', 'Conv2D', 'Conv3D', 'Conv1DTranspose', 'Conv2DTranspose',
           'Conv3DTranspose', 'ReflectionPad2D',
           'MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
           'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D', 'GlobalAvgPool1D',
           'GlobalAvgPool2D', 'GlobalAvgPool3D']


def _tuple(value, ndim):
    """An int repeated ``ndim`` times, or the given tuple."""
    return (value,) * ndim if isinstance(value, numeric_types) else tuple(value)


def _infer_param_shapes(op_name, data_shape, op_kwargs):
    """Weight and bias shapes for data of ``data_shape`` (0 = unknown), from the operator."""
    spec = registry.get(op_name)
    shapes = dict.fromkeys(spec.inputs)
    shapes['data'] = data_shape
    return spec.infer_args(shapes, spec.parse_attrs(op_kwargs))


class _Conv(HybridBlock):
    """A convolution (``Convolution``) or transposed convolution (``Deconvolution``) layer.

    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size, strides, padding, dilation : tuple of int (ints are repeated per axis)
    groups : int
        Split the input channels into groups convolved separately.
    layout : str
        'NCW', 'NCHW', 'NCDHW' (channel-first) or the channel-last variants.
    in_channels : int
        0 defers the input channel count to the first forward pass.
    activation : str, optional
    use_bias : bool
    weight_initializer, bias_initializer : Initializer or str
    op_name : str
        'Convolution' or 'Deconvolution'.
    adj : tuple of int, optional
        Output padding of a transposed convolution.
    """

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', op_name='Convolution', adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        ndim = len(kernel_size)
        self._channels = channels
        self._op_name = op_name
        self._kwargs = {'kernel': kernel_size, 'stride': _tuple(strides, ndim),
                        'dilate': _tuple(dilation, ndim), 'pad': _tuple(padding, ndim),
                        'num_filter': channels, 'num_group': groups, 'no_bias': not use_bias,
                        'layout': layout}
        if adj is not None:
            self._kwargs['adj'] = adj
        data_shape = [0] * (ndim + 2)
        data_shape[layout.find('N')] = 1
        data_shape[layout.find('C')] = in_channels
        shapes = _infer_param_shapes(op_name, tuple(data_shape), self._kwargs)
        with self.name_scope():
            self.weight = self.params.get('weight', shape=shapes['weight'], init=weight_initializer,
                                          allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=shapes['bias'], init=bias_initializer,
                                        allow_deferred_init=True) if use_bias else None
            self.act = _optional_activation(activation)

    def _alias(self):
        return 'conv'

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        return out if self.act is None else self.act(out)

    def __repr__(self):
        return conv_repr(self, self._kwargs, self.weight, self.bias)


def conv_repr(block, kwargs, weight, bias):
    """MXNet's repr of a convolution layer: ``Conv2D(3 -> 8, kernel_size=(3, 3), ...)``,
    the non-default geometry only."""
    ndim = len(kwargs['kernel'])
    parts = [_mapping(weight.shape), 'kernel_size={}'.format(kwargs['kernel']),
             'stride={}'.format(kwargs['stride'])]
    if kwargs['pad'] != (0,) * ndim:
        parts.append('padding={}'.format(kwargs['pad']))
    if kwargs['dilate'] != (1,) * ndim:
        parts.append('dilation={}'.format(kwargs['dilate']))
    if kwargs['num_group'] != 1:
        parts.append('groups={}'.format(kwargs['num_group']))
    if bias is None:
        parts.append('bias=False')
    if block.act:
        parts.append(str(block.act))
    return '{}({})'.format(type(block).__name__, ', '.join(parts))


_LAYOUTS = {1: ('NCW', 'NWC'), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}


def _window(ndim, size, layout):
    """The kernel (or pooling window) tuple of an ``ndim``-D layer; checks size and layout."""
    assert layout in _LAYOUTS[ndim], 'Only supports %s layouts for now' % ' and '.join(
        "'%s'" % l for l in _LAYOUTS[ndim])
    size = _tuple(size, ndim)
    assert len(size) == ndim, 'kernel size must be a number or a list of %d ints' % ndim
    return size


def _make_conv(ndim, name, doc):
    default_layout = _LAYOUTS[ndim][0]

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout=default_layout, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _Conv.__init__(self, channels, _window(ndim, kernel_size, layout), strides, padding,
                       dilation, groups, layout, in_channels, activation, use_bias,
                       weight_initializer, bias_initializer, **kwargs)
    return type(name, (_Conv,), {'__init__': __init__, '__doc__': doc})


def _make_conv_transpose(ndim, name, doc):
    default_layout = _LAYOUTS[ndim][0]

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0, dilation=1,
                 groups=1, layout=default_layout, activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        kernel_size = _window(ndim, kernel_size, layout)
        output_padding = _tuple(output_padding, ndim)
        _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                       in_channels, activation, use_bias, weight_initializer, bias_initializer,
                       op_name='Deconvolution', adj=output_padding, **kwargs)
        self.outpad = output_padding
    return type(name, (_Conv,), {'__init__': __init__, '__doc__': doc})


_CONV_DOC = """%dD convolution layer (cross-correlation of learned filters over the input).

Parameters: ``channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
layout='%s', activation=None, use_bias=True, weight_initializer=None,
bias_initializer='zeros', in_channels=0``.
Weight shape: ``(channels, in_channels // groups, *kernel_size)``.

Shape
-----
data : ``(batch, in_channels, *spatial)`` (layout %s).
out : ``(batch, channels, *out_spatial)`` with, per spatial axis,
    ``out = floor((in + 2 * padding - dilation * (kernel_size - 1) - 1) / strides) + 1``.

Example
-------
%s"""
_CONV_T_DOC = """%dD transposed convolution layer (the gradient of a convolution).

Parameters: ``channels, kernel_size, strides=1, padding=0, output_padding=0, dilation=1,
groups=1, layout='%s', activation=None, use_bias=True, weight_initializer=None,
bias_initializer='zeros', in_channels=0``.
Weight shape: ``(in_channels, channels // groups, *kernel_size)``.

Shape
-----
data : ``(batch, in_channels, *spatial)`` (layout %s).
out : ``(batch, channels, *out_spatial)`` with, per spatial axis, ``out = (in - 1) * strides
    - 2 * padding + dilation * (kernel_size - 1) + 1 + output_padding``.

Example
-------
%s"""

_CONV_EXAMPLE = """>>> conv = mx.gluon.nn.Conv%dD(channels=4, kernel_size=3, padding=1, strides=2)
>>> conv.initialize()
>>> conv(mx.nd.ones((2, 3) + (8,) * %d)).shape
%s
>>> conv.weight.shape
%s
"""
_CONV_T_EXAMPLE = """>>> deconv = mx.gluon.nn.Conv%dDTranspose(channels=4, kernel_size=2, strides=2)
>>> deconv.initialize()
>>> deconv(mx.nd.ones((2, 3) + (5,) * %d)).shape
%s
"""


def _docs(ndim):
    """The docstrings of the ``ndim``-D convolution and transposed convolution."""
    layout = _LAYOUTS[ndim][0]
    conv = _CONV_EXAMPLE % (ndim, ndim, (2, 4) + (4,) * ndim, (4, 3) + (3,) * ndim)
    conv_t = _CONV_T_EXAMPLE % (ndim, ndim, (2, 4) + (10,) * ndim)
    return _CONV_DOC % (ndim, layout, layout, conv), _CONV_T_DOC % (ndim, layout, layout, conv_t)


Conv1D = _make_conv(1, 'Conv1D', _docs(1)[0])
Conv2D = _make_conv(2, 'Conv2D', _docs(2)[0])
Conv3D = _make_conv(3, 'Conv3D', _docs(3)[0])
Conv1DTranspose = _make_conv_transpose(1, 'Conv1DTranspose', _docs(1)[1])
Conv2DTranspose = _make_conv_transpose(2, 'Conv2DTranspose', _docs(2)[1])
Conv3DTranspose = _make_conv_transpose(3, 'Conv3DTranspose', _docs(3)[1])


class ReflectionPad2D(HybridBlock):
    """Pad the two spatial axes of NCHW input by reflecting the border.

    Parameters
    ----------
    padding : int or tuple of 8 ints
        An int pads every side by it; 8 ints are MXNet's ``pad_width`` (before/after per axis).

    Shape
    -----
    data: ``(N, C, H, W)``; out: ``(N, C, H + pad_top + pad_bottom, W + pad_left + pad_right)``.

    Example
    -------
    >>> pad = mx.gluon.nn.ReflectionPad2D(1)
    >>> pad(mx.nd.arange(4).reshape((1, 1, 2, 2)))
    <BLANKLINE>
    [[[[3. 2. 3. 2.]
       [1. 0. 1. 0.]
       [3. 2. 3. 2.]
       [1. 0. 1. 0.]]]]
    <NDArray 1x1x4x4 @cpu(0)>
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8, 'padding must be an int or 8 ints (before/after for 4 axes)'
        self._padding = tuple(padding)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)


# ---------------------------------------------------------------------- pooling
# Pooling layers: MaxPool1D/2D/3D, AvgPool1D/2D/3D, GlobalMaxPool1D/2D/3D, GlobalAvgPool1D/2D/3D
# (in this module, as in MXNet).
#
# Shapes (channel-first layouts): ``(batch, channels, *spatial)`` -> ``(batch, channels,
# *out_spatial)`` with ``out = floor((in + 2 * padding - pool_size) / strides) + 1`` per axis
# (``ceil`` with ``ceil_mode=True``); global pooling gives size 1 on every spatial axis.


class _Pooling(HybridBlock):
    """A ``Pooling`` operator with fixed attributes.

    Parameters
    ----------
    pool_size : tuple of int
    strides : int, tuple of int or None
        ``None`` means ``pool_size``.
    padding : int or tuple of int
    ceil_mode : bool
        Round the output size up ('full' convention) instead of down ('valid').
    global_pool : bool
    pool_type : {'max', 'avg'}
    layout : str
    count_include_pad : bool, optional
        Average pooling: whether padded zeros count in the denominator.
    """

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        ndim = len(pool_size)
        strides = _tuple(pool_size if strides is None else strides, ndim)
        padding = _tuple(padding, ndim)
        self._kwargs = {'kernel': pool_size, 'stride': strides, 'pad': padding,
                        'global_pool': global_pool, 'pool_type': pool_type, 'layout': layout,
                        'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        return ('{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}, '
                'global_pool={global_pool}, pool_type={pool_type}, layout={layout})').format(
                    name=self.__class__.__name__,
                    ceil_mode=self._kwargs['pooling_convention'] == 'full', **self._kwargs)


_SHAPE = """

Shape
-----
data : ``(batch, channels, *spatial)`` (layout %s).
out : ``(batch, channels, *out_spatial)``, %s.

Example
-------
>>> x = mx.nd.arange(%d).reshape((1, 1) + (4,) * %d)
>>> mx.gluon.nn.%s%dD()(x)%s
%s"""


def _shape_and_example(ndim, kind):
    """The Shape and Example sections of an ``ndim``-D pooling layer of ``kind`` (class name
    without the dimension); the example pools a 4-wide ``arange`` (shape only beyond 2-D)."""
    if kind.startswith('Global'):
        size, out = 'size 1 per axis', (1, 1) + (1,) * ndim
    else:
        size, out = 'per axis ``out = floor((in + 2 * padding - pool_size) / strides) + 1``', (1, 1) + (2,) * ndim
    values = {(1, 'MaxPool'): '[[[1. 3.]]]', (1, 'AvgPool'): '[[[0.5 2.5]]]',
              (1, 'GlobalMaxPool'): '[[[3.]]]', (1, 'GlobalAvgPool'): '[[[1.5]]]',
              (2, 'MaxPool'): '[[[[ 5.  7.] [13. 15.]]]]', (2, 'AvgPool'): '[[[[ 2.5  4.5] [10.5 12.5]]]]',
              (2, 'GlobalMaxPool'): '[[[[15.]]]]', (2, 'GlobalAvgPool'): '[[[[7.5]]]]'}
    shown = values.get((ndim, kind))
    if shown is None:
        return _SHAPE % (_LAYOUTS[ndim][0], size, 4 ** ndim, ndim, kind, ndim, '.shape', out)
    return _SHAPE % (_LAYOUTS[ndim][0], size, 4 ** ndim, ndim, kind, ndim, '', '<BLANKLINE>\n%s\n<NDArray %s @cpu(0)>' % (
        shown, 'x'.join(map(str, out))))


def _make_max_pool(ndim):
    def __init__(self, pool_size=(2,) * ndim, strides=None, padding=0, layout=_LAYOUTS[ndim][0],
                 ceil_mode=False, **kwargs):
        _Pooling.__init__(self, _window(ndim, pool_size, layout), strides, padding, ceil_mode,
                          False, 'max', layout, **kwargs)
    doc = ('%dD max pooling: the maximum of each window.\n\nParameters: ``pool_size=2, '
           'strides=None (= pool_size), padding=0, layout, ceil_mode=False``.' % ndim) + _shape_and_example(
               ndim, 'MaxPool')
    return type('MaxPool%dD' % ndim, (_Pooling,), {'__init__': __init__, '__doc__': doc})


def _make_avg_pool(ndim):
    def __init__(self, pool_size=(2,) * ndim, strides=None, padding=0, layout=_LAYOUTS[ndim][0],
                 ceil_mode=False, count_include_pad=True, **kwargs):
        _Pooling.__init__(self, _window(ndim, pool_size, layout), strides, padding, ceil_mode,
                          False, 'avg', layout, count_include_pad, **kwargs)
    doc = ('%dD average pooling: the mean of each window.\n\nParameters: ``pool_size=2, '
           'strides=None (= pool_size), padding=0, layout, ceil_mode=False, '
           'count_include_pad=True`` (padded zeros count in the mean).' % ndim) + _shape_and_example(
               ndim, 'AvgPool')
    return type('AvgPool%dD' % ndim, (_Pooling,), {'__init__': __init__, '__doc__': doc})


def _make_global_pool(ndim, pool_type):
    def __init__(self, layout=_LAYOUTS[ndim][0], **kwargs):
        _Pooling.__init__(self, _window(ndim, 1, layout), None, 0, True, True, pool_type, layout, **kwargs)
    kind = {'max': 'Max', 'avg': 'Avg'}[pool_type]
    doc = '%dD global %s pooling over all spatial positions (output size 1 per axis).' % (
        ndim, {'max': 'maximum', 'avg': 'average'}[pool_type]) + _shape_and_example(ndim, 'Global%sPool' % kind)
    return type('Global%sPool%dD' % (kind, ndim), (_Pooling,), {'__init__': __init__, '__doc__': doc})


MaxPool1D, MaxPool2D, MaxPool3D = (_make_max_pool(n) for n in (1, 2, 3))
AvgPool1D, AvgPool2D, AvgPool3D = (_make_avg_pool(n) for n in (1, 2, 3))
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = (_make_global_pool(n, 'max') for n in (1, 2, 3))
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (_make_global_pool(n, 'avg') for n in (1, 2, 3))
