"""``gluon.contrib.cnn``: deformable convolution layers (v1 and the modulated v2)."""
from . import conv_layers
from .conv_layers import *  # noqa: F401,F403
