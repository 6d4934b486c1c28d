"""``mx.registry``: factories of named subclasses (MXNet builds its initializer, metric
and other registries with these).

For a base class, ``get_register_func`` gives a ``register(klass, name=None)`` that records a
subclass under its lower-cased name, ``get_alias_func`` one that records extra names, and
``get_create_func`` a ``create`` that builds an instance from a name, a JSON string
(``'["name", {kwargs}]'`` or ``'{"nickname": "name", ...}'``), a dict, or returns an
instance unchanged.

>>> import neomx as mx
>>> class Shape: pass
>>> register = mx.registry.get_register_func(Shape, 'shape')
>>> create = mx.registry.get_create_func(Shape, 'shape')
>>> @register
... class Square(Shape):
...     def __init__(self, side=1):
...         self.side = side
>>> create('square', side=3).side
3
>>> create('["square", {"side": 2}]').side
2
"""
import json
import warnings

from .base import string_types

__all__ = ['get_registry', 'get_register_func', 'get_alias_func', 'get_create_func', 'string_types']

_REGISTRY = {}


def _entries(base_class):
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class):
    """A copy of the {name: class} registry of ``base_class``."""
    return _entries(base_class).copy()


def get_register_func(base_class, nickname):
    """A function ``register(klass, name=None)`` recording subclasses of ``base_class``
    (``nickname`` names the kind in messages)."""
    registry = _entries(base_class)

    def register(klass, name=None):
        assert issubclass(klass, base_class), 'Can only register subclass of %s' % base_class.__name__
        name = (klass.__name__ if name is None else name).lower()
        if name in registry:
            old = registry[name]
            warnings.warn('New %s %s.%s registered with name %s is overriding existing %s %s.%s' % (
                nickname, klass.__module__, klass.__name__, name, nickname, old.__module__, old.__name__),
                UserWarning, stacklevel=2)
        registry[name] = klass
        return klass

    register.__doc__ = 'Register %s to the %s factory' % (nickname, nickname)
    return register


def get_alias_func(base_class, nickname):
    """A decorator factory ``alias(*names)`` recording a class under each of ``names``."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A function ``create(name_or_instance, *args, **kwargs)`` building registered classes."""
    registry = _entries(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            assert not args and not kwargs, \
                '%s is already an instance. Additional arguments are invalid' % nickname
            return name
        if isinstance(name, dict):
            return create(**name)
        assert isinstance(name, string_types), '%s must be of string type' % nickname
        if name.startswith('['):
            assert not args and not kwargs
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith('{'):
            assert not args and not kwargs
            return create(**json.loads(name))
        name = name.lower()
        assert name in registry, '%s is not registered. Please register with %s.register first' % (
            name, nickname)
        return registry[name](*args, **kwargs)

    create.__doc__ = ('Create a %s instance from config: a registered name (with the constructor '
                      'arguments), a JSON string, a dict, or a %s instance returned as is.'
                      % (nickname, base_class.__name__))
    return create
