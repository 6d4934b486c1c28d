"""``mx.AttrScope``: attributes given to every Symbol created inside a ``with`` block."""
import collections
import threading

from ..base import classproperty, with_metaclass, ClassPropertyMeta

__all__ = ['AttrScope']


class AttrScope(with_metaclass(ClassPropertyMeta, object)):
    """Attach string attributes to the symbols created in this scope.

    Scopes nest: an inner scope adds to (and overrides) the attributes of the outer one,
    and attributes given explicitly to a symbol override both.

    Parameters
    ----------
    **kwargs : str
        Attribute values, e.g. ``ctx_group='dev1'`` or ``__lr_mult__='0.1'``.

    Example
    -------
    >>> with mx.AttrScope(ctx_group='stage1'):
    ...     a = mx.sym.var('a')
    ...     with mx.AttrScope(__lr_mult__='0.1'):
    ...         b = mx.sym.var('b', attr={'ctx_group': 'stage2'})
    >>> a.attr('ctx_group'), b.attr('ctx_group'), b.attr('__lr_mult__')
    ('stage1', 'stage2', '0.1')
    """
    _current = threading.local()
    _subgraph_names = collections.defaultdict(int)   # control-flow subgraphs named so far, by name

    def __init__(self, **kwargs):
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError('Attributes need to be string')
        self._attr = kwargs
        self._old_scope = None

    def get(self, attr):
        """The scope's attributes merged with ``attr`` (a dict or None; ``attr`` wins)."""
        if not self._attr:
            return dict(attr) if attr else {}
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self):
        self._old_scope = AttrScope.current
        merged = dict(self._old_scope._attr)
        merged.update(self._attr)
        self._attr = merged
        AttrScope._current.value = self
        return self

    def __exit__(self, *exc):
        AttrScope._current.value = self._old_scope

    @classproperty
    def current(cls):
        """The innermost active scope of this thread (an empty one outside any ``with``);
        a class property, assignable, as in MXNet 1.x."""
        scope = getattr(AttrScope._current, 'value', None)
        if scope is None:
            scope = AttrScope._current.value = AttrScope()
        return scope

    @current.setter
    def current(cls, scope):
        AttrScope._current.value = scope
