"""MXNet's pickled optimizer states, read without running foreign code or trusting sizes.

MXNet's ``Updater.get_states()`` pickles ``{index: state}`` (or ``(states, optimizer)``),
each NDArray pickled as ``{'handle': bytearray}`` holding the array as MXNet saves one. The
unpickler here resolves only MXNet's NDArray, ``bytearray`` and the optimizers and
schedulers neomx has. Before unpickling, every length the pickle declares is checked
against the bytes that follow; ``bytearray`` is only built from bytes the file holds; and
the bytes and arrays built are charged to a budget of a few times the file's size, so a
small file can never make the reader allocate much (a pickle may reuse one object many
times: each copy made from it counts).
"""
import io
import pickle
import pickletools

from ..base import MXNetError
from ..ndarray.params_format import Reader, read_array

__all__ = ['unpickle_states']


# What a state file may make the reader allocate: this many times its size, plus a little.
_BUDGET_FACTOR = 4
_BUDGET_SLACK = 1 << 20


class _PickledNDArray:
    """What MXNet's pickle of an NDArray rebuilds: ``NDArray(None)``, then its state
    ``{'handle': bytes}`` holding the array as MXNet saves one."""

    unpickler = None        # set on the subclass made for each load

    def __init__(self, handle=None):  # pylint: disable=unused-argument
        self.tensor = None

    def __setstate__(self, state):
        handle = state.get('handle') if isinstance(state, dict) else None
        if handle is None:
            return
        loader = self.unpickler
        if not isinstance(handle, (bytes, bytearray)):
            raise MXNetError('%s: a pickled NDArray holds %s instead of bytes'
                             % (loader.source, type(handle).__name__))
        loader.charge(len(handle), 'array bytes')
        reader = Reader(bytes(handle), '%s (pickled NDArray)' % loader.source)
        reader.budget = loader.budget - loader.spent       # bounds sparse arrays' dense size
        self.tensor = read_array(reader, 0)
        if self.tensor is not None:
            loader.charge(self.tensor.numel() * self.tensor.element_size(), 'an array')


class _PickledObject:
    """What MXNet's pickle of an optimizer or learning-rate scheduler rebuilds: its class
    name and attributes (neomx's class of that name is built from them later)."""
    class_name = None

    def __setstate__(self, state):
        self.state = state




# The modules of MXNet's pickled optimizers and schedulers.
_MXNET_OBJECT_MODULES = ('mxnet.optimizer.optimizer', 'mxnet.optimizer', 'mxnet.lr_scheduler')


class _StatesUnpickler(pickle.Unpickler):
    """Resolves only the globals of MXNet's updater states."""

    def __init__(self, buf, class_names, source):
        super().__init__(io.BytesIO(buf))
        self.class_names = class_names
        self.source = source
        self.budget = _BUDGET_FACTOR * len(buf) + _BUDGET_SLACK
        self.spent = 0
        self.ndarray = type('_PickledNDArray', (_PickledNDArray,), {'unpickler': self})

    def charge(self, nbytes, what):
        """Count ``nbytes`` about to be allocated; refuse past the budget."""
        self.spent += nbytes
        if self.spent > self.budget:
            raise MXNetError('%s: the file would make the reader allocate more than %d bytes '
                             '(%d times its size) for %s; it is corrupt or not an optimizer '
                             'state' % (self.source, self.budget, _BUDGET_FACTOR, what))

    def bytearray(self, *args):
        """``bytearray`` as pickles call it: from bytes (protocol 3 and up) or from a latin-1
        string (protocol 2); never ``bytearray(n)``, which allocates n bytes from nothing."""
        if not args:
            return bytearray()
        if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
            self.charge(len(args[0]), 'a bytearray')
            return bytearray(args[0])
        if len(args) == 2 and isinstance(args[0], str) and args[1] in ('latin-1', 'latin1'):
            self.charge(len(args[0]), 'a bytearray')
            return bytearray(args[0], 'latin-1')
        raise MXNetError('%s: refusing bytearray(%s); a state file holds the bytes of its '
                         'arrays' % (self.source, ', '.join(type(a).__name__ for a in args)))

    def find_class(self, module, name):
        if (module, name) == ('mxnet.ndarray.ndarray', 'NDArray'):
            return self.ndarray
        if (module, name) == ('builtins', 'bytearray'):
            return self.bytearray
        if module in _MXNET_OBJECT_MODULES and name in self.class_names:
            return type(name, (_PickledObject,), {'class_name': name})
        raise MXNetError('%s: refusing to load %s.%s; neomx reads MXNet arrays, optimizers and '
                         'learning-rate schedulers only' % (self.source, module, name))


def _check_lengths(buf, source):
    """Walk the opcodes: every counted argument must lie inside ``buf`` (pickletools reads
    them from the stream, so a false length fails here instead of allocating)."""
    try:
        for _ in pickletools.genops(io.BytesIO(buf)):
            pass
    except (ValueError, EOFError) as err:
        raise MXNetError('%s: not a valid MXNet optimizer state: corrupt or truncated (%s)'
                         % (source, err)) from None


def unpickle_states(buf, class_names, source):
    """The raw tree of an MXNet states pickle: ``_PickledNDArray`` (``.tensor``) and
    ``_PickledObject`` (``.class_name``, ``.state``) leaves among dicts, lists and tuples.

    Parameters
    ----------
    buf : bytes
    class_names : collection of str
        Names of the optimizer and scheduler classes that may appear.
    source : str
        The file (or buffer) named in errors.
    """
    _check_lengths(buf, source)
    try:
        return _StatesUnpickler(buf, class_names, source).load()
    except MXNetError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, TypeError, AttributeError,
            IndexError, RecursionError, MemoryError, OverflowError) as err:
        raise MXNetError('%s: not a valid MXNet optimizer state (%s: %s)'
                         % (source, type(err).__name__, err)) from None
