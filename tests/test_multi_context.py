"""Data-parallel training on two contexts equals training on one context with the full batch.

Each network is trained for a few SGD steps twice from the same initial weights: once on
``[cpu(0), cpu(1)]`` (the batch split across the contexts, one loss per context, one
Trainer summing the gradients through the KVStore) and once on ``cpu(0)`` alone. The
weights and running statistics must agree (up to float rounding) and the two contexts'
copies must stay equal.

The contexts run either one after the other (``split_and_load`` and a list comprehension)
or in parallel threads (``gluon.contrib.parallel.DataParallelModel`` with ``sync=True``).
Batch statistics depend on the split, so SyncBatchNorm in training mode matches the
full batch only in the threaded run, where it shares statistics across the contexts;
run sequentially it is tested with ``use_global_stats=True``.
"""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon
from neomx.gluon.contrib.parallel import DataParallelCriterion, DataParallelModel

CONTEXTS = [mx.cpu(0), mx.cpu(1)]
BATCH = 8
STEPS = 3


def dense_net():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(16, activation='relu', in_units=12),
                gluon.nn.Dense(5, in_units=16))
    return net, (BATCH, 12)


def conv_net():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, activation='relu', in_channels=2),
                gluon.nn.MaxPool2D(2),
                gluon.nn.Flatten(),
                gluon.nn.Dense(5, in_units=36))
    return net, (BATCH, 2, 8, 8)


def _conv_batchnorm_net(use_global_stats):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, in_channels=2),
                gluon.contrib.nn.SyncBatchNorm(in_channels=4, num_devices=len(CONTEXTS),
                                               use_global_stats=use_global_stats),
                gluon.nn.Activation('relu'),
                gluon.nn.Flatten(),
                gluon.nn.Dense(5, in_units=144))
    return net, (BATCH, 2, 8, 8)


def batchnorm_net():
    return _conv_batchnorm_net(use_global_stats=True)


def sync_batchnorm_net():
    return _conv_batchnorm_net(use_global_stats=False)


def _batches(shape, seed=0):
    rng = np.random.RandomState(seed)
    return [(rng.uniform(-1, 1, shape).astype('float32'),
             rng.randint(0, 5, shape[0]).astype('float32')) for _ in range(STEPS)]


def _initial_weights(make_net):
    """Random initial values for every parameter of ``make_net``'s network (by position)."""
    net, _ = make_net()
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(1)
    # non-trivial BatchNorm statistics and affine terms, so they matter in the comparison
    return [rng.uniform(0.5, 1.5, p.shape).astype('float32') if p.name.endswith(('var', 'gamma'))
            else p.data().asnumpy() + rng.uniform(-0.1, 0.1, p.shape).astype('float32')
            for p in net.collect_params().values()]


def sequential_losses(net, loss_fn, ctx):
    """The per-context losses of a batch, the contexts run one after the other."""
    def losses(data, label):
        parts = gluon.utils.split_and_load(data, ctx)
        labels = gluon.utils.split_and_load(label, ctx)
        return [loss_fn(net(x), y) for x, y in zip(parts, labels)]
    return losses


def threaded_losses(net, loss_fn, ctx):
    """The per-context losses of a batch, the contexts run in parallel threads."""
    model = DataParallelModel(net, ctx, sync=True)
    criterion = DataParallelCriterion(loss_fn, ctx, sync=True)
    return lambda data, label: criterion(model(mx.nd.array(data)), mx.nd.array(label))


def _train(make_net, ctx, init, run=sequential_losses, **trainer_kwargs):
    """Parameters (by position, on every context) after STEPS SGD steps on ``ctx``."""
    net, shape = make_net()
    net.initialize(ctx=ctx)
    for param, value in zip(net.collect_params().values(), init):
        param.set_data(mx.nd.array(value))
    losses = run(net, gluon.loss.SoftmaxCrossEntropyLoss(), ctx)
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3}, **trainer_kwargs)
    for data, label in _batches(shape):
        with autograd.record():
            step_losses = losses(data, label)
        autograd.backward(step_losses)
        trainer.step(BATCH)
    return [[arr.asnumpy() for arr in p.list_data()] for p in net.collect_params().values()]


def _assert_trained_alike(init, single, multi, frozen=0):
    """The contexts' copies agree, match the one-context run, and training moved them."""
    changed = 0
    for start, one, (first, second) in zip(init, single, multi):
        np.testing.assert_array_equal(first, second)
        np.testing.assert_allclose(first, one[0], rtol=1e-5, atol=1e-6)
        changed += not np.allclose(start, one[0])
    assert changed == len(init) - frozen


@pytest.mark.parametrize('make_net', [dense_net, conv_net, batchnorm_net],
                         ids=['dense', 'conv', 'syncbatchnorm'])
@pytest.mark.parametrize('update_on_kvstore', [False, True])
def test_two_contexts_match_one_context(make_net, update_on_kvstore):
    init = _initial_weights(make_net)
    single = _train(make_net, [mx.cpu(0)], init)
    multi = _train(make_net, CONTEXTS, init, update_on_kvstore=update_on_kvstore)
    frozen_statistics = 2 if make_net is batchnorm_net else 0
    _assert_trained_alike(init, single, multi, frozen_statistics)


@pytest.mark.parametrize('make_net', [dense_net, sync_batchnorm_net], ids=['dense', 'syncbatchnorm'])
def test_threaded_contexts_match_one_context(make_net):
    """DataParallelModel(sync=True): SyncBatchNorm normalizes each context's part with the
    statistics of the whole batch, so weights and running statistics match one context."""
    init = _initial_weights(make_net)
    single = _train(make_net, [mx.cpu(0)], init)
    multi = _train(make_net, CONTEXTS, init, run=threaded_losses)
    _assert_trained_alike(init, single, multi)


def test_sequential_sync_batchnorm_uses_per_context_statistics():
    """Run one context after the other, SyncBatchNorm cannot share statistics (and must not
    wait for the other contexts): the result differs from the full batch's."""
    init = _initial_weights(sync_batchnorm_net)
    single = _train(sync_batchnorm_net, [mx.cpu(0)], init)
    multi = _train(sync_batchnorm_net, CONTEXTS, init)
    assert not np.allclose(single[-1][0], multi[-1][0], rtol=1e-5, atol=1e-6)


def test_split_and_load_places_one_part_per_context():
    data = np.arange(24, dtype='float32').reshape(8, 3)
    parts = gluon.utils.split_and_load(data, CONTEXTS)
    assert [p.context for p in parts] == CONTEXTS
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), data)


def test_stale_gradient_on_one_context_is_reported():
    net, shape = dense_net()
    net.initialize(ctx=CONTEXTS)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    data, _ = _batches(shape)[0]
    x = gluon.utils.split_and_load(data, CONTEXTS)[0]      # only cpu(0) runs backward
    with autograd.record():
        out = net(x)
    out.backward()
    with pytest.raises(UserWarning, match=r'on context cpu\(1\) has not been updated'):
        trainer.step(BATCH)
