"""Shape/type inference over Symbol graphs, and their compilation into flat callables.

Inference runs each operator's torch implementation on ``device='meta'`` tensors in graph
order, so output shapes and dtypes follow the implementations exactly; unknown argument
shapes (weights) come from the operator's ``infer_args`` rule and a few equalities
(element-wise binary operators), iterated to a fixed point.

Compilation turns a graph into the source of one Python function that calls the registry
implementations on torch tensors in order -- one call per operator, inputs by position,
attributes bound beforehand -- so running it costs no dispatch, parsing or graph walk, and
torch autograd (and ``torch.compile``) see plain torch code.
"""
import functools
import warnings

import torch

from ..base import MXNetError, TORCH_OF_TYPE_FLAG, np_dtype, torch_dtype
from ..operator.registry import SHAPE

__all__ = ['infer', 'infer_shape', 'infer_type', 'CompiledGraph', 'compiled', 'invoke']

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
    # MXNet's legacy shapes mark unknown dimensions with 0.
    return shape is not None and all(d is not None and d > 0 for d in shape)


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


def _is_elemwise_binary(spec):
    """Non-broadcasting binary operators: both inputs and the output share one shape."""
    return spec.inputs == ('lhs', 'rhs') and not spec.attrs and not spec.name.startswith('broadcast_')


class _Inference:
    """Known shapes and dtypes of graph entries ``(node, output index)``."""

    def __init__(self, sym, shapes, dtypes):
        self.shapes, self.dtypes, self.done = {}, {}, set()
        self.nodes = sym._nodes()
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
        if all(e in self.shapes for e in node.inputs):
            changed |= self._run_meta(node)
            if all(e in self.dtypes for e in node.inputs):
                self.done.add(node)
        return changed

    def _set(self, table, entry, value):
        if entry in table:
            return False
        table[entry] = value
        return True

    def _fill_arguments(self, node):
        """Unknown input shapes from the operator's rule and element-wise equalities."""
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
                if e[0].is_variable and shape is not None and _is_known(shape):
                    changed |= self._set(self.shapes, e, tuple(shape))
        if _is_elemwise_binary(node.spec):
            entries = list(inputs) + [(node, 0)]
            known = [self.shapes[e] for e in entries if e in self.shapes]
            if known:
                for e in entries:
                    changed |= self._set(self.shapes, e, known[0])
        return changed

    def _fill_dtypes(self, node):
        """Unknown dtypes: an operator's ``dtype`` attribute gives its output's; otherwise
        inputs and output share one dtype (MXNet's same-type rule)."""
        if 'dtype' in node.spec.attrs:
            dtype = node.params['dtype']
            return dtype is not None and self._set(self.dtypes, (node, 0), torch_dtype(dtype))
        entries = list(node.inputs) + [(node, 0)]
        known = [self.dtypes[e] for e in entries if e in self.dtypes]
        changed = False
        if known:
            for e in entries:
                changed |= self._set(self.dtypes, e, known[0])
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
class CompiledGraph:
    """A graph compiled for one context.

    Attributes
    ----------
    input_names : list of str
        The variables in the order the function takes them (``Symbol.list_inputs()`` unless
        another order was asked for).
    fn : callable
        ``fn(*input_tensors) -> tuple of output tensors``: plain Python over the registry's
        torch implementations, fit for ``torch.compile``.
    source : str
        The generated source of ``fn``.
    """

    def __init__(self, sym, ctx, input_names=None):
        self.input_names = list(sym.list_inputs() if input_names is None else input_names)
        self.source, namespace, self._line_nodes = _generate(sym, ctx, self.input_names)
        self._filename = '<neomx graph %s>' % sym.name
        exec(compile(self.source, self._filename, 'exec'), namespace)  # pylint: disable=exec-used
        self.fn = namespace['graph']

    def __call__(self, tensors):
        """Run on the input tensors; torch errors become ``MXNetError`` naming the operator."""
        try:
            return self.fn(*tensors)
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


def _generate(sym, ctx, input_names):
    """Source of ``graph(x0, x1, ...)`` (one argument per name of ``input_names``), the
    namespace it runs in (bound implementations) and ``{line number: operator}``."""
    namespace, values, line_nodes = {}, {}, {}
    position = {name: i for i, name in enumerate(input_names)}
    lines = ['def graph(%s):' % ', '.join('x%d' % i for i in range(len(input_names)))]
    for node in sym._nodes():
        if node.is_variable:
            values[node] = 'x%d' % position[node.name]

    def ref(entry):
        node, index = entry
        return values[node] if node.num_outputs() == 1 else '%s[%d]' % (values[node], index)

    for j, node in enumerate(n for n in sym._nodes() if not n.is_variable):
        params = dict(node.params, ctx=ctx) if node.spec.ctx_attrs else node.params
        namespace['op%d' % j] = functools.partial(node.spec.impl, **params)
        args = ['None' if i is None else ref(node.inputs[i]) for i in _input_slots(node)]
        lines.append('    v%d = op%d(%s)  # %s %s' % (j, j, ', '.join(args), node.op, node.name))
        line_nodes[len(lines)] = '%s %s' % (node.op, node.name)
        values[node] = 'v%d' % j
    lines.append('    return (%s,)' % ', '.join(ref(h) for h in sym._heads))
    return '\n'.join(lines) + '\n', namespace, line_nodes


def compiled(sym, ctx, input_names=None):
    """The :class:`CompiledGraph` of ``sym`` for ``ctx``, built once and cached on the Symbol.

    The generated code does not depend on shapes or dtypes (the implementations handle
    any), so the context (and the order of the inputs) is the whole cache key: new input
    shapes never re-trace.

    Parameters
    ----------
    sym : Symbol
    ctx : Context
    input_names : list of str, optional
        The order in which the function takes the variables; ``sym.list_inputs()`` by default.
    """
    key = ('compiled', ctx, None if input_names is None else tuple(input_names))
    graph = sym._cache.get(key)
    if graph is None:
        graph = sym._cache[key] = CompiledGraph(sym, ctx, input_names)
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
    graph = compiled(sym, ctx)
    outputs = graph([arrays[n]._t for n in graph.input_names])
    return [_new(t, ctx) for t in outputs]
