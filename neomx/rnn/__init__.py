"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells, bucketing sentence iterator and
checkpoint helpers."""
from . import io, rnn, rnn_cell
from .io import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403

# names MXNet's mx.rnn also holds (its modules import them)
from ..base import numeric_types, string_types  # noqa: E402,F401
from ..io import DataBatch, DataDesc, DataIter  # noqa: E402,F401
from ..model import load_checkpoint, save_checkpoint  # noqa: E402,F401
