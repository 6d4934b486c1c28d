"""Trainer.step on its prebuilt lists (every gradient fresh) and on its general path.

The step reuses the lists it derives from the parameters (``TrainedLayout``) until some
parameter gets new arrays or a new ``grad_req``; these tests change what the lists depend
on between steps and check the updated values against MXNet's SGD rule computed by hand.
"""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon


def _net():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(3, in_units=4), gluon.nn.Dense(2, in_units=3))
    net.initialize(mx.init.Xavier())
    return net


def _values(params):
    return {name: p.data().asnumpy().copy() for name, p in params.items()}


def _backward(net, x):
    with autograd.record():
        loss = net(mx.nd.array(x)).sum()
    loss.backward()


def _grads(params):
    return {name: p.grad().asnumpy().copy() for name, p in params.items() if p.grad_req != 'null'}


# NumPy, made into an NDArray in each test: on the test's current context (a GPU under
# ``--default-context``), where the nets are initialized.
X = np.arange(8, dtype='float32').reshape(2, 4) / 8


def _stepped_once():
    """A net, its parameters and a plain SGD Trainer after one backward and step."""
    net = _net()
    params = net.collect_params()
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1})
    _backward(net, X)
    trainer.step(1)
    return net, params, trainer


def test_fresh_step_follows_sgd_with_momentum_wd_and_lr_mult():
    net = _net()
    params = net.collect_params()
    net[0].weight.lr_mult = 0.5
    net[1].bias.wd_mult = 0.0
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01})
    moms = {name: 0 for name in params}
    for _ in range(3):
        before = _values(params)
        _backward(net, X)
        grads = _grads(params)
        trainer.step(2)
        for name, p in params.items():
            lr, wd = 0.1 * p.lr_mult, 0.01 * p.wd_mult
            moms[name] = 0.9 * moms[name] - lr * (grads[name] / 2 + wd * before[name])
            np.testing.assert_allclose(p.data().asnumpy(), before[name] + moms[name], rtol=1e-5, atol=1e-7)


def test_stale_gradient_raises_and_ignore_updates_only_fresh_ones():
    net, params, trainer = _stepped_once()
    with pytest.raises(UserWarning, match='has not been updated by backward'):
        trainer.step(1)                     # no backward since the last step
    first = net[0]
    with autograd.record():                 # only the first layer takes part
        loss = first(mx.nd.array(X)).sum()
    loss.backward()
    before, grads = _values(params), _grads(params)
    trainer.step(1, ignore_stale_grad=True)
    used = {p.name for p in first.collect_params().values()}
    for name, p in params.items():
        expected = before[name] - 0.1 * grads[name] if name in used else before[name]
        np.testing.assert_allclose(p.data().asnumpy(), expected, rtol=1e-6, atol=1e-7)


def test_grad_req_changes_between_steps_are_followed():
    net, params, trainer = _stepped_once()
    frozen = net[1].weight
    frozen.grad_req = 'null'
    before = _values(params)
    _backward(net, X)
    trainer.step(1)
    np.testing.assert_array_equal(frozen.data().asnumpy(), before[frozen.name])
    assert not np.array_equal(net[1].bias.data().asnumpy(), before[net[1].bias.name])
    frozen.grad_req = 'write'
    before = _values(params)
    _backward(net, X)
    grads = _grads(params)
    trainer.step(1)
    np.testing.assert_allclose(frozen.data().asnumpy(), before[frozen.name] - 0.1 * grads[frozen.name],
                               rtol=1e-6, atol=1e-7)


def test_a_new_gradient_buffer_is_read_by_the_next_step():
    net, params, trainer = _stepped_once()
    bias = net[0].bias
    bias.data().attach_grad()               # a new buffer (slot), same parameter layout
    before = _values(params)
    _backward(net, X)
    grad = bias.data().grad.asnumpy().copy()
    assert np.abs(grad).sum() > 0
    trainer.step(1)
    np.testing.assert_allclose(bias.data().asnumpy(), before[bias.name] - 0.1 * grad, rtol=1e-6, atol=1e-7)
    after = bias.data().asnumpy().copy()
    trainer.step(1, ignore_stale_grad=True)     # the new buffer was marked as used, too
    np.testing.assert_array_equal(bias.data().asnumpy(), after)


def test_allreduce_then_update_equals_step():
    nets = [_net(), _net()]
    for p0, p1 in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        p1.set_data(p0.data())
    trainers = [gluon.Trainer(n.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.5})
                for n in nets]
    for _ in range(2):
        for n in nets:
            _backward(n, X)
        trainers[0].step(2)
        trainers[1].allreduce_grads()
        trainers[1].update(2)
    for p0, p1 in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        np.testing.assert_array_equal(p0.data().asnumpy(), p1.data().asnumpy())
