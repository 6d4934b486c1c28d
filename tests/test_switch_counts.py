"""The per-thread switches that hot paths test through a process-wide count first
(neomx._thread_switches), and the cheap paths of backward's freed-graph check and of the
optimizer's dense step: same behaviour as the thread-local reads and checks they skip."""
import threading

import numpy as np
import pytest

import neomx as mx
from neomx import _np_semantics
from neomx.base import MXNetError
from neomx.gluon import parameter as gluon_parameter


def _in_thread(fn):
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join()
    return out[0]


def test_numpy_array_semantics_are_counted_per_thread():
    base = _np_semantics.ARRAY_ON.on[0]     # (threads of earlier tests that ended with them on count)
    with mx.util.np_array(True):
        assert _np_semantics.ARRAY_ON.on[0] == base + 1
        # another thread's semantics stay off, though the count is not zero
        assert _in_thread(mx.util.is_np_array) is False
        with mx.util.np_array(True):        # nested: still one thread
            assert _np_semantics.ARRAY_ON.on[0] == base + 1
    assert _np_semantics.ARRAY_ON.on[0] == base
    assert mx.util.is_np_array() is False


def test_block_checks_run_while_numpy_semantics_are_on():
    class Echo(mx.gluon.Block):
        def forward(self, x):
            return x

    assert type(Echo()(mx.nd.ones((2,)))) is mx.nd.NDArray
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with mx.util.np_array(True):
        with pytest.raises(TypeError, match="Block's output ndarrays/symbols must be of type"):
            Echo()(mx.nd.ones((2,)))
        with pytest.raises(TypeError, match='numpy operator'):     # mx.npx's operators, eagerly
            net(mx.nd.ones((1, 3)))


def test_symbolic_data_scope_is_counted_and_restored():
    p = mx.gluon.Parameter('w', shape=(2,))
    p.initialize()
    base = gluon_parameter._SYMBOLIC_ON[0]
    with gluon_parameter.symbolic_data():
        assert gluon_parameter._SYMBOLIC_ON[0] == base + 1
        assert type(p.data()).__name__ == '_Symbol'
        assert type(_in_thread(p.data)) is mx.nd.NDArray     # only this thread traces
    assert gluon_parameter._SYMBOLIC_ON[0] == base
    assert type(p.data()) is mx.nd.NDArray


def test_backward_twice_raises_in_a_training_loop():
    x = mx.nd.ones((2, 2))
    x.attach_grad()
    for _ in range(3):      # each step's new loss: recorded since the last freeing pass
        with mx.autograd.record():
            y = (x * 2 + 1).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 2), 2.0))
    with pytest.raises(MXNetError, match='not in a computational graph'):
        y.backward()


def test_optimizer_refuses_a_gradient_of_another_shape():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1))
    with pytest.raises(MXNetError, match=r'weight shape \(3,\) and gradient shape \(2,\) differ'):
        updater([0], [mx.nd.ones((2,))], [mx.nd.ones((3,))])


def test_trainer_steps_only_when_every_gradient_is_fresh():
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    with mx.autograd.record():
        loss = net(mx.nd.ones((1, 2))).sum()
    loss.backward()
    trainer.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy(), [[0.0, 0.0]])
    with pytest.raises(UserWarning, match='stale'):     # no backward since: MXNet's stale warning
        trainer.step(1)
