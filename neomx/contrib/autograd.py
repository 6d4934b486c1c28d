"""``mx.contrib.autograd``: MXNet's first, experimental autograd interface.

``train_section()`` records (and runs in training mode), ``test_section()`` does neither;
``grad_and_loss(func)`` wraps a function of NDArrays into one returning the gradients of
its arguments and its value. The same machinery as ``mx.autograd`` underneath.

>>> import neomx as mx
>>> from neomx.contrib import autograd as cag
>>> dx, = cag.grad(lambda x: (x * x).sum())(mx.nd.array([1.0, 2.0]))
>>> dx.asnumpy().tolist()
[2.0, 4.0]
"""
import functools

from ..base import check_call, string_types, c_array, c_array_buf, c_handle_array
from .. import autograd as _autograd
from ..ndarray import NDArray, zeros_like

__all__ = ['set_is_training', 'TrainingStateScope', 'train_section', 'test_section', 'mark_variables',
           'backward', 'compute_gradient', 'grad_and_loss', 'grad', 'NDArray', 'check_call',
           'string_types', 'c_array', 'c_array_buf', 'c_handle_array']


def set_is_training(is_train):
    """Turn recording and training mode on or off together; returns the previous state."""
    prev = _autograd.set_training(is_train)
    _autograd.set_recording(is_train)
    return bool(prev)


class TrainingStateScope:
    """A ``with`` scope that sets the training state (recording and train mode) to
    ``enter_state`` and restores the previous one on exit.

    Example
    -------
    >>> with mx.contrib.autograd.TrainingStateScope(True):
    ...     mx.autograd.is_training(), mx.autograd.is_recording()
    (True, True)
    >>> mx.autograd.is_training(), mx.autograd.is_recording()      # restored
    (False, False)
    """

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section():
    """A scope that records operations in training mode."""
    return TrainingStateScope(True)


def test_section():
    """A scope that neither records nor trains (inside a ``train_section`` too)."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Make ``variables`` (NDArrays) write their gradients into ``gradients``
    (``grad_reqs``: 'write', 'add' or 'null', one for all or one per variable)."""
    if not isinstance(grad_reqs, string_types):
        grad_reqs = list(grad_reqs)
    _autograd.mark_variables(list(variables), list(gradients), grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """Gradients of ``outputs`` (a list of NDArray) into the marked variables; ``out_grads``
    holds one head gradient per output (None for ones)."""
    assert isinstance(outputs, (list, tuple)), 'outputs must be a list or tuple of NDArrays'
    if out_grads is not None:
        assert len(out_grads) == len(outputs), 'outputs and out_grads must have the same length'
        out_grads = list(out_grads)
    _autograd.backward(list(outputs), out_grads, retain_graph=retain_graph)


def compute_gradient(outputs):
    """Deprecated spelling of :func:`backward`."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """A function computing ``(gradients of the arguments, func's value)``.

    Parameters
    ----------
    func : callable
        Takes NDArrays and returns an NDArray (or a list of them).
    argnum : int or list of int, optional
        The positions of the arguments to differentiate (all by default).
    """
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            variables = [args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for x in variables:
            assert isinstance(x, NDArray), 'type of autograd input should NDArray.'
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """A function computing the gradients of ``func``'s arguments (see :func:`grad_and_loss`)."""
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args):
        return grad_with_loss_func(*args)[0]
    return wrapped
