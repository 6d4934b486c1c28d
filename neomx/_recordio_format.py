"""RecordIO's framing of records into parts (``mx.recordio`` writes and reads it, and
``_recordio_parts`` splits files along it): each part is ``u32 magic | u32 (cflag << 29 |
length)`` and its payload, padded to 4 bytes; a payload that holds the magic number at an
aligned offset is cut there into several parts (cflag 1, 2... 3), so that a reader can find
record heads by scanning for the magic number."""
import io
import os
import struct

from .base import MXNetError

MAGIC = 0xced7230a
MAGIC_BYTES = struct.pack('<I', MAGIC)
PART_HEADER = struct.Struct('<II')
LENGTH_BITS = 29
MAX_RECORD = 1 << LENGTH_BITS
# cflag of a record's parts: the whole record, or the first, a middle or the last of several.
WHOLE, FIRST, MIDDLE, LAST = 0, 1, 2, 3


def padding(length):
    """Zero bytes that bring ``length`` up to a multiple of 4."""
    return b'\0' * (-length % 4)


def split_at_magic(buf):
    """Cut ``buf`` at the magic numbers sitting at 4-byte aligned offsets, dropping them.

    Returns
    -------
    list of memoryview
        One part, or ``k + 1`` parts for ``k`` aligned magics.
    """
    view = memoryview(buf)
    parts = []
    start = 0
    found = buf.find(MAGIC_BYTES)
    while found != -1:
        if found % 4 == 0:
            parts.append(view[start:found])
            start = found + 4
            found = buf.find(MAGIC_BYTES, start)
        else:
            found = buf.find(MAGIC_BYTES, found + 1)
    parts.append(view[start:])
    return parts


def encode_record(buf):
    """The bytes of one record holding payload ``buf`` (see the module docstring)."""
    if len(buf) >= MAX_RECORD:
        raise MXNetError('RecordIO only accepts records of less than 2^29 bytes, got %d' % len(buf))
    parts = split_at_magic(buf)
    flags = [WHOLE] if len(parts) == 1 else [FIRST] + [MIDDLE] * (len(parts) - 2) + [LAST]
    out = bytearray()
    for flag, part in zip(flags, parts):
        out += PART_HEADER.pack(MAGIC, (flag << LENGTH_BITS) | len(part))
        out += part
    out += padding(len(buf))
    return bytes(out)


def read_record(stream):
    """The payload of the record at the position of ``stream``, or None at the end of the file."""
    payload = None          # the parts read so far, of a record of several
    while True:
        header = stream.read(PART_HEADER.size)
        if not header and payload is None:
            return None
        if len(header) != PART_HEADER.size:
            raise MXNetError('Invalid RecordIO file: truncated record header')
        magic, lrecord = PART_HEADER.unpack(header)
        if magic != MAGIC:
            raise MXNetError('Invalid RecordIO file: bad magic number 0x%08x' % magic)
        flag, length = lrecord >> LENGTH_BITS, lrecord & (MAX_RECORD - 1)
        padded = length + -length % 4
        data = stream.read(padded)
        if len(data) != padded:
            raise MXNetError('Invalid RecordIO file: truncated record')
        if payload is None:
            if flag == WHOLE:       # the common case: one part, returned without assembly
                return data if padded == length else data[:length]
            payload = bytearray()
        payload += data[:length]
        if flag in (WHOLE, LAST):
            return bytes(payload)
        payload += MAGIC_BYTES


# The bytes a first read of a record at a known offset asks for: the whole record, for the
# small ones, in one system call.
_FIRST_READ = 2048


def read_record_at(stream, offset):
    """:func:`read_record` of the record at byte ``offset``, leaving ``stream`` after it.

    A record of one part in a local file is read with ``os.pread`` (one call for a small
    record, two for a large one), without the buffered reader's seek and refill.
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):     # not a local file
        fd = None
    if fd is not None:
        head = os.pread(fd, _FIRST_READ, offset)
        if len(head) >= PART_HEADER.size:
            magic, lrecord = PART_HEADER.unpack_from(head)
            if magic == MAGIC and lrecord >> LENGTH_BITS == WHOLE:
                end = PART_HEADER.size + lrecord + -lrecord % 4
                if end > len(head):
                    head += os.pread(fd, end - len(head), offset + len(head))
                if end <= len(head):
                    stream.seek(offset + end)
                    return head[PART_HEADER.size:PART_HEADER.size + lrecord]
    # several parts, a stream without a descriptor, or an error to report: the general reader
    stream.seek(offset)
    return read_record(stream)
