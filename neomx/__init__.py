"""neomx: the MXNet 1.x programming model on PyTorch.

``import neomx as mx`` gives MXNet's API: ``mx.nd``, ``mx.autograd``, ``mx.sym``,
``mx.gluon``, ``mx.kv``, ``mx.optimizer``...
"""
__version__ = '1.9.1'

import sys as _sys

from . import base
from .base import MXNetError
from . import context
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import name
from . import error
from . import log
from . import registry
from . import misc
from . import autograd
from . import ndarray
from . import ndarray as nd
from . import numpy
from . import numpy as np
from . import random
from . import test_utils
test_utils.mx = _sys.modules[__name__]     # MXNet's test_utils.mx (see there)
from . import lr_scheduler
from . import optimizer
from . import kvstore
from . import kvstore as kv
from . import initializer
from . import initializer as init
from . import metric
from . import io
from . import gluon
from . import symbol
from . import symbol as sym
nd.CachedOp = symbol.cached_op.CachedOp     # mx.nd.CachedOp runs a Symbol: defined with it
from . import contrib
from . import attribute
from .attribute import AttrScope
from . import executor
from . import executor_manager
from . import notebook
from . import symbol_doc
from . import ndarray_doc
from . import model
from . import module
from . import module as mod
from . import callback
from . import monitor
from . import monitor as mon
from . import visualization
from . import visualization as viz
from . import recordio
from . import image
from . import image as img
from . import rnn
from . import profiler
from . import runtime
from . import util
from . import engine
from . import rtc
from . import random as rnd
from .util import is_np_array, is_np_shape, np_array, np_shape, set_np_shape  # noqa: E402
from .util import use_np, use_np_array, use_np_shape  # noqa: E402
from . import numpy_extension  # noqa: E402
from . import numpy_extension as npx  # noqa: E402
from . import numpy_op_signature  # noqa: E402,F401  (NumPy signatures of mx.np / mx.npx functions)
from . import numpy_dispatch_protocol  # noqa: E402,F401  (official NumPy functions on mx.np arrays)
from . import numpy_op_fallback  # noqa: E402,F401  (NumPy functions as custom operators, as MXNet)
from . import bridge
from . import onnx
