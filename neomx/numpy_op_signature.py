"""NumPy signatures for the functions of MXNet's built-in ``_np_*`` / ``_npx_*`` operators
(MXNet 1.9.1's ``mxnet.numpy_op_signature``): ``inspect.signature(mx.np.sum)`` shows
NumPy's parameters, taken from :mod:`neomx._numpy_op_doc`."""
import inspect

from . import _numpy_op_doc
from . import numpy as mx_np
from . import numpy_extension as mx_npx

__all__ = []

_NP_OP_SUBMODULES = ('_random_', '_linalg_')
_NPX_OP_SUBMODULES = ('_image_', '_random_')


def _get_builtin_op(op_name):
    """The ``mx.np``/``mx.npx`` function of operator ``op_name`` (``_np_sum`` -> ``mx.np.sum``,
    ``_np__random_shuffle`` -> ``mx.np.random.shuffle``); None for other names.

    Raises
    ------
    ValueError
        When the submodule or the function is missing.
    """
    if op_name.startswith('_np_'):
        root, prefix, submodules = mx_np, '_np_', _NP_OP_SUBMODULES
    elif op_name.startswith('_npx_'):
        root, prefix, submodules = mx_npx, '_npx_', _NPX_OP_SUBMODULES
    else:
        return None
    rest = op_name[len(prefix):]
    submodule = next((s for s in submodules if rest.startswith(s)), '')
    module = root
    if submodule:
        module = getattr(root, submodule[1:-1], None)
        if module is None:
            raise ValueError('Cannot find submodule {} in module {}'.format(submodule[1:-1], root.__name__))
    op = getattr(module, rest[len(submodule):], None)
    if op is None:
        raise ValueError('Cannot find operator {} in module {}'.format(rest, root.__name__))
    return op


def _register_op_signatures():
    for op_name in dir(_numpy_op_doc):
        try:
            op = _get_builtin_op(op_name)
        except ValueError:      # a function mx.np does not have (yet)
            continue
        if op is not None:
            try:
                op.__signature__ = inspect.signature(getattr(_numpy_op_doc, op_name))
            except AttributeError:      # a builtin or a bound method: leave it
                pass


_register_op_signatures()
