"""neomx.bridge: Gluon blocks as torch modules and back, sharing memory, values and gradients."""
import io

import numpy as np
import pytest
import torch

import neomx as mx
from neomx.bridge import from_torch, to_torch


def _mlp(hybridize=False, prefix=None):
    net = mx.gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(8, in_units=4, activation='relu'), mx.gluon.nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier(), force_reinit=True)
    if hybridize:
        net.hybridize()
    return net


def _cnn():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=2), mx.gluon.nn.BatchNorm(in_channels=4),
            mx.gluon.nn.Activation('relu'), mx.gluon.nn.GlobalAvgPool2D(), mx.gluon.nn.Dense(3, in_units=4))
    net.initialize(mx.init.Xavier())
    return net


@pytest.mark.parametrize('hybridize', [False, True])
def test_to_torch_values_gradients_and_shared_memory(hybridize):
    mx.random.seed(0)
    net = _mlp(hybridize)
    x = np.random.RandomState(0).randn(5, 4).astype('float32')
    module = to_torch(net)
    names = [n for n, _ in module.named_parameters()]
    assert names == [n for n in net.collect_params().keys()]
    for (_, tp), gp in zip(module.named_parameters(), net.collect_params().values()):
        assert tp.data_ptr() == gp.data().as_torch().data_ptr()
    out = module(torch.from_numpy(x))
    xn = mx.nd.array(x)
    with mx.autograd.record():
        ref = net(xn)
    np.testing.assert_allclose(out.detach().numpy(), ref.asnumpy(), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    ref.backward(mx.nd.ones_like(ref))
    for (_, tp), gp in zip(module.named_parameters(), net.collect_params().values()):
        np.testing.assert_allclose(tp.grad.numpy(), gp.grad().asnumpy(), rtol=1e-5, atol=1e-6)
    # writes through torch change the block
    with torch.no_grad():
        next(module.parameters()).fill_(0.5)
    assert (net.collect_params().values().__iter__().__next__().data().asnumpy() == 0.5).all()


def test_ten_sgd_steps_in_torch_equal_ten_in_neomx():
    rng = np.random.RandomState(1)
    xs = [rng.randn(6, 4).astype('float32') for _ in range(10)]
    ys = [rng.randint(0, 3, size=6) for _ in range(10)]
    mx.random.seed(3)
    a = _mlp()
    b = _mlp()
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        pb.set_data(pa.data().copy())
    # neomx
    trainer = mx.gluon.Trainer(a.collect_params(), 'sgd', {'learning_rate': 0.1})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    for x, y in zip(xs, ys):
        with mx.autograd.record():
            loss = loss_fn(a(mx.nd.array(x)), mx.nd.array(y)).mean()
        loss.backward()
        trainer.step(1)
    # plain torch on the bridged copy
    module = to_torch(b)
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(module(torch.from_numpy(x)), torch.from_numpy(y))
        loss.backward()
        opt.step()
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        np.testing.assert_allclose(pa.data().asnumpy(), pb.data().asnumpy(), rtol=1e-5, atol=1e-6)


def test_to_torch_train_and_eval_select_gluon_modes():
    net = _cnn()
    module = to_torch(net)
    x = torch.randn(2, 2, 5, 5)
    running = net[1].running_mean.data().asnumpy().copy()
    module.eval()
    with torch.no_grad():
        y_eval = module(x)
    np.testing.assert_array_equal(net[1].running_mean.data().asnumpy(), running)
    with torch.no_grad():
        ref = net(mx.nd.array(x.numpy()))
    np.testing.assert_allclose(y_eval.numpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    module.train()
    module(x).sum().backward()
    assert not np.array_equal(net[1].running_mean.data().asnumpy(), running)
    conv_weight = next(module.parameters())
    assert conv_weight.grad is not None and conv_weight.grad.abs().sum() > 0


def test_to_torch_state_dict_round_trips_through_torch_save():
    net = _mlp(prefix='mlp_')
    module = to_torch(net)
    buf = io.BytesIO()
    torch.save(module.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf)
    assert sorted(state) == sorted(net.collect_params().keys())
    other = _mlp(prefix='mlp_')   # the same Gluon names
    to_torch(other).load_state_dict(state)
    for pa, pb in zip(net.collect_params().values(), other.collect_params().values()):
        np.testing.assert_array_equal(pa.data().asnumpy(), pb.data().asnumpy())


def test_to_torch_refuses_deferred_and_non_blocks():
    net = mx.gluon.nn.Dense(3)
    net.initialize()
    with pytest.raises(mx.MXNetError, match='deferred'):
        to_torch(net)
    with pytest.raises(mx.MXNetError, match='Block'):
        to_torch(torch.nn.Linear(2, 2))


def test_from_torch_values_gradients_and_trainer():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2))
    block = from_torch(module)
    params = block.collect_params()
    assert sorted(params.keys()) == sorted(block.prefix + n.replace('.', '_') for n, _ in module.named_parameters())
    x = np.random.RandomState(2).randn(3, 4).astype('float32')
    xn = mx.nd.array(x)
    xn.attach_grad()
    with mx.autograd.record():
        out = block(xn)
    out.backward(mx.nd.ones_like(out))
    xt = torch.from_numpy(x).requires_grad_()
    ref = module(xt)
    ref.sum().backward()
    np.testing.assert_allclose(out.asnumpy(), ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(xn.grad.asnumpy(), xt.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(params[block.prefix + '0_weight'].grad().asnumpy(),
                               module[0].weight.grad.numpy(), rtol=1e-5)
    before = module[0].weight.detach().clone()
    trainer = mx.gluon.Trainer(params, 'sgd', {'learning_rate': 1.0})
    trainer.step(1)
    expected = before - params[block.prefix + '0_weight'].grad().as_torch()
    torch.testing.assert_close(module[0].weight.detach(), expected)   # the module's own tensor moved


def test_from_torch_buffers_and_training_mode():
    module = torch.nn.Sequential(torch.nn.BatchNorm1d(3))
    block = from_torch(module)
    params = block.collect_params()
    assert params[block.prefix + '0_running_mean'].grad_req == 'null'
    x = mx.nd.array(np.random.RandomState(0).randn(8, 3) + 5)
    with mx.autograd.record():
        block(x)
    assert module[0].running_mean.abs().sum() > 0         # training mode updated the statistics
    assert module.training
    block(x)                                            # predict mode: eval
    assert not module.training


def test_from_torch_refuses_non_modules():
    with pytest.raises(mx.MXNetError, match='torch.nn.Module'):
        from_torch(mx.gluon.nn.Dense(2))


@pytest.mark.slow
def test_to_torch_under_torch_compile():
    net = _mlp()
    module = to_torch(net)
    x = torch.randn(2, 4)
    compiled = torch.compile(module)
    out = compiled(x)
    torch.testing.assert_close(out, module(x))
    out.sum().backward()
    assert next(module.parameters()).grad is not None
