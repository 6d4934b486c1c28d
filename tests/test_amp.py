"""mx.contrib.amp: MXNet 1.9.1's mixed precision (lists, init's casts, loss scaling, conversion)."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon
from neomx.base import bfloat16
from neomx.contrib import amp
from neomx.contrib.amp import amp as amp_module


@pytest.fixture(autouse=True)
def _amp_undone_after_each_test():
    """amp.init patches mx.nd and mx.sym for the whole process: undo it after every test."""
    yield
    amp_module._deinit()


@pytest.fixture
def amp_bf16():
    """amp.init('bfloat16'), the test on a CPU context: MXNet 1.9.1 casts NDArrays to bfloat16
    on CPUs only (on GPUs between float16 and float32), also under ``--default-context``."""
    amp.init('bfloat16')
    with mx.cpu():
        yield


def _nodes(sym):
    return [(n['op'], n['name'], n.get('attrs', {}).get('dtype'), n['inputs'])
            for n in json.loads(sym.tojson(remove_amp_cast=False))['nodes']]


def test_lists_are_mxnets():
    assert amp.list_lp16_ops('bfloat16') == ['Convolution', 'FullyConnected']
    assert amp.list_lp16_ops('float16')[:2] == ['Convolution', 'Deconvolution']
    assert ('Activation', 'act_type', ['softrelu']) in amp.list_conditional_fp32_ops('bfloat16')
    assert amp.list_lp16_use_fp32_params('float16') is None
    assert amp.list_lp16_use_fp32_params('bfloat16')['BatchNorm'][1:] == ['gamma', 'beta', 'moving_mean',
                                                                         'moving_var']
    assert 'softmax' in amp.list_fp32_ops('bfloat16') and 'elemwise_add' in amp.list_widest_type_cast('float16')
    assert amp.list_loss_output_functions('bfloat16') == ['SoftmaxOutput', 'LinearRegressionOutput',
                                                         'LogisticRegressionOutput', 'MAERegressionOutput']
    with pytest.raises(AssertionError):
        amp.list_fp32_ops('float64')


def test_convert_symbol_inserts_casts_as_mxnet():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    with mx.name.NameManager():     # automatic names counted from 0
        res = mx.sym.FullyConnected(x, y, num_hidden=10, no_bias=True) + mx.sym.sin(y)
    conv = amp.convert_symbol(res, target_dtype='bfloat16', target_dtype_ops=['FullyConnected'], fp32_ops=['sin'])
    # as MXNet 1.9.1 writes it: the FullyConnected output goes back to float32 for the sum
    assert _nodes(conv) == [
        ('null', 'x', None, []), ('amp_cast', 'x_amp_cast_bfloat16', 'bfloat16', [[0, 0, 0]]),
        ('null', 'y', None, []), ('amp_cast', 'y_amp_cast_bfloat16', 'bfloat16', [[2, 0, 0]]),
        ('FullyConnected', 'fullyconnected0', None, [[1, 0, 0], [3, 0, 0]]),
        ('amp_cast', 'fullyconnected0_output_amp_cast_float32', 'float32', [[4, 0, 0]]),
        ('sin', 'sin0', None, [[2, 0, 0]]), ('elemwise_add', '_plus0', None, [[5, 0, 0], [6, 0, 0]])]
    # tojson() (and save) drop the casts, as MXNet's remove_amp_cast=True
    assert conv.tojson() == res.tojson()
    out = conv.eval(x=mx.nd.ones((10, 10)), y=mx.nd.ones((10, 10)))[0]
    assert out.dtype == np.float32 and np.allclose(out.asnumpy(), 10 + np.sin(1), rtol=1e-2)


def test_convert_symbol_refuses_bad_lists():
    res = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2)
    with pytest.raises(AssertionError, match='two or more lists'):
        amp.convert_symbol(res, target_dtype='bfloat16', target_dtype_ops=['FullyConnected'],
                           fp32_ops=['FullyConnected'])
    with pytest.raises(AssertionError, match='not in any of them'):
        amp.convert_symbol(res, target_dtype='bfloat16', target_dtype_ops=['no_such_op'])
    with pytest.raises(AssertionError):
        amp.convert_symbol(res, target_dtype='float64')


def test_convert_model_types_parameters():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), name='conv')
    fc = mx.sym.FullyConnected(mx.sym.Activation(conv, act_type='relu'), num_hidden=3, name='fc')
    mod = mx.mod.Module(fc, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', (2, 1, 6, 6))])
    mod.init_params()
    args, auxs = mod.get_params()
    expected = mod.predict(mx.io.NDArrayIter(np.ones((2, 1, 6, 6), 'float32'), batch_size=2)).asnumpy()
    sym, args16, aux16 = amp.convert_model(fc, dict(args), dict(auxs), target_dtype='bfloat16',
                                           target_dtype_ops=['Convolution'], cast_optional_params=True)
    assert args16['conv_weight'].dtype == bfloat16     # read only through a cast to bfloat16
    assert args16['fc_weight'].dtype == bfloat16        # its data is bfloat16 (relu keeps the type)
    mod16 = mx.mod.Module(sym, data_names=['data'], label_names=None)
    mod16.bind(data_shapes=[('data', (2, 1, 6, 6))])
    mod16.set_params(args16, aux16)
    got = mod16.predict(mx.io.NDArrayIter(np.ones((2, 1, 6, 6), 'float32'), batch_size=2))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=0.05, atol=0.05)


def test_init_casts_ndarray_calls(amp_bf16):
    x, w = mx.nd.ones((2, 4)), mx.nd.ones((3, 4))
    y = mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=3)
    assert y.dtype == bfloat16 and np.allclose(y.asnumpy(), 4)
    assert mx.nd.relu(y).dtype == bfloat16            # runs in its input's type
    assert mx.nd.softmax(y).dtype == np.float32       # FP32_FUNCS
    assert (y + mx.nd.ones((2, 3))).dtype == np.float32   # widest type
    assert (y * 2).dtype == np.float32                # _mul_scalar is of FP32_FUNCS for bfloat16
    a = mx.nd.Activation(y, act_type='softrelu')      # conditional: float32 for softrelu only
    assert a.dtype == np.float32 and mx.nd.Activation(y, act_type='relu').dtype == bfloat16


def test_init_casts_symbols_as_mxnet(amp_bf16):
    with mx.name.NameManager():     # automatic names counted from 0
        fc = mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=3, name='fc')
    assert [n[:3] for n in _nodes(fc)] == [
        ('null', 'd', None), ('amp_cast', 'amp_cast0', 'bfloat16'), ('null', 'fc_weight', None),
        ('amp_cast', 'amp_cast1', 'bfloat16'), ('null', 'fc_bias', None), ('amp_cast', 'amp_cast2', 'bfloat16'),
        ('FullyConnected', 'fc', None)]
    assert [n[0] for n in _nodes(fc + fc)][-2:] == ['amp_multicast', 'elemwise_add']


def test_init_twice_and_unknown_names():
    amp.init('bfloat16')
    try:
        amp.init('float16')     # a second call changes nothing, as in MXNet 1.9.1
        assert mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((1, 2)), no_bias=True,
                                    num_hidden=1).dtype == bfloat16
    finally:
        amp_module._deinit()
    with pytest.raises(AttributeError):
        amp.init('bfloat16', target_precision_ops=['no_such_function'])
    amp_module._deinit()
    assert mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((1, 2)), no_bias=True,
                                num_hidden=1).dtype == np.float32


def test_init_trainer_errors():
    with pytest.raises(AssertionError, match='amp.init'):
        amp.init_trainer(None)
    amp.init('bfloat16')
    try:
        with pytest.raises(TypeError, match='only compatible with Gluon Trainer'):
            amp.init_trainer(mx.optimizer.SGD())
        with pytest.raises(TypeError, match='should be a Gluon Trainer'):
            amp.init_trainer(3)
    finally:
        amp_module._deinit()


def test_deferred_initialisation_runs_through_cast_operators(amp_bf16):
    # MXNet's AMP tutorial calls amp.init() before building a net whose shapes are deferred:
    # the first eager forward must infer them through the operators AMP wrapped
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Conv2D(3, 3), gluon.nn.Flatten(), gluon.nn.Dense(2))
    net.initialize(mx.init.One())
    out = net(mx.nd.ones((1, 2, 4, 4)))
    assert net[0].weight.shape == (3, 2, 3, 3) and net[2].weight.shape == (2, 12)
    assert out.dtype == bfloat16 and np.allclose(out.asnumpy().astype(np.float32), 12 * 18)   # biases start at 0


def _lenet():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3), gluon.nn.BatchNorm(), gluon.nn.Activation('relu'),
                gluon.nn.MaxPool2D(), gluon.nn.Flatten(), gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    return net


def test_hybridized_training_with_loss_scaling(amp_bf16):
    net = _lenet()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    amp.init_trainer(trainer)
    scaler = trainer._amp_loss_scaler
    assert scaler.loss_scale == 2. ** 16
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    data, label = mx.nd.random.uniform(shape=(6, 1, 8, 8)), mx.nd.array([0, 1, 2, 0, 1, 2])
    losses = []
    for _ in range(8):
        with autograd.record():
            out = net(data)
            loss = loss_fn(out, label)
            with amp.scale_loss(loss, trainer) as scaled:
                autograd.backward(scaled)
        trainer.step(6)
        losses.append(loss.mean().asscalar())
    assert out.dtype == bfloat16 and loss.dtype == np.float32
    assert all(p.data().dtype == np.float32 for p in net.collect_params().values())   # float32 masters
    assert losses[-1] < losses[0]
    graph = net._cached_graph.symbol
    assert [n[0] for n in _nodes(graph)].count('amp_cast') == 7       # as MXNet's traced graph


def test_overflowing_step_changes_no_weight(amp_bf16):
    net = gluon.nn.Dense(2, in_units=2)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    amp.init_trainer(trainer)
    before = net.weight.data().asnumpy().copy()
    with autograd.record():
        loss = net(mx.nd.array([[np.inf, 1.0]])).sum()
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    trainer.step(1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), before)
    assert trainer._amp_loss_scaler.loss_scale == 2. ** 16
    with autograd.record():
        loss = net(mx.nd.array([[1.0, 1.0]])).sum()
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    amp.unscale(trainer)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), np.ones((2, 2)), rtol=1e-6)
    trainer.step(1)
    assert not np.array_equal(net.weight.data().asnumpy(), before)
    # MXNet's scaler: the halving after an overflow applies from the next step it checks
    assert trainer._amp_loss_scaler.loss_scale == 2. ** 15


def test_loss_scaler_grows_after_2000_clean_steps():
    scaler = amp.loss_scaler.LossScaler()
    p = gluon.Parameter('w', shape=(2,))
    p.initialize()
    for _ in range(2000):
        assert not scaler.has_overflow([p])
    scaler.has_overflow([p])
    assert scaler.loss_scale == 2. ** 17


def test_convert_hybrid_block_runs_bf16():
    with mx.cpu():                      # bfloat16 conversion is for CPUs (ctx=mx.cpu() below)
        net = _lenet()
        x = mx.nd.random.uniform(shape=(2, 1, 8, 8))
    expected = net(x).asnumpy()
    converted = amp.convert_hybrid_block(net, target_dtype='bfloat16', ctx=mx.cpu())
    got = converted(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=0.1, atol=0.1)


def test_c_api_lists_operator_names():
    import ctypes
    size, names = ctypes.c_uint(), ctypes.POINTER(ctypes.c_char_p)()
    assert mx.base._LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names)) == 0
    listed = {names[i].decode() for i in range(size.value)}
    assert {'Convolution', 'amp_cast', 'amp_multicast'} <= listed


def test_bfloat16_work_reaches_onednn_kernels(amp_bf16):
    torch = pytest.importorskip('torch')
    from torch.profiler import ProfilerActivity, profile
    if not torch.backends.mkldnn.is_available():
        pytest.skip('torch without oneDNN')
    x, w = mx.nd.ones((2, 4, 6, 6)), mx.nd.ones((4, 4, 3, 3))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
    assert y.dtype == bfloat16 and np.allclose(y.asnumpy(), 36)
    assert 'aten::mkldnn_convolution' in {e.key for e in prof.key_averages()}


_MXREF = __import__('os').path.expanduser('~/mxref/bin/python')


@pytest.mark.skipif(not __import__('os').path.exists(_MXREF), reason='needs MXNet 1.9.1 in ~/mxref')
def test_converted_json_is_mxnets(tmp_path):
    import subprocess
    import textwrap
    script = textwrap.dedent('''
        import sys
        mx = __import__(sys.argv[1])
        amp = __import__(sys.argv[1] + '.contrib.amp', fromlist=['amp'])
        data = mx.sym.var('data')
        net = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), name='conv')
        net = mx.sym.BatchNorm(net, name='bn')
        net = mx.sym.Activation(net, act_type='relu', name='relu')
        net = mx.sym.Pooling(net, kernel=(2, 2), pool_type='max', stride=(2, 2), name='pool')
        net = mx.sym.FullyConnected(mx.sym.Flatten(net, name='flat'), num_hidden=3, name='fc')
        net = mx.sym.SoftmaxOutput(net, name='softmax') + 1
        print(amp.convert_symbol(net, target_dtype='bfloat16', cast_optional_params=True).tojson(False))
    ''')
    path = tmp_path / 'convert.py'
    path.write_text(script)
    import sys
    ours = subprocess.run([sys.executable, str(path), 'neomx'], capture_output=True, text=True, check=True).stdout
    theirs = subprocess.run([_MXREF, str(path), 'mxnet'], capture_output=True, text=True, check=True).stdout
    assert json.loads(ours) == json.loads(theirs)
    loaded = mx.sym.load_json(theirs)
    exe = loaded.simple_bind(mx.cpu(), data=(2, 1, 8, 8), grad_req='null')
    assert exe.forward(is_train=False)[0].dtype == np.float32


def test_bf16_inference_fuses_convolution_and_batchnorm(amp_bf16):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(8, 3, padding=1, use_bias=False), gluon.nn.BatchNorm(), gluon.nn.Activation('relu'),
                gluon.nn.Conv2D(8, 3, padding=1), gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(4))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 3, 10, 10))
    net(x)
    for p in net.collect_params('.*running.*|.*gamma|.*beta').values():
        p.set_data(mx.nd.random.uniform(0.5, 1.5, shape=p.shape))
    fused = net(x)                      # predict mode, not recording: the inference rewrite
    with autograd.record(train_mode=False):
        plain = net(x)                  # the operators one by one
    assert fused.dtype == plain.dtype == bfloat16
    np.testing.assert_allclose(fused.asnumpy(), plain.asnumpy(), rtol=0.05, atol=0.05)


class _Residual(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = gluon.nn.Conv2D(3, 3, padding=1, in_channels=3)
            self.bn = gluon.nn.BatchNorm(in_channels=3)

    def hybrid_forward(self, F, x):
        return F.relu(self.bn(self.conv(x)) + x)


@pytest.mark.parametrize('cast_input', [False, True])
def test_bf16_inference_fuses_the_residual_addition(amp_bf16, cast_input):
    net = _Residual()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 3, 6, 6))
    if cast_input:      # the addition then mixes bfloat16 and float32: amp_multicast widens
        x = mx.nd.amp_cast(x, dtype='bfloat16')
    fused = net(x)
    with autograd.record(train_mode=False):
        plain = net(x)
    ops = [n[0] for n in _nodes(net._cached_graph.symbol)]
    assert 'amp_multicast' in ops and fused.dtype == plain.dtype
    np.testing.assert_allclose(fused.asnumpy(), plain.asnumpy(), rtol=0.05, atol=0.05)


def test_deinit_restores_namespaces_that_find_names_through_getattr():
    # mx.sym.sparse.dot is found through the module's __getattr__ (mx.sym.op.dot): undoing
    # init must leave the names it found, not the wrappers it saw
    amp.init('bfloat16')
    assert mx.sym.sparse.dot is not mx.sym.op.dot
    amp_module._deinit()
    assert mx.sym.sparse.dot is mx.sym.op.dot and mx.nd.sparse.dot is mx.nd.op.dot
    assert 'dot' not in vars(mx.sym.sparse)
