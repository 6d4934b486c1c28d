"""mx.optimizer: every optimizer against MXNet 1.9.1's recorded updates, the fused multi-tensor
path against one-at-a-time updates, multi-precision, the registry, the Updater and its
pickle-free states, and the mx.nd update operators.

Expected values were recorded with MXNet 1.9.1 (two updates of W0 by GRADS with the
hyperparameters below plus wd=0.02, rescale_grad=0.8, clip_gradient=0.9).
"""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.base import MXNetError

W0 = np.array([[0.6, -0.4, 1.5], [-1.2, 0.25, 0.9]], 'float32')
GRADS = [np.array([[0.3, -0.8, 0.05], [1.4, -0.2, 0.6]], 'float32'),
         np.array([[-0.5, 0.7, 0.2], [0.9, 0.35, -1.1]], 'float32')]
COMMON = dict(wd=0.02, rescale_grad=0.8, clip_gradient=0.9)

CONFIGS = {
    'sgd': ('SGD', {'learning_rate': 0.1}),
    'sgd_momentum': ('SGD', {'learning_rate': 0.1, 'momentum': 0.9}),
    'nag': ('NAG', {'learning_rate': 0.1, 'momentum': 0.8}),
    'signsgd': ('Signum', {'learning_rate': 0.1, 'momentum': 0.0}),
    'signum': ('Signum', {'learning_rate': 0.1, 'momentum': 0.7, 'wd_lh': 0.05}),
    'lars': ('LARS', {'learning_rate': 0.1, 'momentum': 0.9, 'eta': 0.02}),
    'dcasgd': ('DCASGD', {'learning_rate': 0.1, 'lamda': 0.3}),
    'adam': ('Adam', {'learning_rate': 0.05, 'beta1': 0.8, 'beta2': 0.9}),
    'adamax': ('Adamax', {'learning_rate': 0.05}),
    'nadam': ('Nadam', {'learning_rate': 0.05}),
    'lamb': ('LAMB', {'learning_rate': 0.05, 'lower_bound': 0.1, 'upper_bound': 5.0}),
    'adagrad': ('AdaGrad', {'learning_rate': 0.1, 'eps': 0.0001}),
    'adadelta': ('AdaDelta', {'rho': 0.8, 'epsilon': 0.001}),
    'rmsprop': ('RMSProp', {'learning_rate': 0.05, 'gamma1': 0.8}),
    'rmsprop_centered': ('RMSProp', {'learning_rate': 0.05, 'gamma1': 0.8, 'gamma2': 0.7, 'centered': True,
                                     'clip_weights': 1.3}),
    'ftrl': ('Ftrl', {'learning_rate': 0.2, 'lamda1': 0.05, 'beta': 0.5}),
    'ftml': ('FTML', {'learning_rate': 0.1, 'beta1': 0.7, 'beta2': 0.95}),
}
EXPECTED = {
    'sgd': [[0.61365, -0.39053, 1.474014], [-1.357025, 0.236969, 0.9365]],
    'sgd_momentum': [[0.59097, -0.33221, 1.467714], [-1.435865, 0.250919, 0.89168]],
    'nag': [[0.608573, -0.341817, 1.448781], [-1.538255, 0.236384, 0.934085]],
    'signsgd': [[0.597803, -0.398602, 1.294206], [-1.395005, 0.248801, 0.896604]],
    'signum': [[0.594515, -0.39651, 1.285537], [-1.38753, 0.247006, 0.891523]],
    'lars': [[0.599752, -0.397939, 1.498981], [-1.20739, 0.250005, 0.899813]],
    'dcasgd': [[0.613771, -0.391139, 1.474019], [-1.355662, 0.236933, 0.937657]],
    'adam': [[0.565715, -0.351602, 1.403173], [-1.299212, 0.280712, 0.868081]],
    'adamax': [[0.560973, -0.348772, 1.414912], [-1.29405, 0.28652, 0.862649]],
    'nadam': [[0.589324, -0.378708, 1.397085], [-1.287261, 0.258381, 0.890863]],
    'lamb': [[0.575621, -0.352286, 1.38215], [-1.319241, 0.270714, 0.877908]],
    'adagrad': [[0.583619, -0.36446, 1.300349], [-1.357466, 0.261824, 0.88441]],
    'adadelta': [[0.595076, -0.384731, 1.335852], [-1.287986, 0.220233, 0.884967]],
    'rmsprop': [[0.585011, -0.365466, 1.282135], [-1.384793, 0.261115, 0.887577]],
    'rmsprop_centered': [[0.486077, -0.264805, 1.08548], [-1.3, 0.359042, 0.789252]],
    'ftrl': [[0.198025, -0.18584, 0.029368], [-0.977241, 0.025617, 0.448136]],
    'ftml': [[0.569507, -0.354166, 1.322785], [-1.350965, 0.277313, 0.871615]],
}


def _make(name):
    cls, kwargs = CONFIGS[name]
    return getattr(mx.optimizer, cls)(**kwargs, **COMMON)


def _two_steps(opt):
    w = mx.nd.array(W0)
    state = opt.create_state(0, w)
    for g in GRADS:
        opt.update(0, w, mx.nd.array(g), state)
    return w.asnumpy()


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_matches_mxnet(name):
    np.testing.assert_allclose(_two_steps(_make(name)), EXPECTED[name], rtol=1e-5, atol=2e-6)


def _model(seed=0):
    """Three parameters of different shapes with two steps of gradients each."""
    rs = np.random.RandomState(seed)
    shapes = [(2, 3), (4,), (3, 1, 2)]
    weights = [rs.uniform(-1, 1, s).astype('float32') for s in shapes]
    grads = [[rs.uniform(-1.5, 1.5, s).astype('float32') for s in shapes] for _ in range(2)]
    return weights, grads


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_fused_equals_one_at_a_time(name):
    weights, grads = _model()
    one, many = _make(name), _make(name)
    for opt in (one, many):                   # per-parameter rates take the grouped path
        opt.set_lr_mult({1: 0.5})
        opt.set_wd_mult({2: 3.0})
    w_one = [mx.nd.array(w) for w in weights]
    w_many = [mx.nd.array(w) for w in weights]
    s_one = [one.create_state(i, w) for i, w in enumerate(w_one)]
    s_many = [many.create_state(i, w) for i, w in enumerate(w_many)]
    indices = list(range(len(weights)))
    for step in grads:
        for i in indices:
            one.update(i, w_one[i], mx.nd.array(step[i]), s_one[i])
        many.update_multi(indices, w_many, [mx.nd.array(g) for g in step], s_many)
    for a, b in zip(w_one, w_many):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('rescale', [0.8, 0.0])
def test_sgd_momentum_without_clipping_follows_mxnet_formula_per_rate_group(rescale):
    # no clip: the rescale factor is folded into the fused update, per (lr, wd) group
    weights, grads = _model(3)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.02, rescale_grad=rescale)
    opt.set_lr_mult({1: 0.5})
    opt.set_wd_mult({2: 3.0})
    lrs, wds = [0.1, 0.05, 0.1], [0.02, 0.02, 0.06]
    ws = [mx.nd.array(w) for w in weights]
    states = [opt.create_state(i, w) for i, w in enumerate(ws)]
    want_w = [w.astype('float64') for w in weights]
    want_m = [np.zeros_like(w) for w in want_w]
    for step in grads:
        opt.update_multi([0, 1, 2], ws, [mx.nd.array(g) for g in step], states)
        for i, g in enumerate(step):
            want_m[i] = 0.9 * want_m[i] - lrs[i] * (rescale * g + wds[i] * want_w[i])
            want_w[i] = want_w[i] + want_m[i]
    for w, m, ww, wm in zip(ws, states, want_w, want_m):
        np.testing.assert_allclose(w.asnumpy(), ww, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(m.asnumpy(), wm, rtol=1e-6, atol=1e-7)


def test_sgld_noise_scale():
    torch.manual_seed(0)
    opt = mx.optimizer.SGLD(learning_rate=0.04)
    w = mx.nd.zeros((20000,))
    opt.update(0, w, mx.nd.zeros((20000,)), None)
    assert abs(float(w.asnumpy().std()) - 0.2) < 0.01      # noise std is sqrt(lr)
    assert abs(float(w.asnumpy().mean())) < 0.01


def test_adamw_decoupled_weight_decay():
    opt = mx.optimizer.AdamW(learning_rate=0.1, wd=0.5)
    w = mx.nd.array([2.0, -1.0])
    opt.update(0, w, mx.nd.array([1.0, 0.0]), opt.create_state(0, w))
    # first step: m_hat / sqrt(v_hat) = sign(g); the decay uses the plain rate
    np.testing.assert_allclose(w.asnumpy(), [2.0 - 0.1 * 1.0 - 0.1 * 0.5 * 2.0, -1.0 + 0.1 * 0.5], rtol=1e-5)


# --------------------------------------------------------- multi-precision
@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_sgd_multi_precision_keeps_float32_master(dtype):
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    w = mx.nd.array(W0, dtype=dtype)
    state = opt.create_state_multi_precision(0, w)
    mom, master = state                      # SGD's MXNet layout: (momentum, master)
    assert master.dtype == np.float32 and mom.dtype == np.float32
    reference = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    w32 = w.astype('float32')               # the master starts from the rounded weight
    ref_state = reference.create_state(0, w32)
    for g in GRADS:
        opt.update_multi_precision(0, w, mx.nd.array(g, dtype=dtype), state)
        reference.update(0, w32, mx.nd.array(g, dtype=dtype).astype('float32'), ref_state)
    np.testing.assert_allclose(master.asnumpy(), w32.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), w32.astype(dtype).asnumpy())
    assert w.dtype == mx.nd.zeros((1,), dtype=dtype).dtype


def test_adam_multi_precision_layout_and_fused_mixed_dtypes():
    opt = mx.optimizer.Adam(learning_rate=0.1, multi_precision=True)
    updater = mx.optimizer.get_updater(opt)
    w16, w32 = mx.nd.array(W0, dtype='float16'), mx.nd.array(W0)
    updater([0, 1], [mx.nd.array(GRADS[0], dtype='float16'), mx.nd.array(GRADS[0])], [w16, w32])
    master, (mean, var) = updater.states[0]  # base layout: (master, state)
    assert master.dtype == np.float32 and mean.dtype == np.float32
    np.testing.assert_allclose(master.asnumpy(), w32.asnumpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(w16.asnumpy(), master.asnumpy(), rtol=1e-3)


# -------------------------------------------------------- registry, rates
def test_create_and_register():
    assert type(mx.optimizer.create('RMSProp', learning_rate=0.3)).__name__ == 'RMSProp'
    assert type(mx.optimizer.create('adamw')).__name__ == 'AdamW'
    with pytest.raises(ValueError, match='Cannot find optimizer'):
        mx.optimizer.create('nope')

    @mx.optimizer.register
    class HalfStep(mx.optimizer.Optimizer):   # an MXNet-style optimizer overriding update()
        def update(self, index, weight, grad, state):
            self._update_count(index)
            weight[:] -= grad * 0.5

    opt = mx.optimizer.create('halfstep')
    updater = mx.optimizer.get_updater(opt)
    w = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    updater([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,)) * 2], w)
    assert w[0].asnumpy().tolist() == [0.5, 0.5] and w[1].asnumpy().tolist() == [0.0] * 3
    assert opt.num_update == 1


def test_param_dict_multipliers_take_precedence():
    class Param:
        lr_mult, wd_mult = 0.5, 0.0
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=0.1, param_dict={0: Param()})
    opt.set_lr_mult({0: 10.0})
    assert opt._get_lrs([0, 1]) == [0.5, 1.0]
    assert opt._get_wds([0, 1]) == [0.0, 0.1]


def test_learning_rate_errors_and_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.3)
    w = mx.nd.zeros((1,))
    for _ in range(3):
        opt.update(0, w, mx.nd.ones((1,)), None)
    assert w.asscalar() == pytest.approx(-(1.0 + 0.5 + 0.25))     # decays after updates 1 and 2


def test_shape_mismatch_raises_without_update():
    opt = mx.optimizer.SGD(learning_rate=0.1)
    w = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match='shape'):
        opt.update(0, w, mx.nd.ones((3,)), None)
    assert w.asnumpy().tolist() == [1.0, 1.0] and opt.num_update == 0


# ------------------------------------------------------- states round trip
def test_states_round_trip_with_optimizer():
    updater = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.1))
    w = mx.nd.array(W0)
    updater('fc_weight', mx.nd.array(GRADS[0]), w)
    saved, after_first = updater.get_states(dump_optimizer=True), w.copy()
    assert saved.startswith(b'NEOMXOS1')
    updater('fc_weight', mx.nd.array(GRADS[1]), w)
    restored = mx.optimizer.get_updater(mx.optimizer.SGD())
    restored.set_states(saved)
    assert type(restored.optimizer).__name__ == 'Adam' and restored.optimizer.num_update == 1
    restored('fc_weight', mx.nd.array(GRADS[1]), after_first)
    np.testing.assert_allclose(after_first.asnumpy(), w.asnumpy(), rtol=1e-6)


@pytest.mark.filterwarnings('ignore:Accumulating with float16')
def test_states_keep_keys_dtypes_and_scheduler():
    sched = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.5)
    opt = mx.optimizer.SGD(momentum=0.9, lr_scheduler=sched, param_idx2name={3: 'a_bias'})
    updater = mx.optimizer.get_updater(opt)
    updater([3, 'x'], [mx.nd.ones((2,), dtype='float16'), mx.nd.ones((1,))],
            [mx.nd.ones((2,), dtype='float16'), mx.nd.ones((1,))])
    restored = mx.optimizer.get_updater(mx.optimizer.SGD())
    restored.set_states(updater.get_states(dump_optimizer=True))
    assert sorted(restored.states, key=str) == [3, 'x']
    assert restored.states[3].dtype == np.float16
    assert isinstance(restored.optimizer.lr_scheduler, mx.lr_scheduler.MultiFactorScheduler)
    assert restored.optimizer.idx2name == {3: 'a_bias'} and restored.optimizer.wd_mult == {'a_bias': 0.0}


def test_set_states_rejects_foreign_bytes():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match='not a neomx optimizer state'):
        updater.set_states(b'NEOMX?pickled')
    with pytest.raises(MXNetError, match='not a valid MXNet optimizer state'):
        updater.set_states(b'\x80\x04pickled')


# ------------------------------------------------------------ nd operators
# (operator, inputs, attributes, arrays after `op(*inputs, out=weight)`: weight then states), recorded
# with MXNet 1.9.1; MULTI, MP and LAMB below likewise.
OP_COMMON = dict(rescale_grad=0.5, clip_gradient=0.8, wd=0.1)
OP_CASES = [
    ('sgd_update', ['w', 'g'],
     dict(lr=0.2, **OP_COMMON),
     [[0.46, -0.82, 1.9, 0.098]]),
    ('sgd_mom_update', ['w', 'g', 's1'],
     dict(lr=0.2, momentum=0.9, **OP_COMMON),
     [[0.64, -0.91, 1.9, 0.458], [0.14, 0.09, -0.1, 0.358]]),
    ('nag_mom_update', ['w', 'g', 's1'],
     dict(lr=0.2, momentum=0.9, **OP_COMMON),
     [[0.586, -0.739, 1.81, 0.4202], [0.13828, 0.08478, -0.0962, 0.351596]]),
    ('adam_update', ['w', 'g', 's1', 's2'],
     dict(lr=0.2, beta1=0.8, beta2=0.9, epsilon=0.001, **OP_COMMON),
     [[0.440723, -0.877996, 1.979227, -0.051431], [0.2, -0.24, 0.1, 0.322], [0.454, 0.154, 0.925, 0.18001]]),
    ('rmsprop_update', ['w', 'g', 's2'],
     dict(lr=0.2, gamma1=0.8, epsilon=0.001, clip_weights=1.5, **OP_COMMON),
     [[0.437454, -0.650017, 1.5, 0.095016], [0.408, 0.208, 0.85, 0.16002]]),
    ('rmspropalex_update', ['w', 'g', 's2', 's1', 's3'],
     dict(lr=0.2, gamma1=0.8, gamma2=0.7, epsilon=0.001, **OP_COMMON),
     [[0.504151, -0.378796, 2.030956, 0.511648],
      [0.408, 0.208, 0.85, 0.16002],
      [0.2, -0.24, 0.1, 0.322],
      [0.004151, 0.621204, 0.030956, 0.411648]]),
    ('ftrl_update', ['w', 'g', 's1', 's2'],
     dict(lr=0.2, lamda1=0.05, beta=1.5, **OP_COMMON),
     [[-0.023244, -0.148727, 0.007044, -0.035583], [0.310663, 1.820024, -0.140307, 0.4], [0.5225, 0.74, 1.09, 0.2]]),
    ('ftml_update', ['w', 'g', 's2', 's3', 's1'],
     dict(lr=0.2, beta1=0.6, beta2=0.9, epsilon=0.001, t=2, wd=0.1, rescale_grad=0.5, clip_grad=0.8),
     [[0.344721, -0.896372, 1.579215, 0.052575],
      [2.254, 4.245939, 3.327116, 5.397983],
      [0.094, 0.334, 0.205, 0.54001],
      [-0.777, 3.805939, -5.254232, -0.283798]]),
    ('signsgd_update', ['w', 'g'],
     dict(lr=0.2, **OP_COMMON),
     [[0.29, -0.78, 1.76, 0.098]]),
    ('signum_update', ['w', 'g', 's1'],
     dict(lr=0.2, momentum=0.9, wd_lh=0.05, **OP_COMMON),
     [[0.695, -0.79, 1.78, 0.299], [0.16, 0.0, -0.05, 0.359]]),
    ('_contrib_adamw_update', ['w', 'g', 's1', 's2', 'r'],
     dict(lr=0.2, beta1=0.8, beta2=0.9, epsilon=0.001, wd=0.1, eta=0.5, clip_gradient=0.8),
     [[0.446789, -0.888998, 1.893713, 0.019753], [0.19, -0.24, 0.06, 0.32], [0.45225, 0.154, 0.909, 0.18]]),
]
MULTI = [[0.64, -0.87, 1.9, 0.458], [0.14, 0.13, -0.1, 0.358], [0.975, -0.9225], [-0.025, 0.0775]]
MP = [[0.640137, -0.910156, 1.900391, 0.458008], [0.139995, 0.09, -0.10001, 0.358], [0.639995, -0.91, 1.89999, 0.458]]
LAMB = [[0.391867, -0.839679, 0.276163, 0.92231], [0.441348, -0.874322, 1.958666, -0.038045],
        [0.19, -0.24, 0.06, 0.32], [0.45225, 0.154, 0.909, 0.18]]

_INPUTS = {'w': [0.5, -1.0, 2.0, 0.1], 'g': [0.3, -2.0, 0.6, 0.0], 's1': [0.2, -0.1, 0.0, 0.4],
           's2': [0.5, 0.1, 1.0, 0.2], 's3': [0.1, 0.3, 0.2, 0.6], 'r': [0.5]}


@pytest.mark.parametrize('op, names, kwargs, expected', OP_CASES, ids=[c[0] for c in OP_CASES])
def test_update_operators_match_mxnet(op, names, kwargs, expected):
    arrays = [mx.nd.array(_INPUTS[n]) for n in names]
    fn = getattr(mx.nd, op, None) or getattr(mx.nd.contrib, op.replace('_contrib_', ''))
    fn(*arrays, out=arrays[0], **kwargs)
    updated = [a.asnumpy() for a, n in zip(arrays, names) if n not in ('g', 'r')]
    for got, want in zip(updated, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


def test_update_operator_without_out_keeps_weight():
    w, mom = mx.nd.array(_INPUTS['w']), mx.nd.zeros((4,))
    before = w.asnumpy()
    new = mx.nd.sgd_mom_update(w, mx.nd.array(_INPUTS['g']), mom, lr=0.1, momentum=0.9)
    np.testing.assert_array_equal(w.asnumpy(), before)
    np.testing.assert_allclose(mom.asnumpy(), -0.1 * np.array(_INPUTS['g']), rtol=1e-6)   # updated in place
    np.testing.assert_allclose(new.asnumpy(), before + mom.asnumpy(), rtol=1e-6)


def test_multi_sgd_mom_update_matches_mxnet():
    w1, g1, m1 = mx.nd.array(_INPUTS['w']), mx.nd.array(_INPUTS['g']), mx.nd.array(_INPUTS['s1'])
    w2, g2, m2 = mx.nd.array([1.0, -1.0]), mx.nd.array([0.5, 0.25]), mx.nd.array([0.0, 0.1])
    mx.nd.multi_sgd_mom_update(w1, g1, m1, w2, g2, m2, lrs=(0.2, 0.1), wds=(0.1, 0.0), momentum=0.9,
                               rescale_grad=0.5, num_weights=2, out=[w1, w2])
    for got, want in zip((w1, m1, w2, m2), MULTI):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(MXNetError, match='expects 6 inputs'):
        mx.nd.multi_sgd_mom_update(w1, g1, m1, w2, g2, lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)


def test_mp_sgd_mom_update_matches_mxnet():
    w16, w32, mom = mx.nd.array(_INPUTS['w'], dtype='float16'), mx.nd.array(_INPUTS['w']), mx.nd.array(_INPUTS['s1'])
    mx.nd.mp_sgd_mom_update(w16, mx.nd.array(_INPUTS['g'], dtype='float16'), mom, w32, lr=0.2, momentum=0.9,
                            rescale_grad=0.5, clip_gradient=0.8, wd=0.1, out=w16)
    assert w16.dtype == np.float16
    for got, want in zip((w16, mom, w32), MP):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-3, atol=1e-4)


def test_lamb_phases_match_mxnet():
    w, mean, var = mx.nd.array(_INPUTS['w']), mx.nd.array(_INPUTS['s1']), mx.nd.array(_INPUTS['s2'])
    d = mx.nd.lamb_update_phase1(w, mx.nd.array(_INPUTS['g']), mean, var, beta1=0.8, beta2=0.9, epsilon=1e-3,
                                 t=2, wd=0.1, rescale_grad=0.5, clip_gradient=0.8)
    mx.nd.lamb_update_phase2(w, d, w.norm(), d.norm(), lr=0.2, lower_bound=0.1, upper_bound=1.0, out=w)
    for got, want in zip((d, w, mean, var), LAMB):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_adamw_operator_skips_non_finite_rescale():
    w = mx.nd.array(_INPUTS['w'])
    mx.nd.contrib.adamw_update(w, mx.nd.array(_INPUTS['g']), mx.nd.zeros((4,)), mx.nd.zeros((4,)),
                               mx.nd.array([np.inf]), lr=0.1, eta=1.0, out=w)
    np.testing.assert_array_equal(w.asnumpy(), np.array(_INPUTS['w'], 'float32'))


def test_allow_np_array_records_the_mode_and_updater_works_without_it():
    # MXNet: Optimizer.allow_np_array is is_np_array() at creation; an Updater whose optimizer
    # lacks it (made before it existed) falls back to the current mode
    opt = mx.optimizer.SGD(learning_rate=0.5)
    assert opt.allow_np_array is False
    mx.npx.set_np()
    try:
        assert mx.optimizer.SGD().allow_np_array is True
        delattr(opt, 'allow_np_array')
        updater = mx.optimizer.Updater(opt)
        w = mx.np.ones((2,))
        updater(0, mx.np.ones((2,)), w)
        updater(1, mx.np.ones((0, 0)), mx.np.zeros((0, 0)))
    finally:
        mx.npx.reset_np()
    assert w.asnumpy().tolist() == [0.5, 0.5]


def test_optimizer_made_outside_np_mode_updates_np_weights_in_place():
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.9)
    updater = mx.optimizer.get_updater(opt)
    w = mx.np.ones((3,))
    updater(0, mx.np.ones((3,)), w)
    assert w.asnumpy().tolist() == [0.5] * 3
    assert not updater.states[0]._is_np_array     # it worked on a classic view, as MXNet's
