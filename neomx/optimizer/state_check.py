"""The form of optimizer states: what ``Updater.get_states`` writes and ``set_states`` takes.

``{index: state}`` (index an int or a str; state None, an NDArray, a number, or tuples and
lists of them), or that dict and an optimizer. A file that decodes to anything else (a
list, a string, a dict of dicts) is not optimizer states, whatever its format.
"""
from ..base import MXNetError
from ..ndarray.ndarray import NDArray

__all__ = ['check_states', 'register_optimizer_class', 'optimizer_class']

# ``Optimizer`` (neomx/optimizer/optimizer.py) reads and writes its Updater's states through this
# module and state_format.py, so they cannot import it; it registers itself here when defined.
_OPTIMIZER_CLASS = []


def register_optimizer_class(cls):
    """Make ``cls`` the base class of the optimizers that states may hold."""
    _OPTIMIZER_CLASS[:] = [cls]


def optimizer_class():
    """The registered ``Optimizer`` base class."""
    return _OPTIMIZER_CLASS[0]


def check_states(value, source):
    """``value`` if it has the form of ``Updater.get_states``' content, else MXNetError."""
    states = value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], optimizer_class()):
        states = value[0]
    if not isinstance(states, dict):
        raise MXNetError('%s: not optimizer states: holds a %s where {index: state} (or '
                         '({index: state}, optimizer)) was expected' % (source, type(states).__name__))
    seen = set()
    for key, state in states.items():
        if isinstance(key, bool) or not isinstance(key, (int, str)):
            raise MXNetError('%s: not optimizer states: index %r is not an int or str' % (source, key))
        _check_state(state, key, source, seen)
    return value


def _check_state(state, key, source, seen):
    if state is None or isinstance(state, (NDArray, bool, int, float)):
        return
    if isinstance(state, (tuple, list)):
        if id(state) in seen:           # shared sub-states are checked once
            return
        seen.add(id(state))
        for part in state:
            _check_state(part, key, source, seen)
        return
    raise MXNetError('%s: not optimizer states: the state of index %r holds a %s (states hold '
                     'NDArrays, numbers and None in tuples and lists)' % (source, key, type(state).__name__))
