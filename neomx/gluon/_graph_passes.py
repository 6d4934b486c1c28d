"""Graph-level optimisations for hybridized inference: rewrites of a compiled graph's Plan.

A pass takes a :class:`~neomx.symbol.graph.Plan` and returns a rewritten one, or the same
object when nothing applies. The rewritten calls compute the original result whenever
they run recorded (``autograd.record()``) or in training mode, so an inference plan is
correct everywhere and only faster where the rewrite applies: hybridized blocks run it for
calls outside ``autograd.record()`` in predict mode.
"""
import functools

import torch

from .. import autograd
from ..symbol.graph import Call, Plan

__all__ = ['ConvolutionBatchNorm', 'fold_batch_norm', 'version_stamp', 'INFERENCE_PASSES']

# Layouts with channels on axis 1, where BatchNorm(axis=1) scales the convolution's filters.
_CHANNELS_FIRST = (None, 'NCW', 'NCHW', 'NCDHW')
_FOLDABLE_DTYPES = (torch.float32, torch.float64)


def version_stamp(tensors):
    """Identifies the values of ``tensors``: the storage and in-place update counter of each."""
    return tuple((t.data_ptr(), t._version) for t in tensors)


class ConvolutionBatchNorm:
    """``BatchNorm(Convolution(data, weight, bias))``, folded into one convolution when not
    training and not recording.

    In inference BatchNorm is the affine map ``(x - mean) * gamma / sqrt(var + eps) + beta``
    per channel, so it folds into the filters and bias:
    ``weight * s`` and ``(bias - mean) * s + beta`` with ``s = gamma / sqrt(var + eps)``
    (``gamma`` read as 1 under ``fix_gamma``). The folded filters are kept until one of the
    six arrays changes (new storage or an in-place update); 2-D filters are stored
    channels-last, which makes the convolution's output channels-last too (same values).

    Parameters
    ----------
    convolution, batch_norm : functools.partial
        The two operators' implementations with their attributes bound.
    """

    def __init__(self, convolution, batch_norm):
        self._convolution, self._batch_norm = convolution, batch_norm
        self._biased_convolution = functools.partial(
            convolution.func, **dict(convolution.keywords, no_bias=False))
        self._eps = batch_norm.keywords['eps']
        self._fix_gamma = batch_norm.keywords['fix_gamma']
        self._stamp = self._folded = None

    def __call__(self, data, weight, bias, gamma, beta, moving_mean, moving_var):
        """BatchNorm's outputs: ``(out,)`` folded, all three when it runs unfolded."""
        if torch.is_grad_enabled() or autograd.is_training() or weight.dtype not in _FOLDABLE_DTYPES:
            return self._batch_norm(self._convolution(data, weight, bias), gamma, beta,
                                    moving_mean, moving_var)
        arrays = (weight, bias, gamma, beta, moving_mean, moving_var)
        stamp = version_stamp([a for a in arrays if a is not None])
        if stamp != self._stamp:
            self._folded, self._stamp = self._fold(*arrays), stamp
        return (self._biased_convolution(data, *self._folded),)

    def _fold(self, weight, bias, gamma, beta, moving_mean, moving_var):
        scale = torch.rsqrt(moving_var + self._eps)
        if not self._fix_gamma:
            scale = scale * gamma
        folded_bias = beta - moving_mean * scale
        if bias is not None:
            folded_bias = folded_bias + bias * scale
        folded = weight * scale.reshape((-1,) + (1,) * (weight.dim() - 1))
        if folded.dim() == 4:       # oneDNN runs 2-D convolutions faster on channels-last filters
            folded = folded.contiguous(memory_format=torch.channels_last)
        return folded, folded_bias


def _foldable(conv, batch_norm, uses):
    """Whether ``batch_norm`` normalises the channels of ``conv``'s output and nothing else
    reads that output, nor BatchNorm's mean and variance outputs."""
    return (conv is not None and conv.node.op == 'Convolution'
            and isinstance(conv.fn, functools.partial) and isinstance(batch_norm.fn, functools.partial)
            and conv.node.params['layout'] in _CHANNELS_FIRST and batch_norm.node.params['axis'] == 1
            and uses[conv.out] == 1)


def fold_batch_norm(plan):
    """Fold each BatchNorm fed only by a channel-first Convolution into it (see
    :class:`ConvolutionBatchNorm`).

    Parameters
    ----------
    plan : Plan

    Returns
    -------
    Plan
        ``plan`` itself when no pair folds.
    """
    uses = plan.use_counts()
    producers = {c.out: c for c in plan.calls}
    side_outputs = {name for c in plan.calls for name, index in [a for a in c.args if a is not None]
                    + plan.heads if index}          # BatchNorm's mean/var read by someone
    fused, dropped = {}, set()
    for call in plan.calls:
        if call.node.op != 'BatchNorm' or call.out in side_outputs:
            continue
        conv = producers.get(call.args[0][0]) if call.args[0][1] is None else None
        if _foldable(conv, call, uses):
            fused[call.out] = Call(ConvolutionBatchNorm(conv.fn, call.fn), conv.args + call.args[1:],
                                   call.out, call.node)
            dropped.add(conv.out)
    if not fused:
        return plan
    calls = [fused.get(c.out, c) for c in plan.calls if c.out not in dropped]
    return Plan(plan.inputs, calls, plan.heads)


INFERENCE_PASSES = (fold_batch_norm,)
