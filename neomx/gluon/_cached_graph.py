"""The graphs behind hybridized blocks: tracing, binding to parameters, replay.

A hybridized HybridBlock traces ``hybrid_forward(mx.sym, ...)`` once per input structure
into a Symbol (the IR, and what ``export`` writes). Running it compiles the Symbol once per
context into a flat Python function over the registry's torch implementations
(:mod:`neomx.symbol.graph`), whose arguments are the data tensors followed by the
parameter tensors, bound by position. A call then costs flattening the inputs, one list of
tensors and one call per operator: no re-tracing, no per-operator dispatch.

The Symbol does not depend on shapes, dtypes or training mode (operators read
``autograd.is_training()`` when they run), so neither does the cache; only the nesting of
the inputs (and which are None) selects a graph.
"""
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.ndarray import _new
from ..symbol import Group, Symbol, var
from ..symbol.graph import compiled
from . import parameter as _parameter
from .parameter import shape_is_known

__all__ = ['flatten', 'regroup', 'trace', 'CachedGraph']


def flatten(value):
    """Nested lists/tuples of arrays -> (flat list, hashable format to rebuild the nesting).

    A leaf (NDArray, Symbol of one output) has format 0 and None has format None, so the
    format also tells which inputs are absent; a Symbol of ``n > 1`` outputs is flattened
    into its outputs with format ``n``; a sequence has the tuple of its items' formats.
    """
    if isinstance(value, (list, tuple)):
        flat, fmt = [], []
        for item in value:
            items, item_fmt = flatten(item)
            flat.extend(items)
            fmt.append(item_fmt)
        return flat, tuple(fmt)
    if value is None:
        return [value], None
    if isinstance(value, Symbol) and len(value) > 1:
        return list(value), len(value)
    return [value], 0


def regroup(flat, fmt):
    """Inverse of :func:`flatten`: (nested lists, the unused rest of ``flat``)."""
    if fmt is None or fmt == 0:
        return flat[0], flat[1:]
    if isinstance(fmt, int):
        return list(flat[:fmt]), flat[fmt:]
    out = []
    for item_fmt in fmt:
        item, flat = regroup(flat, item_fmt)
        out.append(item)
    return out, flat


def input_variables(flat_args):
    """MXNet's names for the inputs of a traced graph: ``data`` when one input is given,
    else ``data0``, ``data1``...; None inputs get no variable."""
    given = sum(a is not None for a in flat_args)
    names = iter(['data'] if given == 1 else ['data%d' % i for i in range(given)])
    return [None if a is None else var(next(names)) for a in flat_args]


def trace(block, flat_args, in_fmt):
    """Trace ``block.hybrid_forward`` with ``F = mx.sym`` on inputs shaped like ``flat_args``.

    Returns
    -------
    CachedGraph
    """
    variables = input_variables(flat_args)
    grouped = regroup(variables, in_fmt)[0]
    outputs = block._forward_symbolic(grouped[0], tuple(grouped[1:]))
    flat_out, out_fmt = flatten(outputs)
    return CachedGraph(block, variables, Group(flat_out), out_fmt)


class CachedGraph:
    """A traced Symbol with its inputs bound: data by position in the flat arguments,
    parameters by name among the block's parameters.

    Parameters
    ----------
    block : HybridBlock
        Owner of the parameters (``collect_params()``), named in error messages.
    variables : list of Symbol or None
        The variable of each flat input argument (None for arguments given as None).
    symbol : Symbol
        All outputs, flattened.
    out_fmt : format from :func:`flatten`
        How to regroup the outputs.

    Attributes
    ----------
    symbol : Symbol
    variables : list of Symbol or None
    runner : callable or None
        When set, ``runner(compiled_graph) -> callable(tensors)`` wraps the
        :class:`~neomx.symbol.graph.CompiledGraph` of each context when it is bound: the hook
        for ``torch.compile(compiled_graph.fn)`` or checkpointed segments.
    """

    def __init__(self, block, variables, symbol, out_fmt):
        self.symbol = symbol
        self.out_fmt = out_fmt
        self.runner = None
        used = set(symbol.list_inputs())
        data = [(i, v.name) for i, v in enumerate(variables) if v is not None and v.name in used]
        self._data_positions = [i for i, _ in data]
        data_names = {name for _, name in data}
        self._param_names = [n for n in symbol.list_inputs() if n not in data_names]
        self._input_names = [name for _, name in data] + self._param_names
        self.variables = variables
        self._params = _graph_params(block, self._param_names)
        self._bound = {}        # ctx -> (parameter layout version, arrays, compiled function)

    def __call__(self, flat_args, ctx):
        """Run on the flat input arrays (all on ``ctx``); returns the flat output arrays.

        Raises
        ------
        DeferredInitializationError
            While some parameter waits for its shape (see :meth:`complete_deferred`).
        """
        bound = self._bound.get(ctx)
        if bound is None or bound[0] != _parameter._layout_version:
            bound = self._bind(ctx)
        _, arrays, fn = bound
        tensors = [flat_args[i]._t for i in self._data_positions]
        tensors.extend(a._t for a in arrays)
        return [_new(t, ctx) for t in fn(tensors)]

    def _bind(self, ctx):
        arrays = [self._params[name].data(ctx) for name in self._param_names]
        graph = compiled(self.symbol, ctx, self._input_names)
        fn = graph if self.runner is None else self.runner(graph)
        bound = self._bound[ctx] = (_parameter._layout_version, arrays, fn)
        return bound

    def complete_deferred(self, flat_args):
        """Give the parameters that wait for their shapes the shapes inferred from the
        inputs through the graph, and initialize them.

        Returns
        -------
        bool
            False when some parameter's shape stays unknown (an operator without an
            argument-shape rule feeds it).
        """
        pending = [p for p in self._params.values() if p._data is None and p._deferred_init]
        unknown = [p for p in pending if not shape_is_known(p.shape)]
        if unknown:
            known = {v.name: a.shape for v, a in zip(self.variables, flat_args) if v is not None}
            arg_shapes, _, aux_shapes = self.symbol.infer_shape_partial(**known)
            names = self.symbol.list_arguments() + self.symbol.list_auxiliary_states()
            inferred = dict(zip(names, arg_shapes + aux_shapes))
            for param in unknown:
                shape = inferred.get(param.name)
                if shape and shape_is_known(shape):     # () marks a shape left unknown
                    param.shape = shape
        if any(not shape_is_known(p.shape) for p in pending):
            return False
        for param in pending:
            param._finish_deferred_init()
        return True

    def regroup(self, flat_outputs):
        """The outputs nested as ``hybrid_forward`` returned them."""
        if self.out_fmt == 0:
            return flat_outputs[0]
        return regroup(flat_outputs, self.out_fmt)[0]


def _graph_params(block, names):
    """``{name: Parameter}`` for the graph's non-data variables; MXNetError for a variable
    that is no parameter of ``block``."""
    params = block.collect_params()
    missing = [n for n in names if n not in params]
    if missing:
        raise MXNetError("Block '%s' (%s): the traced graph uses variables %s that are neither "
                         "inputs nor parameters of the block" % (block.name, type(block).__name__,
                                                                  missing))
    return {n: params[n] for n in names}


def first_context(flat_args):
    """The context of the first NDArray among the arguments."""
    for arg in flat_args:
        if isinstance(arg, NDArray):
            return arg._ctx
    raise ValueError('In HybridBlock, there must be one NDArray as input. Please check the '
                     'type of the args.')

