"""Gluon utilities: splitting batches across devices, gradient clipping, downloads."""
import hashlib
import os
import urllib.request
import warnings

import numpy as np

from .. import ndarray as nd
from ..base import AtomicFile
from ..ndarray.ndarray import NDArray
from ..util import is_np_array
from .block import _indent  # noqa: F401  (downstream code imports these from here, as in MXNet)
from .parameter import _brief_print_list, shape_is_known  # noqa: F401

__all__ = ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1', 'download']


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` parts along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
    num_slice : int
    batch_axis : int
    even_split : bool
        Require the axis length to be a multiple of ``num_slice``; otherwise the first
        parts get one extra sample each.

    Returns
    -------
    list of NDArray
        Views of ``data`` when ``batch_axis`` is 0.
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. Use a batch size "
            "that's multiple of %d or set even_split=False to allow uneven partitioning of data."
            % (str(data.shape), num_slice, batch_axis, num_slice))
    if num_slice == 1:
        return [data]
    if size < num_slice:
        raise ValueError('Too many slices for data with shape %s. Arguments are num_slice=%d and '
                         'batch_axis=%d.' % (str(data.shape), num_slice, batch_axis))
    step, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [step + 1] * extras + [step] * (num_slice - extras))
    lead = (slice(None),) * batch_axis
    return [data[lead + (slice(int(lo), int(hi)),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` along ``batch_axis`` and copy one part to each context.

    Parameters
    ----------
    data : NDArray or numpy array
    ctx_list : list of Context
    batch_axis : int
    even_split : bool

    Returns
    -------
    list of NDArray
        Part ``i`` lives on ``ctx_list[i]``.
    """
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
        if is_np_array():
            data = data.as_np_ndarray()
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    parts = split_data(data, len(ctx_list), batch_axis, even_split)
    if data.stype != 'default':                 # parts keep the storage type, as in MXNet
        parts = [part.tostype(data.stype) for part in parts]
    return [part.as_in_context(ctx) for part, ctx in zip(parts, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``.

    Parameters
    ----------
    arrays : list of NDArray
    max_norm : float
    check_isfinite : bool
        Warn when the norm is NaN or infinite, and return it as a numpy scalar (otherwise
        return an NDArray, which avoids a device synchronisation).

    Returns
    -------
    numpy.float32 or NDArray
        The joint norm before clipping.
    """
    assert len(arrays) > 0, 'clip_global_norm needs at least one array'
    ctx = arrays[0].context
    arrays = [a.as_nd_ndarray() if a._is_np_array else a for a in arrays]     # same memory
    squares = [(a * a).sum().as_in_context(ctx).reshape((1,)) for a in arrays]
    total_norm = nd.add_n(*squares).sqrt()
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning('nan or inf is detected. Clipping results will be undefined.'),
                      stacklevel=2)
    scale = (max_norm / (total_norm + 1e-8)).clip(0.0, 1.0)
    for a in arrays:
        a *= scale.as_in_context(a.context)
    return total_norm.asscalar() if check_isfinite else total_norm


def check_sha1(filename, sha1_hash):
    """Whether the sha1 of the file ``filename`` is ``sha1_hash`` (hex digest)."""
    sha1 = hashlib.sha1()
    with open(filename, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def _target_path(url, path):
    name = url.split('/')[-1]
    if path is None:
        assert name, "Can't construct file-name from this URL. Please set the `path` option manually."
        return name
    path = os.path.expanduser(path)
    return os.path.join(path, name) if os.path.isdir(path) else path


def _fetch(url, fname, verify_ssl):
    """Download ``url`` to ``fname`` through a temporary file (:class:`~neomx.base.AtomicFile`).

    With ``requests`` installed it does HTTP(S) transfers, as in MXNet (code that patches
    ``requests.get`` sees our downloads); the standard library does the others (``file://``
    mirrors in ``MXNET_GLUON_REPO``) and everything when ``requests`` is missing."""
    requests = None
    if url.lower().startswith(('http://', 'https://')):
        try:
            import requests
        except ImportError:
            pass
    if requests is None:
        import ssl
        context = None if verify_ssl else ssl._create_unverified_context()  # pylint: disable=protected-access
        with urllib.request.urlopen(url, context=context, timeout=60) as response, AtomicFile(fname) as f:
            for chunk in iter(lambda: response.read(1 << 20), b''):
                f.write(chunk)
        return
    response = requests.get(url, stream=True, verify=verify_ssl)
    try:
        if response.status_code != 200:
            raise RuntimeError('Failed downloading url {} (HTTP status {})'.format(url, response.status_code))
        with AtomicFile(fname) as f:
            for chunk in response.iter_content(chunk_size=1 << 16):
                if chunk:       # keep-alive chunks are empty
                    f.write(chunk)
    finally:
        response.close()


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` to ``path`` unless a file with the right sha1 is already there.

    The file is written to a temporary name and renamed into place, so a failed or
    concurrent download never leaves a partial file under the final name.

    Parameters
    ----------
    url : str
    path : str, optional
        Destination file or folder (default: the current folder, under the URL's name).
    overwrite : bool
        Download even if the file exists.
    sha1_hash : str, optional
        Expected sha1; an existing file that does not match is downloaded again.
    retries : int
        Further attempts after a failure.
    verify_ssl : bool

    Returns
    -------
    str
        The path of the downloaded file.
    """
    fname = _target_path(url, path)
    assert retries >= 0, 'Number of retries should be at least 0, currently it\'s {}'.format(retries)
    if not verify_ssl:
        warnings.warn('Unverified HTTPS request is being made (verify_ssl=False). '
                      'Adding certificate verification is strongly advised.')
    if not overwrite and os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    for attempt in range(retries + 1):
        try:
            print('Downloading %s from %s...' % (fname, url))
            _fetch(url, fname, verify_ssl)
            if sha1_hash and not check_sha1(fname, sha1_hash):
                raise UserWarning('File {} is downloaded but the content hash does not match. The repo may '
                                  'be outdated or download may be incomplete.'.format(fname))
            return fname
        except (OSError, UserWarning, RuntimeError) as err:     # requests' errors are OSErrors
            if attempt == retries:
                raise RuntimeError('Failed downloading %s to %s after %d attempt(s): %s (no network? put the '
                                   'file there by hand)' % (url, fname, retries + 1, err)) from err
            print('download failed due to {}, retrying, {} attempt{} left'.format(
                repr(err), retries - attempt, 's' if retries - attempt > 1 else ''))


def replace_file(src, dst):
    """Move file ``src`` onto ``dst`` atomically (``os.replace``), replacing ``dst``."""
    os.replace(src, dst)


_DEFAULT_REPO = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'


def _get_repo_url():
    """The base URL of Gluon's dataset and model repository (``$MXNET_GLUON_REPO`` or
    MXNet's), ending with '/'."""
    repo_url = os.environ.get('MXNET_GLUON_REPO', _DEFAULT_REPO)
    return repo_url if repo_url.endswith('/') else repo_url + '/'


def _get_repo_file_url(namespace, filename):
    """The URL of ``filename`` under ``namespace`` in Gluon's repository."""
    return '{}{}/{}'.format(_get_repo_url(), namespace, filename)
