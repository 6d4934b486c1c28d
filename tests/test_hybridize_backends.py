"""hybridize backends and flags (inductor, static_alloc/static_shape) and the inference
rewrites (convolutions fused with BatchNorm, sums and relu): same outputs and gradients as the default."""
import platform

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import _memory, autograd, gluon
from neomx.gluon import _cached_graph
from neomx.gluon._cached_graph import TorchCompiled, graph_runner, plain_runner
from neomx.symbol.passes import InferenceConvolution, fuse_convolutions
from neomx.symbol.graph import plan_of

X = np.random.RandomState(0).uniform(-1, 1, (4, 6)).astype(np.float32)
IMAGES = np.random.RandomState(1).uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)


def _mlp(**flags):
    mx.random.seed(0)
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(8, activation='relu'), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net(mx.nd.array(X))             # deferred initialization draws from the seeded generator
    net.hybridize(**flags)
    return net


def _step(net):
    """Output and gradients of one recorded pass."""
    with autograd.record():
        out = net(mx.nd.array(X))
        loss = (out * out).sum()
    loss.backward()
    return out.asnumpy(), [p.grad().asnumpy() for p in net.collect_params().values()]


def _binding(net):
    return next(iter(net._cached_graph._bound.values()))


def test_inductor_matches_default_backend():
    net, reference = _mlp(backend='inductor'), _mlp()
    out, grads = _step(net)
    want_out, want_grads = _step(reference)
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-6)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert isinstance(_binding(net).run, TorchCompiled) and not _binding(net).run.failed
    # Inference compiles with frozen parameters; a changed parameter recompiles.
    x = mx.nd.array(X)
    np.testing.assert_allclose(net(x).asnumpy(), reference(x).asnumpy(), rtol=1e-5, atol=1e-6)
    for target in (net, reference):
        target.collect_params()[target.prefix + 'dense1_bias'].set_data(mx.nd.ones((3,)))
    np.testing.assert_allclose(net(x).asnumpy(), reference(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_failed_compilation_falls_back_with_warning(monkeypatch):
    def failing_compile(*args, **kwargs):
        raise RuntimeError('no compiler here')
    monkeypatch.setattr(torch, 'compile', failing_compile)
    net, reference = _mlp(backend='inductor', backend_opts={'mode': 'max-autotune'}), _mlp()
    with pytest.warns(UserWarning, match="backend='inductor'.*no compiler here"):
        out, grads = _step(net)
    want_out, want_grads = _step(reference)
    np.testing.assert_array_equal(out, want_out)
    for got, want in zip(grads, want_grads):
        np.testing.assert_array_equal(got, want)
    assert _binding(net).run.failed


def test_graph_errors_are_not_mistaken_for_compilation_failures(monkeypatch):
    monkeypatch.setattr(torch, 'compile', lambda fn, **kwargs: fn)
    net = _mlp(backend='inductor')
    net(mx.nd.array(X))
    with pytest.raises(mx.base.MXNetError, match='FullyConnected'):
        net(mx.nd.ones((4, 7)))


def test_unknown_backend_is_rejected():
    net = _mlp(backend='tvm')
    with pytest.raises(ValueError, match="unknown backend 'tvm'"):
        net(mx.nd.array(X))


class _GPU:
    device_type = 'gpu'


def test_backend_choice():
    assert graph_runner(None, static=False) is plain_runner
    assert graph_runner(None, static=True)('graph', mx.cpu(), 1) == 'graph'
    cuda_graphs = graph_runner(None, static=True)('graph', _GPU(), 1)
    assert isinstance(cuda_graphs, TorchCompiled)
    assert cuda_graphs._options == {'backend': 'cudagraphs', 'dynamic': False}
    inductor = graph_runner('inductor', static=True, backend_opts={'fullgraph': True})('graph', _GPU(), 1)
    assert inductor._options == {'backend': 'inductor', 'mode': 'reduce-overhead', 'fullgraph': True,
                                 'dynamic': False}


def test_static_flags_recorded_and_parameter_list_fixed():
    net, reference = _mlp(static_alloc=True, static_shape=True), _mlp()
    assert ('static_alloc', True) in net._flags and ('static_shape', True) in net._flags
    for child in net._children.values():
        assert ('static_alloc', True) in child._flags
    out, grads = _step(net)
    want_out, want_grads = _step(reference)
    np.testing.assert_array_equal(out, want_out)
    for got, want in zip(grads, want_grads):
        np.testing.assert_array_equal(got, want)
    bound = _binding(net)
    assert [t is a._t for t, a in zip(bound.param_tensors, bound.arrays)] == [True] * 4
    assert _binding(reference).param_tensors is None


@pytest.mark.parametrize('flags', [{}, {'static_alloc': True}])
def test_rebinding_keeps_the_compiled_runner_but_reads_the_new_arrays(flags):
    net = _mlp(**flags)
    x = mx.nd.array(X)
    before = net(x).asnumpy()
    wrapped = []                    # a compiled backend's runner: compiling is costly

    def counting_runner(graph, ctx, num_data):  # pylint: disable=unused-argument
        wrapped.append(graph)
        return lambda tensors: graph(tensors)
    net._cached_graph.runner = counting_runner
    net._cached_graph._bound.clear()
    net(x)
    assert len(wrapped) == 1
    other = gluon.nn.Dense(2)       # any Parameter getting arrays invalidates every binding
    other.initialize()
    other(x)
    bias = net.collect_params()[net.prefix + 'dense1_bias']
    old_bias = bias.data().asnumpy()
    bias.set_data(mx.nd.full((3,), 5.0))
    np.testing.assert_allclose(net(x).asnumpy(), before - old_bias + 5.0, rtol=1e-5, atol=1e-5)
    assert len(wrapped) == 1


def test_static_alloc_pools_host_memory_and_keeps_inference_rewrites(monkeypatch):
    calls = []
    monkeypatch.setattr(_cached_graph, 'pool_host_memory', lambda: calls.append(1))
    with mx.cpu():                              # host memory is pooled for CPU bindings
        net = _conv_bn_net(False)
        x = mx.nd.array(IMAGES)
        imperative = net(x).asnumpy()
        net.hybridize(static_alloc=True, static_shape=True)
        np.testing.assert_allclose(net(x).asnumpy(), imperative, rtol=1e-5, atol=1e-6)
    assert calls == [1]
    bound = _binding(net)
    assert bound.infer is not bound.run         # the static flags keep the fused inference graph


def test_pool_host_memory_honours_unpooled(monkeypatch):
    monkeypatch.setenv('MXNET_CPU_MEM_POOL_TYPE', 'Unpooled')
    _memory.pool_host_memory.cache_clear()
    try:
        assert _memory.pool_host_memory() is False
    finally:
        _memory.pool_host_memory.cache_clear()
    monkeypatch.delenv('MXNET_CPU_MEM_POOL_TYPE')
    # glibc (this suite's Linux machines) accepts both settings.
    assert _memory.pool_host_memory() is (platform.libc_ver()[0] == 'glibc')


# ------------------------------------------------------------- BatchNorm folding
def _conv_bn_net(fix_gamma):
    mx.random.seed(3)
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, padding=1, use_bias=False), gluon.nn.BatchNorm(scale=not fix_gamma),
                gluon.nn.Activation('relu'), gluon.nn.Conv2D(5, 3, strides=2), gluon.nn.BatchNorm(epsilon=0.1),
                gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier())
    net(mx.nd.array(IMAGES))
    rng = np.random.RandomState(4)
    for name, param in net.collect_params().items():
        if name.endswith(('gamma', 'beta', 'running_mean', 'running_var')):
            param.set_data(mx.nd.array(rng.uniform(0.5, 1.5, param.shape)))
    return net


@pytest.mark.parametrize('fix_gamma', [False, True])
def test_batch_norm_folding_keeps_inference_outputs(fix_gamma):
    net = _conv_bn_net(fix_gamma)
    x = mx.nd.array(IMAGES)
    imperative = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), imperative, rtol=1e-5, atol=1e-6)
    bound = _binding(net)
    assert bound.infer is not bound.run
    # conv+BatchNorm+relu and conv+BatchNorm each run as one call.
    assert bound.infer.source.count(' = op') == bound.run.source.count(' = op') - 3
    # New parameter values refold.
    gamma = net.collect_params()[net.prefix + 'batchnorm1_gamma']
    gamma.set_data(gamma.data() * 2)
    net.hybridize(active=False)
    imperative = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), imperative, rtol=1e-5, atol=1e-6)


def test_folded_graph_trains_like_the_unfolded_one():
    net, reference = _conv_bn_net(False), _conv_bn_net(False)
    net.hybridize()
    x = mx.nd.array(IMAGES)
    net(x)                                          # builds both forms
    outputs = []
    for model in (net, reference):
        with autograd.record():
            out = model(x).sum()
        out.backward()
        outputs.append([out.asnumpy()] + [p.data().asnumpy() for p in model.collect_params().values()]
                       + [p.grad().asnumpy() for p in model.collect_params().values() if p.grad_req != 'null'])
    for got, want in zip(*outputs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _fused_ops(sym):
    """(operator of each call, whether it is a fused convolution) of the inference plan."""
    plan = fuse_convolutions(plan_of(sym, mx.cpu(), sym.list_inputs()))
    return [(c.node.op, isinstance(c.fn, InferenceConvolution)) for c in plan.calls]


def test_fusion_only_where_each_output_feeds_nothing_else():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, name='conv')
    shared = mx.sym.BatchNorm(conv, name='bn') + conv           # conv read twice: alone
    assert _fused_ops(shared) == [('Convolution', True), ('BatchNorm', False), ('elemwise_add', False)]
    alone = mx.sym.BatchNorm(mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, name='c2'), name='b2')
    assert _fused_ops(alone) == [('BatchNorm', True)]
    nhwc = mx.sym.BatchNorm(mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, layout='NHWC'), axis=3)
    plan = plan_of(nhwc, mx.cpu(), nhwc.list_inputs())
    assert fuse_convolutions(plan) is plan
    stats = mx.sym.BatchNorm(mx.sym.Convolution(data, kernel=(3, 3), num_filter=2), output_mean_var=True)
    assert _fused_ops(mx.sym.broadcast_add(stats[0], stats[1].reshape((1, 2, 1, 1)))) == [
        ('Convolution', True), ('BatchNorm', False), ('Reshape', False), ('broadcast_add', False)]


def test_residual_sum_and_relu_fuse_into_one_of_the_convolutions():
    data = mx.sym.var('data')
    body = mx.sym.BatchNorm(mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4), name='b1')
    down = mx.sym.BatchNorm(mx.sym.Convolution(data, kernel=(1, 1), num_filter=4), name='b2')
    block = mx.sym.Activation(down + body, act_type='relu')
    assert _fused_ops(block) == [('BatchNorm', True), ('Activation', True)]
    assert _fused_ops(mx.sym.relu(mx.sym.Convolution(data, kernel=(1, 1), num_filter=2) + data)) == [
        ('relu', True)]


class _Residual(gluon.HybridBlock):
    """relu(conv(bn(conv(x))) + shortcut) with the shortcut first or second in the sum."""

    def __init__(self, shortcut_first, **kwargs):
        super().__init__(**kwargs)
        self._shortcut_first = shortcut_first
        with self.name_scope():
            self.body = gluon.nn.HybridSequential()
            self.body.add(gluon.nn.Conv2D(3, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation('relu'),
                          gluon.nn.Conv2D(3, 3, padding=1, use_bias=False), gluon.nn.BatchNorm())
            self.pool = gluon.nn.MaxPool2D(3, 2, 1)

    def hybrid_forward(self, F, x):
        out = F.Activation(x + self.body(x) if self._shortcut_first else self.body(x) + x, act_type='relu')
        return self.pool(out)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('shortcut_first', [False, True])
def test_fused_residual_block_keeps_inference_outputs(shortcut_first, dtype):
    net = _Residual(shortcut_first)
    net.initialize(mx.init.Xavier())
    net.cast(dtype)
    rng = np.random.RandomState(5)
    x = mx.nd.array(IMAGES, dtype=dtype)
    net(x)
    for name, param in net.collect_params().items():
        if name.endswith(('gamma', 'beta', 'running_mean', 'running_var')):
            param.set_data(mx.nd.array(rng.uniform(0.5, 1.5, param.shape), dtype=dtype))
    images = [x, mx.nd.array(np.concatenate([IMAGES] * 3), dtype=dtype)]     # new batch: filters repacked
    imperative = [net(i).asnumpy() for i in images]
    net.hybridize()
    for _ in range(2):
        for image, want in zip(images, imperative):
            got = net(image)
            assert got.dtype == np.dtype(dtype)
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)
    namespace = _binding(net).infer.fn.__globals__
    assert sum(isinstance(v, InferenceConvolution) for v in namespace.values()) == 2
    with autograd.record(train_mode=False):     # recorded: the unfused operators, with gradients
        out = net(x)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), imperative[0], rtol=1e-5, atol=1e-5)
    assert net.body[0].weight.grad().abs().sum().asscalar() > 0


def test_executor_predicts_with_the_fused_graph():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=4, name='conv')
    out = mx.sym.Activation(mx.sym.BatchNorm(conv, fix_gamma=False, name='bn'), act_type='relu')
    exe = out.simple_bind(mx.cpu(), data=IMAGES.shape)
    rng = np.random.RandomState(6)
    for arrays in (exe.arg_dict, exe.aux_dict):
        for array in arrays.values():
            array[:] = rng.uniform(0.5, 1.5, array.shape)
    arrays = dict(exe.arg_dict, **exe.aux_dict)
    want = mx.nd.Activation(mx.nd.BatchNorm(
        mx.nd.Convolution(arrays['data'], arrays['conv_weight'], arrays['conv_bias'], kernel=(3, 3),
                          pad=(1, 1), num_filter=4),
        arrays['bn_gamma'], arrays['bn_beta'], arrays['bn_moving_mean'], arrays['bn_moving_var'],
        fix_gamma=False), act_type='relu')
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-5)
    assert 'InferenceConvolution' in {type(v).__name__ for v in exe._inference.fn.__globals__.values()}
    trained = exe.forward(is_train=True)[0].asnumpy()      # batch statistics: the unfused graph
    assert not np.allclose(trained, want.asnumpy())
