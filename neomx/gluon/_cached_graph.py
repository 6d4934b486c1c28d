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

Each bound graph has two compiled forms: the graph as traced (on CPUs with the default
backend, rewritten by :mod:`neomx.symbol.training_passes`: max pooling before relu, layouts
for torch's kernels), and an inference form rewritten by :mod:`neomx.symbol.passes`
(convolutions fused with BatchNorm, sums and relu), run for calls outside
``autograd.record()`` in predict mode. ``hybridize`` flags choose how both run:

* ``backend='inductor'`` (with ``backend_opts``, keyword arguments of ``torch.compile``):
  ``torch.compile(backend='inductor', dynamic=False)``, one compilation per autograd mode
  and input shapes; inference compiles with inductor's ``freezing`` (parameters become
  constants; a changed parameter recompiles). A failing compilation falls back, with a
  warning, to the default backend.
* ``static_alloc=True, static_shape=True``: on GPUs CUDA-graph replay (``torch.compile``'s
  ``cudagraphs`` backend, or inductor's ``reduce-overhead`` mode).
* ``static_alloc=True``: the list of parameter tensors is built once per binding instead
  of once per call, and on CPUs freed host memory stays pooled in the process for the
  next call's arrays (:func:`neomx._memory.pool_host_memory`), as in MXNet.
* ``mirror=True`` (or the environment variable ``MXNET_BACKWARD_DO_MIRROR=1`` when the
  graph is compiled): segments of the graph are recomputed in the backward pass instead of
  keeping their intermediate values (see :func:`neomx.symbol.graph.mirror_segments`).
"""
import warnings
from typing import Callable, NamedTuple

import torch

from .._autograd_state import STATE as _AUTOGRAD
from .. import _int_grad, autograd
from .._memory import pool_host_memory
from .._recorded_graph import note_graph
from .._torch_private import inductor_freezing
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.ndarray import constructor, wrap_tensor
from ..ndarray.sparse_arrays import SPARSE_MADE, from_sparse_tensor, storage_tensor
from .. import numpy as _np
from ..symbol.numpy import NumpySymbol as _Symbol, np_symbol, tracing_inputs
from ..util import is_np_array
from ..symbol import Group, Symbol, var
from ..symbol.graph import compiled, open_shape_nodes, resolve_open_shapes
from ..symbol.integer_grads import carry_integer_gradients, needs_integer_gradients
from . import parameter as _parameter
from ..symbol.passes import INFERENCE_PASSES, version_stamp
from ..symbol.sparse_storage import keep_sparse_storage
from ..symbol.training_passes import TRAINING_PASSES
from .parameter import shape_is_known

__all__ = ['flatten', 'regroup', 'trace', 'CachedGraph', 'input_kinds', 'cached_for_format', 'check_numpy_outputs']


def flatten(value, strict=False):
    """Nested lists/tuples of arrays -> (flat list, hashable format to rebuild the nesting).

    A leaf (NDArray, Symbol of one output) has format 0 and None has format None, so the
    format also tells which inputs are absent; a Symbol of ``n > 1`` outputs is flattened
    into its outputs with format ``n``; a sequence has the tuple of its items' formats.
    ``strict`` refuses other leaves (a number) with MXNet's ValueError: a graph cannot
    take them as inputs.
    """
    if isinstance(value, (list, tuple)):
        flat, fmt = [], []
        for item in value:
            items, item_fmt = flatten(item, strict)
            flat.extend(items)
            fmt.append(item_fmt)
        return flat, tuple(fmt)
    if value is None:
        return [value], None
    if isinstance(value, Symbol) and len(value) > 1:
        return list(value), len(value)
    if strict and not isinstance(value, (NDArray, Symbol)):
        raise ValueError('When hybridized, the input of HybridBlock must be (nested) list of '
                         'Symbol or NDArray, but got %s of type %s' % (value, type(value)))
    return [value], 0


def input_kinds(args):
    """``(has_symbol, contexts)`` of the arrays in nested ``args``: whether they are Symbols,
    and the set of the NDArrays' contexts.

    Raises
    ------
    ValueError
        As MXNet, when ``args`` mix NDArrays and Symbols or hold neither.
    """
    has_symbol, contexts, pending = False, set(), list(args)
    while pending:
        item = pending.pop()
        if isinstance(item, NDArray):
            contexts.add(item._ctx)
        elif isinstance(item, Symbol):
            has_symbol = True
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    if has_symbol and contexts:
        raise ValueError('In HybridBlock, we do not support mixed NDArrays and Symbols types for '
                         'the input. Please check the type of the args.')
    if not has_symbol and not contexts:
        raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the input. '
                         'Please check the type of the args.')
    return has_symbol, contexts


def _without_trailing_none(fmt):
    end = len(fmt)
    while end and fmt[end - 1] is None:
        end -= 1
    return fmt[:end]


def _padded(fmt, length):
    """The top-level format ``fmt`` with absent trailing arguments as None, to ``length``."""
    return fmt + (None,) * (length - len(fmt))


def _same_but_none(a, b):
    """Whether formats ``a`` and ``b`` agree wherever neither is None (an absent input)."""
    if a is None or b is None:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_but_none(x, y) for x, y in zip(a, b))
    return a == b


def cached_for_format(graphs, fmt):
    """The graph of ``graphs`` (format -> CachedGraph) that serves calls of input format
    ``fmt`` though traced for another: one given fewer or more trailing None arguments
    (``f(x)`` and ``f(x, None)``, as MXNet allows); None when ``fmt`` needs a new trace.

    Raises
    ------
    ValueError
        As MXNet, when ``fmt`` differs from a traced format only by which inputs are None
        (or absent at the end): a graph traced without an input cannot take it, nor one
        traced with it go without.
    """
    stripped = _without_trailing_none(fmt)
    for traced, graph in graphs.items():
        if isinstance(traced, tuple) and _without_trailing_none(traced) == stripped:
            return graph
    for traced in graphs:
        if isinstance(traced, tuple) and _same_but_none(_padded(traced, len(fmt)),
                                                        _padded(fmt, len(traced))):
            raise ValueError('The argument structure of HybridBlock does not match the cached '
                             'version: inputs given as None must stay None once hybridized. '
                             'Stored format = %s, input format = %s' % (traced, fmt))
    return None


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


def input_variables(flat_args, np_mode=False):
    """MXNet's names for the inputs of a traced graph: ``data`` when one input is given,
    else ``data0``, ``data1``...; None inputs get no variable. ``np_mode``: NumPy
    semantics (``mx.sym.np._Symbol`` variables)."""
    given = sum(a is not None for a in flat_args)
    names = iter(['data'] if given == 1 else ['data%d' % i for i in range(given)])
    make = (lambda name: np_symbol(var(name))) if np_mode else var
    return [None if a is None else make(next(names)) for a in flat_args]


def trace(block, flat_args, in_fmt):
    """Trace ``block.hybrid_forward`` with ``F = mx.sym`` on inputs shaped like ``flat_args``.

    Returns
    -------
    CachedGraph
    """
    variables = input_variables(flat_args, is_np_array())
    grouped = regroup(variables, in_fmt)[0]
    known = {v.name: (tuple(a.shape), a.dtype) for v, a in zip(variables, flat_args)
             if v is not None and isinstance(a, NDArray)}
    with tracing_inputs(known) as scope:    # a forward reading x.shape gets the input's
        outputs = block._forward_symbolic(grouped[0], tuple(grouped[1:]))
    flat_out, out_fmt = flatten(outputs)
    graph = CachedGraph(block, variables, Group(flat_out), out_fmt, block._backend, dict(block._flags),
                        _numpy_outputs(flat_out))
    if scope.shapes_read:       # the graph holds these shapes: it serves inputs of them only
        graph.input_shapes = input_shapes(flat_args)
    return graph


def input_shapes(flat_args):
    """The shapes of a call's flat arguments (None for absent ones): the key of the graphs
    traced by a forward that read its inputs' shapes."""
    return tuple(tuple(a.shape) if isinstance(a, NDArray) else None for a in flat_args)


def _numpy_outputs(symbols):
    """Whether a graph's outputs are NumPy symbols (its results then mx.np arrays), as MXNet
    decides it; TypeError, MXNet's, for a mix of both kinds."""
    kinds = {isinstance(s, _Symbol) for s in symbols if s is not None}
    if len(kinds) > 1:
        raise TypeError('Found both classic symbol (mx.sym.Symbol) and numpy symbol (mx.sym.np._Symbol) in '
                        'outputs. This will prevent you from building a computation graph by grouping them '
                        'since different types of symbols are not allowed to be grouped in Gluon to form a '
                        'computation graph. You will need to convert them to the same type of symbols, either '
                        'classic or numpy following this rule: if you want numpy ndarray output(s) from the '
                        'computation graph, please convert all the classic symbols in the list to numpy '
                        'symbols by calling `as_np_ndarray()` on each of them; if you want classic ndarray '
                        'output(s) from the computation graph, please convert all the numpy symbols in the '
                        'list to classic symbols by calling `as_nd_ndarray()` on each of them.')
    return kinds == {True}


def check_numpy_outputs(out):
    """TypeError, MXNet's, unless every array or Symbol in ``out`` (nested) is of the NumPy
    interface: what a block returns under NumPy array semantics."""
    if isinstance(out, (NDArray, Symbol)):
        if not (isinstance(out, _Symbol) or (isinstance(out, NDArray) and out._is_np_array)):
            raise TypeError("Block's output ndarrays/symbols must be of type `mxnet.numpy.ndarray` or "
                            "`mxnet.symbol.numpy._Symbol`, while got output type %s" % type(out))
    elif isinstance(out, (list, tuple)):
        for item in out:
            check_numpy_outputs(item)



def _constant_outputs(outputs, tensors):
    """Whether some of a recorded graph's input ``tensors`` require gradients; if so, its
    ``outputs`` without gradients (comparisons) are marked so that a backward pass from
    one gives zeros, as MXNet's."""
    live = _int_grad.LIVE[0] or any(t.requires_grad for t in tensors)
    for t in outputs:
        if not t.requires_grad and live and _int_grad.carrier_of(t) is None:
            autograd.mark_constant_result(t)
    return any(t.requires_grad for t in tensors)


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
    backend : str, optional
        None (the compiled graph as it is) or ``'inductor'``.
    flags : dict, optional
        ``hybridize`` flags: ``static_alloc``, ``static_shape``, ``mirror``, ``backend_opts``.

    Attributes
    ----------
    symbol : Symbol
    variables : list of Symbol or None
    runner : callable
        ``runner(compiled_graph, ctx, num_data) -> callable(tensors)`` wraps each
        :class:`~neomx.symbol.graph.CompiledGraph` when it is bound (``num_data``: how many
        leading tensors are data, the rest being parameters); chosen from the backend and
        flags, replaceable before the first call.
    """

    def __init__(self, block, variables, symbol, out_fmt, backend=None, flags=None, np_mode=False):
        flags = flags or {}
        self.symbol = symbol
        self.input_shapes = None        # the input shapes the trace read, where it read them
        self.shape_variants = {}        # then: the graphs traced for other input shapes, by them
        # traced under NumPy array semantics: outputs are mx.np arrays
        self._new = constructor(_np.ndarray) if np_mode else wrap_tensor
        self.out_fmt = out_fmt
        self._static_alloc = bool(flags.get('static_alloc'))
        self._mirror = flags.get('mirror')
        self._backend = backend
        self.runner = graph_runner(backend, self._static_alloc and bool(flags.get('static_shape')),
                                   flags.get('backend_opts'))
        used = set(symbol.list_inputs())
        data = [(i, v.name) for i, v in enumerate(variables) if v is not None and v.name in used]
        self._data_positions = [i for i, _ in data]
        data_names = {name for _, name in data}
        self._param_names = [n for n in symbol.list_inputs() if n not in data_names]
        self._input_names = [name for _, name in data] + self._param_names
        # the attributes of the _CachedOp node a recorded run leaves for autograd.get_symbol
        self._recorded_attrs = {'__graph__': (symbol, self._input_names, flags.get('inline_limit', 2))}
        self.variables = variables
        self._params = _graph_params(block, self._param_names)
        # Graphs creating arrays of shapes left to inference compile per input shapes.
        self._shape_dependent = bool(open_shape_nodes(symbol))
        self._bound = {}        # ctx, or (ctx, data shapes) when shape-dependent -> _Binding

    def parameters(self):
        """``[(name, Parameter)]`` of the graph's parameters, in the order of its inputs."""
        return [(name, self._params[name]) for name in self._param_names]

    def __call__(self, flat_args, ctx):
        """Run on the flat input arrays (all on ``ctx``); returns the flat output arrays.

        Raises
        ------
        DeferredInitializationError
            While some parameter waits for its shape (see :meth:`complete_deferred`).
        """
        key = self._key(flat_args, ctx) if self._shape_dependent else ctx
        sparse = SPARSE_MADE[0] and self._sparse_data(flat_args)     # no sparse array exists: none
        if sparse:
            key = (key, 'sparse')
        bound = self._bound.get(key)
        if bound is None or bound.layout_version != _parameter._layout_version:
            bound = self._bind(ctx, key, flat_args)
        if sparse:      # the sparse data's compressed tensors (see _sparse_data)
            tensors = [storage_tensor(flat_args[i]) for i in self._data_positions]
            new = self._new_of_storage
        else:
            tensors = [flat_args[i]._t for i in self._data_positions]
            new = self._new
        params = bound.param_tensors or [a._t for a in bound.arrays]
        if _AUTOGRAD.recording:
            outputs = autograd.run_recorded(bound.run, tensors, params)
            results = [new(t, ctx) for t in outputs]
            for t in outputs:
                if not t.requires_grad:     # (an output with gradients has an input with them)
                    if not _constant_outputs(outputs, tensors + params):
                        return results      # no input requires gradients: nothing recorded
                    break
            # for autograd.get_symbol, as MXNet records a CachedOp: its inputs in the graph's order
            note_graph(self._recorded_attrs, flat_args, self._data_positions, bound.arrays, results)
            return results
        tensors.extend(params)
        run = bound.run if autograd.is_training() else bound.infer
        # No graph outside record(), whatever torch's grad mode of the thread.
        return [new(t, ctx) for t in autograd.run_without_graph(run, tensors)]

    def _sparse_data(self, flat_args):
        """Whether some data input is sparse, with the default backend: the graph then takes
        the compressed tensors, its calls following the operators' storage rules as MXNet's
        (:mod:`neomx.symbol.sparse_storage`: a csr batch is never densified)."""
        if self._backend is not None:       # compiled backends take dense tensors
            return False
        for i in self._data_positions:
            if flat_args[i].stype != 'default':
                return True
        return False

    def _new_of_storage(self, tensor, ctx):
        """An output array of the tensor's storage type (a graph on sparse data may give sparse results)."""
        if tensor.layout is torch.strided:
            return self._new(tensor, ctx)
        return from_sparse_tensor(tensor, ctx)

    def prepare(self, flat_args, ctx):
        """Compile and bind the graph for inputs like ``flat_args`` on ``ctx`` now, as
        their first call would."""
        key = self._key(flat_args, ctx)
        if key not in self._bound:
            self._bind(ctx, key, flat_args)

    def _key(self, flat_args, ctx):
        if self._shape_dependent:
            return (ctx,) + tuple(flat_args[i].shape for i in self._data_positions)
        return ctx

    def run_monitored(self, flat_args, ctx, callback, monitor_all=False):
        """Like calling the graph, running it as traced (default backend, no inference
        rewrites, no mirroring) and reporting every operator's outputs (and, with
        ``monitor_all``, inputs) to ``callback(name, op_name, array)``: names as bytes, as
        MXNet's operator hooks give them, and the value as an NDArray."""
        arrays = [self._params[name].data(ctx) for name in self._param_names]
        graph = compiled(self.symbol, ctx, self._input_names, mirror=False,
                         open_shapes=self._open_shapes(flat_args, arrays),
                         monitor='all' if monitor_all else 'outputs')
        tensors = [flat_args[i]._t for i in self._data_positions] + [a._t for a in arrays]
        outputs = graph(tensors, lambda name, op, tensor: callback(name, op, wrap_tensor(tensor, ctx)))
        return [wrap_tensor(t, ctx) for t in outputs]

    def _open_shapes(self, flat_args, arrays):
        """The shapes of the graph's arrays left to inference, for these inputs (None
        when it has none; see :func:`~neomx.symbol.graph.resolve_open_shapes`)."""
        if not self._shape_dependent:
            return None
        shapes = {name: a.shape for name, a in zip(self._param_names, arrays)}
        shapes.update((self.variables[i].name, flat_args[i].shape) for i in self._data_positions)
        return resolve_open_shapes(self.symbol, shapes)

    def _bind(self, ctx, key, flat_args):
        """Bind the parameters' current arrays, compiling the graph unless the previous
        binding for ``key`` had parameters of the same shapes and dtypes.

        Any Parameter getting new arrays (another block's initialization, a Trainer's
        ``grad_req``) invalidates every binding; keeping the compiled runners then spares
        a compiled backend a recompilation.
        """
        arrays = [self._params[name].data(ctx) for name in self._param_names]
        signature = tuple((a.shape, a.dtype) for a in arrays)
        previous = self._bound.get(key)
        if previous is not None and previous.signature == signature:
            run, infer = previous.run, previous.infer
        else:
            run, infer = self._compile(ctx, flat_args, arrays)
        static = [a._t for a in arrays] if self._static_alloc else None
        if self._static_alloc and ctx.device_type == 'cpu':
            pool_host_memory()
        bound = self._bound[key] = _Binding(_parameter._layout_version, signature, arrays, run,
                                            infer, static)
        return bound

    def _compile(self, ctx, flat_args, arrays):
        """The (training, inference) runners of the graph for these inputs and parameters."""
        num_data = len(self._data_positions)
        open_shapes = self._open_shapes(flat_args, arrays)
        # compiled backends make their own rewrites; these are for torch's CPU kernels
        passes = TRAINING_PASSES if self._backend is None and ctx.device_type == 'cpu' else ()
        sparse = self._sparse_data(flat_args)
        inputs = [storage_tensor(flat_args[i]) for i in self._data_positions] + [a._t for a in arrays]
        if needs_integer_gradients(self.symbol, inputs):     # integer arrays or casts to integers
            passes = tuple(passes) + (carry_integer_gradients,)
        sparse_pass = (keep_sparse_storage,) if sparse else ()
        graph = compiled(self.symbol, ctx, self._input_names, passes=tuple(passes) + sparse_pass,
                         mirror=self._mirror, open_shapes=open_shapes)
        run = infer = self.runner(graph, ctx, num_data)
        if run is graph:                    # compiled backends make their own inference rewrites
            inference = compiled(self.symbol, ctx, self._input_names, passes=INFERENCE_PASSES + sparse_pass,
                                 mirror=False, open_shapes=open_shapes)
            if inference.rewritten:
                infer = plain_runner(inference, ctx, num_data)
        return run, infer

    def infer_parameter_shapes(self, flat_args):
        """Give the parameters of unknown shape the shapes inferred from the inputs through
        the graph (without initializing them).

        Returns
        -------
        bool
            False when some parameter's shape stays unknown (only operators without an
            argument-shape rule read it).
        """
        unknown = [p for p in self._params.values() if not shape_is_known(p.shape)]
        if unknown:
            known = {v.name: a.shape for v, a in zip(self.variables, flat_args) if v is not None}
            arg_shapes, _, aux_shapes = self.symbol.infer_shape_partial(**known)
            names = self.symbol.list_arguments() + self.symbol.list_auxiliary_states()
            inferred = dict(zip(names, arg_shapes + aux_shapes))
            for param in unknown:
                shape = inferred.get(param.name)
                if shape and shape_is_known(shape):     # () marks a shape left unknown
                    param.shape = shape
        return all(shape_is_known(p.shape) for p in self._params.values())

    def infer_parameter_types(self, flat_args):
        """Give the parameters the dtypes inferred from the inputs' through the graph."""
        known = {v.name: a.dtype for v, a in zip(self.variables, flat_args) if v is not None}
        arg_types, _, aux_types = self.symbol.infer_type(**known)
        if arg_types is None:
            raise MXNetError('infer_type: cannot decide every type of the graph from the inputs %s'
                             % known)
        names = self.symbol.list_arguments() + self.symbol.list_auxiliary_states()
        inferred = dict(zip(names, arg_types + aux_types))
        for name, param in self._params.items():
            param.dtype = inferred[name]

    def complete_deferred(self, flat_args):
        """Give the parameters that wait for their shapes the shapes inferred from the
        inputs through the graph, and initialize them.

        Returns
        -------
        bool
            False when some of them keeps an unknown shape (see :meth:`infer_parameter_shapes`).
        """
        self.infer_parameter_shapes(flat_args)
        pending = [p for p in self._params.values() if p._data is None and p._deferred_init]
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


class _Binding(NamedTuple):
    """A CachedGraph bound on one context."""
    layout_version: int         # parameter._layout_version when bound (changes: rebind)
    signature: tuple            # the parameters' (shape, dtype) pairs, in the graph's order
    arrays: list                # the parameters' NDArrays, in the graph's order
    run: Callable               # fn(tensors) -> output tensors
    infer: Callable             # the same for inference (outside record(), predict mode)
    param_tensors: list         # the arrays' tensors fixed when bound (static_alloc), or None


# ------------------------------------------------------------------- backends
def plain_runner(graph, ctx, num_data):  # pylint: disable=unused-argument
    """The default backend: the compiled graph itself."""
    return graph


def graph_runner(backend, static, backend_opts=None):
    """The runner (see :attr:`CachedGraph.runner`) for a backend and the static flags.

    Parameters
    ----------
    backend : str or None
        None or ``'inductor'``.
    static : bool
        ``static_alloc`` and ``static_shape`` both set: replay CUDA graphs on GPUs.
    backend_opts : dict, optional
        Keyword arguments for ``torch.compile`` with ``backend='inductor'``.

    Raises
    ------
    ValueError
        For an unknown backend.
    """
    if backend not in (None, 'inductor'):
        raise ValueError("hybridize: unknown backend %r; neomx has None (the compiled graph) and "
                         "'inductor' (torch.compile)" % (backend,))

    def runner(graph, ctx, num_data):
        on_gpu = ctx.device_type == 'gpu'
        if backend == 'inductor':
            options = dict(backend_opts or {})
            if static and on_gpu:
                options.setdefault('mode', 'reduce-overhead')
            return TorchCompiled(graph, num_data, dict(options, backend='inductor'), freeze=True)
        if static and on_gpu:
            return TorchCompiled(graph, num_data, {'backend': 'cudagraphs'}, freeze=False)
        return graph
    return runner if backend is not None or static else plain_runner


class _FrozenParams(torch.nn.Module):
    """The graph as a module whose parameters are buffers, for inductor's ``freezing``
    (which turns module attributes into constants of the compiled code)."""

    def __init__(self, fn, params):
        super().__init__()
        self._fn = fn
        for i, tensor in enumerate(params):
            self.register_buffer('p%d' % i, tensor, persistent=False)
        self._count = len(params)

    def forward(self, *data):
        return self._fn(*data, *[getattr(self, 'p%d' % i) for i in range(self._count)])


class TorchCompiled:
    """A compiled graph run through ``torch.compile``, compiled once per autograd mode.

    Operators read the training flag from neomx's thread state, on which ``torch.compile``
    places no guard; each (recording, training) mode therefore compiles its own copy of
    the graph function. Inference (neither) with ``freeze`` compiles the graph with the
    parameters as constants, again whenever a parameter changes.

    Parameters
    ----------
    graph : CompiledGraph
    num_data : int
        Leading tensors that are data; the others are parameters.
    options : dict
        Keyword arguments of ``torch.compile`` (``backend``, ``mode``, ``options``...).
    freeze : bool
        Use inductor's ``freezing`` for inference.
    """

    def __init__(self, graph, num_data, options, freeze):
        self._graph, self._num_data, self._freeze = graph, num_data, freeze
        self._options = dict(options, dynamic=False)
        self._modes = {}            # (recording, training) -> compiled callable(tensors)
        self._frozen_stamp = None
        self.failed = False

    def __call__(self, tensors):
        if self.failed:
            return self._graph(tensors)
        mode = (autograd.is_recording(), autograd.is_training())
        try:
            return self._compiled(mode, tensors)(tensors)
        except Exception as err:  # pylint: disable=broad-except
            outputs = self._graph(tensors)      # an error of the graph itself raises here
            self.failed = True
            warnings.warn('hybridize(backend=%r): torch.compile failed (%s: %s); running the '
                          'graph with the default backend instead'
                          % (self._options['backend'], type(err).__name__, str(err).split('\n')[0]),
                          stacklevel=4)
            return outputs

    def _compiled(self, mode, tensors):
        frozen = self._freeze and mode == (False, False)
        if frozen:
            stamp = version_stamp(tensors[self._num_data:])
            if stamp != self._frozen_stamp:
                self._modes.pop(mode, None)
                self._frozen_stamp = stamp
        fn = self._modes.get(mode)
        if fn is None:
            fn = self._modes[mode] = self._compile(tensors, frozen)
        return fn

    def _compile(self, tensors, frozen):
        if not frozen:
            compiled_fn = torch.compile(self._graph.fresh_fn(), **self._options)
            return lambda tensors: compiled_fn(*tensors)
        module = _FrozenParams(self._graph.fresh_fn(), tensors[self._num_data:])
        compiled_module = torch.compile(module, **self._options)
        num_data = self._num_data

        def run_frozen(tensors):
            # Compilation happens inside the call (again for new shapes), where inductor
            # reads its global config; its per-call ``options`` leave freezing off.
            with inductor_freezing():
                return compiled_module(*tensors[:num_data])
        return run_frozen


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

