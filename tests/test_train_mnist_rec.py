"""The main job (examples/train_mnist.py) with ``--rec``: the training images read from a
RecordIO file of PGM digits give the same training as the in-memory arrays."""
import os
import sys

import numpy as np
import pytest

import neomx as mx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'examples'))
import train_mnist  # noqa: E402


@pytest.mark.slow
def test_rec_training_equals_in_memory_training(tmp_path):
    args = ['--epochs', '1', '--max-batches', '4', '--no-progress']
    in_memory = train_mnist.main(args)
    rec = str(tmp_path / 'mnist_train.rec')
    from_rec = train_mnist.main(args + ['--rec', rec])
    assert os.path.exists(rec) and os.path.exists(str(tmp_path / 'mnist_train.idx'))
    assert from_rec == in_memory
    assert train_mnist.main(args + ['--rec', rec]) == in_memory      # the file made once is reused


def test_record_batches_decode_pgm_batches_at_once_and_other_records_one_by_one(tmp_path):
    rng = np.random.RandomState(0)
    images = (rng.randint(0, 256, (20, 1, 28, 28)) / 255).astype(np.float32)
    labels = rng.randint(0, 10, 20).astype(np.float32)
    batch = np.array([7, 3, 19, 0, 3])
    pgm = train_mnist.RecordBatches(str(tmp_path / 'pgm.rec'), images, labels)
    # the records are real image records: unpack_img decodes them
    header, pixels = mx.recordio.unpack_img(pgm._records.read_idx(3), 0)
    assert header.label == labels[3] and (pixels == np.round(images[3, 0] * 255)).all()
    # a file of PNG records (as the example wrote before) takes the record-by-record path
    writer = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'png.idx'), str(tmp_path / 'png.rec'), 'w')
    for i, (image, label) in enumerate(zip(images, labels)):
        writer.write_idx(i, mx.recordio.pack_img((0, float(label), i, 0),
                                                 np.round(image[0] * 255).astype(np.uint8), img_fmt='.png'))
    writer.close()
    png = train_mnist.RecordBatches(str(tmp_path / 'png.rec'), None, None)
    for loaded in (pgm.load(batch), png.load(batch)):
        np.testing.assert_array_equal(loaded[0], images[batch])
        np.testing.assert_array_equal(loaded[1], labels[batch])
        assert loaded[0].dtype == np.float32 and loaded[0].shape == (5, 1, 28, 28)
