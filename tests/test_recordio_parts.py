"""Sharded RecordIO reading: each worker reads only its byte range of the file, streaming."""
import os
import struct

import numpy as np
import pytest

import neomx as mx
from neomx import _recordio_parts
from neomx.base import MXNetError

MAGIC = struct.pack('<I', 0xced7230a)
DATA = os.path.join(os.path.dirname(__file__), 'data')


def write_records(path, payloads):
    writer = mx.recordio.MXRecordIO(str(path), 'w')
    for payload in payloads:
        writer.write(payload)
    writer.close()


def varied_payloads(count):
    """Records of many sizes, some holding the magic number at aligned and unaligned offsets."""
    rng = np.random.RandomState(0)
    payloads = []
    for i in range(count):
        body = rng.bytes(rng.randint(0, 300))
        if i % 3 == 0:
            body = body[:8] + MAGIC + body[8:] + MAGIC
        if i % 5 == 0:
            body = b'x' + MAGIC + body
        payloads.append(b'%05d' % i + body)
    return payloads


@pytest.mark.parametrize('num_parts', [1, 2, 3, 7, 64])
def test_parts_cover_every_record_once_in_order(tmp_path, num_parts):
    payloads = varied_payloads(200)
    write_records(tmp_path / 'a.rec', payloads)
    parts = [list(_recordio_parts.read_part(str(tmp_path / 'a.rec'), num_parts, k)) for k in range(num_parts)]
    assert sum(parts, []) == payloads
    if num_parts <= 7:
        assert all(parts), 'every part of a 200-record file gets records'


def test_a_part_reads_only_its_byte_range(tmp_path):
    payloads = [bytes([i]) * 1000 for i in range(100)]          # 1008 bytes a record
    write_records(tmp_path / 'a.rec', payloads)
    size = os.path.getsize(tmp_path / 'a.rec')

    class CountingFile:
        def __init__(self, f):
            self.f, self.read_bytes = f, 0

        def read(self, n):
            data = self.f.read(n)
            self.read_bytes += len(data)
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

    with open(tmp_path / 'a.rec', 'rb') as f:
        counting = CountingFile(f)
        records = list(_recordio_parts.part_offsets(counting, size, 4, 2))
    assert [offset for offset, _ in records] == [1008 * i for i in range(50, 75)]
    # its quarter of the file, plus the resynchronisation scan's read-ahead
    assert counting.read_bytes < size // 4 + (1 << 20) + 16


def test_part_range_rejects_bad_index():
    with pytest.raises(MXNetError, match='part_index 3 is not in'):
        _recordio_parts.part_range(100, 3, 3)


def test_image_record_iter_parts_split_the_records():
    kwargs = dict(path_imgrec=os.path.join(DATA, 'recordio_png.rec'), data_shape=(3, 8, 8), batch_size=1,
                  round_batch=False)
    labels = [[b.label[0].asnumpy()[0] for b in mx.io.ImageRecordIter(num_parts=2, part_index=k, **kwargs)]
              for k in range(2)]
    assert labels == [[0, 1, 2], [3, 4]]             # as MXNet 1.9.1 splits this file
    indexed = [[b.label[0].asnumpy()[0] for b in mx.io.ImageRecordIter(
        num_parts=2, part_index=k, path_imgidx=os.path.join(DATA, 'recordio_png.idx'), **kwargs)]
        for k in range(2)]
    assert indexed == [[0, 1, 2], [3, 4]]
