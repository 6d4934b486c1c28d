"""Automatic names for Symbols and Gluon blocks (``fullyconnected0``, ``dense1_``...)."""
import threading

__all__ = ['NameManager', 'Prefix']

# names MXNet's module also holds (imported from its base module)
from .base import classproperty, with_metaclass, ClassPropertyMeta  # noqa: E402,F401


class NameManager(with_metaclass(ClassPropertyMeta, object)):
    """Hands out names ``<hint><counter>`` with one counter per hint.

    Used as a context manager, a new manager starts its own counters, which is how tests
    get reproducible names (``with mx.name.NameManager(): ...``).

    Example
    -------
    >>> with mx.name.NameManager():
    ...     first = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2)
    ...     second = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2)
    ...     named = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, name='head')
    >>> first.name, second.name, named.name
    ('fullyconnected0', 'fullyconnected1', 'head')
    """
    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """Return ``name`` if given, else the next automatic name for ``hint``."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return '%s%d' % (hint, n)

    def __enter__(self):
        self._old_manager = NameManager.current
        NameManager._current.value = self
        return self

    def __exit__(self, *exc):
        NameManager._current.value = self._old_manager

    @classproperty
    def current(cls):
        """This thread's active manager (MXNet 1.x: a class property, assignable)."""
        mgr = getattr(NameManager._current, 'value', None)
        if mgr is None:
            mgr = NameManager._current.value = NameManager()
        return mgr

    @current.setter
    def current(cls, manager):
        NameManager._current.value = manager


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every name it returns.

    Example
    -------
    >>> with mx.name.Prefix('encoder_'):
    ...     fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2)
    ...     head = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, name='head')
    >>> fc.name, head.name
    ('encoder_fullyconnected0', 'encoder_head')
    """

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)
