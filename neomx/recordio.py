"""``mx.recordio``: read and write MXNet's RecordIO files (``.rec``, with ``.idx`` indexes).

The file format is dmlc's RecordIO, byte for byte: every record is a sequence of parts, each
a little-endian ``uint32`` magic ``0xced7230a``, a ``uint32`` holding ``(cflag << 29) | length``
and ``length`` bytes of data; the record ends with zero padding to a 4-byte boundary. Where
the payload contains the magic at a 4-byte aligned offset, the writer drops it there and
starts a new part (``cflag`` 1 = first, 2 = middle, 3 = last, 0 = the whole record), so a
reader can resynchronise on the magic; the reader puts the dropped magics back.

An index file (``.idx``) has one ``key<TAB>byte offset`` line per record.

Image records (``pack_img``/``unpack_img``) are encoded and decoded with OpenCV, as MXNet does,
when the ``vision`` extra's ``opencv-python-headless`` is installed (the same bytes and pixels),
else with Pillow: the channel order is the same (BGR, as OpenCV's), PNG pixels are identical and
JPEG pixels may differ by a few levels between the two codecs.
"""
import io
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from . import _fileio
from ._image_decode import decode_bytes, opencv
from ._optional import require
from ._recordio_format import encode_record, read_record, read_record_at
from .base import MXNetError, c_str, check_call  # noqa: F401  (MXNet's module exposes them)

__all__ = ['MXRecordIO', 'MXIndexedRecordIO', 'IRHeader', 'pack', 'unpack', 'pack_img', 'unpack_img']

# names MXNet's module also holds (imported from its base module)
from .base import c_str, check_call  # noqa: E402,F401


class MXRecordIO:
    """Sequential reader or writer of a RecordIO file.

    Parameters
    ----------
    uri : str
        Path of the ``.rec`` file.
    flag : str
        ``'r'`` to read, ``'w'`` to write (the file is truncated).

    Notes
    -----
    Pickling closes the record (flushing a writer) and the copy reopens it, as MXNet does so
    that readers can be sent to DataLoader worker processes. A reader refuses to ``read`` in
    another process than the one that opened it (``RuntimeError``).

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = os.path.join(folder.name, 'data.rec')
    >>> writer = mx.recordio.MXRecordIO(path, 'w')
    >>> for text in [b'first', b'second']:
    ...     writer.write(text)
    >>> writer.close()
    >>> reader = mx.recordio.MXRecordIO(path, 'r')
    >>> reader.read(), reader.read(), reader.read()      # None at the end
    (b'first', b'second', None)
    >>> reader.close()
    >>> folder.cleanup()
    """

    def __init__(self, uri, flag):
        self.uri = uri
        self.flag = flag
        self.handle = None
        self.pid = None
        self.is_open = False
        self.open()

    def open(self):
        """Open the file for reading or writing, as ``flag`` says."""
        if self.flag == 'w':
            self.writable = True
        elif self.flag == 'r':
            self.writable = False
        else:
            raise ValueError('Invalid flag %s' % self.flag)
        # A writer's file is written under a temporary name and put in place by close().
        opener = _fileio.open_stream_for_write if self.writable else _fileio.open_for_read
        try:
            self.handle = opener(self.uri, self.flag + 'b')
        except MXNetError as err:
            raise MXNetError('RecordIO: %s' % err) from None
        self.pid = os.getpid()
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        is_open = self.is_open
        self.close()
        state = dict(self.__dict__)
        state['is_open'] = is_open
        del state['handle']
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.is_open = False
        self.handle = None
        if state['is_open']:
            self.open()

    def _check_pid(self, allow_reset=False):
        """Refuse (or, with ``allow_reset``, reopen) a record opened by another process."""
        if self.pid != os.getpid():
            if not allow_reset:
                raise RuntimeError('Forbidden operation in multiple processes')
            self.reset()

    def close(self):
        """Close the file (a no-op when it is closed); a writer's file is put in place now."""
        if not getattr(self, 'is_open', False):
            return
        handle, self.handle = self.handle, None
        self.is_open = False
        owner, self.pid = self.pid, None
        if not self.writable:
            handle.close()
        elif owner == os.getpid():
            handle.commit()
        # else: a copy inherited by a forked process; the writing process finishes the file.

    def reset(self):
        """Reopen the file: a reader starts over, a writer truncates it."""
        self.close()
        self.open()

    def write(self, buf):
        """Append one record holding the bytes ``buf``."""
        assert self.writable
        self._check_pid(allow_reset=False)
        self.handle.write(encode_record(bytes(buf)))

    def read(self):
        """The next record's bytes, or None at the end of the file."""
        assert not self.writable
        self._check_pid(allow_reset=False)
        start = self.handle.tell()
        try:
            return read_record(self.handle)
        except MXNetError as err:
            raise MXNetError('%s (record at byte offset %d of %s)' % (err, start, self.uri)) from None


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO file with an index file, for random access by key.

    Parameters
    ----------
    idx_path : str
        Path of the index file: one ``key<TAB>offset`` line per record.
    uri : str
        Path of the ``.rec`` file.
    flag : str
        ``'r'`` or ``'w'``.
    key_type : type
        Type the keys are parsed to when reading the index (``int`` by default).

    Attributes
    ----------
    keys : list
        Keys in file order.
    idx : dict
        Byte offset of the record of each key.

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> rec, idx = os.path.join(folder.name, 'data.rec'), os.path.join(folder.name, 'data.idx')
    >>> writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    >>> for key in range(3):
    ...     writer.write_idx(key, mx.recordio.pack(mx.recordio.IRHeader(0, key * 10, key, 0), b'payload'))
    >>> writer.close()
    >>> reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    >>> reader.keys
    [0, 1, 2]
    >>> header, payload = mx.recordio.unpack(reader.read_idx(2))     # random access by key
    >>> header.label, payload
    (20.0, b'payload')
    >>> reader.close()
    >>> folder.cleanup()
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.fidx = None
        try:
            if self.writable:
                self.idx, self.keys = {}, []
                self.fidx = _fileio.open_stream_for_write(self.idx_path)
            else:
                entries = read_index(self.idx_path, self.key_type)
                self.idx, self.keys = dict(entries), [key for key, _ in entries]
        except BaseException:
            self.close()
            raise

    def close(self):
        if not getattr(self, 'is_open', False):
            return
        owner = self.pid
        super().close()
        fidx, self.fidx = self.fidx, None
        if fidx is not None and owner == os.getpid():
            fidx.commit()       # after the .rec file: an index never points past its records

    def __getstate__(self):
        state = super().__getstate__()
        state['fidx'] = None
        return state

    def seek(self, idx):
        """Move the reader to the record of key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        self.handle.seek(self.idx[idx])

    def tell(self):
        """Byte offset where the writer's next record starts."""
        assert self.writable
        self._check_pid(allow_reset=False)
        return self.handle.tell()

    def read_idx(self, idx):
        """The bytes of the record of key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        offset = self.idx[idx]
        try:
            record = read_record_at(self.handle, offset)
        except MXNetError as err:
            raise MXNetError('%s (record at byte offset %d of %s)' % (err, offset, self.uri)) from None
        if record is None:
            raise MXNetError('RecordIO: index %s gives offset %d for key %r, past the end of %s'
                             % (self.idx_path, self.idx[idx], idx, self.uri))
        return record

    def write_idx(self, idx, buf):
        """Append a record holding ``buf`` under key ``idx`` and index it."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(('%s\t%d\n' % (str(key), pos)).encode('utf-8'))
        self.idx[key] = pos
        self.keys.append(key)


def read_index(idx_path, key_type=int):
    """The ``(key, offset)`` pairs, in file order, of the index file ``idx_path``.

    Blank lines are skipped; a line that is not ``key<TAB>offset`` (or a key that
    ``key_type`` rejects, or a negative offset) raises ``MXNetError`` naming the file and line.
    """
    try:
        with _fileio.open_for_read(idx_path) as lines:
            text = lines.read().decode('utf-8')
    except MXNetError as err:
        raise MXNetError('RecordIO: cannot open index file %s (%s)' % (idx_path, err)) from None
    except UnicodeDecodeError as err:
        raise MXNetError('RecordIO: index file "%s" is not text (%s)' % (idx_path, err)) from None
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.strip().split('\t')
        try:
            if len(fields) != 2:
                raise ValueError('expected key<TAB>offset')
            key, offset = key_type(fields[0]), int(fields[1])
            if offset < 0:
                raise ValueError('negative offset')
        except (ValueError, TypeError) as err:
            raise MXNetError('RecordIO: malformed line %d of index file "%s": %r (%s)'
                             % (number, idx_path, line[:80], err)) from None
        entries.append((key, offset))
    return entries


IRHeader = namedtuple('HEADER', ['flag', 'label', 'id', 'id2'])
IRHeader.__doc__ = """Header of an image record.

Parameters
----------
flag : int
    0 for a scalar label; otherwise the number of float32 labels stored before the payload.
label : float or array of float32
    The label(s).
id, id2 : int
    Unsigned 64-bit ids of the record.

Example
-------
>>> header = mx.recordio.IRHeader(flag=0, label=3.0, id=7, id2=0)
>>> packed = mx.recordio.pack(header, b'payload')
>>> mx.recordio.unpack(packed)
(HEADER(flag=0, label=3.0, id=7, id2=0), b'payload')
>>> multi = mx.recordio.pack(mx.recordio.IRHeader(0, [1, 2], 8, 0), b'')     # flag set to 2
>>> mx.recordio.unpack(multi)[0]
HEADER(flag=2, label=array([1., 2.], dtype=float32), id=8, id2=0)
"""
_IR_FORMAT = 'IfQQ'
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Prefix the bytes ``s`` with an image record header.

    Parameters
    ----------
    header : IRHeader or tuple
        ``flag`` is ignored: a scalar ``label`` is stored in the header (flag 0), an array
        label as float32 values after it (flag = its size).
    s : bytes
        Payload.

    Returns
    -------
    bytes
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s):
    """Split a packed record into its header and payload.

    Returns
    -------
    header : IRHeader
        With ``label`` a float32 array of size ``flag`` when ``flag > 0``.
    s : bytes
        Payload.
    """
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def _decode_image(buf, iscolor=1, source='buffer', to_rgb=True):
    """Decode JPEG/PNG bytes to a uint8 array in RGB(A) order (BGR(A), OpenCV's, when
    ``to_rgb`` is False).

    Parameters
    ----------
    buf : bytes
    iscolor : int
        1 for (H, W, 3) colour, 0 for (H, W) grayscale, -1 for the stored channels
        ((H, W) gray, (H, W, 3) RGB or (H, W, 4) RGBA).

    Returns
    -------
    numpy.ndarray
    """
    img = decode_bytes(buf, iscolor, to_rgb, source)
    return img[:, :, 0] if img.shape[2] == 1 else img


def decode_record_image(buf, iscolor, record, source, to_rgb=True):
    """:func:`_decode_image` whose failure names the record number and the file."""
    try:
        return _decode_image(buf, iscolor, source, to_rgb)
    except MXNetError as err:
        raise MXNetError('RecordIO: the image of record %s of %s does not decode: %s'
                         % (record, source, err)) from None


def _reverse_channels(img):
    """RGB(A) <-> BGR(A) for a colour image; gray images unchanged."""
    if img.ndim == 3 and img.shape[2] >= 3:
        return np.concatenate([img[:, :, 2::-1], img[:, :, 3:]], axis=2)
    return img


def unpack_img(s, iscolor=-1):
    """Unpack a record holding an encoded image.

    Parameters
    ----------
    s : bytes
    iscolor : int
        As OpenCV's imread flag: -1 unchanged, 0 grayscale, 1 colour.

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray
        uint8, (H, W) or (H, W, C) in BGR(A) order, as OpenCV decodes.
    """
    header, s = unpack(s)
    # decoded in OpenCV's BGR order directly (Pillow's RGB reversed by a copy)
    return header, np.ascontiguousarray(_decode_image(s, iscolor, to_rgb=False))


def pack_img(header, img, quality=95, img_fmt='.jpg'):
    """Encode an image and pack it with ``header``.

    Parameters
    ----------
    header : IRHeader or tuple
    img : numpy.ndarray
        uint8, (H, W) gray or (H, W, 3) in BGR order (OpenCV's).
    quality : int
        JPEG quality (1-100); for PNG, the zlib compression level (clipped to 0-9).
    img_fmt : str
        The encoding, as a file extension: ``'.jpg'``/``'.jpeg'``, ``'.png'``, or any other
        that the encoder writes (``'.bmp'``, ``'.pgm'``/``'.ppm'``, ``'.tif'``...: stored
        uncompressed, they decode fastest).

    Returns
    -------
    bytes

    Examples
    --------
    >>> gray = np.arange(12, dtype=np.uint8).reshape(3, 4)
    >>> header, pixels = mx.recordio.unpack_img(mx.recordio.pack_img((0, 5.0, 1, 0), gray, img_fmt='.bmp'))
    >>> header.label, pixels.shape, bool((pixels == gray).all())
    (5.0, (3, 4), True)
    """
    return pack(header, _encode_image(np.asarray(img, dtype=np.uint8), quality, img_fmt))


def _encode_image(img, quality, img_fmt):
    """The bytes of ``img`` (BGR or gray uint8) encoded as ``img_fmt`` by OpenCV, else Pillow."""
    fmt = img_fmt.upper()
    cv2 = opencv()
    if cv2 is not None:
        params = []
        if fmt in ('.JPG', '.JPEG'):
            params = [cv2.IMWRITE_JPEG_QUALITY, quality]
        elif fmt == '.PNG':
            params = [cv2.IMWRITE_PNG_COMPRESSION, min(max(quality, 0), 9)]   # as older OpenCVs clip
        try:
            ok, encoded = cv2.imencode(img_fmt, img, params)
        except cv2.error:           # no encoder for this extension
            ok = False
        if not ok:
            raise ValueError('pack_img: OpenCV could not encode the image of shape %s as %s'
                             % (img.shape, img_fmt))
        return encoded.tobytes()
    image_module = require('PIL.Image', 'vision', 'mx.recordio.pack_img')
    if fmt in ('.JPG', '.JPEG'):
        options = dict(format='JPEG', quality=quality)
    elif fmt == '.PNG':
        options = dict(format='PNG', compress_level=min(max(quality, 0), 9))
    else:
        image_module.init()         # loads every plugin, so that the table knows each extension
        options = dict(format=image_module.registered_extensions().get(img_fmt.lower()))
        if options['format'] is None or options['format'] not in image_module.SAVE:
            raise ValueError('pack_img: unsupported image format %s (Pillow has no writer for it)'
                             % img_fmt)
    pixels = _reverse_channels(img)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    buf = io.BytesIO()
    image_module.fromarray(pixels).save(buf, **options)
    return buf.getvalue()


def __getattr__(name):
    # MXNet's module holds ``cv2`` (None without OpenCV); imported on first use only.
    if name == 'cv2':
        return opencv()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
