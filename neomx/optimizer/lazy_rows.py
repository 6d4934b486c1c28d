"""Lazy updates for row_sparse gradients: only the rows the gradient holds are updated.

MXNet's SGD and Adam (``lazy_update=True``), Ftrl and AdaGrad update just those rows of the
weight and of its states (weight decay included) when the gradient is row_sparse: the rule
runs unchanged on the gathered rows (the gradient's stored values), which are then written
back. A row_sparse gradient is never made dense here unless the update is not lazy.
"""
import torch

from ..ndarray.ndarray import NDArray


def lazy_rows(optimizer, grad):
    """The rows to update for ``grad`` (an NDArray), or None for a whole (dense) update."""
    if getattr(grad, 'stype', 'default') != 'row_sparse':
        return None
    if not getattr(optimizer, 'lazy_update', type(optimizer)._LAZY_FOR_ROW_SPARSE):
        return None
    return grad.indices._t


def _gather(state, rows, nrows):
    """``state`` with every tensor of ``nrows`` rows cut to ``rows`` (copies)."""
    if isinstance(state, torch.Tensor):
        return state[rows].clone() if state.dim() and state.shape[0] == nrows else state
    if isinstance(state, (tuple, list)):
        return type(state)(_gather(s, rows, nrows) for s in state)
    return state


def _scatter(state, part, rows, nrows):
    if isinstance(state, torch.Tensor):
        if state.dim() and state.shape[0] == nrows:
            state[rows] = part
        return
    if isinstance(state, (tuple, list)):
        for s, p in zip(state, part):
            _scatter(s, p, rows, nrows)


def step_lazily(optimizer, indices, weights, grads, grad_arrays, states, lrs, wds):
    """``optimizer._step`` over tensors, restricted to the held rows of row_sparse gradients."""
    for g in grad_arrays:       # dense gradients, nearly always: one fused step
        if type(g) is not NDArray and getattr(g, 'stype', 'default') == 'row_sparse':
            break
    else:
        optimizer._step(indices, weights, grads, states, lrs, wds)
        return
    rows = [lazy_rows(optimizer, g) for g in grad_arrays]
    # gradients the caller left without a tensor (row_sparse ones) updated densely after all
    grads = [g if g is not None else a._t for g, a in zip(grads, grad_arrays)] \
        if any(r is None and g is None for r, g in zip(rows, grads)) else grads
    if all(r is None for r in rows):
        optimizer._step(indices, weights, grads, states, lrs, wds)
        return
    for i, r in enumerate(rows):
        if r is None:
            optimizer._step(indices[i:i + 1], weights[i:i + 1], grads[i:i + 1], states[i:i + 1],
                            lrs[i:i + 1], wds[i:i + 1])
            continue
        nrows = weights[i].shape[0]
        r = r.to(weights[i].device)
        weight_rows = weights[i][r].clone()
        state_rows = _gather(states[i], r, nrows)
        grad_rows = grad_arrays[i].data._t.to(device=weights[i].device, dtype=weights[i].dtype)
        optimizer._step(indices[i:i + 1], [weight_rows], [grad_rows], [state_rows],
                        lrs[i:i + 1], wds[i:i + 1])
        weights[i][r] = weight_rows
        _scatter(states[i], state_rows, r, nrows)
