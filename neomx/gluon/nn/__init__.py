"""``gluon.nn``: neural-network layers."""
from ..block import Block, HybridBlock, SymbolBlock  # noqa: F401  (MXNet exposes them here too)
from .activations import *  # noqa: F401,F403
from .basic_layers import *  # noqa: F401,F403
from .norm_layers import *  # noqa: F401,F403
from .conv_layers import *  # noqa: F401,F403
