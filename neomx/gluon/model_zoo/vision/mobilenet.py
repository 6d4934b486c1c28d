"""MobileNet (Howard et al., "MobileNets: Efficient Convolutional Neural Networks for Mobile
Vision Applications", arXiv:1704.04861) and MobileNetV2 (Sandler et al., "Inverted Residuals
and Linear Bottlenecks", arXiv:1801.04381), with a width multiplier on every layer."""
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained
from ._common import named_constructor

__all__ = ['MobileNet', 'MobileNetV2', 'mobilenet1_0', 'mobilenet_v2_1_0', 'mobilenet0_75',
           'mobilenet_v2_0_75', 'mobilenet0_5', 'mobilenet_v2_0_5', 'mobilenet0_25',
           'mobilenet_v2_0_25', 'get_mobilenet', 'get_mobilenet_v2']

# MobileNet: (output channels, stride) of each depthwise-separable block; its depthwise
# convolution has the channels of the previous block (32 for the first, the stem's).
_V1_BLOCKS = ([(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5
              + [(1024, 2), (1024, 1)])
# MobileNetV2: (expansion t, output channels, number of blocks, stride of the first) of each
# group of linear bottlenecks; the stem has 32 channels.
_V2_GROUPS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
              (6, 160, 3, 2), (6, 320, 1, 1)]


class RELU6(HybridBlock):
    """ReLU capped at 6: ``min(max(x, 0), 6)``."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name='relu6')


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    """Append to ``out``: convolution without bias, BatchNorm and (if ``active``) ReLU or
    ReLU6."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False),
            nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation('relu'))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """Append a depthwise-separable block: 3x3 depthwise, then 1x1 pointwise convolution."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels,
              relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """Inverted residual of MobileNetV2: 1x1 expansion by ``t``, 3x3 depthwise convolution,
    linear 1x1 projection; the input is added back when stride and channels allow it.

    Parameters
    ----------
    in_channels : int
    channels : int
        Output channels.
    t : int
        Expansion factor.
    stride : int

    Shapes: ``(batch, in_channels, H, W)`` -> ``(batch, channels, ceil(H / stride),
    ceil(W / stride))``.
    """

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        expanded = in_channels * t
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, expanded, relu6=True)
            _add_conv(self.out, expanded, kernel=3, stride=stride, pad=1, num_group=expanded,
                      relu6=True)
            _add_conv(self.out, channels, active=False)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


class MobileNet(HybridBlock):
    """MobileNet: a strided 3x3 convolution, 13 depthwise-separable blocks, global average
    pooling and the classifier.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier: every layer has ``int(channels * multiplier)`` channels.
    classes : int, default 1000

    Shapes: ``(batch, 3, H, W)`` -> ``(batch, classes)`` for any H, W >= 1.

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.MobileNet(multiplier=0.25, classes=10)
    >>> net.output                              # the classifier; its input size is set by the first batch
    Dense(None -> 10, linear)
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            in_channels = int(32 * multiplier)
            _add_conv(self.features, channels=in_channels, kernel=3, pad=1, stride=2)
            for channels, stride in _V1_BLOCKS:
                channels = int(channels * multiplier)
                _add_conv_dw(self.features, dw_channels=in_channels, channels=channels,
                             stride=stride)
                in_channels = channels
            self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNetV2: a strided 3x3 convolution, 17 linear bottlenecks, a 1x1 convolution to
    1280 channels (more if ``multiplier > 1``), global average pooling and a 1x1
    convolution as classifier (``output_pred_weight``, no bias).

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier: every layer has ``int(channels * multiplier)`` channels.
    classes : int, default 1000

    Shapes: ``(batch, 3, H, W)`` -> ``(batch, classes)`` for any H, W >= 1.

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.MobileNetV2(multiplier=0.25, classes=10)
    >>> net.output                              # a 1x1 convolution, then flattening
    HybridSequential(
      (0): Conv2D(None -> 10, kernel_size=(1, 1), stride=(1, 1), bias=False)
      (1): Flatten
    )
    """

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='features_')
            with self.features.name_scope():
                in_channels = int(32 * multiplier)
                _add_conv(self.features, in_channels, kernel=3, stride=2, pad=1, relu6=True)
                for t, channels, repeats, first_stride in _V2_GROUPS:
                    channels = int(channels * multiplier)
                    for index in range(repeats):
                        self.features.add(LinearBottleneck(in_channels, channels, t,
                                                           first_stride if index == 0 else 1))
                        in_channels = channels
                last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix='output_')
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix='pred_'),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _store_name(family, multiplier):
    """The model-store name: ``mobilenet`` + 1.0, 0.75, 0.5 or 0.25 (two decimals, a
    trailing zero dropped for 1.0 and 0.5)."""
    tag = '%.2f' % multiplier
    return family + (tag[:-1] if tag in ('1.00', '0.50') else tag)


def _build(net_class, family, multiplier, pretrained, ctx, root, kwargs):
    net = net_class(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, _store_name(family, multiplier), ctx, root)
    return net


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet of width ``multiplier``.

    Parameters
    ----------
    multiplier : float
        Width multiplier; pretrained parameters exist for 1.0, 0.75, 0.5 and 0.25.
    pretrained, ctx, root, **kwargs
        As for :func:`mobilenet1_0`.
    """
    return _build(MobileNet, 'mobilenet', multiplier, pretrained, ctx, root, kwargs)


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNetV2 of width ``multiplier``.

    Parameters
    ----------
    multiplier : float
        Width multiplier; pretrained parameters exist for 1.0, 0.75, 0.5 and 0.25.
    pretrained, ctx, root, **kwargs
        As for :func:`mobilenet_v2_1_0`.
    """
    return _build(MobileNetV2, 'mobilenetv2_', multiplier, pretrained, ctx, root, kwargs)


def _variant(prefix, get_net, net_class, multiplier):
    return named_constructor(prefix + str(multiplier).replace('.', '_'),
                             '%s of width %s, a :class:`%s`.' % (net_class, multiplier, net_class),
                             get_net, multiplier)


mobilenet1_0 = _variant('mobilenet', get_mobilenet, 'MobileNet', 1.0)
mobilenet0_75 = _variant('mobilenet', get_mobilenet, 'MobileNet', 0.75)
mobilenet0_5 = _variant('mobilenet', get_mobilenet, 'MobileNet', 0.5)
mobilenet0_25 = _variant('mobilenet', get_mobilenet, 'MobileNet', 0.25)
mobilenet_v2_1_0 = _variant('mobilenet_v2_', get_mobilenet_v2, 'MobileNetV2', 1.0)
mobilenet_v2_0_75 = _variant('mobilenet_v2_', get_mobilenet_v2, 'MobileNetV2', 0.75)
mobilenet_v2_0_5 = _variant('mobilenet_v2_', get_mobilenet_v2, 'MobileNetV2', 0.5)
mobilenet_v2_0_25 = _variant('mobilenet_v2_', get_mobilenet_v2, 'MobileNetV2', 0.25)
