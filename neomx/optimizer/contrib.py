"""``mx.optimizer.contrib``: :class:`GroupAdaGrad`."""
import torch

from ..base import MXNetError
from ..ndarray import zeros
from .optimizer import Optimizer, register

__all__ = ['GroupAdaGrad']


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight (embeddings):

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(grad), axis=1, keepdims=True)
        weight -= lr * grad / sqrt(history + eps)

    Weight decay is not supported (``wd`` must be 0). Row-sparse gradients update only
    their rows, as MXNet's lazy kernel does.

    Parameters
    ----------
    eps : float, default 1e-5
        Added inside the square root for stability.

    Example
    -------
    >>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1)
    >>> w, g = mx.nd.ones((2, 2)), mx.nd.array([[1, 1], [0, 0]])
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().tolist()            # 1 - 0.1 / sqrt(1 + eps) in the first row
    [[0.9000005125999451, 0.9000005125999451], [1.0, 1.0]]
    """
    _LAZY_FOR_ROW_SPARSE = True

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise MXNetError('GroupAdaGrad: the weight must be 2-D, got shape %s' % (weight.shape,))
        return zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype)

    def _step(self, indices, weights, grads, states, lrs, wds):
        if any(wd != 0 for wd in wds):
            raise MXNetError('GroupAdaGrad: weight decay is not supported, got wd=%s' % max(wds))
        clip = self._clip()
        for weight, grad, history, lr in zip(weights, grads, states, lrs):
            grad = grad * self.rescale_grad
            if clip >= 0:
                grad = grad.clamp(-clip, clip)
            history.add_(grad.square().mean(dim=1, keepdim=True))
            weight.sub_(lr * grad / torch.sqrt(history + self.float_stable_eps))
