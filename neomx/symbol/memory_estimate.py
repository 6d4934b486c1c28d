"""What an executor's arrays take, for ``Executor.debug_str``'s ``Total N MB allocated``.

MXNet plans the memory of a bound graph and reports its total; neomx's graphs run on
torch, which allocates as it goes, so the figure is an estimate of the same thing: the
outputs, plus -- when some argument wants a gradient -- the value of every operator on
the way from such an argument to an output, which autograd keeps for the backward pass.
Gradients stop at ``BlockGrad``/``stop_gradient``: a graph ending in one keeps nothing
more than one bound without gradients.
"""
import torch

__all__ = ['allocated_bytes']

_GRADIENT_STOPS = frozenset(('BlockGrad', 'zeros_like', 'ones_like'))


def allocated_bytes(sym, shapes, dtypes, trained):
    """Bytes of the outputs and of the values kept for backward.

    Parameters
    ----------
    sym : Symbol
    shapes, dtypes : dict
        ``{(node, index): shape / torch dtype}`` from inference.
    trained : set of str
        The arguments that want gradients.
    """
    def size(entry):
        shape = shapes.get(entry)
        if shape is None:
            return 0
        count = 1
        for d in shape:
            count *= d
        return count * torch.empty((), dtype=dtypes.get(entry, torch.float32)).element_size()

    nodes = sym._nodes()
    # operators a gradient reaches from the outputs...
    reached = {node for node, _ in sym._heads}
    for node in reversed(nodes):
        if node in reached and not node.is_variable and node.spec.name not in _GRADIENT_STOPS:
            reached.update(child for child, _ in node.inputs)
    # ... that depend on an argument wanting one
    depends = set()
    kept = set(sym._heads)
    for node in nodes:
        if node.is_variable:
            if node.name in trained:
                depends.add(node)
        elif node.spec.name not in _GRADIENT_STOPS and any(child in depends for child, _ in node.inputs):
            depends.add(node)
            if node in reached:
                kept.update((node, i) for i in range(node.num_outputs()))
    return sum(size(entry) for entry in kept)
