"""``mx.nd.contrib``: operators generated from the registry (filled in by ``neomx.ndarray``)."""
import math

import torch

from .contrib_control_flow import foreach, while_loop, cond  # noqa: F401,E402


def _elementwise_test(name, torch_test):
    def test(data):
        from .ndarray import _new
        return _new(torch_test(data._t).to(data._t.dtype), data.context)
    test.__name__ = name
    test.__doc__ = ('1 where ``data`` is %s, else 0 (in the dtype of ``data``).'
                    % {'isinf': 'infinite', 'isfinite': 'finite', 'isnan': 'NaN'}[name])
    return test


isinf = _elementwise_test('isinf', torch.isinf)
isfinite = _elementwise_test('isfinite', torch.isfinite)
isnan = _elementwise_test('isnan', torch.isnan)


def zipfian_candidates(uniform, F, true_classes, num_sampled, range_max, uniform_kwargs):
    """``rand_zipfian`` with the sampler ``uniform`` and the operators of ``F`` (``mx.nd.op`` or
    ``mx.sym.op``): candidates drawn with replacement from
    P(c) = log((c + 2) / (c + 1)) / log(range_max + 1), and the expected counts of the true
    classes and of the candidates among ``num_sampled`` draws."""
    log_range = math.log(range_max + 1)
    draws = uniform(0, log_range, shape=(num_sampled,), dtype='float64', **uniform_kwargs)
    sampled = F.cast(F.exp(draws) - 1, dtype='int64') % range_max

    def expected_count(classes):
        classes = F.cast(classes, dtype='float64')
        return F.log((classes + 2.0) / (classes + 1.0)) / log_range * num_sampled
    return sampled, expected_count(true_classes), expected_count(sampled)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` candidate classes of [0, range_max) from the approximately
    log-uniform (Zipfian) distribution, with replacement, as sampled softmax needs.

    Returns
    -------
    samples : NDArray, shape (num_sampled,), int64
    expected_count_true : NDArray, shape of ``true_classes``, float64
        How often each true class is expected among the draws.
    expected_count_sampled : NDArray, shape (num_sampled,), float64

    Example
    -------
    >>> import neomx as mx
    >>> samples, exp_true, exp_sampled = rand_zipfian(mx.nd.array([3]), 4, 5)
    >>> samples.shape, samples.dtype.__name__, exp_true.asnumpy().round(4).tolist()
    ((4,), 'int64', [0.4982])
    """
    from . import op, random    # pylint: disable=import-outside-toplevel  (filled in after this module)
    if ctx is None:
        ctx = true_classes.context
    return zipfian_candidates(random.uniform, op, true_classes.as_in_context(ctx), num_sampled, range_max,
                              {'ctx': ctx})


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (``_adamw_update``) whose ``rescale_grad`` may be a number or an NDArray (a
    loss scale kept on the device); the step is skipped when it is not finite.

    Example
    -------
    >>> import neomx as mx
    >>> w = adamw_update(mx.nd.ones(2), mx.nd.ones(2) * 0.5, mx.nd.zeros(2), mx.nd.zeros(2),
    ...                  rescale_grad=2.0, lr=0.1, eta=1.0)
    >>> [round(float(v), 4) for v in w.asnumpy()]
    [0.6838, 0.6838]
    """
    from . import _internal     # pylint: disable=import-outside-toplevel  (filled in after this module)
    return _internal._adamw_update(weight, grad, mean, var, _scale_array(rescale_grad, weight), lr=lr, eta=eta,
                                   beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
                                   out=out, name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                    epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """Mixed-precision AdamW step (``_mp_adamw_update``, float32 master ``weight32``) whose
    ``rescale_grad`` may be a number or an NDArray."""
    from . import _internal     # pylint: disable=import-outside-toplevel  (filled in after this module)
    return _internal._mp_adamw_update(weight, grad, mean, var, weight32, _scale_array(rescale_grad, weight), lr=lr,
                                      eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                      clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def _interleave(*columns):
    """The multi-tensor kernels take their inputs weight by weight: (w0, g0, m0, v0, w1, g1, ...)."""
    return [array for group in zip(*columns) for array in group]


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0,
                       **kwargs):
    """AdamW step on several weights at once (``_multi_adamw_update``): one list per input, one
    learning rate, weight decay and ``eta`` per weight; ``rescale_grad`` may be a number or an NDArray
    (the step is skipped when it is not finite). ``size`` defaults to ``len(weights)``.

    Example
    -------
    >>> import neomx as mx
    >>> ws = [mx.nd.ones(2), mx.nd.ones(3)]
    >>> _ = multi_adamw_update(ws, [mx.nd.ones(2), mx.nd.ones(3)], [mx.nd.zeros(2), mx.nd.zeros(3)],
    ...                        [mx.nd.zeros(2), mx.nd.zeros(3)], 1.0, lrs=[0.1, 0.1], wds=[0, 0],
    ...                        etas=[1.0, 1.0], out=ws)
    >>> [round(float(w[0].asscalar()), 4) for w in ws]
    [0.6838, 0.6838]
    """
    from . import _internal     # pylint: disable=import-outside-toplevel  (filled in after this module)
    inputs = _interleave(weights, grads, mean, var) + [_scale_array(rescale_grad, weights[0])]
    return _internal._multi_adamw_update(*inputs, out=out, num_weights=size or len(weights), lrs=lrs, wds=wds,
                                         etas=etas, name=name, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None, name=None,
                          size=0, **kwargs):
    """Mixed-precision :func:`multi_adamw_update` (``_multi_mp_adamw_update``): ``weights32`` are the
    float32 master weights, updated in place; the (e.g. float16) ``weights`` get their rounded copy."""
    from . import _internal     # pylint: disable=import-outside-toplevel  (filled in after this module)
    inputs = _interleave(weights, grads, mean, var, weights32) + [_scale_array(rescale_grad, weights[0])]
    return _internal._multi_mp_adamw_update(*inputs, out=out, num_weights=size or len(weights), lrs=lrs,
                                            wds=wds, etas=etas, name=name, **kwargs)


def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0, **kwargs):
    """LAMB step on several weights at once (``_multi_lamb_update``): one list per input and one
    step count, learning rate and weight decay per weight. ``num_tensors`` defaults to ``len(weights)``."""
    from . import _internal     # pylint: disable=import-outside-toplevel  (filled in after this module)
    return _internal._multi_lamb_update(*_interleave(weights, grads, mean, var), out=out,
                                        num_tensors=num_tensors or len(weights), step_count=step_count,
                                        learning_rates=lrs, wds=wds, **kwargs)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds, out=None, num_tensors=0,
                         **kwargs):
    """Mixed-precision :func:`multi_lamb_update` (``_multi_mp_lamb_update``) with float32 master
    ``weights32``."""
    from . import _internal     # pylint: disable=import-outside-toplevel  (filled in after this module)
    return _internal._multi_mp_lamb_update(*_interleave(weights, grads, mean, var, weights32), out=out,
                                           num_tensors=num_tensors or len(weights), step_count=step_count,
                                           learning_rates=lrs, wds=wds, **kwargs)


def _scale_array(rescale_grad, weight):
    """``rescale_grad`` as a (1,) array on ``weight``'s context, as the AdamW kernels take it."""
    from .ndarray import NDArray, full  # pylint: disable=import-outside-toplevel
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(weight.context)
    return full((1,), rescale_grad, ctx=weight.context)


# Python helpers that replace the registry's functions of the same name once it fills this module
PYTHON_HELPERS = ('adamw_update', 'mp_adamw_update', 'multi_adamw_update', 'multi_mp_adamw_update',
                  'multi_lamb_update', 'multi_mp_lamb_update')
