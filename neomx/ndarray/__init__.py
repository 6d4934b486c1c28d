"""``mx.nd``: NDArray, its creation functions, and every registered operator."""
import sys

from .. import operator as _operator  # noqa: F401  (registers every operator)
from . import _internal, contrib, image, linalg, op, random_internal, sparse
from . import register as _register
from .ndarray import (NDArray, array, empty, zeros, ones, full, arange, waitall, from_numpy,
                      from_dlpack, to_dlpack_for_read, to_dlpack_for_write, from_torch)
from .ndarray import _new as _array_from_tensor
from .. import upper_layers as _upper_layers

# custom operators and autograd's Function (lower layers) hand their user code NDArrays
_upper_layers.register('array_from_tensor', _array_from_tensor)
from . import profiled as _profiled  # noqa: E402
# the profiler names operators as MXNet while it records them
_upper_layers.register('profile_operator_names', _profiled.set_profiled)

_register.populate({'op': op, '_internal': _internal, 'contrib': contrib, 'linalg': linalg,
                    'image': image, 'random_internal': random_internal, 'sparse': sparse})
_self = sys.modules[__name__]
for _name in dir(op):
    if not _name.startswith('__'):
        setattr(_self, _name, getattr(op, _name))

from .functions import *  # noqa: E402,F401,F403  (ufunc-style helpers override op names)
from . import functions as _functions  # noqa: E402
for _name in _functions.__all__:
    setattr(op, _name, getattr(_functions, _name))
from . import methods as _methods  # noqa: E402
_methods.attach()
from . import random  # noqa: E402,F401
from .utils import save, load, load_frombuffer  # noqa: E402,F401

zeros_like, ones_like = op.zeros_like, op.ones_like
