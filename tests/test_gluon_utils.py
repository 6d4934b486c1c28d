"""gluon.utils: split_data, split_and_load, clip_global_norm, check_sha1, download."""
import hashlib
import os
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.gluon import utils


def test_split_data_even_uneven_and_axis():
    data = mx.nd.array(np.arange(14).reshape(7, 2))
    parts = utils.split_data(data, 3, even_split=False)
    assert [p.shape[0] for p in parts] == [3, 2, 2]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), data.asnumpy())
    with pytest.raises(ValueError, match='evenly split'):
        utils.split_data(data, 3)
    with pytest.raises(ValueError, match='Too many slices'):
        utils.split_data(data, 8, even_split=False)
    cols = utils.split_data(mx.nd.array(np.arange(12).reshape(2, 6)), 3, batch_axis=1)
    np.testing.assert_array_equal(cols[1].asnumpy(), [[2, 3], [8, 9]])
    assert utils.split_data(data, 1)[0] is data


def test_split_and_load_places_parts_on_contexts():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    parts = utils.split_and_load(np.arange(8, dtype='float32').reshape(4, 2), ctxs)
    assert [p.context for p in parts] == ctxs
    np.testing.assert_array_equal(parts[1].asnumpy(), [[4, 5], [6, 7]])


def test_clip_global_norm_scales_in_place():
    arrays = [mx.nd.array([3.0, 4.0]), mx.nd.array([[12.0]])]
    norm = utils.clip_global_norm(arrays, 6.5)
    assert norm == pytest.approx(13.0) and isinstance(norm, np.float32)
    np.testing.assert_allclose(arrays[0].asnumpy(), [1.5, 2.0], rtol=1e-6)
    small = [mx.nd.array([0.3, 0.4])]
    assert utils.clip_global_norm(small, 1.0) == pytest.approx(0.5)
    np.testing.assert_allclose(small[0].asnumpy(), [0.3, 0.4], rtol=1e-6)
    lazy = utils.clip_global_norm([mx.nd.array([1.0])], 1.0, check_isfinite=False)
    assert isinstance(lazy, mx.nd.NDArray)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        utils.clip_global_norm([mx.nd.array([np.inf])], 1.0)
    assert any('nan or inf' in str(w.message) for w in caught)


def test_check_sha1_and_download_from_file_url(tmp_path):
    source = tmp_path / 'source.bin'
    source.write_bytes(b'neomx' * 100)
    sha1 = hashlib.sha1(source.read_bytes()).hexdigest()
    assert utils.check_sha1(str(source), sha1) and not utils.check_sha1(str(source), '0' * 40)
    target = tmp_path / 'out'
    target.mkdir()
    path = utils.download(source.as_uri(), path=str(target), sha1_hash=sha1)
    assert path == str(target / 'source.bin') and utils.check_sha1(path, sha1)
    assert os.listdir(target) == ['source.bin']                 # no temporary files left
    with pytest.raises(RuntimeError, match='Failed downloading'):
        utils.download(source.as_uri(), path=str(tmp_path / 'bad.bin'), sha1_hash='0' * 40, retries=0)
    with pytest.raises(RuntimeError, match='Failed downloading'):
        utils.download((tmp_path / 'missing.bin').as_uri(), path=str(tmp_path / 'x.bin'), retries=1)


class _FakeResponse:
    def __init__(self, status_code, chunks):
        self.status_code = status_code
        self.chunks = chunks
        self.closed = False

    def iter_content(self, chunk_size=1):
        yield from self.chunks

    def close(self):
        self.closed = True


def test_download_goes_through_requests_for_http(tmp_path, monkeypatch):
    requests = pytest.importorskip('requests')
    calls, responses = [], []

    def fake_get(url, **kwargs):
        calls.append((url, kwargs))
        responses.append(_FakeResponse(200, [b'abc', b'', b'def']))
        return responses[-1]

    monkeypatch.setattr(requests, 'get', fake_get)
    with pytest.warns(UserWarning, match='^Unverified HTTPS request'):
        path = utils.download('https://example.invalid/a/f.bin', path=str(tmp_path), verify_ssl=False)
    assert path == str(tmp_path / 'f.bin')
    assert (tmp_path / 'f.bin').read_bytes() == b'abcdef'
    assert calls == [('https://example.invalid/a/f.bin', {'stream': True, 'verify': False})]
    assert responses[0].closed
    assert sorted(p.name for p in tmp_path.iterdir()) == ['f.bin']


def test_download_retries_a_failed_http_status(tmp_path, monkeypatch, capsys):
    requests = pytest.importorskip('requests')
    statuses = iter([503, 404])
    monkeypatch.setattr(requests, 'get', lambda url, **kw: _FakeResponse(next(statuses), [b'x']))
    with pytest.raises(RuntimeError, match='Failed downloading.*HTTP status 404'):
        utils.download('http://example.invalid/g.bin', path=str(tmp_path / 'g.bin'), retries=1)
    assert 'retrying, 1 attempt left' in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
