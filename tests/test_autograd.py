"""Autograd with MXNet's semantics: recording scopes, grad_req, heads, higher order, Function."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd


def _var(values=(1.0, 2.0, 3.0), grad_req='write'):
    x = mx.nd.array(values)
    x.attach_grad(grad_req=grad_req)
    return x


def test_nothing_recorded_outside_record():
    x = _var()
    y = x * 2
    with pytest.raises(mx.base.MXNetError, match='not part of a recorded graph'):
        y.backward()


def test_grad_req_write_add_null():
    x, a = _var(), _var(grad_req='add')
    for k in (2, 5):
        with autograd.record():
            y = x * k + a * k
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [5, 5, 5])
    np.testing.assert_array_equal(a.grad.asnumpy(), [7, 7, 7])
    n = _var(grad_req='null')
    assert n.grad is None


def test_grad_buffer_is_the_same_object_across_steps():
    x = _var()
    g = x.grad
    for _ in range(2):
        with autograd.record():
            y = x * x
        y.backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.asnumpy(), [2, 4, 6])


def test_write_leaves_unreached_variables_alone():
    x, w = _var(), _var()
    with autograd.record():
        y = x * w
    y.backward()
    with autograd.record():
        z = x * 3
    z.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [1, 2, 3])   # from the first pass only
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 3, 3])


def test_head_grads_and_multiple_heads():
    x = _var()
    with autograd.record():
        a = x * 2
        b = x * x
    autograd.backward([a, b], head_grads=[mx.nd.array([1, 0, 1]), None])
    np.testing.assert_array_equal(x.grad.asnumpy(), [4, 4, 8])


def test_second_order_gradient():
    x = _var((0.5, 1.0))
    with autograd.record():
        y = mx.nd.sin(x)
        dy = autograd.grad(y, [x], create_graph=True)[0]
    dy.backward()
    np.testing.assert_allclose(dy.asnumpy(), np.cos([0.5, 1.0]), rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), -np.sin([0.5, 1.0]), rtol=1e-6)


def test_scopes_and_flags():
    assert (autograd.is_recording(), autograd.is_training()) == (False, False)
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording()
        with autograd.predict_mode():
            assert not autograd.is_training()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True


def test_inplace_on_recorded_array_is_an_error():
    x = _var()
    with autograd.record():
        y = x * 2
        with pytest.raises(mx.base.MXNetError, match='Inplace operations'):
            y += 1


def test_backward_twice_needs_retain_graph():
    x = _var(grad_req='add')
    with autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4, 8, 12])
    with pytest.raises(mx.base.MXNetError, match='second time'):
        y.backward()


def test_mark_variables_writes_into_given_buffer():
    x, gx = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
    autograd.mark_variables([x], [gx])
    with autograd.record():
        y = x * x * 3
    y.backward()
    np.testing.assert_array_equal(gx.asnumpy(), [6, 12])


def test_custom_function():
    class Square(autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x

        def backward(self, dy):
            x, = self.saved_tensors
            return dy * 2 * x

    x = _var()
    with autograd.record():
        y = Square()(x) * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6, 12, 18])


def test_detach_blocks_gradient():
    x = _var()
    with autograd.record():
        z = (x * 2).detach() * x
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 4, 6])


def test_elementwise_gradients_numerically():
    rng = np.random.RandomState(0)
    for name in ['sin', 'exp', 'tanh', 'sigmoid', 'square', 'abs', 'arctan', 'erf', 'softsign']:
        mx.test_utils.check_numeric_gradient(getattr(mx.nd, name), [rng.uniform(-1, 1, (2, 3))])
    pos = [rng.uniform(0.5, 2, (2, 3))]
    for name in ['log', 'sqrt', 'rsqrt', 'reciprocal', 'cbrt', 'log1p', 'gammaln']:
        mx.test_utils.check_numeric_gradient(getattr(mx.nd, name), pos)


def test_binary_and_scalar_gradients_numerically():
    rng = np.random.RandomState(1)
    a, b = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (1, 3))
    for name in ['broadcast_add', 'broadcast_sub', 'broadcast_mul', 'broadcast_div', 'broadcast_power',
                 'broadcast_maximum', 'broadcast_minimum', 'broadcast_hypot']:
        mx.test_utils.check_numeric_gradient(getattr(mx.nd, name), [a, b])
    for name in ['_plus_scalar', '_minus_scalar', '_rminus_scalar', '_mul_scalar', '_div_scalar',
                 '_rdiv_scalar', '_power_scalar', '_rpower_scalar', '_hypot_scalar']:
        mx.test_utils.check_numeric_gradient(lambda x, f=getattr(mx.nd, name): f(x, scalar=1.7), [a])
    mx.test_utils.check_numeric_gradient(lambda x: mx.nd.clip(x, 0.7, 1.5), [a])
    mx.test_utils.check_numeric_gradient(lambda x: mx.nd.smooth_l1(x - 1, scalar=1.5), [a])
    mx.test_utils.check_numeric_gradient(lambda x: mx.nd.hard_sigmoid(x - 1), [a])
    mx.test_utils.check_numeric_gradient(lambda x, y: mx.nd.add_n(x, y, x), [a, a * 2])


def test_tie_gradients_go_to_first_argument():
    x = _var((0.0, 2.0, 4.0))
    with autograd.record():
        y = mx.nd.broadcast_maximum(x, mx.nd.array([1.0, 2.0, 3.0]))
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 1, 1])


def test_backward_through_the_public_torch_api(monkeypatch):
    # neomx calls torch's engine directly when it can; the public API gives the same result
    monkeypatch.setattr(autograd, '_ENGINE_RUN_BACKWARD', None)
    x = _var()
    with autograd.record():
        y = x * x
    y.backward(mx.nd.array([1.0, 0.5, 2.0]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 12])


def test_array_of_a_freed_graph_is_a_constant_in_the_next_record():
    # Values from MXNet 1.9.1: an array computed in one record() whose graph backward()
    # freed (a carried RNN state) is a constant later; one whose graph was retained, or
    # that no backward pass reached, still leads gradients back to its inputs.
    x = _var((1.0, 2.0))
    with autograd.record():
        h = x * x
        loss = h.sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2., 4.])
    with autograd.record():
        loss = (h * x).sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [1., 4.])

    with autograd.record():
        a, b = x * 2, x * 3
    a.backward()
    with autograd.record():
        c = b * 4
    c.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [12., 12.])

    with autograd.record():
        h = x * x
        loss = h.sum()
    loss.backward(retain_graph=True)
    with autograd.record():
        loss = (h * x).sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3., 12.])


@pytest.mark.parametrize('hybridize', [False, True])
def test_rnn_state_carried_across_batches_without_detach(hybridize):
    layer = mx.gluon.rnn.LSTM(4, input_size=3)
    layer.initialize(mx.init.Xavier())
    if hybridize:
        layer.hybridize()
    trainer = mx.gluon.Trainer(layer.collect_params(), 'sgd', {'learning_rate': 0.1})
    state = layer.begin_state(batch_size=2)
    data = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (5, 2, 3)))
    for _ in range(3):
        carried = state
        with autograd.record():
            out, state = layer(data, carried)
            loss = out.sum()
        loss.backward()
        grad = layer.l0_i2h_weight.grad().asnumpy().copy()
        assert np.isfinite(grad).all() and np.abs(grad).sum() > 0
        # The same as from the carried state detached: a constant, as in MXNet.
        with autograd.record():
            out, _ = layer(data, [s.detach() for s in carried])
            loss = out.sum()
        loss.backward()
        np.testing.assert_array_equal(layer.l0_i2h_weight.grad().asnumpy(), grad)
        trainer.step(2)


def test_backward_reads_a_larger_head_gradient_leading_elements_as_mxnet():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    x.attach_grad()
    with autograd.record():
        y = x * 2
    y.backward(mx.nd.arange(8).reshape((4, 2)))
    assert x.grad.asnumpy().tolist() == [[0, 2], [4, 6], [8, 10]]
    with autograd.record():
        y = x * 2
    with pytest.raises(mx.base.MXNetError, match='head gradient 0 has shape'):
        y.backward(mx.nd.ones((2, 2)))


def test_differentiating_a_freed_graph_again_raises_as_mxnet():
    x = _var()
    with autograd.record():
        y = x + 1       # torch would keep nothing to free here
    y.backward()
    with pytest.raises(mx.base.MXNetError, match='retain_graph=True'):
        y.backward()
    with pytest.raises(mx.base.MXNetError, match='retain_graph=True'):
        autograd.grad(y, [x])


@pytest.mark.parametrize('stype', ['csr', 'row_sparse'])
def test_sparse_array_gradient_defaults_to_its_storage_type(stype):
    # MXNet: attach_grad() without stype gives a gradient of the array's own storage type, and
    # detach() keeps that storage type too
    x = mx.nd.array([[0, 1], [2, 0]]).tostype(stype)
    x.attach_grad()
    assert x.grad.stype == stype
    y = x.detach()
    assert y.stype == stype and y.asnumpy().tolist() == [[0, 1], [2, 0]]
    x.attach_grad(stype='default')
    assert x.grad.stype == 'default'


def test_dot_csr_gives_a_row_sparse_weight_its_row_sparse_gradient():
    lhs = mx.nd.array([[0, 2, 0], [1, 0, 0]]).tostype('csr')
    rhs = mx.nd.ones((3, 2)).tostype('row_sparse')
    rhs.attach_grad()
    with autograd.record():
        y = mx.nd.dot(lhs, rhs)
    y.backward()
    assert rhs.grad.stype == 'row_sparse'
    np.testing.assert_allclose(rhs.grad.asnumpy(), lhs.asnumpy().T @ np.ones((2, 2)))


@pytest.mark.parametrize('op', [mx.nd.radians, mx.nd.abs, mx.nd.relu, lambda t: mx.nd.clip(t, 0.1, 0.6),
                                lambda t: t * 3 + 1])
def test_second_gradient_of_a_piecewise_linear_operator_is_zero(op):
    # MXNet records the first gradient even where it does not depend on x (a linear operator's),
    # so differentiating it again gives zeros; torch's ZeroTensor results read as plain zeros
    x = mx.nd.array([0.3, -0.5, 0.4])
    x.attach_grad()
    with autograd.record():
        y = op(x)
        g = autograd.grad(y, x, head_grads=mx.nd.ones((3,)), create_graph=True, retain_graph=True)[0]
        g2 = autograd.grad(g, x, head_grads=mx.nd.ones((3,)), create_graph=True, retain_graph=True)[0]
    assert g2.shape == (3,) and g2.asnumpy().tolist() == [0.0, 0.0, 0.0]
    g.backward()
    assert x.grad.asnumpy().tolist() == [0.0, 0.0, 0.0]


def test_third_gradient_through_a_constant_second_gradient():
    x = mx.nd.array([0.5, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
        g = autograd.grad(y, x, create_graph=True)[0]
        g2 = autograd.grad(g, x, create_graph=True)[0]
        g3 = autograd.grad(g2, x, create_graph=True)[0]
    assert g.asnumpy().tolist() == [1.0, 4.0]
    assert g2.asnumpy().tolist() == [2.0, 2.0] and g3.asnumpy().tolist() == [0.0, 0.0]


def test_write_after_recording_is_read_by_backward():
    # MXNet's arrays carry no version: a variable overwritten between the recorded forward and
    # backward gives a gradient of its new value (torch alone would refuse the backward)
    x = mx.nd.array([1., 2., 3.])
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x).sum()
    x[:] = mx.nd.array([4., 5., 6.])
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [8., 10., 12.])
    with mx.autograd.record():
        y = (x * x).sum()
    x[1] = 7
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [8., 14., 12.])
    np.testing.assert_allclose(y.asnumpy(), [77.])     # the forward's value stays the one computed


def test_np_write_after_recording_is_read_by_backward():
    mx.npx.set_np()
    try:
        x = mx.np.array([1., 2., 3.])
        x.attach_grad()
        with mx.autograd.record():
            y = (x * x).sum()
        x[:] = mx.np.array([4., 5., 6.])
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), [8., 10., 12.])
    finally:
        mx.npx.reset_np()
