"""Automatic differentiation with MXNet's semantics, on torch autograd.

* Nothing is recorded outside :func:`record`. Whether neomx records is neomx's own state,
  kept per thread as in MXNet; torch's grad mode is left as the thread has it, and only
  ``record()``/``pause()`` set it, for the time they run, restoring it on exit. Outside
  ``record()``, operations whose inputs require gradients (parameters, arrays that called
  ``attach_grad``) run through :func:`run_untracked`, which builds no graph; operations on
  plain arrays go straight to torch.
* An array computed inside one ``record()`` whose graph a later ``backward()`` freed (an
  RNN's hidden state carried to the next batch) acts as a constant when used again, as in
  MXNet, instead of leading backward into the freed graph (see ``_released_graphs``).
* :func:`is_training` is a separate flag that layers such as Dropout and BatchNorm read.
* ``attach_grad(grad_req)`` gives an array a persistent gradient buffer: ``x.grad`` stays
  the same NDArray across steps. A backward pass writes (``'write'``) or adds (``'add'``)
  into the buffers of the variables it reaches; the others keep their old gradients.
"""
import functools
import weakref

import torch

from . import _int_grad
from . import _torch_private
from . import _released_graphs as _released
from . import _recorded_graph as _recorded
from ._sparse_state import SPARSE_MADE as _SPARSE_MADE
from . import _autograd_state, upper_layers
from .base import MXNetError

__all__ = ['mark_constant_result', 'record', 'pause', 'train_mode', 'predict_mode', 'is_recording', 'is_training',
           'set_recording', 'set_training', 'backward', 'grad', 'mark_variables', 'Function',
           'get_symbol']

# names MXNet's module also holds (imported from its base module)
from ctypes import POINTER  # noqa: E402,F401
from threading import Lock  # noqa: E402,F401
from .base import (MXCallbackList, c_array, c_array_buf, c_handle_array, check_call,  # noqa: E402,F401
                   string_types)


_STATE = _autograd_state.STATE
_HIGHER_ORDER = [False]     # whether grad(create_graph=True) ever ran (see _make_hook)
_RELEASED = _released.STATE
_Tensor = torch.Tensor
_set_grad_enabled = _torch_private.set_grad_enabled
_is_grad_enabled = torch.is_grad_enabled
_Tensor = torch.Tensor


def is_recording():
    """Whether operations are being recorded for differentiation."""
    return _STATE.recording


def is_training():
    """Whether layers run in training mode (Dropout active, BatchNorm on batch statistics)."""
    return _STATE.training


def set_recording(is_recording):  # pylint: disable=redefined-outer-name
    """Turn recording on or off; returns the previous state."""
    prev = _STATE.recording
    flag = bool(is_recording)
    if flag != prev:
        _STATE.recording = flag
        if flag:
            _STATE.grad_outside = _is_grad_enabled()
            _set_grad_enabled(True)
        else:
            outside, _STATE.grad_outside = _STATE.grad_outside, None
            _set_grad_enabled(bool(outside))
    return prev


def set_training(train_mode):  # pylint: disable=redefined-outer-name
    """Turn training mode on or off; returns the previous state."""
    prev = _STATE.training
    _STATE.training = bool(train_mode)
    return prev


class _RecordingStateScope:
    """Scope that sets recording and/or training and restores both on exit."""

    def __init__(self, is_record, train_mode):
        self._enter_record, self._enter_train = is_record, train_mode
        self._prev_record = self._prev_train = None
        self._prev_grad = None

    def __enter__(self):
        state = _STATE
        if self._enter_record is not None:
            self._prev_grad = _is_grad_enabled()
            self._prev_record = state.recording
            state.recording = self._enter_record
            _set_grad_enabled(self._enter_record)
        if self._enter_train is not None:
            self._prev_train = state.training
            state.training = self._enter_train
        return self

    def __exit__(self, *exc):
        state = _STATE
        if self._enter_record is not None:
            state.recording = self._prev_record
            _set_grad_enabled(self._prev_grad)
        if self._enter_train is not None:
            state.training = self._prev_train


# ------------------------------------------------- operations outside record()
def run_untracked(fn, *args, **kwargs):
    """Call ``fn`` (a torch computation on tensors of which some require gradients) as an
    operation of neomx: recorded inside ``record()``, building no graph outside it.

    The callers check ``requires_grad`` on their inputs first: operations on plain tensors,
    most of them, skip this call.
    """
    if _STATE.recording:
        return run_recording(fn, *args, **kwargs)
    return run_without_graph(fn, *args, **kwargs)


def run_recording(fn, *args, **kwargs):
    """:func:`run_untracked` inside ``record()``, for callers that read the recording flag
    themselves (the operators that also note what they ran for :func:`get_symbol`): the
    operation, with the inputs of freed graphs as constants."""
    fresh = _RELEASED.fresh
    if fresh is None:           # no graph freed in this thread yet
        return fn(*args, **kwargs)
    for t in args:              # inputs recorded since the last backward pass: one check
        if type(t) is _Tensor and not t.is_leaf and id(t) not in fresh:
            args = _released.live_inputs(args, fresh)
            break
    result = fn(*args, **kwargs)
    if type(result) is _Tensor and len(fresh) < _released.MAX_FRESH:
        fresh.add(id(result))
    else:
        _released.note_recorded(result, fresh)
    return result


def run_without_graph(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with torch's grad mode off, restored after."""
    if not _is_grad_enabled():
        return fn(*args, **kwargs)
    _set_grad_enabled(False)
    try:
        return fn(*args, **kwargs)
    finally:
        _set_grad_enabled(True)


# Writes into arrays with gradients that torch's version counters do not show (see
# write_untracked): values identified by those counters (symbol.passes.version_stamp: frozen
# and prepacked inference graphs) also compare this count.
UNTRACKED_WRITES = [0]


def write_untracked(setitem, tensor, key, value):
    """``setitem(tensor.data, key, value)`` without a graph: through ``Tensor.data``, whose
    writes autograd does not track, so a graph recorded before reads the new value in its
    backward, as MXNet's unversioned arrays do, rather than torch refusing that backward."""
    UNTRACKED_WRITES[0] += 1
    run_without_graph(setitem, tensor.data, key, value)


def run_recorded(fn, data, params):
    """``fn(data + params)`` (a graph runner's input tensors: its data, then its parameters'
    tensors) inside ``record()``, with the data of freed graphs as constants (parameters are
    leaves, never a graph's results)."""
    fresh = _RELEASED.fresh
    if fresh is not None:
        for t in data:          # data recorded since the last backward pass: one check
            if not t.is_leaf and id(t) not in fresh:
                data = _released.live_inputs(data, fresh)
                break
    result = fn(data + params)
    if fresh is not None:
        _released.note_recorded(result, fresh)
    return result


def untracked(method):
    """Decorator for neomx's own writes into arrays (parameters, optimizer states, stored
    values): no graph is built while ``method`` runs, whatever torch's grad mode of the
    calling thread; the mode is restored after."""
    @functools.wraps(method)
    def method_without_graph(*args, **kwargs):
        if not _is_grad_enabled():
            return method(*args, **kwargs)
        return run_without_graph(method, *args, **kwargs)
    return method_without_graph


def record(train_mode=True):  # pylint: disable=redefined-outer-name
    """Scope in which operations are recorded; ``train_mode`` also sets training mode."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):  # pylint: disable=redefined-outer-name
    """Scope in which recording is paused (inside a ``record()`` scope)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Scope with training mode on, recording unchanged."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Scope with training mode off, recording unchanged."""
    return _RecordingStateScope(None, False)


# ----------------------------------------------------------------- variables
_STRIDED = torch.strided


def _make_hook(slot):
    """The hook that moves torch's freshly accumulated ``.grad`` into the slot's buffer.

    For ``'write'`` the buffer NDArray takes torch's gradient tensor itself instead of a
    copy: torch hands ``.grad`` over unaliased (it clones a gradient that is shared), so the
    buffer keeps its identity (``x.grad`` is the same NDArray across steps) at no cost.
    """
    def hook(tensor):
        g = tensor.grad
        tensor.grad = None
        if g.requires_grad:         # backward(create_graph=True): keep the buffer a plain array
            g = g.detach()
        buf = slot.buf
        if _SPARSE_MADE[0] and g.layout is not _STRIDED:     # (no sparse tensor yet: dense)
            g = _sparse_gradient(slot, g)
            if g is None:       # the buffer took it
                return
        if slot.req == 'add':
            buf._t.add_(g if g.dtype is buf._t.dtype else g.to(buf._t.dtype))
        elif g.dtype is buf._t.dtype:
            # a ZeroTensor (abs's 2nd derivative) made real; such gradients come only from a
            # graph that grad(create_graph=True) made
            buf._t = _torch_private.materialized(g) if _HIGHER_ORDER[0] else g
        else:
            buf._t.copy_(g)
        slot.fresh = True       # _written, inlined (every parameter, every backward pass)
        if slot.ready is not None:
            slot.ready()
    return hook


def _sparse_gradient(slot, g):
    """A sparse gradient ``g`` (``dot(csr, w)``'s rows, a sparse embedding's) for the slot's
    buffer: the dense gradient for a dense buffer, or None where a row_sparse buffer written
    took ``g`` itself (and the slot is marked written)."""
    buf = slot.buf
    if buf.stype == 'row_sparse':
        # the rows (the weight's dtype, as the buffer's) become the row_sparse buffer's
        # value, or are added to its rows: its dense form, the whole weight's size, is
        # never made
        held = buf._sparse() if slot.req == 'add' else None
        buf._t = g if held is None else held + g.to(held.dtype)
        _written(slot)
        return None
    return g.to_dense()


def _written(slot):
    """Mark the slot's buffer written by this backward pass (see :class:`_GradSlot`)."""
    slot.fresh = True
    if slot.ready is not None:
        slot.ready()


class _GradSlot:
    """The gradient buffer attached to an NDArray and how backward writes into it.

    ``fresh`` turns True when a backward pass writes the buffer; Gluon's Trainer resets it
    after each update to detect parameters that took no part in the last backward pass.
    ``ready``, when set, is called (no arguments) right after each such write: Gluon's
    Trainer starts sending gradients from it while backward goes on.
    """
    __slots__ = ('buf', 'req', 'hook', 'fresh', 'ready')

    def __init__(self, buf, req, hook):
        self.buf, self.req, self.hook, self.fresh, self.ready = buf, req, hook, False, None


def attach(arr, grad_req='write', grad_buf=None):
    """Make ``arr`` a variable with gradient buffer ``grad_buf`` (zeros if None)."""
    if grad_req not in ('write', 'add', 'null'):
        raise MXNetError("attach_grad: grad_req must be 'write', 'add' or 'null', got %r" % (grad_req,))
    old = arr._grad
    if old is not None and old.hook is not None:
        old.hook.remove()
    arr._rec = None         # a new variable for get_symbol, as MXNet's mark_variables makes
    t = arr._t
    if t.grad_fn is not None:      # a recorded result becomes a new leaf
        t = arr._t = t.detach()
    if grad_req == 'null':
        if t.requires_grad:
            t.requires_grad_(False)
        elif _int_grad.carrier_of(t) is not None:
            t = arr._t = t.detach()     # a new alias, without the carrier
        arr._grad = None
        return
    if grad_buf is None:
        grad_buf = upper_layers.get('array_from_tensor')(torch.zeros_like(t), arr._ctx)
    elif grad_buf.stype == 'default':
        grad_buf._t.zero_()     # in place: also a zero-dim buffer, which refuses [:]
    else:
        grad_buf[:] = 0         # a row_sparse buffer then stores no rows (nothing dense made)
    if _int_grad.is_integer(t):     # torch differentiates a float64 carrier (see _int_grad)
        leaf = _int_grad.make_leaf(t)
    else:
        leaf = t
        if not t.requires_grad:
            t.requires_grad_(True)
    slot = _GradSlot(grad_buf, grad_req, None)
    slot.hook = leaf.register_post_accumulate_grad_hook(_make_hook(slot))
    arr._grad = slot


def set_grad_req(arr, grad_req):
    """Change how backward writes into ``arr``'s existing gradient buffer."""
    slot = arr._grad
    if slot is None:
        if grad_req != 'null':
            attach(arr, grad_req)
        return
    if grad_req == 'null':
        attach(arr, 'null')
    else:
        slot.req = grad_req


def mark_variables(variables, gradients, grad_reqs='write'):
    """Mark arrays as variables whose gradients go into the given buffers."""
    if _is_ndarray(variables):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    for var, g, req in zip(variables, gradients, grad_reqs):
        attach(var, req, g)


# ------------------------------------------------------------------ backward
def _is_ndarray(x):
    # an NDArray, known by its tensor: the ndarray layer sits above this module
    return hasattr(x, '_t')


# Results of recorded operations that have no gradient (comparisons, integer modulo...):
# MXNet records them, and a backward pass from one of them gives zero gradients.
_CONSTANT_RESULTS = {}      # id(tensor) -> weak reference to it (tensors compare element-wise)


def mark_constant_result(tensor):
    """Note that ``tensor``, recorded from inputs that require gradients, has no gradient
    (a comparison's bool result): ``backward`` from it then does nothing, as MXNet's zero
    gradients, instead of refusing a head that is not part of a recorded graph."""
    if type(tensor) is torch.Tensor and not tensor.requires_grad:
        key = id(tensor)
        _CONSTANT_RESULTS[key] = weakref.ref(tensor, lambda _, key=key: _CONSTANT_RESULTS.pop(key, None))


def _is_constant_result(tensor):
    ref = _CONSTANT_RESULTS.get(id(tensor))
    return ref is not None and ref() is tensor


def _heads_and_grads(heads, head_grads):
    # a list (what NDArray.backward passes) is known without hasattr, whose failure costs
    if type(heads) is not list and _is_ndarray(heads):
        heads = [heads]
        if head_grads is not None and _is_ndarray(head_grads):
            head_grads = [head_grads]
    tensors, grads = [], []
    for i, h in enumerate(heads):
        t = h._t
        if not t.requires_grad:
            if _int_grad.is_integer(t):
                t = _grad_target(t)
            if not t.requires_grad:
                if _is_constant_result(t):
                    continue
                raise MXNetError('backward: head %d (shape %s) is not part of a recorded graph: compute it '
                                 'inside autograd.record() from arrays that called attach_grad()'
                                 % (i, tuple(t.shape)))
        tensors.append(t)
        hg = None if head_grads is None else head_grads[i]
        if hg is None:
            grads.append(torch.ones_like(t))
            continue
        g = hg._t
        if g.shape != t.shape:
            # MXNet reads a larger head gradient's leading elements as the head's shape
            if g.numel() < t.numel():
                raise MXNetError('backward: head gradient %d has shape %s, but its head has shape %s'
                                 % (i, tuple(g.shape), tuple(t.shape)))
            g = g.reshape(-1)[:t.numel()].reshape(t.shape)
        grads.append(g.to(t.dtype))
    return tensors, grads


_ENGINE_RUN_BACKWARD = _torch_private.engine_run_backward


def _run_backward(tensors, grads, retain_graph):
    """Run torch's backward engine on heads whose gradients are already built and checked.

    ``torch.autograd.backward`` would only validate them again, at a cost (about 10 us a
    call) comparable to a small network's whole backward pass.
    """
    if _ENGINE_RUN_BACKWARD is None:
        torch.autograd.backward(tensors, grads, retain_graph=retain_graph)
        return
    _ENGINE_RUN_BACKWARD(tuple(tensors), tuple(grads), retain_graph, False, (),
                         allow_unreachable=True, accumulate_grad=True)


_TWICE = ('backward: Cannot differentiate node because it is not in a computational graph: a backward '
          'pass already freed it (backward through the graph a second time). If you want to differentiate the same graph twice, you need to pass '
          'retain_graph=True to backward.')


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # pylint: disable=redefined-outer-name
    """Compute the gradients of ``heads`` with respect to the marked variables.

    Parameters
    ----------
    heads : NDArray or list of NDArray
    head_grads : NDArray or list of (NDArray or None), optional
        Gradients flowing into each head; ones where omitted.
    retain_graph : bool
        Keep the graph for another backward pass.
    train_mode : bool
        Whether the backward pass runs in training mode.
    """
    tensors, grads = _heads_and_grads(heads, head_grads)
    if not tensors:     # only results without gradients (see mark_constant_result)
        return
    if _released.already_freed(tensors):
        raise MXNetError(_TWICE)
    prev_train = set_training(train_mode)
    try:
        _run_backward(tensors, grads, retain_graph)
        if not retain_graph:
            _released.mark_released(tensors)
    except RuntimeError as err:
        if isinstance(err, MXNetError):
            raise
        raise MXNetError('backward: %s' % str(err).split('\n')[0]) from None
    finally:
        _STATE.training = prev_train


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True):  # pylint: disable=redefined-outer-name
    """Gradients of ``heads`` with respect to ``variables``, returned rather than stored.

    With ``create_graph=True`` the returned gradients are themselves recorded, so they can
    be differentiated again (higher-order gradients).

    Returns
    -------
    list of NDArray
    """
    tensors, grads = _heads_and_grads(heads, head_grads)
    if _released.already_freed(tensors):
        raise MXNetError(_TWICE.replace('backward', 'grad', 1))
    single = _is_ndarray(variables)
    if single:
        variables = [variables]
    new = upper_layers.get('array_from_tensor')
    if not tensors:     # only results without gradients (see mark_constant_result): zeros, as MXNet
        return [new(torch.zeros_like(v._t), v._ctx) for v in variables]
    if retain_graph is None:
        retain_graph = create_graph
    prev_train = set_training(train_mode)
    try:
        with torch.set_grad_enabled(create_graph or torch.is_grad_enabled()):
            res = torch.autograd.grad(tensors, [_grad_target(v._t) for v in variables], grads,
                                      retain_graph=retain_graph, create_graph=create_graph,
                                      allow_unused=True)
        if not retain_graph:
            _released.mark_released(tensors)
    except RuntimeError as err:
        raise MXNetError('grad: %s' % str(err).split('\n')[0]) from None
    finally:
        _STATE.training = prev_train
    if create_graph:
        _HIGHER_ORDER[0] = True
    out = []
    for r, v in zip(res, variables):
        r = torch.zeros_like(v._t) if r is None else (
            _torch_private.materialized(r) if r.layout is _STRIDED else r.to_dense()).to(v._t.dtype)
        if create_graph:
            # a gradient that does not depend on the variables (that of a linear operator) is a
            # recorded result in MXNet: differentiating it again gives zeros, not an error
            mark_constant_result(r)
        out.append(new(r, v._ctx))
    return out


def _grad_target(t):
    """The tensor torch differentiates for variable tensor ``t``: its carrier if it is integer."""
    if _int_grad.is_integer(t):
        carrier = _int_grad.carrier_of(t)
        return t if carrier is None else carrier
    return t


def get_symbol(x):
    """Retrieve the recorded computation history of ``x`` as a Symbol.

    Every registry operator (``mx.nd`` functions, NDArray arithmetic), ``autograd.Function``
    (a ``_CustomFunction`` node) and hybridized block (a ``_CachedOp`` node, or its
    operators where they are no more than its ``inline_limit``) run inside ``record()`` on
    arrays that require gradients is recorded, as in MXNet. Arrays that no recorded
    operation made are the variables: ``var<N>`` for arrays with gradients, ``null<N>``
    for others, numbered in the order they were first recorded.

    Parameters
    ----------
    x : NDArray
        Array representing the head of computation graph.

    Returns
    -------
    Symbol
        The retrieved Symbol.

    Example
    -------
    >>> import json
    >>> x = mx.nd.ones((2, 3))
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.relu(x * 2).sum(axis=1)
    >>> sym = mx.autograd.get_symbol(y)
    >>> [n['op'] for n in json.loads(sym.tojson())['nodes']]
    ['null', '_mul_scalar', 'relu', 'sum']
    >>> sym.eval(**{sym.list_arguments()[0]: x})[0]
    <BLANKLINE>
    [6. 6.]
    <NDArray 2 @cpu(0)>
    """
    if not isinstance(getattr(x, '_t', None), torch.Tensor):    # MXNet asserts an NDArray
        raise AssertionError('get_symbol: Invalid argument type, expecting NDArray, got %s' % type(x))
    return upper_layers.get('recorded_symbol')(x)


# ------------------------------------------------------------------ Function
class _TorchBridge(torch.autograd.Function):
    """Runs a user's :class:`Function` forward/backward (on NDArrays) inside torch autograd."""

    @staticmethod
    def forward(ctx, func, *tensors):  # pylint: disable=arguments-differ
        _new = upper_layers.get('array_from_tensor')
        ctx.func = func
        with pause():
            outs = func.forward(*[_new(t, c) for t, c in zip(tensors, func._in_ctx)])
        func._single = not isinstance(outs, (list, tuple))
        outs = [outs] if func._single else list(outs)
        func._out_ctx = [o._ctx for o in outs]
        return tuple(o._t for o in outs)

    @staticmethod
    def backward(ctx, *grads):  # pylint: disable=arguments-differ
        _new = upper_layers.get('array_from_tensor')
        func = ctx.func
        with pause():
            res = func.backward(*[_new(g if g is not None else torch.zeros(()), c)
                                  for g, c in zip(grads, func._out_ctx)])
        if not isinstance(res, (list, tuple)):
            res = [res]
        return (None,) + tuple(None if r is None else r._t for r in res)


class Function:
    """A custom differentiable operation, written with NDArrays.

    Subclass it and define ``forward(self, *inputs)`` and ``backward(self, *output_grads)``;
    ``save_for_backward`` keeps arrays for ``backward`` in ``self.saved_tensors``.

    Example
    -------
    A numerically stable sigmoid with a hand-written gradient:

    >>> class Sigmoid(mx.autograd.Function):
    ...     def forward(self, x):
    ...         y = 1 / (1 + mx.nd.exp(-x))
    ...         self.save_for_backward(y)
    ...         return y
    ...     def backward(self, dy):
    ...         y, = self.saved_tensors
    ...         return dy * y * (1 - y)
    >>> x = mx.nd.array([0., 2.])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = Sigmoid()(x)
    >>> y.backward()
    >>> x.grad
    <BLANKLINE>
    [0.25       0.10499363]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self):
        self.saved_tensors = ()
        self._in_ctx = ()
        self._out_ctx = ()
        self._single = True

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        _new = upper_layers.get('array_from_tensor')
        self._in_ctx = [x._ctx for x in inputs]
        tensors = [x._t for x in inputs]
        recorded = any(t.requires_grad for t in tensors)
        if recorded:
            outs = run_untracked(_TorchBridge.apply, self, *tensors)
        else:
            outs = _TorchBridge.apply(self, *tensors)
        if not isinstance(outs, tuple):
            outs = (outs,)
        wrapped = [_new(t, c) for t, c in zip(outs, self._out_ctx)]
        if recorded and _STATE.recording:       # MXNet records a _CustomFunction node
            _recorded.note_new('_CustomFunction', {}, inputs, wrapped)
        return wrapped[0] if self._single else wrapped

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError
