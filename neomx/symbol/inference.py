"""Shape and dtype inference over Symbol graphs.

Inference runs each operator's torch implementation on ``device='meta'`` tensors in graph
order, so output shapes and dtypes follow the implementations exactly; unknown argument
shapes (weights) come from the operator's ``infer_args`` rule, and the operators declared
``same_shape`` in the registry (element-wise ones) pass a known shape between their inputs
and output in either direction, iterated to a fixed point.
"""
import itertools
import warnings

import torch

from .. import autograd
from ..async_errors import carries_error
from ..base import MXNetError, TORCH_OF_TYPE_FLAG, np_dtype, torch_dtype
from ..operator.dtype_rules import DTypeMismatch
from ..context import Context
from ..operator.registry import SHAPE, OpSpec
from ..util import is_np_array, is_np_shape
from . import partial_shapes as partial_shape

__all__ = ['infer', 'infer_shape', 'infer_type', 'input_slots', 'per_group', 'open_shape_nodes',
           'resolve_open_shapes', 'params_for_shape', 'TORCH_ERRORS']

_META = torch.device('meta')
_CPU = torch.device('cpu')
TORCH_ERRORS = (RuntimeError, ValueError, IndexError, TypeError, NotImplementedError)



class _DeviceContext:
    """Stands in for a Context where creation operators (``ctx`` attribute) run during inference."""
    __slots__ = ('torch_device',)

    def __init__(self, device):
        self.torch_device = device


# ------------------------------------------------------------------ inference
def input_slots(node):
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
    """The partial shape of a variable (see :mod:`.partial_shapes`), None when unknown."""
    shape = given.get(node.name)
    if shape is None and '__shape__' in node.attrs:
        shape = node.attrs['__shape__']
    if shape is None or shape == 'None':       # MXNet's NumPy-semantics text for an unknown shape
        return None
    return partial_shape.as_partial(SHAPE.parse(shape))


def _variable_dtype(node, given):
    dtype = given.get(node.name)
    if dtype is not None:
        return torch_dtype(dtype)
    flag = node.attrs.get('__dtype__')
    return None if flag is None else TORCH_OF_TYPE_FLAG[int(flag)]


def _has_open_shape(node):
    """Whether ``node`` creates an array whose shape is left to shape inference: a ``shape``
    attribute with 0s, as MXNet's symbolic begin states ``zeros((layers, 0, hidden))``, or
    ``arange(..., infer_range=True)``, whose length its readers decide."""
    if node.is_variable or node.inputs:
        return False
    if node.op == '_arange':
        return bool(node.params.get('infer_range'))
    shape = node.params.get('shape')
    if not isinstance(shape, (tuple, list)):    # None, or not a shape (``_npi_gamma``'s shape parameter)
        return False
    return 'shape' in node.spec.attrs and not _is_known(shape)


def _open_template(node):
    """What an open node's attributes say of its shape (None for the dimensions left open)."""
    if node.op == '_arange':
        return (None,)
    return partial_shape.as_partial(node.params['shape']) or ()


def params_for_shape(node, params, shape):
    """``params`` of an open node (see :func:`_has_open_shape`) set to create ``shape``: the
    shape itself, or for ``arange`` the ``stop`` that gives that many values from ``start``,
    ``step`` and ``repeat`` (what MXNet's ``infer_range`` does)."""
    if node.op != '_arange':
        return dict(params, shape=shape)
    length, repeat = shape[0], params['repeat']
    if length % repeat:
        raise MXNetError('Error in operator %s (_arange): an inferred length of %d is not a multiple of '
                         'repeat=%d' % (node.name, length, repeat))
    # half a step short of the last value's successor, so that rounding cannot add one
    stop = params['start'] + params['step'] * (length // repeat - 0.5)
    return dict(params, stop=stop, infer_range=False)


# Bounds of the search for unknown input dimensions from known outputs (_solve_partial_input)
_MAX_SOLVED_HOLES = 4
_MAX_SOLVED_OUTPUTS = 64


class _Inference:
    """Known shapes and dtypes of graph entries ``(node, output index)``."""

    def __init__(self, sym, shapes, dtypes):
        self.shapes, self.dtypes, self.done = {}, {}, set()
        # entries of which only some dimensions are known (None for the others), or whose
        # shape an operator's rule gave for a value computed by another operator
        self.partial = {}
        self._probed = {}       # node -> the input shapes it was last probed with
        self._solved_with = {}  # node -> (output, input shapes) of its last _solve_partial_input
        self.nodes = sym._nodes()
        self.open = {node for node in self.nodes if _has_open_shape(node)}
        for node in self.nodes:
            if node.is_variable:
                shape, dtype = _variable_shape(node, shapes), _variable_dtype(node, dtypes)
                self._learn((node, 0), shape)
                if dtype is not None:
                    self.dtypes[(node, 0)] = dtype
            elif node in self.open:
                self._learn((node, 0), _open_template(node))

    def _learn(self, entry, partial):
        """Record what ``partial`` says of ``entry``'s shape: its shape when complete (for
        variables and open nodes; a hint for computed values), else the known dimensions.
        MXNetError when it contradicts what is known."""
        if partial is None or entry in self.shapes:
            return False
        try:
            merged = partial_shape.merge(self.partial.get(entry), partial)
        except ValueError as err:
            node = entry[0]
            raise MXNetError('Error in operator %s (%s): incompatible shapes for output %d: %s'
                             % (node.name, node.op, entry[1], err)) from None
        if partial_shape.is_complete(merged) and (entry[0].is_variable or entry[0] in self.open):
            self.shapes[entry] = merged
            return True
        if self.partial.get(entry) == merged:
            return False
        self.partial[entry] = merged
        return True

    def known(self, entry):
        """What is known of ``entry``'s shape: a shape, a partial shape or None."""
        shape = self.shapes.get(entry)
        return shape if shape is not None else self.partial.get(entry)

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
        changed |= self._solve_partial_input(node)
        if all(e in self.shapes for e in node.inputs):
            changed |= self._run_meta(node)
            if all(e in self.dtypes for e in node.inputs):
                self.done.add(node)
        else:
            changed |= self._probe(node)
        return changed

    def _solve_partial_input(self, node):
        """The shapes of partly known inputs (a variable's or an open node's, see
        :func:`_has_open_shape`) that the rules leave open, where some of ``node``'s outputs
        and its other inputs are known: their unknown dimensions filled (from the outputs'
        sizes, or the size that keeps the number of elements) such that the operator gives
        exactly those outputs -- a ``FullyConnected`` reading a begin state of batch 0 gets
        the batch of its output, a ``Reshape`` the one size its input lacks, a ``Concat``
        of inputs of unknown batch the batch of its output. Only a unique fill counts."""
        outs = {i: self.shapes[(node, i)] for i in range(_MAX_SOLVED_OUTPUTS) if (node, i) in self.shapes}
        pending = []
        for e in node.inputs:
            if e not in self.shapes and e in self.partial and (e[0].is_variable or e[0] in self.open) \
                    and e not in pending:
                pending.append(e)
        if not outs or not pending:
            return False
        holes = [(e, k) for e in pending for k, d in enumerate(self.partial[e]) if d is None]
        tried = (outs, [self.known(e) for e in node.inputs])
        if len(holes) > _MAX_SOLVED_HOLES or self._solved_with.get(node) == tried:
            return False
        self._solved_with[node] = tried
        if len(pending) == 1 and len(holes) <= 2:
            # every candidate tried: a fill is unique among sizes the outputs do not suggest too
            candidates = partial_shape.hole_candidates(self.partial[pending[0]], outs[min(outs)])
            fits = self._fills(node, holes, outs, itertools.product(candidates, repeat=len(holes)))
        else:
            # the outputs' sizes tried together, then each hole of the one fit moved alone
            candidates = sorted({d for shape in outs.values() for d in shape} | {1})
            fits = self._fills(node, holes, outs, itertools.product(candidates, repeat=len(holes)))
            if len(fits) == 1:
                moved = [fits[0][:h] + (size,) + fits[0][h + 1:] for h in range(len(holes))
                         for size in (2, 5, 61, 89) if size != fits[0][h]]
                fits += self._fills(node, holes, outs, moved)
        if len(fits) != 1:
            return False
        changed = False
        for entry in pending:
            shape = list(self.partial[entry])
            for (e, k), size in zip(holes, fits[0]):
                if e == entry:
                    shape[k] = size
            changed |= self._learn(entry, tuple(shape))
        return changed

    def _fills(self, node, holes, outs, fills):
        """The ``fills`` (a size per hole ``(entry, dimension)``) with which ``node`` gives
        exactly the known outputs ``outs``."""
        dtypes = [self.dtypes.get(e, torch.float32) for e in node.inputs]
        fits = []
        for sizes in fills:
            filled = {e: list(self.partial[e]) for e, _ in holes}
            for (e, k), size in zip(holes, sizes):
                filled[e][k] = size
            shapes = self._input_shapes_given(node, {e: tuple(s) for e, s in filled.items()})
            if shapes is None:
                continue
            try:
                results = _meta_outputs(node, shapes, dtypes)
            except (MXNetError,) + TORCH_ERRORS:
                continue
            if all(i < len(results) and tuple(results[i].shape) == out for i, out in outs.items()):
                fits.append(tuple(sizes))
        return fits

    def _probe(self, node):
        """What ``node``'s partly known inputs tell of its outputs' shapes and its unknown
        arguments' (weights'), by probing (see :mod:`.partial_shapes`)."""
        partials = [self.known(e) for e in node.inputs]
        if partials[:1] == [None] or all(p is None for p in partials) or self._probed.get(node) == partials:
            return False
        self._probed[node] = partials
        filled, outputs = self._probe_runs(node, partials, tied=False)
        if sum(o is not None for o in outputs) < 2:     # maybe the unknown sizes must be equal
            filled, outputs = self._probe_runs(node, partials, tied=True)
        if all(o is None for o in outputs):
            # every probe refused: the unknown sizes must match the other inputs' (np.dot's
            # contracted axis), which probes never hit
            return self._fill_from_other_inputs(node, partials)
        changed = False
        for k, entry in enumerate(node.inputs):
            if partials[k] is None:
                changed |= self._learn(entry, partial_shape.agreed([f[k] for f in filled]))
        for i, result in enumerate(partial_shape.agreed_outputs(outputs, partials[0])):
            if partial_shape.is_complete(result):
                changed |= self._set(self.shapes, (node, i), result)
            else:
                changed |= self._learn((node, i), result)
        return changed

    def _probe_runs(self, node, partials, tied):
        """The input shapes and output shapes (None where refused) of each probe run."""
        names = node.input_names()
        dtypes = [self.dtypes.get(e, torch.float32) for e in node.inputs]
        filled, outputs = [], []
        for run in partial_shape.probe_runs(partials, node.inputs, tied):
            known = dict(zip(names, run))
            if None in run and node.spec.infer_args is not None:
                try:
                    inferred = node.spec.infer_args(known, node.params) or {}
                except (MXNetError,) + TORCH_ERRORS:
                    inferred = {}
                known = {n: s if s is not None else inferred.get(n) for n, s in known.items()}
            shapes = [known[n] for n in names]
            filled.append(shapes)
            if any(s is None for s in shapes):
                outputs.append(None)
                continue
            try:
                outputs.append([tuple(t.shape) for t in _meta_outputs(node, [tuple(s) for s in shapes], dtypes)])
            except (MXNetError,) + TORCH_ERRORS:
                outputs.append(None)    # sizes the operator refuses: see agreed_outputs
        return filled, outputs

    def _fill_from_other_inputs(self, node, partials):
        """The unknown dimensions of ``node``'s one partly known input filled with sizes of its
        other, known inputs, where exactly one such fill is accepted by the operator: a
        ``(-1, 100)`` weight of ``np.dot(x, w)`` with ``x`` of shape ``(64, 1000)`` gets
        ``(1000, 100)``, as MXNet's shape rule fills the contracted axis."""
        if any(p is None for p in partials):
            return False
        holed = [k for k, p in enumerate(partials) if not partial_shape.is_complete(p)]
        if len(holed) != 1:
            return False
        k = holed[0]
        template = partials[k]
        holes = [i for i, d in enumerate(template) if d is None]
        sizes = sorted({d for j, p in enumerate(partials) if j != k for d in p})
        if len(holes) > 2 or not sizes:
            return False
        dtypes = [self.dtypes.get(e, torch.float32) for e in node.inputs]
        fits = []
        for fill in itertools.product(sizes, repeat=len(holes)):
            shape = list(template)
            for i, d in zip(holes, fill):
                shape[i] = d
            shapes = [tuple(shape) if j == k else tuple(p) for j, p in enumerate(partials)]
            try:
                _meta_outputs(node, shapes, dtypes)
            except (MXNetError,) + TORCH_ERRORS:
                continue
            fits.append(tuple(shape))
        return len(fits) == 1 and self._learn(node.inputs[k], fits[0])

    def _input_shapes_given(self, node, given):
        """``node``'s input shapes if the entries of ``given`` had its shapes (unknown
        weights from the operator's ``infer_args``), or None when some stay unknown."""
        known = {n: (given[e] if e in given else self.shapes.get(e))
                 for n, e in zip(node.input_names(), node.inputs)}
        if None in known.values() and node.spec.infer_args is not None:
            inferred = node.spec.infer_args(known, node.params) or {}
            known = {n: s if s is not None else inferred.get(n) for n, s in known.items()}
        shapes = [known[n] for n in node.input_names()]
        return None if any(s is None or not _is_known(s) for s in shapes) else [tuple(s) for s in shapes]

    def _check_open(self, node):
        template, shape = _open_template(node), self.shapes[(node, 0)]
        if not partial_shape.fits(template, shape):
            raise MXNetError('Error in operator %s (%s): shape %s does not fit the inferred %s'
                             % (node.name, node.op, partial_shape.shown(template), shape))

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
                if shape is not None and _is_known(shape):
                    changed |= self._learn(e, tuple(shape))
        if node.spec.shares_shape(node.params):
            changed |= self._share_shape(list(inputs) + [(node, 0)])
        return changed

    def _share_shape(self, entries):
        """Entries of one shape (an element-wise operator's inputs and output): a known shape
        goes to all, and so do the dimensions each partial shape knows."""
        known = [self.shapes[e] for e in entries if e in self.shapes]
        if known:
            changed = False
            for e in entries:
                changed |= self._set(self.shapes, e, known[0])
            return changed
        merged = None
        for e in entries:
            merged = self._merged(merged, e, entries)
        if merged is None:
            return False
        if partial_shape.is_complete(merged):
            return any([self._set(self.shapes, e, merged) for e in entries])
        return any([self._learn(e, merged) for e in entries])

    def _merged(self, merged, entry, entries):
        try:
            return partial_shape.merge(merged, self.partial.get(entry))
        except ValueError as err:
            node = entries[-1][0]
            raise MXNetError('Error in operator %s (%s): incompatible input shapes %s'
                             % (node.name, node.op, err)) from None

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
        if spec.dtypes.later_outputs is not None:
            later = spec.dtypes.later_outputs(solved[:-1], node.params)
            if later is not None:
                for i in range(1, spec.count_outputs(node.params)):
                    changed |= self._set(self.dtypes, (node, i), later)
        return changed

    def _run_meta(self, node):
        """Output shapes and dtypes of ``node`` by running its implementation on meta tensors."""
        dtypes = [self.dtypes.get(e, torch.float32) for e in node.inputs]
        shapes = [self.shapes[e] for e in node.inputs]
        try:
            results = _meta_outputs(node, shapes, dtypes)
        except MXNetError:
            raise
        except TORCH_ERRORS:
            # Data-dependent implementations cannot run on meta tensors: use real zeros.
            try:
                results = _call_on(node, shapes, dtypes, _CPU)
            except MXNetError:
                raise
            except TORCH_ERRORS as err:
                raise MXNetError('Error in operator %s (%s): %s; input shapes %s'
                                 % (node.name, node.op, str(err).split('\n')[0], shapes)) from None
        inputs_typed = all(e in self.dtypes for e in node.inputs)
        changed = False
        for i, out in enumerate(results):
            entry = (node, i)
            shape = tuple(out.shape)
            expected = self.known(entry)
            if expected is not None and not (len(expected) == len(shape) and partial_shape.fits(expected, shape)):
                raise MXNetError('Error in operator %s (%s): incompatible shapes: output %d is %s, '
                                 'expected %s' % (node.name, node.op, i, shape, partial_shape.shown(expected)))
            changed |= self._set(self.shapes, entry, shape)
            if inputs_typed and self.dtypes.get(entry) != out.dtype:
                self.dtypes[entry] = out.dtype
                changed = True
        return changed


# Meta runs already made, by operator, attributes, semantics and input shapes and dtypes: an
# unrolled RNN repeats the same few calls at every step, and a Module's bind infers one graph
# several times (shapes, dtypes, outputs, begin states). Emptied when full.
_META_RESULTS = {}
_META_RESULTS_SIZE = 4096
# attribute values that are plain data, so equal keys mean equal calls (anything else --
# subgraphs, callables -- is never cached)
_PLAIN = (type(None), bool, int, float, str, torch.dtype, type, Context)


def _plain_key(value):
    """``value`` as a hashable key, or raise TypeError when it is not plain data. Values
    keep their type: ``1``, ``1.0`` and ``True`` are equal keys of a dict, but a scalar
    attribute of 1 and of 1.0 can give different dtypes."""
    if isinstance(value, _PLAIN):
        return type(value), value
    if isinstance(value, (tuple, list)):
        return (type(value),) + tuple(_plain_key(v) for v in value)
    raise TypeError('not plain data')


def _meta_key(node, shapes, dtypes):
    """The cache key of ``node``'s meta run on inputs of these shapes and dtypes, or None for
    the operators that run other code (custom operators, subgraphs: their OpSpec
    subclasses) or take attributes that are not plain data."""
    spec = node.spec
    if type(spec) is not OpSpec:
        return None
    try:
        params = tuple((k, _plain_key(v)) for k, v in node.params.items())
    except TypeError:
        return None
    return (spec.impl, params, tuple(map(tuple, shapes)), tuple(dtypes),
            is_np_shape(), is_np_array(), autograd.is_training())


def _meta_outputs(node, shapes, dtypes):
    """``node``'s outputs on meta tensors of these input shapes and dtypes (see
    :func:`_call_on`), from the cache when the same call ran before -- a failure too (the
    shapes that probing tries include the refused ones), raised again."""
    key = _meta_key(node, shapes, dtypes)
    if key is None:
        return _call_on(node, shapes, dtypes, _META)
    results = _META_RESULTS.get(key)
    if results is None:
        try:
            results = tuple(_call_on(node, shapes, dtypes, _META))
        except (MXNetError,) + TORCH_ERRORS as err:
            # kept as its class and arguments: the exception object would keep the frames of
            # its traceback, and with them the arrays of the program that asked, alive
            results = _Refused(type(err), err.args)
        else:
            if any(carries_error(t) for t in results):
                # a data-dependent error (a sampler's scale) deferred onto the meta outputs: they
                # must die with this inference, as the error does with them (MXNet's waitall
                # does not raise an error whose arrays are gone)
                return results
        if len(_META_RESULTS) >= _META_RESULTS_SIZE:
            _META_RESULTS.clear()
        _META_RESULTS[key] = results
    if type(results) is _Refused:
        raise results.error_class(*results.args)
    return results


class _Refused(tuple):
    """A meta run that failed: ``(error class, its arguments)``."""
    __slots__ = ()

    def __new__(cls, error_class, args):
        return tuple.__new__(cls, (error_class, args))

    error_class = property(lambda self: self[0])
    args = property(lambda self: self[1])


def _call_on(node, shapes, dtypes, device):
    tensors = [torch.zeros(s, dtype=d, device=device) if device is _CPU else torch.empty(s, dtype=d, device=device)
               for s, d in zip(shapes, dtypes)]
    args = [None if i is None else tensors[i] for i in input_slots(node)]
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


def per_group(sym, table):
    """Values of ``table`` for (arguments, outputs, auxiliary states)."""
    args, aux = sym._variables()
    return ([table.get((n, 0)) for n in args], [table.get(h) for h in sym._heads],
            [table.get((n, 0)) for n in aux])


def _entries(sym):
    return [(n, i) for n in sym._nodes() for i in range(n.num_outputs())]


def infer_shape(sym, known, partial):
    """``Symbol.infer_shape`` (``partial=False``) and ``infer_shape_partial``."""
    state = _Inference(sym, known, {}).run()
    shapes = state.shapes
    groups = per_group(sym, shapes)
    if partial:
        # what is known of the others: MXNet's 0 (or -1) for unknown dimensions
        known_parts = {e: state.known(e) for e in _entries(sym)}
        return tuple([partial_shape.shown(p) for p in group] for group in per_group(sym, known_parts))
    if any(s is None for group in groups for s in group):
        unknown = [n for n, s in zip(sym.list_arguments(), groups[0]) if s is None]
        warnings.warn('Cannot decide the shape of %s: pass more argument shapes' % ', '.join(unknown),
                      stacklevel=3)
        return None, None, None
    return groups


def infer_type(sym, known):
    """``Symbol.infer_type``: numpy types, or ``(None, None, None)`` when some stay unknown."""
    _, dtypes = infer(sym, dtypes=known)
    groups = per_group(sym, dtypes)
    if any(d is None for group in groups for d in group):
        return None, None, None
    return tuple([np_dtype(d) for d in group] for group in groups)



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
        raise MXNetError('cannot infer the shapes of %s (shapes left to inference) from the input shapes %s'
                         % (undecided, shapes))
    return tuple(table[(n, 0)] for n in nodes)

