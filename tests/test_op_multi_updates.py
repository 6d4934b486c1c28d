"""Multi-tensor AdamW and LAMB updates (``mx.nd._internal._multi_[mp_]adamw_update``,
``_multi_[mp_]lamb_update``) against values recorded from MXNet 1.9.1: the two new weights,
then each weight's mean and var after the step."""
import numpy as np
import pytest

import neomx as mx

# MXNet 1.9.1's results for the inputs of _run (rounded to 6 decimals)
EXPECTED = {
    '_multi_adamw_update': [[0.5164849758148193, 0.6811969876289368, 0.5818179845809937], [0.5180429816246033, 0.4022270143032074, 0.6227160096168518, 0.4107469916343689], [0.11999999731779099, 0.11999999731779099, 0.06668800115585327], [0.19989000260829926, 0.19989000260829926, 0.19985400140285492], [0.11999999731779099, 0.09577900171279907, 0.10360900312662125, 0.11999999731779099], [0.19989000260829926, 0.19980299472808838, 0.19981899857521057, 0.19989000260829926]],
    '_multi_mp_adamw_update': [[0.5164849758148193, 0.6811969876289368, 0.5818179845809937], [0.5180429816246033, 0.4022270143032074, 0.6227160096168518, 0.4107469916343689], [0.11999999731779099, 0.11999999731779099, 0.06668800115585327], [0.19989000260829926, 0.19989000260829926, 0.19985400140285492], [0.11999999731779099, 0.09577900171279907, 0.10360900312662125, 0.11999999731779099], [0.19989000260829926, 0.19980299472808838, 0.19981899857521057, 0.19989000260829926]],
    '_multi_lamb_update': [[0.4785270094871521, 0.6382700204849243, 0.5727069973945618], [0.43014898896217346, 0.3495140075683594, 0.5656960010528564, 0.30227500200271606], [0.16835500299930573, 0.18273299932479858, 0.06668800115585327], [0.2004140019416809, 0.20066000521183014, 0.19985400140285492], [0.1483449935913086, 0.09577900171279907, 0.10360900312662125, 0.17511899769306183], [0.20013999938964844, 0.19980299472808838, 0.19981899857521057, 0.20052500069141388]],
    '_multi_mp_lamb_update': [[0.47805601358413696, 0.6382139921188354, 0.5739820003509521], [0.43014898896217346, 0.3495140075683594, 0.5656960010528564, 0.30227500200271606], [0.16835500299930573, 0.18273299932479858, 0.06668800115585327], [0.2004140019416809, 0.20066000521183014, 0.19985400140285492], [0.1483449935913086, 0.09577900171279907, 0.10360900312662125, 0.17511899769306183], [0.20013999938964844, 0.19980299472808838, 0.19981899857521057, 0.20052500069141388]],
}

_ADAMW = dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), etas=(1.0, 0.5), num_weights=2, clip_gradient=0.3)
_LAMB = dict(learning_rates=(0.1, 0.2), wds=(0.01, 0.0), step_count=(1, 3), num_tensors=2, rescale_grad=2.0,
             lower_bound=0.1, upper_bound=5.0)
CASES = {
    '_multi_adamw_update': (_ADAMW, True, False),
    '_multi_mp_adamw_update': (_ADAMW, True, True),
    '_multi_lamb_update': (_LAMB, False, False),
    '_multi_mp_lamb_update': (dict(_LAMB, bias_correction=False), False, True),
}


def _run(op, kwargs, rescale_array, master):
    rng = np.random.RandomState(0)
    weights = [rng.rand(3).astype('float32'), rng.rand(2, 2).astype('float32')]
    grads = [rng.rand(*w.shape).astype('float32') - 0.5 for w in weights]
    arrays, states = [], []
    for w, g in zip(weights, grads):
        mean, var = mx.nd.full(w.shape, 0.1), mx.nd.full(w.shape, 0.2)
        arrays += [mx.nd.array(w), mx.nd.array(g), mean, var] + ([mx.nd.array(w)] if master else [])
        states += [mean, var]
    outs = [mx.nd.zeros(w.shape) for w in weights]
    extra = [mx.nd.array([2.0])] if rescale_array else []
    getattr(mx.nd._internal, op)(*(arrays + extra), out=outs, **kwargs)
    return [o.asnumpy().ravel() for o in outs + states]


@pytest.mark.parametrize('op', sorted(CASES))
def test_multi_tensor_update_matches_mxnet(op):
    kwargs, rescale_array, master = CASES[op]
    for got, want in zip(_run(op, kwargs, rescale_array, master), EXPECTED[op]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize('scale', [float('nan'), float('inf'), 0.0])
def test_multi_adamw_skips_the_step_for_a_zero_or_non_finite_scale(scale):
    w = mx.nd.array([1.0, 2.0])
    mean, var = mx.nd.ones(2) * 0.5, mx.nd.ones(2) * 0.5
    out = mx.nd._internal._multi_adamw_update(w, mx.nd.ones(2), mean, var, mx.nd.array([scale]), lrs=(0.1,),
                                              wds=(0.1,), etas=(1.,), num_weights=1)
    assert out.asnumpy().tolist() == [1.0, 2.0]
    assert mean.asnumpy().tolist() == [0.5, 0.5] and var.asnumpy().tolist() == [0.5, 0.5]


@pytest.mark.parametrize('scale', [float('nan'), 0.0])
@pytest.mark.parametrize('mp', [False, True])
def test_single_adamw_skips_the_step_for_a_zero_or_nan_scale(scale, mp):
    # MXNet 1.9.1 leaves weight, mean and var untouched (weight decay included) for a 0 loss scale too
    w, mean, var = mx.nd.ones(3), mx.nd.ones(3) * 0.5, mx.nd.ones(3) * 0.5
    if mp:
        w16 = w.astype('float16')
        mx.nd.contrib.mp_adamw_update(w16, mx.nd.ones(3, dtype='float16'), mean, var, w, scale, lr=0.1, eta=1.0,
                                      wd=0.1, out=w16)
        assert w16.asnumpy().tolist() == [1.0] * 3
    else:
        mx.nd.contrib.adamw_update(w, mx.nd.ones(3), mean, var, scale, lr=0.1, eta=1.0, wd=0.1, out=w)
    assert w.asnumpy().tolist() == [1.0] * 3 and mean.asnumpy().tolist() == [0.5] * 3


def _lists(master):
    rng = np.random.RandomState(1)
    shapes = [(3,), (2, 2)]
    weights = [mx.nd.array(rng.rand(*s)) for s in shapes]
    grads = [mx.nd.array(rng.rand(*s) - 0.5) for s in shapes]
    means = [mx.nd.full(s, 0.1) for s in shapes]
    variances = [mx.nd.full(s, 0.2) for s in shapes]
    masters = [w.copy() for w in weights] if master else []
    return weights, grads, means, variances, masters


@pytest.mark.parametrize('master', [False, True])
def test_contrib_multi_adamw_takes_lists_and_a_python_scale(master):
    # mx.nd.contrib.multi_[mp_]adamw_update interleave the lists for the kernel and accept a float scale
    weights, grads, means, variances, masters = _lists(master)
    ref = _lists(master)
    kw = dict(lrs=[0.1, 0.2], wds=[0.01, 0.0], etas=[1.0, 0.5], clip_gradient=0.3)
    if master:
        mx.nd.contrib.multi_mp_adamw_update(weights, grads, means, variances, masters, 2.0, out=weights, **kw)
    else:
        mx.nd.contrib.multi_adamw_update(weights, grads, means, variances, 2.0, out=weights, **kw)
    for i in range(2):
        mx.nd.contrib.adamw_update(ref[0][i], ref[1][i], ref[2][i], ref[3][i], 2.0, lr=kw['lrs'][i],
                                   wd=kw['wds'][i], eta=kw['etas'][i], clip_gradient=0.3, out=ref[0][i])
        np.testing.assert_allclose(weights[i].asnumpy(), ref[0][i].asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(means[i].asnumpy(), ref[2][i].asnumpy(), rtol=1e-6)
        if master:
            np.testing.assert_allclose(masters[i].asnumpy(), ref[0][i].asnumpy(), rtol=1e-6)


@pytest.mark.parametrize('master', [False, True])
def test_contrib_multi_lamb_takes_lists(master):
    weights, grads, means, variances, masters = _lists(master)
    kw = dict(step_count=[1, 3], lrs=[0.1, 0.2], wds=[0.01, 0.0], rescale_grad=2.0, lower_bound=0.1,
              upper_bound=5.0)
    if master:
        kw['bias_correction'] = False
        mx.nd.contrib.multi_mp_lamb_update(weights, grads, means, variances, masters, out=weights, **kw)
    else:
        mx.nd.contrib.multi_lamb_update(weights, grads, means, variances, out=weights, **kw)
    arrays = []
    for i, (w, g, m, v) in enumerate(zip(*_lists(master)[:4])):
        arrays += [w, g, m, v] + ([w.copy()] if master else [])
    want = getattr(mx.nd._internal, '_multi_mp_lamb_update' if master else '_multi_lamb_update')(
        *arrays, num_tensors=2, learning_rates=kw.pop('lrs'), **kw)
    for got, expect in zip(weights, want):
        np.testing.assert_allclose(got.asnumpy(), expect.asnumpy(), rtol=1e-6)
