"""``mx.contrib``: MXNet's namespace of experimental features.

Its operator namespaces ``mx.contrib.ndarray`` and ``mx.contrib.symbol`` hold the contrib
operators of ``mx.nd.contrib`` and ``mx.sym.contrib`` (``mx.contrib.ndarray.CTCLoss`` is
``mx.nd.contrib.CTCLoss``).
"""
from . import ndarray, symbol

from . import onnx

nd, sym = ndarray, symbol

from . import autograd
from . import io
from . import text
from . import svrg_optimization
from . import tensorboard

__all__ = ['ndarray', 'symbol', 'nd', 'sym', 'onnx', 'autograd', 'io', 'text', 'svrg_optimization', 'tensorboard']
