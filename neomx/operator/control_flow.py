"""Control-flow operators: ``_foreach``, ``_while_loop`` and ``_cond``, and ``_CachedOp``
(a whole graph, given as Symbol JSON in its ``subgraph`` attribute, run as one node).

``mx.sym.contrib.foreach/while_loop/cond`` (see ``neomx/symbol/contrib_control_flow.py``)
build these nodes. Each carries its loop body or branches as *subgraphs*: Symbols whose
inputs are numbered in ``list_inputs()`` order, and the node's ``*_locs`` attributes say
which of the node's inputs feeds which subgraph input. The implementations receive the
subgraphs (keyword ``subgraphs``, see ``neomx/symbol/symbol.py``), run them through
their compiled graphs (compiled once per subgraph and context) and loop in Python over
torch tensors, so torch autograd differentiates through every step: Executors, Module
and hybridized Gluon blocks train through them.

On ``device='meta'`` tensors (shape inference) the data-dependent decisions cannot be
made: ``_while_loop`` runs its body once and gives outputs of ``max_iterations`` rows,
``_cond`` runs its then-branch.
"""
import torch

from ..base import MXNetError
from ..context import context_of_device
from ..util import is_np_shape
from .. import upper_layers
from . import registry
from .dtype_rules import DTypeRule
from .registry import ANY, INT, STR, memoized

_SUBGRAPH_COUNTS = {'_foreach': 1, '_while_loop': 2, '_cond': 3}


class _ControlFlowSpec(registry.OpSpec):
    """A control-flow operator's registry entry: its ``num_args`` counts the subgraphs
    too, as in MXNet, so the node has ``num_args - <number of subgraphs>`` inputs."""

    def input_names(self, attrs, num_args=None):
        count = attrs['num_args'] - _SUBGRAPH_COUNTS[self.name] if num_args is None else num_args
        return tuple('data%d' % i for i in range(count))


def _run(subgraph, tensors):
    """The outputs (a tuple) of ``subgraph`` on ``tensors``, given in its ``list_inputs`` order."""
    ctx = context_of_device(tensors[0].device)
    return upper_layers.get('compiled_graph')(subgraph, ctx)(tensors)


def _single_or_tuple(outputs):
    # A single-output operator returns its tensor: compiled graphs use the value directly.
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _count(attrs):
    return attrs['num_outputs']


def _control_flow_op(name, attrs, infer_args=None):
    """Register the decorated implementation as control-flow operator ``name``."""
    # Inputs and outputs of a loop or branch may each have their own dtype (the subgraphs
    # decide): no input types another; the outputs' dtypes come from running the subgraphs.
    def every_input(attrs):
        return tuple('data%d' % i for i in range(attrs['num_args'] - _SUBGRAPH_COUNTS[name]))
    free_dtypes = DTypeRule(free=every_input, output=lambda dtypes, attrs: None)
    return registry.register(name, variadic=True, spec_class=_ControlFlowSpec, num_outputs=_count,
                             attrs=[('num_args', INT), ('num_outputs', INT)] + attrs, infer_args=infer_args,
                             dtypes=free_dtypes)


def _foreach_args(shapes, attrs):
    """Shapes of a foreach's unknown states and captured inputs, from shape inference inside
    its body given what is known (each data input gives one step's slice): an LSTM's cell
    state from its hidden state, as MXNet's shape inference finds it."""
    body, = attrs['subgraphs']
    body_inputs = body.list_inputs()
    n_data = len(attrs['in_data_locs'])
    locs = list(attrs['in_data_locs']) + list(attrs['in_state_locs']) + list(attrs['remain_locs'])
    names = ['data%d' % i for i in range(len(locs))]
    known = {}
    for i, (name, loc) in enumerate(zip(names, locs)):
        shape = shapes.get(name)
        if shape is not None:
            step = tuple(shape[1:]) or (() if is_np_shape() else (1,))     # as the steps foreach runs
            known[body_inputs[loc]] = step if i < n_data else tuple(shape)
    if len(known) == len(locs):
        return {}
    inferred = _shapes_inside(body, known)
    return {name: inferred[body_inputs[loc]] for i, (name, loc) in enumerate(zip(names, locs))
            if i >= n_data and shapes.get(name) is None and body_inputs[loc] in inferred}


def _shapes_inside(graph, known):
    """The complete shapes of ``graph``'s inputs (by name) that its shape inference finds
    from the ``known`` ones."""
    arg_shapes, _, aux_shapes = graph.infer_shape_partial(**known)
    inferred = dict(zip(graph.list_arguments(), arg_shapes or ()))
    inferred.update(zip(graph.list_auxiliary_states(), aux_shapes or ()))
    return {name: tuple(shape) for name, shape in inferred.items() if shape and all(d > 0 for d in shape)}


@_control_flow_op('_foreach', [('num_out_data', INT), ('in_state_locs', ANY), ('in_data_locs', ANY),
                               ('remain_locs', ANY)], infer_args=_foreach_args)
def foreach(*tensors, subgraphs, num_args, num_outputs, num_out_data, in_state_locs, in_data_locs,
            remain_locs):
    """Run the body subgraph on each slice along axis 0 of the data inputs, threading states.

    Inputs are the data arrays (each ``(T, ...)``), the initial states, then the captured
    arrays; outputs are the ``num_out_data`` step outputs stacked into ``(T, ...)`` then
    the final states.
    """
    body, = subgraphs
    n_data, n_states = len(in_data_locs), len(in_state_locs)
    data, states, remain = tensors[:n_data], tensors[n_data:n_data + n_states], tensors[n_data + n_states:]
    inputs = [None] * (n_data + n_states + len(remain))
    for loc, tensor in zip(remain_locs, remain):
        inputs[loc] = tensor
    steps = []
    # MXNet's legacy shapes have no 0-d arrays: a step of 1-D data is (1,)
    step = (lambda a, t: a[t]) if is_np_shape() else (lambda a, t: a[t] if a.dim() > 1 else a[t:t + 1])
    for t in range(data[0].shape[0]):
        for loc, array in zip(in_data_locs, data):
            inputs[loc] = step(array, t)
        for loc, state in zip(in_state_locs, states):
            inputs[loc] = state
        outputs = _run(body, inputs)
        steps.append(outputs[:num_out_data])
        states = outputs[num_out_data:]
    stacked = [torch.stack(column) for column in zip(*steps)]
    return _single_or_tuple(stacked + list(states))


@_control_flow_op('_while_loop', [('num_out_data', INT), ('max_iterations', INT), ('cond_input_locs', ANY),
                                  ('func_input_locs', ANY), ('func_var_locs', ANY)])
def while_loop(*tensors, subgraphs, num_args, num_outputs, num_out_data, max_iterations, cond_input_locs,
               func_input_locs, func_var_locs):
    """Run the body subgraph while the condition subgraph gives a true scalar, at most
    ``max_iterations`` times.

    Outputs are the ``num_out_data`` step outputs stacked into ``(max_iterations, ...)``
    (rows after the last step are zeros; MXNet leaves them uninitialized) then the final
    loop variables.
    """
    cond_graph, func_graph = subgraphs
    values = list(tensors)                  # the node's inputs, loop variables updated in place
    var_slots = [func_input_locs[loc] for loc in func_var_locs]
    steps = []
    meta = tensors[0].is_meta
    while len(steps) < max_iterations and (meta or _is_true(_run(cond_graph, [values[i] for i in cond_input_locs]))):
        outputs = _run(func_graph, [values[i] for i in func_input_locs])
        steps.append(outputs[:num_out_data])
        for slot, value in zip(var_slots, outputs[num_out_data:]):
            values[slot] = value
        if meta:            # shapes only: one step tells them
            break
    if steps:
        stacked = [_pad_rows(torch.stack(column), max_iterations) for column in zip(*steps)]
    else:       # no step ran: a step on meta tensors gives the outputs' shapes
        templates = _run(func_graph, [values[i].to('meta') for i in func_input_locs])[:num_out_data]
        stacked = [torch.zeros((max_iterations,) + tuple(t.shape), dtype=t.dtype, device=tensors[0].device)
                   for t in templates]
    return _single_or_tuple(stacked + [values[slot] for slot in var_slots])


def _is_true(outputs):
    return bool(outputs[0].reshape(-1)[0].item())


def _pad_rows(stacked, rows):
    """``stacked`` (``(steps, ...)``) grown to ``rows`` rows with zeros."""
    missing = rows - stacked.shape[0]
    if missing == 0:
        return stacked
    return torch.cat([stacked, stacked.new_zeros((missing,) + tuple(stacked.shape[1:]))])


@_control_flow_op('_cond', [('cond_input_locs', ANY), ('then_input_locs', ANY), ('else_input_locs', ANY)])
def cond(*tensors, subgraphs, num_args, num_outputs, cond_input_locs, then_input_locs, else_input_locs):
    """Run the then- or the else-branch subgraph as the predicate subgraph gives true or false."""
    pred_graph, then_graph, else_graph = subgraphs
    if tensors[0].is_meta or _is_true(_run(pred_graph, [tensors[i] for i in cond_input_locs])):
        branch, locs = then_graph, then_input_locs
    else:
        branch, locs = else_graph, else_input_locs
    return _single_or_tuple(list(_run(branch, [tensors[i] for i in locs])))


# ------------------------------------------------------------------ _CachedOp
@memoized(64)
def _graph_of(subgraph_json):
    """The Symbol of a ``_CachedOp``'s ``subgraph`` attribute, with its input names and the
    positions of its auxiliary states among them."""
    graph = upper_layers.get('symbol_from_json')(subgraph_json)
    inputs = graph.list_inputs()
    aux = set(graph.list_auxiliary_states())
    return graph, inputs, tuple(i for i, name in enumerate(inputs) if name in aux)


class _CachedOpSpec(registry.OpSpec):
    """``_CachedOp``'s registry entry: one input per input of its subgraph (``data0``...),
    auxiliary states where the subgraph has them, one output per subgraph output."""

    def input_names(self, attrs, num_args=None):
        count = len(_graph_of(attrs['subgraph'])[1]) if num_args is None else num_args
        return tuple('data%d' % i for i in range(count))


def _cached_op_aux(attrs):
    return tuple('data%d' % i for i in _graph_of(attrs['subgraph'])[2])


def _cached_op_outputs(attrs):
    return len(_graph_of(attrs['subgraph'])[0].list_outputs())


def _cached_op_input_shapes(shapes, attrs):
    """The shapes of the inputs the subgraph's own inference gives from the known ones
    (weights from data, as for the operators inside it)."""
    graph, inputs, aux = _graph_of(attrs['subgraph'])
    names = ['data%d' % i for i in range(len(inputs))]
    known = {inputs[i]: shapes[n] for i, n in enumerate(names) if shapes.get(n) is not None}
    arg_shapes, _, aux_shapes = graph.infer_shape_partial(**known)
    if arg_shapes is None:
        return {}
    by_name = dict(zip(graph.list_arguments(), arg_shapes))
    by_name.update(zip(graph.list_auxiliary_states(), aux_shapes))
    return {n: tuple(by_name[inputs[i]]) for i, n in enumerate(names)
            if by_name.get(inputs[i]) and 0 not in by_name[inputs[i]]}


@registry.register('_CachedOp', aliases=('_CachedOpThreadSafe',), variadic=True, spec_class=_CachedOpSpec,
                   attrs=[('subgraph', STR)], aux=_cached_op_aux, num_outputs=_cached_op_outputs,
                   infer_args=_cached_op_input_shapes)
def cached_op(*tensors, subgraph):
    """Run the graph of ``subgraph`` (Symbol JSON) on the inputs, given in its ``list_inputs``
    order; differentiable through the graph as its operators are."""
    graph, inputs, _ = _graph_of(subgraph)
    registry.check(len(tensors) == len(inputs), '_CachedOp', 'the subgraph takes %d inputs (%s), got %d',
                   len(inputs), ', '.join(inputs), len(tensors))
    return _single_or_tuple(list(_run(graph, list(tensors))))


# ------------------------------------------------------------------ oneDNN's fused subgraphs
# MXNet's optimize_for('MKLDNN') replaces Convolution (+ BatchNorm, activation, sum) and
# FullyConnected (+ activation) patterns by one node that carries the replaced operators as
# its subgraph; exported graphs hold these nodes. neomx runs the subgraph: the same values.
def _fused_graph(attrs):
    subgraphs = attrs.get('subgraphs')
    if not subgraphs:
        raise MXNetError('a oneDNN fused operator (_sg_mkldnn_*) needs the subgraph it fuses: it exists in graphs '
                         "that MXNet's optimize_for('MKLDNN') wrote, not as an operator to call")
    graph = subgraphs[0]
    inputs = graph.list_inputs()
    aux = set(graph.list_auxiliary_states())
    return graph, inputs, tuple(i for i, name in enumerate(inputs) if name in aux)


class _FusedSpec(registry.OpSpec):
    """A fused node's registry entry: one input per input of its subgraph (``data0``...), its
    auxiliary states where the subgraph has them, one output per subgraph output. Its
    attributes (``with_bn``, ``with_act``...) describe the subgraph and are kept as given."""

    def input_names(self, attrs, num_args=None):
        count = len(_fused_graph(attrs)[1]) if num_args is None else num_args
        return tuple('data%d' % i for i in range(count))


def _fused_aux(attrs):
    return tuple('data%d' % i for i in _fused_graph(attrs)[2])


def _fused_outputs(attrs):
    return len(_fused_graph(attrs)[0].list_outputs())


def _fused_input_shapes(shapes, attrs):
    graph, inputs, _ = _fused_graph(attrs)
    known = {inputs[i]: s for i, s in enumerate(shapes.get('data%d' % i) for i in range(len(inputs))) if s}
    arg_shapes, _, aux_shapes = graph.infer_shape_partial(**known)
    if arg_shapes is None:
        return {}
    by_name = dict(zip(graph.list_arguments(), arg_shapes))
    by_name.update(zip(graph.list_auxiliary_states(), aux_shapes))
    return {'data%d' % i: tuple(by_name[n]) for i, n in enumerate(inputs) if by_name.get(n) and 0 not in by_name[n]}


def _fused_subgraph_op(*tensors, subgraphs=()):
    """Run the fused node's subgraph on the inputs (in its ``list_inputs`` order)."""
    graph, inputs, _ = _fused_graph({'subgraphs': subgraphs})
    registry.check(len(tensors) == len(inputs), '_sg_mkldnn', 'the fused subgraph takes %d inputs (%s), got %d',
                   len(inputs), ', '.join(inputs), len(tensors))
    return _single_or_tuple(list(_run(graph, list(tensors))))


_FUSED = dict(variadic=True, spec_class=_FusedSpec, aux=_fused_aux, num_outputs=_fused_outputs,
              infer_args=_fused_input_shapes,
              dtypes=DTypeRule(free=lambda attrs: tuple('data%d' % i for i in range(len(_fused_graph(attrs)[1]))),
                               output=lambda dtypes, attrs: None))


@registry.register('_sg_mkldnn_conv', **_FUSED)
def sg_mkldnn_conv(*tensors, subgraphs=()):
    """oneDNN's fused convolution (with BatchNorm, activation, sum as its subgraph has them)."""
    return _fused_subgraph_op(*tensors, subgraphs=subgraphs)


@registry.register('_sg_mkldnn_fully_connected', **_FUSED)
def sg_mkldnn_fully_connected(*tensors, subgraphs=()):
    """oneDNN's fused FullyConnected (with the activation its subgraph has)."""
    return _fused_subgraph_op(*tensors, subgraphs=subgraphs)
