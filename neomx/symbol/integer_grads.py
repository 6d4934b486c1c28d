"""The plan pass that gives a bound graph MXNet's gradients of integer arrays.

Executors bind gradient arrays for integer arguments (sequence lengths, indices, ``Cast``
inputs) and differentiate through casts to integer types, which torch cannot. Graphs that
need it run each call through :func:`neomx._int_grad.run` (integer tensors carry their
gradients in float64 carriers); other graphs are compiled without it and pay nothing.
"""
import functools

import torch

from .. import _int_grad
from .._autograd_state import STATE as _AUTOGRAD
from .plan import Call, Plan

__all__ = ['carry_integer_gradients', 'needs_integer_gradients']


def _carried_call(impl, attrs, *tensors):
    res = _int_grad.run(impl, tensors, attrs) if _AUTOGRAD.recording else None
    return impl(*tensors, **attrs) if res is None else res


def carry_integer_gradients(plan):
    """``plan`` with every call run through :func:`neomx._int_grad.run`."""
    calls = []
    for call in plan.calls:
        fn = call.fn
        if isinstance(fn, functools.partial) and not fn.args:
            fn = functools.partial(_carried_call, fn.func, fn.keywords)
        calls.append(Call(fn, call.args, call.out, call.node))
    return Plan(plan.inputs, calls, plan.heads)


def needs_integer_gradients(symbol, trained_tensors):
    """Whether differentiating ``symbol`` w.r.t. ``trained_tensors`` involves integer
    gradients: an integer argument to differentiate, or a cast to an integer type."""
    if any(_int_grad.is_integer(t) for t in trained_tensors):
        return True
    for node in symbol._nodes():
        dtype = None if node.is_variable or not node.spec.dtype_casts else node.params.get('dtype')
        if isinstance(dtype, torch.dtype) and not dtype.is_floating_point:
            return True
    return False
