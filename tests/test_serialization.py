"""mx.nd.save / load / load_frombuffer: MXNet's .params format, byte for byte.

The hex literals were written by MXNet 1.9.1 (``mx.nd.save``; ``mx.npx.save`` for the
version-3 file) and are compared with neomx's output, or loaded by neomx.
"""
import binascii
import os
import struct

import numpy as np
import pytest
import torch

import neomx as mx

HEADER = '1201000000000000' '0000000000000000'      # list magic 0x112, reserved 0

# name -> (data builder, the file MXNet 1.9.1 writes for it)
MXNET_FILES = {
    'float32_dict': (lambda: {'a': mx.nd.array([1.0, 2.0])},
                     HEADER + '0100000000000000c9fa93f900000000010000000200000000000000010000000000000000000000'
                     '0000803f000000400100000000000000010000000000000061'),
    'int8': (lambda: {'q': mx.nd.array([-128, 0, 127], dtype='int8')},
             HEADER + '0100000000000000c9fa93f900000000010000000300000000000000010000000000000005000000'
             '80007f0100000000000000010000000000000071'),
    'bool_list': (lambda: [mx.nd.array([[1, 0], [0, 1]], dtype='bool')],
                  HEADER + '0100000000000000c9fa93f90000000002000000020000000000000002000000000000000100'
                  '00000000000007000000010000010000000000000000'),
    'bfloat16': (lambda: {'b': mx.nd.array([1.5, -2.0, 0.25], dtype='bfloat16')},
                 HEADER + '0100000000000000c9fa93f90000000001000000030000000000000001000000000000000c000000'
                 'c03f00c0803e0100000000000000010000000000000062'),
    'float16_int64': (lambda: {'h': mx.nd.array([1.5, -2.0], dtype='float16'),
                               'l': mx.nd.array([1, -1], dtype='int64')},
                      HEADER + '0200000000000000c9fa93f900000000010000000200000000000000010000000000000002000000'
                      '003e00c0c9fa93f90000000001000000020000000000000001000000000000000600000001000000'
                      '00000000ffffffffffffffff020000000000000001000000000000006801000000000000006c'),
    'uint8_float64_list': (lambda: [mx.nd.array([1, 2], dtype='uint8'), mx.nd.array([0.25], dtype='float64')],
                           HEADER + '0200000000000000c9fa93f90000000001000000020000000000000001000000000000000300'
                           '00000102c9fa93f900000000010000000100000000000000010000000000000001000000000000'
                           '000000d03f0000000000000000'),
    'device_ids': (lambda: {'x': mx.nd.array([1, 2], ctx=mx.cpu(1)),
                            'y': mx.nd.array([3], dtype='int32', ctx=mx.cpu_pinned(2))},
                   HEADER + '0200000000000000c9fa93f900000000010000000200000000000000010000000100000000000000'
                   '0000803f00000040c9fa93f90000000001000000010000000000000003000000020000000400000003'
                   '0000000200000000000000010000000000000078010000000000000079'),
    'utf8_key': (lambda: {'w\u00e9': mx.nd.array([1])},
                 HEADER + '0100000000000000c9fa93f900000000010000000100000000000000010000000000000000000000'
                 '0000803f0100000000000000030000000000000077c3a9'),
    'empty_list': (lambda: [], HEADER + '0000000000000000' '0000000000000000'),
}
# MXNet 1.9.1 sparse arrays (row_sparse [[0, 0], [1, 2], [0, 0]] and csr {'c': [[0, 3], [1, 2], [0, 0]]}).
ROW_SPARSE_FILE = (HEADER + '0100000000000000c9fa93f9010000000200000000000000000000000200000000000000020000000300'
                   '0000000000000200000000000000010000000000000000000000060000000100000001000000000000000000'
                   '803f0000004001000000000000000000000000000000')
CSR_FILE = (HEADER + '0100000000000000c9fa93f90200000001000000030000000000000002000000030000000000000002000000'
            '0000000001000000000000000000000006000000010000000400000000000000060000000100000003000000'
            '00000000000040400000803f0000004000000000000000000100000000000000030000000000000003000000'
            '0000000001000000000000000000000000000000010000000000000001000000000000000100000000000000'
            '63')
# mx.npx.save([np.array(3.0), np.zeros((2, 0)), np.array([[1, 2]], dtype='int32')]): version 3.
V3_FILE = (HEADER + '0300000000000000cafa93f9000000000000000001000000000000000000000000004040cafa93f900000000'
           '0200000002000000000000000000000000000000010000000000000000000000cafa93f90000000002000000'
           '0100000000000000020000000000000001000000000000000400000001000000020000000000000000000000')


def _saved_bytes(tmp_path, data):
    fname = tmp_path / 'x.params'
    mx.nd.save(str(fname), data)
    return fname.read_bytes()


@pytest.mark.parametrize('case', sorted(MXNET_FILES))
def test_save_matches_mxnet_bytes(tmp_path, case):
    build, expected = MXNET_FILES[case]
    with mx.cpu():      # the file records each array's device: MXNet's were saved from cpu
        data = build()
    assert binascii.hexlify(_saved_bytes(tmp_path, data)).decode() == expected


@pytest.mark.parametrize('case', sorted(MXNET_FILES))
def test_load_mxnet_bytes(case):
    build, hexdata = MXNET_FILES[case]
    expected, loaded = build(), mx.nd.load_frombuffer(binascii.unhexlify(hexdata))
    if isinstance(expected, dict):
        assert list(loaded) == list(expected)          # file order is kept
        expected, loaded = list(expected.values()), list(loaded.values())
    assert len(loaded) == len(expected)
    for got, want in zip(loaded, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.context == mx.cpu(0)                # whatever device the file records
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'uint8', 'int8', 'int32', 'int64', 'bool',
                                   'bfloat16'])
@pytest.mark.parametrize('shape', [(1,), (5,), (2, 3), (2, 1, 3, 2)])
def test_round_trip_dtypes_and_shapes(tmp_path, dtype, shape):
    values = np.random.RandomState(0).uniform(-100, 100, size=shape)
    arr = mx.nd.array(values > 0 if dtype == 'bool' else values, dtype=dtype)
    fname = str(tmp_path / 'r.params')
    mx.nd.save(fname, {'v': arr})
    back = mx.nd.load(fname)['v']
    assert back.dtype == arr.dtype and back.shape == shape
    np.testing.assert_array_equal(back.asnumpy(), arr.asnumpy())


def test_zero_dim_and_zero_size_arrays_use_version_3(tmp_path):
    with mx.util.np_shape(True), mx.cpu():     # MXNet's file was saved from cpu (the device is recorded)
        scalar = mx.nd.NDArray(torch.tensor(3.0))
        data = _saved_bytes(tmp_path, [scalar, mx.nd.zeros((2, 0))])
        # The first two arrays of MXNet's version-3 file, in a list of two.
        expected = V3_FILE[:48].replace('03', '02', 1) + V3_FILE[48:48 + 56 + 80] + '0000000000000000'
        assert binascii.hexlify(data).decode() == expected
        back = mx.nd.load_frombuffer(data)
    assert back[0].shape == () and back[0].asscalar() == 3.0
    assert back[1].shape == (2, 0)


def test_files_remember_the_shape_semantics_they_were_saved_under(tmp_path):
    # as MXNet 1.9.1: version 2 without NumPy shapes (a zero-size array with device and type
    # but no data), version 3 with them; a 0 means "unknown" to one and a size to the other,
    # so neither loads under the other
    legacy = _saved_bytes(tmp_path, [mx.nd.empty((2, 0, 1), ctx=mx.cpu())])   # the device is recorded
    assert binascii.hexlify(legacy).decode() == (
        HEADER + '0100000000000000' + 'c9fa93f9000000000300000002000000000000000000000000000000'
        '0100000000000000' + '010000000000000000000000' + '0000000000000000')
    assert mx.nd.load_frombuffer(legacy)[0].shape == (2, 0, 1)
    with mx.util.np_shape(True):
        numpy_style = _saved_bytes(tmp_path, [mx.nd.zeros((2, 0, 1)), mx.nd.ones((1, 2))])
        with pytest.raises(mx.base.MXNetError, match='without NumPy shape semantics'):
            mx.nd.load_frombuffer(legacy)
        assert [a.shape for a in mx.nd.load_frombuffer(numpy_style)] == [(2, 0, 1), (1, 2)]
    with pytest.raises(mx.base.MXNetError, match=r'array 0 \(shape \(2, 0, 1\)\) was saved with NumPy'):
        mx.nd.load_frombuffer(numpy_style)


def test_load_version_3_file():
    with mx.util.np_shape(True):
        scalar, empty, ints = mx.nd.load_frombuffer(binascii.unhexlify(V3_FILE))
    assert scalar.shape == () and float(scalar.asnumpy()) == 3.0
    assert empty.shape == (2, 0)
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints.asnumpy(), [[1, 2]])


def test_load_sparse_files_stay_sparse():
    (rsp,) = mx.nd.load_frombuffer(binascii.unhexlify(ROW_SPARSE_FILE))
    np.testing.assert_array_equal(rsp.asnumpy(), [[0, 0], [1, 2], [0, 0]])
    assert rsp.stype == 'row_sparse' and rsp.indices.asnumpy().tolist() == [1]
    csr = mx.nd.load_frombuffer(binascii.unhexlify(CSR_FILE))['c']
    np.testing.assert_array_equal(csr.asnumpy(), [[0, 3], [1, 2], [0, 0]])
    assert csr.stype == 'csr' and csr.indptr.asnumpy().tolist() == [0, 1, 3, 3]


def _old_file(array_records):
    return (struct.pack('<QQQ', 0x112, 0, len(array_records)) + b''.join(array_records)
            + struct.pack('<Q', 0))


def test_load_version_1_and_legacy_layouts():
    data = np.array([[1, 2, 3], [4, 5, 6]], dtype='float32').tobytes()
    # Version 1: magic, i32 ndim, i64 dims, device, type flag, data (no storage type).
    v1 = struct.pack('<Iiqqiii', 0xF993FAC8, 2, 2, 3, 1, 0, 0) + data
    # Legacy: u32 ndim, u32 dims, device, type flag, data (no magic).
    legacy = struct.pack('<IIIiii', 2, 2, 3, 1, 0, 0) + data
    for arr in mx.nd.load_frombuffer(_old_file([v1, legacy])):
        np.testing.assert_array_equal(arr.asnumpy(), [[1, 2, 3], [4, 5, 6]])


def test_single_ndarray_loads_as_list_and_pathlike(tmp_path):
    fname = tmp_path / 's.params'
    mx.nd.save(fname, mx.nd.array([7, 8]))
    back = mx.nd.load(fname)
    assert isinstance(back, list) and len(back) == 1
    np.testing.assert_array_equal(back[0].asnumpy(), [7, 8])


def test_save_rejects_bad_containers(tmp_path):
    fname = str(tmp_path / 'x.params')
    with pytest.raises(TypeError, match='str->NDArray'):
        mx.nd.save(fname, {1: mx.nd.ones((1,))})
    with pytest.raises(TypeError, match='str->NDArray'):
        mx.nd.save(fname, [np.zeros(2)])
    with pytest.raises(ValueError, match='data needs to'):
        mx.nd.save(fname, (mx.nd.ones((1,)),))         # MXNet accepts lists, not tuples
    assert not os.listdir(tmp_path)
    with pytest.raises(TypeError, match='bytes'):
        mx.nd.load_frombuffer('not bytes')


def test_load_missing_file(tmp_path):
    with pytest.raises(mx.base.MXNetError, match='cannot open .*missing.params'):
        mx.nd.load(str(tmp_path / 'missing.params'))


def test_truncated_file_names_offset(tmp_path):
    full = _saved_bytes(tmp_path, {'w': mx.nd.ones((4, 4))})
    for cut, part in [(4, 'file header'), (20, 'array count'), (30, 'array 0 storage type'),
                      (90, 'array 0 data'), (len(full) - 1, 'name 0')]:
        with pytest.raises(mx.base.MXNetError, match='%s needs .*at byte offset' % part):
            mx.nd.load_frombuffer(full[:cut])


@pytest.mark.parametrize('patch, message', [
    ((0, b'\x13'), r'not an NDArray \.params file.*offset 0'),
    ((24, b'\x01\x02\x03\x04'), 'does not start with an NDArray magic .* offset 24'),
    ((28, b'\x07'), 'unknown storage type 7 .* offset 28'),
    ((36, b'\xff' * 8), r'array 0 shape \(-1, 4\) has a negative dimension .* offset 36'),
    ((60, b'\x63'), 'unknown type flag 99 .* offset 60'),
    ((128, b'\x02'), 'holds 1 arrays but 2 names .* offset 128'),
    ((144, b'\xff'), 'name 0 is not valid UTF-8 .* offset 144'),
])
def test_corrupt_files_say_what_and_where(tmp_path, patch, message):
    data = bytearray(_saved_bytes(tmp_path, {'w': mx.nd.ones((4, 4))}))
    offset, replacement = patch
    data[offset:offset + len(replacement)] = replacement
    with pytest.raises(mx.base.MXNetError, match=message):
        mx.nd.load_frombuffer(bytes(data))


def test_failed_save_keeps_old_file(tmp_path):
    fname = tmp_path / 'model.params'
    mx.nd.save(str(fname), {'w': mx.nd.array([1, 2])})
    before = fname.read_bytes()
    # The second array has no data to copy out: serialisation fails after the first one.
    broken = mx.nd.NDArray(torch.empty(3, device='meta'))
    with pytest.raises(NotImplementedError):
        mx.nd.save(str(fname), {'ok': mx.nd.ones((1000,)), 'broken': broken})
    assert fname.read_bytes() == before
    assert os.listdir(tmp_path) == ['model.params']     # no temporary file left behind
