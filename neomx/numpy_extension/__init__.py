"""``mx.npx``: MXNet's NumPy extension (MXNet 1.9.1's ``mxnet.numpy_extension``).

The neural-network operators that NumPy lacks (``convolution``, ``batch_norm``,
``softmax``, ``pick``, ``reshape`` with MXNet's codes...), taking and returning ``mx.np``
arrays; the switches of NumPy semantics (``set_np``, ``use_np``...); devices; ``save`` and
``load``; :mod:`.random` and :mod:`.image`.

Each operator function is generated from the operator registry, like its ``mx.nd``
counterpart (:data:`neomx.operator.npx.NPX_FUNCTIONS` names the operator behind each):
one definition for ``mx.npx``, ``mx.nd.npx``, ``mx.sym.npx`` and hybridized graphs.

Example
-------
>>> from neomx import np, npx
>>> npx.relu(np.array([-1., 2.]))
array([0., 2.])
>>> npx.reshape(np.ones((2, 3, 4)), (-2, -1)).shape
(2, 12)
"""
import sys as _sys

from ..context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus, gpu_memory_info  # noqa: F401
from ..base import check_call, classproperty, with_metaclass  # noqa: F401
from ..util import (is_np_shape, is_np_array, set_np, reset_np, get_cuda_compute_capability,  # noqa: F401
                    use_np, use_np_array, use_np_shape)
from ..ndarray import waitall  # noqa: F401
from ..ndarray.register import make_function as _make_function
from ..operator import registry as _registry
from ..operator.npx import NPX_FUNCTIONS as _NPX_FUNCTIONS, NPX_IMAGE_FUNCTIONS as _NPX_IMAGE_FUNCTIONS
from ..operator.npx import registered as _registered
from .. import numpy as _np
from .. import ndarray as _nd
from .. import symbol as _sym
from . import image, random  # noqa: F401
from .utils import save, load  # noqa: F401
from . import _namespaces
from ._namespaces import symbol_recorder as _symbol_recorder

__all__ = []


def _npx_function(func_name, op_name, symbol_function):
    spec = _registry.get(op_name)
    function = _make_function(spec, func_name, array_class=_np.ndarray,
                              on_symbol=_symbol_recorder(symbol_function, spec))
    function.__module__ = __name__
    return function


_self = _sys.modules[__name__]
for _name, _op in _registered(_NPX_FUNCTIONS).items():
    setattr(_self, _name, _npx_function(_name, _op, getattr(_sym.npx, _name)))
for _name, _op in _NPX_IMAGE_FUNCTIONS.items():
    setattr(image, _name, _npx_function(_name, _op, getattr(_sym.npx.image, _name)))

_namespaces.fill(_self)

from ._operators_ns import numpy_mode_namespace as _numpy_mode_namespace  # noqa: E402
from ..symbol.numpy import np_symbol as _np_symbol  # noqa: E402

# The ``F`` Gluon blocks receive under NumPy array semantics (see _operators_ns)
EAGER_OPERATORS = _numpy_mode_namespace(_nd, _nd.np, _nd.npx, array_class=_np.ndarray)
SYMBOLIC_OPERATORS = _numpy_mode_namespace(_sym, _sym.np, _sym.npx, np_symbol=_np_symbol)
