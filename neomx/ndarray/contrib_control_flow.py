"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``: Python control flow over NDArrays.

The loops run eagerly under the current autograd state, so inside ``autograd.record()``
every step is recorded and gradients reach the data, the initial states and any array
the body captures. The nested-list helpers :func:`flatten` and :func:`regroup` are shared
with the Symbol versions (``neomx/symbol/contrib_control_flow.py``).
"""
from .ndarray import NDArray

__all__ = ['foreach', 'while_loop', 'cond']


def flatten(args, leaf_type, what):
    """``(flat list of leaves, format)`` of a leaf or nested lists of leaves.

    The format is 0 for a single leaf, or the list of its items' formats; a multi-output
    Symbol leaf (``len > 1``) counts as that many leaves, format its length.
    """
    if isinstance(args, leaf_type):
        length = len(args) if leaf_type is not NDArray else 0     # an NDArray's len is its rows
        return [args], (length if length > 1 else 0)
    if not isinstance(args, (list, tuple)):
        raise ValueError('%s must be (nested) list of %s, but got %s of type %s'
                         % (what, leaf_type.__name__, args, type(args)))
    flat, formats = [], []
    for item in args:
        leaves, fmt = flatten(item, leaf_type, what)
        flat.extend(leaves)
        formats.append(fmt)
    return flat, formats


def regroup(flat, fmt):
    """``(the structure of format fmt rebuilt from the leaves, the leaves left over)``."""
    if isinstance(fmt, int):
        return (flat[0], flat[1:]) if fmt == 0 else (flat[:fmt], flat[fmt:])
    grouped = []
    for item_fmt in fmt:
        item, flat = regroup(flat, item_fmt)
        grouped.append(item)
    return grouped, flat


def _to_scalar(value, type_, what):
    if hasattr(value, 'asscalar'):
        value = value.asscalar()
    try:
        return type_(value)
    except (TypeError, ValueError):
        raise ValueError('Cannot convert %s to python %s' % (what, type_.__name__)) from None


def _check_arrays(flat, what):
    if not all(isinstance(a, NDArray) for a in flat):
        raise ValueError('%s should be an NDArray or a nested list of NDArrays' % what)


def foreach(body, data, init_states):
    """Run ``body`` on each slice of ``data`` along axis 0, threading loop states.

    Parameters
    ----------
    body : callable
        ``body(slice, states) -> (outputs, new_states)``; ``slice`` is an NDArray
        (``data[i]``) or a list of them when ``data`` is a list.
    data : NDArray or list of NDArray
        Arrays of shape ``(T, ...)``, sliced along axis 0.
    init_states : NDArray or nested list of NDArray
        The states of the first step.

    Returns
    -------
    (outputs, states)
        Each step's outputs stacked into ``(T, ...)`` arrays, in the structure ``body``
        returns them; and the states after the last step.
    """
    _check_arrays(flatten(data, NDArray, 'foreach input')[0], 'data')
    _check_arrays(flatten(init_states, NDArray, 'foreach states')[0], 'init_states')
    from .op import stack
    single = isinstance(data, NDArray)
    states, steps, out_fmt = init_states, [], []
    for i in range(data.shape[0] if single else data[0].shape[0]):
        outs, states = body(data[i] if single else [d[i] for d in data], states)
        outs, out_fmt = flatten(outs, NDArray, 'foreach output')
        steps.append(outs)
    stacked = [stack(*column) for column in zip(*steps)]
    return regroup(stacked, out_fmt)[0], states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times.

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars)`` -> a scalar (NDArray) tested for truth before each step.
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``; either may be None or a list.
    loop_vars : NDArray or list of NDArray
    max_iterations : int
        Required.

    Returns
    -------
    (outputs, loop_vars)
        The step outputs stacked into ``(max_iterations, ...)`` arrays (rows after the last
        step are zeros; MXNet leaves them uninitialized), in the structure ``func`` returns,
        or ``[]`` when no step ran; and the final loop variables (an NDArray when
        ``loop_vars`` was one).

    Raises
    ------
    ValueError
        Without ``max_iterations``, with no loop variable, or when ``func`` changes the
        number of loop variables or of step outputs.
    """
    if max_iterations is None:
        raise ValueError('max_iterations should be specified')
    max_iterations = _to_scalar(max_iterations, int, 'max_iteration')
    if isinstance(loop_vars, (list, tuple)) and not loop_vars:
        raise ValueError('loop_vars should contain at least one element')
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    steps, out_fmt = [], None
    while len(steps) < max_iterations and _to_scalar(cond(*loop_vars), bool, 'Return value of cond'):
        step_output, new_vars = func(*loop_vars)
        new_vars = _as_nested(new_vars)
        new_vars = new_vars if isinstance(new_vars, list) else [new_vars]
        if len(new_vars) != len(loop_vars):
            raise ValueError('The length of loop_vars should be consistent during the loop')
        loop_vars = new_vars
        step_output, out_fmt = flatten(_as_nested(step_output), NDArray, 'while output')
        if steps and len(step_output) != len(steps[0]):
            raise ValueError('Number of elements in step_output should be the same in each step')
        steps.append(step_output)
    stacked = [_stack_padded(column, max_iterations) for column in zip(*steps)]
    if out_fmt is not None:
        stacked = regroup(stacked, out_fmt)[0]
    return stacked, (loop_vars[0] if single else loop_vars)


def _as_nested(value):
    """``func``'s step output or loop variables: None is no value, a tuple a list."""
    if value is None:
        return []
    return list(value) if isinstance(value, tuple) else value


def _stack_padded(column, rows):
    """The arrays of ``column`` stacked, grown with zero rows to ``rows`` rows."""
    from .op import concat
    from .ndarray import zeros
    items = [x.expand_dims(0) for x in column]
    if len(items) < rows:
        items.append(zeros((rows - len(items),) + items[0].shape[1:], ctx=items[0].context, dtype=items[0].dtype))
    return concat(*items, dim=0)


def cond(pred, then_func, else_func):
    """``then_func()`` if the scalar ``pred`` is true, else ``else_func()``.

    Parameters
    ----------
    pred : NDArray or number
        A one-element array (or Python scalar) tested for truth.
    then_func, else_func : callable
        Functions of no argument returning NDArrays or nested lists of them.
    """
    return then_func() if _to_scalar(pred, bool, 'pred') else else_func()
