"""gluon.data: datasets, samplers, DataLoader (in-process and with workers), vision datasets
and transforms."""
import gc
import gzip
import hashlib
import multiprocessing
import os
import struct
import time

import numpy as np
import pytest

import neomx as mx

D = mx.gluon.data
T = D.vision.transforms
X = np.arange(14, dtype='float32').reshape(7, 2)
Y = np.arange(7, dtype='float32') * 10


def _numpy(batch):
    if isinstance(batch, (list, tuple)):
        return [_numpy(b) for b in batch]
    return batch.asnumpy() if hasattr(batch, 'asnumpy') else batch


# ---------------------------------------------------------------- datasets
def test_dataset_views():
    ds = D.ArrayDataset(X, Y)
    assert len(ds) == 7 and ds[-1][1] == 60.0
    assert D.ArrayDataset(mx.nd.array(Y))[2] == 20.0            # 1-D NDArrays become numpy
    simple = D.SimpleDataset(list(range(10)))
    assert list(simple.filter(lambda v: v % 4 == 0)) == [0, 4, 8]
    assert [list(simple.shard(3, i)) for i in range(3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(simple.take(3)) == [0, 1, 2] and len(simple.take(None)) == 10
    assert list(simple.sample(D.SequentialSampler(2, start=5))) == [5, 6]
    eager = simple.transform(lambda v: -v, lazy=False)
    assert isinstance(eager, D.SimpleDataset) and eager[3] == -3
    first = ds.transform_first(lambda x: x.sum())
    assert first[1] == (5.0, 10.0)
    with pytest.raises(AssertionError, match='same length'):
        D.ArrayDataset(X, Y[:3])


# ---------------------------------------------------------------- samplers
def test_samplers():
    assert list(D.SequentialSampler(3)) == [0, 1, 2]
    assert sorted(D.RandomSampler(6)) == list(range(6))
    assert not hasattr(D, 'IntervalSampler')    # MXNet has it in gluon.contrib.data only
    keep = D.BatchSampler(D.SequentialSampler(7), 3)
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6]] and len(keep) == 3
    discard = D.BatchSampler(D.SequentialSampler(7), 3, 'discard')
    assert list(discard) == [[0, 1, 2], [3, 4, 5]] and len(discard) == 2
    roll = D.BatchSampler(D.SequentialSampler(7), 3, 'rollover')
    assert list(roll) == [[0, 1, 2], [3, 4, 5]] and len(roll) == 2
    assert list(roll) == [[6, 0, 1], [2, 3, 4]]
    with pytest.raises(ValueError, match='last_batch'):
        list(D.BatchSampler(D.SequentialSampler(7), 3, 'nope'))


# -------------------------------------------------------------- DataLoader
def test_default_batchify_dtypes():
    data, label = next(iter(D.DataLoader(D.ArrayDataset(X, np.arange(7)), batch_size=4)))
    assert (data.dtype, label.dtype, data.shape) == (np.float32, np.int64, (4, 2))
    floats = next(iter(D.DataLoader(D.SimpleDataset([1.0, 2.0]), batch_size=2)))
    assert floats.dtype == np.float64                             # Python floats, as in MXNet
    nds = next(iter(D.DataLoader(D.SimpleDataset([mx.nd.ones((2,)) * i for i in range(3)]), batch_size=3)))
    np.testing.assert_array_equal(nds.asnumpy(), [[0, 0], [1, 1], [2, 2]])


def test_dataloader_argument_checks():
    ds = D.SimpleDataset([1, 2, 3])
    with pytest.raises(ValueError, match='batch_size'):
        D.DataLoader(ds)
    with pytest.raises(ValueError, match='shuffle'):
        D.DataLoader(ds, batch_size=2, shuffle=True, sampler=D.SequentialSampler(3))
    with pytest.raises(ValueError, match='batch_sampler'):
        D.DataLoader(ds, batch_size=2, batch_sampler=D.BatchSampler(D.SequentialSampler(3), 2))
    loader = D.DataLoader(ds, batch_size=2, last_batch='nope')       # accepted until iterated
    with pytest.raises(ValueError, match='last_batch'):
        list(loader)


def _image_dataset():
    images = np.random.RandomState(0).randint(0, 256, (23, 6, 5, 3)).astype('uint8')
    # in CPU memory whatever the current context: forked workers cannot touch a GPU (in MXNet either)
    ds = D.ArrayDataset(mx.nd.array(images, dtype='uint8', ctx=mx.cpu()), np.arange(23, dtype='int32'))
    return ds.transform_first(T.Compose([T.ToTensor(), T.Normalize(0.5, 0.25)]))


@pytest.mark.parametrize('options', [dict(num_workers=2), dict(num_workers=2, thread_pool=True),
                                     dict(num_workers=2, prefetch=1, last_batch='rollover')])
def test_workers_give_the_same_batches_as_the_main_process(options):
    dataset = _image_dataset()
    single = D.DataLoader(dataset, batch_size=5, last_batch=options.get('last_batch'))
    workers = D.DataLoader(dataset, batch_size=5, **options)
    for _ in range(2):                                           # the pool is reused across epochs
        count = len(workers)                                     # rollover: depends on the carry
        expected, got = [_numpy(b) for b in single], [_numpy(b) for b in workers]
        assert len(got) == len(expected) == count
        for (x0, y0), (x1, y1) in zip(expected, got):
            np.testing.assert_array_equal(x0, x1)
            np.testing.assert_array_equal(y0, y1)
    if not options.get('thread_pool'):
        assert next(iter(workers))[0].context == mx.Context('cpu_shared', 0)


@pytest.mark.parametrize('num_workers', [0, 1])
def test_pin_memory_and_custom_batchify(num_workers):
    loader = D.DataLoader(D.ArrayDataset(X, Y), batch_size=4, pin_memory=True, num_workers=num_workers,
                          batchify_fn=lambda samples: mx.nd.array([s[1] for s in samples]))
    batches = list(loader)
    assert batches[0].context == mx.cpu_pinned(0)
    np.testing.assert_array_equal(batches[1].asnumpy(), [40, 50, 60])



class _Failing(D.Dataset):
    """Samples 0..7 (index as float32 pairs); index ``bad`` fails by ``how``."""

    def __init__(self, bad, how):
        self._bad, self._how = bad, how

    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == self._bad:
            self._how(idx)
        return np.array([idx, -idx], dtype='float32')


def _raise_value_error(idx):
    raise ValueError('bad sample %d' % idx)


class _Unpicklable(Exception):
    def __init__(self, a, b):             # pickle rebuilds exceptions from args: this one cannot be
        super().__init__('needs %s and %s' % (a, b))


def _raise_unpicklable(idx):
    raise _Unpicklable(idx, 'x')


def test_worker_errors_propagate_with_the_workers_traceback():
    loader = D.DataLoader(_Failing(5, _raise_value_error), batch_size=2, num_workers=2)
    it = iter(loader)
    np.testing.assert_array_equal(next(it).asnumpy(), [[0, 0], [1, -1]])
    next(it)
    with pytest.raises(ValueError, match='bad sample 5') as info:
        next(it)
    cause = info.value.__cause__
    assert isinstance(cause, D.dataloader.WorkerTraceback) and '_raise_value_error' in str(cause)
    np.testing.assert_array_equal(next(it).asnumpy(), [[6, -6], [7, -7]])     # the workers live on
    with pytest.raises(RuntimeError, match='_Unpicklable: needs 1 and x'):
        list(D.DataLoader(_Failing(1, _raise_unpicklable), batch_size=2, num_workers=1))


def _sleep(_):
    time.sleep(2)


def test_worker_timeout_and_death():
    with pytest.raises(multiprocessing.TimeoutError, match='timed out after 0.2 seconds'):
        list(D.DataLoader(_Failing(0, _sleep), batch_size=2, num_workers=1, timeout=0.2))
    with pytest.raises(RuntimeError, match='exited unexpectedly with code 3'):
        list(D.DataLoader(_Failing(2, lambda _: os._exit(3)), batch_size=2, num_workers=2))


def _variable_batches(samples):
    """Batches of growing size (beyond the workers' first buffers) and non-array leaves."""
    n = int(samples[0][0])
    return [mx.nd.full((n * 5000,), n, dtype='float64'), mx.nd.array([n], dtype='uint8'), np.arange(n),
            'batch%d' % n]


def test_growing_batches_abandoned_and_concurrent_iterators():
    dataset = _Failing(-1, None)
    single = D.DataLoader(dataset, batch_size=1, batchify_fn=_variable_batches)
    workers = D.DataLoader(dataset, batch_size=1, batchify_fn=_variable_batches, num_workers=2, prefetch=3)
    next(iter(workers))                       # abandoned with batches in flight
    next(iter(workers))
    pairs = list(zip(workers, workers))       # two iterations at once
    expected = [_numpy(b) for b in single]
    assert len(pairs) == len(expected) == 8
    for want, (a, b) in zip(expected, pairs):
        for got in (_numpy(a), _numpy(b)):
            assert got[3] == want[3] and got[1].dtype == np.uint8
            for g, w in zip(got[:3], want[:3]):
                np.testing.assert_array_equal(g, w)


def test_workers_have_their_own_random_streams():
    dataset = D.SimpleDataset(list(range(4))).transform(lambda _: np.float32(np.random.rand()))
    batches = [b.asnumpy() for b in D.DataLoader(dataset, batch_size=1, num_workers=2)]
    assert batches[0] != batches[1]            # from two workers


def _is_running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_workers_stop_without_leaving_processes_files_or_shared_memory():
    gc.collect()                              # earlier tests' loaders close their pipes now, not below
    shm_before, fds_before = set(os.listdir('/dev/shm')), len(os.listdir('/proc/self/fd'))
    loader = D.DataLoader(_image_dataset(), batch_size=5, num_workers=2)
    it = iter(loader)
    next(it)                                  # batches still in flight
    pids = [w._process.pid for w in loader._pool._workers]
    assert all(_is_running(pid) for pid in pids)
    del loader, it
    gc.collect()
    assert not any(_is_running(pid) for pid in pids)
    assert set(os.listdir('/dev/shm')) == shm_before and len(os.listdir('/proc/self/fd')) == fds_before

# ---------------------------------------------------------------- transforms
def _hwc(h=4, w=6, c=3):
    return mx.nd.array(np.arange(h * w * c).reshape(h, w, c) % 256, dtype='uint8')


def test_to_tensor_normalize_cast():
    img = _hwc()
    tensor = T.ToTensor()(img)
    assert tensor.shape == (3, 4, 6) and tensor.dtype == np.float32
    np.testing.assert_allclose(tensor.asnumpy(), img.asnumpy().transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert T.ToTensor()(mx.nd.stack(img, img)).shape == (2, 3, 4, 6)
    normalized = T.Normalize((0.1, 0.2, 0.3), (0.5, 1.0, 2.0))(tensor).asnumpy()
    expected = (tensor.asnumpy() - np.array([0.1, 0.2, 0.3])[:, None, None]) / np.array([0.5, 1, 2])[:, None, None]
    np.testing.assert_allclose(normalized, expected, rtol=1e-5)
    assert T.Cast('float16')(img).dtype == np.float16


def test_resize_and_crops():
    img = _hwc()
    assert T.Resize(8)(img).shape == (8, 8, 3)
    assert T.Resize((5, 3))(img).shape == (3, 5, 3)
    assert T.Resize(2, keep_ratio=True)(img).shape == (2, 3, 3)
    up = T.Resize(4, interpolation=0)(mx.nd.array([[[0], [50]], [[100], [150]]], dtype='uint8'))
    np.testing.assert_array_equal(up.asnumpy()[:, :, 0], np.repeat(np.repeat([[0, 50], [100, 150]], 2, 0), 2, 1))
    linear = T.Resize(3)(mx.nd.array([[[1.0], [2.0]], [[3.0], [5.0]]]))     # OpenCV's pixel-centre grid
    np.testing.assert_allclose(linear.asnumpy()[:, :, 0], [[1, 1.5, 2], [2, 2.75, 3.5], [3, 4, 5]], rtol=1e-6)
    np.testing.assert_array_equal(T.CenterCrop((2, 3))(img).asnumpy(), img.asnumpy()[0:3, 2:4])
    # As MXNet's (mx.image.center_crop): a larger crop takes the largest window, resized.
    assert T.CenterCrop(10)(img).shape == (10, 10, 3)
    assert T.RandomResizedCrop((3, 2))(img).shape == (2, 3, 3)


@pytest.mark.parametrize('size, keep_ratio, what', [
    (-150, True, 'size'), (0, False, 'size'), ((-5, 10), False, 'width'), ((5, -10), False, 'height'),
    ((100, 100, 100), True, 'width, height')])
def test_resize_rejects_bad_sizes(size, keep_ratio, what):
    # MXNet's resize checks the size before any pixel is touched (OpenCV would assert instead)
    with pytest.raises(mx.MXNetError, match='resize: .*%s' % what):
        T.Resize(size, keep_ratio=keep_ratio)(_hwc())


def test_flips_and_colour_transforms():
    img = _hwc()
    flips = {T.RandomFlipLeftRight()(img).asnumpy().tobytes() for _ in range(20)}
    assert flips == {img.asnumpy().tobytes(), img.asnumpy()[:, ::-1].tobytes()}
    flips = {T.RandomFlipTopBottom()(img).asnumpy().tobytes() for _ in range(20)}
    assert flips == {img.asnumpy().tobytes(), img.asnumpy()[::-1].tobytes()}
    pixels = mx.nd.array(np.random.RandomState(1).uniform(0, 255, (4, 4, 3)))
    for transform in (T.RandomBrightness(0.0), T.RandomContrast(0.0), T.RandomSaturation(0.0), T.RandomHue(0.0),
                      T.RandomColorJitter(), T.RandomLighting(0.0)):
        np.testing.assert_allclose(transform(pixels).asnumpy(), pixels.asnumpy(), rtol=1e-4, atol=1e-3)
    gray = mx.nd.full((2, 2, 3), 100.0)                          # gray pixels have no saturation or hue
    for transform in (T.RandomSaturation(0.5), T.RandomHue(0.3), T.RandomContrast(0.5)):
        np.testing.assert_allclose(transform(gray).asnumpy(), 100.0, rtol=1e-4)
    bright = T.RandomBrightness(0.5)(pixels).asnumpy() / pixels.asnumpy()
    assert 0.5 <= bright.min() and np.allclose(bright, bright.flat[0], rtol=1e-4) and bright.max() <= 1.5
    jittered = T.RandomColorJitter(0.4, 0.4, 0.4, 0.1)(_hwc())
    assert jittered.dtype == np.uint8 and jittered.shape == (4, 6, 3)
    lit = mx.nd.image.adjust_lighting(mx.nd.array([[[10.0, 20.0, 30.0]]]), alpha=(0.1, 0.2, 0.3))
    np.testing.assert_allclose(lit.asnumpy(), [[[7.6802835, 16.494226, 26.241932]]], rtol=1e-5)   # MXNet 1.9.1


def test_compose_groups_hybrid_blocks():
    composed = T.Compose([T.Cast(), T.ToTensor(), T.CenterCrop(2), T.Normalize()])
    assert [type(c).__name__ for c in composed._children.values()] == ['HybridSequential', 'CenterCrop', 'Normalize']


# ------------------------------------------------------------ vision datasets
def _write_idx(path, header, payload):
    with gzip.open(path, 'wb') as f:
        f.write(struct.pack('>%dI' % len(header), *header) + payload.tobytes())


def _write_fake_mnist(folder, count=5):
    images = np.random.RandomState(2).randint(0, 256, (count, 28, 28)).astype('uint8')
    labels = np.arange(count, dtype='uint8') % 10
    for prefix in ('train', 't10k'):
        _write_idx(folder / ('%s-images-idx3-ubyte.gz' % prefix), (2051, count, 28, 28), images)
        _write_idx(folder / ('%s-labels-idx1-ubyte.gz' % prefix), (2049, count), labels)
    return images, labels


def _accept_local_files(monkeypatch, folder, cls):
    """Make ``cls`` accept the files written in ``folder`` (their sha1s are not MNIST's)."""
    files = {}
    for key, (name, _) in cls._files.items():
        files[key] = (name, (hashlib.sha1((folder / name).read_bytes()).hexdigest(),))
    monkeypatch.setattr(cls, '_files', files)


def test_mnist_reads_idx_files(tmp_path, monkeypatch):
    images, labels = _write_fake_mnist(tmp_path)
    _accept_local_files(monkeypatch, tmp_path, D.vision.MNIST)
    ds = D.vision.MNIST(root=str(tmp_path), train=False, transform=lambda x, y: (x.astype('float32'), y))
    x, y = ds[3]
    assert len(ds) == 5 and x.shape == (28, 28, 1) and y == labels[3] and y.dtype == np.int32
    np.testing.assert_array_equal(x.asnumpy()[:, :, 0], images[3])
    arrays = D.vision.read_mnist_arrays(str(tmp_path))
    assert arrays['train_data'].shape == (5, 1, 28, 28) and arrays['train_data'].dtype == np.float32
    np.testing.assert_allclose(arrays['test_data'][1, 0], images[1] / 255.0, rtol=1e-6)
    assert arrays['test_label'].dtype == np.float32


def test_missing_files_fail_clearly_offline(tmp_path, monkeypatch):
    monkeypatch.setenv('MXNET_GLUON_REPO', (tmp_path / 'no-repo').as_uri() + '/')
    with pytest.raises(mx.base.MXNetError, match='could not be downloaded'):
        D.vision.FashionMNIST(root=str(tmp_path / 'fashion'))


def test_cifar_binary_batches(tmp_path, monkeypatch):
    rng = np.random.RandomState(4)
    records = np.concatenate([rng.randint(0, 100, (3, 2)), rng.randint(0, 256, (3, 3072))], axis=1).astype('uint8')
    (tmp_path / 'test.bin').write_bytes(records.tobytes())
    monkeypatch.setattr(D.vision.CIFAR100, '_test_files',
                        [('test.bin', hashlib.sha1(records.tobytes()).hexdigest())])
    fine = D.vision.CIFAR100(root=str(tmp_path), fine_label=True, train=False)
    coarse = D.vision.CIFAR100(root=str(tmp_path), train=False)
    image, label = fine[1]
    assert image.shape == (32, 32, 3) and label == records[1, 1] and coarse[1][1] == records[1, 0]
    np.testing.assert_array_equal(image.asnumpy(), records[1, 2:].reshape(3, 32, 32).transpose(1, 2, 0))


def test_image_folder_dataset(tmp_path):
    image_module = pytest.importorskip('PIL.Image')
    for cls, color in (('cat', (255, 0, 0)), ('dog', (0, 0, 255))):
        (tmp_path / cls).mkdir()
        image_module.new('RGB', (4, 3), color).save(tmp_path / cls / 'a.png')
    (tmp_path / 'dog' / 'notes.txt').write_text('not an image')
    ds = D.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ['cat', 'dog'] and len(ds) == 2
    image, label = ds[1]
    assert image.shape == (3, 4, 3) and label == 1 and list(image.asnumpy()[0, 0]) == [0, 0, 255]
    assert D.vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0].shape == (3, 4, 1)
