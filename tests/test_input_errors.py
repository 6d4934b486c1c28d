"""Clear MXNetErrors naming the file, record or argument for bad inputs: RecordIO indexes
and records, images, batch sizes, shapes, contexts, integer division, unnamed parameters."""
import gc
import io
import os
import sys

import numpy as np
import pytest

import neomx as mx
from neomx import recordio
from neomx.base import MXNetError

PIL = pytest.importorskip('PIL.Image')


def _jpeg(size=(8, 8)):
    out = io.BytesIO()
    PIL.fromarray(np.random.RandomState(0).randint(0, 255, size + (3,), dtype=np.uint8)).save(out, 'JPEG')
    return out.getvalue()


def _write_records(folder, payloads, name='data'):
    rec, idx = os.path.join(folder, name + '.rec'), os.path.join(folder, name + '.idx')
    writer = recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i, payload in enumerate(payloads):
        writer.write_idx(i, payload)
    writer.close()
    return rec, idx


def _open_paths():
    return [os.readlink('/proc/self/fd/' + fd) for fd in os.listdir('/proc/self/fd')
            if os.path.exists('/proc/self/fd/' + fd)]


# ------------------------------------------------------------- RecordIO
@pytest.mark.skipif(not os.path.isdir('/proc/self/fd'), reason='needs /proc to list open files')
def test_a_missing_index_names_it_and_closes_the_record_file(tmp_path, monkeypatch):
    rec, _ = _write_records(str(tmp_path), [b'a'])
    unraisable = []
    monkeypatch.setattr(sys, 'unraisablehook', unraisable.append)
    with pytest.raises(MXNetError, match='cannot open index file .*missing.idx'):
        recordio.MXIndexedRecordIO(str(tmp_path / 'missing.idx'), rec, 'r')
    assert rec not in _open_paths()
    gc.collect()
    assert not unraisable


@pytest.mark.parametrize('line', ['0\t8\t9', 'zero\t0', '1\tfar', '2\t-8', '3'])
def test_a_malformed_index_line_is_named(tmp_path, line):
    rec, idx = _write_records(str(tmp_path), [b'a', b'b'])
    with open(idx, 'a') as f:
        f.write('\n' + line + '\n')
    with pytest.raises(MXNetError, match=r'malformed line 4 of index file ".*data.idx"'):
        recordio.MXIndexedRecordIO(idx, rec, 'r')
    with pytest.raises(MXNetError, match=r'malformed line 4 of index file ".*data.idx"'):
        mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 4, 4), batch_size=1)


def test_an_offset_past_the_end_is_named(tmp_path):
    rec, idx = _write_records(str(tmp_path), [b'a'])
    with open(idx, 'w') as f:
        f.write('0\t0\n1\t4096\n')
    reader = recordio.MXIndexedRecordIO(idx, rec, 'r')
    assert reader.read_idx(0) == b'a'
    with pytest.raises(MXNetError, match=r'offset 4096 for key 1, past the end of .*data.rec'):
        reader.read_idx(1)
    reader.close()


def test_an_offset_inside_a_record_names_the_file_and_offset(tmp_path):
    rec, idx = _write_records(str(tmp_path), [b'abcdefgh'])
    with open(idx, 'w') as f:
        f.write('0\t4\n')
    reader = recordio.MXIndexedRecordIO(idx, rec, 'r')
    with pytest.raises(MXNetError, match=r'bad magic number .*record at byte offset 4 of .*data.rec'):
        reader.read_idx(0)
    reader.close()


def test_a_record_whose_image_does_not_decode_is_named(tmp_path):
    header = recordio.IRHeader(0, 1.0, 0, 0)
    rec, idx = _write_records(str(tmp_path), [recordio.pack(header, _jpeg()),
                                              recordio.pack(header, b'not an image')])
    dataset = mx.gluon.data.vision.ImageRecordDataset(rec)
    assert dataset[0][0].shape == (8, 8, 3)
    with pytest.raises(MXNetError, match=r'image of record 1 of .*data.rec does not decode'):
        dataset[1]
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 4, 4), batch_size=2)
    with pytest.raises(MXNetError, match=r'image of record 1 of .*data.rec does not decode'):
        it.next()


def test_a_truncated_jpeg_in_an_image_folder_names_the_path(tmp_path):
    (tmp_path / 'cat').mkdir()
    (tmp_path / 'cat' / 'good.jpg').write_bytes(_jpeg())
    (tmp_path / 'cat' / 'half.jpg').write_bytes(_jpeg((64, 64))[:300])
    dataset = mx.gluon.data.vision.ImageFolderDataset(str(tmp_path))
    assert dataset[0][0].shape == (8, 8, 3)
    with pytest.raises(MXNetError, match=r'cannot decode image .*cat/half.jpg'):
        dataset[1]


def test_a_missing_record_file_is_named():
    with pytest.raises(MXNetError, match='cannot open path_imgrec "/nonexistent/x.rec"'):
        mx.io.ImageRecordIter(path_imgrec='/nonexistent/x.rec', data_shape=(3, 4, 4), batch_size=1)


# ------------------------------------------------------------- batch sizes
@pytest.mark.parametrize('batch_size', [0, -1, 2.5])
def test_bad_batch_sizes_are_named(tmp_path, batch_size):
    data = np.zeros((10, 3), np.float32)
    with pytest.raises(MXNetError, match='NDArrayIter: batch_size must be a positive integer'):
        mx.io.NDArrayIter(data, batch_size=batch_size)
    # MXNet raises ValueError here: the error is both
    with pytest.raises(ValueError, match='DataLoader: batch_size must be a positive integer'):
        mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data), batch_size=batch_size)
    with pytest.raises(MXNetError, match='DataLoader: batch_size'):
        mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(data), batch_size=batch_size)
    with pytest.raises(MXNetError, match='BatchSampler: batch_size'):
        mx.gluon.data.BatchSampler(mx.gluon.data.SequentialSampler(10), batch_size)
    rec, _ = _write_records(str(tmp_path), [recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), _jpeg())])
    with pytest.raises(MXNetError, match='ImageRecordIter: batch_size must be a positive integer'):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 4, 4), batch_size=batch_size)


def test_numpy_integer_batch_sizes_still_work():
    it = mx.io.NDArrayIter(np.zeros((4, 2)), batch_size=np.int64(2))
    assert it.next().data[0].shape == (2, 2)


# ------------------------------------------------------------- shapes
@pytest.mark.parametrize('make', [
    lambda s: mx.nd.zeros(s), lambda s: mx.nd.ones(s), lambda s: mx.nd.empty(s),
    lambda s: mx.nd.full(s, 1), lambda s: mx.nd.zeros((6,)).reshape(s),
    lambda s: mx.nd.random.uniform(shape=s), lambda s: mx.nd.reshape(mx.nd.zeros((6,)), shape=s),
    lambda s: mx.sym.zeros(s)])
@pytest.mark.parametrize('shape', [(2.5, 3), (2.0, 3), 2.5])
def test_float_shapes_are_refused(make, shape):
    with pytest.raises(MXNetError, match='shape'):
        make(shape)


def test_integer_shapes_of_any_integer_type_work():
    assert mx.nd.zeros((np.int64(2), 3)).shape == (2, 3)
    assert mx.nd.random.uniform(shape=(np.int32(2), 3)).shape == (2, 3)
    assert mx.nd.zeros(np.int64(4)).shape == (4,)


# ------------------------------------------------------------- contexts
@pytest.mark.parametrize('make', [
    lambda c: mx.nd.zeros((2,), ctx=c), lambda c: mx.nd.ones((2,), ctx=c),
    lambda c: mx.nd.empty((2,), ctx=c), lambda c: mx.nd.full((2,), 3, ctx=c),
    lambda c: mx.nd.array([1, 2], ctx=c), lambda c: mx.nd.arange(3, ctx=c),
    lambda c: mx.nd.random.uniform(shape=(2,), ctx=c), lambda c: mx.nd.eye(2, ctx=c),
    lambda c: mx.nd.zeros((2,)).as_in_context(c), lambda c: mx.nd.zeros((2,)).copyto(c)])
def test_mxnet_context_strings_are_accepted(make):
    assert make('cpu(1)').context == mx.cpu(1)


@pytest.mark.parametrize('bad', ['cpu', 'tpu(0)', 3, 'cpu(x)'])
def test_anything_else_names_the_accepted_contexts(bad):
    with pytest.raises(MXNetError, match=r"is not a context: use mx.cpu\(\), mx.gpu\(i\)"):
        mx.nd.zeros((2,), ctx=bad)
    with pytest.raises(MXNetError, match=r"is not a context: use mx.cpu\(\), mx.gpu\(i\)"):
        mx.nd.array([1], ctx=bad)


def test_gluon_module_and_symbol_take_context_strings(tmp_path):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(ctx=['cpu(0)', 'cpu(1)'])
    assert net.weight.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert net.weight.data('cpu(1)').context == mx.cpu(1)
    net.save_parameters(str(tmp_path / 'net.params'))
    fresh = mx.gluon.nn.Dense(2, in_units=3)
    fresh.load_parameters(str(tmp_path / 'net.params'), ctx='cpu(2)')
    assert fresh.weight.list_ctx() == [mx.cpu(2)]
    net.reset_ctx('cpu(3)')
    assert net.weight.list_ctx() == [mx.cpu(3)]
    mod = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2), label_names=None,
                        context='cpu(1)')
    mod.bind(data_shapes=[('data', (1, 3))])
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.ones((1, 3))]), is_train=False)
    assert mod.get_outputs()[0].context == mx.cpu(1)
    exe = (mx.sym.Variable('a') * 2).simple_bind('cpu(1)', a=(2,))
    assert exe.forward()[0].context == mx.cpu(1)


# ------------------------------------------------------------- integer division
def _ints(values, dtype='int32'):
    return mx.nd.array(values, dtype=dtype)


@pytest.mark.parametrize('divide, op', [
    (lambda a, b: a / b, '__truediv__'), (lambda a, b: a / 0, '__truediv__'),
    (lambda a, b: 6 / b, '__rtruediv__'), (mx.nd.broadcast_div, 'broadcast_div'),
    (mx.nd.elemwise_div, 'elemwise_div'), (lambda a, b: a.__itruediv__(b), '__itruediv__')])
@pytest.mark.parametrize('dtype', ['int32', 'int64', 'uint8', 'int8'])
def test_integer_division_by_zero_names_the_operator(divide, op, dtype):
    # MXNet 1.9.1 dies of SIGFPE here
    with pytest.raises(MXNetError, match='%s: integer division by zero' % op):
        divide(_ints([1, 2, 3], dtype), _ints([0, 1, 0], dtype))


def test_integer_division_without_zeros_truncates_as_mxnet():
    np.testing.assert_array_equal((_ints([5, -7]) / _ints([2, 2])).asnumpy(), [2, -3])
    np.testing.assert_array_equal((mx.nd.array([1., 0, -1]) / 0).asnumpy(), [np.inf, np.nan, -np.inf])


def test_modulo_by_zero_is_zero_as_mxnet():
    # MXNet 1.9.1: int and float x % 0 give 0; the divisor's sign otherwise
    np.testing.assert_array_equal((_ints([5, -7, 0]) % _ints([0, 0, 0])).asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal((_ints([-3, 4, 5], 'int64') % _ints([0, 0, 2], 'int64')).asnumpy(), [0, 0, 1])
    np.testing.assert_array_equal((_ints([5, -7]) % _ints([3, 3])).asnumpy(), [2, 2])
    np.testing.assert_array_equal((_ints([1, 2]) % 0).asnumpy(), [0, 0])
    np.testing.assert_array_equal((3 % _ints([0, 2])).asnumpy(), [0, 1])
    np.testing.assert_array_equal(mx.nd.broadcast_mod(_ints([1, 2]), _ints([0, 0])).asnumpy(), [0, 0])
    np.testing.assert_array_equal((mx.nd.array([1.5, -2, 0]) % mx.nd.array([0., 0, 0])).asnumpy(), [0, 0, 0])
    a = _ints([7, 8])
    a %= _ints([0, 3])
    np.testing.assert_array_equal(a.asnumpy(), [0, 2])


# ------------------------------------------------------------- unnamed parameters
def test_loading_parameters_from_a_file_without_names_names_it(tmp_path):
    path = str(tmp_path / 'list.params')
    mx.nd.save(path, [mx.nd.ones((2, 3)), mx.nd.ones((2,))])
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(MXNetError, match='list.params holds 2 arrays without names'):
        net.load_parameters(path)
    with pytest.raises(MXNetError, match='list.params holds 2 arrays without names'):
        net.collect_params().load(path)
    mx.nd.save(str(tmp_path / 'ck-0001.params'), [mx.nd.ones((2,))])
    with pytest.raises(MXNetError, match='ck-0001.params holds 1 arrays without names'):
        mx.model.load_params(str(tmp_path / 'ck'), 1)
