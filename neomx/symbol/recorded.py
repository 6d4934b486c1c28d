"""The Symbol of a recorded computation (:func:`neomx.autograd.get_symbol`).

:mod:`neomx._recorded_graph` keeps, for each array an operation made while recording, the
operator, its attributes and its input entries. This module turns the record behind one
array into a Symbol of registry operators, as MXNet's ``MXAutogradGetSymbol`` does: the
recorded arrays that no recorded operation made become variables (``var<N>`` for arrays
with gradients, ``null<N>`` for the others), the operations nodes named ``node_<N>``. A
hybridized block's graph becomes one ``_CachedOp`` node, or, where it has no more
operators than the block's ``inline_limit``, its operators themselves (MXNet inlines
such graphs into the record).
"""
from .. import _recorded_graph
from .._recorded_graph import ATTRS, INPUTS, NAME, OP
from ..base import MXNetError
from ..operator import registry
from .nodes import _Node, _op_params, _variable_node, attr_string
from .symbol import Symbol

__all__ = ['recorded_symbol']


def recorded_symbol(array):
    """The Symbol of the computation recorded for NDArray ``array`` (see the module's docstring).

    Raises
    ------
    MXNetError
        Where ``tensor`` is not part of a recorded computation.
    """
    entry = _recorded_graph.entry_of(array)
    if entry is None:
        raise MXNetError('get_symbol: NDArray is not part of a computation graph. '
                         'Did you forget to turn on recording?')
    built = {}      # id(node) -> its outputs' Symbol entries, by index (a function)
    stack = [entry[0]]
    while stack:        # depth-first, inputs before the operations reading them
        node = stack[-1]
        if id(node) in built:
            stack.pop()
            continue
        pending = [n for n, _ in node[INPUTS] if id(n) not in built]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        built[id(node)] = _build(node, [built[id(n)](i) for n, i in node[INPUTS]])
    return Symbol([built[id(entry[0])](entry[1])])


def _build(node, inputs):
    """``index -> Symbol entry`` of the outputs of recorded ``node``, given its inputs' entries."""
    op = node[OP]
    if op is None:
        variable = _variable_node(node[NAME], {})
        return lambda index: (variable, index)
    graph = node[ATTRS].get('__graph__') if op == '_CachedOp' else None
    if graph is not None:
        return _graph_outputs(node, graph, inputs)
    spec = registry.get(op)
    attrs = {k: attr_string(v) for k, v in node[ATTRS].items()}
    try:
        params = _op_params(spec, attrs)
    except MXNetError:      # a value whose text does not parse back: the typed attributes as given
        params = spec.parse_attrs(node[ATTRS])
    op_node = _Node(spec.name, _recorded_graph.name_of(node), attrs, inputs, spec, params)
    return lambda index: (op_node, index)


def _graph_outputs(node, graph, inputs):
    """The outputs of a block's graph run while recording: inlined, or one ``_CachedOp`` node."""
    symbol, input_names, inline_limit = graph
    operators = [n for n in symbol._nodes() if not n.is_variable]
    if len(operators) <= inline_limit:
        copied = symbol._copy_graph(dict(zip(input_names, inputs)))
        for n in copied._nodes():
            if not n.is_variable:
                n.name = _recorded_graph.new_node_name()
        heads = copied._heads
        return lambda index: heads[index]
    subgraph = symbol.tojson()
    spec = registry.get('_CachedOp')
    attrs = {'subgraph': subgraph}
    op_node = _Node('_CachedOp', _recorded_graph.name_of(node), attrs, inputs, spec, _op_params(spec, attrs))
    return lambda index: (op_node, index)
