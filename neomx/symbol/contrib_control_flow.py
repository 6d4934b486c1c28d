"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: control-flow nodes with subgraphs.

The user's function is called once on fresh variables inside an ``AttrScope`` marking
every node it creates with ``__subgraph_name__``; its outputs form the subgraph. As in
MXNet 1.9.1:

* the variables standing for loop data and states are named ``<outer name>-<index>``;
* an outer operator output the function uses is *cut*: inside the subgraph it becomes a
  variable named after that output (``_mulscalar0_output``), outside it feeds the node;
* an outer variable the function uses (a Gluon parameter) is a variable of the
  subgraph and feeds the node too;
* subgraph outputs that are inputs, repeated, or not computed inside are passed through
  ``identity``.

The node's inputs are ordered as MXNet orders them, and its ``*_locs`` attributes map
them onto the subgraph inputs (``list_inputs`` order); the operators themselves are in
``neomx/operator/control_flow.py``.
"""

from ..ndarray.contrib_control_flow import flatten, regroup
from ..operator import registry
from .attribute import AttrScope
from .nodes import _Node
from .symbol import Symbol, create_op_node, var

__all__ = ['foreach', 'while_loop', 'cond']

_SUBGRAPH_KEY = '__subgraph_name__'


def _unique_subgraph_name(name):
    """``name`` numbered (``foreach0``), under the enclosing subgraph's name if nested."""
    outer = AttrScope.current.get(None).get(_SUBGRAPH_KEY, '')
    if outer:
        name = '%s$%s' % (outer, name)
    # MXNet numbers subgraph names process-wide, in AttrScope._subgraph_names (which code may
    # replace: it is looked up on each use)
    counts = AttrScope._subgraph_names
    counts[name] += 1
    return '%s%d' % (name, counts[name] - 1)


def _entry_name(sym):
    """The name of the variable standing for single-output ``sym`` in a subgraph."""
    node, index = sym._heads[0]
    return '%s-%d' % (node.name, index)


def _in_subgraph(sym, name):
    return sym._heads[0][0].attrs.get(_SUBGRAPH_KEY, '') == name


def _identity(sym):
    return create_op_node(registry.get('_copy'), [sym], {}, hint='identity')


def _subgraph_outputs(outputs, name, num_out_data):
    """The outputs as the subgraph's heads: one passes through ``identity`` when it is an
    input of the graph or not computed in the subgraph; so does a state (an output after
    the first ``num_out_data``) named like a data output."""
    input_names = set(Symbol([h for s in outputs for h in s._heads]).list_inputs()) if outputs else set()
    data_names = {s.name for s in outputs[:num_out_data]}
    return [_identity(s) if (s.name in input_names or not _in_subgraph(s, name)
                             or (i >= num_out_data and s.name in data_names)) else s
            for i, s in enumerate(outputs)]


def _cut(heads, name):
    """Replace each outer operator output read by a node of subgraph ``name`` with a variable
    named after that output, in place. Returns ``{variable name: outer Symbol}``."""
    cut, variables = {}, {}
    for node in Symbol(heads)._nodes():
        if node.is_variable or node.attrs.get(_SUBGRAPH_KEY) != name:
            continue
        inputs = []
        for child, index in node.inputs:
            if not child.is_variable and child.attrs.get(_SUBGRAPH_KEY) != name:
                var_name = child.output_name(index)
                if var_name not in variables:
                    variables[var_name] = _Node('null', var_name, {})
                    cut[var_name] = Symbol([(child, index)])
                inputs.append((variables[var_name], 0))
            else:
                inputs.append((child, index))
        node.inputs = tuple(inputs)
    return cut


class _Subgraph:
    """One subgraph built from a user function, with what its node's inputs need."""

    def __init__(self, outputs, name, num_out_data=0):
        heads = [h for s in _subgraph_outputs(outputs, name, num_out_data) for h in s._heads]
        self.cut = _cut(heads, name)
        self.symbol = Symbol(heads)
        self.input_names = self.symbol.list_inputs()
        self.variables = {n.name: n for n in self.symbol._nodes() if n.is_variable}

    def outer_input(self, input_name):
        """The outer Symbol feeding subgraph input ``input_name`` that is not a loop
        variable: the cut output, or the captured variable (a new Symbol of its node)."""
        if input_name in self.cut:
            return self.cut[input_name]
        return Symbol([(self.variables[input_name], 0)])


def _placeholders(syms, fmt):
    """Variables standing for ``syms`` in a subgraph, in the structure ``fmt``."""
    return regroup([var(_entry_name(s)) for s in syms], fmt)[0]


def _check_symbols(flat, what):
    if not all(isinstance(s, Symbol) for s in flat):
        raise ValueError('%s should be a symbol or a nested list of symbols' % what)


def _create(op_name, subgraphs, inputs, attrs, num_outputs):
    node = create_op_node(registry.get(op_name), inputs, dict(attrs, num_args=len(inputs) + len(subgraphs),
                                                              num_outputs=num_outputs),
                          hint=op_name, subgraphs=[g.symbol for g in subgraphs])
    return [node[i] for i in range(num_outputs)]


def foreach(body, data, init_states, name='foreach'):
    """Run ``body`` on each slice of ``data`` along axis 0, threading loop states (a
    ``_foreach`` node).

    Parameters
    ----------
    body : callable
        ``body(slice, states) -> (outputs, new_states)`` on Symbols.
    data : Symbol or list of Symbol
    init_states : Symbol or nested list of Symbol
    name : str
        The prefix of the subgraph's name.

    Returns
    -------
    (outputs, states)
        Symbols in the structures ``body`` returns: the stacked step outputs and the
        final states.
    """
    flat_data, data_fmt = flatten(data, Symbol, 'foreach input')
    _check_symbols(flat_data, 'data')
    flat_states, state_fmt = flatten(init_states, Symbol, 'foreach states')
    _check_symbols(flat_states, 'init_states')
    name = _unique_subgraph_name(name)
    with AttrScope(**{_SUBGRAPH_KEY: name}):
        outs, states = body(_placeholders(flat_data, data_fmt), _placeholders(flat_states, state_fmt))
        outs, out_fmt = flatten(outs, Symbol, 'foreach output')
        states, new_state_fmt = flatten(states, Symbol, 'foreach loop_vars')
        if new_state_fmt != state_fmt:
            raise ValueError('The input and output loop_vars have different format')
        graph = _Subgraph(outs + states, name, len(outs))
    names = graph.input_names
    data_names, state_names = [_entry_name(s) for s in flat_data], [_entry_name(s) for s in flat_states]
    for kind, loop_names in (('data', data_names), ('state', state_names)):
        if any(n not in names for n in loop_names):
            raise AssertionError('the %s arrays have to be used in the loop body' % kind)    # as MXNet
    remain = [n for n in names if n not in data_names and n not in state_names]
    outputs = _create('_foreach', [graph], flat_data + flat_states + [graph.outer_input(n) for n in remain],
                      {'num_out_data': len(outs), 'in_data_locs': [names.index(n) for n in data_names],
                       'in_state_locs': [names.index(n) for n in state_names],
                       'remain_locs': [names.index(n) for n in remain]}, len(outs) + len(states))
    return regroup(outputs[:len(outs)], out_fmt)[0], regroup(outputs[len(outs):], state_fmt)[0]


def _union_inputs(graphs, loop_vars=None):
    """The node's inputs for several subgraphs and, per subgraph, the index of the input
    feeding each of its inputs. A loop variable (``while_loop``) is one input for all
    subgraphs; ``cond`` (no ``loop_vars``) reuses an input of an earlier branch of the
    same name; other cut outputs and captured variables get an input per subgraph."""
    inputs, positions, locs = [], {}, []
    loop_by_name = {_entry_name(s): s for s in loop_vars or ()}
    for graph in graphs:
        earlier = {} if loop_vars is not None else {s.name: s for s in inputs}
        graph_locs = []
        for input_name in graph.input_names:
            sym = loop_by_name.get(input_name, earlier.get(input_name))
            if sym is None:
                sym = graph.outer_input(input_name)
            if id(sym) not in positions:
                positions[id(sym)] = len(inputs)
                inputs.append(sym)
            graph_locs.append(positions[id(sym)])
        locs.append(graph_locs)
    return inputs, locs


def _branch(func, loop_vars, var_fmt, name, what):
    """``(subgraph, number of outputs, output format)`` of ``func`` called on placeholders
    of ``loop_vars`` (in the structure ``var_fmt``), traced as subgraph ``name`` (numbered)."""
    name = _unique_subgraph_name(name)
    with AttrScope(**{_SUBGRAPH_KEY: name}):
        outputs, fmt = flatten(func(*_placeholders(loop_vars, var_fmt)), Symbol, what)
        return _Subgraph(outputs, name), len(outputs), fmt


def _step(func):
    """``func(*loop_vars) -> (step outputs, new loop vars)`` as flat lists and the outputs' format."""
    def step(*loop_vars):
        step_output, new_vars = func(*loop_vars)
        step_output = [] if step_output is None else step_output
        new_vars = [] if new_vars is None else new_vars
        step_output, out_fmt = flatten(list(step_output) if isinstance(step_output, tuple) else step_output,
                                       Symbol, 'while output')
        new_vars, _ = flatten(list(new_vars) if isinstance(new_vars, tuple) else new_vars, Symbol, 'while loop_vars')
        if len(new_vars) != len(loop_vars):
            raise ValueError('The number of loop_vars should be consistent during the loop')
        step.num_out_data, step.out_fmt = len(step_output), out_fmt
        return step_output + new_vars
    return step


def while_loop(cond, func, loop_vars, max_iterations=None, name='while_loop'):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times (a ``_while_loop``
    node).

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars) -> Symbol`` (a scalar).
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``.
    loop_vars : Symbol or nested list of Symbol
    max_iterations : int
        Required: the step outputs have ``max_iterations`` rows.
    name : str
        The prefix of the subgraphs' names.

    Returns
    -------
    (outputs, loop_vars)
        The stacked step outputs in the structure ``func`` returns, and the final loop
        variables in the structure of ``loop_vars``.
    """
    flat_vars, var_fmt = flatten(loop_vars, Symbol, 'while loop_vars')
    _check_symbols(flat_vars, 'loop_vars')
    if max_iterations is None:
        raise ValueError('max_iterations should be specified')
    try:
        max_iterations = int(max_iterations)
    except (TypeError, ValueError):
        raise ValueError('Cannot convert max_iteration to python int') from None
    if not flat_vars:
        raise ValueError('loop_vars should contain at least one element')

    def predicate(*args):
        result = cond(*args)
        if not isinstance(result, Symbol):
            raise ValueError('Return of cond must be a Symbol')
        return [result]
    cond_graph, _, _ = _branch(predicate, flat_vars, var_fmt, name + '_cond', 'while cond')
    step = _step(func)
    func_graph, num_outputs, _ = _branch(step, flat_vars, var_fmt, name + '_func', 'while output')
    inputs, (cond_locs, func_locs) = _union_inputs([cond_graph, func_graph], flat_vars)
    var_locs = [func_graph.input_names.index(_entry_name(s)) if _entry_name(s) in func_graph.input_names else -1
                for s in flat_vars]
    for i, loc in enumerate(var_locs, 1):
        if loc == -1:
            raise ValueError("The %d-th loop_var doesn't involve into the computation" % i)
    outputs = _create('_while_loop', [cond_graph, func_graph], inputs,
                      {'max_iterations': max_iterations, 'cond_input_locs': cond_locs, 'func_input_locs': func_locs,
                       'func_var_locs': var_locs, 'num_out_data': step.num_out_data}, num_outputs)
    return (regroup(outputs[:step.num_out_data], step.out_fmt)[0],
            regroup(outputs[step.num_out_data:], var_fmt)[0])


def cond(pred, then_func, else_func, name='cond'):
    """``then_func()`` where the scalar ``pred`` is true, else ``else_func()`` (a ``_cond`` node).

    Parameters
    ----------
    pred : Symbol
        A one-element Symbol.
    then_func, else_func : callable
        Functions of no argument returning Symbols or nested lists of them, alike in
        number, shapes and dtypes.
    name : str
        The prefix of the subgraphs' names.

    Returns
    -------
    Symbol or nested list of Symbol
        In the structure ``then_func`` returns.
    """
    pred_graph, num_pred, _ = _branch(lambda: pred, [], [], name + '_pred', 'cond outputs')
    if num_pred != 1:
        raise ValueError('pred should always be a single output')
    then_graph, num_outputs, then_fmt = _branch(then_func, [], [], name + '_then', 'cond outputs')
    else_graph, num_else, _ = _branch(else_func, [], [], name + '_else', 'cond outputs')
    if num_outputs != num_else:
        raise ValueError('Number of outputs differs between then-branch and else-branch')
    inputs, (pred_locs, then_locs, else_locs) = _union_inputs([pred_graph, then_graph, else_graph])
    outputs = _create('_cond', [pred_graph, then_graph, else_graph], inputs,
                      {'cond_input_locs': pred_locs, 'then_input_locs': then_locs, 'else_input_locs': else_locs},
                      num_outputs)
    return regroup(outputs, then_fmt)[0]
