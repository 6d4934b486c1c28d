"""VGG (Simonyan & Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
Recognition", arXiv:1409.1556), optionally with BatchNorm after every convolution."""
from ....context import cpu
from ....initializer import Xavier
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained
from ._common import named_constructor

__all__ = ['VGG',
           'vgg11', 'vgg13', 'vgg16', 'vgg19',
           'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
           'get_vgg']


class VGG(HybridBlock):
    """Groups of 3x3 convolutions, each group ending with 2x2 max pooling, then two
    4096-unit ReLU layers with dropout and the classifier.

    Parameters
    ----------
    layers : list of int
        Number of convolutions in each group.
    filters : list of int
        Channels of each group.
    classes : int, default 1000
    batch_norm : bool, default False
        BatchNorm after every convolution.

    Shapes: ``(batch, 3, H, W)`` -> ``(batch, classes)``, H and W multiples of 32; the
    first dense layer's input size (``512 * H/32 * W/32``) is set by the first input.

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.VGG(layers=[1, 1, 2, 2, 2], filters=[64, 128, 256, 512, 512],
    ...                                     classes=10)
    >>> net.output                              # the classifier; its input size is set by the first batch
    Dense(None -> 10, linear)
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu', weight_initializer='normal',
                                           bias_initializer='zeros'),
                                  nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal', bias_initializer='zeros')

    def _make_features(self, layers, filters, batch_norm):
        """The convolution groups, in a HybridSequential with an empty prefix."""
        features = nn.HybridSequential(prefix='')
        for num_convs, channels in zip(layers, filters):
            for _ in range(num_convs):
                # He initialisation: gaussian with variance 2 / fan_out.
                features.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                       weight_initializer=Xavier(rnd_type='gaussian',
                                                                 factor_type='out', magnitude=2),
                                       bias_initializer='zeros'))
                if batch_norm:
                    features.add(nn.BatchNorm())
                features.add(nn.Activation('relu'))
            features.add(nn.MaxPool2D(strides=2))
        return features

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (convolutions per group, channels per group)
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """VGG of depth ``num_layers`` (11, 13, 16 or 19).

    Parameters
    ----------
    num_layers : int
    pretrained, ctx, root, **kwargs
        As for :func:`vgg11`; ``batch_norm=True`` selects the ``_bn`` variant.
    """
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        load_pretrained(net, 'vgg%d%s' % (num_layers, suffix), ctx, root)
    return net


def _get_vgg_bn(num_layers, **kwargs):
    kwargs['batch_norm'] = True
    return get_vgg(num_layers, **kwargs)


def _vgg(num_layers, batch_norm):
    if batch_norm:
        return named_constructor('vgg%d_bn' % num_layers,
                                 'VGG-%d with BatchNorm, a :class:`VGG`.' % num_layers,
                                 _get_vgg_bn, num_layers)
    return named_constructor('vgg%d' % num_layers, 'VGG-%d, a :class:`VGG`.' % num_layers,
                             get_vgg, num_layers)


vgg11 = _vgg(11, batch_norm=False)
vgg13 = _vgg(13, batch_norm=False)
vgg16 = _vgg(16, batch_norm=False)
vgg19 = _vgg(19, batch_norm=False)
vgg11_bn = _vgg(11, batch_norm=True)
vgg13_bn = _vgg(13, batch_norm=True)
vgg16_bn = _vgg(16, batch_norm=True)
vgg19_bn = _vgg(19, batch_norm=True)
