"""Fill the namespaces below ``neomx.numpy`` with the NumPy interface's functions.

``mx.nd.np``/``mx.nd.npx`` (package ``neomx.ndarray``) and ``mx.sym.np``/``mx.sym.npx``
(package ``neomx.symbol``) sit below ``neomx.numpy``, which they may not import; this
module, above all of them, puts the functions there. ``mx.np``'s functions serve Symbols
too (they record a graph node where an argument is a Symbol), so ``mx.sym.np`` holds the
same function objects, except the creation functions, which take no array to tell them
apart and have Symbol forms of their own (:func:`_symbol_creation`).
"""
import functools
import inspect
import types

import numpy as _onp

from .. import _numpy_op_doc, numpy as _np
from ..ndarray import numpy as _nd_np, numpy_extension as _nd_npx
from ..ndarray.register import make_function
from ..operator import registry
from ..operator.npx import NPX_FUNCTIONS, NPX_IMAGE_FUNCTIONS, registered
from ..symbol import numpy as _sym_np, numpy_extension as _sym_npx
from ..symbol import register as sym_register
from ..symbol import Symbol
from ..symbol.numpy import np_symbol
from ..symbol.symbol import create_op_node

__all__ = ['fill', 'symbol_recorder']

# mx.np names that are not functions of mx.nd.np / mx.sym.np (the class, constants...)
_NOT_FUNCTIONS = frozenset(('ndarray',))
# creation function -> (MXNet's operator, the legacy operator standing in where it is missing)
_CREATION = {'zeros': ('_npi_zeros', '_zeros'), 'ones': ('_npi_ones', '_ones'),
             'full': ('_npi_full', '_full'), 'arange': ('_npi_arange', '_arange'),
             'empty': ('_npi_zeros', '_zeros'), 'eye': ('_npi_eye', '_eye')}


def _spec_or_none(op):
    try:
        return registry.get(op)
    except Exception:       # pylint: disable=broad-except  # MXNetError: not registered
        return None


def _symbol_creation(func_name, ops):
    """The ``mx.sym.np`` form of creation function ``func_name``: a node of the first of
    ``ops`` registered, with NumPy's float32 default dtype."""
    spec = next(s for s in map(_spec_or_none, ops) if s is not None)

    def create(*args, **kwargs):
        kwargs.pop('order', None)
        if func_name == 'full':
            fill_value = args[1] if len(args) > 1 else kwargs.get('fill_value')
            if isinstance(fill_value, Symbol):     # as MXNet: the value broadcast to the shape
                shape = args[0] if args else kwargs['shape']
                dtype = args[2] if len(args) > 2 else kwargs.get('dtype')
                out = _np.broadcast_to(fill_value, (shape,) if isinstance(shape, int) else tuple(shape))
                return out if dtype is None else out.astype(dtype)
        names = {'zeros': ('shape', 'dtype'), 'ones': ('shape', 'dtype'), 'empty': ('shape', 'dtype'),
                 'full': ('shape', 'fill_value', 'dtype'), 'eye': ('N', 'M', 'k', 'dtype'),
                 'arange': ('start', 'stop', 'step', 'dtype')}[func_name]
        kwargs.update(zip(names, args))
        if kwargs.get('dtype') is None:
            kwargs['dtype'] = 'float32'      # MXNet's NumPy default, arange's too
        if 'fill_value' in kwargs:
            kwargs['value'] = kwargs.pop('fill_value')
        if isinstance(kwargs.get('shape'), int):
            kwargs['shape'] = (kwargs['shape'],)
        kwargs['dtype'] = _onp.dtype(kwargs['dtype']).name
        kwargs.pop('ctx', None)
        attrs = {k: v for k, v in kwargs.items() if k in spec.attrs}
        return np_symbol(create_op_node(spec, {}, attrs, hint=func_name))
    create.__name__ = create.__qualname__ = func_name
    create.__doc__ = 'The Symbol form of ``mx.np.%s`` (operator ``%s``).' % (func_name, spec.name)
    return create


def _functions(module):
    return {name: getattr(module, name) for name in getattr(module, '__all__', dir(module))
            if not name.startswith('_') and callable(getattr(module, name, None))
            and not isinstance(getattr(module, name), type)}


def _copy_into(target, functions):
    for name, fn in functions.items():
        if not isinstance(getattr(target, name, None), types.ModuleType):
            setattr(target, name, fn)


def _operator_style(function):
    """``function`` as MXNet's generated ``mx.nd.np``/``mx.sym.np`` functions of built-in
    operators take their arguments: the array also as ``data``/``array``, and ``name``,
    ``attr`` and a None ``initial`` accepted."""
    @functools.wraps(function)
    def call(*args, name=None, attr=None, **kwargs):  # pylint: disable=unused-argument
        for alias in ('data', 'array'):
            if alias in kwargs:
                args = (kwargs.pop(alias),) + args
        if 'initial' in kwargs and kwargs['initial'] is None:
            del kwargs['initial']
        return function(*args, **kwargs)
    del call.__wrapped__    # its signature is its own (with **kwargs), as MXNet's generated ones
    call.__signature__ = inspect.signature(call)
    return call


def _frontend_functions(functions):
    """mx.np's functions as ``mx.nd.np``/``mx.sym.np`` hold them: those of built-in operators
    (those :mod:`neomx.numpy_op_signature` gives NumPy signatures) in the operator style."""
    return {name: _operator_style(fn) if hasattr(_numpy_op_doc, '_np_' + name) else fn
            for name, fn in functions.items()}


def _fill_internal():
    """``mx.nd.np._internal`` / ``mx.sym.np._internal``: every ``_npi_*`` operator under its name
    without the prefix (``F.np._internal.boolean_mask_assign_scalar``), as MXNet has them."""
    for op, spec in registry.all_ops().items():
        if not op.startswith('_npi_') and op != 'Custom':     # Custom: numpy_op_fallback's operators run it
            continue
        name = op[len('_npi_'):] if op != 'Custom' else op
        symbol_function = _sym_np.recording_op(sym_register.make_function(spec, op))
        setattr(_sym_np.internal, name, symbol_function)
        setattr(_nd_np.internal, name, make_function(
            spec, name, array_class=_np.ndarray, on_symbol=symbol_recorder(symbol_function, spec)))


def symbol_recorder(symbol_function, spec):
    """``on_symbol`` of a generated function: its call on Symbols recorded by ``symbol_function``."""
    if spec.variadic:
        return lambda arrays, kwargs, name: symbol_function(*arrays, name=name, **kwargs)

    def record(arrays, kwargs, name):
        given = {n: a for n, a in zip(spec.inputs, arrays) if a is not None}
        return symbol_function(name=name, **given, **kwargs)
    return record


def fill(npx_module):
    """Put ``mx.np``'s and ``mx.npx``'s functions into mx.nd.np/npx and mx.sym.np/npx."""
    np_functions = {k: v for k, v in _functions(_np).items() if k not in _NOT_FUNCTIONS}
    _sym_np.NP_FUNCTIONS.update(np_functions)
    _sym_np.use_np_methods(np_functions)
    np_functions = _frontend_functions(np_functions)
    _copy_into(_nd_np, np_functions)
    sym_functions = {name: _sym_np.recording(fn) for name, fn in np_functions.items()}
    for name, ops in _CREATION.items():
        if any(_spec_or_none(op) for op in ops):
            sym_functions[name] = _symbol_creation(name, ops)
    _copy_into(_sym_np, sym_functions)
    for sub in ('linalg', 'random'):
        functions = _frontend_functions(_functions(getattr(_np, sub)))
        _copy_into(getattr(_nd_np, sub), functions)
        _copy_into(getattr(_sym_np, sub), {name: _sym_np.recording(fn) for name, fn in functions.items()})
    _fill_internal()
    # mx.nd.npx's functions are generated apart: numpy_op_signature gives mx.npx's NumPy
    # signatures, while MXNet's mx.nd.npx keeps the operators' own
    _copy_into(_nd_npx, {name: make_function(registry.get(op), name, array_class=_np.ndarray)
                         for name, op in registered(NPX_FUNCTIONS).items()})
    _copy_into(_nd_npx.image, {name: getattr(npx_module.image, name) for name in NPX_IMAGE_FUNCTIONS})
    _copy_into(_nd_npx.random, _functions(npx_module.random))
    _copy_into(_sym_npx.random, _functions(npx_module.random))
