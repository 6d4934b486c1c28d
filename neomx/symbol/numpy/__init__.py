"""``mx.sym.np``: the Symbol form of MXNet's NumPy interface (MXNet 1.9.1's ``mxnet.symbol.numpy``).

:class:`_Symbol` is a :class:`~neomx.symbol.Symbol` with NumPy semantics: its arithmetic
records MXNet's ``_npi_*`` operators (``_npi_add``, ``_npi_add_scalar``...) instead of the
legacy ones, and graphs it heads hand ``mx.np`` arrays to Gluon. ``as_nd_ndarray()`` /
``as_np_ndarray()`` switch between the two kinds over the same graph, as in MXNet.

The functions of this module are ``mx.np``'s own: they run registry operators through one
place, which builds a graph node where an argument is a Symbol (:func:`symbol_call`), so
``F.np.sum(x)`` inside ``hybrid_forward`` and ``mx.np.sum(x)`` inside a traced ``forward``
record the very operator ``mx.np.sum`` runs eagerly. Creation functions, which take no
array, have Symbol forms of their own here (``zeros``, ``ones``, ``full``, ``arange``...).
They are put here by :mod:`neomx.numpy_extension` when it is imported (``import neomx``
does), since this package sits below ``neomx.numpy``.
"""
import builtins
import functools
import numbers
import threading

import numpy as _onp

from ...base import MXNetError
from ...operator import registry
from ..symbol import Symbol, create_op_node, register_np_symbol

__all__ = ['_Symbol', 'NumpySymbol', 'NP_FUNCTIONS', 'symbol_call', 'is_symbol', 'np_symbol', 'records_creation', 'recording_creation', 'recording', 'tracing_inputs']

_SCALARS = (numbers.Number, _onp.generic)


class _Symbol(Symbol):
    """A Symbol with NumPy semantics (``mx.sym.np._Symbol``).

    Example
    -------
    >>> x = mx.sym.var('x').as_np_ndarray()
    >>> y = (x + 1) * x
    >>> import json
    >>> type(y).__name__, [n['op'] for n in json.loads(y.tojson())['nodes']][1:]
    ('_Symbol', ['_npi_add_scalar', '_npi_multiply'])
    """
    __slots__ = ()

    def as_nd_ndarray(self):
        """The legacy Symbol of this graph."""
        return Symbol(self._heads)

    def as_np_ndarray(self):
        """This Symbol."""
        return self

    def __getitem__(self, index):
        if len(self._heads) > 1 or isinstance(index, str):     # outputs of a multi-output Symbol
            return np_symbol(super().__getitem__(index))
        return _basic_index(self, index)

    def __iter__(self):
        return (self[i] for i in range(len(self._heads)))

    # arithmetic: MXNet's _npi_* operators (the scalar forms for Python numbers)
    def __add__(self, other):
        return _binary(self, other, '_npi_add', '_npi_add_scalar', '_npi_add_scalar')

    def __radd__(self, other):
        return _binary(other, self, '_npi_add', '_npi_add_scalar', '_npi_add_scalar')

    def __sub__(self, other):
        return _binary(self, other, '_npi_subtract', '_npi_subtract_scalar', '_npi_rsubtract_scalar')

    def __rsub__(self, other):
        return _binary(other, self, '_npi_subtract', '_npi_subtract_scalar', '_npi_rsubtract_scalar')

    def __mul__(self, other):
        return _binary(self, other, '_npi_multiply', '_npi_multiply_scalar', '_npi_multiply_scalar')

    def __rmul__(self, other):
        return _binary(other, self, '_npi_multiply', '_npi_multiply_scalar', '_npi_multiply_scalar')

    def __truediv__(self, other):
        return _binary(self, other, '_npi_true_divide', '_npi_true_divide_scalar', '_npi_rtrue_divide_scalar')

    def __rtruediv__(self, other):
        return _binary(other, self, '_npi_true_divide', '_npi_true_divide_scalar', '_npi_rtrue_divide_scalar')

    def __mod__(self, other):
        return _binary(self, other, '_npi_mod', '_npi_mod_scalar', '_npi_rmod_scalar')

    def __rmod__(self, other):
        return _binary(other, self, '_npi_mod', '_npi_mod_scalar', '_npi_rmod_scalar')

    def __pow__(self, other):
        return _binary(self, other, '_npi_power', '_npi_power_scalar', '_npi_rpower_scalar')

    def __rpow__(self, other):
        return _binary(other, self, '_npi_power', '_npi_power_scalar', '_npi_rpower_scalar')

    def __neg__(self):
        return _node('_npi_negative', [self], {})

    def __abs__(self):
        return _node('_npi_absolute', [self], {})

    def __eq__(self, other):
        return _binary(self, other, '_npi_equal', '_npi_equal_scalar', '_npi_equal_scalar')

    def __ne__(self, other):
        return _binary(self, other, '_npi_not_equal', '_npi_not_equal_scalar', '_npi_not_equal_scalar')

    def __lt__(self, other):
        return _binary(self, other, '_npi_less', '_npi_less_scalar', '_npi_greater_scalar')

    def __le__(self, other):
        return _binary(self, other, '_npi_less_equal', '_npi_less_equal_scalar', '_npi_greater_equal_scalar')

    def __gt__(self, other):
        return _binary(self, other, '_npi_greater', '_npi_greater_scalar', '_npi_less_scalar')

    def __ge__(self, other):
        return _binary(self, other, '_npi_greater_equal', '_npi_greater_equal_scalar', '_npi_less_equal_scalar')

    __hash__ = Symbol.__hash__

    def astype(self, dtype, order='K', casting='unsafe', subok=True, copy=True):  # pylint: disable=unused-argument
        """Cast to ``dtype`` (``_npi_cast``, or the legacy ``Cast`` where it is missing)."""
        op = '_npi_cast' if _has('_npi_cast') else 'Cast'
        return _node(op, [self], {'dtype': _onp.dtype(dtype).name if dtype is not None else 'float32'})

    def reshape(self, *args, **kwargs):
        """NumPy's reshape (``-1`` infers one dim); ``reverse=True`` as ``npx.reshape``."""
        order = kwargs.pop('order', 'C')
        newshape = kwargs.pop('newshape', None)
        if newshape is None:
            newshape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
        if kwargs:
            raise TypeError('reshape() got unexpected keyword arguments %s' % ', '.join(kwargs))
        if isinstance(newshape, int):
            newshape = (newshape,)
        op = '_np_reshape' if _has('_np_reshape') else '_npx_reshape'
        return _node(op, [self], {'newshape': tuple(newshape), 'order': order})

    def flatten(self, order='C'):
        """The elements as one dimension (a reshape to ``(-1,)``)."""
        return self.reshape(-1, order=order)

    @property
    def T(self):  # pylint: disable=invalid-name
        """The transpose (all axes reversed)."""
        return _np_function('transpose')(self)

    @property
    def shape(self):
        """The shape this Symbol has in the trace of a ``forward`` (MXNet 2.0's deferred compute
        gives arrays with shapes there); the graph is then traced again for other input shapes.
        AttributeError outside a trace, or where the shape cannot be inferred."""
        return _traced_value(self, 0)

    @property
    def dtype(self):
        """The dtype this Symbol has in the trace of a ``forward`` (see :attr:`shape`)."""
        return _traced_value(self, 1)

    @property
    def ndim(self):
        """The number of dimensions in the trace of a ``forward`` (see :attr:`shape`)."""
        return len(_traced_value(self, 0))

    @property
    def size(self):
        """The number of elements in the trace of a ``forward`` (see :attr:`shape`)."""
        return int(_onp.prod(_traced_value(self, 0)))

    def __getattr__(self, name):
        # NumPy's array methods (sum, mean, max, transpose, flatten...) are mx.np's functions
        if name in ('shape', 'dtype', 'ndim', 'size'):     # their property failed: say why
            _traced_value(self, 1 if name == 'dtype' else 0)
        if name.startswith('__') or name in _NOT_METHODS:
            raise AttributeError(name)
        function = _NP_FUNCTIONS.get(name)
        if function is None:
            raise AttributeError("'_Symbol' object has no attribute '%s'" % name)
        return lambda *args, **kwargs: function(self, *args, **kwargs)


_NOT_METHODS = frozenset(('shape', 'size', 'ndim', 'dtype'))


def _np_method(function):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = function.__name__
    method.__doc__ = 'Same as ``mx.np.%s(self, ...)``.' % function.__name__
    return method


def use_np_methods(functions):
    """Give :class:`_Symbol` NumPy's array methods where the legacy Symbol has a method of
    the same name (``x.sum(axis=1)`` records ``mx.np.sum``, not the legacy ``sum``)."""
    for name, function in functions.items():
        if callable(getattr(Symbol, name, None)) and name not in vars(_Symbol) and not name.startswith('_'):
            setattr(_Symbol, name, _np_method(function))
_NP_FUNCTIONS = {}      # filled by neomx.numpy_extension: mx.np's functions, for the methods


def _np_function(name):
    try:
        return _NP_FUNCTIONS[name]
    except KeyError:
        raise MXNetError('mx.np.%s is not available for Symbols' % name) from None


def _has(op):
    try:
        registry.get(op)
    except MXNetError:
        return False
    return True


def np_symbol(sym):
    """The :class:`_Symbol` over ``sym``'s graph (``sym`` itself when it is one)."""
    if type(sym) is _Symbol:
        return sym
    return _Symbol(sym._heads)


def is_symbol(value):
    """Whether ``value`` is a Symbol (of either kind)."""
    return isinstance(value, Symbol)


def _node(op, inputs, attrs, name=None):
    spec = registry.get(op)
    if spec.variadic:
        given = list(inputs)
        if isinstance(spec.variadic, str):
            attrs = dict(attrs)
            attrs.setdefault(spec.variadic, len(given))
    else:
        given = dict(zip(spec.input_names(spec.parse_attrs(
            {k: v for k, v in attrs.items() if k in spec.attrs})), inputs))
    return np_symbol(create_op_node(spec, given, attrs, name=name, hint=_hint(op)))


def _scalar_attrs(value):
    """MXNet's attributes of a ``_scalar`` operator: the number as a float, and whether it
    was an integer (``2`` -> ``scalar='2.0', is_int='True'``)."""
    value = value.item() if isinstance(value, _onp.generic) else value
    return {'scalar': float(value), 'is_int': not isinstance(value, float)}


def _hint(op):
    """The automatic node name's stem of ``op``: MXNet's ``_npi_``/``_np_``/``_npx_`` prefix
    dropped (``_npi_add_scalar`` nodes are ``add_scalar0``...)."""
    for prefix in ('_npi_', '_npx_', '_np_'):
        if op.startswith(prefix):
            return op[len(prefix):].lower()
    return op.lstrip('_').lower()


def _binary(lhs, rhs, op, scalar_op, rscalar_op):
    if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):
        return _node(op, [lhs, rhs], {})
    if isinstance(lhs, Symbol) and isinstance(rhs, _SCALARS):
        return _node(scalar_op, [lhs], _scalar_attrs(rhs))
    if isinstance(rhs, Symbol) and isinstance(lhs, _SCALARS):
        return _node(rscalar_op, [rhs], _scalar_attrs(lhs))
    raise TypeError('%s: unsupported operand types %s and %s' % (op, type(lhs).__name__, type(rhs).__name__))


def _basic_index(sym, index):
    """``sym[index]`` for basic indexes (ints, slices, None, Ellipsis): ``slice`` then
    reshape, as MXNet records them."""
    if not isinstance(index, tuple):
        index = (index,)
    if builtins.any(not (isinstance(k, (int, slice)) or k is None) for k in index):   # mx.np's any is set here
        raise TypeError('a Symbol takes basic indexes only (ints and slices), got %r' % (index,))
    begin, end, step, squeeze = [], [], [], []
    for axis, k in enumerate(i for i in index if i is not None):
        if isinstance(k, int):
            begin.append(k)
            end.append(k + 1 if k != -1 else None)
            step.append(1)
            squeeze.append(axis)
        else:
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
    out = _node('slice', [sym], {'begin': tuple(begin), 'end': tuple(end), 'step': tuple(step)})
    if squeeze:
        out = _node('squeeze', [out], {'axis': tuple(squeeze)})
    return out


def _is_default(default, value):
    """Whether an attribute ``value`` is its ``default``, which graphs leave out (a required
    attribute never is)."""
    if default is registry.REQUIRED:
        return False
    if value is None or default is None:
        return value is default
    return type(value) is type(default) and value == default


class _CreationRecording(threading.local):
    active = False
    inputs = None           # a traced forward's {variable name: (shape, dtype)}, see tracing_inputs
    shapes_read = False     # whether that forward read a shape or dtype


def _traced_value(symbol, which):
    """The shape (``which`` 0) or dtype (1) of ``symbol``'s first output, inferred from the
    shapes and dtypes of the inputs of the ``forward`` being traced."""
    known = _CREATION.inputs
    if known is None:
        raise AttributeError("'_Symbol' object has no attribute '%s' (a Symbol has values only in the trace of "
                             "a hybridized forward)" % ('shape', 'dtype')[which])
    given = {name: value[which] for name, value in known.items() if name in symbol.list_inputs()}
    try:
        if which == 0:
            value = symbol.infer_shape_partial(**given)[1][0]
        else:
            value = symbol.infer_type(**given)[1][0]
    except MXNetError as err:
        raise AttributeError('%s of this Symbol cannot be inferred in the trace: %s' % (('shape', 'dtype')[which], err)) \
            from None
    if value is None or (which == 0 and -1 in value):   # NumPy shape semantics: -1 is unknown
        raise AttributeError('the %s of this Symbol is unknown in the trace' % ('shape', 'dtype')[which])
    _CREATION.shapes_read = True
    return tuple(value) if which == 0 else _onp.dtype(value).type


class tracing_inputs:  # pylint: disable=invalid-name
    """``with`` scope of a traced ``forward`` whose input variables have ``known`` shapes and
    dtypes (``{name: (shape, dtype)}``): their Symbols' :attr:`_Symbol.shape` and ``dtype``
    are then inferred; :attr:`shapes_read` tells afterwards whether the forward read any
    (its graph then holds them, and serves only inputs of these shapes).

    Example
    -------
    >>> x = mx.sym.var('x').as_np_ndarray()
    >>> with mx.sym.np.tracing_inputs({'x': ((2, 3), 'float32')}) as scope:
    ...     shape = (x * 2).shape
    >>> shape, scope.shapes_read
    ((2, 3), True)
    """

    def __init__(self, known):
        self._known = known
        self.shapes_read = False

    def __enter__(self):
        self._previous = (_CREATION.inputs, _CREATION.shapes_read)
        _CREATION.inputs, _CREATION.shapes_read = self._known, False
        return self

    def __exit__(self, *exc):
        self.shapes_read = _CREATION.shapes_read
        _CREATION.inputs, _CREATION.shapes_read = self._previous


_CREATION = _CreationRecording()


def records_creation():
    """Whether operators called without any array record graph nodes (creation functions in
    ``F.np`` and in a traced ``forward``) rather than compute."""
    return _CREATION.active


class recording_creation:  # pylint: disable=invalid-name
    """``with`` scope in which :func:`records_creation` is true: ``mx.np``'s creation
    functions record graph nodes.

    Example
    -------
    >>> with mx.name.NameManager(), mx.sym.np.recording_creation():
    ...     eye = mx.np.identity(2)
    >>> type(eye).__name__, eye.list_outputs()
    ('_Symbol', ['identity0_output'])
    """

    def __enter__(self):
        self._previous, _CREATION.active = _CREATION.active, True
        return self

    def __exit__(self, *exc):
        _CREATION.active = self._previous


def recording(function):
    """``function`` (one of ``mx.np``'s) recording its creation operators (``mx.sym.np``'s form)."""
    @functools.wraps(function)
    def record(*args, **kwargs):
        with recording_creation():
            return function(*args, **kwargs)
    return record


def recording_op(symbol_function):
    """A generated ``mx.sym`` operator function returning :class:`_Symbol` nodes."""
    @functools.wraps(symbol_function)
    def record(*args, **kwargs):
        kwargs.pop('out', None)     # MXNet's _internal functions take out= (meaningless for graphs)
        return np_symbol(symbol_function(*args, **kwargs))
    return record


def symbol_call(op, arrays, attrs=(), out=None):
    """Record operator ``op`` on ``arrays`` (Symbols, scalars, None for absent inputs) with
    its attributes ``attrs`` in declaration order: what ``mx.np``'s functions do when an
    argument is a Symbol. A binary operator given a Python number records its ``_scalar``
    form, as MXNet's Symbol functions do."""
    if out is not None:
        raise MXNetError('%s: out= is not supported for Symbols' % op)
    spec = registry.get(op)
    pairs = attrs.items() if isinstance(attrs, dict) else zip(spec.attr_names, attrs)   # dict: variadic ops
    named = {k: v for k, v in pairs if k in spec.attrs and not _is_default(spec.attrs[k].default, v)}
    if 'ctx' in named and not isinstance(named['ctx'], str):
        del named['ctx']        # a graph runs on the context it is bound to
    present = [a for a in arrays if a is not None]
    scalars = [i for i, a in enumerate(present) if isinstance(a, _SCALARS)]
    if scalars and len(present) == 2 and len(scalars) == 1:
        symbol = present[1 - scalars[0]]
        scalar_op = op + '_scalar' if scalars[0] == 1 else '_npi_r' + op[len('_npi_'):] + '_scalar'
        if not _has(scalar_op):
            scalar_op = op + '_scalar'
        return _node(scalar_op, [symbol], _scalar_attrs(present[scalars[0]]))
    if scalars:
        raise TypeError('%s: Symbol inputs cannot be mixed with numbers here' % op)
    if spec.variadic:
        return _node(op, present, named)
    inputs = [a for a in arrays]
    attrs_parsed = spec.parse_attrs({k: v for k, v in named.items()})
    names = spec.input_names(attrs_parsed)
    given = {n: a for n, a in zip(spec.inputs, inputs) if a is not None and n in names}
    return np_symbol(create_op_node(spec, given, named, hint=_hint(op)))


from . import internal, linalg, random  # noqa: E402,F401
_internal = internal     # MXNet's name: mx.sym.np._internal

register_np_symbol(np_symbol)     # Symbol.as_np_ndarray
NumpySymbol = _Symbol      # the class by a public name, for the packages above
NP_FUNCTIONS = _NP_FUNCTIONS
