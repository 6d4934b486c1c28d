"""The ``F`` namespaces a Gluon block receives under NumPy array semantics.

MXNet 1.9.1's layers branch on ``is_np_array()``: ``F.npx.fully_connected`` instead of
``F.FullyConnected``... Both are the same registry operator, so neomx's layers keep
calling the legacy names and, under ``npx.set_np()``, receive an ``F`` whose operator
functions are the registry's with ``mx.np`` arrays in and out (eagerly), or recording
``mx.sym.np._Symbol`` nodes (hybridized). ``F.np``/``F.npx`` are the NumPy namespaces.
Functions are generated on first use and cached.
"""
import functools
import types

from ..ndarray.register import make_function

__all__ = ['numpy_mode_namespace']


class _NumpyModeOps(types.ModuleType):
    """``module`` (``mx.nd`` or ``mx.sym``, or one of their sub-namespaces) with its
    operator functions taking and returning the NumPy interface's values.

    A name is generated on its first look-up by the namespace's own ``__getattr__`` (a
    module's, PEP 562, in its ``__dict__``), then found in its ``__dict__``: a layer looks
    its operators up at every call, and a ``__getattr__`` of the class would put every
    look-up, found or not, through Python's slower attribute hook."""

    def __init__(self, module, convert, extra):
        super().__init__(module.__name__)
        self._module, self._convert, self._extra = module, convert, extra
        self.__getattr__ = self._generate

    def _generate(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        if name in self._extra:
            value = self._extra[name]
        else:
            value = getattr(self._module, name)
            if getattr(value, 'spec', None) is not None:
                value = self._convert(value, name)
            elif isinstance(value, types.ModuleType):
                value = _NumpyModeOps(value, self._convert, {})
        setattr(self, name, value)      # generated once
        return value


def _eager(array_class):
    def convert(function, name):
        return make_function(function.spec, name, array_class=array_class)
    return convert


def _symbolic(np_symbol):
    def convert(function, name):  # pylint: disable=unused-argument
        @functools.wraps(function)
        def recording(*args, **kwargs):
            out = function(*args, **kwargs)
            return np_symbol(out) if out is not None else out
        return recording
    return convert


def numpy_mode_namespace(module, np_namespace, npx_namespace, array_class=None, np_symbol=None):
    """The NumPy-mode ``F`` for ``module``: eager (``array_class``, mx.np.ndarray) or
    symbolic (``np_symbol``, making ``_Symbol`` objects)."""
    convert = _eager(array_class) if array_class is not None else _symbolic(np_symbol)
    return _NumpyModeOps(module, convert, {'np': np_namespace, 'npx': npx_namespace})
