"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells, bucketing sentence iterator and
checkpoint helpers."""
from . import io, rnn, rnn_cell
from .io import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403
