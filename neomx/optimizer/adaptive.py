"""Optimizers with per-coordinate adaptive steps: Adam, AdamW, Adamax, Nadam, LAMB, AdaGrad,
AdaDelta, RMSProp, Ftrl, FTML."""
import math

from .._torch_private import foreach
from ..ndarray.ndarray import zeros
from ..operator import optimizer_ops as K
from .optimizer import Optimizer, register

__all__ = ['Adam', 'AdamW', 'Adamax', 'Nadam', 'LAMB', 'AdaGrad', 'AdaDelta', 'RMSProp', 'Ftrl', 'FTML']


def _zero_states(weight, count):
    """``count`` zero arrays shaped like ``weight`` (same dtype and context)."""
    return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype) for _ in range(count))


def _columns(states, count):
    """Transpose per-weight state tuples into ``count`` lists of tensors."""
    return [[s[k] for s in states] for k in range(count)]


class _MomentsOptimizer(Optimizer):
    """Optimizers keeping first and second moment estimates (``beta1``, ``beta2``)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return _zero_states(weight, 2)


@register
class Adam(_MomentsOptimizer):
    """Adam (Kingma & Ba 2014).

    ``g = clip(rescale_grad * grad + wd * w)``; ``m``, ``v`` moving averages of ``g``, ``g**2``;
    ``w -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)``.

    Parameters
    ----------
    beta1, beta2 : float
        Decay rates of the moment estimates.
    epsilon : float
    lazy_update : bool
        Sparse-only in MXNet; neomx's gradients are dense.

    Example
    -------
    >>> update = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.1))
    >>> weight = mx.nd.ones(2)
    >>> update(0, mx.nd.array([1, -4]), weight)   # the first step moves each weight by about lr
    >>> weight
    <BLANKLINE>
    [0.90000004 1.1       ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, lazy_update=True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def _bias_corrected(self, indices, lrs):
        return [lr * math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
                for lr, t in zip(lrs, self._counts(indices))]

    def _step(self, indices, weights, grads, states, lrs, wds):
        means, variances = _columns(states, 2)
        K.adam_(weights, grads, means, variances, self._bias_corrected(indices, lrs), wds, self.beta1,
                self.beta2, self.epsilon, self.rescale_grad, self._clip())


@register
class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019), as in MXNet 2.

    ``w -= lr_t * m / (sqrt(v) + epsilon) + lr * wd * w``, with ``lr_t`` the bias-corrected
    rate when ``correct_bias``. (MXNet 1.9.1 has only the ``adamw_update`` operator.)

    Example
    -------
    >>> opt = mx.optimizer.AdamW(learning_rate=0.1, wd=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))  # Adam step, then - lr * wd * w
    >>> weight
    <BLANKLINE>
    [0.89000005 1.09      ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, correct_bias=True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, epsilon, **kwargs)
        self.correct_bias = correct_bias

    def _step(self, indices, weights, grads, states, lrs, wds):
        means, variances = _columns(states, 2)
        factors = (self._bias_corrected(indices, [1.0] * len(lrs)) if self.correct_bias
                   else [1.0] * len(lrs))
        K.adamw_(weights, grads, means, variances, factors, wds, lrs, self.beta1, self.beta2, self.epsilon,
                 self.rescale_grad, self._clip())


@register
class Adamax(_MomentsOptimizer):
    """AdaMax, Adam with the infinity norm (Kingma & Ba, section 7).

    ``u = max(beta2 * u, |g|)``; ``w -= lr / (1 - beta1**t) * m / u``.

    Example
    -------
    >>> opt = mx.optimizer.Adamax(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.9 1.1]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)

    def _step(self, indices, weights, grads, states, lrs, wds):
        means, norms = _columns(states, 2)
        lrs = [lr / (1. - self.beta1 ** t) for lr, t in zip(lrs, self._counts(indices))]
        K.adamax_(weights, grads, means, norms, lrs, wds, self.beta1, self.beta2, self.rescale_grad,
                  self._clip())


@register
class Nadam(_MomentsOptimizer):
    """Nesterov Adam (Dozat 2016) with the momentum schedule ``beta1 * (1 - 0.5 * 0.96**(t * schedule_decay))``.

    As in MXNet, the running product of the schedule (``m_schedule``) is shared by all
    parameters: it advances once per parameter update.

    Example
    -------
    >>> opt = mx.optimizer.Nadam(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.8943548 1.1056452]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, schedule_decay=0.004,
                 **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def _momentum_at(self, t):
        return self.beta1 * (1. - 0.5 * pow(0.96, t * self.schedule_decay))

    def _schedules(self, indices):
        """Per update, in order: (mu_t, mu_t+1, m_schedule, next m_schedule, t)."""
        out = []
        for t in self._counts(indices):
            mu_t, mu_next = self._momentum_at(t), self._momentum_at(t + 1)
            self.m_schedule *= mu_t
            out.append((mu_t, mu_next, self.m_schedule, self.m_schedule * mu_next, t))
        return out

    def _step(self, indices, weights, grads, states, lrs, wds):
        means, variances = _columns(states, 2)
        K.nadam_(weights, grads, means, variances, lrs, wds, self.beta1, self.beta2, self.epsilon,
                 self._schedules(indices), self.rescale_grad, self._clip())


@register
class LAMB(_MomentsOptimizer):
    """LAMB (You et al. 2019): an Adam direction scaled per layer by ``|w| / |direction|``.

    Parameters
    ----------
    lower_bound, upper_bound : float, optional
        Bounds applied to ``|w|`` in the trust ratio.
    bias_correction : bool

    Example
    -------
    >>> opt = mx.optimizer.LAMB(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.90000004 1.1       ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None,
                 upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def _step(self, indices, weights, grads, states, lrs, wds):
        means, variances = _columns(states, 2)
        directions = K.lamb_phase1(weights, grads, means, variances, wds, self._counts(indices), self.beta1,
                                   self.beta2, self.epsilon, self.bias_correction, self.rescale_grad,
                                   self._clip())
        K.lamb_phase2_(weights, directions, foreach.norm(weights), foreach.norm(directions), lrs,
                       self.lower_bound or -1.0, self.upper_bound or -1.0)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al. 2011): ``h += g**2; w -= lr * (g / sqrt(h + eps) + wd * w)``.

    Parameters
    ----------
    eps : float
        Added inside the square root for stability.

    Example
    -------
    >>> opt = mx.optimizer.AdaGrad(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))  # the first step is about lr * sign(g)
    >>> weight
    <BLANKLINE>
    [0.9 1.1]
    <NDArray 2 @cpu(0)>
    """

    _LAZY_FOR_ROW_SPARSE = True    # MXNet's sparse kernel updates only the rows held

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return _zero_states(weight, 1)[0]

    def _step(self, indices, weights, grads, states, lrs, wds):
        K.adagrad_(weights, grads, list(states), lrs, wds, self.float_stable_eps, self.rescale_grad,
                   self._clip())


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler 2012); it has no learning rate.

    Parameters
    ----------
    rho : float
        Decay rate of both accumulators.
    epsilon : float

    Example
    -------
    >>> opt = mx.optimizer.AdaDelta(rho=0.9, epsilon=1e-5)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.9900005 1.0099999]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zero_states(weight, 2)

    def _step(self, indices, weights, grads, states, lrs, wds):
        acc_g, acc_delta = _columns(states, 2)
        K.adadelta_(weights, grads, acc_g, acc_delta, wds, self.rho, self.epsilon, self.rescale_grad,
                    self._clip())


@register
class RMSProp(Optimizer):
    """RMSProp; ``centered=True`` is Graves' variant with a momentum term.

    Plain: ``n = gamma1 * n + (1 - gamma1) * g**2; w -= lr * g / sqrt(n + epsilon)``.
    Centered: also ``gbar`` (mean of ``g``) and ``delta = gamma2 * delta - lr * g / sqrt(n - gbar**2 + epsilon)``.

    Parameters
    ----------
    gamma1, gamma2 : float
        Decay of the moving averages; momentum of the centered variant.
    epsilon : float
    centered : bool
    clip_weights : float, optional
        Clip the weights to ``[-clip_weights, clip_weights]`` after each step.

    Example
    -------
    >>> opt = mx.optimizer.RMSProp(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.68377227 1.3162278 ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        return _zero_states(weight, 3 if self.centered else 1)

    def _step(self, indices, weights, grads, states, lrs, wds):
        clip_weights = float(self.clip_weights) if self.clip_weights else -1.0
        if self.centered:
            ns, gs, deltas = _columns(states, 3)
            K.rmspropalex_(weights, grads, ns, gs, deltas, lrs, wds, self.gamma1, self.gamma2, self.epsilon,
                           self.rescale_grad, self._clip(), clip_weights)
        else:
            K.rmsprop_(weights, grads, _columns(states, 1)[0], lrs, wds, self.gamma1, self.epsilon,
                       self.rescale_grad, self._clip(), clip_weights)


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al. 2013), for sparse linear models.

    Parameters
    ----------
    lamda1 : float
        L1 regularization strength.
    beta : float
        Smoothing of the per-coordinate rates.

    Example
    -------
    >>> opt = mx.optimizer.Ftrl(learning_rate=0.1, lamda1=0.01)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.4495 0.733 ]
    <NDArray 2 @cpu(0)>
    """

    _LAZY_FOR_ROW_SPARSE = True    # MXNet's sparse kernel updates only the rows held

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lr = learning_rate          # set after the base class: a scheduler's base_lr is kept
        self.lamda1 = lamda1
        self.beta = beta

    def create_state(self, index, weight):
        return _zero_states(weight, 2)

    def _step(self, indices, weights, grads, states, lrs, wds):
        zs, ns = _columns(states, 2)
        K.ftrl_(weights, grads, zs, ns, lrs, wds, self.lamda1, self.beta, self.rescale_grad, self._clip())


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok 2017).

    Parameters
    ----------
    beta1, beta2 : float
    epsilon : float

    Example
    -------
    >>> opt = mx.optimizer.FTML(learning_rate=0.1)
    >>> weight, grad = mx.nd.ones(2), mx.nd.array([1, -2])
    >>> opt.update(0, weight, grad, opt.create_state(0, weight))
    >>> weight
    <BLANKLINE>
    [0.9 1.1]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zero_states(weight, 3)

    def _step(self, indices, weights, grads, states, lrs, wds):
        ds, vs, zs = _columns(states, 3)
        K.ftml_(weights, grads, ds, vs, zs, lrs, wds, self._counts(indices), self.beta1, self.beta2, self.epsilon,
                self.rescale_grad, self._clip())
