"""gluon.Parameter, Constant and ParameterDict."""
import os
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import gluon


def _param(shape=(2,), value=3.0, **kwargs):
    p = gluon.Parameter('w', shape=shape, init=mx.init.Constant(value), **kwargs)
    p.initialize()
    return p


def test_defaults_and_repr():
    p = gluon.Parameter('weight', shape=(2, 3))
    assert (p.name, p.shape, p.grad_req, p.lr_mult, p.wd_mult, p.init) == \
        ('weight', (2, 3), 'write', 1.0, 1.0, None)
    assert repr(p) == "Parameter weight (shape=(2, 3), dtype=<class 'numpy.float32'>)"
    assert gluon.Parameter('b', shape=4).shape == (4,)


def test_initialize_data_and_grad():
    p = _param((2, 3), 1.5)
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((2, 3), 1.5))
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))
    assert p.list_ctx() == [mx.current_context()] and len(p.list_data()) == len(p.list_grad()) == 1


def test_initializer_precedence():
    q = gluon.Parameter('q', shape=(3,), init=mx.init.Constant(4.0))
    q.initialize(init=mx.init.Constant(9.0))                 # explicit argument first
    np.testing.assert_array_equal(q.data().asnumpy(), [9, 9, 9])
    r = gluon.Parameter('r', shape=(3,), init=mx.init.Constant(4.0))
    r.initialize(default_init=mx.init.Constant(9.0))         # then the parameter's own
    np.testing.assert_array_equal(r.data().asnumpy(), [4, 4, 4])
    z = gluon.Parameter('z', shape=(50,))
    z.initialize()                                           # then Uniform(0.07)
    assert np.abs(z.data().asnumpy()).max() <= 0.07


def test_set_data_zero_grad_and_backward_grad_reqs():
    p = _param((2, 2), 0.0)
    p.set_data(mx.nd.array([[1, 2], [3, 4]]))
    acc = _param((2,), 1.0, grad_req='add')
    for _ in range(2):
        with mx.autograd.record():
            y = (p.data() * 2).sum() + (acc.data() * 3).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.full((2, 2), 2.0))   # write
    np.testing.assert_array_equal(acc.grad().asnumpy(), [6, 6])               # add
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(p.data().asnumpy(), [[1, 2], [3, 4]])


def test_multi_context_and_reset_ctx():
    p = gluon.Parameter('w', shape=(2,), init=mx.init.Constant(3))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    d1 = p.data(mx.cpu(1))
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)] and d1.context == mx.cpu(1)
    assert d1 is not p.data(mx.cpu(0))
    with pytest.raises(RuntimeError, match='was not initialized on context cpu\\(2\\)'):
        p.data(mx.cpu(2))
    p.data(mx.cpu(1))[:] = 5                     # reset_ctx keeps the mean of the copies
    p.reset_ctx(mx.cpu(2))
    assert p.list_ctx() == [mx.cpu(2)]
    np.testing.assert_array_equal(p.data().asnumpy(), [4, 4])


def test_grad_req_null_and_invalid():
    p = _param(grad_req='null')
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    with pytest.raises(RuntimeError):
        p.list_grad()
    q = _param()
    q.grad_req = 'null'
    with pytest.raises(RuntimeError):
        q.grad()
    q.grad_req = 'write'
    np.testing.assert_array_equal(q.grad().asnumpy(), [0, 0])
    with pytest.raises(AssertionError, match='grad_req must be one of'):
        gluon.Parameter('w', grad_req='nope')
    assert gluon.Parameter('w', differentiable=False).grad_req == 'null'


def test_cast_and_dtype():
    p = _param(value=0.5)
    p.cast('float16')
    assert p.dtype == 'float16' and p.data().dtype == np.float16 and p.grad().dtype == np.float16
    q = _param(dtype='float64')
    assert q.data().dtype == np.float64
    q.dtype = 'float32'
    assert q.data().dtype == np.float32


def test_initialize_twice_warns_force_reinit_replaces():
    p = _param(value=1.0)
    with pytest.warns(UserWarning, match='already initialized'):
        p.initialize(init=mx.init.Zero())
    np.testing.assert_array_equal(p.data().asnumpy(), [1, 1])
    p.initialize(init=mx.init.Constant(7), force_reinit=True)
    np.testing.assert_array_equal(p.data().asnumpy(), [7, 7])


def test_uninitialized_and_deferred_errors():
    with pytest.raises(RuntimeError, match="Parameter 'w' has not been initialized"):
        gluon.Parameter('w', shape=(2,)).data()
    with pytest.raises(ValueError, match='invalid shape'):
        gluon.Parameter('w', shape=(2, 0)).initialize()
    p = gluon.Parameter('w', shape=(2, 0), allow_deferred_init=True)
    p.initialize(init=mx.init.One())
    with pytest.raises(gluon.parameter.DeferredInitializationError, match='deferred'):
        p.data()
    assert issubclass(gluon.parameter.DeferredInitializationError, mx.base.MXNetError)
    assert p.list_ctx() == [mx.current_context()]
    p.shape = (2, 3)
    p._finish_deferred_init()
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 3)))
    with pytest.raises(AssertionError, match='incompatible'):
        p.shape = (2, 4)


def test_set_data_before_deferred_forward_is_kept():
    p = gluon.Parameter('w', shape=(0,), allow_deferred_init=True)
    p.initialize(init=mx.init.One())
    p.set_data(mx.nd.array([5, 6]))
    p._finish_deferred_init()
    np.testing.assert_array_equal(p.data().asnumpy(), [5, 6])


def test_constant():
    c = gluon.Constant('c', mx.nd.array([1, 2]))
    c.initialize()
    assert repr(c) == "Constant c (shape=(2,), dtype=<class 'numpy.float32'>)"
    np.testing.assert_array_equal(c.data().asnumpy(), [1, 2])
    with pytest.warns(UserWarning, match='does not support grad_req'):
        c.grad_req = 'write'
    assert c.grad_req == 'null'


def test_parameter_dict_get_update_and_constants():
    pd = gluon.ParameterDict('model_')
    w = pd.get('w', shape=(2, 0))
    assert pd.get('w', shape=(2, 5)) is w and w.shape == (2, 5)     # completes unknown dims
    with pytest.raises(AssertionError, match='does not match'):
        pd.get('w', lr_mult=3.0)
    c = pd.get_constant('c', [1, 2])
    with pytest.raises(KeyError, match='No constant named'):
        pd.get_constant('missing')
    pd.initialize(mx.init.One())
    assert sorted(pd.keys()) == ['model_c', 'model_w'] and w.name == 'model_w'
    np.testing.assert_array_equal(c.data().asnumpy(), [1, 2])
    other = gluon.ParameterDict('model_')
    other.get('w', shape=(2, 5))
    with pytest.raises(AssertionError, match='different Parameters'):
        pd.update(other)
    shared = gluon.ParameterDict('model_', shared=pd)
    assert shared.get('w') is w


def test_parameter_dict_repr_setattr_zero_grad():
    pd = gluon.ParameterDict('p_')
    pd.get('a', shape=(1,))
    pd.get('b', shape=(2,), dtype='float16')
    assert repr(pd) == ("p_ (\n  Parameter p_a (shape=(1,), dtype=<class 'numpy.float32'>)\n"
                        "  Parameter p_b (shape=(2,), dtype=float16)\n)")
    pd.setattr('lr_mult', 0.5)
    assert [p.lr_mult for p in pd.values()] == [0.5, 0.5]
    pd.initialize(mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    assert pd.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    for g in pd['p_a'].list_grad():
        g[:] = 3
    pd.zero_grad()
    assert all(g.asnumpy().sum() == 0 for g in pd['p_a'].list_grad())


def test_parameter_dict_save_load(tmp_path):
    src = gluon.ParameterDict('net_')
    src.get('weight', shape=(2, 2), init=mx.init.Constant(2.0))
    src.get('bias', shape=(2,), init=mx.init.One())
    src.initialize()
    full, stripped = str(tmp_path / 'full.params'), str(tmp_path / 'stripped.params')
    src.save(full)
    src.save(stripped, strip_prefix='net_')
    assert sorted(mx.nd.load(full)) == ['net_bias', 'net_weight']
    assert sorted(mx.nd.load(stripped)) == ['bias', 'weight']
    with pytest.raises(ValueError, match='is to be striped'):
        src.save(str(tmp_path / 'x.params'), strip_prefix='other_')

    dst = gluon.ParameterDict('net_')
    dst.get('weight', shape=(2, 0), allow_deferred_init=True)
    dst.get('bias', shape=(2,))
    dst.load(stripped, ctx=mx.cpu(1), restore_prefix='net_')
    np.testing.assert_array_equal(dst['net_weight'].data().asnumpy(), np.full((2, 2), 2.0))
    assert dst['net_weight'].list_ctx() == [mx.cpu(1)]

    small = gluon.ParameterDict('net_')
    small.get('weight', shape=(2, 2))
    with pytest.raises(AssertionError, match="Parameter 'bias' loaded from"):
        small.load(stripped, restore_prefix='net_')
    small.load(stripped, restore_prefix='net_', ignore_extra=True)
    big = gluon.ParameterDict('net_')
    big.get('weight', shape=(2, 2))
    big.get('extra', shape=(1,))
    with pytest.raises(AssertionError, match="Parameter 'extra' is missing"):
        big.load(stripped, restore_prefix='net_')
    big.load(stripped, restore_prefix='net_', allow_missing=True, ignore_extra=True)
    assert os.path.getsize(stripped) > 0


def test_load_dict_prefixes_dtype_and_shape_checks():
    pd = gluon.ParameterDict()
    pd.get('fc_weight', shape=(2,))
    pd.get('bn_moving_mean', shape=(2,), grad_req='null')
    pd.load_dict({'arg:fc_weight': mx.nd.array([1, 2]), 'aux:bn_moving_mean': mx.nd.array([3, 4])})
    np.testing.assert_array_equal(pd['bn_moving_mean'].data().asnumpy(), [3, 4])
    with pytest.raises(AssertionError, match='dtype incompatible'):
        pd.load_dict({'fc_weight': mx.nd.array([1, 2], dtype='float64'),
                      'bn_moving_mean': mx.nd.array([3, 4])})
    pd.load_dict({'fc_weight': mx.nd.array([1, 2], dtype='float64'),
                  'bn_moving_mean': mx.nd.array([3, 4])}, cast_dtype=True)
    assert pd['fc_weight'].data().dtype == np.float32
    with pytest.raises(AssertionError, match='shape incompatible'):
        pd.load_dict({'fc_weight': mx.nd.zeros((3,)), 'bn_moving_mean': mx.nd.zeros((2,))})


def test_initialize_twice_through_dict_keeps_values():
    pd = gluon.ParameterDict()
    pd.get('w', shape=(2,))
    pd.initialize(mx.init.One())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        pd.initialize(mx.init.Zero())
    assert any(issubclass(w.category, UserWarning) for w in caught)
    np.testing.assert_array_equal(pd['w'].data().asnumpy(), [1, 1])


def test_set_data_under_pause_between_forward_and_backward():
    # example/gluon/sn_gan's spectral normalization: the forward uses the estimate u, then
    # stores the new estimate with set_data under autograd.pause(); MXNet's backward then
    # runs and reads u's new value (its arrays carry no version for autograd to check)
    u = mx.gluon.Parameter('u', shape=(1, 3))
    w = mx.gluon.Parameter('w', shape=(3, 2))
    u.initialize(mx.init.Constant(1.0))
    w.initialize(mx.init.Constant(0.5))
    with mx.autograd.record():
        y = mx.nd.dot(u.data(), w.data()).sum()
        with mx.autograd.pause():
            u.set_data(mx.nd.array([[2.0, 3.0, 4.0]]))
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [3.0])
    np.testing.assert_allclose(w.grad().asnumpy(), [[2.0, 2.0], [3.0, 3.0], [4.0, 4.0]])
    np.testing.assert_allclose(u.grad().asnumpy(), [[1.0, 1.0, 1.0]])
    u.set_data(np.array([[5.0, 6.0, 7.0]]))          # numpy data, as before
    np.testing.assert_allclose(u.data().asnumpy(), [[5.0, 6.0, 7.0]])


def test_set_data_after_recorded_forward_reaches_inference_graphs():
    """A write into a parameter that a recorded graph saved goes past torch's version counter
    (the recorded backward reads the new value, as MXNet's); graphs that keep prepacked or
    frozen parameters by those counters must still see it."""
    def make():
        net = mx.gluon.nn.HybridSequential()
        net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=2), mx.gluon.nn.BatchNorm(in_channels=4),
                mx.gluon.nn.Activation('relu'))
        net.initialize(mx.init.Xavier())
        return net
    net, twin = make(), make()
    for p, q in zip(net.collect_params().values(), twin.collect_params().values()):
        q.set_data(p.data())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (1, 2, 6, 6)))
    np.testing.assert_allclose(net(x).asnumpy(), twin(x).asnumpy(), rtol=1e-5, atol=1e-6)
    weight = net[0].weight
    with mx.autograd.record():
        loss = net(x).sum()
        twin_loss = twin(x).sum()       # (the same moving statistics)
    new = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, weight.shape))
    weight.set_data(new)
    twin[0].weight.set_data(new)
    loss.backward()         # reads the new weight (no version error)
    twin_loss.backward()
    np.testing.assert_allclose(net(x).asnumpy(), twin(x).asnumpy(), rtol=1e-5, atol=1e-6)
