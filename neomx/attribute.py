"""``mx.attribute``: :class:`AttrScope`, the attributes given to every Symbol created in a
``with`` block (one stack of scopes per thread, as in MXNet)."""
from .base import string_types, classproperty, with_metaclass
from .symbol.attribute import AttrScope

__all__ = ['AttrScope', 'classproperty', 'string_types', 'with_metaclass']
