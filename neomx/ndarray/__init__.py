"""``mx.nd``: NDArray, its creation functions, and every registered operator."""
import sys

from .. import operator as _operator  # noqa: F401  (registers every operator)
from . import _internal, contrib, image, linalg, op, random_internal, sparse
from . import register as _register
from .ndarray import (NDArray, array, empty, zeros, ones, full, arange, waitall, from_numpy,
                      from_dlpack, to_dlpack_for_read, to_dlpack_for_write, from_torch)
from .ndarray import _new as _array_from_tensor
from .ndarray import _new_empty_handle  # noqa: F401  (MXNet's mx.nd has it)
from .ndarray import (_DTYPE_MX_TO_NP, _DTYPE_NP_TO_MX, _GRAD_REQ_MAP,  # noqa: F401
                      get_indexing_dispatch_code, get_oshape_of_gather_nd_op,
                      indexing_key_expand_implicit_axes)
from .. import upper_layers as _upper_layers

# custom operators and autograd's Function (lower layers) hand their user code NDArrays
_upper_layers.register('array_from_tensor', _array_from_tensor)
# and sparse inputs and outputs in their own storage (a Custom operator's infer_storage_type)
_upper_layers.register('sparse_array_from_tensor', sparse.from_sparse_tensor)
_operator.NDArray = NDArray     # as MXNet's mx.operator has it
from .. import autograd as _autograd  # noqa: E402
_autograd.NDArray = NDArray     # and mx.autograd
from . import profiled as _profiled  # noqa: E402
# the profiler names operators as MXNet while it records them
_upper_layers.register('profile_operator_names', _profiled.set_profiled)

_contrib_helpers = {_name: getattr(contrib, _name) for _name in contrib.PYTHON_HELPERS}
_register.populate({'op': op, '_internal': _internal, 'contrib': contrib, 'linalg': linalg,
                    'image': image, 'random_internal': random_internal, 'sparse': sparse})
for _name, _helper in _contrib_helpers.items():     # MXNet's Python forms win over the generated ones
    setattr(contrib, _name, _helper)
_self = sys.modules[__name__]
for _name in dir(op):
    if not _name.startswith('__'):
        setattr(_self, _name, getattr(op, _name))

from .functions import *  # noqa: E402,F401,F403  (ufunc-style helpers override op names)
from . import functions as _functions  # noqa: E402
from . import ndarray as _ndarray_module  # noqa: E402
for _name in _functions.__all__:
    setattr(op, _name, getattr(_functions, _name))
    # MXNet defines these helpers in mx.nd's ndarray module, where code imports them from
    setattr(_ndarray_module, _name, getattr(_functions, _name))
from . import methods as _methods  # noqa: E402
_methods.attach()
from . import random  # noqa: E402,F401
from .utils import save, load, load_frombuffer  # noqa: E402,F401

zeros_like, ones_like = op.zeros_like, op.ones_like
from . import numpy  # noqa: E402,F401  (mx.nd.np, filled by neomx.numpy_extension)
from . import numpy as np  # noqa: E402,F401
from . import numpy_extension  # noqa: E402,F401
from . import numpy_extension as npx  # noqa: E402,F401
