"""gluon.Trainer picks its KVStore and update_on_kvstore as MXNet 1.9.1 does."""
import numpy as np
import pytest

import neomx as mx
from neomx import gluon

CTXS = [mx.cpu(0), mx.cpu(1)]


def _param(stype='default', grad_stype='default', ctx=CTXS, shape=(4, 1)):
    x = gluon.Parameter('x', shape=shape, stype=stype, grad_stype=grad_stype)
    x.initialize(ctx=ctx, init='zeros')
    return x


def _step(trainer, x, rows=None):
    ws = x.list_data() if rows is None else x.list_row_sparse_data(rows)
    with mx.autograd.record():
        for w in ws:
            (w + 1).backward()
    trainer.step(1)


@pytest.mark.parametrize('kv', ['local', 'device'])
def test_dense_params_update_on_the_store_by_default(kv):
    x = _param()
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 0.1}, kvstore=kv)
    _step(trainer, x)
    assert trainer._update_on_kvstore is True
    assert trainer._kvstore.type == kv
    assert trainer._kvstore._updater.optimizer is trainer._optimizer
    for ctx in CTXS:        # the gradients of both contexts were summed: 0 - 0.1 * 2
        np.testing.assert_allclose(x.data(ctx).asnumpy(), -0.2)


def test_environment_variable_turns_the_store_update_off(monkeypatch):
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '0')
    x = _param()
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 0.1})
    _step(trainer, x)
    assert trainer._update_on_kvstore is False
    np.testing.assert_allclose(x.data(CTXS[1]).asnumpy(), -0.2)


def test_single_context_uses_no_store():
    x = _param(grad_stype='row_sparse', ctx=[mx.cpu(0)])
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0})
    _step(trainer, x)
    assert trainer._kvstore is None
    assert trainer._update_on_kvstore is None
    np.testing.assert_allclose(x.data().asnumpy(), -1)


def test_update_and_allreduce_refused_when_the_store_updates():
    x = _param()
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 0.1})
    _step(trainer, x)
    with pytest.raises(AssertionError, match='update_on_kvstore'):
        trainer.update(1)
    with pytest.raises(AssertionError, match='update_on_kvstore'):
        trainer.allreduce_grads()


def test_sparse_parameter_takes_one_trainer_only():
    x = _param(stype='row_sparse', ctx=[mx.cpu(0)])
    first = gluon.Trainer([x], 'sgd')
    assert x._trainer is first
    x._set_trainer(None)            # unsetting is allowed
    x._set_trainer(first)
    with pytest.raises(RuntimeError, match="Parameter 'x'.*More than one trainers"):
        gluon.Trainer([x], 'sgd')
    dense = _param(ctx=[mx.cpu(0)])
    gluon.Trainer([dense], 'sgd')
    gluon.Trainer([dense], 'sgd')   # a dense one may change trainer


@pytest.mark.parametrize('update_on_kvstore', [None, False, True])
def test_sparse_gradients_of_dense_weights_are_summed(update_on_kvstore):
    x = _param(grad_stype='row_sparse')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 0.1}, update_on_kvstore=update_on_kvstore)
    _step(trainer, x)
    assert trainer._update_on_kvstore is bool(update_on_kvstore)
    for ctx in CTXS:
        np.testing.assert_allclose(x.data(ctx).asnumpy(), -0.2)


def test_deferred_parameter_enters_the_store_during_a_later_forward():
    # The sparse weight's row_sparse_data starts the store in the first context's forward,
    # while the Dense weight waits for its shape; it enters the store in the second
    # context's forward, after the first context recorded a use of it.
    class Net(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.embed_weight = self.params.get('embed_weight', stype='row_sparse', shape=(4, 3),
                                                    grad_stype='row_sparse')
                self.dense = gluon.nn.Dense(2)

        def forward(self, x):
            weight = self.embed_weight.row_sparse_data(x)
            return self.dense(mx.nd.Embedding(x, weight, input_dim=4, output_dim=3, sparse_grad=True))

    net = Net()
    net.initialize(mx.init.One(), ctx=CTXS)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1})
    xs = gluon.utils.split_and_load(mx.nd.array([[0, 2], [1, 2]]), CTXS)
    with mx.autograd.record():
        ys = [net(x) for x in xs]
    for y in ys:
        y.backward()
    trainer.step(1)
    assert not trainer._params_to_init
    weight = net.embed_weight.row_sparse_data(mx.nd.arange(0, 4, ctx=CTXS[1])).asnumpy()
    np.testing.assert_allclose(weight[:, 0], [-1, -1, -3, 1])


def test_store_optimizer_updates_many_keys_as_one_key_at_a_time():
    grads = [mx.nd.array([1., 2.]), mx.nd.array([3., -1., 5.])]
    together = mx.kv.create('local')
    together.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
    alone = mx.kv.create('local')
    alone.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
    for kv in (together, alone):
        kv.init([3, 7], [mx.nd.ones(2), mx.nd.ones(3)])
    for _ in range(2):
        together.push([3, 7], [[g, g] for g in grads])
        for key, g in zip([3, 7], grads):
            alone.push(key, [g, g])
    for key, size in ((3, 2), (7, 3)):
        a, b = mx.nd.zeros(size), mx.nd.zeros(size)
        together.pull(key, out=a)
        alone.pull(key, out=b)
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy())
        assert not np.allclose(a.asnumpy(), 1)
