"""The CVPR 2017 Gluon tutorial's LeNet, trained on MNIST (the second seed document).

    python examples/train_mnist.py                       # 10 epochs on the CPU
    python examples/train_mnist.py --epochs 1 --ctx cpu --num-ctx 2   # data parallel, 2 contexts
    python examples/train_mnist.py --num-gpus 2          # on GPUs
    python -m neomx.launch -n 2 python examples/train_mnist.py --kvstore dist_sync   # 2 workers

The code is the tutorial's, with ``import neomx as mx``: a Sequential of two
convolution/pooling stages and two dense layers, Xavier(magnitude=2.24) initialisation,
softmax cross-entropy, SGD with learning rate 0.1, batches of 64. The data comes from the
MNIST files carried in the repository (data/mnist). With a distributed ``--kvstore`` each
worker trains on its own contiguous part of the training set (as ``Dataset.shard`` cuts it)
and ``--batch-size`` stays the global batch, split evenly over the workers; worker 0 prints.
"""
import argparse
import os
import sys
import time

import numpy as np

try:
    import neomx as mx
except ImportError:      # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    import neomx as mx
from neomx import autograd, gluon, nd

try:
    from tqdm import tqdm
except ImportError:      # the progress bar is optional (pip install -e ".[progress]")
    def tqdm(iterable, **kwargs):
        return iterable


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--epochs', type=int, default=10)
    p.add_argument('--batch-size', type=int, default=64)
    p.add_argument('--ctx', choices=['cpu', 'gpu'], default='cpu', help='device kind')
    p.add_argument('--num-gpus', type=int, default=0, help='train on this many GPUs (implies --ctx gpu)')
    p.add_argument('--num-ctx', type=int, default=1, help='number of contexts of --ctx to split batches over')
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--hybridize', action='store_true', help='compile the network into a graph')
    p.add_argument('--no-progress', action='store_true', help='no progress bar')
    p.add_argument('--kvstore', default='device', help="Trainer's kvstore: device, local, dist_sync, "
                                                       "dist_async or dist_device_sync (under neomx.launch)")
    p.add_argument('--max-batches', type=int, default=0, help='stop each epoch after this many batches')
    return p.parse_args(argv)


def contexts(args):
    if args.num_gpus > 0:
        return [mx.gpu(i) for i in range(args.num_gpus)]
    make = mx.gpu if args.ctx == 'gpu' else mx.cpu
    return [make(i) for i in range(args.num_ctx)]


def lenet(hybrid=False):
    """The tutorial's LeNet; a HybridSequential when it is to be hybridized."""
    net = gluon.nn.HybridSequential() if hybrid else gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(channels=20, kernel_size=5, activation='relu'))
        net.add(gluon.nn.MaxPool2D(pool_size=2, strides=2))
        net.add(gluon.nn.Conv2D(channels=50, kernel_size=5, activation='relu'))
        net.add(gluon.nn.MaxPool2D(pool_size=2, strides=2))
        net.add(gluon.nn.Flatten())
        net.add(gluon.nn.Dense(500, activation='relu'))
        net.add(gluon.nn.Dense(10))
    return net


def evaluate_accuracy(data_iterator, net, ctx):
    numerator = 0.
    denominator = 0.
    data_iterator.reset()
    for batch in data_iterator:
        data = batch.data[0].as_in_context(ctx)
        label = batch.label[0].as_in_context(ctx)
        output = net(data)
        predictions = nd.argmax(output, axis=1)
        numerator += nd.sum(predictions == label)
        denominator += data.shape[0]
    return (numerator / denominator).asscalar()


def shard(array, num_parts, part_index):
    """Part ``part_index`` of ``num_parts`` contiguous parts, the first ones one longer (Dataset.shard's cut)."""
    base, rest = divmod(array.shape[0], num_parts)
    start = base * part_index + min(part_index, rest)
    return array[start:start + base + (part_index < rest)]


def main(argv=None):
    args = parse_args(argv)
    mx.random.seed(args.seed)
    # NDArrayIter shuffles with numpy's generator, which mx.random.seed leaves alone (as in
    # MXNet): seed it too so that a run is reproducible.
    np.random.seed(args.seed)
    ctxs = contexts(args)
    kv = mx.kv.create(args.kvstore) if args.kvstore.startswith('dist') else args.kvstore
    workers, rank = (kv.num_workers, kv.rank) if args.kvstore.startswith('dist') else (1, 0)
    batch_size = args.batch_size // workers                 # this worker's part of the global batch
    mnist = mx.test_utils.get_mnist()
    train_data = mx.io.NDArrayIter(shard(mnist['train_data'], workers, rank),
                                   shard(mnist['train_label'], workers, rank), batch_size, shuffle=True)
    test_data = mx.io.NDArrayIter(mnist['test_data'], mnist['test_label'], batch_size, shuffle=True)

    net = lenet(hybrid=args.hybridize)
    if args.hybridize:
        net.hybridize()
    net.collect_params().initialize(mx.init.Xavier(magnitude=2.24), ctx=ctxs)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': args.lr}, kvstore=kv)
    # dist_sync sums the workers' gradients: normalise by the global batch
    scale = workers if args.kvstore in ('dist_sync', 'dist_device_sync') else 1

    steps = -(-train_data.num_data // batch_size)
    if args.max_batches:
        steps = min(steps, args.max_batches)
    for e in range(args.epochs):
        tic = time.time()
        train_data.reset()
        moving_loss = 0.
        bar = train_data if args.no_progress or rank else tqdm(train_data, total=steps, desc='epoch %d' % e,
                                                                leave=False, mininterval=1.0)
        for i, batch in enumerate(bar):
            if i == steps:
                break
            datas = gluon.utils.split_and_load(batch.data[0], ctxs)
            labels = gluon.utils.split_and_load(batch.label[0], ctxs)
            with autograd.record():
                losses = [loss(net(x), y) for x, y in zip(datas, labels)]
            autograd.backward(losses)
            trainer.step(batch.data[0].shape[0] * scale)
            moving_loss = .99 * moving_loss + .01 * sum(nd.mean(l).asscalar() for l in losses) / len(losses)
        train_time = time.time() - tic
        test_accuracy = evaluate_accuracy(test_data, net, ctxs[0])
        train_accuracy = evaluate_accuracy(train_data, net, ctxs[0])
        if rank == 0:
            print("Epoch %d. Loss: %e, Train_acc %.4f, Test_acc %.4f (%.1f s training, %.1f s in all)"
                  % (e, moving_loss, train_accuracy, test_accuracy, train_time, time.time() - tic), flush=True)
    return test_accuracy


if __name__ == '__main__':
    main()
