"""``mx.contrib``: MXNet's namespace of experimental features.

Its operator namespaces ``mx.contrib.ndarray`` and ``mx.contrib.symbol`` hold the contrib
operators of ``mx.nd.contrib`` and ``mx.sym.contrib`` (``mx.contrib.ndarray.CTCLoss`` is
``mx.nd.contrib.CTCLoss``).
"""
from . import ndarray, symbol

from . import onnx

nd, sym = ndarray, symbol

__all__ = ['ndarray', 'symbol', 'nd', 'sym', 'onnx']
