"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture for Computer Vision",
arXiv:1512.00567).

A convolution is written ``(channels, kernel_size[, strides[, padding]])``; a branch
``(pool, conv, conv...)`` with ``pool`` one of None, 'avg' (3x3, stride 1, padded) or
'max' (3x3, stride 2). Each mixed block concatenates its branches on the channel axis and
names its layers under its own prefix (``inception30_A1_conv0_weight``).
"""
from functools import partial

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ..model_store import load_pretrained
from ._common import PRETRAINED_DOC

__all__ = ['Inception3', 'inception_v3']


def _make_basic_conv(channels, kernel_size, strides=1, padding=0):
    """Convolution without bias, BatchNorm (epsilon 1e-3), ReLU."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, strides, padding, use_bias=False),
            nn.BatchNorm(epsilon=0.001), nn.Activation('relu'))
    return out


def _make_branch(pool, *convs):
    """Optional pooling, then a basic convolution for each ``(channels, kernel...)`` spec."""
    out = nn.HybridSequential(prefix='')
    if pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        out.add(_make_basic_conv(*conv))
    return out


def _make_mixed(prefix, *branches):
    """Concatenation of branches, built inside the block's scope: each is a
    ``(pool, conv...)`` spec or a function returning a block."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for branch in branches:
            out.add(branch() if callable(branch) else _make_branch(*branch))
    return out


def _make_A(pool_features, prefix):
    return _make_mixed(prefix,
                       (None, (64, 1)),
                       (None, (48, 1), (64, 5, 1, 2)),
                       (None, (64, 1), (96, 3, 1, 1), (96, 3, 1, 1)),
                       ('avg', (pool_features, 1)))


def _make_B(prefix):
    return _make_mixed(prefix,
                       (None, (384, 3, 2)),
                       (None, (64, 1), (96, 3, 1, 1), (96, 3, 2)),
                       ('max',))


def _make_C(channels_7x7, prefix):
    c7 = channels_7x7
    # A 7x7 receptive field from 1x7 and 7x1 convolutions.
    return _make_mixed(prefix,
                       (None, (192, 1)),
                       (None, (c7, 1), (c7, (1, 7), 1, (0, 3)), (192, (7, 1), 1, (3, 0))),
                       (None, (c7, 1), (c7, (7, 1), 1, (3, 0)), (c7, (1, 7), 1, (0, 3)),
                        (c7, (7, 1), 1, (3, 0)), (192, (1, 7), 1, (0, 3))),
                       ('avg', (192, 1)))


def _make_D(prefix):
    return _make_mixed(prefix,
                       (None, (192, 1), (320, 3, 2)),
                       (None, (192, 1), (192, (1, 7), 1, (0, 3)), (192, (7, 1), 1, (3, 0)),
                        (192, 3, 2)),
                       ('max',))


def _make_split_branch(*convs):
    """A branch of ``convs`` that ends in parallel 1x3 and 3x1 convolutions (384 each)."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_branch(None, *convs))
    split = HybridConcurrent(axis=1, prefix='')
    split.add(_make_branch(None, (384, (1, 3), 1, (0, 1))),
              _make_branch(None, (384, (3, 1), 1, (1, 0))))
    out.add(split)
    return out


def _make_E(prefix):
    return _make_mixed(prefix,
                       (None, (320, 1)),
                       partial(_make_split_branch, (384, 1)),
                       partial(_make_split_branch, (448, 1), (384, 3, 1, 1)),
                       ('avg', (192, 1)))


class Inception3(HybridBlock):
    """Inception V3: a convolutional stem, mixed blocks A1-A3, B, C1-C4, D, E1-E2, 8x8
    average pooling, dropout and the classifier (the auxiliary classifier is not built).

    Parameters
    ----------
    classes : int, default 1000

    Shapes: ``(batch, 3, 299, 299)`` -> ``(batch, classes)`` (the final pooling expects
    the 8x8 maps of 299x299 inputs).

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.Inception3(classes=10)
    >>> net.output                              # the classifier; its input size is set by the first batch
    Dense(None -> 10, linear)
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(_make_basic_conv(32, 3, 2), _make_basic_conv(32, 3),
                              _make_basic_conv(64, 3, 1, 1), nn.MaxPool2D(pool_size=3, strides=2),
                              _make_basic_conv(80, 1), _make_basic_conv(192, 3),
                              nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_A(32, 'A1_'), _make_A(64, 'A2_'), _make_A(64, 'A3_'),
                              _make_B('B_'))
            self.features.add(_make_C(128, 'C1_'), _make_C(160, 'C2_'), _make_C(160, 'C3_'),
                              _make_C(192, 'C4_'))
            self.features.add(_make_D('D_'), _make_E('E1_'), _make_E('E2_'))
            self.features.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=None, **kwargs):
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, 'inceptionv3', ctx, root)
    return net


inception_v3.__doc__ = 'Inception V3, an :class:`Inception3`.\n' + PRETRAINED_DOC
