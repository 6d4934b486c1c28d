"""Pickle-free bytes for optimizer states (``Updater.get_states`` / ``set_states``).

MXNet pickles its updater states; neomx writes its own format and reads MXNet's files with
an unpickler that knows only MXNet's NDArray and ``bytearray`` (see :func:`loads`), so no
foreign code ever runs. neomx's format is::

    b'NEOMXOS1' | uint64 little-endian header length | header: UTF-8 JSON | arrays, as .npy records

The JSON header encodes a tree of Python values: ``None``, bools, numbers and strings as
themselves; containers as tagged objects (``{"t": [...]}`` tuple, ``{"l": [...]}`` list,
``{"d": [[key, value], ...]}`` dict, so int keys stay ints); ``{"a": i}`` the i-th array;
``{"o": "module:Class", "s": {...}}`` an optimizer or learning-rate scheduler, rebuilt from
its attributes. Only subclasses of ``Optimizer`` and ``LRScheduler`` can be rebuilt, so
loading a file never runs foreign code.

Reading checks every size against the bytes present before allocating, and checks that
the result is what ``Updater.get_states`` writes: ``{index: state}`` (index an int or a
str; state None, an NDArray, a number, or tuples and lists of them), or that dict and an
optimizer. Anything else raises ``MXNetError`` naming the file.
"""
import io
import json
import math
import struct

import numpy as np
import torch

from .. import _fileio
from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import NDArray, wrap_tensor
from ..lr_scheduler import LRScheduler
from .mxnet_states import _PickledNDArray, _PickledObject, unpickle_states
from .state_check import check_states as _check_states, optimizer_class

__all__ = ['dumps', 'loads', 'read_file']

MAGIC = b'NEOMXOS1'
_LENGTH = struct.Struct('<Q')


def _rebuildable_classes():
    """'module:qualname' -> class, for every Optimizer and LRScheduler subclass defined so far."""
    found = {}
    pending = [optimizer_class(), LRScheduler]
    while pending:
        cls = pending.pop()
        found['%s:%s' % (cls.__module__, cls.__qualname__)] = cls
        pending.extend(cls.__subclasses__())
    return found


class _Encoder:
    """Turns a value tree into JSON-ready data, collecting arrays on the side."""

    # attributes never written: Gluon Parameters are bound to the live network, as in MXNet
    _SKIPPED_ATTRS = ('param_dict',)

    def __init__(self):
        self.arrays = []

    def encode(self, value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, NDArray):
            self.arrays.append(value._t.detach())
            return {'a': len(self.arrays) - 1}
        if isinstance(value, tuple):
            return {'t': [self.encode(v) for v in value]}
        if isinstance(value, list):
            return {'l': [self.encode(v) for v in value]}
        if isinstance(value, dict):
            return {'d': [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if isinstance(value, (optimizer_class(), LRScheduler)):
            cls = type(value)
            attrs = {k: v for k, v in vars(value).items() if k not in self._SKIPPED_ATTRS}
            return {'o': '%s:%s' % (cls.__module__, cls.__qualname__), 's': self.encode(attrs)}
        raise MXNetError('cannot save optimizer state: values of type %s are not supported'
                         % type(value).__name__)


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays
        self.classes = None

    def decode(self, data):
        if not isinstance(data, dict):
            return data
        if 'a' in data:
            index = data['a']
            if not isinstance(index, int) or not 0 <= index < len(self.arrays):
                raise MXNetError('corrupt optimizer state: array %r of %d' % (index, len(self.arrays)))
            return self.arrays[index]
        if 't' in data:
            return tuple(self.decode(v) for v in data['t'])
        if 'l' in data:
            return [self.decode(v) for v in data['l']]
        if 'd' in data:
            return {_hashable(self.decode(k)): self.decode(v) for k, v in data['d']}
        if 'o' in data:
            return self._rebuild(data['o'], self.decode(data['s']))
        raise MXNetError('corrupt optimizer state: unknown entry %r' % (sorted(data),))

    def _rebuild(self, name, attrs):
        if self.classes is None:
            self.classes = _rebuildable_classes()
        cls = self.classes.get(name)
        if cls is None:
            raise MXNetError('cannot load optimizer state: unknown optimizer or scheduler class %s '
                             '(define or import it first)' % name)
        return _build(cls, attrs)


def _build(cls, attrs):
    """An optimizer or scheduler of class ``cls`` with saved attributes ``attrs``."""
    obj = object.__new__(cls)
    obj.__dict__.update(attrs)
    if not isinstance(obj, LRScheduler):
        obj.param_dict = {}            # as MXNet's unpickling does: parameters are not saved
    return obj


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def _write_array(out, tensor):
    if tensor.dtype is torch.bfloat16:            # numpy has no bfloat16: store the bit pattern
        tensor = tensor.view(torch.int16)
    np.lib.format.write_array(out, tensor.cpu().numpy(), allow_pickle=False)


def dumps(value):
    """Serialize a tree of states (and optionally an optimizer) to bytes."""
    encoder = _Encoder()
    tree = encoder.encode(value)
    header = json.dumps({'tree': tree, 'bf16': [i for i, t in enumerate(encoder.arrays)
                                                if t.dtype is torch.bfloat16]}).encode('utf-8')
    out = io.BytesIO()
    out.write(MAGIC)
    out.write(_LENGTH.pack(len(header)))
    out.write(header)
    for t in encoder.arrays:
        _write_array(out, t)
    return out.getvalue()


_ALLOWED_DTYPES = {np.dtype(n) for n in ('float16', 'float32', 'float64', 'uint8', 'int8',
                                          'int16', 'int32', 'int64', 'bool')}


_NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}


def _read_npy(stream, buf, source):
    """One ``.npy`` record of the stream, its size checked against the bytes left."""
    start = stream.tell()
    try:
        version = np.lib.format.read_magic(stream)
        read_header = _NPY_HEADER_READERS.get(version)
        if read_header is None:
            raise ValueError('unsupported .npy version %s' % (version,))
        shape, fortran, dtype = read_header(stream)
    except (ValueError, SyntaxError, TypeError, EOFError) as err:
        raise MXNetError('%s: corrupt array header at byte offset %d (%s)' % (source, start, err)) from None
    if dtype.newbyteorder('=') not in _ALLOWED_DTYPES:
        raise MXNetError('%s: array at byte offset %d has unsupported dtype %s' % (source, start, dtype))
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    at = stream.tell()
    if nbytes > len(buf) - at:
        raise MXNetError('%s: truncated or corrupt: array of shape %s at byte offset %d needs %d '
                         'bytes but %d remain' % (source, shape, start, nbytes, len(buf) - at))
    stream.seek(at + nbytes)
    values = np.frombuffer(buf, dtype=dtype, count=count, offset=at)
    values = values.reshape(shape[::-1]).T if fortran else values.reshape(shape)
    return np.array(values, dtype=dtype.newbyteorder('='), order='C')     # owned and writable


def _loads_neomx(buf, source):
    stream = io.BytesIO(buf)
    stream.seek(len(MAGIC))
    head = stream.read(_LENGTH.size)
    if len(head) != _LENGTH.size:
        raise MXNetError('%s: truncated optimizer state (no header length)' % source)
    (length,) = _LENGTH.unpack(head)
    if length > len(buf) - stream.tell():
        raise MXNetError('%s: truncated or corrupt optimizer state: header of %d bytes, %d remain'
                         % (source, length, len(buf) - stream.tell()))
    try:
        header = json.loads(stream.read(length).decode('utf-8'))
        bf16 = set(header['bf16'])
        tree = header['tree']
    except (ValueError, KeyError, TypeError, RecursionError) as err:
        raise MXNetError('%s: corrupt optimizer state header (%s: %s)'
                         % (source, type(err).__name__, err)) from None
    ctx = cpu(0)
    arrays = []
    while stream.tell() < len(buf):
        t = torch.from_numpy(_read_npy(stream, buf, source))
        if len(arrays) in bf16:
            if t.dtype is not torch.int16:
                raise MXNetError('%s: bfloat16 array %d is not stored as int16' % (source, len(arrays)))
            t = t.view(torch.bfloat16)
        arrays.append(wrap_tensor(t, ctx))
    try:
        return _Decoder(arrays).decode(tree)
    except MXNetError as err:
        raise MXNetError('%s: %s' % (source, err)) from None
    except (ValueError, KeyError, TypeError, RecursionError) as err:
        raise MXNetError('%s: corrupt optimizer state (%s: %s)' % (source, type(err).__name__, err)) from None


def loads(buf, source='optimizer state'):
    """Inverse of :func:`dumps`, also reading MXNet's pickled states (:func:`loads_mxnet`);
    arrays come back on ``cpu(0)``.

    Parameters
    ----------
    buf : bytes
    source : str
        What errors name (the file's path).

    Raises
    ------
    MXNetError
        For corrupt, truncated or foreign content, naming ``source``.
    """
    if not isinstance(buf, (bytes, bytearray)):
        raise MXNetError('%s: optimizer states are bytes, got %s' % (source, type(buf).__name__))
    if buf[:1] != b'\x80' and buf[:len(MAGIC)] != MAGIC:    # \x80: a pickle's PROTO opcode
        raise MXNetError('%s: not a neomx optimizer state (expected bytes starting with %r) '
                         'nor an MXNet one (a pickle)' % (source, MAGIC))
    try:
        if buf[:1] == b'\x80':
            return loads_mxnet(buf, source)
        return _check_states(_loads_neomx(bytes(buf), source), source)
    except RecursionError:
        raise MXNetError('%s: optimizer state nested too deeply (corrupt)' % source) from None


def read_file(fname):
    """The bytes of the state file ``fname``; MXNetError naming it when it cannot be read."""
    try:
        with _fileio.open_for_read(fname) as f:
            return f.read()
    except MXNetError as err:
        raise MXNetError('cannot read optimizer states: %s' % err) from None


# ------------------------------------------------------------- MXNet's states
def _classes_by_name():
    """``{class name: class}`` of neomx's optimizers and schedulers."""
    return {cls.__name__: cls for cls in _rebuildable_classes().values()}


class _Converter:
    """The unpickled tree with MXNet's arrays as NDArrays on ``ctx`` and its optimizers and
    schedulers as neomx's; an object the pickle shares is converted once and stays shared."""

    def __init__(self, ctx, classes):
        self.ctx = ctx
        self.classes = classes
        self.done = {}

    def convert(self, value):
        if isinstance(value, (str, bytes, int, float, type(None))):
            return value
        known = self.done.get(id(value))
        if known is not None:
            return known[1]
        if isinstance(value, _PickledNDArray):
            out = None if value.tensor is None else wrap_tensor(value.tensor, self.ctx)
        elif isinstance(value, _PickledObject):
            state = self.convert(getattr(value, 'state', {}))
            if not isinstance(state, dict):
                raise MXNetError('the state of a pickled %s is not a dict' % value.class_name)
            out = _build(self.classes[value.class_name], state)
        elif isinstance(value, (tuple, list)):
            out = type(value)(self.convert(v) for v in value)
        elif isinstance(value, dict):
            out = {_hashable(self.convert(k)): self.convert(v) for k, v in value.items()}
        else:
            out = value
        self.done[id(value)] = (value, out)      # keeps value alive: ids stay unique
        return out


def loads_mxnet(buf, source='MXNet optimizer state'):
    """The states MXNet's ``Updater.get_states()`` pickled (``.states`` files of
    ``Module.save_checkpoint`` and ``Trainer.save_states``): ``{index: state}`` with
    NDArrays on ``cpu(0)``, or ``({index: state}, optimizer)`` when MXNet saved the
    optimizer too, rebuilt as neomx's optimizer (and scheduler) of the same class name.

    Raises
    ------
    MXNetError
        For a pickle holding anything else (a class neomx lacks, foreign code), or corrupt
        data, naming ``source``.
    """
    classes = _classes_by_name()
    value = unpickle_states(bytes(buf), classes, source)
    try:
        value = _Converter(cpu(0), classes).convert(value)
    except MXNetError as err:
        raise MXNetError('%s: %s' % (source, err)) from None
    except (TypeError, RecursionError) as err:
        raise MXNetError('%s: not a valid MXNet optimizer state (%s: %s)'
                         % (source, type(err).__name__, err)) from None
    return _check_states(value, source)
