"""Paths and URLs: every reader and writer accepts fsspec URLs (memory://, file://, http://).

The http tests serve files from 127.0.0.1 with Range support (tests/http_range_server.py),
as an object store serves them; they need aiohttp (fsspec's http driver).
"""
import importlib.util
import os
import uuid

import numpy as np
import pytest

import neomx as mx
from neomx import _fileio
from neomx.base import MXNetError

from http_range_server import serve

DATA = os.path.join(os.path.dirname(__file__), 'data')


@pytest.fixture
def memory_dir():
    """A fresh memory:// folder, removed afterwards."""
    import fsspec
    folder = 'memory://neomx-test-%s' % uuid.uuid4().hex[:8]
    yield folder
    fs = fsspec.filesystem('memory')
    if fs.exists(folder[len('memory://'):]):
        fs.rm(folder[len('memory://'):], recursive=True)


@pytest.fixture
def http_dir(tmp_path):
    pytest.importorskip('aiohttp', reason='fsspec reads http(s) URLs through aiohttp ("neomx[http]")')
    base, stop = serve(str(tmp_path))
    yield tmp_path, base
    stop()


def small_net():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3), mx.gluon.nn.Dense(2, in_units=4))
    net.initialize(mx.init.Xavier())
    return net


def test_is_url_and_local_path():
    assert _fileio.is_url('s3://bucket/key') and _fileio.is_url('memory://x')
    assert not _fileio.is_url('/tmp/a.params') and not _fileio.is_url('C:/a')
    assert _fileio.local_path('file:///tmp/a') == '/tmp/a'
    assert _fileio.local_path('gs://b/a') is None


def test_ndarray_save_load_through_memory_url(memory_dir):
    arrays = {'a': mx.nd.array([[1, 2], [3, 4]]), 'b': mx.nd.arange(5, dtype='int32')}
    mx.nd.save(memory_dir + '/x.params', arrays)
    loaded = mx.nd.load(memory_dir + '/x.params')
    assert sorted(loaded) == ['a', 'b']
    np.testing.assert_array_equal(loaded['a'].asnumpy(), [[1, 2], [3, 4]])
    assert loaded['b'].dtype == np.int32


def test_url_file_has_the_same_bytes_as_a_local_file(memory_dir, tmp_path):
    arrays = [mx.nd.array([1.5, 2.5])]
    mx.nd.save(str(tmp_path / 'x.params'), arrays)
    mx.nd.save(memory_dir + '/x.params', arrays)
    with _fileio.open_for_read(memory_dir + '/x.params') as f:
        assert f.read() == (tmp_path / 'x.params').read_bytes()


def test_block_parameters_and_trainer_states_through_urls(memory_dir):
    net = small_net()
    trainer = mx.gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.1})
    with mx.autograd.record():
        loss = net(mx.nd.ones((2, 3))).sum()
    loss.backward()
    trainer.step(2)
    net.save_parameters(memory_dir + '/net.params')
    trainer.save_states(memory_dir + '/net.states')
    other = small_net()
    other.load_parameters(memory_dir + '/net.params')
    for mine, theirs in zip(net.collect_params().values(), other.collect_params().values()):
        np.testing.assert_array_equal(mine.data().asnumpy(), theirs.data().asnumpy())
    other_trainer = mx.gluon.Trainer(other.collect_params(), 'adam', {'learning_rate': 0.1})
    other_trainer.load_states(memory_dir + '/net.states')
    assert other_trainer.optimizer.num_update == trainer.optimizer.num_update == 1


def test_symbol_and_checkpoint_files_through_file_urls(tmp_path):
    data = mx.sym.var('data')
    sym = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    prefix = 'file://' + str(tmp_path / 'model')
    args = {'fc_weight': mx.nd.ones((3, 2)), 'fc_bias': mx.nd.zeros(3)}
    mx.model.save_checkpoint(prefix, 7, sym, args, {})
    assert sorted(os.listdir(tmp_path)) == ['model-0007.params', 'model-symbol.json']
    loaded_sym, loaded_args, _ = mx.model.load_checkpoint(prefix, 7)
    assert loaded_sym.tojson() == sym.tojson()
    np.testing.assert_array_equal(loaded_args['fc_weight'].asnumpy(), np.ones((3, 2)))


def test_recordio_write_and_read_through_memory_url(memory_dir):
    writer = mx.recordio.MXIndexedRecordIO(memory_dir + '/r.idx', memory_dir + '/r.rec', 'w')
    for i in range(5):
        writer.write_idx(i, b'record %d' % i)
    writer.close()
    reader = mx.recordio.MXIndexedRecordIO(memory_dir + '/r.idx', memory_dir + '/r.rec', 'r')
    assert reader.keys == [0, 1, 2, 3, 4]
    assert reader.read_idx(3) == b'record 3'
    sequential = mx.recordio.MXRecordIO(memory_dir + '/r.rec', 'r')
    assert [sequential.read() for _ in range(6)] == [b'record %d' % i for i in range(5)] + [None]


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    target = tmp_path / 'kept.bin'
    target.write_bytes(b'old')

    def chunks():
        yield b'new'
        raise RuntimeError('producer failed')
    with pytest.raises(RuntimeError):
        _fileio.write_atomic('file://' + str(target), chunks())
    with pytest.raises(RuntimeError):
        with _fileio.open_for_write(str(target)) as f:
            f.write(b'half')
            raise RuntimeError('writer failed')
    assert target.read_bytes() == b'old' and os.listdir(tmp_path) == ['kept.bin']


def test_missing_files_and_drivers_raise_mxnet_errors(memory_dir):
    with pytest.raises(MXNetError, match='cannot open memory://.*/absent.params'):
        mx.nd.load(memory_dir + '/absent.params')
    with pytest.raises(MXNetError, match='RecordIO: cannot open'):
        mx.recordio.MXRecordIO(memory_dir + '/absent.rec', 'r')
    with pytest.raises(MXNetError, match='cannot open nosuchfs://a/b'):
        mx.nd.load('nosuchfs://a/b')


def test_missing_object_store_driver_names_the_extra():
    if importlib.util.find_spec('s3fs') is not None:
        pytest.skip('s3fs is installed: its absence cannot be tested here')
    with pytest.raises(MXNetError, match=r'neomx\[s3\]'):
        mx.nd.load('s3://bucket/x.params')


def test_http_reads_params_recordio_and_image_record_iter(http_dir):
    folder, base = http_dir
    mx.nd.save(str(folder / 'w.params'), {'w': mx.nd.array([3., 4.])})
    np.testing.assert_array_equal(mx.nd.load(base + '/w.params')['w'].asnumpy(), [3, 4])
    for name in ('recordio_png.rec', 'recordio_png.idx'):
        (folder / name).write_bytes(open(os.path.join(DATA, name), 'rb').read())
    kwargs = dict(data_shape=(3, 8, 8), batch_size=2)
    local = mx.io.ImageRecordIter(path_imgrec=os.path.join(DATA, 'recordio_png.rec'), **kwargs)
    remote = mx.io.ImageRecordIter(path_imgrec=base + '/recordio_png.rec', **kwargs)
    for mine, theirs in zip(local, remote, strict=True):
        np.testing.assert_array_equal(mine.data[0].asnumpy(), theirs.data[0].asnumpy())
        np.testing.assert_array_equal(mine.label[0].asnumpy(), theirs.label[0].asnumpy())
    pytest.importorskip('PIL')
    dataset = mx.gluon.data.vision.ImageRecordDataset(base + '/recordio_png.rec')
    expected = mx.gluon.data.vision.ImageRecordDataset(os.path.join(DATA, 'recordio_png.rec'))
    assert len(dataset) == len(expected) == 5
    np.testing.assert_array_equal(dataset[3][0].asnumpy(), expected[3][0].asnumpy())
    assert dataset[3][1] == expected[3][1]


def test_http_is_read_only(http_dir):
    _, base = http_dir
    with pytest.raises((MXNetError, NotImplementedError)):
        mx.nd.save(base + '/new.params', [mx.nd.ones(2)])
