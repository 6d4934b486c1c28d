"""Arrays of graphs that a backward pass freed are constants, as in MXNet.

An array computed inside one ``autograd.record()`` and used again inside a later one after
``backward()`` freed its graph (an RNN's hidden state carried to the next batch without
``detach()``) acts as a constant in MXNet, which clears the recorded history of the arrays
a backward pass reaches. Torch keeps the freed graph attached to the tensor and refuses
to run backward through it again. Here, recorded operations detach such inputs first.

Finding them must cost little, as every recorded operation checks its inputs:

* a backward pass that frees its graph remembers the heads' graph nodes (the set of all
  its nodes is walked only when an older array shows up);
* the results of recorded operations since the last such backward pass are known by
  ``id`` (a live array's id cannot be that of an array computed before it), so the inputs
  computed since then, nearly all of them, are ruled out by one set lookup;
* graph nodes are numbered in creation order per thread (a private torch entry point,
  behind a capability check: without it nothing is detached and torch reports the freed
  graph), so only inputs older than the newest freed head are looked up in the graphs.

An array computed from nodes that no remembered backward pass reached stays live: its
gradient flows to its inputs.
"""
import threading

import torch

_Tensor = torch.Tensor
_HAS_SEQUENCE = hasattr(torch.autograd.graph.Node, '_sequence_nr')
_HISTORY = 4                # freeing backward passes remembered per thread
MAX_FRESH = 1 << 16        # results remembered per thread between two backward passes


class _FreedGraph:
    """The graph one backward pass freed, known by its heads' nodes."""
    __slots__ = ('newest', 'heads', 'nodes', 'head_nodes')

    def __init__(self, newest, heads):
        self.newest, self.heads, self.nodes = newest, heads, None
        self.head_nodes = tuple(heads)

    def contains(self, node):
        if self.nodes is None:
            seen, stack = set(), list(self.heads)
            while stack:
                n = stack.pop()
                if n is not None and n not in seen:
                    seen.add(n)
                    stack.extend(nxt for nxt, _ in n.next_functions)
            self.nodes, self.heads = seen, None
        return node in self.nodes


class _State(threading.local):
    """``freed``: the graphs of the last backward passes; ``newest``: the sequence number
    of their newest node; ``fresh``: ids of the recorded results since (None until a
    backward pass of this thread freed a graph)."""

    def __init__(self):
        self.freed = []
        self.newest = -1
        self.fresh = None


STATE = _State()


def mark_released(tensors):
    """Called after a backward pass from ``tensors`` (heads) that freed their graph.

    On the path of every training step: one head (the loss), the common case, costs a few
    attribute reads.
    """
    if not _HAS_SEQUENCE:
        return
    if len(tensors) == 1:
        node = tensors[0].grad_fn
        if node is None:
            return
        heads = [node]
        newest = node._sequence_nr()
    else:
        heads = [n for n in [t.grad_fn for t in tensors] if n is not None]
        if not heads:
            return
        newest = max([n._sequence_nr() for n in heads])
    state = STATE
    freed = state.freed
    if len(freed) == _HISTORY:
        del freed[0]
    freed.append(_FreedGraph(newest, heads))
    if newest > state.newest:
        state.newest = newest
    fresh = state.fresh
    if fresh is None:
        state.fresh = set()
    else:
        fresh.clear()


def already_freed(tensors):
    """Whether one of ``tensors`` is the head of a graph a remembered backward pass freed
    (differentiating it again is an error in MXNet, even where torch kept what it needs)."""
    fresh = STATE.fresh
    if fresh is None:       # no backward pass of this thread freed a graph
        return False
    for t in tensors:
        # a result recorded since the last freeing pass (a training step's new loss) is
        # none of the freed heads (see note_recorded)
        if id(t) not in fresh and _is_freed_head(t):
            return True
    return False


def _is_freed_head(t):
    node = t.grad_fn
    # a node newer than every freed head is none of them
    return (node is not None and node._sequence_nr() <= STATE.newest
            and any(node in g.head_nodes for g in STATE.freed))


def note_recorded(result, fresh):
    """Remember the tensors a recorded operation returned (a tensor or a sequence)."""
    if len(fresh) >= MAX_FRESH:
        fresh.clear()               # the others are then looked up in the graphs (still right)
    if type(result) is _Tensor:
        fresh.add(id(result))
    elif isinstance(result, (tuple, list)):
        for r in result:
            if isinstance(r, _Tensor):
                fresh.add(id(r))


def _is_released(t):
    """Whether ``t`` was computed from a graph a remembered backward pass freed: whether
    that pass reached its node or one of the nodes before it (not counting the leaves'
    gradient accumulators, which every graph of the same variables shares)."""
    node = t.grad_fn
    if node is None or node._sequence_nr() > STATE.newest:
        return False
    freed = STATE.freed
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n is None or n in seen or type(n).__name__ == 'AccumulateGrad':
            continue
        if any(g.contains(n) for g in freed):
            return True
        seen.add(n)
        stack.extend(nxt for nxt, _ in n.next_functions)
    return False


def live_inputs(args, fresh):
    """``args`` with the tensors of freed graphs detached (other arguments as they are).

    The inputs that are leaves (parameters, plain arrays) or results noted in ``fresh``
    cost one check each; the others are looked up in the freed graphs.
    """
    for t in args:
        if isinstance(t, _Tensor) and not t.is_leaf and id(t) not in fresh and _is_released(t):
            return [a.detach() if isinstance(a, _Tensor) and not a.is_leaf and _is_released(a) else a
                    for a in args]
    return args
