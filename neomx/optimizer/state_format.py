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
"""
import io
import json
import pickle
import struct

import numpy as np
import torch

from ..base import MXNetError
from ..context import cpu
from ..ndarray.ndarray import NDArray, _new
from ..ndarray.utils import _read_array, _Reader
from ..lr_scheduler import LRScheduler

__all__ = ['dumps', 'loads']

MAGIC = b'NEOMXOS1'
_LENGTH = struct.Struct('<Q')


def _rebuildable_classes():
    """'module:qualname' -> class, for every Optimizer and LRScheduler subclass defined so far."""
    from .optimizer import Optimizer
    found = {}
    pending = [Optimizer, LRScheduler]
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
        from .optimizer import Optimizer
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
        if isinstance(value, (Optimizer, LRScheduler)):
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
            return self.arrays[data['a']]
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


def loads(buf):
    """Inverse of :func:`dumps`, also reading MXNet's pickled states (:func:`loads_mxnet`);
    arrays come back on ``cpu(0)``."""
    if isinstance(buf, (bytes, bytearray)) and buf[:1] == b'\x80':     # a pickle's PROTO opcode
        return loads_mxnet(buf)
    if not isinstance(buf, (bytes, bytearray)) or buf[:len(MAGIC)] != MAGIC:
        raise MXNetError('not a neomx optimizer state (expected bytes starting with %r)' % MAGIC)
    stream = io.BytesIO(buf)
    stream.seek(len(MAGIC))
    (length,) = _LENGTH.unpack(stream.read(_LENGTH.size))
    header = json.loads(stream.read(length).decode('utf-8'))
    bf16 = set(header['bf16'])
    ctx = cpu(0)
    arrays = []
    while stream.tell() < len(buf):
        t = torch.from_numpy(np.lib.format.read_array(stream, allow_pickle=False))
        if len(arrays) in bf16:
            t = t.view(torch.bfloat16)
        arrays.append(_new(t, ctx))
    return _Decoder(arrays).decode(header['tree'])


# ------------------------------------------------------------- MXNet's states
class _PickledNDArray:
    """What MXNet's pickle of an NDArray rebuilds: ``NDArray(None)``, then its state
    ``{'handle': bytes}`` holding the array as MXNet saves one."""

    def __init__(self, handle=None):  # pylint: disable=unused-argument
        self.tensor = None

    def __setstate__(self, state):
        self.tensor = _read_array(_Reader(bytes(state['handle']), 'MXNet optimizer state'), 0)


class _PickledObject:
    """What MXNet's pickle of an optimizer or learning-rate scheduler rebuilds: its class
    name and attributes, turned into neomx's class of that name by :func:`_as_neomx`."""
    class_name = None

    def __setstate__(self, state):
        self.state = state


# The modules of MXNet's pickled optimizers and schedulers.
_MXNET_OBJECT_MODULES = ('mxnet.optimizer.optimizer', 'mxnet.optimizer', 'mxnet.lr_scheduler')


class _MXNetStatesUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals of MXNet's updater states: its NDArray,
    ``bytearray``, and the optimizers and schedulers neomx has."""

    _ALLOWED = {('mxnet.ndarray.ndarray', 'NDArray'): _PickledNDArray, ('builtins', 'bytearray'): bytearray}

    def find_class(self, module, name):
        found = self._ALLOWED.get((module, name))
        if found is None and module in _MXNET_OBJECT_MODULES and name in _classes_by_name():
            found = type(name, (_PickledObject,), {'class_name': name})
        if found is None:
            raise MXNetError('MXNet optimizer state: refusing to load %s.%s; neomx reads MXNet '
                             'arrays, optimizers and learning-rate schedulers only' % (module, name))
        return found


def _classes_by_name():
    """``{class name: class}`` of neomx's optimizers and schedulers."""
    return {cls.__name__: cls for cls in _rebuildable_classes().values()}


def _as_neomx(value, ctx):
    """The unpickled tree with MXNet's arrays as NDArrays on ``ctx`` and its optimizers and
    schedulers as neomx's."""
    if isinstance(value, _PickledNDArray):
        return None if value.tensor is None else _new(value.tensor, ctx)
    if isinstance(value, _PickledObject):
        return _build(_classes_by_name()[value.class_name], _as_neomx(value.state, ctx))
    if isinstance(value, (tuple, list)):
        return type(value)(_as_neomx(v, ctx) for v in value)
    if isinstance(value, dict):
        return {k: _as_neomx(v, ctx) for k, v in value.items()}
    return value


def loads_mxnet(buf):
    """The states MXNet's ``Updater.get_states()`` pickled (``.states`` files of
    ``Module.save_checkpoint`` and ``Trainer.save_states``): ``{index: state}`` with
    NDArrays on ``cpu(0)``, or ``({index: state}, optimizer)`` when MXNet saved the
    optimizer too, rebuilt as neomx's optimizer (and scheduler) of the same class name.

    Raises
    ------
    MXNetError
        For a pickle holding anything else (a class neomx lacks, foreign code), or corrupt data.
    """
    try:
        value = _MXNetStatesUnpickler(io.BytesIO(buf)).load()
    except MXNetError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, TypeError) as err:
        raise MXNetError('not a valid MXNet optimizer state: %s' % err) from None
    return _as_neomx(value, cpu(0))
