"""Decoding and augmenting on the GPU (issue 27): does ``ImageRecordIter(ctx=mx.gpu())`` feed a
ResNet-50 training step without starving it?

    python benchmarks/bench_input_gpu.py                 # on a CUDA machine (about a minute)
    python benchmarks/bench_input_gpu.py --write out.json  # also write the rows as JSON
    python benchmarks/bench_input_gpu.py --quick         # a short try (on the CPU without CUDA)

On a generated RecordIO file of JPEGs (``--images``, 320x320, bench_input.py's generator),
ImageRecordIter with ``data_shape=(3, 224, 224)``, ``batch_size`` 64, ``shuffle``,
``rand_crop``, ``rand_mirror``, ImageNet mean/std, ``preprocess_threads`` 8:

* images/s of the CPU iterator and of the GPU iterator (``ctx=mx.gpu()``: nvJPEG decoding,
  augmentation on the GPU), each batch's data made ready (``wait_to_read``), and of nvJPEG's
  decoding alone (lists of 64 JPEGs);
* how far the GPU iterator's pixels are from the CPU iterator's (same records, same random
  crops and mirrors): mean and largest difference in pixel levels;
* images/s of a hybridized ResNet-50 (``resnet50_v1``) SGD training step, batch 64, on the GPU,
  (a) fed from the GPU iterator, (b) on a synthetic batch already on the GPU.
  "Without starving": (a) >= 0.95 x (b).

Prints the card's name and one row per figure; writes nothing unless ``--write``.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import neomx as mx  # noqa: E402
from bench_input import encoded_images, make_jpeg_rec  # noqa: E402

# A standalone script (its rows are images/s, not the neomx/torch time ratios of
# benchmarks/run.py): nothing for run.py to run.
BENCHMARKS = []
MEAN_STD = dict(mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12,
                std_b=57.375)


def _iterator(rec, ctx, args, **extra):
    settings = dict(path_imgrec=rec, path_imgidx=rec[:-4] + '.idx', data_shape=(3,) + (args.shape,) * 2,
                    batch_size=args.batch, shuffle=True, rand_crop=True, rand_mirror=True,
                    preprocess_threads=args.threads, prefetch_buffer=4, **MEAN_STD)
    settings.update(extra)
    if ctx is not None:
        settings['ctx'] = ctx
    return mx.io.ImageRecordIter(**settings)


def _endless(data_iter):
    while True:
        for batch in data_iter:
            yield batch
        data_iter.reset()


def iterator_rate(data_iter, batches):
    """Images/s of ``batches`` batches (after two of warm-up), each batch's data made ready."""
    stream = _endless(data_iter)
    for _ in range(2):
        next(stream).data[0].wait_to_read()
    start = time.perf_counter()
    for _ in range(batches):
        next(stream).data[0].wait_to_read()
    return batches * data_iter.batch_size / (time.perf_counter() - start)


def decode_rate(rec, ctx, batch):
    """Images/s of the device's decoder alone (``decode_jpeg`` of lists of ``batch`` JPEGs),
    its work finished."""
    from neomx._device_images import DeviceImageDecoder  # pylint: disable=import-outside-toplevel
    encoded = encoded_images(rec)
    decoder = DeviceImageDecoder(ctx.torch_device, 3)
    decoder.decode(encoded[:batch], None)                          # warm-up (nvJPEG's state)
    start = time.perf_counter()
    for i in range(0, len(encoded), batch):
        images = decoder.decode(encoded[i:i + batch], None)
    images[-1].sum().item()
    if ctx.device_type == 'gpu':
        torch.cuda.synchronize()
    return len(encoded) / (time.perf_counter() - start)


def pixel_difference(rec, ctx, args):
    """(mean, largest) difference in pixel levels between the first batches of the CPU and the
    device iterators (uint8 outputs, the same random crops and mirrors), and whether their
    labels are the same."""
    cpu = _iterator(rec, None, args, dtype='uint8', seed=1)
    dev = _iterator(rec, ctx, args, dtype='uint8', seed=1)
    diffs, same_labels = [], True
    for _, a, b in zip(range(3), cpu, dev):
        diffs.append(np.abs(a.data[0].asnumpy().astype(np.int16) - b.data[0].asnumpy().astype(np.int16)))
        same_labels &= bool((a.label[0].asnumpy() == b.label[0].asnumpy()).all())
    cpu.close()
    dev.close()
    diffs = np.concatenate(diffs)
    return float(diffs.mean()), int(diffs.max()), same_labels


def resnet_step(ctx, batch):
    """A hybridized ResNet-50 SGD training step on ``ctx``: ``step(data, label)``."""
    net = mx.gluon.model_zoo.vision.resnet50_v1()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def step(data, label):
        with mx.autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(batch)
        return loss
    return step


def training_rate(step, batches, count):
    """Images/s of ``count`` training steps on the batches ``batches`` yields (the GPU's work
    finished)."""
    loss = None
    start = time.perf_counter()
    for _ in range(count):
        batch = next(batches)
        loss = step(batch.data[0], batch.label[0])
    loss.wait_to_read()
    mx.nd.waitall()
    return count * batch.data[0].shape[0] / (time.perf_counter() - start)


class _Rows(list):
    """The rows, each printed as it comes (a failure later leaves the figures before it)."""

    def append(self, row):
        super().append(row)
        print('%-72s %10.2f  %s' % row, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--images', type=int, default=2000)
    parser.add_argument('--batch', type=int, default=64)
    parser.add_argument('--shape', type=int, default=224)
    parser.add_argument('--threads', type=int, default=8)
    parser.add_argument('--steps', type=int, default=25, help='timed ResNet-50 steps per row')
    parser.add_argument('--quick', action='store_true',
                        help='a short try: 96 small images, batch 8, 2 steps (on the CPU without CUDA)')
    parser.add_argument('--write', metavar='PATH', help='also write the rows as JSON to PATH')
    args = parser.parse_args(argv)
    size = 320
    if args.quick:
        args.images, args.batch, args.shape, args.threads, args.steps, size = 96, 8, 56, 2, 2, 64
    cuda = mx.context.num_gpus() > 0
    ctx = mx.gpu(0) if cuda else mx.cpu()
    card = torch.cuda.get_device_name(0) if cuda else 'no GPU: the tensor path on the CPU'
    print('card: %s; %d JPEGs %dx%d, data_shape (3, %d, %d)' % (card, args.images, size, size,
                                                                 args.shape, args.shape), flush=True)
    rows = _Rows()
    with tempfile.TemporaryDirectory() as folder:
        rec = make_jpeg_rec(folder, args.images, size=size)
        batches = args.images // args.batch
        cpu_iter = _iterator(rec, None, args)
        rows.append(('ImageRecordIter CPU, preprocess_threads=%d' % args.threads,
                     iterator_rate(cpu_iter, batches), 'images/s'))
        cpu_iter.close()
        dev_iter = _iterator(rec, ctx, args)
        rows.append(('ImageRecordIter ctx=%s, preprocess_threads=%d' % (ctx, args.threads),
                     iterator_rate(dev_iter, batches), 'images/s'))
        dev_iter.close()
        rows.append(('decode_jpeg(list of %d, device=%s) alone' % (args.batch, ctx),
                     decode_rate(rec, ctx, args.batch), 'images/s'))
        mean_diff, max_diff, same_labels = pixel_difference(rec, ctx, args)
        rows.append(('pixels of ctx=%s vs CPU: mean |difference|' % ctx, mean_diff,
                     'levels (largest %d; labels %s)' % (max_diff, 'identical' if same_labels else 'DIFFER')))

        step = resnet_step(ctx, args.batch)
        rng = np.random.RandomState(0)
        synthetic = mx.io.DataBatch(
            [mx.nd.array(rng.randn(args.batch, 3, args.shape, args.shape).astype(np.float32), ctx=ctx)],
            [mx.nd.array(rng.randint(0, 1000, args.batch).astype(np.float32), ctx=ctx)])

        def repeat():
            while True:
                yield synthetic
        training_rate(step, repeat(), 3)                         # warm-up: allocations, cuDNN
        dev_iter = _iterator(rec, ctx, args)
        fed = _endless(dev_iter)
        training_rate(step, fed, 2)
        # Alternating rounds, the best of each (the GPU's clocks and caches settle).
        synthetic_rate = fed_rate = 0
        for _ in range(2):
            synthetic_rate = max(synthetic_rate, training_rate(step, repeat(), args.steps))
            fed_rate = max(fed_rate, training_rate(step, fed, args.steps))
        dev_iter.close()
        rows.append(('ResNet-50 training step, batch %d: synthetic data on %s' % (args.batch, ctx),
                     synthetic_rate, 'images/s'))
        rows.append(('ResNet-50 training step, batch %d: fed by ImageRecordIter(ctx=%s)' % (args.batch, ctx),
                     fed_rate, 'images/s (%.2f of synthetic; target >= 0.95)' % (fed_rate / synthetic_rate)))
    if args.write:
        with open(args.write, 'w') as out:
            json.dump({'card': card, 'rows': [{'name': n, 'value': v, 'unit': u} for n, v, u in rows]},
                      out, indent=1)


if __name__ == '__main__':
    main()
