"""Data-parallel training on two contexts equals training on one context with the full batch.

Each network is trained for a few SGD steps twice from the same initial weights: once on
``[cpu(0), cpu(1)]`` (the batch split with ``split_and_load``, one loss per context, one
Trainer summing the gradients through the KVStore) and once on ``cpu(0)`` alone. The
weights must agree (up to float rounding) and the two contexts' copies must stay equal.

SyncBatchNorm is tested with ``use_global_stats=True``: neomx runs each context's forward
eagerly, one after the other, so batch statistics cannot be shared across the contexts of
one step (see SyncBatchNorm's docstring); with running statistics the normalisation does
not depend on how the batch is split, and data parallelism is exact again.
"""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon

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


def batchnorm_net():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, in_channels=2),
                gluon.contrib.nn.SyncBatchNorm(in_channels=4, num_devices=len(CONTEXTS),
                                               use_global_stats=True),
                gluon.nn.Activation('relu'),
                gluon.nn.Flatten(),
                gluon.nn.Dense(5, in_units=144))
    return net, (BATCH, 2, 8, 8)


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


def _train(make_net, ctx, init, **trainer_kwargs):
    """Weights (by position, on every context) after STEPS SGD steps on ``ctx``."""
    net, shape = make_net()
    net.initialize(ctx=ctx)
    for param, value in zip(net.collect_params().values(), init):
        param.set_data(mx.nd.array(value))
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3}, **trainer_kwargs)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for data, label in _batches(shape):
        parts = gluon.utils.split_and_load(data, ctx)
        labels = gluon.utils.split_and_load(label, ctx)
        with autograd.record():
            losses = [loss_fn(net(x), y) for x, y in zip(parts, labels)]
        autograd.backward(losses)
        trainer.step(BATCH)
    return [[arr.asnumpy() for arr in p.list_data()] for p in net.collect_params().values()]


@pytest.mark.parametrize('make_net', [dense_net, conv_net, batchnorm_net],
                         ids=['dense', 'conv', 'syncbatchnorm'])
@pytest.mark.parametrize('update_on_kvstore', [False, True])
def test_two_contexts_match_one_context(make_net, update_on_kvstore):
    init = _initial_weights(make_net)
    single = _train(make_net, [mx.cpu(0)], init)
    multi = _train(make_net, CONTEXTS, init, update_on_kvstore=update_on_kvstore)
    changed = 0
    for start, one, (first, second) in zip(init, single, multi):
        np.testing.assert_array_equal(first, second)         # the contexts' copies agree
        np.testing.assert_allclose(first, one[0], rtol=1e-5, atol=1e-6)
        changed += not np.allclose(start, one[0])
    assert changed >= len(init) - 2       # training moved the weights (not the frozen statistics)


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
