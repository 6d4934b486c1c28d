"""Gluon training against the equivalent raw PyTorch loop, and the DataLoader's workers.

* One training step of the seed's LeNet (batch 64 of 1x28x28) and of a small MLP
  (Dense 64-64-10, batch 32 of 100 features): ``autograd.record``, forward, softmax
  cross-entropy, backward, ``Trainer.step`` with SGD (lr 0.1), against a ``torch.nn`` model
  of the same layers with ``torch.optim.SGD(foreach=True)``.
* The DataLoader on MNIST with a ToTensor/Normalize transform: time per batch with two
  worker processes against the same loader with none.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import neomx as mx  # noqa: E402
from neomx import autograd, gluon  # noqa: E402
from benchmarks.common import Result, compare  # noqa: E402


def _lenet():
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(channels=20, kernel_size=5, activation='relu'),
                gluon.nn.MaxPool2D(pool_size=2, strides=2),
                gluon.nn.Conv2D(channels=50, kernel_size=5, activation='relu'),
                gluon.nn.MaxPool2D(pool_size=2, strides=2),
                gluon.nn.Flatten(),
                gluon.nn.Dense(500, activation='relu'),
                gluon.nn.Dense(10))
    return net


def _torch_lenet():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                         nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                         nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


def _mlp():
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(64, activation='relu'), gluon.nn.Dense(64, activation='relu'),
                gluon.nn.Dense(10))
    return net


def _torch_mlp(in_features):
    nn = torch.nn
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 10))


def neomx_train_step(net, x, y):
    """The Gluon training step on one batch: a function to time."""
    net.initialize(mx.init.Xavier(magnitude=2.24))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    batch_size = x.shape[0]

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch_size)
    return step


def torch_train_step(model, x, y):
    """The plain PyTorch step on the same batch (the loss summed over the batch and the
    gradient scaled by 1/batch, as Gluon's ``loss.backward(); trainer.step(batch)`` does)."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True)
    cross_entropy = torch.nn.functional.cross_entropy

    def step():
        opt.zero_grad(set_to_none=True)
        loss = cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def _compare_steps(name, net, model, x_shape, classes, target, **kw):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(x_shape, generator=gen)
    y = torch.randint(0, classes, (x_shape[0],), generator=gen)
    mx_step = neomx_train_step(net, mx.nd.NDArray(x), mx.nd.NDArray(y.float()))
    return compare(name, mx_step, torch_train_step(model, x, y), target,
                   note='torch.nn + torch.optim.SGD(foreach=True), same layers', **kw)


def bench_lenet_step():
    return _compare_steps('LeNet training step, batch 64 (Sequential, SGD)', _lenet(), _torch_lenet(),
                          (64, 1, 28, 28), 10, target=1.15, repeat=5, min_time=0.3)


def bench_mlp_step():
    return _compare_steps('MLP training step 64-64-10, batch 32 (Sequential, SGD)', _mlp(), _torch_mlp(100),
                          (32, 100), 10, target=1.3)


def _seconds_per_batch(loader, batches):
    """Seconds per batch over ``batches`` batches, once the workers are up (first batch out)."""
    it = iter(loader)
    next(it)
    t0 = time.perf_counter()
    for _ in range(batches):
        next(it)
    return (time.perf_counter() - t0) / batches


def bench_dataloader_workers(batches=200):
    transforms = gluon.data.vision.transforms
    dataset = gluon.data.vision.MNIST(train=True).transform_first(
        transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.13, 0.31)]))

    serial_loader, parallel_loader = (gluon.data.DataLoader(dataset, batch_size=64, shuffle=True,
                                                            num_workers=workers) for workers in (0, 2))
    serial, parallel = float('inf'), float('inf')
    for _ in range(3):      # interleaved, so that load from other processes hits both alike
        serial = min(serial, _seconds_per_batch(serial_loader, batches))
        parallel = min(parallel, _seconds_per_batch(parallel_loader, batches))
    return Result('DataLoader MNIST batch 64, ToTensor+Normalize: 2 workers vs 0', parallel, serial,
                  target=1 / 1.5,
                  note='neomx column: 2 workers, torch column: 0 workers (both neomx), per batch')


BENCHMARKS = [bench_lenet_step, bench_mlp_step, bench_dataloader_workers]
