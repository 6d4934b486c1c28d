"""MXNet's operator names on the profiler's timeline (see :mod:`neomx._op_profile`).

While ``mx.profiler`` records operators, the functions of ``mx.nd`` and its namespaces and
NDArray's arithmetic operators are replaced by wrappers that run each call inside the range
of its MXNet operator (``mx.nd.sqrt`` -> ``sqrt``, ``a + 1`` -> ``_plus_scalar``,
``a + b`` -> ``broadcast_add``, ``mx.nd.zeros`` -> ``_zeros``); when it stops, the
originals are back. With the profiler off nothing is wrapped, so operators cost nothing more.
"""
import functools
import sys

from .. import _op_profile
from ..operator import registry
from .ndarray import NDArray

# NDArray's arithmetic: (operator with an array, operator with a scalar), MXNet's names
_ARITHMETIC = {
    '__add__': ('broadcast_add', '_plus_scalar'), '__radd__': ('broadcast_add', '_plus_scalar'),
    '__iadd__': ('broadcast_add', '_plus_scalar'),
    '__sub__': ('broadcast_sub', '_minus_scalar'), '__rsub__': ('broadcast_sub', '_rminus_scalar'),
    '__isub__': ('broadcast_sub', '_minus_scalar'),
    '__mul__': ('broadcast_mul', '_mul_scalar'), '__rmul__': ('broadcast_mul', '_mul_scalar'),
    '__imul__': ('broadcast_mul', '_mul_scalar'),
    '__truediv__': ('broadcast_div', '_div_scalar'), '__rtruediv__': ('broadcast_div', '_rdiv_scalar'),
    '__itruediv__': ('broadcast_div', '_div_scalar'),
    '__mod__': ('broadcast_mod', '_mod_scalar'), '__rmod__': ('broadcast_mod', '_rmod_scalar'),
    '__imod__': ('broadcast_mod', '_mod_scalar'),
    '__pow__': ('broadcast_power', '_power_scalar'), '__rpow__': ('broadcast_power', '_rpower_scalar'),
    '__ipow__': ('broadcast_power', '_power_scalar'),
    '__eq__': ('broadcast_equal', '_equal_scalar'), '__ne__': ('broadcast_not_equal', '_not_equal_scalar'),
    '__gt__': ('broadcast_greater', '_greater_scalar'), '__ge__': ('broadcast_greater_equal', '_greater_equal_scalar'),
    '__lt__': ('broadcast_lesser', '_lesser_scalar'), '__le__': ('broadcast_lesser_equal', '_lesser_equal_scalar'),
}
# creation functions written by hand, and the operators MXNet runs for them
_CREATION = {'zeros': '_zeros', 'ones': '_ones', 'full': '_full', 'arange': '_arange'}

_ORIGINALS = {}     # (owner, attribute) -> the original, while wrapped


def _named(fn, name):
    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        return _op_profile.op_call(name, fn, args, kwargs)
    return profiled


def _arithmetic(method, array_name, scalar_name):
    @functools.wraps(method)
    def profiled(self, other):
        name = array_name if isinstance(other, NDArray) else scalar_name
        return _op_profile.op_call(name, method, (self, other), {})
    return profiled


def _targets():
    """(owner, attribute, wrapper) for everything to wrap."""
    package = sys.modules[__package__]
    modules = [package] + [getattr(package, m) for m in ('op', '_internal', 'contrib', 'linalg', 'image',
                                                         'random', 'random_internal', 'sparse')]
    op_of = {}
    for fname in registry.all_ops():
        for mod in (package.op, package._internal):
            fn = getattr(mod, fname, None)
            if fn is not None:
                op_of[id(fn)] = fname
    for mod in modules:
        for attr, fn in list(vars(mod).items()):
            if callable(fn) and id(fn) in op_of:
                yield mod, attr, _named(fn, op_of[id(fn)])
    for mod in (package, sys.modules[NDArray.__module__]):
        for attr, name in _CREATION.items():
            fn = getattr(mod, attr, None)
            if fn is not None:
                yield mod, attr, _named(fn, name)
    for attr, (array_name, scalar_name) in _ARITHMETIC.items():
        yield NDArray, attr, _arithmetic(getattr(NDArray, attr), array_name, scalar_name)


def set_profiled(on):
    """Wrap (``on``) or restore the operator functions; ``_op_profile.ENABLED`` follows."""
    if on and not _ORIGINALS:
        for owner, attr, wrapper in _targets():
            _ORIGINALS[(owner, attr)] = vars(owner)[attr]
            setattr(owner, attr, wrapper)
    elif not on:
        for (owner, attr), original in _ORIGINALS.items():
            setattr(owner, attr, original)
        _ORIGINALS.clear()
    _op_profile.ENABLED[0] = on
