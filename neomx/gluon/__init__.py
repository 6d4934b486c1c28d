"""``mx.gluon``: the imperative/hybrid neural-network library."""
from . import parameter
from .parameter import *  # noqa: F401,F403
from . import block
from .block import *  # noqa: F401,F403
from . import nn, rnn, loss, data, utils, contrib, model_zoo
from . import trainer, checkpoint
from .trainer import *  # noqa: F401,F403
