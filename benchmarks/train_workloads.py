"""The training workloads of ``bench_train_vs_mxnet``, written once for neomx and MXNet 1.9.1:
each function takes the framework module as ``mx``. Run by the oracle interpreter:

    ~/mxref/bin/python benchmarks/train_workloads.py step lenet 1 20    # seconds per step
    ~/mxref/bin/python benchmarks/train_workloads.py mnist-epoch data/mnist
"""
import gzip
import json
import os
import sys
import time


def lenet(mx, hybrid):
    """The seed's LeNet, its SGD settings and its batch shape."""
    nn = mx.gluon.nn
    net = nn.HybridSequential() if hybrid else nn.Sequential()
    with net.name_scope():
        net.add(nn.Conv2D(channels=20, kernel_size=5, activation='relu'), nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(channels=50, kernel_size=5, activation='relu'), nn.MaxPool2D(pool_size=2, strides=2),
                nn.Flatten(), nn.Dense(500, activation='relu'), nn.Dense(10))
    net.initialize(mx.init.Xavier(magnitude=2.24))
    return net, {'learning_rate': 0.1}, (64, 1, 28, 28)


def resnet(mx, hybrid):  # pylint: disable=unused-argument
    """ResNet-18 v1 for 10 classes, SGD with momentum, CIFAR-sized batches of 32."""
    net = mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    return net, {'learning_rate': 0.1, 'momentum': 0.9}, (32, 3, 32, 32)


def train_step(mx, workload, hybrid):
    """One training step of ``workload`` ('lenet' or 'resnet'): a function to time."""
    net, sgd, shape = {'lenet': lenet, 'resnet': resnet}[workload](mx, hybrid)
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.random.normal(shape=shape)
    y = mx.nd.array([i % 10 for i in range(shape[0])])
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', sgd)

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(shape[0])
    return step


def seconds_per_step(mx, step, steps, rounds=5):
    """Best time per step over ``rounds`` rounds of ``steps`` steps, waiting for all work."""
    for _ in range(3):
        step()
    mx.nd.waitall()
    best = float('inf')
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        mx.nd.waitall()
        best = min(best, (time.perf_counter() - t0) / steps)
    return best


def _idx(folder, name):
    """An MNIST IDX file's images (N, 1, 28, 28) in [0, 1] or labels, as float32."""
    import numpy as np
    with gzip.open(os.path.join(folder, name), 'rb') as f:
        raw = f.read()
    if 'images' in name:
        return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(-1, 1, 28, 28).astype(np.float32) / 255
    return np.frombuffer(raw, dtype=np.uint8, offset=8).astype(np.float32)


def mnist_epoch_mxnet(folder):
    """(training seconds, test accuracy) of examples/train_mnist.py's first epoch, the loop
    written for MXNet: the same MNIST files, batches, loss and per-batch ``asscalar``."""
    import numpy as np
    import mxnet as mx
    from mxnet import autograd, gluon, nd
    train_data, train_label, test_data, test_label = (
        _idx(folder, name) for name in ('train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz',
                                        't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz'))
    mx.random.seed(1)
    np.random.seed(1)
    ctx = mx.cpu()
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(channels=20, kernel_size=5, activation='relu'))
        net.add(gluon.nn.MaxPool2D(pool_size=2, strides=2))
        net.add(gluon.nn.Conv2D(channels=50, kernel_size=5, activation='relu'))
        net.add(gluon.nn.MaxPool2D(pool_size=2, strides=2))
        net.add(gluon.nn.Flatten())
        net.add(gluon.nn.Dense(500, activation='relu'))
        net.add(gluon.nn.Dense(10))
    net.collect_params().initialize(mx.init.Xavier(magnitude=2.24), ctx=[ctx])
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore='device')
    batch_size = 64
    indices = np.random.RandomState(1).permutation(train_data.shape[0])
    tic = time.time()
    moving_loss = 0.
    for b in range(train_data.shape[0] // batch_size):
        batch = indices[b * batch_size:(b + 1) * batch_size]
        datas = gluon.utils.split_and_load(nd.array(train_data[batch]), [ctx])
        labels = gluon.utils.split_and_load(nd.array(train_label[batch]), [ctx])
        with autograd.record():
            losses = [loss(net(x), y) for x, y in zip(datas, labels)]
        autograd.backward(losses)
        trainer.step(len(batch))
        moving_loss = .99 * moving_loss + .01 * sum(nd.mean(l).asscalar() for l in losses) / len(losses)
    train_time = time.time() - tic
    it = mx.io.NDArrayIter(test_data, test_label, batch_size)
    right = total = 0.
    for batch in it:
        out = net(batch.data[0])
        right += nd.sum(nd.argmax(out, axis=1) == batch.label[0]).asscalar()
        total += batch.data[0].shape[0]
    return train_time, right / total


if __name__ == '__main__':
    import mxnet
    if sys.argv[1] == 'step':
        step = train_step(mxnet, sys.argv[2], sys.argv[3] == '1')
        print(json.dumps(seconds_per_step(mxnet, step, int(sys.argv[4]))))
    else:
        print(json.dumps(mnist_epoch_mxnet(sys.argv[2])))
