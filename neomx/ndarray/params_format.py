"""MXNet's binary ``.params`` layout, read and written at the level of tensors (below NDArray:
``neomx.ndarray.utils`` wraps it as ``mx.nd.save``/``mx.nd.load``, ``NDArray.__getstate__`` uses
the single-array layout, and the optimizer reads arrays pickled inside MXNet's states).

The layout (little-endian), byte for byte what MXNet 1.9.1 writes::

    u64 0x112 (list magic) | u64 0 (reserved) | u64 number of arrays | arrays... |
    u64 number of names | per name: u64 byte length, UTF-8 bytes

and per dense array (version 2)::

    u32 0xF993FAC9 | i32 storage type (0 dense) | i32 ndim | i64 dims[ndim] |
    i32 device type | i32 device id | i32 type flag | raw data (C order)

A list is saved with no names; a dict with one name per array. Readers also accept
version 1 (no storage type), the legacy layout (u32 ndim and u32 dims, no magic),
version 3 (NumPy shape semantics: 0-d and zero-size arrays, which neomx writes that way
as MXNet does) and sparse arrays (torch sparse tensors: csr, and row_sparse as coalesced coo,
written as MXNet writes them: values, then index arrays). Nothing is ever pickled.

Every size a file declares is checked against the bytes that follow before anything is
allocated. Sparse arrays are checked as MXNet writes them (row indices increasing and
below the row count; CSR ``indptr`` from 0 to the number of values, non-decreasing; column
indices increasing within each row, below the column count) and load compressed: their
memory is that of their stored values, never of their dense shape.
"""
import math
import struct

import numpy as np
import torch

from ..base import MXNetError, TORCH_OF_TYPE_FLAG, TYPE_FLAG_OF_TORCH
from ..operator import storage
from ..util import is_np_shape

_LIST_MAGIC = 0x112
_V1_MAGIC = 0xF993FAC8
_V2_MAGIC = 0xF993FAC9
_V3_MAGIC = 0xF993FACA
_DENSE, _ROW_SPARSE, _CSR = 0, 1, 2
_AUX_COUNT = {_DENSE: 0, _ROW_SPARSE: 1, _CSR: 2}

_U32 = struct.Struct('<I')
_I32 = struct.Struct('<i')
_U64 = struct.Struct('<Q')
_LIST_HEADER = struct.Struct('<QQQ')
_ARRAY_HEADER = struct.Struct('<Iii')        # magic, storage type, ndim
_ARRAY_PLACEMENT = struct.Struct('<iii')     # device type, device id, type flag
_INDEX_DTYPES = (torch.int64, torch.int32, torch.int8, torch.uint8, torch.int16)
_STYPE_NAMES = {_ROW_SPARSE: 'row_sparse', _CSR: 'csr'}
_STYPE_IDS = {'row_sparse': _ROW_SPARSE, 'csr': _CSR}


# ------------------------------------------------------------------- writing
def _array_chunks(tensor, ctx):
    """The serialised bytes of one array (its tensor and Context), as a list of buffers.

    As MXNet, arrays saved under NumPy shape semantics carry the version-3 magic, the
    others version 2 (a zero-size array too: its 0s read back as a size there). A 0-d
    array, which only NumPy shape semantics have in MXNet, is always written as version 3.
    """
    tensor = tensor.detach()
    if tensor.layout is not torch.strided:
        return _sparse_chunks(tensor, ctx)
    shape = tuple(tensor.shape)
    magic = _V3_MAGIC if is_np_shape() or not shape else _V2_MAGIC
    header = (_ARRAY_HEADER.pack(magic, _DENSE, len(shape)) + struct.pack('<%dq' % len(shape), *shape)
              + _ARRAY_PLACEMENT.pack(ctx.device_typeid, ctx.device_id, TYPE_FLAG_OF_TORCH[tensor.dtype]))
    if tensor.numel() == 0:
        return [header, b'']
    raw = tensor.to('cpu').contiguous().reshape(-1).view(torch.uint8).numpy()
    return [header, raw]


def _shape_bytes(shape):
    return struct.pack('<i%dq' % len(shape), len(shape), *shape)


def _raw(tensor):
    return tensor.detach().to('cpu').contiguous().reshape(-1).view(torch.uint8).numpy() if tensor.numel() else b''


def _sparse_chunks(sp, ctx):
    """A sparse array as MXNet writes it: storage type, storage shape (of the values), shape,
    device, type flag, each index array's type and shape, then the values and index arrays."""
    stype = storage.stype_of(sp)
    values = sp.values()
    aux = list(storage.csr_parts(sp)[:2]) if stype == 'csr' else [storage.rsp_parts(sp)[0]]
    header = (_U32.pack(_V3_MAGIC if is_np_shape() else _V2_MAGIC) + _I32.pack(_STYPE_IDS[stype])
              + _shape_bytes(tuple(values.shape)) + _shape_bytes(tuple(sp.shape))
              + _ARRAY_PLACEMENT.pack(ctx.device_typeid, ctx.device_id, TYPE_FLAG_OF_TORCH[values.dtype]))
    for index in aux:
        header += _I32.pack(TYPE_FLAG_OF_TORCH[torch.int64]) + _shape_bytes((len(index),))
    return [header, _raw(values)] + [_raw(index.to(torch.int64)) for index in aux]


def _names_chunks(names):
    chunks = [_U64.pack(len(names))]
    for name in names:
        encoded = name.encode('utf-8')
        chunks += [_U64.pack(len(encoded)), encoded]
    return chunks


def serialise(names, arrays):
    """Generate the buffers of a whole ``.params`` file, one array (a (tensor, Context) pair)
    at a time."""
    yield _LIST_HEADER.pack(_LIST_MAGIC, 0, len(arrays))
    for tensor, ctx in arrays:
        yield from _array_chunks(tensor, ctx)
    yield from _names_chunks(names)


# ------------------------------------------------------------------- reading
class Reader:
    """Sequential little-endian reads from a buffer; errors name the source and byte offset."""

    def __init__(self, buf, source):
        self.buf = buf
        self.offset = 0
        self.source = source

    def fail(self, message, offset=None):
        raise MXNetError('%s: %s (at byte offset %d)'
                         % (self.source, message, self.offset if offset is None else offset))

    def take(self, size, what):
        start = self.offset
        if size < 0 or start + size > len(self.buf):
            self.fail('truncated or corrupt .params data: %s needs %d bytes but only %d remain'
                      % (what, size, len(self.buf) - start))
        self.offset = start + size
        return start

    def unpack(self, fmt, what):
        return fmt.unpack_from(self.buf, self.take(fmt.size, what))[0]

    def ints(self, count, code, what):
        fmt = struct.Struct('<%d%s' % (count, code))
        return fmt.unpack_from(self.buf, self.take(fmt.size, what))

    def tensor(self, dtype, shape, what):
        nbytes = math.prod(shape) * dtype.itemsize
        start = self.take(nbytes, what)
        if nbytes == 0:
            return torch.empty(shape, dtype=dtype)
        # A copy of the bytes: owned, aligned memory, independent of the buffer.
        raw = np.frombuffer(self.buf, dtype=np.uint8, count=nbytes, offset=start).copy()
        return torch.from_numpy(raw).view(dtype).reshape(shape)


def _read_shape(reader, what):
    """A shape: i32 ndim then i64 dims; None for an unknown shape."""
    ndim = reader.unpack(_I32, what + ' ndim')
    if ndim < 0:            # unknown shape (version 3): an empty ("none") array
        return None
    if ndim > 32:
        reader.fail('%s has an implausible ndim %d' % (what, ndim), reader.offset - 4)
    dims_at = reader.offset
    dims = reader.ints(ndim, 'q', what + ' dims')
    if min(dims, default=0) < 0:
        reader.fail('%s %s has a negative dimension' % (what, dims), dims_at)
    return dims


def _read_type(reader, what):
    start = reader.offset
    flag = reader.unpack(_I32, what + ' type flag')
    dtype = TORCH_OF_TYPE_FLAG.get(flag)
    if dtype is None:
        reader.fail('%s has unknown type flag %d' % (what, flag), start)
    return dtype


def _read_aux(reader, what):
    """A sparse array's index array description: (integer dtype, 1-d length)."""
    start = reader.offset
    dtype = _read_type(reader, what)
    shape = _read_shape(reader, what + ' shape')
    if dtype not in _INDEX_DTYPES or shape is None or len(shape) != 1:
        reader.fail('%s must be a 1-d integer array, got %s of shape %s'
                    % (what, dtype, None if shape is None else tuple(shape)), start)
    return dtype, shape[0]


def _read_indices(reader, dtype, length, what):
    """An index array, as int64, with the offset it was read at."""
    start = reader.offset
    return reader.tensor(dtype, (length,), what).long(), start


def _check_increasing(reader, what, indices, bound, start, within=None):
    """Indices in [0, bound), strictly increasing (within each span of ``within`` if given)."""
    if not len(indices):
        return
    if int(indices.min()) < 0 or int(indices.max()) >= bound:
        reader.fail('%s must lie in [0, %d), found %d to %d'
                    % (what, bound, int(indices.min()), int(indices.max())), start)
    steps = indices[1:] > indices[:-1]
    if within is not None:          # a new row may start lower
        steps |= within[1:] != within[:-1]
    if not bool(steps.all()):
        reader.fail('%s are not sorted increasing without repeats, as MXNet writes them' % what,
                    start)


def _read_sparse(reader, stype, shape, dtype, what):
    """Read a sparse array's aux types/shapes, values and indices; return its torch sparse tensor."""
    if not shape or (stype == _CSR and len(shape) != 2):
        reader.fail('%s: a %s array cannot have shape %s'
                    % (what, _STYPE_NAMES[stype], tuple(shape)))
    aux = [_read_aux(reader, '%s aux %d' % (what, i)) for i in range(_AUX_COUNT[stype])]
    if stype == _ROW_SPARSE:
        # The rows present are counted by the index array (the storage shape may be stale).
        (index_type, nnz), = aux
        values = reader.tensor(dtype, (nnz,) + tuple(shape[1:]), what + ' values')
        rows, start = _read_indices(reader, index_type, nnz, what + ' row indices')
        _check_increasing(reader, what + ' row indices', rows, shape[0], start)
        return storage.make_rsp(rows, values, shape)
    (indptr_type, indptr_len), (index_type, nnz) = aux
    if indptr_len != shape[0] + 1:
        reader.fail('%s: a csr array of %d rows needs %d indptr entries, not %d'
                    % (what, shape[0], shape[0] + 1, indptr_len))
    values = reader.tensor(dtype, (nnz,), what + ' values')
    indptr, start = _read_indices(reader, indptr_type, indptr_len, what + ' indptr')
    counts = indptr[1:] - indptr[:-1]
    if int(indptr[0]) != 0 or int(indptr[-1]) != nnz or bool((counts < 0).any()):
        reader.fail('%s indptr must rise from 0 to the %d values without decreasing'
                    % (what, nnz), start)
    indices, start = _read_indices(reader, index_type, nnz, what + ' column indices')
    rows = torch.repeat_interleave(torch.arange(shape[0]), counts)
    _check_increasing(reader, what + ' column indices', indices, shape[1], start, within=rows)
    return storage.make_csr(indptr, indices, values, shape)


def _check_shape_semantics(reader, magic, shape, what, offset):
    """As MXNet 1.9.1: arrays saved without NumPy shape semantics load only without them,
    and zero-size arrays saved with them only with them (a 0 means "unknown" to one, a
    size to the other). neomx also reads other version-3 arrays without them (its 0-d
    arrays are saved so)."""
    if magic == _V3_MAGIC and not is_np_shape() and shape and 0 in shape:
        reader.fail('%s (shape %s) was saved with NumPy shape semantics: load it within '
                    'mx.util.np_shape(True)' % (what, tuple(shape)), offset)
    if magic == _V2_MAGIC and is_np_shape():
        reader.fail('%s was saved without NumPy shape semantics: load it outside mx.util.np_shape(True)'
                    % what, offset)


def read_array(reader, index):
    """One NDArray in any of MXNet's layouts, as a tensor (None for an empty "none" array)."""
    what = 'array %d' % index
    start = reader.offset
    magic = reader.unpack(_U32, what + ' magic')
    stype = _DENSE
    if magic in (_V2_MAGIC, _V3_MAGIC):
        stype_at = reader.offset
        stype = reader.unpack(_I32, what + ' storage type')
        if stype not in _AUX_COUNT:
            reader.fail('%s has unknown storage type %d' % (what, stype), stype_at)
        if stype != _DENSE:     # not needed: the aux shapes give the stored sizes
            _read_shape(reader, what + ' storage shape')
        shape = _read_shape(reader, what + ' shape')
        _check_shape_semantics(reader, magic, shape, what, start)
    elif magic == _V1_MAGIC:
        shape = _read_shape(reader, what + ' shape')
    else:
        # Legacy layout: no magic; the word read is the ndim, followed by u32 dims.
        if magic > 32:
            reader.fail('%s does not start with an NDArray magic number (found 0x%08X)' % (what, magic), start)
        shape = reader.ints(magic, 'I', what + ' dims')
    if shape is None or (magic != _V3_MAGIC and not shape):
        return None          # an empty array, saved without device, type or data
    reader.ints(2, 'i', what + ' device')      # the device it was saved from; loaded on cpu(0)
    dtype = _read_type(reader, what)
    if stype != _DENSE:
        return _read_sparse(reader, stype, shape, dtype, what)
    return reader.tensor(dtype, shape, what + ' data')


def parse(buf, source):
    """The (names, tensors) of a whole ``.params`` buffer; names is empty for a list. An empty
    ("none") array reads as a float32 tensor of shape (0,)."""
    reader = Reader(buf, source)
    magic = reader.unpack(_U64, 'file header')
    if magic != _LIST_MAGIC:
        reader.fail('not an NDArray .params file: header 0x%X is not 0x%X' % (magic, _LIST_MAGIC), 0)
    reader.unpack(_U64, 'reserved header word')
    count = reader.unpack(_U64, 'array count')
    tensors = [read_array(reader, i) for i in range(count)]
    names_at = reader.offset
    num_names = reader.unpack(_U64, 'name count')
    if num_names not in (0, count):
        reader.fail('the file holds %d arrays but %d names' % (count, num_names), names_at)
    names = []
    for i in range(num_names):
        length = reader.unpack(_U64, 'length of name %d' % i)
        start = reader.take(length, 'name %d' % i)
        try:
            names.append(bytes(buf[start:start + length]).decode('utf-8'))
        except UnicodeDecodeError:
            reader.fail('name %d is not valid UTF-8' % i, start)
    return names, [torch.empty(0) if t is None else t for t in tensors]


def tensor_to_raw_bytes(tensor, ctx):
    """One array in MXNet's single-array layout (what ``NDArray.__getstate__`` holds)."""
    return b''.join(bytes(chunk) for chunk in _array_chunks(tensor, ctx))


def tensor_from_raw_bytes(buf):
    """The tensor of one array in MXNet's single-array layout (loaded on the CPU)."""
    tensor = read_array(Reader(buf, 'NDArray state'), 0)
    return torch.empty(0) if tensor is None else tensor
