"""Vision datasets: MNIST, FashionMNIST, CIFAR10, CIFAR100, ImageFolderDataset.

Datasets read the standard files from ``root`` (default ``$MXNET_HOME/datasets/<name>``,
``MXNET_HOME`` defaulting to ``~/.mxnet``). Missing or corrupt files are downloaded from
MXNet's dataset repository (``MXNET_GLUON_REPO`` overrides it) with sha1 checks; without
a network the error says which files to put where.
"""
import gzip
import os
import struct
import tarfile

import numpy as np

from .... import ndarray as nd
from ...._image_decode import decode_bytes
from ....base import MXNetError, atomic_write, data_dir
from ....util import is_np_array
from ...utils import check_sha1, download
from ..dataset import Dataset
from ..record_dataset import ImageRecordDataset

__all__ = ['MNIST', 'FashionMNIST', 'CIFAR10', 'CIFAR100', 'ImageRecordDataset', 'ImageFolderDataset',
           'read_mnist_arrays']

_DEFAULT_REPO = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'
# The MNIST copy carried in this repository (gzip'd differently from the public mirror).
_REPO_MNIST = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'data', 'mnist'))


def _default_root(name):
    return os.path.join(data_dir(), 'datasets', name)


def _repo_url(namespace, filename):
    base = os.environ.get('MXNET_GLUON_REPO', _DEFAULT_REPO)
    return '%s%sgluon/dataset/%s/%s' % (base, '' if base.endswith('/') else '/', namespace, filename)


def _valid(path, sha1s):
    return os.path.exists(path) and any(check_sha1(path, s) for s in sha1s)


def _fetch_missing(root, namespace, files):
    """Make sure every ``(name, sha1s)`` of ``files`` is in ``root``, downloading what is not.

    Returns the paths in the order given.
    """
    paths = []
    for name, sha1s in files:
        path = os.path.join(root, name)
        if not _valid(path, sha1s):
            try:
                download(_repo_url(namespace, name), path=path, sha1_hash=sha1s[0])
            except Exception as err:
                raise MXNetError('%s is missing or corrupt and could not be downloaded (%s). Put the file '
                                 'there by hand (sha1 %s).' % (path, err, sha1s[0])) from None
        paths.append(path)
    return paths


class _DownloadedDataset(Dataset):
    """Arrays ``_data`` (NDArray, HWC images) and ``_label`` (numpy) read by ``_get_data``."""

    def __init__(self, root, transform):
        self._root = os.path.expanduser(root)
        self._transform = transform
        self._data = None
        self._label = None
        os.makedirs(self._root, exist_ok=True)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError


def _array(images):
    """The images as an NDArray, or an mx.np array under NumPy array semantics (as MXNet)."""
    data = nd.array(images, dtype=images.dtype)
    return data.as_np_ndarray() if is_np_array() else data


def _read_idx(path, header):
    """The payload of a gzip'd IDX file as uint8, after a big-endian header of ``header`` ints."""
    with gzip.open(path, 'rb') as f:
        dims = struct.unpack('>%dI' % header, f.read(4 * header))
        return dims, np.frombuffer(f.read(), dtype=np.uint8)


def _read_mnist_pair(image_path, label_path):
    """(uint8 images (N, 28, 28, 1), int32 labels (N,)) from two IDX files."""
    _, labels = _read_idx(label_path, 2)
    (_, count, rows, cols), pixels = _read_idx(image_path, 4)
    if count != len(labels):
        raise MXNetError('%s holds %d images but %s holds %d labels' % (image_path, count, label_path, len(labels)))
    return pixels.reshape(count, rows, cols, 1), labels.astype(np.int32)


class MNIST(_DownloadedDataset):
    """The MNIST handwritten digits: samples (image (28, 28, 1) uint8 NDArray, int32 label).

    Parameters
    ----------
    root : str, optional
        Folder of the four gzip'd IDX files. By default ``$MXNET_HOME/datasets/mnist``, or the
        copy this repository carries when that folder lacks them.
    train : bool
        The 60,000 training images, or the 10,000 test images.
    transform : callable, optional
        ``transform(data, label) -> sample``.

    Example
    -------
    >>> test = mx.gluon.data.vision.MNIST(train=False)     # the repository's copy if not downloaded
    >>> image, label = test[0]
    >>> len(test), image.shape, image.dtype, int(label)
    (10000, (28, 28, 1), <class 'numpy.uint8'>, 7)
    """
    _namespace = 'mnist'
    # file -> accepted sha1s: MXNet's repository's, then the repository copy's (other gzip bytes)
    _files = {'train_data': ('train-images-idx3-ubyte.gz', ('6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d',
                                                            'f777bce1571cc179af8bee1bb1714519c20c020b')),
              'train_label': ('train-labels-idx1-ubyte.gz', ('2a80914081dc54586dbdf242f9805a6b8d2a15fc',
                                                             '279556a35e0dda984e17561b26ee7d0238054732')),
              'test_data': ('t10k-images-idx3-ubyte.gz', ('c3a25af1f52dad7f726cce8cacb138654b760d48',
                                                          'dc186ae493dba097a33d04eaedf5837b964603ef')),
              'test_label': ('t10k-labels-idx1-ubyte.gz', ('763e7fa3757d93b0cdec073cef058b2004252c17',
                                                           '01ab7c3434ec8cac1a7da4bc5bd1219578a5ce40'))}

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        if root is None:
            root = _default_root(self._namespace)
            if self._namespace == 'mnist' and not self._complete(root) and self._complete(_REPO_MNIST):
                root = _REPO_MNIST
        super().__init__(root, transform)

    @classmethod
    def _complete(cls, root):
        return all(_valid(os.path.join(root, name), sha1s) for name, sha1s in cls._files.values())

    def _get_data(self):
        split = 'train' if self._train else 'test'
        files = [self._files[split + '_data'], self._files[split + '_label']]
        image_path, label_path = _fetch_missing(self._root, self._namespace, files)
        images, self._label = _read_mnist_pair(image_path, label_path)
        self._data = _array(images)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: the MNIST format with clothing images."""
    _namespace = 'fashion-mnist'
    _files = {'train_data': ('train-images-idx3-ubyte.gz', ('0cf37b0d40ed5169c6b3aba31069a9770ac9043d',)),
              'train_label': ('train-labels-idx1-ubyte.gz', ('236021d52f1e40852b06a4c3008d8de8aef1e40b',)),
              'test_data': ('t10k-images-idx3-ubyte.gz', ('626ed6a7c06dd17c0eec72fa3be1740f146a2863',)),
              'test_label': ('t10k-labels-idx1-ubyte.gz', ('17f9ab60e7257a1620f4ad76bbbaf857c3920701',))}


def read_mnist_arrays(path=None):
    """MNIST as numpy arrays ``{'train_data', 'train_label', 'test_data', 'test_label'}``.

    Images are float32 (N, 1, 28, 28) in [0, 1], labels float32 (N,).

    Parameters
    ----------
    path : str, optional
        Folder of the IDX files; default the repository's ``data/mnist``, else
        ``$MXNET_HOME/datasets/mnist`` (downloaded there when missing).
    """
    if path is None:
        path = _REPO_MNIST if MNIST._complete(_REPO_MNIST) else _default_root('mnist')
    arrays = {}
    for split in ('train', 'test'):
        files = [MNIST._files[split + '_data'], MNIST._files[split + '_label']]
        images, labels = _read_mnist_pair(*_fetch_missing(path, 'mnist', files))
        arrays[split + '_data'] = images.reshape(-1, 1, images.shape[1], images.shape[2]).astype(np.float32) / 255
        arrays[split + '_label'] = labels.astype(np.float32)
    return arrays


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: samples (image (32, 32, 3) uint8 NDArray, int32 label in 0..9).

    Parameters
    ----------
    root : str, optional
        Folder of the binary batches (default ``$MXNET_HOME/datasets/cifar10``).
    train : bool
    transform : callable, optional
    """
    _namespace = 'cifar10'
    _archive = ('cifar-10-binary.tar.gz', 'fab780a1e191a7eda0f345501ccd62d20f7ed891')
    _train_files = [('data_batch_1.bin', 'aadd24acce27caa71bf4b10992e9e7b2d74c2540'),
                    ('data_batch_2.bin', 'c0ba65cce70568cd57b4e03e9ac8d2a5367c1795'),
                    ('data_batch_3.bin', '1dd00a74ab1d17a6e7d73e185b69dbf31242f295'),
                    ('data_batch_4.bin', 'aab85764eb3584312d3c7f65fd2fd016e36a258e'),
                    ('data_batch_5.bin', '26e2849e66a845b7f1e4614ae70f4889ae604628')]
    _test_files = [('test_batch.bin', '67eb016db431130d61cd03c7ad570b013799c88c')]
    _labels_per_record = 1      # label bytes before each image's 3072 pixel bytes
    _label_column = 0           # which of them is the label

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root or _default_root(self._namespace), transform)

    def _read_batch(self, path):
        with open(path, 'rb') as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8).reshape(-1, self._labels_per_record + 3072)
        images = raw[:, self._labels_per_record:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_column].astype(np.int32)

    def _get_data(self):
        files = self._train_files if self._train else self._test_files
        if not all(_valid(os.path.join(self._root, name), (sha1,)) for name, sha1 in files):
            self._extract_archive()
        batches = [self._read_batch(os.path.join(self._root, name)) for name, _ in files]
        images = np.concatenate([b[0] for b in batches])
        self._data = _array(images)
        self._label = np.concatenate([b[1] for b in batches])

    def _extract_archive(self):
        """Download the archive and unpack its batch files flat into ``root``."""
        (archive,) = _fetch_missing(self._root, self._namespace, [(self._archive[0], (self._archive[1],))])
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith('.bin'):
                    with tar.extractfile(member) as src:
                        atomic_write(os.path.join(self._root, os.path.basename(member.name)), [src.read()])


class CIFAR100(CIFAR10):
    """CIFAR-100: samples (image (32, 32, 3) uint8 NDArray, int32 label).

    Parameters
    ----------
    fine_label : bool
        The 100 fine classes instead of the 20 coarse ones.
    """
    _namespace = 'cifar100'
    _archive = ('cifar-100-binary.tar.gz', 'a0bb982c76b83111308126cc779a992fa506b90b')
    _train_files = [('train.bin', 'e207cd2e05b73b1393c74c7f5e7bea451d63e08e')]
    _test_files = [('test.bin', '8fb6623e830365ff53cf14adec797474f5478006')]

    _labels_per_record = 2      # coarse label, then fine label

    def __init__(self, root=None, fine_label=False, train=True, transform=None):
        self._label_column = 1 if fine_label else 0
        super().__init__(root, train, transform)


class ImageFolderDataset(Dataset):
    """Images in per-class sub-folders of ``root`` (``root/cat/1.jpg``...), decoded as
    ``mx.image.imread`` decodes (OpenCV with the ``vision`` extra, else Pillow).

    Samples are (image (H, W, 3) uint8 NDArray, or (H, W, 1) for ``flag=0``; int label, the
    index of the folder in sorted order).

    Attributes
    ----------
    synsets : list of str
        Class names (folder names), by label.
    items : list of (str, int)
        Image paths and labels.

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> for name in ['cat', 'dog']:
    ...     os.makedirs(os.path.join(folder.name, name))
    ...     png = mx.recordio.unpack(mx.recordio.pack_img(mx.recordio.IRHeader(0, 0, 0, 0),
    ...                                                   np.zeros((4, 6, 3), np.uint8), img_fmt='.png'))[1]
    ...     with open(os.path.join(folder.name, name, '1.png'), 'wb') as f:
    ...         _ = f.write(png)
    >>> dataset = mx.gluon.data.vision.ImageFolderDataset(folder.name)
    >>> dataset.synsets, len(dataset)
    (['cat', 'dog'], 2)
    >>> image, label = dataset[1]
    >>> image.shape, label
    ((4, 6, 3), 1)
    >>> folder.cleanup()
    """
    _extensions = ('.jpg', '.jpeg', '.png')

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                if os.path.splitext(name)[1].lower() in self._extensions:
                    self.items.append((os.path.join(path, name), label))

    def _read(self, path):
        with open(path, 'rb') as stream:
            encoded = stream.read()
        try:
            pixels = decode_bytes(encoded, 1 if self._flag else 0, True, path)
        except MXNetError as err:
            raise MXNetError('ImageFolderDataset: cannot decode image %s: %s' % (path, err)) from None
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        return _array(pixels.astype(np.uint8, copy=False))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        image = self._read(path)
        if self._transform is not None:
            return self._transform(image, label)
        return image, label

    def __len__(self):
        return len(self.items)
