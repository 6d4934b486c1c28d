"""``gluon.contrib.rnn``: convolutional recurrent cells, variational dropout and the
projected LSTM cell."""
from . import conv_rnn_cell, rnn_cell
from .conv_rnn_cell import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403

__all__ = conv_rnn_cell.__all__ + rnn_cell.__all__
