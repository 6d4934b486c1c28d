"""Symbol graphs compiled into flat callables, and the names of the graph machinery.

Compilation turns a graph into one Python function that calls the registry
implementations on torch tensors in order -- one call per operator, inputs by position,
attributes bound beforehand -- so running it costs no dispatch, parsing or graph walk, and
torch autograd (and ``torch.compile``) see plain torch code. Between the two, the graph is
a :class:`~neomx.symbol.plan.Plan` (the calls in order) that passes may rewrite; mirroring
(``MXNET_BACKWARD_DO_MIRROR``) wraps runs of calls in ``torch.utils.checkpoint``.

The parts live in their own modules -- :mod:`.inference` (shapes and dtypes),
:mod:`.plan`, :mod:`.codegen` (the function's source, which holds nothing read from a
graph's file), :mod:`.mirroring` -- and are importable from here as well.
"""
import itertools

from .. import async_errors
from .._parsing import PARSER_LOCK
from ..async_errors import DEPTH as _DEPTH, MADE as _MADE, RUN as _RUN
from ..base import MXNetError
from .codegen import generate
from .inference import (TORCH_ERRORS, infer, infer_shape, infer_type, open_shape_nodes,  # noqa: F401
                        resolve_open_shapes)
from .mirroring import mirror_requested, mirror_segments, recompute  # noqa: F401
from .plan import Call, Plan, plan_of  # noqa: F401

__all__ = ['infer', 'infer_shape', 'infer_type', 'Call', 'Plan', 'plan_of', 'CompiledGraph', 'compiled',
           'open_shape_nodes', 'resolve_open_shapes',
           'mirror_requested', 'mirror_segments', 'recompute', 'invoke']

# Numbers the generated functions' file names; a graph's own name never reaches compile().
_GRAPH_NUMBERS = itertools.count()


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
    monitor : {None, 'outputs', 'all', 'executor_all'}
        Report operators' outputs (and inputs) to a callback, the last argument of ``fn``
        (see :func:`~neomx.symbol.codegen.generate`).

    Attributes
    ----------
    input_names : list of str
    fn : callable
        ``fn(*input_tensors) -> tuple of output tensors``: plain Python over the registry's
        torch implementations, fit for ``torch.compile``.
    source : str
        The generated source of ``fn``: generated identifiers and punctuation only (see
        :func:`~neomx.symbol.codegen.check_source`).
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
        self.source, self._namespace, self._line_nodes = generate(plan, mirror, monitor)
        self._filename = '<neomx graph %d>' % next(_GRAPH_NUMBERS)
        self.fn = self.fresh_fn()

    def fresh_fn(self):
        """A new function object with its own code object for the same graph.

        ``torch.compile`` caches compiled code per code object: separate copies keep the
        compilations for different autograd modes apart.
        """
        namespace = dict(self._namespace)
        with PARSER_LOCK:       # (see neomx._parsing)
            exec(compile(self.source, self._filename, 'exec'), namespace)  # pylint: disable=exec-used
        return namespace['graph']

    def calls(self):
        """``(operator, node name)`` of each operator call, in the order ``fn`` makes them."""
        return [self._line_nodes[number] for number in sorted(self._line_nodes)]

    def listing(self):
        """The source with each call's operator and node name appended as a comment: text to
        read (``Executor.debug_str``), never compiled."""
        return ''.join('%s  # %s %r\n' % (line, *self._line_nodes[n]) if n in self._line_nodes else line + '\n'
                       for n, line in enumerate(self.source.splitlines(), 1))

    def __call__(self, tensors, *monitor):
        """Run on the input tensors (then the monitor callback of a monitored graph); torch
        errors become ``MXNetError`` naming the operator."""
        outputs = None
        counts = _RUN.counts    # the run bracketed for deferred errors (see async_errors.hand_on)
        counts[_DEPTH] += 1
        started = counts[_MADE]
        try:
            outputs = self.fn(*tensors, *monitor)
            return outputs
        except MXNetError:
            raise
        except TORCH_ERRORS as err:
            raise MXNetError('graph execution failed in %s: %s (graph input shapes %s)'
                             % (self._failing_node(err.__traceback__), str(err).split('\n')[0],
                                [tuple(t.shape) for t in tensors])) from None
        finally:
            counts[_DEPTH] -= 1
            if counts[_MADE] != started:
                async_errors.hand_on(started, outputs)

    def _failing_node(self, traceback):
        """``'<op> <name>'`` of the operator whose line of the generated source raised."""
        while traceback is not None:
            if traceback.tb_frame.f_code.co_filename == self._filename:
                label = self._line_nodes.get(traceback.tb_lineno)
                return 'the graph' if label is None else '%s %s' % label
            traceback = traceback.tb_next
        return 'the graph'


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
    from ..ndarray.ndarray import wrap_tensor
    missing = [n for n in sym.list_inputs() if n not in arrays]
    if missing:
        raise ValueError('invoke: no value given for %s' % ', '.join(missing))
    ctx = next(iter(arrays.values()))._ctx if arrays else None
    if ctx is None:
        from ..context import current_context
        ctx = current_context()
    graph = compiled(sym, ctx, open_shapes=resolve_open_shapes(sym, {n: a.shape for n, a in arrays.items()}))
    outputs = graph([arrays[n]._t for n in graph.input_names])
    return [wrap_tensor(t, ctx) for t in outputs]
