"""``mx.nd.contrib.hawkesll``: the log-likelihood of marked, univariate Hawkes processes with
exponential kernels, for batches of ragged sequences.

Mark ``k``'s intensity is ``lda[k] + alpha[k] * beta[k] * s_k(t)`` with the memory
``s_k(t) = state[k] * exp(-beta[k] t) + sum over earlier points i of mark k of
exp(-beta[k] (t - t_i))``. The log-likelihood of a sequence observed on ``(0, max_time]`` is
the sum of the log-intensities at its points minus every mark's integrated intensity; the
memory at ``max_time`` is returned as the next state. Gradients flow to ``lda``, ``alpha``
and ``beta`` from the log-likelihood; as in MXNet, ``state`` gets none and ``out_state``
passes none on.
"""
import torch

from .detection import _zero_gradient
from .registry import check, register


@register('_contrib_hawkesll', inputs=('lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid_length',
                                       'max_time'), num_outputs=2, output_names=('output', 'out_state'))
def hawkesll(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """Log-likelihood of Hawkes process observations.

    Parameters
    ----------
    lda : Tensor, shape (N, K): background intensities
    alpha, beta : Tensor, shape (K,): branching ratios and decays
    state : Tensor, shape (N, K): memory at time 0
    lags : Tensor, shape (N, T): inter-arrival times (left-aligned, ragged)
    marks : Tensor, shape (N, T): mark (process id) of each point
    valid_length : Tensor, shape (N,): points of each sequence
    max_time : Tensor, shape (N,): end of each observation period

    Returns
    -------
    loglik : Tensor, shape (N,)
    out_state : Tensor, shape (N, K): memory at ``max_time``
    """
    op = 'hawkesll'
    batch, num_marks = lda.shape if lda.dim() == 2 else (None, None)
    check(lda.dim() == 2 and tuple(alpha.shape) == (num_marks,) and tuple(beta.shape) == (num_marks,)
          and tuple(state.shape) == (batch, num_marks) and lags.dim() == 2 and lags.shape[0] == batch
          and marks.shape == lags.shape and tuple(valid_length.shape) == (batch,)
          and tuple(max_time.shape) == (batch,), op,
          'expected lda (N, K), alpha (K,), beta (K,), state (N, K), lags (N, T), marks (N, T), '
          'valid_length (N,) and max_time (N,); got %s, %s, %s, %s, %s, %s, %s and %s', lda.shape, alpha.shape,
          beta.shape, state.shape, lags.shape, marks.shape, valid_length.shape, max_time.shape)
    state = state.detach()
    steps = lags.shape[1]
    valid = torch.arange(steps, device=lags.device) < valid_length[:, None]            # (N, T)
    times = torch.cumsum(torch.where(valid, lags, lags.new_zeros(())), dim=1)
    mark = marks.long().clamp(0, num_marks - 1)
    point_beta, point_alpha = beta[mark], alpha[mark]                                   # (N, T)
    # memory of each point's mark just before it: the initial state, then earlier points of that mark
    earlier = (torch.arange(steps, device=lags.device)[:, None] > torch.arange(steps, device=lags.device))
    same_mark = (mark[:, :, None] == mark[:, None, :]) & earlier & valid[:, None, :]     # (N, T, T')
    gaps = (times[:, :, None] - times[:, None, :]).clamp(min=0)
    decayed = torch.where(same_mark, torch.exp(-point_beta[:, :, None] * gaps), gaps.new_zeros(()))
    memory = state.gather(1, mark) * torch.exp(-point_beta * times) + decayed.sum(2)
    intensity = lda.gather(1, mark) + point_alpha * point_beta * memory
    log_intensity = torch.where(valid, torch.log(intensity), intensity.new_zeros(())).sum(1)
    # integrated intensity over (0, max_time] and the memory at max_time, per mark
    end = max_time[:, None]
    remaining = torch.where(valid, torch.exp(-point_beta * (max_time[:, None] - times)), times.new_zeros(()))
    one_hot = torch.nn.functional.one_hot(mark, num_marks).to(lags.dtype) * valid[..., None]   # (N, T, K)
    start_decay = torch.exp(-beta * end)                                                # (N, K)
    out_state = state * start_decay + torch.einsum('nt,ntk->nk', remaining, one_hot)
    excitation = state * (1 - start_decay) + torch.einsum('nt,ntk->nk', 1 - remaining, one_hot)
    compensator = (lda * end + alpha * excitation).sum(1)
    # MXNet back-propagates the log-likelihood only: the next state passes no gradient on
    return log_intensity - compensator, _zero_gradient(out_state.detach(), lda, alpha, beta)


_HAWKES_INPUTS = ('lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid_length', 'max_time')


@register('_contrib_backward_hawkesll', inputs=('output_grad', 'out_state_grad') + _HAWKES_INPUTS,
          num_outputs=len(_HAWKES_INPUTS), output_names=tuple(n + '_grad' for n in _HAWKES_INPUTS),
          differentiable=False)
def backward_hawkesll(output_grad, out_state_grad, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """The gradient of ``hawkesll``: given the head gradients of its two outputs and its eight
    inputs (MXNet's backward node: output gradients, then the inputs), the gradients of the
    inputs in order. Only ``lda``, ``alpha`` and ``beta`` get non-zero ones: the
    log-likelihood alone is differentiated (``out_state_grad`` is read for its shape only),
    as in MXNet."""
    if lda.device.type == 'meta':
        return tuple(torch.empty_like(t) for t in (lda, alpha, beta, state, lags, marks, valid_length, max_time))
    check(tuple(output_grad.shape) == (lda.shape[0],) and tuple(out_state_grad.shape) == tuple(state.shape),
          'backward_hawkesll', 'output_grad must have shape (N,) and out_state_grad the shape of state (N, K); '
          'got %s and %s', output_grad.shape, out_state_grad.shape)
    with torch.enable_grad():
        params = [t.detach().requires_grad_(True) for t in (lda, alpha, beta)]
        loglik, _ = hawkesll(*params, state, lags, marks, valid_length, max_time)
        grads = torch.autograd.grad(loglik, params, grad_outputs=output_grad.to(loglik.dtype))
    return tuple(grads) + tuple(torch.zeros_like(t) for t in (state, lags, marks, valid_length, max_time))
