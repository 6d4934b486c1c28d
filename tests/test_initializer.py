"""mx.init: exact initializers, statistics of random ones, name dispatch, registry, dumps."""
import json
import math
import warnings

import numpy as np
import pytest

import neomx as mx


def _fill(init, shape, name='w_weight'):
    arr = mx.nd.zeros(shape)
    init(mx.init.InitDesc(name), arr)
    return arr.asnumpy()


def test_constant_zero_one_exact():
    np.testing.assert_array_equal(_fill(mx.init.Constant(2.5), (2, 3)), np.full((2, 3), 2.5))
    np.testing.assert_array_equal(_fill(mx.init.Zero(), (3,)), np.zeros(3))
    np.testing.assert_array_equal(_fill(mx.init.One(), (2, 2)), np.ones((2, 2)))
    values = mx.nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(_fill(mx.init.Constant(values), (2, 2)), [[1, 2], [3, 4]])


def test_uniform_and_normal_statistics():
    mx.random.seed(1)
    w = _fill(mx.init.Uniform(0.3), (100, 50))
    assert np.abs(w).max() <= 0.3 and np.abs(w).max() > 0.27 and abs(w.mean()) < 0.02
    assert np.abs(_fill(mx.init.Uniform(), (1000,))).max() <= 0.07
    n = _fill(mx.init.Normal(0.5), (200, 50))
    assert 0.45 < n.std() < 0.55 and abs(n.mean()) < 0.03


@pytest.mark.parametrize('factor_type', ['avg', 'in', 'out'])
def test_xavier_uniform_bound(factor_type):
    shape = (64, 32, 3, 3)
    fan_in, fan_out = 32 * 9, 64 * 9
    factor = {'avg': (fan_in + fan_out) / 2.0, 'in': fan_in, 'out': fan_out}[factor_type]
    bound = math.sqrt(3.0 / factor)
    w = _fill(mx.init.Xavier('uniform', factor_type, 3), shape)
    assert np.abs(w).max() <= bound * (1 + 1e-6) and np.abs(w).max() > 0.9 * bound


def test_xavier_gaussian_and_msra_std():
    w = _fill(mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2), (300, 200))
    assert abs(w.std() / math.sqrt(2.0 / 200) - 1) < 0.1
    m = _fill(mx.init.MSRAPrelu(factor_type='in', slope=0.0), (128, 64, 3, 3))
    assert abs(m.std() / math.sqrt(2.0 / (64 * 9)) - 1) < 0.1


def test_xavier_errors_and_defaults():
    with pytest.raises(ValueError, match='at least 2D'):
        _fill(mx.init.Xavier(), (3,))
    with pytest.raises(ValueError, match='factor type'):
        _fill(mx.init.Xavier(factor_type='nope'), (3, 3))
    x = mx.init.Xavier()
    assert (x.rnd_type, x.factor_type, x.magnitude) == ('uniform', 'avg', 3.0)


def test_orthogonal():
    rows = _fill(mx.init.Orthogonal(scale=1.0), (4, 8))
    np.testing.assert_allclose(rows @ rows.T, np.eye(4), atol=1e-5)
    cols = _fill(mx.init.Orthogonal(scale=2.0, rand_type='normal'), (8, 2, 2))
    flat = cols.reshape(8, 4)
    np.testing.assert_allclose(flat.T @ flat, 4 * np.eye(4), atol=1e-4)


def test_bilinear_matches_mxnet():
    corner, edge, centre = 0.0625, 0.1875, 0.5625    # recorded from MXNet 1.9.1
    k4 = _fill(mx.init.Bilinear(), (1, 1, 4, 4))[0, 0]
    np.testing.assert_array_equal(k4[0], [corner, edge, edge, corner])
    np.testing.assert_array_equal(k4[1], [edge, centre, centre, edge])
    k3 = _fill(mx.init.Bilinear(), (2, 1, 3, 3))
    np.testing.assert_array_equal(k3[1, 0], [[corner, edge, edge], [edge, centre, centre],
                                             [edge, centre, centre]])


def test_lstm_bias_sets_forget_gate():
    np.testing.assert_array_equal(_fill(mx.init.LSTMBias(), (8,)), [0, 0, 1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(_fill(mx.init.LSTMBias(3.0), (4,)), [0, 3, 0, 0])


@pytest.mark.parametrize('name, expected', [('fc_weight', 0.5), ('fc_bias', 0.0), ('bn_gamma', 1.0),
                                            ('bn_beta', 0.0), ('x_min', 0.0), ('x_max', 1.0)])
def test_name_suffix_dispatch(name, expected):
    arr = mx.nd.ones((2, 2)) * 7
    mx.init.Constant(0.5)(mx.init.InitDesc(name), arr)
    np.testing.assert_array_equal(arr.asnumpy(), np.full((2, 2), expected))


@pytest.mark.parametrize('name', ['unknown', 'moving_mean', 'bn_running_var'])
def test_unknown_suffix_raises_value_error(name):
    with pytest.raises(ValueError, match='Unknown initialization pattern for %s' % name):
        mx.init.Uniform()(mx.init.InitDesc(name), mx.nd.zeros((2,)))


def test_legacy_string_name_knows_running_statistics():
    arr = mx.nd.zeros((2,))
    with pytest.warns(DeprecationWarning):
        mx.init.Uniform()('bn_moving_var', arr)
    np.testing.assert_array_equal(arr.asnumpy(), [1, 1])


def test_init_attribute_overrides_name():
    arr = mx.nd.zeros((3,))
    desc = mx.init.InitDesc('fc_bias', attrs={'__init__': mx.init.Constant(9).dumps()})
    mx.init.Uniform()(desc, arr)
    np.testing.assert_array_equal(arr.asnumpy(), [9, 9, 9])
    assert desc.global_init is not None


def test_mixed_matches_from_the_start_of_the_name():
    init = mx.init.Mixed(['bias', '.*'], [mx.init.Constant(1.5), mx.init.Constant(-2.0)])
    bias, weight = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    init(mx.init.InitDesc('fc_bias'), bias)        # '.*' wins; Constant keeps biases at 0
    init(mx.init.InitDesc('fc_weight'), weight)
    np.testing.assert_array_equal(bias.asnumpy(), [0, 0])
    np.testing.assert_array_equal(weight.asnumpy(), [-2, -2])
    with pytest.raises(ValueError, match='did not match any pattern'):
        mx.init.Mixed(['a'], [mx.init.One()])(mx.init.InitDesc('b'), bias)


def test_load_with_default():
    load = mx.init.Load({'arg:fc_weight': mx.nd.array([1, 2])}, default_init=mx.init.One())
    w, b = mx.nd.zeros((2,)), mx.nd.zeros((3,))
    load('fc_weight', w)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        load('fc_gamma', b)
    np.testing.assert_array_equal(w.asnumpy(), [1, 2])
    np.testing.assert_array_equal(b.asnumpy(), [1, 1, 1])
    with pytest.raises(AssertionError, match='Shape mismatch'):
        load('fc_weight', mx.nd.zeros((3,)))


def test_dumps_and_create_round_trip():
    assert json.loads(mx.init.Xavier(magnitude=2).dumps()) == \
        ['xavier', {'rnd_type': 'uniform', 'factor_type': 'avg', 'magnitude': 2}]
    assert json.loads(mx.init.Constant(mx.nd.array([1, 2])).dumps()) == ['constant', {'value': [1.0, 2.0]}]
    assert json.loads(mx.init.MSRAPrelu().dumps()) == ['msraprelu', {'factor_type': 'avg', 'slope': 0.25}]
    rebuilt = mx.init.create(mx.init.Normal(0.5).dumps())
    assert isinstance(rebuilt, mx.init.Normal) and rebuilt.sigma == 0.5


def test_create_by_name_and_register():
    assert type(mx.init.create('zeros')) is mx.init.Zero
    assert type(mx.init.create('Xavier')) is mx.init.Xavier
    assert type(mx.init.create('msraprelu')) is mx.init.MSRAPrelu
    with pytest.raises(AssertionError, match='nope is not registered'):
        mx.init.create('nope')

    @mx.init.register
    class Twos(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 2

    np.testing.assert_array_equal(_fill(mx.init.create('twos'), (2,)), [2, 2])
