"""Training-speed rewrites give eager's values and gradients: the hybridized graph's passes
(``neomx.symbol.training_passes``: max pooling before relu, channels-last convolutions
before max pooling) and the operators' own layout choices (channels-last max pooling,
channels-first convolutions of a few pixels, 1-pixel convolutions as dense layers,
BatchNorm's moving variance from its saved statistics)."""
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import neomx as mx
from neomx import autograd, gluon
from neomx.operator.layout import as_channels_last, as_layout
from neomx.operator.nn_conv import convolution, pooling
from neomx.symbol.training_passes import ChannelsLastInput, PoolThenRelu

nn = gluon.nn
DTYPES = ['float32', 'float64']
TOL = {'float32': dict(rtol=1e-5, atol=1e-6), 'float64': dict(rtol=1e-10, atol=1e-12)}


@pytest.fixture(autouse=True)
def _on_cpu():
    """The passes rewrite graphs bound on a CPU context (GPU graphs run as traced), so the
    nets here run on the CPU, also under ``--default-context 'gpu(0)'``."""
    with mx.cpu():
        yield


def _convnet(batch_norm=False, dropout=False, groups=1, dilation=1):
    """Conv -> [BN] -> relu -> max pool, twice, [dropout], dense: the chains the passes rewrite,
    down to a 1-pixel convolution (3x3, pad 1) and a few-pixel one."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=dilation, dilation=dilation, use_bias=not batch_norm))
        if batch_norm:
            net.add(nn.BatchNorm())
        net.add(nn.Activation('relu'), nn.MaxPool2D(2, 2))                       # 12 -> 6
        net.add(nn.Conv2D(16, 3, padding=1, groups=groups, activation='relu'),
                nn.MaxPool2D(3, 2, padding=1))                                    # 6 -> 3 (9 pixels)
        net.add(nn.Conv2D(16, 3, activation='relu'))                              # 3 -> 1
        net.add(nn.Conv2D(16, 3, padding=1, groups=groups))                       # 1 pixel
        if batch_norm:
            net.add(nn.BatchNorm())
        if dropout:
            net.add(nn.Dropout(0.5))
        net.add(nn.Dense(5))
    return net


def _run(net, x, hybridize):
    """Output, input gradient, parameters' gradients and values after one recorded pass."""
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    x = x.copy()
    x.attach_grad()
    mx.random.seed(7)
    with autograd.record():
        out = net(x)
        loss = (out * out).sum()
    loss.backward()
    params = net.collect_params().values()
    return (out.asnumpy(), x.grad.asnumpy(), [p.grad().asnumpy() for p in params if p.grad_req != 'null'],
            [p.data().asnumpy() for p in params])


def _twin_nets(dtype, **layers):
    """Two nets with the same parameters (initialized by a predict-mode call), and data."""
    x = mx.nd.NDArray(torch.randn((4, 3, 12, 12), generator=torch.Generator().manual_seed(0))).astype(dtype)
    nets = []
    for _ in range(2):
        mx.random.seed(0)
        net = _convnet(**layers)
        net.initialize(mx.init.Xavier())
        net.cast(dtype)
        net(x)
        nets.append(net)
    return nets, x


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('layers', [{}, {'batch_norm': True}, {'dropout': True},
                                    {'groups': 2, 'dilation': 2}, {'batch_norm': True, 'groups': 4}],
                         ids=['plain', 'batchnorm', 'dropout', 'grouped-dilated', 'batchnorm-grouped'])
def test_rewritten_graph_matches_eager(dtype, layers):
    (eager, hybrid), x = _twin_nets(dtype, **layers)
    want = _run(eager, x, hybridize=False)
    got = _run(hybrid, x, hybridize=True)
    run = next(iter(hybrid._cached_graph._bound.values())).run
    assert run.rewritten
    for g, w in zip(got[:2], want[:2]):
        np.testing.assert_allclose(g, w, **TOL[dtype])
    assert len(got[2]) == len(want[2])
    for g, w in zip(got[2], want[2]):
        np.testing.assert_allclose(g, w, **TOL[dtype])
    for g, w in zip(got[3], want[3]):                   # BatchNorm's moving statistics
        np.testing.assert_allclose(g, w, **TOL[dtype])


@pytest.mark.parametrize('dtype', DTYPES)
def test_rewritten_graph_matches_eager_in_predict_mode_and_unrecorded(dtype):
    (eager, hybrid), x = _twin_nets(dtype, batch_norm=True)
    hybrid.hybridize()
    for train_mode in (True, False):
        with autograd.record(train_mode=train_mode):
            want, got = eager(x), hybrid(x)
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), **TOL[dtype])
    with autograd.train_mode():
        np.testing.assert_allclose(hybrid(x).asnumpy(), eager(x).asnumpy(), **TOL[dtype])


def test_passes_rewrite_relu_pool_and_conv_layout():
    (_, hybrid), x = _twin_nets('float32')
    hybrid.hybridize()
    with autograd.record():
        hybrid(x)
    namespace = next(iter(hybrid._cached_graph._bound.values())).run._namespace
    fns = [v for k, v in namespace.items() if k.startswith('op')]
    assert sum(isinstance(f, PoolThenRelu) for f in fns) == 2
    assert sum(isinstance(f, ChannelsLastInput) for f in fns) == 2
    assert not any(getattr(f, 'keywords', {}).get('act_type') == 'relu' for f in fns[:5])


def test_relu_read_elsewhere_is_not_moved():
    class TwoReads(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            r = F.relu(x)
            return F.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type='max'), r
    net = TwoReads()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(1, 2, 4, 4))
    pooled, r = net(x)
    np.testing.assert_array_equal(r.asnumpy(), np.maximum(x.asnumpy(), 0))
    assert not next(iter(net._cached_graph._bound.values())).run.rewritten
    np.testing.assert_array_equal(pooled.asnumpy(), np.maximum(x.asnumpy(), 0).reshape(1, 2, 2, 2, 2, 2)
                                  .max(axis=(3, 5)))


def test_relu_before_full_convention_pooling_is_not_moved():
    class FullPool(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            # stride 3 over 5 pixels: the last 'full' window lies past the input
            return F.Pooling(F.relu(x), kernel=(1, 1), stride=(3, 3), pool_type='max',
                             pooling_convention='full')
    net = FullPool()
    x = mx.nd.array(np.random.RandomState(0).randn(1, 2, 5, 5))
    want = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_array_equal(net(x).asnumpy(), want)
    assert want.min() < 0                               # the lowest value, kept
    assert not next(iter(net._cached_graph._bound.values())).run.rewritten


def test_export_writes_the_graph_as_traced(tmp_path):
    (_, hybrid), x = _twin_nets('float32')
    hybrid.hybridize()
    with autograd.record():
        hybrid(x).sum().backward()
    hybrid.export(str(tmp_path / 'net'))
    graph = json.loads((tmp_path / 'net-symbol.json').read_text())
    ops = [n['op'] for n in graph['nodes'] if n['op'] != 'null']
    assert ops.count('Activation') == 3 and ops.count('Pooling') == 2
    loaded = gluon.SymbolBlock.imports(str(tmp_path / 'net-symbol.json'), ['data'],
                                       str(tmp_path / 'net-0000.params'))
    np.testing.assert_allclose(loaded(x).asnumpy(), hybrid(x).asnumpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------- operator level
def _grads(fn, *tensors):
    tensors = [t.detach().clone().requires_grad_() for t in tensors]
    out = fn(*tensors)
    weights = torch.randn(out.shape, generator=torch.Generator().manual_seed(1), dtype=out.dtype)
    return out, torch.autograd.grad((out * weights).sum(), tensors)


def _pool(x, kernel=(2, 2), stride=(2, 2), pad=()):
    return pooling(x, kernel, 'max', False, False, 'valid', stride, pad, None, None, None)


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_max_pooling_runs_channels_last_with_channels_first_values_and_gradients(dtype):
    x = torch.randn((3, 4, 9, 9), dtype=dtype, generator=torch.Generator().manual_seed(0))
    x[0, 0, :2, :2] = 0.5                                      # a tie inside one window
    out, (grad,) = _grads(lambda t: _pool(t, (3, 3), (2, 2), (1, 1)), x)
    want, (want_grad,) = _grads(lambda t: F.max_pool2d(t, 3, 2, 1), x)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert grad.is_contiguous()                         # back in the input's layout
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    torch.testing.assert_close(grad, want_grad, rtol=0, atol=0)


def _conv(x, w, b, kernel, stride=(), dilate=(), pad=(), groups=1):
    return convolution(x, w, b, kernel, stride, dilate, pad, w.shape[0], groups, 1024, b is None,
                       None, False, None)


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('kernel,stride,dilate,pad', [((3, 3), (1, 1), (1, 1), (1, 1)),
                                                      ((3, 3), (2, 2), (1, 1), (1, 1)),
                                                      ((5, 5), (1, 1), (2, 2), (4, 4)),
                                                      ((1, 1), (1, 1), (1, 1), (0, 0)),
                                                      ((3,), (1,), (1,), (1,)),
                                                      ((3, 3), (1, 1), (1, 1), (2, 2))])
def test_one_pixel_convolution_matches_torch(dtype, kernel, stride, dilate, pad):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((4, 6) + (1,) * len(kernel), dtype=dtype, generator=gen)
    w = torch.randn((5, 6) + kernel, dtype=dtype, generator=gen)
    b = torch.randn(5, dtype=dtype, generator=gen)
    conv = {1: F.conv1d, 2: F.conv2d}[len(kernel)]
    out, grads = _grads(lambda *t: _conv(*t, kernel, stride, dilate, pad), x, w, b)
    want, want_grads = _grads(lambda xx, ww, bb: conv(xx, ww, bb, stride, pad, dilate), x, w, b)
    tol = TOL[str(dtype).split('.')[-1]]
    torch.testing.assert_close(out, want, **tol)
    for got, exp in zip(grads, want_grads):
        torch.testing.assert_close(got, exp, **tol)


@pytest.mark.parametrize('groups', [1, 2])
def test_few_pixel_convolution_of_channels_last_data_runs_channels_first(groups):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((2, 4, 3, 3), dtype=torch.float64, generator=gen).contiguous(memory_format=torch.channels_last)
    w = torch.randn((6, 4 // groups, 3, 3), dtype=torch.float64, generator=gen)
    out, (grad, wgrad) = _grads(lambda a, b: _conv(a, b, None, (3, 3), (1, 1), (1, 1), (1, 1), groups), x, w)
    want, want_grads = _grads(lambda a, b: F.conv2d(a, b, None, 1, 1, 1, groups), x, w)
    assert out.is_contiguous()
    assert grad.is_contiguous(memory_format=torch.channels_last)    # the input's layout
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(grad, want_grads[0])
    torch.testing.assert_close(wgrad, want_grads[1])


def test_layout_changes_give_gradients_in_the_input_layout():
    x = torch.randn((2, 3, 4, 5), dtype=torch.float64)
    y, (grad,) = _grads(lambda t: as_layout(t, torch.channels_last) * 2, x)
    assert y.is_contiguous(memory_format=torch.channels_last) and grad.is_contiguous()
    torch.testing.assert_close(grad, torch.full_like(x, 2.0) * torch.randn(
        x.shape, generator=torch.Generator().manual_seed(1), dtype=x.dtype))
    one = torch.randn((2, 1, 4, 5))
    view = as_channels_last(one)
    assert view.data_ptr() == one.data_ptr() and view.stride() == (20, 1, 5, 1)
    assert torch.equal(view, one)


@pytest.mark.parametrize('dtype', DTYPES)
def test_batch_norm_moving_variance_is_the_batch_variance(dtype):
    bn = nn.BatchNorm(momentum=0.0, in_channels=3)     # moving stats := this batch's
    bn.initialize()
    bn.cast(dtype)
    data = np.random.RandomState(0).randn(8, 3, 5, 5) * [[[[0.5]], [[3.0]], [[1e-2]]]] + 4
    x = mx.nd.array(data, dtype=dtype)
    with autograd.record():
        y = bn(x)
    y.backward()
    tol = {'float32': dict(rtol=2e-5), 'float64': dict(rtol=1e-9)}[dtype]
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), data.mean(axis=(0, 2, 3)), **tol)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(), data.var(axis=(0, 2, 3)), **tol)
