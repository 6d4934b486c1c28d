"""``mx.contrib``: MXNet's namespace of experimental features.

Its operator namespaces are those of ``mx.nd.contrib`` and ``mx.sym.contrib``
(``mx.contrib.ndarray.CTCLoss`` is ``mx.nd.contrib.CTCLoss``).
"""
from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol

nd, sym = ndarray, symbol

from . import autograd
from . import io
from . import text
from . import svrg_optimization
from . import tensorboard

__all__ = ['ndarray', 'symbol', 'nd', 'sym', 'autograd', 'io', 'text', 'svrg_optimization', 'tensorboard']
