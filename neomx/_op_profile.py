"""Operator ranges for ``mx.profiler``: MXNet's operator names on torch's profiler timeline.

While the profiler records operators (and only then: ``ENABLED``), the ndarray layer runs
each operator call inside ``op_range(name)``, a ``torch.profiler.record_function`` range
labelled ``PREFIX + name``, where ``name`` is MXNet's operator name (``sqrt``,
``_plus_scalar``); the profiler turns these ranges into MXNet's ``operator`` statistics.
A Python custom operator's forward and backward run inside ``custom_scope``: the range
``<op_type>::pure_python`` (``_backward_<op_type>::pure_python``), and the operators its
code calls are named ``<op_type>::<name>`` -- MXNet's ``Custom Operator`` category.
Operators called by an operator's implementation are part of their caller (one range).
"""
import contextlib
import threading

import torch

PREFIX = 'mxnet_op::'
ENABLED = [False]


class _State(threading.local):
    def __init__(self):
        self.scope = None       # the custom operator whose code runs now
        self.inside = False     # inside an operator range already


STATE = _State()


def op_call(name, fn, args, kwargs):
    """``fn(*args, **kwargs)`` inside the range of operator ``name`` (unless nested in one)."""
    state = STATE
    if state.inside:
        return fn(*args, **kwargs)
    label = PREFIX + (name if state.scope is None else state.scope + '::' + name)
    state.inside = True
    try:
        with torch.profiler.record_function(label):
            return fn(*args, **kwargs)
    finally:
        state.inside = False


@contextlib.contextmanager
def custom_scope(op_type, backward=False):
    """Run a custom operator's Python code (see the module docstring); no-op unless enabled."""
    if not ENABLED[0]:
        yield
        return
    state = STATE
    saved = state.scope, state.inside
    state.scope, state.inside = op_type, False
    try:
        with torch.profiler.record_function('%s%s%s::pure_python' % (PREFIX, '_backward_' if backward else '',
                                                                    op_type)):
            yield
    finally:
        state.scope, state.inside = saved
