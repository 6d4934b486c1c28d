"""``mx.nd.CachedOp``: a Symbol made callable on NDArrays, MXNet's imperative graph handle."""
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .graph import invoke

__all__ = ['CachedOp']


class CachedOp:
    """A Symbol run imperatively: ``op(*inputs)`` computes its outputs from NDArrays given
    in ``sym.list_inputs()`` order, recorded inside ``autograd.record()`` like any operator.
    The graph is compiled once per context and reused across calls and input shapes.

    Parameters
    ----------
    sym : Symbol
    flags : sequence of (str, value)
        MXNet's CachedOp options (``static_alloc``...): accepted; they tune memory planning
        that torch does its own way.

    Example
    -------
    >>> import neomx as mx
    >>> op = CachedOp(mx.sym.var('a') * 2 + mx.sym.var('b'))
    >>> op(mx.nd.ones(2), mx.nd.ones(2)).asnumpy()
    array([3., 3.], dtype=float32)
    """
    __slots__ = ('_sym', '_names', 'flags')

    def __init__(self, sym, flags=()):
        self._sym = sym
        self._names = sym.list_inputs()
        self.flags = tuple(flags)

    def __call__(self, *args, **kwargs):
        """The outputs (one NDArray, or a list for several); with ``out=`` they are written
        into the given arrays, which are returned."""
        out = kwargs.pop('out', None)
        if kwargs:
            raise TypeError('CachedOp.__call__ got unexpected keyword argument(s): ' + ', '.join(kwargs))
        if len(args) != len(self._names):
            raise MXNetError('CachedOp: the symbol takes %d inputs (%s), got %d'
                             % (len(self._names), ', '.join(self._names), len(args)))
        for name, arg in zip(self._names, args):
            if not isinstance(arg, NDArray):
                raise TypeError('CachedOp: input %s must be an NDArray, got %s' % (name, type(arg).__name__))
        outputs = invoke(self._sym, dict(zip(self._names, args)))
        if out is None:
            return outputs[0] if len(outputs) == 1 else outputs
        targets = [out] if isinstance(out, NDArray) else list(out)
        if len(targets) != len(outputs):
            raise MXNetError('CachedOp: %d outputs, but out= gives %d arrays' % (len(outputs), len(targets)))
        for target, value in zip(targets, outputs):
            target[:] = value
        return out

    def _register_op_hook(self, callback, monitor_all=False):
        raise MXNetError('CachedOp._register_op_hook is not supported by neomx; use '
                         'Executor.set_monitor_callback or HybridBlock.register_op_hook')


