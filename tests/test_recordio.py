"""mx.recordio, RecordIO datasets and mx.io.ImageRecordIter against MXNet 1.9.1-made data.

Fixtures: tests/data/recordio_{png,multilabel,jpg}.rec/.idx were written by neomx and read by
MXNet; recordio_iter_expected.npz holds the batches MXNet's ImageRecordIter produced from them.
"""
import os
import pickle
import struct

import numpy as np
import pytest

import neomx as mx

DATA = os.path.join(os.path.dirname(__file__), 'data')
MAGIC = struct.pack('<I', 0xced7230a)
# Payloads covering empty records, padding and magics at aligned/unaligned offsets.
PAYLOADS = [b'', b'abc', b'abcd', MAGIC, b'xy' + MAGIC, b'abcd' + MAGIC + b'efgh' + MAGIC + b'ij',
            MAGIC + MAGIC, b'1234' + MAGIC]
# The file MXNet 1.9.1 wrote for PAYLOADS.
MXNET_FILE = bytes.fromhex(
    '0a23d7ce000000000a23d7ce03000000616263000a23d7ce04000000616263640a23d7ce000000200a23d7ce'
    '000000600a23d7ce0600000078790a23d7ce00000a23d7ce04000020616263640a23d7ce0400004065666768'
    '0a23d7ce02000060696a00000a23d7ce000000200a23d7ce000000400a23d7ce000000600a23d7ce04000020'
    '313233340a23d7ce00000060')


def data_path(name):
    return os.path.join(DATA, name)


def read_all(record):
    records = []
    while (buf := record.read()) is not None:
        records.append(buf)
    return records


def test_writer_matches_mxnet_bytes(tmp_path):
    path = str(tmp_path / 'a.rec')
    writer = mx.recordio.MXRecordIO(path, 'w')
    for payload in PAYLOADS:
        writer.write(payload)
    writer.close()
    assert open(path, 'rb').read() == MXNET_FILE


def test_reader_reads_mxnet_file(tmp_path):
    path = tmp_path / 'a.rec'
    path.write_bytes(MXNET_FILE)
    reader = mx.recordio.MXRecordIO(str(path), 'r')
    assert read_all(reader) == PAYLOADS
    assert reader.read() is None
    reader.reset()
    assert reader.read() == b''


def test_indexed_record_io(tmp_path):
    idx, rec = str(tmp_path / 'b.idx'), str(tmp_path / 'b.rec')
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for key in (3, 1, 2):
        writer.write_idx(key, b'rec%d' % key * key)
    assert writer.tell() == 48
    writer.close()
    assert open(idx).read() == '3\t0\n1\t20\n2\t32\n'
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    assert reader.keys == [3, 1, 2] and reader.idx == {3: 0, 1: 20, 2: 32}
    assert reader.read_idx(2) == b'rec2rec2'
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.read_idx(1) == b'rec1'
    # Pickling closed the original; seeking reopens it, as in MXNet.
    assert not reader.is_open
    assert reader.read_idx(3) == b'rec3' * 3 and reader.read() == b'rec1'


def test_read_idx_reads_small_large_and_multipart_records_in_any_order(tmp_path):
    # read_idx reads a one-part record of a local file with os.pread (one call up to 2 KB,
    # two beyond), and hands records of several parts to the general reader
    rng = np.random.RandomState(0)
    large = rng.bytes(5000)
    payloads = PAYLOADS + [large, large[:2040] + MAGIC + large[2044:], rng.bytes(2040), rng.bytes(2041)]
    idx, rec = str(tmp_path / 'c.idx'), str(tmp_path / 'c.rec')
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for key, payload in enumerate(payloads):
        writer.write_idx(key, payload)
    writer.close()
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    for key in rng.permutation(len(payloads)):
        assert reader.read_idx(int(key)) == payloads[key]
        # the reader stands behind the record: read() goes on with the next one
        assert reader.read() == (payloads[key + 1] if key + 1 < len(payloads) else None)


def test_read_idx_of_a_corrupt_record_names_its_offset(tmp_path):
    idx, rec = str(tmp_path / 'd.idx'), str(tmp_path / 'd.rec')
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for key in range(3):
        writer.write_idx(key, b'payload%d' % key)
    writer.close()
    data = bytearray(open(rec, 'rb').read())
    offset = mx.recordio.MXIndexedRecordIO(idx, rec, 'r').idx[1]
    data[offset] ^= 0xff                        # its magic number
    with open(rec, 'wb') as f:
        f.write(bytes(data[:-3]))               # and the last record cut short
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    assert reader.read_idx(0) == b'payload0'
    with pytest.raises(mx.base.MXNetError, match='bad magic number.*byte offset %d of' % offset):
        reader.read_idx(1)
    with pytest.raises(mx.base.MXNetError, match='truncated record'):
        reader.read_idx(2)


def test_pickled_reader_refuses_plain_read_and_bad_arguments(tmp_path):
    path = tmp_path / 'a.rec'
    path.write_bytes(MXNET_FILE)
    reader = mx.recordio.MXRecordIO(str(path), 'r')
    pickle.dumps(reader)
    with pytest.raises(RuntimeError, match='multiple processes'):
        reader.read()
    with pytest.raises(ValueError, match='Invalid flag x'):
        mx.recordio.MXRecordIO(str(path), 'x')
    with pytest.raises(mx.base.MXNetError, match='nope.rec'):
        mx.recordio.MXRecordIO(str(tmp_path / 'nope.rec'), 'r')
    with pytest.raises(AssertionError):
        reader.write(b'x')


def test_pack_unpack_headers():
    packed = mx.recordio.pack(mx.recordio.IRHeader(5, 3.5, 7, 1), b'xy')
    assert packed == struct.pack('<IfQQ', 0, 3.5, 7, 1) + b'xy'
    header, payload = mx.recordio.unpack(packed)
    assert header == (0, 3.5, 7, 1) and payload == b'xy'
    packed = mx.recordio.pack((0, [1, 2.5], 9, 0), b'z')
    assert packed == struct.pack('<IfQQ2f', 2, 0, 9, 0, 1, 2.5) + b'z'
    header, payload = mx.recordio.unpack(packed)
    assert header.flag == 2 and header.label.dtype == np.float32 and payload == b'z'
    np.testing.assert_array_equal(header.label, [1, 2.5])


def test_pack_img_png_roundtrip_keeps_bgr_pixels():
    bgr = np.random.RandomState(1).randint(0, 256, (5, 7, 3)).astype(np.uint8)
    header, decoded = mx.recordio.unpack_img(mx.recordio.pack_img((0, 2.0, 4, 0), bgr, img_fmt='.png'))
    assert header == (0, 2.0, 4, 0)
    np.testing.assert_array_equal(decoded, bgr)
    gray = mx.recordio.unpack_img(mx.recordio.pack_img((0, 0, 0, 0), bgr[:, :, 0], img_fmt='.png'))[1]
    np.testing.assert_array_equal(gray, bgr[:, :, 0])
    with pytest.raises(ValueError, match=r'\.xyz'):
        mx.recordio.pack_img((0, 0, 0, 0), bgr, img_fmt='.xyz')


@pytest.mark.parametrize('img_fmt', ['.bmp', '.pgm', '.tif'])
@pytest.mark.parametrize('codec', ['opencv', 'pillow'])
def test_pack_img_uncompressed_formats_roundtrip(img_fmt, codec, monkeypatch):
    # MXNet's pack_img hands any extension to cv2.imencode; Pillow writes the same formats
    from neomx import _image_decode
    if codec == 'pillow':
        monkeypatch.setattr(_image_decode, '_OPENCV', [None])
    elif _image_decode.opencv() is None:
        pytest.skip('OpenCV is not installed')
    gray = np.random.RandomState(2).randint(0, 256, (6, 9)).astype(np.uint8)
    header, decoded = mx.recordio.unpack_img(mx.recordio.pack_img((0, 3.0, 8, 0), gray, img_fmt=img_fmt), 0)
    assert header == (0, 3.0, 8, 0)
    np.testing.assert_array_equal(decoded, gray)
    if img_fmt != '.pgm':       # PGM is gray only
        bgr = np.random.RandomState(3).randint(0, 256, (6, 9, 3)).astype(np.uint8)
        np.testing.assert_array_equal(mx.recordio.unpack_img(mx.recordio.pack_img((0, 0, 0, 0), bgr,
                                                                                  img_fmt=img_fmt))[1], bgr)


def test_unpack_img_jpeg_is_close():
    # Gradient image (BGR) stored as JPEG quality 90 in recordio_jpg.rec.
    yy, xx = np.mgrid[0:16, 0:16]
    rgb = np.stack([yy * 16, xx * 16, (yy + xx) * 8], axis=2)
    record = mx.recordio.MXIndexedRecordIO(data_path('recordio_jpg.idx'), data_path('recordio_jpg.rec'), 'r')
    header, bgr = mx.recordio.unpack_img(record.read_idx(0))
    assert header.label == 7.0 and bgr.shape == (16, 16, 3)
    assert np.abs(bgr.astype(int) - rgb).mean() < 4


def test_record_file_dataset():
    dataset = mx.gluon.data.RecordFileDataset(data_path('recordio_png.rec'))
    assert len(dataset) == 5
    header, _ = mx.recordio.unpack(dataset[3])
    assert header == (0, 3.0, 3, 0)


def test_image_record_dataset_matches_mxnet():
    dataset = mx.gluon.data.vision.ImageRecordDataset(data_path('recordio_multilabel.rec'))
    image, label = dataset[1]
    assert len(dataset) == 3 and image.shape == (9, 8, 3) and image.dtype == np.uint8
    np.testing.assert_array_equal(label, [1, 11])
    image, label = mx.gluon.data.vision.ImageRecordDataset(data_path('recordio_png.rec'), flag=0)[1]
    assert image.shape == (12, 9, 1) and label == 1.0
    # MXNet's centre crop of a PNG is exact: compare with its first batch.
    expected = np.load(data_path('recordio_iter_expected.npz'))['crop_data_0'][0]
    image = mx.gluon.data.vision.ImageRecordDataset(data_path('recordio_png.rec'))[0][0].asnumpy()
    np.testing.assert_array_equal(image[1:9, 2:10].transpose(2, 0, 1), expected)
    twice = mx.gluon.data.vision.ImageRecordDataset(data_path('recordio_png.rec'),
                                                   transform=lambda x, y: (x, y * 2))
    assert twice[4][1] == 8.0


# (name, rec file, arguments, passes, tolerance): as recorded from MXNet in the .npz.
ITER_CASES = [
    ('crop', 'png', dict(data_shape=(3, 8, 8), batch_size=2), 3, 0),
    ('norm', 'png', dict(data_shape=(3, 8, 8), batch_size=3, mean_r=120.5, mean_g=110, mean_b=100.25,
                         std_r=50, std_g=60.5, std_b=70, scale=0.5, mirror=True), 1, 0),
    ('upscale', 'png', dict(data_shape=(3, 10, 10), batch_size=5), 1, 1),
    ('resize', 'png', dict(data_shape=(3, 8, 8), batch_size=5, resize=9), 1, 1),
    ('gray', 'png', dict(data_shape=(1, 8, 8), batch_size=5), 1, 1),
    ('multilabel', 'multilabel', dict(data_shape=(3, 8, 8), batch_size=2, label_width=2), 2, 0),
    ('uint8', 'png', dict(data_shape=(3, 8, 8), batch_size=5, dtype='uint8', mean_r=10), 1, 0),
]


@pytest.mark.parametrize('name,rec,kwargs,passes,tolerance', ITER_CASES, ids=[c[0] for c in ITER_CASES])
def test_image_record_iter_matches_mxnet(name, rec, kwargs, passes, tolerance):
    expected = np.load(data_path('recordio_iter_expected.npz'))
    data_iter = mx.io.ImageRecordIter(path_imgrec=data_path('recordio_%s.rec' % rec), **kwargs)
    batches = []
    for _ in range(passes):
        batches += list(data_iter)
        data_iter.reset()
    assert len(batches) == sum(key.startswith(name + '_data') for key in expected.files)
    for n, batch in enumerate(batches):
        want = expected['%s_data_%d' % (name, n)]
        got = batch.data[0].asnumpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float64), want, atol=tolerance, rtol=0)
        np.testing.assert_array_equal(batch.label[0].asnumpy(), expected['%s_label_%d' % (name, n)])
        assert batch.pad == expected['%s_pad_%d' % (name, n)]
    assert data_iter.provide_data[0].shape == (kwargs['batch_size'],) + kwargs['data_shape']


def test_image_record_iter_descriptions_and_options():
    data_iter = mx.io.ImageRecordIter(path_imgrec=data_path('recordio_png.rec'),
                                      path_imgidx=data_path('recordio_png.idx'), data_shape=(3, 8, 8),
                                      batch_size=2, round_batch=False, preprocess_threads=8)
    assert data_iter.provide_data[0].name == 'data' and data_iter.provide_label == [('softmax_label', (2,))]
    batches = list(data_iter)
    assert [b.pad for b in batches] == [0, 0, 1]
    np.testing.assert_array_equal(batches[2].label[0].asnumpy(), [4, 0])
    assert batches[0].data[0].context == mx.cpu_pinned(0)
    shuffled = mx.io.ImageRecordIter(path_imgrec=data_path('recordio_png.rec'), data_shape=(3, 8, 8),
                                     batch_size=5, shuffle=True, rand_crop=True, rand_mirror=True, seed=3)
    assert sorted(shuffled.next().label[0].asnumpy().tolist()) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize('kwargs,message', [
    (dict(mean_a=1.0), 'mean_a=1.0 is not supported'),
    (dict(no_such_thing=1), "Cannot find argument 'no_such_thing'"),
    (dict(data_shape=(4, 8, 8)), '1 or 3 channels'),
    (dict(label_width=2), '1-dimensional label but label_width is set to 2'),
])
def test_image_record_iter_errors(kwargs, message):
    arguments = dict(path_imgrec=data_path('recordio_png.rec'), data_shape=(3, 8, 8), batch_size=2)
    arguments.update(kwargs)
    with pytest.raises(mx.base.MXNetError, match=message):
        data_iter = mx.io.ImageRecordIter(**arguments)
        data_iter.next()
