"""Memory-layout changes inside operators, whose gradients come back in the input's layout.

torch's CPU kernels are fastest on a layout that depends on the operator and the shapes
(max pooling on channels-last data, convolutions of a few pixels on channels-first data).
Operators change the layout of their input where it pays; the gradient of that change is
given back in the input's own layout, since element-wise backward functions of the ops
before it (relu's, BatchNorm's) run many times slower on operands of mixed layouts.
"""
import torch

__all__ = ['as_layout', 'as_channels_last']


class _Relayout(torch.autograd.Function):
    """``x`` copied into ``memory_format``; the gradient copied back into ``x``'s layout."""

    @staticmethod
    def forward(ctx, x, memory_format):  # pylint: disable=arguments-differ
        ctx.original = (torch.channels_last if x.dim() == 4 and not x.is_contiguous()
                        and x.is_contiguous(memory_format=torch.channels_last) else torch.contiguous_format)
        return x.contiguous(memory_format=memory_format)

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        return grad.contiguous(memory_format=ctx.original), None


def as_layout(x, memory_format):
    """``x`` in ``memory_format`` (itself when it is already), differentiable.

    Examples
    --------
    >>> x = torch.zeros(2, 3, 4, 4)
    >>> as_layout(x, torch.channels_last).is_contiguous(memory_format=torch.channels_last)
    True
    """
    if x.is_contiguous(memory_format=memory_format):
        return x
    if x.requires_grad:
        return _Relayout.apply(x, memory_format)
    return x.contiguous(memory_format=memory_format)


def as_channels_last(x):
    """4-D ``x`` channels-last, differentiable; a 1-channel array as a view with the
    strides torch reads as channels-last (its contiguous strides read as channels-first).

    Examples
    --------
    >>> y = as_channels_last(torch.zeros(2, 1, 4, 4))
    >>> y.stride()
    (16, 1, 4, 1)
    """
    if x.shape[1] == 1:
        n, _, h, w = x.shape
        return x.reshape(n, h, w, 1).permute(0, 3, 1, 2)
    return as_layout(x, torch.channels_last)
