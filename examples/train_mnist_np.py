"""LeNet on MNIST written in MXNet's NumPy style (the main job of train_mnist.py, the 2.0 way).

    python examples/train_mnist_np.py                 # 10 epochs on the CPU, hybridized
    python examples/train_mnist_np.py --no-hybridize  # eagerly
    python examples/train_mnist_np.py --epochs 1 --max-batches 50   # a quick check

``npx.set_np()`` turns on NumPy semantics: parameters, batches and outputs are ``mx.np``
arrays. The network is a ``HybridBlock`` whose ``forward(self, x)`` calls ``mx.np`` and
``mx.npx`` functions (MXNet 2.0's style): hybridized, it runs as one cached graph traced
from that ``forward``, which ``export`` writes as MXNet's JSON. The model and training
recipe are train_mnist.py's: two convolution/pooling stages and two dense layers,
Xavier(magnitude=2.24), softmax cross-entropy, SGD with learning rate 0.1, batches of 64,
with the samples of data/mnist shuffled by a DataLoader.
"""
import argparse
import os
import sys
import time

import numpy as onp

try:
    import neomx as mx
except ImportError:      # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    import neomx as mx
from neomx import autograd, gluon, np, npx
from neomx.gluon import nn


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--epochs', type=int, default=10)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--ctx', choices=['cpu', 'gpu'], default='cpu')
    p.add_argument('--no-hybridize', action='store_true', help='run eagerly')
    p.add_argument('--max-batches', type=int, default=0, help='quick runs: at most this many batches an epoch')
    p.add_argument('--data-dir', default=None, help='folder of the MNIST files (default: data/mnist)')
    p.add_argument('--export', default=None, help='export the trained network here (PREFIX-symbol.json...)')
    return p.parse_args(argv)


class LeNet(gluon.HybridBlock):
    """train_mnist.py's LeNet, written as ``forward`` with mx.np/mx.npx."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(channels=20, kernel_size=5)
            self.conv2 = nn.Conv2D(channels=50, kernel_size=5)
            self.fc1 = nn.Dense(500)
            self.fc2 = nn.Dense(10)

    def forward(self, x):
        x = npx.pooling(npx.relu(self.conv1(x)), kernel=(2, 2), stride=(2, 2), pool_type='max')
        x = npx.pooling(npx.relu(self.conv2(x)), kernel=(2, 2), stride=(2, 2), pool_type='max')
        x = npx.relu(self.fc1(npx.batch_flatten(x)))
        return self.fc2(x)


def to_input(images):
    """uint8 HWC images of a batch -> float32 NCHW in [0, 1] (as mx.test_utils.get_mnist)."""
    return np.transpose(images.astype('float32') / 255, (0, 3, 1, 2))


def evaluate(net, loader, ctx, max_batches=0):
    correct, total = 0, 0
    for n, (images, labels) in enumerate(loader):
        if max_batches and n == max_batches:
            break
        out = net(to_input(images.as_in_context(ctx)))
        correct += int((out.argmax(axis=1) == labels.as_in_context(ctx).astype('int64')).sum())
        total += images.shape[0]
    return correct / total


def main(argv=None):
    args = parse_args(argv)
    npx.set_np()
    mx.random.seed(args.seed)
    onp.random.seed(args.seed)
    ctx = npx.gpu(0) if args.ctx == 'gpu' else npx.cpu()
    root = args.data_dir or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'mnist')
    train = gluon.data.vision.MNIST(root=root, train=True)
    test = gluon.data.vision.MNIST(root=root, train=False)
    train_loader = gluon.data.DataLoader(train, args.batch_size, shuffle=True)
    test_loader = gluon.data.DataLoader(test, args.batch_size)

    net = LeNet()
    net.initialize(mx.init.Xavier(magnitude=2.24), ctx=ctx)
    if not args.no_hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': args.lr})

    accuracy = None
    for epoch in range(args.epochs):
        tic = time.time()
        moving_loss = 0.
        for n, (images, labels) in enumerate(train_loader):
            if args.max_batches and n == args.max_batches:
                break
            x, y = to_input(images.as_in_context(ctx)), labels.as_in_context(ctx)
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            moving_loss = .99 * moving_loss + .01 * float(loss.mean())
        train_time = time.time() - tic
        accuracy = evaluate(net, test_loader, ctx, args.max_batches)
        print('Epoch %d. Loss: %e, Test_acc %.4f (%.1f s training, %.1f s in all)'
              % (epoch, moving_loss, accuracy, train_time, time.time() - tic), flush=True)
    if args.export:
        net.export(args.export)
    return accuracy


if __name__ == '__main__':
    main()
