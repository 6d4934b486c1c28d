"""Which official NumPy functions and ufuncs dispatch to ``mx.np`` when given ``mx.np``
arrays (MXNet 1.9.1's ``mxnet.numpy_dispatch_protocol``): the lists below, as MXNet's;
every other NumPy function runs NumPy's own code on copies (see ``neomx.numpy.dispatch``).
"""
import functools

import numpy as _np

from . import numpy as mx_np
from .numpy.dispatch import NUMPY_ARRAY_FUNCTION_DICT, NUMPY_ARRAY_UFUNC_DICT

__all__ = ['with_array_function_protocol', 'with_array_ufunc_protocol', '_NUMPY_ARRAY_FUNCTION_LIST',
           '_NUMPY_ARRAY_UFUNC_LIST']


def _protocol_runner(kind):
    def decorator(func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            try:
                func(*args, **kwargs)
            except Exception as err:  # pylint: disable=broad-except
                raise RuntimeError('Running function %s with NumPy array %s protocol failed with exception %s'
                                   % (func.__name__, kind, err)) from err
        return run
    return decorator


def with_array_function_protocol(func):
    """Decorator for functions that use NumPy's array function protocol: runs ``func``,
    reporting its failure as a RuntimeError naming it."""
    return _protocol_runner('function')(func)


def with_array_ufunc_protocol(func):
    """Decorator for functions that use NumPy's array ufunc protocol: runs ``func``,
    reporting its failure as a RuntimeError naming it."""
    return _protocol_runner('ufunc')(func)


_NUMPY_ARRAY_FUNCTION_LIST = [
    'all', 'any', 'sometrue', 'argmin', 'argmax', 'around', 'round', 'round_', 'argsort', 'sort', 'append',
    'broadcast_arrays', 'broadcast_to', 'clip', 'concatenate', 'copy', 'cumsum', 'diag', 'diagonal', 'diagflat',
    'dot', 'expand_dims', 'fix', 'flip', 'flipud', 'fliplr', 'inner', 'insert', 'max', 'amax', 'mean', 'min',
    'amin', 'nonzero', 'ones_like', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'prod', 'product', 'ravel',
    'repeat', 'reshape', 'roll', 'split', 'array_split', 'hsplit', 'vsplit', 'dsplit', 'squeeze', 'stack', 'std',
    'sum', 'swapaxes', 'take', 'tensordot', 'tile', 'transpose', 'unique', 'unravel_index', 'diag_indices_from',
    'delete', 'var', 'vdot', 'vstack', 'column_stack', 'hstack', 'dstack', 'zeros_like', 'linalg.norm',
    'linalg.cholesky', 'linalg.inv', 'linalg.solve', 'linalg.tensorinv', 'linalg.tensorsolve', 'linalg.pinv',
    'linalg.eigvals', 'linalg.eig', 'linalg.eigvalsh', 'linalg.eigh', 'shape', 'trace', 'tril', 'meshgrid',
    'outer', 'einsum', 'polyval', 'shares_memory', 'may_share_memory', 'quantile', 'percentile', 'diff',
    'ediff1d', 'resize', 'where', 'full_like', 'bincount', 'empty_like', 'nan_to_num', 'isnan', 'isfinite',
    'isposinf', 'isneginf', 'isinf', 'pad',
]

_NUMPY_ARRAY_UFUNC_LIST = [
    'abs', 'fabs', 'add', 'arctan2', 'copysign', 'degrees', 'hypot', 'lcm', 'subtract', 'multiply',
    'true_divide', 'negative', 'power', 'mod', 'matmul', 'absolute', 'rint', 'sign', 'exp', 'log', 'log2',
    'log10', 'expm1', 'sqrt', 'square', 'cbrt', 'reciprocal', 'invert', 'bitwise_not', 'remainder', 'sin', 'cos',
    'tan', 'sinh', 'cosh', 'tanh', 'arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh', 'maximum',
    'minimum', 'ceil', 'trunc', 'floor', 'bitwise_and', 'bitwise_xor', 'bitwise_or', 'logical_not', 'equal',
    'not_equal', 'less', 'less_equal', 'greater', 'greater_equal',
]


def _official(name):
    """NumPy's function ``name`` ('linalg.norm' too), or None where this NumPy lacks it."""
    module = _np
    for part in name.split('.'):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


# Only the names this NumPy has (NumPy 2 removed round_, product, sometrue...): the lists are
# what dispatches, and what code walking them (MXNet's own tests do) can look up in NumPy.
_NUMPY_ARRAY_FUNCTION_LIST = [n for n in _NUMPY_ARRAY_FUNCTION_LIST if _official(n) is not None]
_NUMPY_ARRAY_UFUNC_LIST = [n for n in _NUMPY_ARRAY_UFUNC_LIST if _official(n) is not None]


def _register_array_function():
    """Map each listed official NumPy function (those this NumPy has: NumPy 2 removed a few
    aliases) to ``mx.np``'s."""
    for op_name in _NUMPY_ARRAY_FUNCTION_LIST:
        parts = op_name.split('.')
        mx_module, onp_module = mx_np, _np
        for sub in parts[:-1]:
            mx_module, onp_module = getattr(mx_module, sub), getattr(onp_module, sub)
        onp_op = getattr(onp_module, parts[-1], None)
        if onp_op is not None:
            NUMPY_ARRAY_FUNCTION_DICT[onp_op] = getattr(mx_module, parts[-1])


def _register_array_ufunc():
    for op_name in _NUMPY_ARRAY_UFUNC_LIST:
        NUMPY_ARRAY_UFUNC_DICT[op_name] = getattr(mx_np, op_name)
    # NumPy 2 names some ufuncs differently: ufunc.__name__ is what dispatch sees
    for alias, name in (('divide', 'true_divide'), ('bitwise_invert', 'invert'), ('bitwise_left_shift', None)):
        if name is not None:
            NUMPY_ARRAY_UFUNC_DICT.setdefault(alias, getattr(mx_np, name))


_register_array_function()
_register_array_ufunc()
