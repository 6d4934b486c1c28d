"""What every generated ``mx.nd`` function does after its operator ran: wrap the results,
write them into ``out=``, or turn the operator's failure into MXNet's error."""
import torch

from ..base import MXNetError
from ..operator import registry
from .ndarray import NDArray, _new, _call, _check_inplace

# What an implementation raises for bad input: reported as MXNetError naming the operator.
IMPL_ERRORS = (RuntimeError, ValueError, IndexError, TypeError)


class OperatorIndexError(MXNetError, IndexError):
    """An index out of range in an operator (``gather_nd``...): an MXNetError that is also an
    IndexError, the type MXNet raises for it."""


def input_names(spec, arrays):
    return [registry.variadic_name(i) for i in range(len(arrays))] if spec.variadic else spec.inputs


def op_error(spec, arrays, err):
    """The MXNetError for ``err`` raised by ``spec``'s implementation on ``arrays``."""
    shapes = ', '.join('%s=%s' % (n, tuple(a._t.shape)) for n, a in zip(input_names(spec, arrays), arrays)
                       if isinstance(a, NDArray))
    msg = str(err).split('\n')[0]
    kind = OperatorIndexError if isinstance(err, IndexError) else MXNetError
    return kind('%s: %s (inputs: %s)' % (spec.name, msg, shapes or 'none'))


def write_out(out, results):
    """Write results into user-given ``out`` arrays (by copy, keeping their memory)."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    for o, r in zip(outs, results):
        _check_inplace(o)
        if r.requires_grad:
            o._t = r
        else:
            _call(torch.Tensor.copy_, o._t, r)
    return out


def results(res, out, ctx, nvis, new=_new):
    """The call's value for an implementation's sequence of results ``res`` of which the
    first ``nvis`` are visible: one array, a list of them, or ``out`` written. ``new``
    wraps a tensor (``ndarray.constructor`` of the interface's array class)."""
    if out is not None:
        return write_out(out, res[:nvis])
    if nvis == 1:
        return new(res[0], ctx)
    return [new(r, ctx) for r in res[:nvis]] if nvis else []


_LEGACY_OPERATOR = ('Operator `%s` registered in backend is known as `%s` in Python. This is a legacy '
                    'operator which can only accept legacy ndarrays, while received an MXNet numpy '
                    'ndarray. Please call `as_nd_ndarray()` upon the numpy ndarray to convert it to a '
                    'legacy ndarray, and then feed the converted array to this operator.')
_NUMPY_OPERATOR = ('Operator `%s` registered in backend is known as `%s` in Python. This is a numpy '
                   'operator which can only accept MXNet numpy ndarrays, while received a legacy '
                   'ndarray. Please ensure that you have activated numpy semantics by calling '
                   '`npx.set_np()` in your code. If you still see this error with numpy semantics '
                   'activated, please call `as_np_ndarray()` upon the legacy ndarray to convert it '
                   'to an MXNet numpy ndarray, and then feed the converted array to this operator.')


def check_interface(spec, func_name, arrays, np_arrays):
    """TypeError, MXNet's, where ``arrays`` hold an array of the other interface than the
    function's (``np_arrays``: the function is ``mx.np``/``mx.npx``'s)."""
    for a in arrays:
        if a is not None and a._is_np_array is not np_arrays and isinstance(a, NDArray):
            raise TypeError((_NUMPY_OPERATOR if np_arrays else _LEGACY_OPERATOR) % (spec.name, func_name))
