"""Opening files by local path or by URL, for every neomx reader and writer.

MXNet's dmlc-core streams read ``s3://`` and ``hdfs://`` URIs wherever a file name was
expected. neomx does the same through fsspec (a dependency of torch): any URL that fsspec
knows (``s3://``, ``gs://``, ``hdfs://``, ``http(s)://`` for reading, ``memory://``,
``file://``...) can be passed where a path is. Object-store drivers are optional extras
(``pip install "neomx[s3]"``, ``"neomx[gcs]"``, ``"neomx[http]"``).

Writes are atomic: a local file (or ``file://`` URL) is written to a temporary file in its
folder and renamed over the target (``neomx.base.atomic_write``); an object store makes an
object visible only once its upload is complete, so a reader never sees half an object.

Examples
--------
>>> from neomx import _fileio
>>> _fileio.write_atomic('memory://doc/x.bin', [b'ab', b'c'])
>>> with _fileio.open_for_read('memory://doc/x.bin') as f:
...     f.read()
b'abc'
"""
import contextlib
import os
import re

from .base import AtomicFile, MXNetError, atomic_write

__all__ = ['is_url', 'local_path', 'open_for_read', 'open_stream_for_write', 'open_for_write', 'write_atomic',
           'exists', 'listdir', 'makedirs', 'size', 'remove', 'join']

_URL = re.compile(r'^([a-zA-Z][a-zA-Z0-9+.\-]*)://')
# The extra to install for the fsspec driver of each scheme, named in errors.
_EXTRA_OF_SCHEME = {'s3': 's3', 's3a': 's3', 'gs': 'gcs', 'gcs': 'gcs', 'http': 'http',
                    'https': 'http', 'hdfs': 'hdfs', 'abfs': 'azure', 'az': 'azure'}


def is_url(path):
    """Whether ``path`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


def local_path(path):
    """The local file name of ``path`` (a path or a ``file://`` URL), or None for other URLs."""
    path = os.fspath(path)
    if not is_url(path):
        return path
    if path.startswith('file://'):
        return path[len('file://'):]
    return None


def _fsspec():
    try:
        import fsspec
    except ImportError:
        raise MXNetError('reading or writing URLs needs fsspec: pip install "neomx[url]"') from None
    return fsspec


def _driver_error(path, err):
    scheme = _URL.match(path).group(1).lower()
    extra = _EXTRA_OF_SCHEME.get(scheme, 'url')
    return MXNetError('cannot open %s: the %s:// file system needs a driver that is not installed '
                      '(pip install "neomx[%s]"): %s' % (path, scheme, extra, err))


def _open_url(path, mode, **options):
    fsspec = _fsspec()
    try:
        return fsspec.open(path, mode, **options).open()
    except ImportError as err:
        raise _driver_error(path, err) from None
    except (OSError, ValueError) as err:
        raise MXNetError('cannot open %s: %s' % (path, getattr(err, 'strerror', None) or err)) from None


def open_for_read(path, mode='rb', **options):
    """Open ``path`` (a local path or a URL) for reading; ``mode`` is ``'rb'`` or ``'r'``.

    ``options`` go to fsspec for URLs (``block_size``, ``cache_type``, credentials...).
    A missing or unreadable file raises ``MXNetError`` naming it.
    """
    return _open(path, mode, options)


def open_stream_for_write(path, mode='wb'):
    """A binary file for a long sequential write (RecordIO writers), put in place by ``commit()``.

    A local file is written under a temporary name in its folder and renamed over ``path``
    by ``commit()`` (:class:`~neomx.base.AtomicFile`); an object-store URL is uploaded then.
    """
    path = os.fspath(path)
    local = local_path(path)
    if local is not None:
        return AtomicFile(local)
    return _UploadOnCommit(_open_url(path, mode))


class _UploadOnCommit:
    """An fsspec file with AtomicFile's ``commit``/``discard``: the object is uploaded on commit."""

    def __init__(self, f):
        self._f = f

    def write(self, chunk):
        return self._f.write(chunk)

    def tell(self):
        return self._f.tell()

    def commit(self):
        self._f.close()

    def discard(self):
        _discard(self._f)


def _open(path, mode, options):
    path = os.fspath(path)
    local = local_path(path)
    if local is None:
        return _open_url(path, mode, **options)
    try:
        return open(local, mode, **({'encoding': 'utf-8'} if 'b' not in mode else {}))
    except OSError as err:
        raise MXNetError('cannot open %s: %s' % (path, err.strerror or err)) from None


def write_atomic(path, chunks):
    """Write the byte strings ``chunks`` to ``path`` (local path or URL), all or nothing."""
    path = os.fspath(path)
    local = local_path(path)
    if local is not None:
        atomic_write(local, chunks)
        return
    with open_for_write(path) as f:
        for chunk in chunks:
            f.write(chunk)


@contextlib.contextmanager
def open_for_write(path):
    """A writable binary file for ``path`` that replaces it only when the ``with`` block succeeds.

    Local files go through :class:`~neomx.base.AtomicFile` (a temporary file renamed at the
    end, symbolic links written through, modes kept); for URLs the object is uploaded when
    the block ends and discarded when it raises.
    """
    f = open_stream_for_write(path)
    try:
        yield f
    except BaseException:
        f.discard()
        raise
    f.commit()


def _discard(f):
    """Drop an fsspec file without committing what was written (where the store allows)."""
    discard = getattr(f, 'discard', None)
    if discard is not None:
        discard()


def exists(path):
    """Whether ``path`` (local path or URL) names an existing file."""
    path = os.fspath(path)
    local = local_path(path)
    if local is not None:
        return os.path.exists(local)
    fs, inner = _url_fs(path)
    return fs.exists(inner)


def _url_fs(path):
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(path)
    except ImportError as err:
        raise _driver_error(path, err) from None


def listdir(path):
    """Names of the entries of the folder ``path`` (local path or URL); [] when it is missing."""
    path = os.fspath(path)
    local = local_path(path)
    if local is not None:
        return sorted(os.listdir(local)) if os.path.isdir(local) else []
    fs, inner = _url_fs(path)
    if not fs.exists(inner):
        return []
    return sorted(entry.rstrip('/').rsplit('/', 1)[-1] for entry in fs.ls(inner, detail=False))


def makedirs(path):
    """Create the folder ``path`` and its parents (object stores have no folders: a no-op)."""
    local = local_path(path)
    if local is not None:
        os.makedirs(local, exist_ok=True)


def size(path):
    """Size in bytes of the file ``path``, or None when it does not exist."""
    path = os.fspath(path)
    local = local_path(path)
    if local is not None:
        return os.path.getsize(local) if os.path.isfile(local) else None
    fs, inner = _url_fs(path)
    return fs.size(inner) if fs.exists(inner) else None


def remove(path):
    """Delete the file ``path`` if it exists."""
    path = os.fspath(path)
    local = local_path(path)
    if local is not None:
        if os.path.exists(local):
            os.remove(local)
        return
    fs, inner = _url_fs(path)
    if fs.exists(inner):
        fs.rm(inner)


def join(folder, name):
    """``folder/name`` for a local folder or a URL."""
    return os.path.join(folder, name) if local_path(folder) == folder else folder.rstrip('/') + '/' + name
