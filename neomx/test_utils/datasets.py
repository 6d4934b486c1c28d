"""Test data sets: MNIST in its several forms, CIFAR-10, downloads of archives."""
import gzip
import os
import zipfile

from ..base import atomic_write, data_dir

__all__ = ['download', 'get_mnist', 'get_mnist_ubyte', 'get_mnist_pkl', 'get_mnist_iterator',
           'get_cifar10', 'get_zip_data', 'get_bz2_data', 'get_im2rec_path', 'download_model',
           'DummyIter']

_MNIST_NAMES = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte']
_MXNET_DATA_URL = 'http://data.mxnet.io/data/'


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` to ``dirname/fname`` (default: the URL's file name in the current folder).

    An existing file is kept unless ``overwrite``; returns the file's path.
    """
    from ..gluon.utils import download as gluon_download
    fname = fname or url.split('/')[-1]
    if dirname is not None:
        os.makedirs(dirname, exist_ok=True)
        fname = os.path.join(dirname, fname)
    if os.path.exists(fname) and not overwrite:
        return fname
    return gluon_download(url, path=fname, overwrite=overwrite, retries=retries)


def get_mnist(path=None):
    """MNIST as numpy arrays: {'train_data', 'train_label', 'test_data', 'test_label'}.

    Images are float32 (N, 1, 28, 28) in [0, 1]. Reads the IDX files under ``path``
    (default: the copy carried in the repository, else ``$MXNET_HOME/datasets/mnist``).
    """
    from ..gluon.data.vision.datasets import read_mnist_arrays
    return read_mnist_arrays(path)


def _local_mnist(name):
    """Bytes of the raw IDX file ``name`` from a local copy, or None."""
    from ..gluon.data.vision import datasets
    for folder in (getattr(datasets, '_REPO_MNIST', ''), os.path.join(data_dir(), 'datasets', 'mnist')):
        for candidate in (os.path.join(folder, name), os.path.join(folder, name + '.gz')):
            if os.path.exists(candidate):
                opener = gzip.open if candidate.endswith('.gz') else open
                with opener(candidate, 'rb') as f:
                    return f.read()
    return None


def get_mnist_ubyte():
    """Make sure ``./data`` holds MNIST's four raw IDX files (MXNet's MNISTIter reads them).

    They come from a local copy when there is one, else from MXNet's mnist.zip.
    """
    os.makedirs('data', exist_ok=True)
    missing = [n for n in _MNIST_NAMES if not os.path.exists(os.path.join('data', n))]
    for name in list(missing):
        raw = _local_mnist(name)
        if raw is not None:
            atomic_write(os.path.join('data', name), [raw])
            missing.remove(name)
    if missing:
        archive = download(_MXNET_DATA_URL + 'mnist.zip', dirname='data')
        with zipfile.ZipFile(archive) as zf:
            zf.extractall('data')


def get_mnist_pkl():
    """Make sure ``./data/mnist.pkl.gz`` exists (downloaded from MXNet's data site)."""
    os.makedirs('data', exist_ok=True)
    if not os.path.exists(os.path.join('data', 'mnist.pkl.gz')):
        download(_MXNET_DATA_URL + 'mnist.pkl.gz', dirname='data')


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, val) ``MNISTIter`` over ``./data``; flat images unless ``input_shape`` is 3-D."""
    from ..io import MNISTIter
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = MNISTIter(image='data/train-images-idx3-ubyte', label='data/train-labels-idx1-ubyte',
                      input_shape=input_shape, batch_size=batch_size, shuffle=True, flat=flat,
                      num_parts=num_parts, part_index=part_index)
    val = MNISTIter(image='data/t10k-images-idx3-ubyte', label='data/t10k-labels-idx1-ubyte',
                    input_shape=input_shape, batch_size=batch_size, flat=flat,
                    num_parts=num_parts, part_index=part_index)
    return train, val


def get_zip_data(data_dir, url, data_origin_name):
    """Download the zip ``url`` into ``data_dir`` as ``data_origin_name`` and extract it there."""
    os.makedirs(data_dir, exist_ok=True)
    path = download(url, fname=data_origin_name, dirname=data_dir)
    with zipfile.ZipFile(path) as zf:
        zf.extractall(data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download the bz2 ``url`` into ``data_dir`` and decompress it to ``data_name``."""
    import bz2
    os.makedirs(data_dir, exist_ok=True)
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    path = download(url, fname=data_origin_name, dirname=data_dir)
    with bz2.BZ2File(path) as f:
        atomic_write(target, iter(lambda: f.read(1 << 20), b''))
    os.remove(path)


def get_cifar10():
    """Make sure ``./data/cifar`` holds MXNet's CIFAR-10 record files (downloaded)."""
    if not os.path.isdir(os.path.join('data', 'cifar')):
        get_zip_data('data', _MXNET_DATA_URL + 'cifar10.zip', 'cifar10.zip')


def get_im2rec_path(home_env='MXNET_HOME'):
    """Path of MXNet's ``im2rec.py`` tool: neomx's own ``neomx.tools.im2rec`` module file."""
    home = os.environ.get(home_env)
    if home and os.path.exists(os.path.join(home, 'tools', 'im2rec.py')):
        return os.path.join(home, 'tools', 'im2rec.py')
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, 'tools', 'im2rec.py')


def download_model(model_name, dst_dir='./', meta_info=None):
    """Download a model's symbol and parameters from MXNet's model site; (symbol, params) paths."""
    meta_info = meta_info or {}
    url = meta_info.get(model_name)
    if url is None:
        raise ValueError('no download address known for model %r; pass meta_info' % (model_name,))
    sym = download(url + '-symbol.json', dirname=dst_dir)
    params = download(url + '-0000.params', dirname=dst_dir)
    return sym, params


class DummyIter:
    """An iterator that yields the first batch of ``real_iter`` forever (for benchmarks).

    Example
    -------
    >>> it = DummyIter(iter([1, 2]))
    >>> next(it), next(it)
    (1, 1)
    """

    def __init__(self, real_iter):
        self.real_iter = real_iter
        self.provide_data = getattr(real_iter, 'provide_data', None)
        self.provide_label = getattr(real_iter, 'provide_label', None)
        self.batch_size = getattr(real_iter, 'batch_size', None)
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def __next__(self):
        return self.the_batch

    next = __next__
