"""Input pipeline speed against MXNet 1.9.1 (issue 27), in one run on one machine.

    python benchmarks/bench_input.py                 # the full measurement (minutes)
    python benchmarks/bench_input.py --quick         # a short try (fewer images, one pass)
    python benchmarks/bench_input.py --mxnet PYTHON  # another MXNet interpreter (default ~/mxref)

Every figure comes from a fresh interpreter (neomx or MXNet) reading the same generated
RecordIO file: 800 JPEG images of 320x320 (quality 90, OpenCV's encoder, as MXNet's
``pack_img``), with its index.

Rows:
- ``ImageRecordIter`` images/s with ``data_shape=(3, 224, 224)``, batch 32, ``rand_crop``,
  ``rand_mirror``, ImageNet mean/std, ``preprocess_threads`` 1 and 2 (one warm-up pass,
  then timed passes); the ratio is neomx's rate over MXNet's (the target: at least 1.2).
- ``ImageRecordDataset`` + ``DataLoader(num_workers=2)``, batch 32, with
  ``RandomResizedCrop(224)``, ``RandomFlipLeftRight``, ``ToTensor``, ``Normalize``
  (the same Gluon code on both; the target: at least 1.0).
- The fraction of one core's JPEG decode rate (OpenCV's ``imdecode`` of the same 800
  images on one thread, in this process) that each ``ImageRecordIter`` row reaches: the
  physical limit of a pipeline that must decode every image.
- The main job (examples/train_mnist.py) training on its first ``--mnist-batches`` batches
  of an epoch read from a RecordIO file of PGM digits (``--rec``) against the in-memory
  arrays (the target: at most 10% slower).

The machine must be quiet for figures worth recording; ``--quick`` only checks that the
script runs.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MXNET_PYTHON = os.path.expanduser('~/mxref/bin/python')

# Runs in the measured interpreter: ``mx`` is neomx or mxnet; prints one JSON line.
_ITER_CODE = r'''
import json, sys, time
import numpy as np
mx = __import__(sys.argv[1])
rec, threads, passes = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=rec[:-4] + '.idx', data_shape=(3, 224, 224),
                           batch_size=32, rand_crop=True, rand_mirror=True,
                           mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12,
                           std_b=57.375, preprocess_threads=threads, prefetch_buffer=4)
for batch in it:
    batch.data[0].wait_to_read()
it.reset()
images, start = 0, time.perf_counter()
for _ in range(passes):
    for batch in it:
        batch.data[0].wait_to_read()
        images += batch.data[0].shape[0] - batch.pad
    it.reset()
print(json.dumps({'images_per_s': images / (time.perf_counter() - start)}))
'''

_LOADER_CODE = r'''
import json, sys, time
mx = __import__(sys.argv[1])
rec, passes = sys.argv[2], int(sys.argv[3])
T = mx.gluon.data.vision.transforms
transform = T.Compose([T.RandomResizedCrop(224), T.RandomFlipLeftRight(), T.ToTensor(),
                       T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
dataset = mx.gluon.data.vision.ImageRecordDataset(rec).transform_first(transform)
loader = mx.gluon.data.DataLoader(dataset, batch_size=32, shuffle=True, num_workers=2)
for data, label in loader:
    data.wait_to_read()
images, start = 0, time.perf_counter()
for _ in range(passes):
    for data, label in loader:
        data.wait_to_read()
        images += data.shape[0]
print(json.dumps({'images_per_s': images / (time.perf_counter() - start)}))
'''

def _run(python, code, *args, env=None):
    out = subprocess.run([python, '-c', code] + [str(a) for a in args], capture_output=True,
                         text=True, env=env)
    if out.returncode:
        raise RuntimeError('%s %s failed:\n%s' % (python, args, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def _neomx_env():
    env = dict(os.environ)
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    return env


def make_jpeg_rec(folder, count, size=320):
    """``count`` JPEGs of size x size (smooth colour fields with noise) in images.rec/.idx."""
    sys.path.insert(0, ROOT)
    import neomx as mx  # pylint: disable=import-outside-toplevel
    rng = np.random.RandomState(0)
    path = os.path.join(folder, 'images.rec')
    writer = mx.recordio.MXIndexedRecordIO(path[:-4] + '.idx', path, 'w')
    y, x = np.mgrid[0:size, 0:size] / size
    for i in range(count):
        phase = rng.rand(3) * 6
        img = 127 + 100 * np.sin(np.stack([x * 5 + phase[0], y * 7 + phase[1], (x + y) * 3 + phase[2]], -1))
        img = np.clip(img + rng.randn(size, size, 3) * 8, 0, 255).astype(np.uint8)
        writer.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i % 10), i, 0), img, quality=90))
    writer.close()
    return path


def encoded_images(path):
    """The encoded images of a RecordIO file, in its order."""
    sys.path.insert(0, ROOT)
    import neomx as mx  # pylint: disable=import-outside-toplevel
    reader = mx.recordio.MXRecordIO(path, 'r')
    encoded = []
    while True:
        record = reader.read()
        if record is None:
            break
        encoded.append(mx.recordio.unpack(record)[1])
    reader.close()
    return encoded


def decode_rate(path):
    """Images per second that one thread decodes with OpenCV (Pillow without it)."""
    sys.path.insert(0, ROOT)
    from neomx._image_decode import decode_bytes  # pylint: disable=import-outside-toplevel
    encoded = encoded_images(path)
    start = time.perf_counter()
    for data in encoded:
        decode_bytes(data, 1, True, 'bench')
    return len(encoded) / (time.perf_counter() - start)


def main_job_training_seconds(batches, rec=None):
    """The training time of one epoch (its first ``batches`` batches) of the main job,
    examples/train_mnist.py, from the in-memory arrays or from a RecordIO file (``--rec``)."""
    argv = [sys.executable, os.path.join(ROOT, 'examples', 'train_mnist.py'), '--epochs', '1',
            '--max-batches', str(batches), '--no-progress'] + (['--rec', rec] if rec else [])
    out = subprocess.run(argv, capture_output=True, text=True, env=_neomx_env())
    if out.returncode:
        raise RuntimeError('train_mnist.py failed:\n' + out.stderr[-3000:])
    return float(re.search(r'\(([0-9.]+) s training', out.stdout).group(1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='a short try: 160 images, one pass')
    parser.add_argument('--mxnet', default=MXNET_PYTHON, help='the MXNet 1.9.1 interpreter')
    parser.add_argument('--passes', type=int, default=3)
    parser.add_argument('--mnist-batches', type=int, default=300)
    args = parser.parse_args(argv)
    count, passes = (160, 1) if args.quick else (800, args.passes)
    mnist_batches = 20 if args.quick else args.mnist_batches
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        rec = make_jpeg_rec(folder, count)
        one_core = decode_rate(rec)
        for threads in (1, 2):
            ours = _run(sys.executable, _ITER_CODE, 'neomx', rec, threads, passes, env=_neomx_env())
            theirs = _run(args.mxnet, _ITER_CODE, 'mxnet', rec, threads, passes)
            rows.append(('ImageRecordIter preprocess_threads=%d' % threads, ours['images_per_s'],
                         theirs['images_per_s'], '%.2f of one core' % (ours['images_per_s'] / one_core)))
        ours = _run(sys.executable, _LOADER_CODE, 'neomx', rec, passes, env=_neomx_env())
        theirs = _run(args.mxnet, _LOADER_CODE, 'mxnet', rec, passes)
        rows.append(('ImageRecordDataset + DataLoader(num_workers=2)', ours['images_per_s'],
                     theirs['images_per_s'], ''))
        mnist_rec = os.path.join(folder, 'mnist_train.rec')
        main_job_training_seconds(1, mnist_rec)      # writes the RecordIO file once
        memory = main_job_training_seconds(mnist_batches)
        from_rec = main_job_training_seconds(mnist_batches, mnist_rec)
    print('one core decodes %.0f JPEG images/s (%dx%d)' % (one_core, 320, 320))
    print('%-48s %10s %10s %7s  %s' % ('row', 'neomx/s', 'MXNet/s', 'ratio', 'note'))
    for name, ours, theirs, note in rows:
        print('%-48s %10.0f %10.0f %7.2f  %s' % (name, ours, theirs, ours / theirs, note))
    print('main job, %d batches of an epoch: --rec %.1fs, in memory %.1fs of training (%.2fx)'
          % (mnist_batches, from_rec, memory, from_rec / memory))


if __name__ == '__main__':
    main()
