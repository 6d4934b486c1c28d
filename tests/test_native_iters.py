"""CSVIter, MNISTIter and LibSVMIter: MXNet's file iterators, batching as its C++ ones."""
import os

import numpy as np
import pytest

import neomx as mx

MNIST = os.path.join(os.path.dirname(__file__), '..', 'data', 'mnist')


def test_csv_iter_round_batch_and_padding(tmp_path):
    data, label = tmp_path / 'd.csv', tmp_path / 'l.csv'
    np.savetxt(data, np.arange(50).reshape(10, 5), delimiter=',', fmt='%d')
    np.savetxt(label, np.arange(10), delimiter=',', fmt='%d')
    it = mx.io.CSVIter(data_csv=str(data), data_shape=(5,), batch_size=4)
    assert it.provide_label[0].shape == (4,)
    firsts = [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it]
    assert firsts[-1] == ([40, 45, 0, 5], 2)          # wraps to the start
    it.reset()
    assert [b.data[0].asnumpy()[0, 0] for b in it] == [10, 30]   # goes on after the wrap
    it = mx.io.CSVIter(data_csv=str(data), data_shape=(5,), label_csv=str(label), batch_size=4,
                       round_batch=False, dtype='int32')
    last = list(it)[-1]
    assert last.pad == 2 and last.label[0].asnumpy().tolist() == [8, 9, 6, 7]
    assert last.data[0].dtype == np.int32
    with pytest.raises(mx.base.MXNetError, match='data_shape'):
        mx.io.CSVIter(data_csv=str(data), data_shape=(4,), batch_size=2)


@pytest.mark.skipif(not os.path.exists(os.path.join(MNIST, 't10k-images-idx3-ubyte.gz')),
                    reason='MNIST not in data/mnist')
def test_mnist_iter():
    it = mx.io.MNISTIter(image=os.path.join(MNIST, 't10k-images-idx3-ubyte.gz'),
                         label=os.path.join(MNIST, 't10k-labels-idx1-ubyte.gz'),
                         batch_size=3000, shuffle=False, flat=True)
    batches = list(it)
    assert len(batches) == 3                            # the incomplete last batch is dropped
    assert batches[0].data[0].shape == (3000, 784)
    assert batches[0].label[0].asnumpy()[:5].tolist() == [7, 2, 1, 0, 4]
    assert 0.99 < float(batches[0].data[0].max().asscalar()) < 1
    it.reset()
    it.iter_next()
    assert it.getlabel().shape == (3000,)


def test_libsvm_iter(tmp_path):
    path = tmp_path / 'x.libsvm'
    path.write_text('1 0:1.5 3:2\n0 2:1\n')
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(4,), batch_size=2)
    batch = next(it)
    np.testing.assert_array_equal(batch.data[0].asnumpy(), [[1.5, 0, 0, 2], [0, 0, 1, 0]])
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [1, 0])


def _tiny_mnist(folder):
    """Two IDX files of 4 blank 28x28 images and their labels."""
    import struct
    images, labels = str(folder / 'img'), str(folder / 'lbl')
    with open(images, 'wb') as f:
        f.write(struct.pack('>4B3I', 0, 0, 8, 3, 4, 28, 28) + bytes(4 * 28 * 28))
    with open(labels, 'wb') as f:
        f.write(struct.pack('>4BI', 0, 0, 8, 1, 4) + bytes([3, 1, 4, 1]))
    return images, labels


@pytest.mark.parametrize('kind', ['csv', 'mnist', 'libsvm'])
def test_iterators_take_data_and_label_names(tmp_path, kind):
    # every MXNet C++ iterator names its descriptors after data_name/label_name: a symbol whose
    # label input is not 'softmax_label' (SoftmaxOutput(name='sm') -> 'sm_label') trains on it
    if kind == 'csv':
        np.savetxt(tmp_path / 'd.csv', np.ones((4, 2)), delimiter=',')
        make = lambda **names: mx.io.CSVIter(data_csv=str(tmp_path / 'd.csv'), data_shape=(2,),
                                             batch_size=2, **names)
    elif kind == 'mnist':
        images, labels = _tiny_mnist(tmp_path)
        make = lambda **names: mx.io.MNISTIter(image=images, label=labels, batch_size=2,
                                               data_shape=(784,), **names)
    else:
        (tmp_path / 'x.libsvm').write_text('1 0:1\n0 1:1\n')
        make = lambda **names: mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'x.libsvm'),
                                                data_shape=(2,), batch_size=2, **names)
    default = make()
    assert [d.name for d in default.provide_data + default.provide_label] == ['data', 'softmax_label']
    named = make(data_name='pixels', label_name='sm_label')
    assert [d.name for d in named.provide_data + named.provide_label] == ['pixels', 'sm_label']
    assert named.provide_label[0].shape == (2,)
