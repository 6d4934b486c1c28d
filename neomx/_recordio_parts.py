"""Reading one part of a RecordIO file, streaming: how workers share a data set.

As dmlc-core's ``InputSplit`` does for MXNet, part ``k`` of ``n`` owns the records that
*start* in its byte range (:func:`part_range`). A reader seeks to the
start of its range, resynchronises on the next record head (a magic number at a 4-byte
aligned offset followed by a ``cflag`` of 0 or 1: the writer never leaves an aligned magic
inside a payload) and reads records until it passes the end of its range. It touches only
its own bytes (plus the tail of one record), and holds one record at a time.
"""
import struct

from . import _fileio
from .base import MXNetError
from ._recordio_format import LENGTH_BITS, MAGIC_BYTES, PART_HEADER, read_record

__all__ = ['part_range', 'part_offsets', 'read_part', 'stream_size']

_SCAN_CHUNK = 1 << 20
_URL_BLOCK = 16 << 20
# A record starts with a part whose cflag is 0 (the whole record) or 1 (the first part).
_STARTING_FLAGS = (0, 1)


def part_range(size, num_parts, part_index):
    """The byte range ``[begin, end)`` of part ``part_index`` of a ``size``-byte file.

    As dmlc-core: parts of ``ceil(size / num_parts)`` bytes rounded up to 4, the last shorter.
    """
    if not 0 <= part_index < num_parts:
        raise MXNetError('RecordIO: part_index %d is not in [0, num_parts %d)' % (part_index, num_parts))
    step = -(-size // num_parts)
    step = -(-step // 4) * 4
    return min(step * part_index, size), min(step * (part_index + 1), size)


def _record_head_at_or_after(stream, offset, size):
    """Offset of the first record head at or after ``offset`` (``size`` when there is none)."""
    position = offset + (-offset % 4)
    while position < size:
        stream.seek(position)
        chunk = stream.read(_SCAN_CHUNK + PART_HEADER.size)
        if len(chunk) < PART_HEADER.size:
            return size
        found = chunk.find(MAGIC_BYTES)
        while found != -1 and found + PART_HEADER.size <= len(chunk):
            if found % 4 == 0:
                lrecord = struct.unpack_from('<I', chunk, found + 4)[0]
                if lrecord >> LENGTH_BITS in _STARTING_FLAGS:
                    return position + found
            found = chunk.find(MAGIC_BYTES, found + 1)
        position += _SCAN_CHUNK
    return size


def part_offsets(stream, size, num_parts, part_index):
    """Yield ``(offset, payload)`` of each record of the part, reading ``stream`` forward."""
    begin, end = part_range(size, num_parts, part_index)
    position = _record_head_at_or_after(stream, begin, size) if begin else 0
    stream.seek(position)
    while position < end:
        payload = read_record(stream)
        if payload is None:
            return
        yield position, payload
        position = stream.tell()


def stream_size(stream, uri):
    """The size of the file open as ``stream``."""
    size = getattr(stream, 'size', None)
    if isinstance(size, int):
        return size
    try:
        return stream.seek(0, 2)
    except (OSError, ValueError) as err:
        raise MXNetError('RecordIO: cannot find the size of %s: %s' % (uri, err)) from None


def read_part(uri, num_parts=1, part_index=0, **options):
    """Yield the payloads of part ``part_index`` of ``num_parts`` of the RecordIO file ``uri``.

    ``uri`` is a local path or a URL (see ``neomx._fileio``); ``options`` go to fsspec
    (``block_size``...). Memory use is one record plus the read-ahead buffer: for URLs
    16 MiB by default, where fsspec's 5 MiB blocks cost one request every 5 MiB.
    """
    if _fileio.is_url(uri) and _fileio.local_path(uri) is None:
        options.setdefault('block_size', _URL_BLOCK)
    with _fileio.open_for_read(uri, **options) as stream:
        size = stream_size(stream, uri)
        for _, payload in part_offsets(stream, size, num_parts, part_index):
            yield payload
