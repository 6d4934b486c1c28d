"""``mx.error``: MXNet's structured error classes.

``register`` records an error class under its name (or a given name) so that an error
message ``"<Name>: detail"`` coming from the backend can be turned back into that class;
``InternalError`` adds MXNet's hint about reporting the issue.
"""
from .base import MXNetError

__all__ = ['MXNetError', 'register']

_ERROR_TYPES = {}


def register(func_name=None, cls=None):
    """Register an error class so a message prefixed with its name maps back to it.

    Used as ``@register``, ``@register("Name")`` or ``register("Name", cls)``.

    >>> import neomx as mx
    >>> @mx.error.register
    ... class MyError(ValueError):
    ...     pass
    >>> mx.error.error_class('MyError') is MyError
    True
    """
    if callable(func_name) and cls is None:          # @register on a class
        cls, func_name = func_name, func_name.__name__

    def do_register(klass):
        _ERROR_TYPES[func_name or klass.__name__] = klass
        return klass

    if cls is None:
        return do_register
    return do_register(cls)


def error_class(name):
    """The error class registered under ``name`` (MXNetError when none is)."""
    return _ERROR_TYPES.get(name, MXNetError)


@register
class InternalError(MXNetError):
    """An internal error of the system; the message gets MXNet's hint to report it.

    >>> import neomx as mx
    >>> 'MXNet hint' in str(mx.error.InternalError('detail'))
    True
    """

    def __init__(self, msg):
        if 'MXNet hint:' not in msg:
            msg += ('\nMXNet hint: You hit an internal error. Please open an issue in '
                    'https://github.com/apache/incubator-mxnet/issues/new/choose to report it.')
        super().__init__(msg)


for _builtin in (ValueError, TypeError, AttributeError, IndexError, NotImplementedError):
    register(_builtin.__name__, _builtin)
