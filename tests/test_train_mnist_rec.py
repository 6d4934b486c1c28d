"""The main job (examples/train_mnist.py) with ``--rec``: the training images read from a
RecordIO file of PNG digits give the same training as the in-memory arrays."""
import os
import sys

import pytest

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
