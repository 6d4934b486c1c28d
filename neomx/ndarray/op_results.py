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


def results(res, out, ctx, nvis):
    """The call's value for an implementation's sequence of results ``res`` of which the
    first ``nvis`` are visible: one array, a list of them, or ``out`` written."""
    if out is not None:
        return write_out(out, res[:nvis])
    if nvis == 1:
        return _new(res[0], ctx)
    return [_new(r, ctx) for r in res[:nvis]] if nvis else []
