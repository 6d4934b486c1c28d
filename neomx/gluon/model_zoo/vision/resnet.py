"""ResNet V1 (He et al., "Deep Residual Learning for Image Recognition", arXiv:1512.03385) and
V2 (He et al., "Identity Mappings in Deep Residual Networks", arXiv:1603.05027).

Names follow MXNet's model zoo (``resnetv10_stage1_conv0_weight``) so its pretrained files
load unchanged. Residual blocks are built with an empty prefix and open no scope of their
own: their layers are counted in their stage's scope (``stage1_conv0``, ``stage1_conv1``...).
"""
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained
from ._common import named_constructor

__all__ = ['ResNetV1', 'ResNetV2',
           'BasicBlockV1', 'BasicBlockV2',
           'BottleneckV1', 'BottleneckV2',
           'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
           'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
           'get_resnet']


def _conv(channels, kernel_size, stride, in_channels=0, use_bias=False):
    """A square convolution padded by ``kernel_size // 2``: at stride 1 it keeps the size."""
    return nn.Conv2D(channels, kernel_size, stride, kernel_size // 2, use_bias=use_bias,
                     in_channels=in_channels)


_BLOCK_PARAMS_DOC = """

    Parameters
    ----------
    channels : int
        Output channels.
    stride : int
        Stride of the block (2 halves height and width).
    downsample : bool, default False
        Project the shortcut with a strided 1x1 convolution (needed when the shape changes).
    in_channels : int, default 0
        Input channels; 0 infers them at the first forward pass.

    Shapes: ``(batch, in_channels, H, W)`` -> ``(batch, channels, ceil(H / stride),
    ceil(W / stride))``.
"""


class _ResidualV1(HybridBlock):
    """Post-activation unit: ``relu(body(x) + shortcut(x))``.

    The body is a chain of convolutions, each followed by BatchNorm, with ReLU between them;
    the shortcut is the identity or a strided 1x1 convolution with BatchNorm.

    Parameters
    ----------
    conv_specs : list of tuple
        Arguments of :func:`_conv` for each convolution of the body, in order.
    channels, stride, downsample, in_channels
        As in the public subclasses.
    """

    def __init__(self, conv_specs, channels, stride, downsample, in_channels, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        for index, spec in enumerate(conv_specs):
            if index:
                self.body.add(nn.Activation('relu'))
            self.body.add(_conv(*spec), nn.BatchNorm())
        if downsample:
            self.downsample = nn.HybridSequential(prefix='')
            self.downsample.add(_conv(channels, 1, stride, in_channels), nn.BatchNorm())
        else:
            self.downsample = None

    # The operand order of the sum, as in MXNet's blocks, so that exports are identical.
    _shortcut_first = False

    def hybrid_forward(self, F, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        body = self.body(x)
        total = shortcut + body if self._shortcut_first else body + shortcut
        return F.Activation(total, act_type='relu')


class _ResidualV2(HybridBlock):
    """Pre-activation unit: ``x + conv_n(relu(bn_n(... conv_1(relu(bn_1(x))))))``.

    Children ``bn1, conv1, bn2, conv2...``; a projected shortcut (``downsample``, a strided
    1x1 convolution) starts from ``relu(bn1(x))`` rather than from ``x``.

    Parameters
    ----------
    conv_specs : list of tuple
        Arguments of :func:`_conv` for ``conv1``, ``conv2``..., in order.
    channels, stride, downsample, in_channels
        As in the public subclasses.
    """

    def __init__(self, conv_specs, channels, stride, downsample, in_channels, **kwargs):
        super().__init__(**kwargs)
        self._units = []
        for index, spec in enumerate(conv_specs, 1):
            bn, conv = nn.BatchNorm(), _conv(*spec)
            setattr(self, 'bn%d' % index, bn)
            setattr(self, 'conv%d' % index, conv)
            self._units.append((bn, conv))
        self.downsample = _conv(channels, 1, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        shortcut = x
        for index, (bn, conv) in enumerate(self._units):
            x = F.Activation(bn(x), act_type='relu')
            if index == 0 and self.downsample is not None:
                shortcut = self.downsample(x)
            x = conv(x)
        return x + shortcut


class BasicBlockV1(_ResidualV1):
    __doc__ = """Two 3x3 convolutions, post-activation (ResNet-18/34 V1).""" + _BLOCK_PARAMS_DOC + """

    Example
    -------
    >>> block = mx.gluon.model_zoo.vision.BasicBlockV1(8, stride=2, downsample=True, in_channels=4)
    >>> block.initialize()
    >>> block(mx.nd.ones((1, 4, 8, 8))).shape
    (1, 8, 4, 4)
    """
    _shortcut_first = True

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__([(channels, 3, stride, in_channels), (channels, 3, 1, channels)],
                         channels, stride, downsample, in_channels, **kwargs)


class BottleneckV1(_ResidualV1):
    __doc__ = """1x1 (strided) -> 3x3 -> 1x1 convolutions at a quarter of the output channels,
    post-activation (ResNet-50/101/152 V1; the 1x1 convolutions have a bias).""" + _BLOCK_PARAMS_DOC + """

    Example
    -------
    >>> block = mx.gluon.model_zoo.vision.BottleneckV1(16, stride=1, downsample=True, in_channels=4)
    >>> block.initialize()
    >>> block(mx.nd.ones((1, 4, 8, 8))).shape
    (1, 16, 8, 8)
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        width = channels // 4
        super().__init__([(width, 1, stride, 0, True), (width, 3, 1, width),
                          (channels, 1, 1, 0, True)],
                         channels, stride, downsample, in_channels, **kwargs)


class BasicBlockV2(_ResidualV2):
    __doc__ = """Two 3x3 convolutions, pre-activation (ResNet-18/34 V2).""" + _BLOCK_PARAMS_DOC + """

    Example
    -------
    >>> block = mx.gluon.model_zoo.vision.BasicBlockV2(8, stride=2, downsample=True, in_channels=4)
    >>> block.initialize()
    >>> block(mx.nd.ones((1, 4, 8, 8))).shape
    (1, 8, 4, 4)
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__([(channels, 3, stride, in_channels), (channels, 3, 1, channels)],
                         channels, stride, downsample, in_channels, **kwargs)


class BottleneckV2(_ResidualV2):
    __doc__ = """1x1 -> 3x3 (strided) -> 1x1 convolutions at a quarter of the output channels,
    pre-activation (ResNet-50/101/152 V2).""" + _BLOCK_PARAMS_DOC + """

    Example
    -------
    >>> block = mx.gluon.model_zoo.vision.BottleneckV2(16, stride=2, downsample=True, in_channels=4)
    >>> block.initialize()
    >>> block(mx.nd.ones((1, 4, 8, 8))).shape
    (1, 16, 4, 4)
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        width = channels // 4
        super().__init__([(width, 1, 1), (width, 3, stride, width), (channels, 1, 1)],
                         channels, stride, downsample, in_channels, **kwargs)


_NET_PARAMS_DOC = """

    Parameters
    ----------
    block : type
        The residual block class (``BasicBlockV{n}`` or ``BottleneckV{n}``).
    layers : list of int
        Number of blocks in each stage.
    channels : list of int
        Channels of the stem, then of each stage (one more entry than ``layers``).
    classes : int, default 1000
        Number of output classes.
    thumbnail : bool, default False
        For small images (CIFAR): the stem is a single 3x3 convolution of stride 1 instead
        of a strided 7x7 convolution, BatchNorm, ReLU and max pooling.

    Shapes: ``(batch, 3, H, W)`` -> ``(batch, classes)``; any H, W that survive the 32x
    (8x with ``thumbnail``) downsampling.
"""


class _ResNet(HybridBlock):
    """``output(features(x))``: features = input layers, stem, stages, head layers."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(*self._input_layers())
            if thumbnail:
                self.features.add(_conv(channels[0], 3, 1))
            else:
                self.features.add(_conv(channels[0], 7, 2), nn.BatchNorm(), nn.Activation('relu'),
                                  nn.MaxPool2D(3, 2, 1))
            for index, num_layers in enumerate(layers):
                stride = 1 if index == 0 else 2
                self.features.add(self._make_layer(block, num_layers, channels[index + 1], stride,
                                                   index + 1, in_channels=channels[index]))
            self.features.add(*self._head_layers())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def _input_layers(self):
        """Layers applied to the raw input, before the stem."""
        return []

    def _head_layers(self):
        """Layers between the last stage and the classifier."""
        return [nn.GlobalAvgPool2D()]

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        """Stage ``stage_index`` (prefix ``stage<i>_``): ``layers`` blocks, the first strided."""
        stage = nn.HybridSequential(prefix='stage%d_' % stage_index)
        with stage.name_scope():
            stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                            prefix=''))
            for _ in range(layers - 1):
                stage.add(block(channels, 1, False, in_channels=channels, prefix=''))
        return stage

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    __doc__ = """ResNet V1: post-activation residual blocks.""" + _NET_PARAMS_DOC.format(n=1) + """

    Example
    -------
    A small ResNet (one basic block per stage):

    >>> net = mx.gluon.model_zoo.vision.ResNetV1(mx.gluon.model_zoo.vision.BasicBlockV1, [1, 1, 1, 1],
    ...                                          [4, 4, 8, 16, 32], classes=10)
    >>> net.initialize()
    >>> net(mx.nd.ones((1, 3, 32, 32))).shape
    (1, 10)
    """


class ResNetV2(_ResNet):
    __doc__ = """ResNet V2: pre-activation residual blocks; the input is first normalised by a
    BatchNorm without scale and shift, and the features end with BatchNorm and ReLU.""" \
        + _NET_PARAMS_DOC.format(n=2) + """

    Example
    -------
    A small pre-activation ResNet (one bottleneck per stage):

    >>> net = mx.gluon.model_zoo.vision.ResNetV2(mx.gluon.model_zoo.vision.BottleneckV2, [1, 1, 1, 1],
    ...                                          [4, 8, 16, 32, 64], classes=10)
    >>> net.initialize()
    >>> net(mx.nd.ones((1, 3, 32, 32))).shape
    (1, 10)
    """

    def _input_layers(self):
        return [nn.BatchNorm(scale=False, center=False)]

    def _head_layers(self):
        return [nn.BatchNorm(), nn.Activation('relu'), nn.GlobalAvgPool2D(), nn.Flatten()]


# depth -> (block kind, blocks per stage, channels of the stem and of each stage)
resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """ResNet of ``version`` (1 or 2) and depth ``num_layers`` (18, 34, 50, 101 or 152).

    Parameters
    ----------
    version : int
        1 (:class:`ResNetV1`) or 2 (:class:`ResNetV2`).
    num_layers : int
        Depth: 18 and 34 use basic blocks, 50, 101 and 152 bottlenecks.
    pretrained, ctx, root, **kwargs
        As for :func:`resnet18_v1`.
    """
    assert num_layers in resnet_spec, 'Invalid number of layers: %d. Options are %s' % (
        num_layers, str(resnet_spec.keys()))
    assert 1 <= version <= 2, 'Invalid resnet version: %d. Options are 1 and 2.' % version
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][block_type],
                                           layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, 'resnet%d_v%d' % (num_layers, version), ctx, root)
    return net


def _resnet(version, num_layers):
    summary = 'ResNet-%d V%d, a :class:`ResNetV%d`.' % (num_layers, version, version)
    return named_constructor('resnet%d_v%d' % (num_layers, version), summary,
                             get_resnet, version, num_layers)


resnet18_v1 = _resnet(1, 18)
resnet34_v1 = _resnet(1, 34)
resnet50_v1 = _resnet(1, 50)
resnet101_v1 = _resnet(1, 101)
resnet152_v1 = _resnet(1, 152)
resnet18_v2 = _resnet(2, 18)
resnet34_v2 = _resnet(2, 34)
resnet50_v2 = _resnet(2, 50)
resnet101_v2 = _resnet(2, 101)
resnet152_v2 = _resnet(2, 152)
