"""The CVPR 2017 Gluon tutorial's LeNet, trained on MNIST (the second seed document).

    python examples/train_mnist.py                       # 10 epochs on the CPU
    python examples/train_mnist.py --epochs 1 --ctx cpu --num-ctx 2   # data parallel, 2 contexts
    python examples/train_mnist.py --num-gpus 2          # on GPUs
    python -m neomx.launch -n 2 python examples/train_mnist.py --kvstore dist_sync   # 2 workers
    python examples/train_mnist.py --checkpoint-dir ckpt --resume   # go on from the last checkpoint
    python examples/train_mnist.py --rec data/mnist_train.rec      # training images from RecordIO
    python examples/train_mnist.py --amp bfloat16 --hybridize   # mixed precision (float16 on GPUs)

The code is the tutorial's, with ``import neomx as mx``: a Sequential of two
convolution/pooling stages and two dense layers, Xavier(magnitude=2.24) initialisation,
softmax cross-entropy, SGD with learning rate 0.1, batches of 64. The data comes from the
MNIST files carried in the repository (data/mnist). Each epoch's samples come in an order
drawn from the seed and the epoch; with a distributed ``--kvstore`` every worker takes its
own share of it (every n-th sample) and ``--batch-size`` stays the global batch, split
evenly over the workers; worker 0 prints. With ``--checkpoint-dir`` a checkpoint is written
atomically after each epoch (and every ``--checkpoint-every`` batches), and ``--resume``
continues from the newest complete one, at the same sample, with any number of workers.
With ``--rec`` the training images are read from a RecordIO file of PGM digits (written
from the MNIST files when it does not exist), in the same order, each batch decoded on a
thread while the one before trains.
"""
import argparse
import concurrent.futures
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
from neomx.gluon.checkpoint import Checkpointer, EpochShards

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
    p.add_argument('--max-batches', type=int, default=0,
                   help='quick runs: train and test on at most this many batches an epoch')
    p.add_argument('--data-dir', default=None, help='folder of the MNIST files (default: data/mnist)')
    p.add_argument('--checkpoint-dir', default=None, help='folder or URL of the checkpoints')
    p.add_argument('--checkpoint-every', type=int, default=0, help='also checkpoint every N batches')
    p.add_argument('--resume', action='store_true', help='continue from the newest checkpoint')
    p.add_argument('--rec', default=None, help='read the training images from this RecordIO file '
                                               '(made from the MNIST files when missing)')
    p.add_argument('--amp', choices=['bfloat16', 'float16'], default=None,
                   help='mixed precision with mx.contrib.amp (bfloat16 on CPUs, float16 on GPUs)')
    return p.parse_args(argv)


class RecordBatches:
    """The training set read from a RecordIO file of PGM digits (``.rec`` with its ``.idx``),
    written from the in-memory arrays when it does not exist yet.

    Each record is a real image record (``mx.recordio.unpack_img`` and ``ImageRecordIter``
    decode it): binary PGM, the pixels stored raw behind a 13-byte header, so that a batch of
    records of the same layout is decoded at once, as one numpy record array, instead of by
    64 decoder calls. A record of another layout (a file written as PNG, say) goes through
    ``unpack_img``.
    """
    PGM_HEADER = b'P5\n28 28\n255\n'
    # header (flag, label, id, id2) | PGM header | 28 x 28 pixels, as pack_img writes them
    LAYOUT = np.dtype([('flag', '<u4'), ('label', '<f4'), ('id', '<u8'), ('id2', '<u8'),
                       ('pgm', 'S%d' % len(PGM_HEADER)), ('pixels', 'u1', (28, 28))])

    def __init__(self, path, images, labels):
        index = os.path.splitext(path)[0] + '.idx'
        if not (os.path.exists(path) and os.path.exists(index)):
            writer = mx.recordio.MXIndexedRecordIO(index + '.part', path + '.part', 'w')
            for i, (image, label) in enumerate(zip(images, labels)):
                pixels = np.round(image.reshape(28, 28) * 255).astype(np.uint8)
                header = mx.recordio.IRHeader(0, float(label), i, 0)
                writer.write_idx(i, mx.recordio.pack_img(header, pixels, img_fmt='.pgm'))
            writer.close()
            os.replace(path + '.part', path)
            os.replace(index + '.part', index)
        self._records = mx.recordio.MXIndexedRecordIO(index, path, 'r')

    def load(self, batch):
        """(images (n, 1, 28, 28) float32 in [0, 1], labels (n,)) of the samples ``batch``."""
        raw = [self._records.read_idx(int(i)) for i in batch]
        joined = b''.join(raw)
        if len(joined) == len(raw) * self.LAYOUT.itemsize:
            records = np.frombuffer(joined, self.LAYOUT)
            if (records['flag'] == 0).all() and (records['pgm'] == self.PGM_HEADER).all():
                return records['pixels'][:, None] / np.float32(255), records['label']
        images = np.empty((len(batch), 1, 28, 28), np.float32)
        labels = np.empty(len(batch), np.float32)
        for k, record in enumerate(raw):
            header, pixels = mx.recordio.unpack_img(record, 0)
            images[k, 0] = pixels
            labels[k] = header.label
        images /= 255
        return images, labels

    def prefetched(self, batches):
        """``load`` of each of ``batches``, the next one decoded on a thread meanwhile."""
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = None
            for batch in batches:
                future = pool.submit(self.load, batch)
                if pending is not None:
                    yield pending.result()
                pending = future
            if pending is not None:
                yield pending.result()


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


def evaluate_accuracy(data_iterator, net, ctx, max_batches=0):
    numerator = 0.
    denominator = 0.
    data_iterator.reset()
    for n, batch in enumerate(data_iterator):
        if max_batches and n == max_batches:
            break
        data = batch.data[0].as_in_context(ctx)
        label = batch.label[0].as_in_context(ctx)
        output = net(data)
        predictions = nd.argmax(output, axis=1)
        numerator += nd.sum(predictions == label)
        denominator += data.shape[0]
    return (numerator / denominator).asscalar()


def main(argv=None):
    args = parse_args(argv)
    mx.random.seed(args.seed)
    np.random.seed(args.seed)     # mx.random.seed leaves numpy's generator alone, as in MXNet
    ctxs = contexts(args)
    if args.amp:
        from neomx.contrib import amp
        amp.init(args.amp)      # before the network is built, as MXNet asks
    mnist = mx.test_utils.get_mnist(args.data_dir)
    test_data = mx.io.NDArrayIter(mnist['test_data'], mnist['test_label'], args.batch_size)

    net = lenet(hybrid=args.hybridize)
    if args.hybridize:
        net.hybridize()
    net.collect_params().initialize(mx.init.Xavier(magnitude=2.24), ctx=ctxs)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    distributed = args.kvstore.startswith('dist')
    kv = mx.kv.create(args.kvstore) if distributed else args.kvstore
    workers, rank = (kv.num_workers, kv.rank) if distributed else (1, 0)
    batch_size = args.batch_size // workers                 # this worker's part of the global batch
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': args.lr}, kvstore=kv)
    if args.amp:
        amp.init_trainer(trainer)       # dynamic loss scaling
    # dist_sync sums the workers' gradients: normalise by the global batch
    scale = workers if args.kvstore in ('dist_sync', 'dist_device_sync') else 1
    shards = EpochShards(mnist['train_data'].shape[0], seed=args.seed)
    ckpt = args.checkpoint_dir and Checkpointer(args.checkpoint_dir, net, trainer, rank, workers)
    resumed = ckpt.restore(ctxs) if ckpt and args.resume else None
    start_epoch, done, position = (resumed['epoch'], resumed['batch'], resumed['position']) if resumed else (0, 0, 0)
    if resumed and rank == 0:
        print('Resumed from epoch %d batch %d (%d samples of the epoch read)' % (start_epoch, done, position), flush=True)

    records = RecordBatches(args.rec, mnist['train_data'], mnist['train_label']) if args.rec else None
    test_accuracy = None
    for e in range(start_epoch, args.epochs):
        tic = time.time()
        indices = shards.indices(e, rank, workers, start=position)
        # every worker takes the same number of steps: the smallest share's full batches
        steps = (mnist['train_data'].shape[0] - position) // workers // batch_size
        if args.max_batches:
            steps = min(steps, args.max_batches - done)
        if distributed:
            print('Worker %d of %d: epoch %d, %d batches from sample %d, first samples %s'
                  % (rank, workers, e, steps, position, indices[:4].tolist()), flush=True)
        moving_loss = 0.
        bar = range(steps) if args.no_progress or rank else tqdm(range(steps), desc='epoch %d' % e, leave=False,
                                                                  mininterval=1.0)
        batches = (indices[b * batch_size:(b + 1) * batch_size] for b in range(steps))
        if records:
            loaded = records.prefetched(batches)
        else:
            loaded = ((mnist['train_data'][batch], mnist['train_label'][batch]) for batch in batches)
        for b, (images, targets) in zip(bar, loaded):
            datas = gluon.utils.split_and_load(nd.array(images), ctxs)
            labels = gluon.utils.split_and_load(nd.array(targets), ctxs)
            with autograd.record():
                losses = [loss(net(x), y) for x, y in zip(datas, labels)]
                if args.amp:
                    with amp.scale_loss(losses, trainer) as scaled:
                        autograd.backward(scaled)
            if not args.amp:
                autograd.backward(losses)
            trainer.step(len(images) * scale)
            moving_loss = .99 * moving_loss + .01 * sum(nd.mean(l).asscalar() for l in losses) / len(losses)
            if ckpt and args.checkpoint_every and (done + b + 1) % args.checkpoint_every == 0:
                ckpt.save(e, done + b + 1, position + (b + 1) * batch_size * workers)
        train_time = time.time() - tic
        done = position = 0
        test_accuracy = evaluate_accuracy(test_data, net, ctxs[0], args.max_batches)
        if ckpt:
            ckpt.save(e + 1, 0, 0, extra={'test_accuracy': float(test_accuracy)})
        # the whole training set is evaluated only in full runs
        train_accuracy = float('nan') if args.max_batches else evaluate_accuracy(
            mx.io.NDArrayIter(mnist['train_data'], mnist['train_label'], args.batch_size), net, ctxs[0])
        if rank == 0:
            print("Epoch %d. Loss: %e, Train_acc %.4f, Test_acc %.4f (%.1f s training, %.1f s in all)"
                  % (e, moving_loss, train_accuracy, test_accuracy, train_time, time.time() - tic), flush=True)
    if test_accuracy is None:
        test_accuracy = evaluate_accuracy(test_data, net, ctxs[0], args.max_batches)
        if rank == 0:
            print('Nothing left to train. Test_acc %.4f' % test_accuracy, flush=True)
    return test_accuracy


if __name__ == '__main__':
    main()
