"""The SGD family: SGD, NAG, Signum, LARS, LBSGD, DCASGD, SGLD."""
import logging
import math

import torch

from .._torch_private import foreach
from ..ndarray.ndarray import zeros
from ..operator import optimizer_ops as K
from .optimizer import Optimizer, register

__all__ = ['SGD', 'NAG', 'Signum', 'LARS', 'LBSGD', 'DCASGD', 'SGLD']


def _zeros_like(weight):
    return zeros(weight.shape, weight.context, dtype=weight.dtype)


class _MomentumOptimizer(Optimizer):
    """Optimizers whose state is one momentum buffer (None without momentum), laid out
    ``(momentum, master)`` under multi-precision."""
    _MASTER_FIRST = False

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None


@register
class SGD(_MomentumOptimizer):
    """Stochastic gradient descent, with momentum and weight decay.

    ``mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight); weight += mom``
    (without momentum: ``weight -= lr * (clip(rescale_grad * grad) + wd * weight)``).

    Parameters
    ----------
    momentum : float
    lazy_update : bool
        Update only the rows present in a row_sparse gradient (weight decay and momentum
        included); with False every row is updated.

    Example
    -------
    >>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    >>> update = mx.optimizer.get_updater(opt)
    >>> weight = mx.nd.ones(2)
    >>> update(0, mx.nd.ones(2), weight)          # mom = -0.1; w = 0.9
    >>> update(0, mx.nd.ones(2), weight)          # mom = 0.9 * -0.1 - 0.1; w = 0.71
    >>> weight
    <BLANKLINE>
    [0.71 0.71]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(momentum=momentum, **kwargs)
        self.lazy_update = lazy_update

    def _step(self, indices, weights, grads, states, lrs, wds):
        if states[0] is not None:
            K.sgd_mom_(weights, grads, list(states), lrs, wds, self.momentum, self.rescale_grad, self._clip())
        else:
            K.sgd_(weights, grads, lrs, wds, self.rescale_grad, self._clip())


@register
class NAG(_MomentumOptimizer):
    """Nesterov accelerated gradient.

    ``step = -lr * (clip(rescale_grad * grad) + wd * weight)``; ``mom = momentum * mom + step``;
    ``weight += momentum * mom + step``.

    Example
    -------
    >>> opt = mx.optimizer.NAG(learning_rate=0.1, momentum=0.9)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))  # step -0.1 * g, plus 0.9 * mom
    >>> weight
    <BLANKLINE>
    [0.81 1.38]
    <NDArray 2 @cpu(0)>
    """

    def _step(self, indices, weights, grads, states, lrs, wds):
        if states[0] is not None:
            K.nag_mom_(weights, grads, list(states), lrs, wds, self.momentum, self.rescale_grad, self._clip())
        else:
            K.sgd_(weights, grads, lrs, wds, self.rescale_grad, self._clip())


@register
class Signum(_MomentumOptimizer):
    """Signum: the sign of the momentum (signSGD when ``momentum`` is 0).

    ``mom = momentum * mom - (1 - momentum) * (grad + wd * weight)``;
    ``weight = (1 - lr * wd_lh) * weight + lr * sign(mom)``.

    Parameters
    ----------
    momentum : float
    wd_lh : float
        Decoupled weight decay (Loshchilov & Hutter).

    Example
    -------
    >>> opt = mx.optimizer.Signum(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([0.5, -3])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))  # w + lr * sign(-g)
    >>> weight
    <BLANKLINE>
    [0.9 1.1]
    <NDArray 2 @cpu(0)>
    """
    _MASTER_FIRST = True

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(momentum=momentum, learning_rate=learning_rate, **kwargs)
        self.wd_lh = wd_lh

    def _step(self, indices, weights, grads, states, lrs, wds):
        if states[0] is not None:
            K.signum_(weights, grads, list(states), lrs, wds, self.momentum, self.wd_lh, self.rescale_grad,
                      self._clip())
        else:
            K.signsgd_(weights, grads, lrs, wds, self.rescale_grad, self._clip())


@register
class LARS(SGD):
    """Layer-wise adaptive rate scaling (You et al. 2017) over momentum SGD.

    Each parameter's rate is scaled by ``eta * |w| / (|g| + wd * |w| + eps)`` (1 when a norm
    is 0), except biases, gammas and betas (by name). With ``momentum_correction`` the
    momentum is scaled by the ratio of the current to the previous learning rate.

    Parameters
    ----------
    eta : float
        Trust coefficient.
    eps : float
    momentum_correction : bool

    Example
    -------
    >>> opt = mx.optimizer.LARS(learning_rate=0.1, eta=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([3, 4])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))  # lr scaled by eta * |w| / |g|
    >>> weight
    <BLANKLINE>
    [0.99151474 0.98868626]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0, momentum_correction=True, **kwargs):
        super().__init__(momentum=momentum, lazy_update=lazy_update, **kwargs)
        self.eta = eta
        self.eps = eps
        self.momentum_correction = momentum_correction
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _decays_weight(self, name):
        return name.endswith('_weight')

    def _get_lrs(self, indices):
        lr = self.learning_rate
        self.last_lr = lr if self.cur_lr is None else self.cur_lr
        self.cur_lr = lr
        return super()._get_lrs(indices)

    def _is_scaled(self, index):
        name = self.idx2name.get(index, str(index))
        return not name.endswith(('gamma', 'beta', 'bias'))

    def _layer_rates(self, indices, weights, grads, lrs, wds):
        """The learning rates scaled by each layer's trust ratio."""
        scaled = [p for p, i in enumerate(indices) if self._is_scaled(i)]
        if not scaled:
            return lrs
        norms = torch.stack(foreach.norm([weights[p].float() for p in scaled])
                            + foreach.norm([grads[p].float() for p in scaled])).tolist()
        lrs = list(lrs)
        for k, p in enumerate(scaled):
            w_norm, g_norm = norms[k], norms[len(scaled) + k] * self.rescale_grad
            if w_norm > 0.0 and g_norm > 0.0:
                lrs[p] *= self.eta * w_norm / (g_norm + wds[p] * w_norm + self.eps)
        return lrs

    def _step(self, indices, weights, grads, states, lrs, wds):
        lrs = self._layer_rates(indices, weights, grads, lrs, wds)
        clip = self._clip()
        if states[0] is not None:
            momentum = self.momentum
            if self.momentum_correction and self.last_lr != 0:
                momentum *= self.cur_lr / self.last_lr
            K.sgd_mom_(weights, grads, list(states), lrs, wds, momentum, self.rescale_grad, clip)
        else:
            K.sgd_(weights, grads, lrs, wds, self.rescale_grad, clip)


@register
class LBSGD(_MomentumOptimizer):
    """Large-batch SGD: momentum SGD whose gradients are summed over ``batch_scale`` updates
    (emulating a batch that many times larger), with a learning-rate warmup.

    Every ``batch_scale``-th update of a weight applies momentum SGD with the mean of the
    gradients summed since the last one, at the learning rate times a multiplier; the
    updates in between leave the weight as it is. The multiplier grows from 1 to
    ``batch_scale`` over ``warmup_epochs * updates_per_epoch`` updates (counted from
    ``begin_epoch * updates_per_epoch``): ``'linear'``, ``'power2'`` (quadratically) or
    ``'sqrt'``; with ``'lars'`` it is instead each layer's trust ratio
    ``sqrt(|w|^2 / (|g|^2 + wd * |w|^2))`` clipped to [0.01, 100] (any other strategy: 1).

    Parameters
    ----------
    momentum : float
    multi_precision : bool
        Step float16 weights through a float32 master copy.
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}
    warmup_epochs : int
    batch_scale : int
        How many updates make one large batch.
    updates_per_epoch : int
    begin_epoch : int
    num_epochs : int

    Example
    -------
    >>> opt = mx.optimizer.LBSGD(learning_rate=0.1, batch_scale=2, warmup_epochs=0)
    >>> weight = mx.nd.ones(2)
    >>> opt.update(0, weight, mx.nd.array([1., 3.]), None)     # summed, not applied yet
    >>> weight
    <BLANKLINE>
    [1. 1.]
    <NDArray 2 @cpu(0)>
    >>> opt.update(0, weight, mx.nd.array([3., 1.]), None)     # mean 2, lr 0.1 * 2
    >>> weight
    <BLANKLINE>
    [0.6 0.6]
    <NDArray 2 @cpu(0)>
    """
    _MASTER_FIRST = False

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear', warmup_epochs=5,
                 batch_scale=1, updates_per_epoch=32, begin_epoch=0, num_epochs=60, **kwargs):
        super().__init__(momentum=momentum, multi_precision=multi_precision, **kwargs)
        logging.info('Running Large-Batch SGD Algorithm')
        logging.info('(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, updates_per_epoch=%d)',
                     batch_scale, warmup_epochs, warmup_strategy, updates_per_epoch)
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}      # index -> {'cum_grad': summed gradient, 'num_cums': updates counted}
        self.adaptive = False
        self.admult = 1

    def _get_lbmult(self, nup):
        """The warmup multiplier of the learning rate after ``nup`` updates."""
        warmup = self.warmup_epochs * self.updates_per_epoch
        top = float(self.batch_scale)
        if nup >= warmup:
            return top
        if warmup <= 1:
            return 1.0
        progress = float(nup) / warmup
        if self.warmup_strategy == 'linear':
            return 1.0 + (top - 1) * progress
        if self.warmup_strategy == 'power2':
            return 1.0 + (top - 1) * progress * progress
        if self.warmup_strategy == 'sqrt':
            return 1.0 + (top - 1) * math.sqrt(progress)
        return 1.0

    def _get_lars(self, weight, g, wd):
        """The layer's trust ratio (tensors ``weight`` and ``g``), clipped to [0.01, 100]."""
        weight2 = float((weight.double() * weight.double()).sum())
        grad2 = float((g.double() * g.double()).sum())
        return min(max(math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18)), 0.01), 100.0)

    def _cumulate_gradient(self, grad, index):
        """Add ``grad`` to ``index``'s sum; returns ``{'cum_grad', 'num_cums'}``."""
        cgrad = self.cumgrads.get(index)
        if cgrad and cgrad['num_cums'] > 0:
            cgrad = {'cum_grad': cgrad['cum_grad'] + grad, 'num_cums': cgrad['num_cums'] + 1}
        else:
            cgrad = {'cum_grad': grad.clone(), 'num_cums': self.init_updates + 1}
        self.cumgrads[index] = cgrad
        return cgrad

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]['cum_grad'] = 0

    def _step(self, indices, weights, grads, states, lrs, wds):
        clip = self._clip()
        for pos, index in enumerate(indices):
            cgrad = self._cumulate_gradient(grads[pos], index)
            if cgrad['num_cums'] % self.batch_scale != 0:
                continue
            weight, grad, wd = weights[pos], cgrad['cum_grad'] / self.batch_scale, wds[pos]
            if self.warmup_strategy == 'lars':
                mult = self._get_lars(weight, grad, wd)
            else:
                mult = self._get_lbmult(cgrad['num_cums'])
            lr = lrs[pos] * mult
            if states[pos] is not None and self.momentum > 0:
                K.sgd_mom_([weight], [grad], [states[pos]], [lr], [wd], self.momentum, self.rescale_grad, clip)
            else:
                K.sgd_([weight], [grad], [lr], [wd], self.rescale_grad, clip)
            self._reset_cum_gradient(index)


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al. 2016).

    ``step = -lr * (g + wd * w + lamda * g * g * (w - w_prev))``, accumulated into a
    momentum buffer when ``momentum`` > 0; ``w_prev = w; w += step``.

    Parameters
    ----------
    momentum : float
    lamda : float
        Delay compensation strength.

    Example
    -------
    >>> opt = mx.optimizer.DCASGD(learning_rate=0.1, momentum=0.9)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.9 1.2]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        return (_zeros_like(weight) if self.momentum != 0.0 else None, weight.copy())

    def _step(self, indices, weights, grads, states, lrs, wds):
        moms = [s[0] for s in states] if states[0][0] is not None else None
        K.dcasgd_(weights, grads, moms, [s[1] for s in states], lrs, wds, self.momentum, self.lamda,
                  self.rescale_grad, self._clip())


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: half a gradient step plus Gaussian noise of variance ``lr``.

    Example
    -------
    >>> mx.random.seed(0)
    >>> opt = mx.optimizer.SGLD(learning_rate=0.01)
    >>> weight = mx.nd.ones(2)
    >>> opt.update(0, weight, mx.nd.array([1, -2]), None)     # w - lr/2 * g + N(0, lr) noise
    >>> weight.shape, weight.dtype
    ((2,), <class 'numpy.float32'>)
    """

    def _step(self, indices, weights, grads, states, lrs, wds):
        K.sgld_(weights, grads, lrs, wds, self.rescale_grad, self._clip())


@register
class ccSGD(SGD):      # noqa: N801  (MXNet's name)
    """Deprecated alias of :class:`SGD`.

    Example
    -------
    >>> opt = mx.optimizer.ccSGD(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.9 1.2]
    <NDArray 2 @cpu(0)>
    """
