"""Optimizer update operators (``mx.nd.sgd_update``, ``adam_update``...) and their kernels.

Every update rule is written once, as a *multi-tensor kernel*: a function that updates a
list of weights (and their states) in place with torch's multi-tensor ``_foreach_*``
family (through :mod:`neomx._torch_private`), so one call updates a whole model in a few
fused passes over memory. The kernels serve twice:

* ``mx.optimizer`` calls them with all the parameters of a step at once (its fused path),
  or with a list of one (``Optimizer.update``);
* the registered operators below expose them with MXNet's names and arguments. As in
  MXNet, an operator returns the new weight (write it back with ``out=weight``) and
  updates its state inputs (``mom``, ``mean``, ``var``, ``weight32``...) in place.

Conventions shared by all kernels: ``lrs``/``wds`` hold one float per tensor;
``rescale`` multiplies the raw gradient; ``clip`` < 0 means no clipping (MXNet's -1
default), otherwise gradients are clipped to ``[-clip, clip]``. Gradients given by the
caller are never modified. Where a rule is linear in the gradient, the rescale factor is
folded into a scalar instead of spending a pass over memory on it.
"""
import math
import torch

from .._torch_private import foreach, momentum_sgd_
from .dtype_rules import DTypeRule
from .registry import (register, check, variadic_name, FLOAT, FLOATS, INT, BOOL, SHAPE)

__all__ = ['sgd_', 'sgd_mom_', 'nag_mom_', 'adam_', 'adamw_', 'rmsprop_', 'rmspropalex_', 'ftrl_',
           'ftml_', 'signsgd_', 'signum_', 'lamb_phase1', 'lamb_phase2_', 'adagrad_', 'adadelta_',
           'adamax_', 'nadam_', 'dcasgd_', 'sgld_', 'add_scaled_', 'effective_grads']

# ----------------------------------------------------------------- helpers
def _grouped(keys):
    """``[(indices, key)]``: the positions of each distinct key, in first-seen order (one
    group, all positions, in the common case of a single key)."""
    keys = list(keys)
    if keys.count(keys[0]) == len(keys):
        return [(None, keys[0])]
    groups = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return [(idx, key) for key, idx in groups.items()]


def _pick(items, idx):
    return items if idx is None else [items[i] for i in idx]


def add_scaled_(ys, xs, alphas):
    """``ys[i] += alphas[i] * xs[i]`` in place, one foreach call per distinct alpha.

    Per-parameter learning rates are nearly always equal (or take a few values), so
    grouping by value keeps the update fused without a temporary ``alpha * x``.
    """
    for idx, alpha in _grouped(alphas):
        if alpha == 0:
            continue
        if idx is None:     # one alpha for all, the common case: no copies of the lists
            foreach.add_(ys, xs, alpha=alpha)
        else:
            foreach.add_(_pick(ys, idx), _pick(xs, idx), alpha=alpha)


def _scale_(ys, factors):
    """``ys[i] *= factors[i]`` in place, skipped where every factor is 1."""
    factors = list(factors)
    if factors.count(1) != len(factors):
        foreach.mul_(ys, factors)


def effective_grads(grads, rescale, clip, like, weights=None, wds=None, fold=False):
    """The gradients an update rule sees: ``clip(rescale * grad [+ wd * weight])``.

    Parameters
    ----------
    grads : list of Tensor
        Raw gradients (never modified).
    rescale : float
    clip : float
        Clip bound; negative means no clipping.
    like : list of Tensor
        Tensors whose dtype the result must have (float32 masters for float16 grads).
    weights, wds : list of Tensor, list of float, optional
        When given, ``wd * weight`` is added before clipping (Adam's, RMSProp's order).
    fold : bool
        If the caller is linear in the gradient and there is no clipping, leave the
        rescaling to it: the returned factor is then ``rescale`` instead of 1.

    Returns
    -------
    (list of Tensor, float)
        The gradients and the factor still to apply to them.
    """
    fresh = False
    g = grads
    if g[0].dtype != like[0].dtype:
        g = [x.to(w.dtype) for x, w in zip(g, like)]
        fresh = True
    with_wd = weights is not None and any(wd != 0 for wd in wds)
    if fold and clip < 0 and not with_wd:
        return g, rescale
    if rescale != 1:
        if fresh:
            foreach.mul_(g, rescale)
        else:
            g = foreach.mul(g, rescale)
            fresh = True
    if with_wd:
        if not fresh:
            g = [x.clone() for x in g]
            fresh = True
        add_scaled_(g, weights, wds)
    if clip >= 0:
        if not fresh:
            g = foreach.clamp_min(g, -clip)
        else:
            foreach.clamp_min_(g, -clip)
        foreach.clamp_max_(g, clip)
    return g, 1.0


def _denominator(vs, eps, eps_inside=False):
    """``sqrt(v) + eps`` (or ``sqrt(v + eps)``) as new tensors."""
    if eps_inside:
        d = foreach.add(vs, eps)
        foreach.sqrt_(d)
        return d
    d = foreach.sqrt(vs)
    foreach.add_(d, eps)
    return d


def _ema_(avgs, xs, decay):
    """``avg = decay * avg + (1 - decay) * x`` in place."""
    foreach.mul_(avgs, decay)
    foreach.add_(avgs, xs, alpha=1.0 - decay)


def _ema_sq_(avgs, xs, decay):
    """``avg = decay * avg + (1 - decay) * x * x`` in place."""
    foreach.mul_(avgs, decay)
    foreach.addcmul_(avgs, xs, xs, value=1.0 - decay)


def _weight_decay_(weights, lrs, wds):
    """``w *= 1 - lr * wd`` (decoupled weight decay); nothing to do without decay."""
    if any(wds):
        _scale_(weights, [1.0 - lr * wd for lr, wd in zip(lrs, wds)])


# ------------------------------------------------------------------ kernels
def sgd_(weights, grads, lrs, wds, rescale=1.0, clip=-1.0):
    """SGD: ``w = (1 - lr * wd) * w - lr * g``."""
    g, f = effective_grads(grads, rescale, clip, weights, fold=True)
    _weight_decay_(weights, lrs, wds)
    add_scaled_(weights, g, [-lr * f for lr in lrs])


def sgd_mom_(weights, grads, moms, lrs, wds, momentum, rescale=1.0, clip=-1.0):
    """SGD with momentum: ``mom = momentum * mom - lr * wd * w - lr * g; w += mom``.

    One fused pass per distinct (lr, wd): ``-lr * (f * g + wd * w)`` is written
    ``-lr * f * (g + wd / f * w)`` with the rescale factor ``f`` still to apply."""
    g, f = effective_grads(grads, rescale, clip, weights, fold=True)
    for idx, (lr, wd) in _grouped(zip(lrs, wds)):
        ws, ms = _pick(weights, idx), _pick(moms, idx)
        if f == 0:                  # the gradients count for nothing: the decay alone
            momentum_sgd_(ws, ws, ms, momentum, -lr * wd, 0.0)
        else:
            momentum_sgd_(ws, _pick(g, idx), ms, momentum, -lr * f, wd / f)


def nag_mom_(weights, grads, moms, lrs, wds, momentum, rescale=1.0, clip=-1.0):
    """Nesterov momentum, as MXNet 1.9.1 computes it in place.

    ``step = -lr * (g + wd * w)``; ``w += momentum * (momentum * mom + step) + step``; then
    ``mom = momentum * mom - lr * (g + wd * w)`` with the *updated* ``w`` (MXNet's kernel
    writes the weight before it reads it again for the momentum).
    """
    g, _ = effective_grads(grads, rescale, clip, weights)
    step = foreach.mul(g, [-lr for lr in lrs])
    decays = [-lr * wd for lr, wd in zip(lrs, wds)]
    full_step = step
    if any(d != 0 for d in decays):
        full_step = [s.clone() for s in step]
        add_scaled_(full_step, weights, decays)
    lookahead = foreach.mul(moms, momentum)
    foreach.add_(lookahead, full_step)
    foreach.add_(weights, lookahead, alpha=momentum)
    foreach.add_(weights, full_step)
    foreach.mul_(moms, momentum)
    foreach.add_(moms, step)
    add_scaled_(moms, weights, decays)


def adam_(weights, grads, means, variances, lrs, wds, beta1, beta2, epsilon, rescale=1.0, clip=-1.0):
    """Adam step (bias correction is the caller's, folded into ``lrs``).

    ``g = clip(rescale * grad + wd * w)``; ``m``, ``v`` moving averages of ``g``, ``g**2``;
    ``w -= lr * m / (sqrt(v) + eps)``.
    """
    g, _ = effective_grads(grads, rescale, clip, weights, weights, wds)
    _ema_(means, g, beta1)
    _ema_sq_(variances, g, beta2)
    foreach.addcdiv_(weights, means, _denominator(variances, epsilon), [-lr for lr in lrs])


def adamw_(weights, grads, means, variances, lrs, wds, etas, beta1, beta2, epsilon, rescale=1.0,
           clip=-1.0):
    """AdamW (decoupled weight decay): ``w -= eta * (lr * m / (sqrt(v) + eps) + wd * w)``."""
    g, _ = effective_grads(grads, rescale, clip, weights)
    _ema_(means, g, beta1)
    _ema_sq_(variances, g, beta2)
    _weight_decay_(weights, etas, wds)
    foreach.addcdiv_(weights, means, _denominator(variances, epsilon),
                          [-eta * lr for eta, lr in zip(etas, lrs)])


def _clip_weights_(weights, bound):
    if bound >= 0:
        foreach.clamp_min_(weights, -bound)
        foreach.clamp_max_(weights, bound)


def rmsprop_(weights, grads, ns, lrs, wds, gamma1, epsilon, rescale=1.0, clip=-1.0, clip_weights=-1.0):
    """RMSProp (Tieleman & Hinton): ``n = gamma1 * n + (1 - gamma1) * g**2; w -= lr * g / sqrt(n + eps)``."""
    g, _ = effective_grads(grads, rescale, clip, weights, weights, wds)
    _ema_sq_(ns, g, gamma1)
    foreach.addcdiv_(weights, g, _denominator(ns, epsilon, eps_inside=True), [-lr for lr in lrs])
    _clip_weights_(weights, clip_weights)


def rmspropalex_(weights, grads, ns, gs, deltas, lrs, wds, gamma1, gamma2, epsilon, rescale=1.0, clip=-1.0,
                 clip_weights=-1.0):
    """Centered RMSProp (Graves 2013).

    ``n``, ``gbar`` moving averages of ``g**2`` and ``g`` (decay ``gamma1``);
    ``delta = gamma2 * delta - lr * g / sqrt(n - gbar**2 + eps)``; ``w += delta``.
    """
    g, _ = effective_grads(grads, rescale, clip, weights, weights, wds)
    _ema_sq_(ns, g, gamma1)
    _ema_(gs, g, gamma1)
    var = foreach.addcmul(ns, gs, gs, value=-1.0)
    foreach.add_(var, epsilon)
    foreach.sqrt_(var)
    foreach.mul_(deltas, gamma2)
    foreach.addcdiv_(deltas, g, var, [-lr for lr in lrs])
    foreach.add_(weights, deltas)
    _clip_weights_(weights, clip_weights)


def ftrl_(weights, grads, zs, ns, lrs, wds, lamda1, beta, rescale=1.0, clip=-1.0):
    """FTRL-Proximal (McMahan et al. 2013).

    ``z += g - (sqrt(n + g**2) - sqrt(n)) * w / lr``; ``n += g**2``;
    ``w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where ``|z| > lamda1``, else 0.
    """
    g, _ = effective_grads(grads, rescale, clip, weights)
    old_sqrt_n = foreach.sqrt(ns)
    foreach.addcmul_(ns, g, g)
    sigma = foreach.sqrt(ns)
    foreach.sub_(sigma, old_sqrt_n)
    foreach.mul_(sigma, weights)
    foreach.add_(zs, g)
    foreach.mul_(sigma, [1.0 / lr for lr in lrs])
    foreach.sub_(zs, sigma)
    for w, z, n, lr, wd in zip(weights, zs, ns, lrs, wds):
        shrunk = torch.sign(z) * lamda1 - z
        denom = (beta + n.sqrt()) / lr + wd
        w.copy_(torch.where(z.abs() > lamda1, shrunk / denom, torch.zeros_like(z)))


def ftml_(weights, grads, ds, vs, zs, lrs, wds, ts, beta1, beta2, epsilon, rescale=1.0, clip=-1.0):
    """FTML (Zheng & Kwok 2017), with per-tensor step counts ``ts``.

    ``v`` moving average of ``g**2``; ``d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + eps)``;
    ``z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w``; ``d = d_t``; ``w = -z / d_t``.
    """
    g, _ = effective_grads(grads, rescale, clip, weights, weights, wds)
    _ema_sq_(vs, g, beta2)
    d_new = foreach.mul(vs, [1.0 / (1.0 - beta2 ** t) for t in ts])
    foreach.sqrt_(d_new)
    foreach.add_(d_new, epsilon)
    foreach.mul_(d_new, [(1.0 - beta1 ** t) / lr for t, lr in zip(ts, lrs)])
    sigma = foreach.mul(ds, -beta1)
    foreach.add_(sigma, d_new)
    foreach.mul_(zs, beta1)
    foreach.add_(zs, g, alpha=1.0 - beta1)
    foreach.addcmul_(zs, sigma, weights, value=-1.0)
    foreach.copy_(ds, d_new)
    new_weights = foreach.div(zs, d_new)
    foreach.neg_(new_weights)
    foreach.copy_(weights, new_weights)


def signsgd_(weights, grads, lrs, wds, rescale=1.0, clip=-1.0):
    """signSGD: ``w = (1 - lr * wd) * w - lr * sign(g)`` (rescaling and clipping cannot change a sign)."""
    signs = foreach.sign(grads)
    _weight_decay_(weights, lrs, wds)
    add_scaled_(weights, signs, [-lr for lr in lrs])


def signum_(weights, grads, moms, lrs, wds, momentum, wd_lh=0.0, rescale=1.0, clip=-1.0):
    """Signum (Bernstein et al. 2018).

    ``mom = momentum * mom - (1 - momentum) * (g + wd * w)``;
    ``w = (1 - lr * wd_lh) * w + lr * sign(mom)``.
    """
    g, f = effective_grads(grads, rescale, clip, weights, fold=True)
    foreach.mul_(moms, momentum)
    if any(wd != 0 for wd in wds):
        add_scaled_(moms, weights, [-(1.0 - momentum) * wd for wd in wds])
    foreach.add_(moms, g, alpha=-(1.0 - momentum) * f)
    _weight_decay_(weights, lrs, [wd_lh] * len(lrs))
    add_scaled_(weights, foreach.sign(moms), list(lrs))


def lamb_phase1(weights, grads, means, variances, wds, ts, beta1, beta2, epsilon, bias_correction=True,
                rescale=1.0, clip=-1.0):
    """LAMB's first phase (You et al. 2019): the Adam direction plus weight decay, as new tensors.

    ``m``, ``v`` moving averages of ``g``, ``g**2``; returns
    ``m_hat / (sqrt(v_hat) + eps) + wd * w`` (``m_hat = m / (1 - beta1**t)`` with bias correction).
    """
    g, _ = effective_grads(grads, rescale, clip, weights)
    _ema_(means, g, beta1)
    _ema_sq_(variances, g, beta2)
    if bias_correction:
        m_hat = foreach.mul(means, [1.0 / (1.0 - beta1 ** t) for t in ts])
        v_hat = foreach.mul(variances, [1.0 / (1.0 - beta2 ** t) for t in ts])
        foreach.sqrt_(v_hat)
    else:
        m_hat = [m.clone() for m in means]
        v_hat = foreach.sqrt(variances)
    foreach.add_(v_hat, epsilon)
    foreach.div_(m_hat, v_hat)
    add_scaled_(m_hat, weights, list(wds))
    return m_hat


def lamb_phase2_(weights, directions, r1s, r2s, lrs, lower_bound=-1.0, upper_bound=-1.0):
    """LAMB's second phase: ``w -= lr * ratio * direction``, ``ratio = r1 / r2`` (1 if either is 0).

    ``r1``/``r2`` are the norms of the weight and of the direction (tensors, so no host sync);
    ``r1`` is first clamped to ``[lower_bound, upper_bound]`` where those are >= 0.
    """
    for w, d, r1, r2, lr in zip(weights, directions, r1s, r2s, lrs):
        if lower_bound >= 0:
            r1 = r1.clamp_min(lower_bound)
        if upper_bound >= 0:
            r1 = r1.clamp_max(upper_bound)
        ratio = torch.where((r1 > 0) & (r2 > 0), r1 / r2, torch.ones_like(r1))
        w.sub_(d * (ratio * lr).to(w.dtype))


def adagrad_(weights, grads, histories, lrs, wds, epsilon, rescale=1.0, clip=-1.0):
    """AdaGrad: ``h += g**2; w -= lr * (g / sqrt(h + eps) + wd * w)``."""
    g, _ = effective_grads(grads, rescale, clip, weights)
    foreach.addcmul_(histories, g, g)
    _weight_decay_(weights, lrs, wds)
    foreach.addcdiv_(weights, g, _denominator(histories, epsilon, eps_inside=True), [-lr for lr in lrs])


def adadelta_(weights, grads, acc_gs, acc_deltas, wds, rho, epsilon, rescale=1.0, clip=-1.0):
    """AdaDelta (Zeiler 2012), which has no learning rate.

    ``acc_g`` moving average of ``g**2``; ``delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g``;
    ``acc_delta`` moving average of ``delta**2``; ``w -= delta + wd * w``.
    """
    g, _ = effective_grads(grads, rescale, clip, weights)
    _ema_sq_(acc_gs, g, rho)
    delta = _denominator(acc_deltas, epsilon, eps_inside=True)
    foreach.div_(delta, _denominator(acc_gs, epsilon, eps_inside=True))
    foreach.mul_(delta, g)
    _ema_sq_(acc_deltas, delta, rho)
    _weight_decay_(weights, [1.0] * len(wds), wds)
    foreach.sub_(weights, delta)


def adamax_(weights, grads, means, norms, lrs, wds, beta1, beta2, rescale=1.0, clip=-1.0):
    """AdaMax (Kingma & Ba, sec. 7): ``u = max(beta2 * u, |g|); w -= lr * m / u`` (bias correction in ``lrs``)."""
    g, _ = effective_grads(grads, rescale, clip, weights, weights, wds)
    _ema_(means, g, beta1)
    foreach.mul_(norms, beta2)
    foreach.maximum_(norms, foreach.abs(g))
    foreach.addcdiv_(weights, means, norms, [-lr for lr in lrs])


def nadam_(weights, grads, means, variances, lrs, wds, beta1, beta2, epsilon, schedules, rescale=1.0,
           clip=-1.0):
    """Nadam (Dozat 2016); ``schedules`` holds per tensor ``(mu_t, mu_t1, m_schedule, m_schedule_next, t)``.

    ``w -= lr * ((1 - mu_t) * g / (1 - m_schedule) + mu_t1 * m / (1 - m_schedule_next))
    / (sqrt(v / (1 - beta2**t)) + eps)``.
    """
    g, _ = effective_grads(grads, rescale, clip, weights, weights, wds)
    _ema_(means, g, beta1)
    _ema_sq_(variances, g, beta2)
    step = foreach.mul(g, [(1.0 - mu_t) / (1.0 - sched) for mu_t, _, sched, _, _ in schedules])
    foreach.add_(step, foreach.mul(means, [mu_t1 / (1.0 - nxt) for _, mu_t1, _, nxt, _ in schedules]))
    denom = foreach.mul(variances, [1.0 / (1.0 - beta2 ** t) for *_, t in schedules])
    foreach.sqrt_(denom)
    foreach.add_(denom, epsilon)
    foreach.addcdiv_(weights, step, denom, [-lr for lr in lrs])


def dcasgd_(weights, grads, moms, previous, lrs, wds, momentum, lamda, rescale=1.0, clip=-1.0):
    """Delay-compensated SGD (Zheng et al. 2016).

    ``step = -lr * (g + wd * w + lamda * g * g * (w - w_prev))``; with momentum
    ``mom = momentum * mom + step`` and the step is ``mom``; ``w_prev = w``; ``w += step``.
    ``moms`` is None without momentum.
    """
    g, _ = effective_grads(grads, rescale, clip, weights)
    step = foreach.sub(weights, previous)
    foreach.mul_(step, g)
    foreach.mul_(step, g)
    foreach.mul_(step, lamda)
    foreach.add_(step, g)
    add_scaled_(step, weights, list(wds))
    foreach.mul_(step, [-lr for lr in lrs])
    if moms is not None:
        foreach.mul_(moms, momentum)
        foreach.add_(moms, step)
        step = moms
    foreach.copy_(previous, weights)
    foreach.add_(weights, step)


def sgld_(weights, grads, lrs, wds, rescale=1.0, clip=-1.0):
    """Stochastic Gradient Langevin Dynamics: ``w += -lr / 2 * (g + wd * w) + N(0, sqrt(lr))``."""
    g, f = effective_grads(grads, rescale, clip, weights, fold=True)
    _weight_decay_(weights, [lr / 2 for lr in lrs], wds)
    add_scaled_(weights, g, [-lr / 2 * f for lr in lrs])
    for w, lr in zip(weights, lrs):
        w.add_(torch.randn_like(w), alpha=lr ** 0.5)


# ---------------------------------------------------------------- operators
# MXNet's common trailing attributes of the single-tensor update operators.
_RESCALE_CLIP = [('rescale_grad', FLOAT, 1.0), ('clip_gradient', FLOAT, -1.0)]
_LAZY = [('lazy_update', BOOL, True)]


def _weight_attrs(*middle):
    return [('lr', FLOAT)] + list(middle) + [('wd', FLOAT, 0.0)] + _RESCALE_CLIP


def _float32_states(*states, float32_inputs=()):
    """``register`` arguments of a mixed-precision update: its ``states`` (the master weight,
    momentum or moments) are float32 auxiliary states; ``float32_inputs`` are float32 too."""
    return {'aux': states, 'dtypes': DTypeRule(fixed=dict.fromkeys(states + float32_inputs, 'float32'))}


@register('sgd_update', inputs=('weight', 'grad'), attrs=_weight_attrs() + _LAZY)
def sgd_update(weight, grad, lr, wd, rescale_grad, clip_gradient, lazy_update):
    """SGD step: ``weight - lr * (clip(rescale_grad * grad) + wd * weight)``; with a row_sparse
    gradient and ``lazy_update`` only its rows change (see :mod:`.storage`)."""
    w = weight.clone()
    sgd_([w], [grad], [lr], [wd], rescale_grad, clip_gradient)
    return w


@register('sgd_mom_update', inputs=('weight', 'grad', 'mom'), aux=('mom',),
          attrs=_weight_attrs(('momentum', FLOAT, 0.0)) + _LAZY)
def sgd_mom_update(weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update):
    """Momentum SGD step; ``mom`` is updated in place, the new weight is returned."""
    w = weight.clone()
    sgd_mom_([w], [grad], [mom], [lr], [wd], momentum, rescale_grad, clip_gradient)
    return w


@register('mp_sgd_update', shares_input=True, inputs=('weight', 'grad', 'weight32'), attrs=_weight_attrs() + _LAZY,
          **_float32_states('weight32'))
def mp_sgd_update(weight, grad, weight32, lr, wd, rescale_grad, clip_gradient, lazy_update):
    """Mixed-precision SGD: the float32 master ``weight32`` is updated in place and returned
    cast to ``weight``'s dtype."""
    sgd_([weight32], [grad], [lr], [wd], rescale_grad, clip_gradient)
    return weight32.to(weight.dtype)


@register('mp_sgd_mom_update', shares_input=True, inputs=('weight', 'grad', 'mom', 'weight32'),
          attrs=_weight_attrs(('momentum', FLOAT, 0.0)) + _LAZY, **_float32_states('mom', 'weight32'))
def mp_sgd_mom_update(weight, grad, mom, weight32, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update):
    """Mixed-precision momentum SGD (``mom`` and ``weight32`` float32, updated in place)."""
    sgd_mom_([weight32], [grad], [mom], [lr], [wd], momentum, rescale_grad, clip_gradient)
    return weight32.to(weight.dtype)


@register('nag_mom_update', inputs=('weight', 'grad', 'mom'), aux=('mom',),
          attrs=_weight_attrs(('momentum', FLOAT, 0.0)))
def nag_mom_update(weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient):
    """Nesterov momentum step; ``mom`` is updated in place."""
    w = weight.clone()
    nag_mom_([w], [grad], [mom], [lr], [wd], momentum, rescale_grad, clip_gradient)
    return w


@register('mp_nag_mom_update', shares_input=True, inputs=('weight', 'grad', 'mom', 'weight32'),
          attrs=_weight_attrs(('momentum', FLOAT, 0.0)), **_float32_states('mom', 'weight32'))
def mp_nag_mom_update(weight, grad, mom, weight32, lr, momentum, wd, rescale_grad, clip_gradient):
    """Mixed-precision Nesterov momentum step (``weight32`` updated in place)."""
    nag_mom_([weight32], [grad], [mom], [lr], [wd], momentum, rescale_grad, clip_gradient)
    return weight32.to(weight.dtype)


# ---- multi-tensor SGD: inputs are (weight, grad[, mom][, weight32]) repeated num_weights times;
# the ``preloaded_`` forms take the learning rates and weight decays as two last arrays.
def _multi_sgd(group, momentum_kernel, master, preloaded):
    """The impl of one ``[preloaded_]multi_*sgd*_update`` operator; ``group`` inputs per weight."""
    def impl(*arrays, lrs=None, wds=None, momentum=0.0, rescale_grad, clip_gradient, num_weights):
        name = impl.spec.name
        expected = group * num_weights + (2 if preloaded else 0)
        check(len(arrays) == expected, name, 'expects %d inputs (%d per weight, num_weights=%d%s), got %d',
              expected, group, num_weights, ', then lrs and wds' if preloaded else '', len(arrays))
        if preloaded:
            lrs, wds = arrays[-2].tolist(), arrays[-1].tolist()
            arrays = arrays[:-2]
        check(len(lrs) == num_weights and len(wds) == num_weights, name,
              'lrs and wds need num_weights=%d values, got %d and %d', num_weights, len(lrs), len(wds))
        cols = [list(arrays[i::group]) for i in range(group)]
        weights, grads = cols[0], cols[1]
        targets = cols[-1] if master else [w.clone() for w in weights]
        if momentum_kernel:
            sgd_mom_(targets, grads, cols[2], list(lrs), list(wds), momentum, rescale_grad, clip_gradient)
        else:
            sgd_(targets, grads, list(lrs), list(wds), rescale_grad, clip_gradient)
        if master:
            return tuple(t.to(w.dtype) for t, w in zip(targets, weights))
        return tuple(targets)
    return impl


def _register_multi_sgd(name, group, momentum, master, preloaded=False):
    attrs = [] if preloaded else [('lrs', FLOATS), ('wds', FLOATS)]
    if momentum:
        attrs.append(('momentum', FLOAT, 0.0))
    attrs += _RESCALE_CLIP + [('num_weights', INT, 1)]
    impl = _multi_sgd(group, momentum, master, preloaded)
    impl.__doc__ = ('Updates num_weights weights at once (inputs: weight, grad%s%s per weight%s) with %sSGD; '
                    'returns the new weights.' % (', mom' if momentum else '', ', weight32' if master else '',
                                                  ', then arrays of the learning rates and weight decays'
                                                  if preloaded else '', 'momentum ' if momentum else ''))
    # Per weight, the inputs after (weight, grad) are states: mom and/or the float32 master weight.
    def states(attrs):
        return tuple(variadic_name(group * k + i) for k in range(attrs['num_weights']) for i in range(2, group))

    def master_states(attrs):
        return dict.fromkeys(states(attrs), 'float32') if master else {}
    register(name, shares_input=master, variadic='num_weights', num_outputs=lambda a: a['num_weights'], attrs=attrs, aux=states,
             dtypes=DTypeRule(fixed=master_states),
             num_inputs=lambda a: group * a['num_weights'] + (2 if preloaded else 0))(impl)


for _preloaded in (False, True):
    _prefix = 'preloaded_' if _preloaded else ''
    _register_multi_sgd(_prefix + 'multi_sgd_update', 2, False, False, _preloaded)
    _register_multi_sgd(_prefix + 'multi_sgd_mom_update', 3, True, False, _preloaded)
    _register_multi_sgd(_prefix + 'multi_mp_sgd_update', 3, False, True, _preloaded)
    _register_multi_sgd(_prefix + 'multi_mp_sgd_mom_update', 4, True, True, _preloaded)


@register('multi_lars', inputs=('lrs', 'weights_sum_sq', 'grads_sum_sq', 'wds'),
          attrs=[('eta', FLOAT), ('eps', FLOAT), ('rescale_grad', FLOAT, 1.0)])
def multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps, rescale_grad):
    """LARS learning rates: ``lr * eta * |w| / (|g| + wd * |w| + eps)`` per weight from the sums
    of squares of its weights and (rescaled) gradients; ``lr`` itself where either norm is 0."""
    weight_norm = weights_sum_sq.sqrt()
    grad_norm = grads_sum_sq.sqrt() * rescale_grad
    scaled = lrs * eta * weight_norm / (grad_norm + wds * weight_norm + eps)
    return torch.where((weight_norm > 0) & (grad_norm > 0), scaled, lrs)


@register('adam_update', inputs=('weight', 'grad', 'mean', 'var'), aux=('mean', 'var'),
          attrs=[('lr', FLOAT), ('beta1', FLOAT, 0.9), ('beta2', FLOAT, 0.999), ('epsilon', FLOAT, 1e-8),
                 ('wd', FLOAT, 0.0)] + _RESCALE_CLIP + _LAZY)
def adam_update(weight, grad, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient,
                lazy_update):
    """Adam step without bias correction (the optimizer folds it into ``lr``); ``mean``/``var`` in place."""
    w = weight.clone()
    adam_([w], [grad], [mean], [var], [lr], [wd], beta1, beta2, epsilon, rescale_grad, clip_gradient)
    return w


_ADAMW_ATTRS = [('lr', FLOAT), ('beta1', FLOAT, 0.9), ('beta2', FLOAT, 0.999), ('epsilon', FLOAT, 1e-8),
                ('wd', FLOAT, 0.0), ('eta', FLOAT), ('clip_gradient', FLOAT, -1.0)]


def _loss_scale(rescale_grad):
    """The AdamW kernels' rescale factor (a (1,) tensor: dynamic loss scaling), or None when the step
    is to be skipped: MXNet skips it for a zero, infinite or NaN scale (an overflowed float16 step)."""
    scale = float(rescale_grad.reshape(-1)[0])
    return scale if math.isfinite(scale) and scale != 0 else None


def _adamw(target, grad, mean, var, rescale_grad, lr, beta1, beta2, epsilon, wd, eta, clip_gradient):
    """AdamW on ``target`` unless the rescale factor says to skip the step (see _loss_scale)."""
    scale = _loss_scale(rescale_grad)
    if scale is not None:
        adamw_([target], [grad], [mean], [var], [lr], [wd], [eta], beta1, beta2, epsilon, scale, clip_gradient)


@register('_adamw_update', aliases=('_contrib_adamw_update',),
          inputs=('weight', 'grad', 'mean', 'var', 'rescale_grad'), attrs=_ADAMW_ATTRS, aux=('mean', 'var'),
          dtypes=DTypeRule(fixed={'rescale_grad': 'float32'}))
def adamw_update(weight, grad, mean, var, rescale_grad, lr, beta1, beta2, epsilon, wd, eta, clip_gradient):
    """AdamW step; skipped (weight returned unchanged) when ``rescale_grad`` is 0, inf or NaN."""
    w = weight.clone()
    _adamw(w, grad, mean, var, rescale_grad, lr, beta1, beta2, epsilon, wd, eta, clip_gradient)
    return w


@register('_mp_adamw_update', shares_input=True, aliases=('_contrib_mp_adamw_update',),
          inputs=('weight', 'grad', 'mean', 'var', 'weight32', 'rescale_grad'), attrs=_ADAMW_ATTRS,
          **_float32_states('mean', 'var', 'weight32', float32_inputs=('rescale_grad',)))
def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, beta1, beta2, epsilon, wd, eta,
                    clip_gradient):
    """Mixed-precision AdamW (``weight32`` updated in place)."""
    _adamw(weight32, grad, mean, var, rescale_grad, lr, beta1, beta2, epsilon, wd, eta, clip_gradient)
    return weight32.to(weight.dtype)


_CLIP_WEIGHTS = [('clip_weights', FLOAT, -1.0)]


@register('rmsprop_update', inputs=('weight', 'grad', 'n'), aux=('n',),
          attrs=[('lr', FLOAT), ('gamma1', FLOAT, 0.95), ('epsilon', FLOAT, 1e-8), ('wd', FLOAT, 0.0)]
          + _RESCALE_CLIP + _CLIP_WEIGHTS)
def rmsprop_update(weight, grad, n, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights):
    """RMSProp step; ``n`` updated in place."""
    w = weight.clone()
    rmsprop_([w], [grad], [n], [lr], [wd], gamma1, epsilon, rescale_grad, clip_gradient, clip_weights)
    return w


@register('rmspropalex_update', inputs=('weight', 'grad', 'n', 'g', 'delta'), aux=('n', 'g', 'delta'),
          attrs=[('lr', FLOAT), ('gamma1', FLOAT, 0.95), ('gamma2', FLOAT, 0.9), ('epsilon', FLOAT, 1e-8),
                 ('wd', FLOAT, 0.0)] + _RESCALE_CLIP + _CLIP_WEIGHTS)
def rmspropalex_update(weight, grad, n, g, delta, lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient,
                       clip_weights):
    """Centered RMSProp step; ``n``, ``g``, ``delta`` updated in place."""
    w = weight.clone()
    rmspropalex_([w], [grad], [n], [g], [delta], [lr], [wd], gamma1, gamma2, epsilon, rescale_grad,
                 clip_gradient, clip_weights)
    return w


@register('ftrl_update', inputs=('weight', 'grad', 'z', 'n'), aux=('z', 'n'),
          attrs=[('lr', FLOAT), ('lamda1', FLOAT, 0.01), ('beta', FLOAT, 1.0), ('wd', FLOAT, 0.0)]
          + _RESCALE_CLIP)
def ftrl_update(weight, grad, z, n, lr, lamda1, beta, wd, rescale_grad, clip_gradient):
    """FTRL step; ``z``, ``n`` updated in place."""
    w = weight.clone()
    ftrl_([w], [grad], [z], [n], [lr], [wd], lamda1, beta, rescale_grad, clip_gradient)
    return w


@register('ftml_update', inputs=('weight', 'grad', 'd', 'v', 'z'), aux=('d', 'v', 'z'),
          attrs=[('lr', FLOAT), ('beta1', FLOAT, 0.6), ('beta2', FLOAT, 0.999), ('epsilon', FLOAT, 1e-8),
                 ('t', INT), ('wd', FLOAT, 0.0), ('rescale_grad', FLOAT, 1.0), ('clip_grad', FLOAT, -1.0)])
def ftml_update(weight, grad, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad):
    """FTML step at step count ``t``; ``d``, ``v``, ``z`` updated in place."""
    w = weight.clone()
    ftml_([w], [grad], [d], [v], [z], [lr], [wd], [t], beta1, beta2, epsilon, rescale_grad, clip_grad)
    return w


@register('signsgd_update', inputs=('weight', 'grad'), attrs=_weight_attrs())
def signsgd_update(weight, grad, lr, wd, rescale_grad, clip_gradient):
    """signSGD step."""
    w = weight.clone()
    signsgd_([w], [grad], [lr], [wd], rescale_grad, clip_gradient)
    return w


@register('signum_update', inputs=('weight', 'grad', 'mom'), aux=('mom',),
          attrs=_weight_attrs(('momentum', FLOAT, 0.0)) + [('wd_lh', FLOAT, 0.0)])
def signum_update(weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh):
    """Signum step; ``mom`` updated in place."""
    w = weight.clone()
    signum_([w], [grad], [mom], [lr], [wd], momentum, wd_lh, rescale_grad, clip_gradient)
    return w


_LAMB1_ATTRS = [('beta1', FLOAT, 0.9), ('beta2', FLOAT, 0.999), ('epsilon', FLOAT, 1e-6), ('t', INT),
                ('bias_correction', BOOL, True), ('wd', FLOAT)] + _RESCALE_CLIP
_LAMB2_ATTRS = [('lr', FLOAT), ('lower_bound', FLOAT, -1.0), ('upper_bound', FLOAT, -1.0)]


@register('lamb_update_phase1', inputs=('weight', 'grad', 'mean', 'var'), attrs=_LAMB1_ATTRS, aux=('mean', 'var'))
def lamb_update_phase1(weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd, rescale_grad,
                       clip_gradient):
    """LAMB phase 1: returns the update direction; ``mean``/``var`` updated in place."""
    return lamb_phase1([weight], [grad], [mean], [var], [wd], [t], beta1, beta2, epsilon, bias_correction,
                       rescale_grad, clip_gradient)[0]


@register('mp_lamb_update_phase1', inputs=('weight', 'grad', 'mean', 'var', 'weight32'), attrs=_LAMB1_ATTRS,
          aux=('mean', 'var'), dtypes=DTypeRule(fixed=dict.fromkeys(('mean', 'var', 'weight32'), 'float32'),
                                                output='float32'))
def mp_lamb_update_phase1(weight, grad, mean, var, weight32, beta1, beta2, epsilon, t, bias_correction, wd,
                          rescale_grad, clip_gradient):
    """Mixed-precision LAMB phase 1 (float32 direction from the master weight)."""
    return lamb_phase1([weight32], [grad], [mean], [var], [wd], [t], beta1, beta2, epsilon, bias_correction,
                       rescale_grad, clip_gradient)[0]


@register('lamb_update_phase2', inputs=('weight', 'g', 'r1', 'r2'), attrs=_LAMB2_ATTRS)
def lamb_update_phase2(weight, g, r1, r2, lr, lower_bound, upper_bound):
    """LAMB phase 2: the trust-ratio step; ``r1``/``r2`` are the norms of weight and direction, shape (1,)."""
    w = weight.clone()
    lamb_phase2_([w], [g], [r1.reshape(())], [r2.reshape(())], [lr], lower_bound, upper_bound)
    return w


@register('mp_lamb_update_phase2', shares_input=True, inputs=('weight', 'g', 'r1', 'r2', 'weight32'), attrs=_LAMB2_ATTRS,
          aux=('weight32',), dtypes=DTypeRule(fixed=dict.fromkeys(('g', 'r1', 'r2', 'weight32'), 'float32')))
def mp_lamb_update_phase2(weight, g, r1, r2, weight32, lr, lower_bound, upper_bound):
    """Mixed-precision LAMB phase 2 (``weight32`` updated in place)."""
    lamb_phase2_([weight32], [g], [r1.reshape(())], [r2.reshape(())], [lr], lower_bound, upper_bound)
    return weight32.to(weight.dtype)


@register('_contrib_group_adagrad_update', inputs=('weight', 'grad', 'history'), aux=('history',),
          attrs=[('lr', FLOAT)] + _RESCALE_CLIP + [('epsilon', FLOAT, 1e-5)])
def group_adagrad_update(weight, grad, history, lr, rescale_grad, clip_gradient, epsilon):
    """Group AdaGrad step, one accumulated squared gradient per row (embedding tables):
    ``history += mean(g**2 over the row)``, ``weight - lr * g / sqrt(history + epsilon)``,
    with ``g = clip(rescale_grad * grad)``; ``history`` (rows, 1) is updated in place."""
    check(grad.shape == weight.shape and history.dim() >= 1 and history.shape[0] == weight.shape[0]
          and history.numel() == weight.shape[0], '_contrib_group_adagrad_update',
          'expected grad of the weight shape %s and a history of one value per row, got %s and %s',
          weight.shape, grad.shape, history.shape)
    g, _ = effective_grads([grad], rescale_grad, clip_gradient, [weight])
    g = g[0]
    history.add_(g.square().reshape(g.shape[0], -1).mean(1).reshape(history.shape))
    scale = (history.reshape((-1,) + (1,) * (g.dim() - 1)) + epsilon).sqrt()
    return weight - lr * g / scale


# ---- multi-tensor AdamW and LAMB (MXNet's contrib kernels): per weight (weight, grad, mean,
# var[, weight32]); the AdamW forms end with a rescale_grad array, as _adamw_update does.
def _multi_columns(name, arrays, group, count):
    check(len(arrays) == group * count, name, 'expects %d inputs (%d per weight, for %d weights), got %d',
          group * count, group, count, len(arrays))
    return [list(arrays[i::group]) for i in range(group)]


def _multi_states(group, count_attr):
    """The auxiliary inputs (mean, var and the float32 master weights) of every weight."""
    def states(attrs):
        return tuple(variadic_name(group * k + i) for k in range(attrs[count_attr]) for i in range(2, group))
    return states


def _register_multi_adamw(name, master):
    group = 5 if master else 4

    def impl(*arrays, lrs, beta1, beta2, epsilon, wds, etas, clip_gradient, num_weights):
        cols = _multi_columns(name, arrays[:-1], group, num_weights)
        check(len(lrs) == len(wds) == len(etas) == num_weights, name,
              'lrs, wds and etas need num_weights=%d values, got %d, %d and %d', num_weights, len(lrs),
              len(wds), len(etas))
        weights = cols[0]
        targets = cols[4] if master else [w.clone() for w in weights]
        scale = _loss_scale(arrays[-1])
        if scale is not None:
            adamw_(targets, cols[1], cols[2], cols[3], list(lrs), list(wds), list(etas), beta1, beta2, epsilon,
                   scale, clip_gradient)
        return tuple(t.to(w.dtype) for t, w in zip(targets, weights))
    impl.__doc__ = ('AdamW on num_weights weights at once (inputs: weight, grad, mean, var%s per weight, then '
                    'the rescale_grad array); returns the new weights.' % (', weight32' if master else ''))
    states = _multi_states(group, 'num_weights')
    register(name, shares_input=master, variadic='num_weights', num_outputs=lambda a: a['num_weights'],
             attrs=[('lrs', FLOATS), ('beta1', FLOAT, 0.9), ('beta2', FLOAT, 0.999), ('epsilon', FLOAT, 1e-8),
                    ('wds', FLOATS), ('etas', FLOATS), ('clip_gradient', FLOAT, -1.0), ('num_weights', INT, 1)],
             aux=states, dtypes=DTypeRule(fixed=lambda a: dict.fromkeys(states(a), 'float32') if master else {}),
             num_inputs=lambda a: group * a['num_weights'] + 1)(impl)


def _register_multi_lamb(name, master):
    group = 5 if master else 4

    def impl(*arrays, learning_rates, beta1, beta2, epsilon, wds, rescale_grad, lower_bound, upper_bound,
             clip_gradient, bias_correction, step_count, num_tensors):
        cols = _multi_columns(name, arrays, group, num_tensors)
        check(len(learning_rates) == len(wds) == len(step_count) == num_tensors, name,
              'learning_rates, wds and step_count need num_tensors=%d values, got %d, %d and %d', num_tensors,
              len(learning_rates), len(wds), len(step_count))
        weights = cols[0]
        targets = cols[4] if master else [w.clone() for w in weights]
        directions = lamb_phase1(targets, cols[1], cols[2], cols[3], list(wds), list(step_count), beta1, beta2,
                                 epsilon, bias_correction, rescale_grad, clip_gradient)
        r1s = [t.float().norm() for t in targets]
        r2s = [d.float().norm() for d in directions]
        # MXNet's multi_lamb sets no bound for values <= 0
        lamb_phase2_(targets, directions, r1s, r2s, list(learning_rates),
                     lower_bound if lower_bound > 0 else -1.0, upper_bound if upper_bound > 0 else -1.0)
        return tuple(t.to(w.dtype) for t, w in zip(targets, weights))
    impl.__doc__ = ('LAMB on num_tensors weights at once (inputs: weight, grad, mean, var%s per weight); '
                    'returns the new weights.' % (', weight32' if master else ''))
    states = _multi_states(group, 'num_tensors')
    register(name, shares_input=master, variadic='num_tensors', num_outputs=lambda a: a['num_tensors'],
             attrs=[('learning_rates', FLOATS), ('beta1', FLOAT, 0.9), ('beta2', FLOAT, 0.999),
                    ('epsilon', FLOAT, 1e-6), ('wds', FLOATS), ('rescale_grad', FLOAT, 1.0),
                    ('lower_bound', FLOAT, -1.0), ('upper_bound', FLOAT, -1.0), ('clip_gradient', FLOAT, -1.0),
                    ('bias_correction', BOOL, True), ('step_count', SHAPE), ('num_tensors', INT, 1)],
             aux=states, dtypes=DTypeRule(fixed=lambda a: dict.fromkeys(states(a), 'float32') if master else {}),
             num_inputs=lambda a: group * a['num_tensors'])(impl)


_register_multi_adamw('_multi_adamw_update', False)
_register_multi_adamw('_multi_mp_adamw_update', True)
_register_multi_lamb('_multi_lamb_update', False)
_register_multi_lamb('_multi_mp_lamb_update', True)
