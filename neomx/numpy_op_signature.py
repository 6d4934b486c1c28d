"""NumPy-style signatures for the functions of the ``_np_*``/``_npx_*`` operators (MXNet
1.9.1's ``mxnet.numpy_op_signature``): ``_get_builtin_op('_np_sum')`` is ``mx.np.sum``, and
each such function's ``__signature__`` is the one :mod:`neomx._numpy_op_doc` documents.
"""
import inspect

from . import _numpy_op_doc
from . import numpy as mx_np
from . import numpy_extension as mx_npx

__all__ = []

_SUBMODULES = ('_random_', '_linalg_', '_image_')


def _get_builtin_op(op_name):
    """The ``mx.np``/``mx.npx`` function of operator ``op_name`` (None for other operators);
    ValueError where it does not exist."""
    if op_name.startswith('_np_'):
        root, prefix = mx_np, '_np_'
    elif op_name.startswith('_npx_'):
        root, prefix = mx_npx, '_npx_'
    else:
        return None
    rest = op_name[len(prefix):]
    module = root
    for sub in _SUBMODULES:
        if rest.startswith(sub):
            module = getattr(root, sub[1:-1], None)
            if module is None:
                raise ValueError('Cannot find submodule %s in module %s' % (sub[1:-1], root.__name__))
            rest = rest[len(sub):]
            break
    op = getattr(module, rest, None)
    if op is None:
        raise ValueError('Cannot find operator %s in module %s' % (rest, root.__name__))
    return op


def _register_op_signatures():
    for op_name in dir(_numpy_op_doc):
        try:
            op = _get_builtin_op(op_name)
        except ValueError:
            continue
        if op is not None:
            try:
                op.__signature__ = inspect.signature(getattr(_numpy_op_doc, op_name))
            except AttributeError:      # a builtin or method that takes no attributes
                pass


_register_op_signatures()
