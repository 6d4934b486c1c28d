"""``gluon.rnn``: recurrent layers (fused, on the ``RNN`` operator) and cells (step by step)."""
from . import rnn_cell, rnn_layer
from .rnn_cell import *  # noqa: F401,F403
from .rnn_layer import *  # noqa: F401,F403
