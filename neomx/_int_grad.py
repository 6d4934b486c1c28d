"""Gradients of integer arrays: MXNet has them, torch does not.

MXNet's autograd does not look at dtypes: an int32 array may ``attach_grad()``, flow
through ``topk``, indexing, ``take`` or ``Cast``, and receive an int32 gradient; an
executor binds gradient arrays for integer arguments (sequence lengths, indices). Torch
only differentiates floating-point tensors, so neomx lets an integer tensor take part in a
recorded graph through a *carrier*: a float64 tensor with the same values, kept on the
integer tensor, which does the differentiating.

* A variable's carrier is a float64 leaf whose accumulated gradient goes, cast to the
  variable's dtype (truncated, as a cast does), into its gradient buffer. It follows
  writes into the variable (it is refreshed when the tensor's version changes).
* While recording, an operation with a carried input runs twice: once as usual, without a
  graph, for the values, dtypes and integer semantics of its results; once on the carriers
  (integer ``dtype`` attributes turned into float64, so that ``Cast`` to an integer type
  stays differentiable), for the graph. An integer result gets the second run's result as
  its carrier; a floating result becomes ``value + (carried - carried.detach())``: the
  values of the first run, the gradient of the second.
* Inputs whose carrier the operation cannot use (indices a kernel insists on as integers)
  act as constants: their gradient is zero, as MXNet's is for indices and lengths.

Operations with side effects (random sampling, running statistics) would run them twice
on carried inputs; MXNet code differentiates integer arrays through indexing, sorting,
reductions, arithmetic and casts, where this does not arise. A sampler's integer ``dtype``
(``_sample_multinomial``'s) is no cast: its operator says so (``OpSpec.dtype_casts``) and
runs once.

Nothing here runs for floating-point arrays: the operations' fast paths test
:data:`LIVE` (how many integer tensors hold a carrier) before anything else.
"""
import threading
import weakref

import torch

_ATTR = '_neomx_carrier'
# [number of integer tensors holding a carrier now]: read first by the operations' fast
# paths, which skip everything here while it is 0.
LIVE = [0]
_ERRORS = (RuntimeError, ValueError, TypeError, IndexError)
_Tensor = torch.Tensor


class _Carrying(threading.local):
    active = False


_CARRYING = _Carrying()


def carrying():
    """Whether the current thread is running an operation on carriers: integer operations
    whose MXNet gradient is zero (``%``) then detach their result."""
    return _CARRYING.active


def _run_carried(fn, args, attrs):
    _CARRYING.active = True
    try:
        return fn(*args, **attrs)
    finally:
        _CARRYING.active = False


def _forget():
    LIVE[0] -= 1


def _hang(t, carrier):
    """Make ``carrier`` the carrier of integer tensor ``t`` (valid while ``t`` is unmodified)."""
    if t.__dict__.get(_ATTR) is None:
        LIVE[0] += 1
        weakref.finalize(t, _forget)
    setattr(t, _ATTR, (carrier, t._version))


def is_integer(t):
    """Whether ``t`` is a tensor torch cannot differentiate (integers, bool)."""
    return not (t.is_floating_point() or t.is_complex())


def make_leaf(t):
    """A float64 leaf carrying integer tensor ``t`` (a variable), hung on ``t``."""
    leaf = t.detach().to(torch.float64).requires_grad_()
    _hang(t, leaf)
    return leaf


def carrier_of(t):
    """The float64 tensor carrying integer tensor ``t``'s gradient, or None.

    A variable's leaf is refreshed after writes into ``t``; a computed carrier is dropped
    (``t`` then acts as a constant).
    """
    held = t.__dict__.get(_ATTR) if type(t) is _Tensor else None
    if held is None:
        return None
    carrier, version = held
    if version != t._version:
        if not carrier.is_leaf:
            return None
        with torch.no_grad():
            carrier.copy_(t)
        setattr(t, _ATTR, (carrier, t._version))
    return carrier


def _carried_attrs(attrs):
    """``attrs`` with an integer ``dtype`` (a cast's target) turned into float64."""
    dtype = attrs.get('dtype')
    if isinstance(dtype, torch.dtype) and not (dtype.is_floating_point or dtype.is_complex):
        return dict(attrs, dtype=torch.float64)
    return attrs


def casts_to_integer(attrs):
    """Whether an operation's attributes ask for integer results (``Cast(dtype='int32')``)."""
    return _carried_attrs(attrs) is not attrs


def run(fn, args, attrs=None):
    """``fn(*args, **attrs)`` recorded with integer gradients, or None when no argument is
    carried and ``attrs`` cast nothing to integers (the caller then runs it as usual).

    Call it only while recording. ``args`` may hold tensors, None and other values.
    """
    attrs = attrs or {}
    carried = [carrier_of(a) if isinstance(a, _Tensor) and is_integer(a) else None for a in args]
    spec = getattr(fn, 'spec', None)    # a registry operator's (see OpSpec.dtype_casts)
    cattrs = _carried_attrs(attrs) if spec is None or spec.dtype_casts else attrs
    if cattrs is attrs:
        if not any(c is not None for c in carried):
            return None
    elif not any(isinstance(a, _Tensor) and (a.requires_grad or c is not None) for a, c in zip(args, carried)):
        return None
    cargs = [a if c is None else c for a, c in zip(args, carried)]
    try:
        graph = _run_carried(fn, cargs, cattrs)
    except _ERRORS:                 # a kernel that insists on integer inputs: constants
        try:
            graph = _run_carried(fn, args, cattrs)
        except _ERRORS:
            return fn(*args, **attrs)
    with torch.no_grad():
        values = fn(*args, **attrs)
    if isinstance(values, (tuple, list)):
        graphs = graph if isinstance(graph, (tuple, list)) else ()
        joined = [_join(v, g, args) for v, g in zip(values, graphs)]
        return type(values)(joined + list(values[len(joined):]))
    return _join(values, graph, args)


def _join(value, graph, args):
    """``value`` differentiable through ``graph`` (see the module documentation)."""
    if (type(value) is not _Tensor or type(graph) is not _Tensor or not graph.requires_grad
            or graph.shape != value.shape):
        return value
    if not is_integer(value):
        return value + (graph - graph.detach()).to(value.dtype)
    if not graph.is_floating_point():
        return value
    if any(value is a for a in args):   # an operation that returned its input: a new alias
        value = value.detach()
    _hang(value, graph.to(torch.float64))
    return value
