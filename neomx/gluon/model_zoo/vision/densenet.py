"""DenseNet (Huang et al., "Densely Connected Convolutional Networks", arXiv:1608.06993)."""
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import load_pretrained
from ._common import named_constructor

__all__ = ['DenseNet', 'densenet121', 'densenet161', 'densenet169', 'densenet201']


def _bn_relu_conv(channels, kernel_size, padding=0):
    """The pre-activation convolution DenseNet is made of (three children)."""
    return [nn.BatchNorm(), nn.Activation('relu'),
            nn.Conv2D(channels, kernel_size=kernel_size, padding=padding, use_bias=False)]


def _make_dense_layer(growth_rate, bn_size, dropout):
    """``concat([x, new_features(x)])`` on the channel axis: adds ``growth_rate`` channels."""
    new_features = nn.HybridSequential(prefix='')
    new_features.add(*_bn_relu_conv(bn_size * growth_rate, 1))
    new_features.add(*_bn_relu_conv(growth_rate, 3, padding=1))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    layer = HybridConcurrent(axis=1, prefix='')
    layer.add(Identity(), new_features)
    return layer


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    """Dense block ``stage_index`` (prefix ``stage<i>_``) of ``num_layers`` dense layers."""
    block = nn.HybridSequential(prefix='stage%d_' % stage_index)
    with block.name_scope():
        for _ in range(num_layers):
            block.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return block


def _make_transition(num_output_features):
    """Between dense blocks: 1x1 convolution to ``num_output_features``, 2x2 average pooling."""
    transition = nn.HybridSequential(prefix='')
    transition.add(*_bn_relu_conv(num_output_features, 1))
    transition.add(nn.AvgPool2D(pool_size=2, strides=2))
    return transition


class DenseNet(HybridBlock):
    """Dense blocks separated by transitions that halve the channels and the size.

    Parameters
    ----------
    num_init_features : int
        Channels of the stem convolution.
    growth_rate : int
        Channels each dense layer adds.
    block_config : list of int
        Number of dense layers in each dense block.
    bn_size : int, default 4
        The bottleneck 1x1 convolutions have ``bn_size * growth_rate`` channels.
    dropout : float, default 0
        Dropout rate after each dense layer.
    classes : int, default 1000

    Shapes: ``(batch, 3, 224, 224)`` -> ``(batch, classes)``. The final 7x7 average pooling
    needs inputs of at least 221x221; the first input fixes the classifier's input size.

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.DenseNet(num_init_features=8, growth_rate=4, block_config=[2, 2],
    ...                                          classes=10)
    >>> net.output                              # the classifier; its input size is set by the first batch
    Dense(None -> 10, linear)
    """

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                        use_bias=False),
                              nn.BatchNorm(), nn.Activation('relu'),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for index, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout,
                                                    index + 1))
                num_features += num_layers * growth_rate
                if index != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_make_transition(num_features))
            self.features.add(nn.BatchNorm(), nn.Activation('relu'), nn.AvgPool2D(pool_size=7),
                              nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (stem channels, growth rate, dense layers per block)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """DenseNet of depth ``num_layers`` (121, 161, 169 or 201).

    Parameters
    ----------
    num_layers : int
    pretrained, ctx, root, **kwargs
        As for :func:`densenet121`.
    """
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        load_pretrained(net, 'densenet%d' % num_layers, ctx, root)
    return net


def _densenet(num_layers):
    return named_constructor('densenet%d' % num_layers,
                             'DenseNet-%d, a :class:`DenseNet`.' % num_layers,
                             get_densenet, num_layers)


densenet121 = _densenet(121)
densenet161 = _densenet(161)
densenet169 = _densenet(169)
densenet201 = _densenet(201)
