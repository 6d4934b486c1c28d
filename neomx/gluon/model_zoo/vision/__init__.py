"""``gluon.model_zoo.vision``: MXNet 1.9.1's image classification networks.

Every network is a HybridBlock mapping normalised RGB images ``(batch, 3, H, W)`` to class
scores ``(batch, classes)``. Constructors (``resnet18_v1()``, ``vgg16_bn()``...) or
:func:`get_model` build them with random weights; ``pretrained=True`` loads MXNet's
ImageNet parameters from ``$MXNET_HOME/models`` (see
:mod:`neomx.gluon.model_zoo.model_store`). Those expect images of at least 224x224
(299x299 for Inception V3), scaled to [0, 1] and normalised with mean
``(0.485, 0.456, 0.406)`` and std ``(0.229, 0.224, 0.225)``.

Parameter names match MXNet's (``resnetv10_stage1_conv0_weight``), so MXNet's parameter
files load with ``load_parameters``.
"""
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403

# get_model's names: the model-store names ('squeezenet1.0', 'mobilenetv2_0.5').
_MODELS = {
    'resnet18_v1': resnet18_v1, 'resnet34_v1': resnet34_v1, 'resnet50_v1': resnet50_v1,
    'resnet101_v1': resnet101_v1, 'resnet152_v1': resnet152_v1,
    'resnet18_v2': resnet18_v2, 'resnet34_v2': resnet34_v2, 'resnet50_v2': resnet50_v2,
    'resnet101_v2': resnet101_v2, 'resnet152_v2': resnet152_v2,
    'vgg11': vgg11, 'vgg13': vgg13, 'vgg16': vgg16, 'vgg19': vgg19,
    'vgg11_bn': vgg11_bn, 'vgg13_bn': vgg13_bn, 'vgg16_bn': vgg16_bn, 'vgg19_bn': vgg19_bn,
    'alexnet': alexnet,
    'densenet121': densenet121, 'densenet161': densenet161, 'densenet169': densenet169,
    'densenet201': densenet201,
    'squeezenet1.0': squeezenet1_0, 'squeezenet1.1': squeezenet1_1,
    'inceptionv3': inception_v3,
    'mobilenet1.0': mobilenet1_0, 'mobilenet0.75': mobilenet0_75, 'mobilenet0.5': mobilenet0_5,
    'mobilenet0.25': mobilenet0_25,
    'mobilenetv2_1.0': mobilenet_v2_1_0, 'mobilenetv2_0.75': mobilenet_v2_0_75,
    'mobilenetv2_0.5': mobilenet_v2_0_5, 'mobilenetv2_0.25': mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """A predefined network by name.

    Parameters
    ----------
    name : str
        Case-insensitive: 'resnet18_v1' ... 'resnet152_v2', 'vgg11' ... 'vgg19_bn',
        'alexnet', 'densenet121/161/169/201', 'squeezenet1.0', 'squeezenet1.1',
        'inceptionv3', 'mobilenet1.0/0.75/0.5/0.25', 'mobilenetv2_1.0/0.75/0.5/0.25'.
    **kwargs
        Passed to the constructor: ``pretrained``, ``ctx``, ``root``, ``classes``...

    Returns
    -------
    HybridBlock

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones).
    """
    name = name.lower()
    if name not in _MODELS:
        raise ValueError('Model %s is not supported. Available options are\n\t%s' % (
            name, '\n\t'.join(sorted(_MODELS))))
    return _MODELS[name](**kwargs)
