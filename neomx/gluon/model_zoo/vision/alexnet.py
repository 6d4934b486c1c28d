"""AlexNet (Krizhevsky, "One weird trick for parallelizing convolutional neural networks",
arXiv:1404.5997): the single-tower variant."""
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import load_pretrained
from ._common import PRETRAINED_DOC

__all__ = ['AlexNet', 'alexnet']

# (channels, kernel, stride, padding, followed by 3x3/2 max pooling) of each convolution
_CONVOLUTIONS = [(64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
                 (256, 3, 1, 1, False), (256, 3, 1, 1, True)]


class AlexNet(HybridBlock):
    """Five ReLU convolutions with three max poolings, two 4096-unit ReLU layers with
    dropout, then the classifier.

    Parameters
    ----------
    classes : int, default 1000

    Shapes: ``(batch, 3, H, W)`` -> ``(batch, classes)``, H and W at least 63; the first
    dense layer's input size is set by the first input (``256 * 6 * 6`` at 224x224).

    Example
    -------
    >>> net = mx.gluon.model_zoo.vision.AlexNet(classes=10)
    >>> net.output                              # the classifier; its input size is set by the first batch
    Dense(None -> 10, linear)
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            for channels, kernel, stride, padding, pooled in _CONVOLUTIONS:
                self.features.add(nn.Conv2D(channels, kernel_size=kernel, strides=stride,
                                            padding=padding, activation='relu'))
                if pooled:
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(nn.Flatten())
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu'), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, 'alexnet', ctx, root)
    return net


alexnet.__doc__ = 'AlexNet, an :class:`AlexNet`.\n' + PRETRAINED_DOC
