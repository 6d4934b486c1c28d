"""SqueezeNet 1.0 and 1.1 (Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x fewer
parameters and <0.5MB model size", arXiv:1602.07360)."""
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ..model_store import load_pretrained
from ._common import named_constructor

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1']

# version -> (stem channels, stem kernel, the layers after the stem's pooling): an int is a
# fire module with that many squeeze channels (and four times as many of each expand kind),
# 'pool' a 3x3 max pooling of stride 2.
_VERSIONS = {'1.0': (96, 7, [16, 16, 32, 'pool', 32, 48, 48, 64, 'pool', 64]),
             '1.1': (64, 3, [16, 16, 'pool', 32, 32, 'pool', 48, 48, 64, 64])}


def _make_fire_conv(channels, kernel_size, padding=0):
    """Convolution followed by ReLU."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation('relu'))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """Fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_fire_conv(squeeze_channels, 1))
    expands = HybridConcurrent(axis=1, prefix='')
    expands.add(_make_fire_conv(expand1x1_channels, 1))
    expands.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(expands)
    return out


def _max_pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """Fire modules between max poolings; a 1x1 convolution to ``classes`` channels and
    13x13 average pooling replace dense layers.

    Parameters
    ----------
    version : str
        '1.0' or '1.1' (fewer operations, same accuracy).
    classes : int, default 1000

    Shapes: ``(batch, 3, 224, 224)`` -> ``(batch, classes)`` (the final pooling expects
    the 13x13 maps of 224x224 inputs).

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.SqueezeNet('1.1', classes=10)
    >>> net.output                              # a 1x1 convolution, 13x13 average pooling, flattening
    HybridSequential(
      (0): Conv2D(None -> 10, kernel_size=(1, 1), stride=(1, 1))
      (1): Activation(relu)
      (2): AvgPool2D(size=(13, 13), stride=(13, 13), padding=(0, 0), ceil_mode=False,
        global_pool=False, pool_type=avg, layout=NCHW)
      (3): Flatten
    )
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in _VERSIONS, \
            'Unsupported SqueezeNet version {version}:1.0 or 1.1 expected'.format(version=version)
        stem_channels, stem_kernel, layers = _VERSIONS[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2),
                              nn.Activation('relu'), _max_pool())
            for layer in layers:
                self.features.add(_max_pool() if layer == 'pool'
                                  else _make_fire(layer, 4 * layer, 4 * layer))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation('relu'),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1').

    Parameters
    ----------
    version : str
    pretrained, ctx, root, **kwargs
        As for :func:`squeezenet1_0`.
    """
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, 'squeezenet%s' % version, ctx, root)
    return net


squeezenet1_0 = named_constructor('squeezenet1_0', 'SqueezeNet 1.0, a :class:`SqueezeNet`.',
                                  get_squeezenet, '1.0')
squeezenet1_1 = named_constructor('squeezenet1_1', 'SqueezeNet 1.1, a :class:`SqueezeNet`.',
                                  get_squeezenet, '1.1')
