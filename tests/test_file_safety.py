"""Hostile optimizer-state and .params files: clear MXNetErrors naming the file, and no
allocation beyond what the file's own size allows."""
import io
import pickle
import struct
import tracemalloc

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.optimizer import state_format


def _updater():
    return mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))


def _saved_states():
    """The bytes of real neomx states: SGD momentum for two weights."""
    updater = _updater()
    for i in range(2):
        updater(i, mx.nd.ones((3, 4)), mx.nd.ones((3, 4)))
    return updater.get_states()


class _Reduce:
    """Pickles as ``fn(*args)``."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


# ------------------------------------------------------------- optimizer states
def test_pickled_bytearray_of_a_size_is_refused_without_allocating():
    buf = pickle.dumps({0: _Reduce(bytearray, (1 << 27,))}, protocol=4)
    assert len(buf) < 64
    tracemalloc.start()
    try:
        with pytest.raises(MXNetError, match=r'bad\.states: refusing bytearray\(int\)'):
            _updater().set_states(buf, 'bad.states')
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_pickled_bytearrays_copied_from_one_shared_buffer_hit_the_budget():
    payload = b'x' * (1 << 20)
    # one 1 MiB bytes object, memoised by the pickle, copied 64 times: 64 MiB from 1 MiB
    buf = pickle.dumps({0: [_Reduce(bytearray, (payload,)) for _ in range(64)]}, protocol=4)
    assert len(buf) < (1 << 20) + 4096
    with pytest.raises(MXNetError, match='would make the reader allocate more than'):
        state_format.loads(buf, 'shared.states')


@pytest.mark.parametrize('value, what', [
    ([1, 2, 3], 'list'), ('text', 'str'), ({0: 'text'}, 'str'), ({0: {1: 2}}, 'dict'),
    ({(1, 2): None}, r'\(1, 2\)'), ({0: b'raw'}, 'bytes')])
def test_pickles_without_the_form_of_optimizer_states_are_refused(value, what):
    with pytest.raises(MXNetError, match='x.states: not optimizer states.*%s' % what):
        state_format.loads(pickle.dumps(value, protocol=4), 'x.states')


def test_pickles_of_optimizer_states_form_load():
    value = state_format.loads(pickle.dumps({0: None, 'w': (1.5, [None, 2])}, protocol=2))
    assert value == {0: None, 'w': (1.5, [None, 2])}


def test_shared_pickled_containers_stay_shared():
    inner = [None] * 1000
    value = state_format.loads(pickle.dumps({i: (inner, inner) for i in range(1000)}, protocol=4))
    assert value[0][0] is value[999][1]


@pytest.mark.parametrize('cut', [1, 5, 9, 16, 40, -200, -1])
def test_truncated_neomx_states_name_the_file(tmp_path, cut):
    path = tmp_path / 'trainer.states'
    buf = _saved_states()
    path.write_bytes(buf[:cut])
    kv = mx.kv.create('local')
    kv.set_optimizer(mx.optimizer.SGD(momentum=0.9))
    with pytest.raises(MXNetError, match='trainer.states'):
        kv.load_optimizer_states(str(path))


def _neomx_states(header, arrays=b''):
    head = header if isinstance(header, bytes) else header.encode()
    return state_format.MAGIC + struct.pack('<Q', len(head)) + head + arrays


@pytest.mark.parametrize('buf, message', [
    (state_format.MAGIC + struct.pack('<Q', 1 << 63) + b'{}', 'header of 9223372036854775808 bytes'),
    (state_format.MAGIC + struct.pack('<Q', (1 << 64) - 1), 'header of'),
    (_neomx_states('{"tree": '), 'corrupt optimizer state header'),
    (_neomx_states('[1, 2]'), 'corrupt optimizer state header'),
    (_neomx_states(b'\xff\xfe'), 'corrupt optimizer state header'),
    (_neomx_states('{"tree": {"d": [[0, {"a": 3}]]}, "bf16": []}'), 'array 3 of 0'),
    (_neomx_states('{"tree": {"d": [[0, {"q": 1}]]}, "bf16": []}'), 'unknown entry'),
    (_neomx_states('{"tree": {"d": 5}, "bf16": []}'), 'corrupt optimizer state'),
    (_neomx_states('{"tree": {"l": [1]}, "bf16": []}'), 'not optimizer states'),
    (_neomx_states('{"tree": {"d": []}, "bf16": []}', b'\x93NUMPY\x01\x00\x10\x00{}'), 'corrupt array header'),
])
def test_corrupt_neomx_states_raise_mxneterror(buf, message):
    with pytest.raises(MXNetError, match='my.states: .*' + message):
        state_format.loads(buf, 'my.states')


def test_npy_record_claiming_more_than_the_file_fails_before_allocating():
    header = np.lib.format.header_data_from_array_1_0(np.zeros(4, np.float32))
    header['shape'] = (1 << 40,)
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, header)
    record = out.getvalue() + b'\0' * 16
    buf = _neomx_states('{"tree": {"d": [[0, {"a": 0}]]}, "bf16": []}', record)
    with pytest.raises(MXNetError, match=r'my.states: truncated or corrupt: array of shape \(1099511627776,\)'):
        state_format.loads(buf, 'my.states')


def test_npy_record_with_object_dtype_is_refused():
    out = io.BytesIO()
    np.lib.format.write_array(out, np.array([None, 1], dtype=object), allow_pickle=True)
    buf = _neomx_states('{"tree": {"d": [[0, {"a": 0}]]}, "bf16": []}', out.getvalue())
    with pytest.raises(MXNetError, match='unsupported dtype object'):
        state_format.loads(buf, 'my.states')


def test_missing_state_file_names_it(tmp_path):
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd')
    with pytest.raises(MXNetError, match='nope.states'):
        trainer.load_states(str(tmp_path / 'nope.states'))


def test_states_round_trip_still_holds():
    updater = _updater()
    updater.set_states(_saved_states())
    assert sorted(updater.states) == [0, 1]
    np.testing.assert_allclose(updater.states[0].asnumpy(), np.full((3, 4), -0.01))   # -lr * grad


# ------------------------------------------------------------- sparse .params
_V2 = 0xF993FAC9


def _shape(dims):
    return struct.pack('<i', len(dims)) + struct.pack('<%dq' % len(dims), *dims)


def _sparse_file(stype, shape, values, aux):
    """A one-array .params file: ``aux`` is a list of (int64 array) index arrays."""
    values = np.asarray(values, np.float32)
    body = struct.pack('<Ii', _V2, stype) + _shape(values.shape) + _shape(shape)
    body += struct.pack('<iii', 1, 0, 0)            # cpu(0), float32
    for a in aux:
        body += struct.pack('<i', 6) + _shape((len(a),))
    body += values.tobytes() + b''.join(np.asarray(a, np.int64).tobytes() for a in aux)
    return struct.pack('<QQQ', 0x112, 0, 1) + body + struct.pack('<Q', 0)


def test_sparse_row_sparse_file_of_a_few_bytes_loads_compressed(tmp_path):
    path = tmp_path / 'huge.params'
    path.write_bytes(_sparse_file(1, (900000000,), np.zeros(0), [[]]))
    assert path.stat().st_size < 120
    (arr,) = mx.nd.load(str(path))      # nothing stored: no dense 3.6 GB array is made
    assert arr.stype == 'row_sparse' and arr.shape == (900000000,) and len(arr.indices) == 0


@pytest.mark.parametrize('rows, message', [
    ([0, 5], r'row indices must lie in \[0, 3\), found 0 to 5'),
    ([-1, 1], r'row indices must lie in \[0, 3\), found -1 to 1'),
    ([2, 1], 'row indices are not sorted increasing'),
    ([1, 1], 'row indices are not sorted increasing'),
])
def test_row_sparse_indices_are_checked(tmp_path, rows, message):
    path = tmp_path / 'rows.params'
    path.write_bytes(_sparse_file(1, (3, 2), np.ones((2, 2)), [rows]))
    with pytest.raises(MXNetError, match=r'rows.params: array 0 %s.*\(at byte offset 1\d\d\)' % message):
        mx.nd.load(str(path))


@pytest.mark.parametrize('indptr, cols, message', [
    ([0, 1, 3, 3], [1, 0, 2], r'column indices must lie in \[0, 2\)'),
    ([0, 1, 3, 3], [1, 1, 0], 'column indices are not sorted'),
    ([0, 2, 1, 3], [1, 0, 1], 'indptr must rise from 0 to the 3 values'),
    ([1, 1, 3, 3], [1, 0, 1], 'indptr must rise from 0 to the 3 values'),
    ([0, 1, 3, 4], [1, 0, 1], 'indptr must rise from 0 to the 3 values'),
    ([0, 1, 3], [1, 0, 1], 'needs 4 indptr entries, not 3'),
])
def test_csr_indices_are_checked(tmp_path, indptr, cols, message):
    path = tmp_path / 'csr.params'
    path.write_bytes(_sparse_file(2, (3, 2), np.ones(3), [indptr, cols]))
    with pytest.raises(MXNetError, match='csr.params: array 0.*' + message):
        mx.nd.load(str(path))


def test_valid_hand_made_sparse_files_load(tmp_path):
    path = tmp_path / 'ok.params'
    path.write_bytes(_sparse_file(2, (3, 2), [3, 1, 2], [[0, 1, 3, 3], [1, 0, 1]]))
    np.testing.assert_array_equal(mx.nd.load(str(path))[0].asnumpy(), [[0, 3], [1, 2], [0, 0]])
    path.write_bytes(_sparse_file(1, (3, 2), [[1, 2]], [[1]]))
    np.testing.assert_array_equal(mx.nd.load(str(path))[0].asnumpy(), [[0, 0], [1, 2], [0, 0]])


def test_dense_shape_beyond_the_file_fails_before_allocating(tmp_path):
    path = tmp_path / 'dense.params'
    body = struct.pack('<Ii', _V2, 0) + _shape((1 << 20, 1 << 20)) + struct.pack('<iii', 1, 0, 0)
    path.write_bytes(struct.pack('<QQQ', 0x112, 0, 1) + body + b'\0' * 8)
    with pytest.raises(MXNetError, match=r'dense.params: truncated or corrupt .params data: '
                                         r'array 0 data needs 4398046511104 bytes'):
        mx.nd.load(str(path))


def test_a_file_of_another_kind_given_as_states_is_named(tmp_path):
    path = tmp_path / 'weights.params'
    mx.nd.save(str(path), {'w': mx.nd.ones((2,))})
    kv = mx.kv.create('local')
    kv.set_optimizer(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match='weights.params: not a neomx optimizer state'):
        kv.load_optimizer_states(str(path))


def test_deeply_nested_states_raise_mxneterror():
    deep_json = '{"tree": {"d": [[0, ' + '{"l": [' * 5000 + ']}' * 5000 + ']]}, "bf16": []}'
    with pytest.raises(MXNetError, match='deep.states'):
        state_format.loads(_neomx_states(deep_json), 'deep.states')
    deep_pickle = b'\x80\x04}K\x00' + b'(' * 5000 + b't' * 5000 + b's.'    # {0: ((((...))))}
    with pytest.raises(MXNetError, match='deep.states'):
        state_format.loads(deep_pickle, 'deep.states')
