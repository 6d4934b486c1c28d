"""Automatic mixed precision (``mx.contrib.amp``): see :mod:`.amp`."""
from . import amp, lists, loss_scaler
from .amp import *  # noqa: F401,F403
