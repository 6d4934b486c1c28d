"""gluon.Block and HybridBlock: naming, parameters, deferred init, save/load, hooks, repr, summary."""
import contextlib
import io

import numpy as np
import pytest

import neomx as mx
from neomx import gluon
from neomx.gluon import nn


def _keys(block, select=None):
    return sorted(block.collect_params(select).keys())


class _Scaled(gluon.HybridBlock):
    """A custom block: its own parameter plus nested children, all in name_scope."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.fc = nn.Dense(2, in_units=3)
            self.inner = nn.HybridSequential()
            with self.inner.name_scope():
                self.inner.add(nn.Dense(2, in_units=2))
            self.scale = self.params.get('scale', shape=(1,), init=mx.init.Constant(2.0))

    def hybrid_forward(self, F, x, scale):
        return F.broadcast_mul(self.inner(self.fc(x)), scale)


# ------------------------------------------------------------------ naming
def test_top_level_counters_and_name_scope():
    with mx.name.NameManager():
        a, b, c = nn.Dense(2), nn.Dense(2), nn.Conv2D(4, 3)
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(2), nn.Dense(2))
        outside = nn.HybridSequential()
        outside.add(nn.Dense(2))
    assert [a.prefix, b.prefix, c.prefix, a.name] == ['dense0_', 'dense1_', 'conv0_', 'dense0']
    assert _keys(net) == ['hybridsequential0_dense0_bias', 'hybridsequential0_dense0_weight',
                          'hybridsequential0_dense1_bias', 'hybridsequential0_dense1_weight']
    assert _keys(outside) == ['dense2_bias', 'dense2_weight']      # created outside name_scope
    assert sorted(net.params.keys()) == []                        # own parameters only


def test_custom_block_and_explicit_prefix_names():
    with mx.name.NameManager():
        a, b = _Scaled(), _Scaled()
        fixed = nn.HybridSequential(prefix='model_')
        with fixed.name_scope():
            fixed.add(nn.Dense(2, prefix='out_'), nn.Dense(2))
    assert _keys(a) == ['_scaled0_dense0_bias', '_scaled0_dense0_weight',
                        '_scaled0_hybridsequential0_dense0_bias',
                        '_scaled0_hybridsequential0_dense0_weight', '_scaled0_scale']
    assert b.prefix == '_scaled1_'
    assert _keys(fixed) == ['model_dense0_bias', 'model_dense0_weight', 'model_out_bias',
                            'model_out_weight']


def test_collect_params_select_regex():
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(2), nn.BatchNorm())
    assert _keys(net, '.*weight') == ['hybridsequential0_dense0_weight']
    assert _keys(net, '.*bias|.*gamma') == ['hybridsequential0_batchnorm0_gamma',
                                           'hybridsequential0_dense0_bias']
    assert net.collect_params().prefix == 'hybridsequential0_'


def test_setattr_registers_and_guards_types():
    d = nn.Dense(2, in_units=2)
    assert list(d._reg_params) == ['weight', 'bias'] and list(d._children) == []
    with pytest.raises(TypeError, match='Changing attribute type'):
        d.weight = nn.Dense(3)
    with pytest.raises(AssertionError, match='Overriding Parameter'):
        d.weight = d.bias
    with pytest.raises(ValueError, match='Children of HybridBlock must also be HybridBlock'):
        nn.HybridSequential().add(nn.Lambda('tanh'))


def test_share_params():
    a = nn.Dense(2, in_units=2)
    b = nn.Dense(2, in_units=2, params=a.collect_params())
    assert a.weight is b.weight
    a.initialize(mx.init.One())
    b.weight.set_data(mx.nd.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(a(mx.nd.array([[1, 1]])).asnumpy(), [[3, 7]])


# -------------------------------------------------------- deferred shapes
def test_deferred_init_completes_shapes_from_operator():
    d = nn.Dense(3)
    d.initialize(mx.init.One())
    assert d.weight.shape == (3, 0)
    with pytest.raises(gluon.parameter.DeferredInitializationError):
        d.weight.data()
    out = d(mx.nd.ones((2, 5)))
    assert d.weight.shape == (3, 5)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 5.0))


def test_deferred_init_through_a_custom_block_parameter():
    class Affine(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get('w', shape=(4, 0), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.FullyConnected(x, w, num_hidden=4, no_bias=True)

    blk = Affine()
    blk.initialize(mx.init.One())
    assert blk(mx.nd.ones((1, 3))).shape == (1, 4) and blk.w.shape == (4, 3)


def test_deferred_param_used_by_non_inferring_operator_is_a_clear_error():
    class Scale(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.s = self.params.get('s', shape=(0,), allow_deferred_init=True)

        def hybrid_forward(self, F, x, s):
            return F.broadcast_mul(x, s)

    blk = Scale()
    blk.initialize()
    with pytest.raises(gluon.parameter.DeferredInitializationError, match='broadcast_mul'):
        blk(mx.nd.ones((2, 3)))


def test_wrong_input_shape_names_layer_and_shapes():
    d = nn.Dense(3)
    d.initialize()
    d(mx.nd.ones((2, 5)))
    with pytest.raises(mx.base.MXNetError, match=r"layer '%s' \(Dense\) with input shapes \[\(2, 4\)\]"
                       % d.name):
        d(mx.nd.ones((2, 4)))


def test_initialize_keeps_layer_initializers_and_warns_twice():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=2), nn.BatchNorm(in_channels=2))
    net.initialize(mx.init.Constant(0.5))
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(), np.full((2, 2), 0.5))
    np.testing.assert_array_equal(net[0].bias.data().asnumpy(), [0, 0])
    np.testing.assert_array_equal(net[1].running_var.data().asnumpy(), [1, 1])
    with pytest.warns(UserWarning):
        net.initialize()
    net.initialize(mx.init.Constant(3), force_reinit=True)
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(), np.full((2, 2), 3.0))


def test_cast_zero_grad_and_reset_ctx():
    d = nn.Dense(2, in_units=2)
    d.initialize(mx.init.One())
    with mx.autograd.record():
        y = d(mx.nd.ones((1, 2))).sum()
    y.backward()
    np.testing.assert_array_equal(d.weight.grad().asnumpy(), np.ones((2, 2)))
    d.zero_grad()
    np.testing.assert_array_equal(d.weight.grad().asnumpy(), np.zeros((2, 2)))
    d.cast('float64')
    assert d(mx.nd.array([[1, 2]], dtype='float64')).dtype == np.float64
    d.reset_ctx(mx.cpu(1))
    assert d.weight.list_ctx() == [mx.cpu(1)]


def test_hybridize_records_flags_and_stays_correct():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize(mx.init.One())
    net.hybridize(static_alloc=True)
    assert net._active and net[0]._active and ('static_alloc', True) in net._flags
    np.testing.assert_array_equal(net(mx.nd.ones((1, 2))).asnumpy(), [[2, 2]])


# ------------------------------------------------------------ save / load
def _dense_bn():
    net = nn.HybridSequential()
    inner = nn.HybridSequential()
    inner.add(nn.Dense(2, in_units=2), nn.BatchNorm(in_channels=2))
    net.add(inner, nn.Dense(1, in_units=2))
    return net


def test_save_parameters_structural_names_and_round_trip(tmp_path):
    a = _dense_bn()
    a.initialize(mx.init.Uniform(1.0))
    fname = str(tmp_path / 'net.params')
    a.save_parameters(fname)
    assert sorted(mx.nd.load(fname)) == ['0.0.bias', '0.0.weight', '0.1.beta', '0.1.gamma',
                                         '0.1.running_mean', '0.1.running_var', '1.bias',
                                         '1.weight']
    b = _dense_bn()                   # other automatic prefixes: structural names still match
    b.load_parameters(fname, ctx=mx.current_context())
    x = mx.nd.array([[0.5, -1.0], [2.0, 0.25]])
    np.testing.assert_allclose(a(x).asnumpy(), b(x).asnumpy())


def test_deprecated_save_params_load_params_warn_and_round_trip(tmp_path):
    # MXNet 1.9.1 warns on both deprecated names (example/gluon/word_language_model uses them)
    def net():
        seq = nn.HybridSequential()
        with seq.name_scope():      # save_params strips the block's prefix from every name
            seq.add(nn.Dense(2, in_units=2), nn.BatchNorm(in_channels=2))
        return seq
    a = net()
    a.initialize(mx.init.Uniform(1.0))
    fname = str(tmp_path / 'net.params')
    with pytest.warns(UserWarning, match='save_params is deprecated. Please use save_parameters'):
        a.save_params(fname)
    assert sorted(mx.nd.load(fname)) == ['batchnorm0_beta', 'batchnorm0_gamma', 'batchnorm0_running_mean',
                                         'batchnorm0_running_var', 'dense0_bias', 'dense0_weight']
    b = net()                       # other automatic prefixes: the stripped names still match
    b.initialize(mx.init.Zero())
    with pytest.warns(UserWarning, match='load_params is deprecated. Please use load_parameters.'):
        b.load_params(fname, mx.current_context())
    x = mx.nd.array([[0.5, -1.0], [2.0, 0.25]])
    np.testing.assert_allclose(a(x).asnumpy(), b(x).asnumpy())


def test_load_parameters_missing_extra_and_shape_errors(tmp_path):
    small, big = nn.HybridSequential(), nn.HybridSequential()
    small.add(nn.Dense(2, in_units=2))
    big.add(nn.Dense(2, in_units=2), nn.Dense(1, in_units=2))
    small.initialize(mx.init.One())
    big.initialize(mx.init.Constant(3.0))
    f_small, f_big = str(tmp_path / 's.params'), str(tmp_path / 'b.params')
    small.save_parameters(f_small)
    big.save_parameters(f_big)
    with pytest.raises(AssertionError, match="Parameter '1.weight' is missing"):
        big.load_parameters(f_small)
    with pytest.raises(ValueError, match=r"Parameter '1\.(weight|bias)' loaded from file"):
        small.load_parameters(f_big)
    big.load_parameters(f_small, allow_missing=True)
    small.load_parameters(f_big, ignore_extra=True)
    np.testing.assert_array_equal(big[0].weight.data().asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(big[1].weight.data().asnumpy(), np.full((1, 2), 3.0))
    np.testing.assert_array_equal(small[0].weight.data().asnumpy(), np.full((2, 2), 3.0))

    single = nn.Dense(2, in_units=3)             # no dots in the keys: matched by full name
    single.initialize()
    single.save_parameters(f_small)
    other = nn.Dense(2, in_units=4)
    other.initialize()
    with pytest.raises(AssertionError, match='shape incompatible'):
        other.load_parameters(f_small)


def test_load_parameters_cast_dtype(tmp_path):
    d = nn.Dense(2, in_units=2, dtype='float64')
    d.initialize(mx.init.One())
    fname = str(tmp_path / 'd.params')
    d.save_parameters(fname)
    e = nn.Dense(2, in_units=2)
    with pytest.raises(AssertionError, match='cast_dtype=True'):
        e.load_parameters(fname)
    e.load_parameters(fname, cast_dtype=True)
    assert e.weight.data().dtype == np.float32


# ------------------------------------------------------ hooks, apply, repr
def test_forward_hooks_and_detach():
    net = nn.Dense(2, in_units=2)
    net.initialize(mx.init.One())
    calls = []
    pre = net.register_forward_pre_hook(lambda blk, inp: calls.append(('pre', len(inp))))
    post = net.register_forward_hook(lambda blk, inp, out: calls.append(('post', out.shape)))
    net(mx.nd.ones((1, 2)))
    pre.detach()
    net(mx.nd.ones((3, 2)))
    post.detach()
    net(mx.nd.ones((1, 2)))
    assert calls == [('pre', 1), ('post', (1, 2)), ('post', (3, 2))]


def test_apply_visits_children_first():
    net = nn.HybridSequential()
    net.add(nn.Dense(2), nn.Activation('relu'))
    seen = []
    assert net.apply(lambda b: seen.append(type(b).__name__)) is net
    assert seen == ['Dense', 'Activation', 'HybridSequential']


def test_repr_matches_mxnet():
    class Two(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.a = nn.Dense(2)
                self.b = nn.HybridSequential()
                self.b.add(nn.Dense(3))

    assert repr(Two()) == ('Two(\n  (a): Dense(None -> 2, linear)\n  (b): HybridSequential(\n'
                           '    (0): Dense(None -> 3, linear)\n  )\n)')


def test_summary_table():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3, activation='relu'), nn.BatchNorm(in_channels=4),
            nn.Dense(2, in_units=4))
    net.initialize()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert net.summary(mx.nd.ones((2, 3))) is None
    lines = buf.getvalue().splitlines()
    assert lines[1] == '        Layer (type)                                Output Shape         Param #'
    assert lines[3].split() == ['Input', '(2,', '3)', '0']
    assert [line.split()[0] for line in lines[4:8]] == ['Activation-1', 'Dense-2', 'BatchNorm-3',
                                                        'Dense-4']
    assert lines[6].split()[-1] == '16' and lines[7].split()[-1] == '10'
    assert lines[10:13] == ['   Total params: 42', '   Trainable params: 34',
                            '   Non-trainable params: 8']
    assert not net[0]._forward_hooks          # the summary hooks are removed again


def test_block_save_load_restores_names_parameters_and_hybridization(tmp_path):
    def build():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(3, activation='relu'), mx.gluon.nn.Dense(2))
        return net
    net = build()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(4, 5))
    want = net(x).asnumpy()
    prefix = str(tmp_path / 'model')
    net.save(prefix)
    other = build()             # built later: other automatic names
    assert other.name != net.name
    other.load(prefix)
    assert other.name == net.name and sorted(other.collect_params()) == sorted(net.collect_params())
    assert other._active
    other.collect_params().reset_ctx(mx.current_context())     # load() loads on cpu, as MXNet's
    np.testing.assert_allclose(other(x).asnumpy(), want, rtol=1e-6)
