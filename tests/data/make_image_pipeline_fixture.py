"""Fixture of tests/test_image_pipeline.py: a RecordIO file of JPEG images and the batches
MXNet 1.9.1's ImageRecordIter makes of it, for the deterministic settings.

    PYTHONPATH=. python3 tests/data/make_image_pipeline_fixture.py rec      # image_pipeline.rec (neomx + OpenCV)
    ~/mxref/bin/python tests/data/make_image_pipeline_fixture.py mxnet     # image_pipeline_mxnet.npz

The .rec is written by neomx with OpenCV (the oracle's Python package has no cv2); the JPEG
bytes are OpenCV's, as MXNet's ``pack_img`` makes them.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REC = os.path.join(HERE, 'image_pipeline.rec')
OUT = os.path.join(HERE, 'image_pipeline_mxnet.npz')
# The mean image MXNet computes (and saves) for mean_img with data_shape (3, 16, 16).
MEAN = os.path.join(HERE, 'image_pipeline_mean_mxnet.nd')
# name: ImageRecordIter arguments (deterministic: no random crop or mirror, no shuffle).
CASES = {
    'center': dict(data_shape=(3, 24, 24), batch_size=4),
    'resize_norm': dict(data_shape=(3, 20, 20), batch_size=3, resize=26, mean_r=123.68,
                        mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375),
    'area_mirror': dict(data_shape=(3, 16, 16), batch_size=5, resize=18, inter_method=3,
                        mirror=True, scale=1 / 255.),
    'upscale_cubic': dict(data_shape=(3, 40, 40), batch_size=4, inter_method=2),
    'gray': dict(data_shape=(1, 24, 24), batch_size=4),
    'pad': dict(data_shape=(3, 28, 28), batch_size=4, resize=20, pad=4, fill_value=200),
    'sized_crop': dict(data_shape=(3, 16, 16), batch_size=4, min_crop_size=20, max_crop_size=20),
    'rotate': dict(data_shape=(3, 24, 24), batch_size=4, rotate=30, fill_value=10),
    'affine': dict(data_shape=(3, 20, 20), batch_size=4, rotate=20, min_random_scale=1.1,
                   max_random_scale=1.1, fill_value=0),
}


def make_rec():
    import neomx as mx
    rng = np.random.RandomState(7)
    writer = mx.recordio.MXRecordIO(REC, 'w')
    for i in range(7):
        height, width = 28 + 3 * i, 36 - 2 * i
        # Smooth colour gradients plus noise: JPEG-like content, small files.
        y, x = np.mgrid[0:height, 0:width]
        img = np.stack([x * 255 / width, y * 255 / height, (x + y) * 127 / (height + width)], -1)
        img = np.clip(img + rng.randn(height, width, 3) * 12, 0, 255).astype(np.uint8)
        writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i % 3), i, 0), img,
                                          quality=90))
    writer.close()


def make_batches():
    import mxnet as mx
    arrays = {}
    for name, kwargs in CASES.items():
        it = mx.io.ImageRecordIter(path_imgrec=REC, preprocess_threads=1, **kwargs)
        for n, batch in enumerate(list(it) + (it.reset() or list(it))):
            arrays['%s_data_%d' % (name, n)] = batch.data[0].asnumpy()
            arrays['%s_label_%d' % (name, n)] = batch.label[0].asnumpy()
            arrays['%s_pad_%d' % (name, n)] = np.array(batch.pad)
    np.savez_compressed(OUT, **arrays)
    if os.path.exists(MEAN):
        os.remove(MEAN)
    mx.io.ImageRecordIter(path_imgrec=REC, data_shape=(3, 16, 16), batch_size=7, mean_img=MEAN)


if __name__ == '__main__':
    {'rec': make_rec, 'mxnet': make_batches}[sys.argv[1]]()
