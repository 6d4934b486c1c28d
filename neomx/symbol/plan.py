"""A graph as the operator calls to make in order: what compiled graphs run and passes rewrite."""
import functools

from .inference import input_slots, open_shape_nodes, params_for_shape

__all__ = ['Call', 'Plan', 'plan_of']


class Call:
    """One operator call of a compiled graph: ``out = fn(*args)``.

    Attributes
    ----------
    fn : callable
        The implementation with its attributes bound; takes the tensors positionally.
    args : list of (str, int or None) or None
        Each argument as (value name, output index, None for a single-output value), or
        None for an absent optional input.
    out : str
        The name of the value it defines.
    node : _Node
        The Symbol node it computes (operator spec, parsed attributes, name), read by passes.
    """
    __slots__ = ('fn', 'args', 'out', 'node')

    def __init__(self, fn, args, out, node):
        self.fn, self.args, self.out, self.node = fn, args, out, node


class Plan:
    """A graph as the calls to make in order: what passes rewrite and the generator emits.

    Attributes
    ----------
    inputs : list of str
        The names of the function's arguments (``x0``, ``x1``...).
    calls : list of Call
    heads : list of (str, int or None)
        The outputs, as references like a call's arguments.
    """

    def __init__(self, inputs, calls, heads):
        self.inputs, self.calls, self.heads = inputs, calls, heads

    def use_counts(self):
        """``{value name: number of references}`` over the calls' arguments and the heads."""
        counts = {}
        for ref in self.heads + [a for c in self.calls for a in c.args if a is not None]:
            counts[ref[0]] = counts.get(ref[0], 0) + 1
        return counts


def plan_of(sym, ctx, input_names, open_shapes=None):
    """The :class:`Plan` of ``sym``: one call per operator node in topological order, the
    variables taken as arguments in the order of ``input_names``, and the nodes of
    :func:`open_shape_nodes` creating arrays of ``open_shapes`` (see :func:`resolve_open_shapes`)."""
    resolved = dict(zip(open_shape_nodes(sym), open_shapes or ()))
    position = {name: i for i, name in enumerate(input_names)}
    values = {node: 'x%d' % position[node.name] for node in sym._nodes() if node.is_variable}

    def ref(entry):
        node, index = entry
        return values[node], (index if node.num_outputs() > 1 else None)

    # An output is the caller's own array, as MXNet's: one computed by an operator that may
    # return its input's memory (a reshape of an argument) runs the copying implementation
    heads = {node for node, _ in sym._heads}
    calls = []
    for j, node in enumerate(n for n in sym._nodes() if not n.is_variable):
        params = dict(node.params, ctx=ctx) if node.spec.ctx_attrs else node.params
        if node in resolved:
            params = params_for_shape(node, params, resolved[node])
        args = [None if i is None else ref(node.inputs[i]) for i in input_slots(node)]
        values[node] = 'v%d' % j
        impl = node.spec.nd_impl if node in heads else node.spec.impl
        calls.append(Call(functools.partial(impl, **params), args, values[node], node))
    return Plan(['x%d' % i for i in range(len(input_names))], calls, [ref(h) for h in sym._heads])

