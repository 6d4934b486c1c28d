"""Shape/type inference over Symbol graphs, and their compilation into flat callables.

Inference runs each operator's torch implementation on ``device='meta'`` tensors in graph
order, so output shapes and dtypes follow the implementations exactly; unknown argument
shapes (weights) come from the operator's ``infer_args`` rule, and the operators declared
``same_shape`` in the registry (element-wise ones) pass a known shape between their inputs
and output in either direction, iterated to a fixed point.

Compilation turns a graph into the source of one Python function that calls the registry
implementations on torch tensors in order -- one call per operator, inputs by position,
attributes bound beforehand -- so running it costs no dispatch, parsing or graph walk, and
torch autograd (and ``torch.compile``) see plain torch code. Between the two, the graph is
a :class:`Plan` (the calls in order) that passes may rewrite; mirroring
(``MXNET_BACKWARD_DO_MIRROR``) wraps runs of calls in ``torch.utils.checkpoint``.
"""
import functools
import itertools
import math
import os
import warnings

import torch
from torch.utils.checkpoint import checkpoint

from .. import autograd
from ..base import MXNetError, TORCH_OF_TYPE_FLAG, np_dtype, torch_dtype
from ..operator.dtype_rules import DTypeMismatch
from ..operator.registry import SHAPE, variadic_name
from ..util import is_np_shape

__all__ = ['infer', 'infer_shape', 'infer_type', 'Call', 'Plan', 'plan_of', 'CompiledGraph', 'compiled',
           'open_shape_nodes', 'resolve_open_shapes',
           'mirror_requested', 'mirror_segments', 'recompute', 'invoke']

_META = torch.device('meta')
_CPU = torch.device('cpu')
_TORCH_ERRORS = (RuntimeError, ValueError, IndexError, TypeError, NotImplementedError)


class _DeviceContext:
    """Stands in for a Context where creation operators (``ctx`` attribute) run during inference."""
    __slots__ = ('torch_device',)

    def __init__(self, device):
        self.torch_device = device


# ------------------------------------------------------------------ inference
def _input_slots(node):
    """For each input the implementation takes, the index into ``node.inputs`` (None: absent)."""
    if node.spec.variadic:
        return list(range(len(node.inputs)))
    present = {n: i for i, n in enumerate(node.input_names())}
    return [present.get(n) for n in node.spec.inputs]


def _is_known(shape):
    # MXNet's legacy shapes mark unknown dimensions with 0; NumPy shape semantics use -1
    # (0 is then a real, zero size).
    smallest = 0 if is_np_shape() else 1
    return shape is not None and all(d is not None and d >= smallest for d in shape)


def _variable_shape(node, given):
    shape = given.get(node.name)
    if shape is None and '__shape__' in node.attrs:
        shape = node.attrs['__shape__']
    if shape is None:
        return None
    shape = SHAPE.parse(shape)
    return shape if _is_known(shape) else None


def _variable_dtype(node, given):
    dtype = given.get(node.name)
    if dtype is not None:
        return torch_dtype(dtype)
    flag = node.attrs.get('__dtype__')
    return None if flag is None else TORCH_OF_TYPE_FLAG[int(flag)]


def _has_open_shape(node):
    """Whether ``node`` creates an array whose ``shape`` attribute leaves dimensions (0s) to
    shape inference, as MXNet's symbolic begin states ``zeros((layers, 0, hidden))`` do."""
    return (not node.is_variable and not node.inputs and 'shape' in node.spec.attrs
            and not _is_known(node.params['shape']))


def _fits(template, shape):
    """Whether ``shape`` agrees with ``template`` wherever the template's dimension is known."""
    return len(template) == len(shape) and all(t in (0, None) or t == d for t, d in zip(template, shape))


class _Inference:
    """Known shapes and dtypes of graph entries ``(node, output index)``."""

    def __init__(self, sym, shapes, dtypes):
        self.shapes, self.dtypes, self.done = {}, {}, set()
        self.nodes = sym._nodes()
        self.open = {node for node in self.nodes if _has_open_shape(node)}
        for node in self.nodes:
            if node.is_variable:
                shape, dtype = _variable_shape(node, shapes), _variable_dtype(node, dtypes)
                if shape is not None:
                    self.shapes[(node, 0)] = shape
                if dtype is not None:
                    self.dtypes[(node, 0)] = dtype

    def run(self):
        changed = True
        while changed:
            changed = False
            for node in self.nodes:
                if not node.is_variable and node not in self.done:
                    changed |= self._visit(node)
        return self

    def _visit(self, node):
        changed = self._fill_arguments(node) | self._fill_dtypes(node)
        if node in self.open:           # its shape comes from its readers
            if (node, 0) in self.shapes:
                self._check_open(node)
                self.done.add(node)
            return changed
        changed |= self._solve_open_input(node)
        if all(e in self.shapes for e in node.inputs):
            changed |= self._run_meta(node)
            if all(e in self.dtypes for e in node.inputs):
                self.done.add(node)
        return changed

    def _solve_open_input(self, node):
        """The shape of an open input (see :func:`_has_open_shape`) that the rules leave
        unknown, where ``node``'s output and other inputs are known: its 0s filled with
        sizes of that output such that the operator gives exactly that output (a
        ``FullyConnected`` reading a begin state of batch 0 gets the batch of its output).
        Only a unique fill counts."""
        out = self.shapes.get((node, 0))
        pending = [e for e in node.inputs if e[0] in self.open and e not in self.shapes]
        if out is None or len(pending) != 1:
            return False
        entry = pending[0]
        template = tuple(entry[0].params['shape'])
        holes = [i for i, d in enumerate(template) if d in (0, None)]
        if len(holes) > 2:
            return False
        dtypes = [self.dtypes.get(e, torch.float32) for e in node.inputs]
        fits = []
        for sizes in itertools.product(sorted(set(out)), repeat=len(holes)):
            shape = list(template)
            for i, size in zip(holes, sizes):
                shape[i] = size
            shapes = self._input_shapes_given(node, entry, tuple(shape))
            if shapes is None:
                continue
            try:
                results = _call_on(node, shapes, dtypes, _META)
            except (MXNetError,) + _TORCH_ERRORS:
                continue
            if tuple(results[0].shape) == out:
                fits.append(tuple(shape))
        return len(fits) == 1 and self._set(self.shapes, entry, fits[0])

    def _input_shapes_given(self, node, entry, shape):
        """``node``'s input shapes if ``entry`` had ``shape`` (unknown weights from the
        operator's ``infer_args``), or None when some stay unknown."""
        known = {n: (shape if e == entry else self.shapes.get(e))
                 for n, e in zip(node.input_names(), node.inputs)}
        if None in known.values() and node.spec.infer_args is not None:
            inferred = node.spec.infer_args(known, node.params) or {}
            known = {n: s if s is not None else inferred.get(n) for n, s in known.items()}
        shapes = [known[n] for n in node.input_names()]
        return None if any(s is None or not _is_known(s) for s in shapes) else [tuple(s) for s in shapes]

    def _check_open(self, node):
        template, shape = node.params['shape'], self.shapes[(node, 0)]
        if not _fits(template, shape):
            raise MXNetError('Error in operator %s (%s): shape %s does not fit the inferred %s'
                             % (node.name, node.op, template, shape))

    def _set(self, table, entry, value):
        if entry in table:
            return False
        table[entry] = value
        return True

    def _fill_arguments(self, node):
        """Unknown input shapes from the operator's ``infer_args`` rule and, for ``same_shape``
        operators, from whichever of their inputs and output is known (so a known output
        reaches an unknown input, as in MXNet)."""
        inputs = node.inputs
        if all(e in self.shapes for e in inputs):
            return False
        changed = False
        # Like MXNet's shape functions, infer the arguments only once the data (first input) is known.
        if node.spec.infer_args is not None and inputs[0] in self.shapes:
            known = {n: self.shapes.get(e) for n, e in zip(node.input_names(), inputs)}
            inferred = node.spec.infer_args(known, node.params) or {}
            for n, e in zip(node.input_names(), inputs):
                shape = inferred.get(n)
                if (e[0].is_variable or e[0] in self.open) and shape is not None and _is_known(shape):
                    changed |= self._set(self.shapes, e, tuple(shape))
        if node.spec.shares_shape(node.params):
            entries = list(inputs) + [(node, 0)]
            known = [self.shapes[e] for e in entries if e in self.shapes]
            if known:
                for e in entries:
                    changed |= self._set(self.shapes, e, known[0])
        return changed

    def _fill_dtypes(self, node):
        """Unknown dtypes of ``node``'s inputs and output 0 from the known ones, by the
        operator's :class:`~neomx.operator.dtype_rules.DTypeRule`; MXNetError for a known
        input that contradicts it."""
        spec, entries = node.spec, list(node.inputs) + [(node, 0)]
        attr_dtype = node.params.get('dtype') if 'dtype' in spec.attrs else None
        names = node.input_names()
        try:
            solved = spec.dtypes.solve(names, node.params, [self.dtypes.get(e) for e in entries],
                                       spec.dtype_inputs, None if attr_dtype is None else torch_dtype(attr_dtype),
                                       backward='dtype' not in spec.attrs)
        except DTypeMismatch as err:
            def label(i):
                return "input %d '%s' (%s)" % (i, names[i], node.inputs[i][0].name)
            origin = 'the rule of the operator' if err.source is None else label(err.source)
            raise MXNetError('Error in operator %s (%s): incompatible dtypes: %s is %s, expected %s '
                             'from %s' % (node.name, node.op, label(err.index), np_dtype(err.got).__name__,
                                          np_dtype(err.expected).__name__, origin)) from None
        changed = False
        for entry, dtype in zip(entries, solved):
            if dtype is not None:
                changed |= self._set(self.dtypes, entry, dtype)
        return changed

    def _run_meta(self, node):
        """Output shapes and dtypes of ``node`` by running its implementation on meta tensors."""
        dtypes = [self.dtypes.get(e, torch.float32) for e in node.inputs]
        shapes = [self.shapes[e] for e in node.inputs]
        try:
            results = _call_on(node, shapes, dtypes, _META)
        except MXNetError:
            raise
        except _TORCH_ERRORS:
            # Data-dependent implementations cannot run on meta tensors: use real zeros.
            try:
                results = _call_on(node, shapes, dtypes, _CPU)
            except MXNetError:
                raise
            except _TORCH_ERRORS as err:
                raise MXNetError('Error in operator %s (%s): %s; input shapes %s'
                                 % (node.name, node.op, str(err).split('\n')[0], shapes)) from None
        inputs_typed = all(e in self.dtypes for e in node.inputs)
        changed = False
        for i, out in enumerate(results):
            entry = (node, i)
            shape = tuple(out.shape)
            if self.shapes.get(entry, shape) != shape:
                raise MXNetError('Error in operator %s (%s): incompatible shapes: output %d is %s, '
                                 'expected %s' % (node.name, node.op, i, shape, self.shapes[entry]))
            changed |= self._set(self.shapes, entry, shape)
            if inputs_typed and self.dtypes.get(entry) != out.dtype:
                self.dtypes[entry] = out.dtype
                changed = True
        return changed


def _call_on(node, shapes, dtypes, device):
    tensors = [torch.zeros(s, dtype=d, device=device) if device is _CPU else torch.empty(s, dtype=d, device=device)
               for s, d in zip(shapes, dtypes)]
    args = [None if i is None else tensors[i] for i in _input_slots(node)]
    params = node.params
    if node.spec.ctx_attrs:
        params = dict(params, ctx=_DeviceContext(device))
    results = node.spec.impl(*args, **params)
    return (results,) if isinstance(results, torch.Tensor) else results


def infer(sym, shapes=None, dtypes=None):
    """Known shapes and dtypes of every entry of ``sym``'s graph.

    Parameters
    ----------
    sym : Symbol
    shapes, dtypes : dict of str -> shape / dtype, optional
        Known values of variables, by name (variables' ``__shape__``/``__dtype__`` also count).

    Returns
    -------
    (dict, dict)
        ``{(node, index): shape tuple}`` and ``{(node, index): torch dtype}`` of the known entries.

    Raises
    ------
    MXNetError
        When the given shapes are inconsistent with an operator.
    """
    state = _Inference(sym, shapes or {}, dtypes or {}).run()
    return state.shapes, state.dtypes


def _per_group(sym, table):
    """Values of ``table`` for (arguments, outputs, auxiliary states)."""
    args, aux = sym._variables()
    return ([table.get((n, 0)) for n in args], [table.get(h) for h in sym._heads],
            [table.get((n, 0)) for n in aux])


def infer_shape(sym, known, partial):
    """``Symbol.infer_shape`` (``partial=False``) and ``infer_shape_partial``."""
    shapes, _ = infer(sym, shapes=known)
    groups = _per_group(sym, shapes)
    if partial:
        return tuple([() if s is None else s for s in group] for group in groups)
    if any(s is None for group in groups for s in group):
        unknown = [n for n, s in zip(sym.list_arguments(), groups[0]) if s is None]
        warnings.warn('Cannot decide the shape of %s: pass more argument shapes' % ', '.join(unknown),
                      stacklevel=3)
        return None, None, None
    return groups


def infer_type(sym, known):
    """``Symbol.infer_type``: numpy types, or ``(None, None, None)`` when some stay unknown."""
    _, dtypes = infer(sym, dtypes=known)
    groups = _per_group(sym, dtypes)
    if any(d is None for group in groups for d in group):
        return None, None, None
    return tuple([np_dtype(d) for d in group] for group in groups)


# ---------------------------------------------------------------- compilation
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


def open_shape_nodes(sym):
    """The nodes of ``sym`` that create arrays of shapes left to inference (0s in their
    ``shape``, like MXNet's symbolic begin states); computed once per Symbol."""
    nodes = sym._cache.get('open_shape_nodes')
    if nodes is None:
        nodes = sym._cache['open_shape_nodes'] = [n for n in sym._nodes() if _has_open_shape(n)]
    return nodes


def resolve_open_shapes(sym, shapes):
    """The shapes of :func:`open_shape_nodes` given the inputs' shapes, or None without such
    nodes: what compiling ``sym`` for these inputs needs (see :func:`compiled`).

    Parameters
    ----------
    sym : Symbol
    shapes : dict of str -> tuple
        Known input shapes, by name.

    Raises
    ------
    MXNetError
        When inference cannot decide some of them.
    """
    nodes = open_shape_nodes(sym)
    if not nodes:
        return None
    table, _ = infer(sym, shapes=shapes)
    undecided = [n.name for n in nodes if (n, 0) not in table]
    if undecided:
        raise MXNetError('cannot infer the shapes of %s (shapes with 0s) from the input shapes %s'
                         % (undecided, shapes))
    return tuple(table[(n, 0)] for n in nodes)


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

    calls = []
    for j, node in enumerate(n for n in sym._nodes() if not n.is_variable):
        params = dict(node.params, ctx=ctx) if node.spec.ctx_attrs else node.params
        if node in resolved:
            params = dict(params, shape=resolved[node])
        args = [None if i is None else ref(node.inputs[i]) for i in _input_slots(node)]
        values[node] = 'v%d' % j
        calls.append(Call(functools.partial(node.spec.impl, **params), args, values[node], node))
    return Plan(['x%d' % i for i in range(len(input_names))], calls, [ref(h) for h in sym._heads])


class CompiledGraph:
    """A graph compiled for one context.

    Parameters
    ----------
    sym : Symbol
    ctx : Context
    input_names : list of str, optional
        The variables in the order the function takes them; ``sym.list_inputs()`` by default.
    passes : sequence of callable
        ``pass(plan) -> plan`` rewrites applied in order (see :mod:`neomx.symbol.passes`);
        a pass returns its argument itself when it changes nothing.
    mirror : bool
        Recompute segments of the graph in the backward pass instead of keeping their
        intermediate values (see :func:`mirror_segments`).
    open_shapes : tuple, optional
        The shapes of the graph's :func:`open_shape_nodes`, when it has some.
    monitor : {None, 'outputs', 'all'}
        Report operators' outputs (and inputs) to a callback, the last argument of ``fn``
        (see :func:`_generate`).

    Attributes
    ----------
    input_names : list of str
    fn : callable
        ``fn(*input_tensors) -> tuple of output tensors``: plain Python over the registry's
        torch implementations, fit for ``torch.compile``.
    source : str
        The generated source of ``fn``.
    rewritten : bool
        Whether some pass changed the graph.
    """

    def __init__(self, sym, ctx, input_names=None, passes=(), mirror=False, open_shapes=None,
                 monitor=None):
        self.input_names = list(sym.list_inputs() if input_names is None else input_names)
        plan = original = plan_of(sym, ctx, self.input_names, open_shapes)
        for rewrite in passes:
            plan = rewrite(plan)
        self.rewritten = plan is not original
        self.source, self._namespace, self._line_nodes = _generate(plan, mirror, monitor)
        self._filename = '<neomx graph %s>' % sym.name
        self.fn = self.fresh_fn()

    def fresh_fn(self):
        """A new function object with its own code object for the same graph.

        ``torch.compile`` caches compiled code per code object: separate copies keep the
        compilations for different autograd modes apart.
        """
        namespace = dict(self._namespace)
        exec(compile(self.source, self._filename, 'exec'), namespace)  # pylint: disable=exec-used
        return namespace['graph']

    def __call__(self, tensors, *monitor):
        """Run on the input tensors (then the monitor callback of a monitored graph); torch
        errors become ``MXNetError`` naming the operator."""
        try:
            return self.fn(*tensors, *monitor)
        except MXNetError:
            raise
        except _TORCH_ERRORS as err:
            raise MXNetError('graph execution failed in %s: %s (graph input shapes %s)'
                             % (self._failing_node(err.__traceback__), str(err).split('\n')[0],
                                [tuple(t.shape) for t in tensors])) from None

    def _failing_node(self, traceback):
        """``'<op> <name>'`` of the operator whose line of the generated source raised."""
        while traceback is not None:
            if traceback.tb_frame.f_code.co_filename == self._filename:
                return self._line_nodes.get(traceback.tb_lineno, 'the graph')
            traceback = traceback.tb_next
        return 'the graph'


# ------------------------------------------------------------------ mirroring
def mirror_requested():
    """Whether ``MXNET_BACKWARD_DO_MIRROR`` asks for mirroring (a non-zero integer), read
    when a graph is compiled."""
    value = os.environ.get('MXNET_BACKWARD_DO_MIRROR', '').strip()
    return value.lstrip('-').isdigit() and int(value) != 0


def mirror_segments(calls):
    """Split the calls into ``[(recompute, calls)]`` runs for mirroring.

    The ``n`` calls form ``k = max(4, round(sqrt(n) / 4))`` runs of equal length. The
    forward pass keeps only each run's inputs, and the backward pass recomputes the run
    it is in; the last run is not recomputed (its backward starts right after the forward
    pass). Stored values fall to about ``1/k`` (one run's values plus the run inputs) for
    ``(k - 1) / k`` of a forward computation repeated: on a 100-layer MLP, 4 runs store 4x
    less than storing everything for three quarters of a forward pass more, where the
    memory-optimal ``sqrt(n)`` runs would save 7x but repeat nearly all of it. Deeper graphs
    get more runs, ``O(sqrt(n))``. Operators with auxiliary states (BatchNorm updates its
    moving statistics in place) run once, outside any run.
    """
    count = max(4, round(math.sqrt(len(calls)) / 4))
    size = max(1, math.ceil(len(calls) / count))
    segments, run = [], []
    for call in calls:
        if call.node.mutated_inputs():
            segments.extend([(True, run), (False, [call])] if run else [(False, [call])])
            run = []
            continue
        run.append(call)
        if len(run) == size:
            segments.append((True, run))
            run = []
    if run:
        segments.append((False, run))
    elif segments and segments[-1][0]:
        segments[-1] = (False, segments[-1][1])
    return segments


def _in_mode(mode, segment, *args):
    with mode():
        return segment(*args)


def recompute(segment, *args):
    """Run ``segment(*args)`` storing only ``args`` for the backward pass, which runs it
    again, in the training mode of this call, to get the values it needs.

    Random operators draw the same numbers both times (the RNG state is kept), so the
    gradients equal those of the stored run.
    """
    if not torch.is_grad_enabled():
        return segment(*args)
    mode = autograd.train_mode if autograd.is_training() else autograd.predict_mode
    return checkpoint(_in_mode, mode, segment, *args, use_reentrant=False)


# ----------------------------------------------------------------- generation
def _text(ref):
    name, index = ref
    return name if index is None else '%s[%d]' % (name, index)


def _runs(plan, mirror):
    """The calls in runs ``(calls, inputs, outputs)``: the value names a recomputed run
    takes and returns, both None for a run executed in place."""
    segments = mirror_segments(plan.calls) if mirror else [(False, plan.calls)]
    used_later = {name for name, _ in plan.heads}
    runs = []
    for recomputed, calls in reversed(segments):
        defined = {c.out for c in calls}
        inputs = list(dict.fromkeys(a[0] for c in calls for a in c.args
                                    if a is not None and a[0] not in defined))
        outputs = [c.out for c in calls if c.out in used_later]
        used_later.update(inputs)
        runs.append((calls, inputs, outputs) if recomputed and outputs else (calls, None, None))
    return runs[::-1]


def _monitor_lines(call, monitor):
    """Lines reporting the call's inputs (``monitor == 'all'``) or outputs to ``monitor``,
    named like MXNet's operator hooks: ``<node>_<input>`` and ``<node>_<output>``."""
    node, lines = call.node, []
    op = repr(node.op.encode())
    if monitor == 'all':
        names = node.spec.inputs if not node.spec.variadic else [variadic_name(i) for i in range(len(call.args))]
        for name, arg in zip(names, call.args):
            if arg is not None:
                lines.append('    monitor(%r, %s, %s)' % (('%s_%s' % (node.name, name)).encode(), op, _text(arg)))
    count = node.num_visible()
    for i in range(count):
        value = call.out if node.num_outputs() == 1 else '%s[%d]' % (call.out, i)
        lines.append('    monitor(%r, %s, %s)' % (node.output_name(i).encode(), op, value))
    return [(line, None) for line in lines]


def _generate(plan, mirror, monitor=None):
    """Source of ``graph(x0, x1, ...)``, the namespace it runs in (bound implementations,
    :func:`recompute`) and ``{line number: '<op> <name>'}``.

    With ``mirror`` the recomputed runs become functions ``seg<k>`` that ``graph`` calls
    through :func:`recompute`. With ``monitor`` (``'outputs'`` or ``'all'``) the function
    takes a last argument ``monitor(name, op_name, tensor)``, called after each operator
    with its outputs (and, for ``'all'``, its inputs).
    """
    namespace = {'recompute': recompute}
    functions, body = [], []            # (source line, operator label or None)
    numbers = itertools.count()

    def call_lines(calls):
        lines = []
        for call in calls:
            j = next(numbers)
            namespace['op%d' % j] = call.fn
            label = '%s %s' % (call.node.op, call.node.name)
            args = ', '.join('None' if a is None else _text(a) for a in call.args)
            lines.append(('    %s = op%d(%s)  # %s' % (call.out, j, args, label), label))
            if monitor:
                lines.extend(_monitor_lines(call, monitor))
        return lines

    for k, (calls, inputs, outputs) in enumerate(_runs(plan, mirror)):
        if inputs is None:
            body.extend(call_lines(calls))
            continue
        functions.append(('def seg%d(%s):' % (k, ', '.join(inputs)), None))
        functions.extend(call_lines(calls))
        functions.append(('    return (%s,)' % ', '.join(outputs), None))
        body.append(('    %s, = recompute(seg%d, %s)' % (', '.join(outputs), k, ', '.join(inputs)),
                     None))
    arguments = plan.inputs + (['monitor'] if monitor else [])
    lines = (functions + [('def graph(%s):' % ', '.join(arguments), None)] + body
             + [('    return (%s,)' % ', '.join(_text(h) for h in plan.heads), None)])
    line_nodes = {number: label for number, (_, label) in enumerate(lines, 1) if label}
    return '\n'.join(line for line, _ in lines) + '\n', namespace, line_nodes


def compiled(sym, ctx, input_names=None, passes=(), mirror=None, open_shapes=None, monitor=None):
    """The :class:`CompiledGraph` of ``sym`` for ``ctx``, built once and cached on the Symbol.

    The generated code does not depend on shapes or dtypes (the implementations handle
    any), so the context, the order of the inputs, the passes and mirroring are the whole
    cache key: new input shapes never re-trace. The exception are graphs that create arrays
    of shapes left to inference (:func:`open_shape_nodes`), compiled for each set of
    ``open_shapes`` (:func:`resolve_open_shapes`).

    Parameters
    ----------
    sym : Symbol
    ctx : Context
    input_names : list of str, optional
        The order in which the function takes the variables; ``sym.list_inputs()`` by default.
    passes : tuple of callable
        Plan rewrites (see :class:`CompiledGraph`).
    mirror : bool, optional
        Recompute segments in the backward pass; None reads ``MXNET_BACKWARD_DO_MIRROR``.
    open_shapes, monitor
        See :class:`CompiledGraph`.
    """
    mirror = mirror_requested() if mirror is None else bool(mirror)
    key = ('compiled', ctx, None if input_names is None else tuple(input_names), tuple(passes), mirror,
           open_shapes, monitor)
    graph = sym._cache.get(key)
    if graph is None:
        graph = sym._cache[key] = CompiledGraph(sym, ctx, input_names, passes, mirror, open_shapes, monitor)
    return graph


def invoke(sym, arrays):
    """Run ``sym`` on NDArrays under the current autograd state (recorded inside
    ``autograd.record()``, differentiable w.r.t. the inputs like the nd operators).

    Parameters
    ----------
    sym : Symbol
    arrays : dict of str -> NDArray
        A value for every input (``list_inputs()``).

    Returns
    -------
    list of NDArray
    """
    from ..ndarray.ndarray import _new
    missing = [n for n in sym.list_inputs() if n not in arrays]
    if missing:
        raise ValueError('invoke: no value given for %s' % ', '.join(missing))
    ctx = next(iter(arrays.values()))._ctx if arrays else None
    if ctx is None:
        from ..context import current_context
        ctx = current_context()
    graph = compiled(sym, ctx, open_shapes=resolve_open_shapes(sym, {n: a.shape for n, a in arrays.items()}))
    outputs = graph([arrays[n]._t for n in graph.input_names])
    return [_new(t, ctx) for t in outputs]
