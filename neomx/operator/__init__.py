"""Operator definitions. Importing this package registers every operator family.

It is also MXNet's ``mx.operator``: custom operators written in Python (``CustomOp``,
``CustomOpProp``, ``register``), see :mod:`.custom`, and the older ``NumpyOp`` family, see
:mod:`.python_op`.
"""
from . import registry
# Each module registers one family of operators (registration side effects).
from . import (creation, elemwise, reduce, linalg, shape, indexing, random, random_pdf, optimizer_ops,  # noqa: F401
               nn_conv, nn_activation, nn_norm, nn_output, sequence, rnn, image, image_cv, contrib_misc,
               detection, multibox, hawkes, spectral, spatial, custom, control_flow, deformable, correlation,
               histogram, quantization, quantized_ops, psroi_pooling, rroi_align, proposal,
               np_elemwise, np_reduce, np_shape, np_creation, np_misc, np_random, np_linalg, npx, sparse_ops)
# Older operator names (MXNet 0.x graphs), registered last: aliases of the operators above.
from . import legacy  # noqa: F401
# Storage-type rules (MXNet's FInferStorageType) of the operators above, last: they attach to the specs.
from . import storage  # noqa: F401
# DGL's graph operators: csr graphs only, so they come with their storage rules.
from . import dgl_graph  # noqa: F401
# Custom operators' storage types come from their props (infer_storage_type).
from . import custom_storage  # noqa: F401
# The nodes MXNet's Python frontend records (_CustomFunction...), some running the legacy Python operators.
from . import frontend_nodes  # noqa: F401
from .custom import *  # noqa: F401,F403  pylint: disable=wildcard-import
from .python_op import PythonOp, NumpyOp, NDArrayOp  # noqa: F401
import ctypes  # noqa: E402,F401  pylint: disable=wrong-import-order
from ctypes import POINTER, pointer  # noqa: E402,F401  pylint: disable=wrong-import-order
from threading import Lock  # noqa: E402,F401  pylint: disable=wrong-import-order
from ..base import (NDArrayHandle, MXCallbackList, c_array, c_array_buf, c_str, check_call,  # noqa: F401,E402
                    ctypes2numpy_shared, py_str)
from ..util import is_np_array  # noqa: F401,E402
# MXNet's mx.operator also has NDArray, which neomx.ndarray (a layer above) puts here.

# ``from mxnet.operator import *`` gives MXNet's custom-operator API, not this package's
# submodules (``random`` would shadow Python's own module in the importing namespace); as
# MXNet's it also gives ``ctypes`` and ``NDArrayHandle``, which monitor callbacks use
__all__ = ['CustomOp', 'CustomOpProp', 'register', 'get_all_registered_operators',
           'get_operator_arguments', 'OperatorArguments', 'PythonOp', 'NumpyOp', 'NDArrayOp',
           'NDArrayHandle', 'ctypes']
