"""``mx.np``: MXNet's NumPy-compatible interface (MXNet 1.9.1's ``mxnet.numpy``).

``mx.np.ndarray`` (:mod:`._array`) wraps a torch tensor with NumPy semantics; the functions
(:mod:`.multiarray`) are generated from the operator registry's ``_np_*``/``_npi_*``
operators, the same definitions ``mx.nd``, ``mx.sym`` and hybridized graphs use. Functions
MXNet hands to official NumPy (:mod:`.fallback`) are NumPy's own, dispatched back here
through ``__array_function__``.
"""
from ._array import ndarray, array, empty, zeros, ones, full, arange
from . import multiarray
from .multiarray import *  # noqa: F401,F403
from . import utils, fallback, fallback_linalg, linalg, random, function_base, io, stride_tricks, arrayprint
from .utils import *  # noqa: F401,F403
from .fallback import *  # noqa: F401,F403
from .function_base import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .stride_tricks import *  # noqa: F401,F403
from .arrayprint import *  # noqa: F401,F403
from . import dispatch  # noqa: F401  (ndarray.__array_function__ / __array_ufunc__)
