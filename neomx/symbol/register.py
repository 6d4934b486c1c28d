"""Generates ``mx.sym.<Op>`` functions from the operator registry (the specs ``mx.nd`` uses).

A generated function takes the operator's input Symbols first (positionally or by name),
then its attributes in declaration order, plus ``name=`` and ``attr=``; inputs not given
become variables named ``<node>_<input>`` (``fc1_weight``).
"""
from ..ndarray import register as nd_register
from ..ndarray.methods import METHODS
from .symbol import Symbol, create_op_node
from .attribute import AttrScope  # noqa: F401  (MXNet's register module has these)
from ..base import check_call, py_str  # noqa: F401
from ..name import NameManager  # noqa: F401
SymbolBase = Symbol     # MXNet's base class of Symbol

__all__ = ['make_function', 'populate', 'attach_methods']

# Namespaced operators take automatic names from their short name (``gemm20``).
_SHORT_NAME_PREFIXES = ('_contrib_', '_linalg_', '_image_', '_sparse_')


def _name_hint(func_name):
    for prefix in _SHORT_NAME_PREFIXES:
        if func_name.startswith(prefix):
            return func_name[len(prefix):].lower()
    return func_name.lower()


def make_function(spec, func_name):
    """Build the Symbol function for ``spec`` under the public name ``func_name``."""
    hint = _name_hint(func_name)
    inputs = spec.inputs
    n_in = len(inputs)
    attr_names = spec.attr_names

    def sym_function(*args, name=None, attr=None, **kwargs):
        if spec.variadic:
            given = _variadic_inputs(spec, args, kwargs)
        else:
            if len(args) > n_in + len(attr_names):
                raise TypeError('%s: takes %d inputs and %d attributes, got %d positional arguments'
                                % (spec.name, n_in, len(attr_names), len(args)))
            given = dict(zip(inputs, args[:n_in]))
            kwargs.update(zip(attr_names, args[n_in:]))
            by_keyword = [k for k in kwargs if k in inputs]
            for key in by_keyword:
                given[key] = kwargs.pop(key)
            if spec.optional_inputs is not None and not by_keyword and args:
                # Symbols given by position fill the inputs present for the attributes, as
                # MXNet composes them (no bias: the ranges after the weight are not the bias)
                given = [a for a in args[:n_in] if a is not None]
        return create_op_node(spec, given, kwargs, name=name, attr=attr, hint=hint)

    sym_function.__name__ = sym_function.__qualname__ = func_name
    sym_function.__doc__ = _docstring(spec, func_name)
    sym_function.spec = spec
    return sym_function


def _variadic_inputs(spec, args, kwargs):
    """The input Symbols of a variadic operator: a list of the positional ones, or a dict
    of those given by keyword (popped from ``kwargs``), not both, as in MXNet. Sets the
    attribute counting them, where the operator has one."""
    given = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    named = {k: kwargs.pop(k) for k in [k for k, v in kwargs.items() if isinstance(v, Symbol)]}
    if given and named:
        raise TypeError('%s: give the input Symbols either positionally or by keyword, not both' % spec.name)
    if isinstance(spec.variadic, str):
        kwargs.setdefault(spec.variadic, len(given) or len(named))
    return named or list(given)


def _docstring(spec, func_name):
    return ('%s\n\nThe Symbol form of ``mx.nd.%s``: inputs are Symbols (variables are created for '
            'those not given); ``name`` names the node and ``attr`` adds string attributes.'
            % ((spec.doc or spec.name).strip(), func_name))


def populate(modules):
    """Put a Symbol function for every registered operator into ``modules`` (as ``mx.nd``
    lays its namespaces out)."""
    nd_register.populate(modules, make=make_function)


def _forwarder(op_module, fn_name):
    def method(self, *args, **kwargs):
        return getattr(op_module, fn_name)(self, *args, **kwargs)
    method.__name__ = fn_name
    method.__doc__ = 'Same as ``mx.sym.%s(self, ...)``.' % fn_name
    return method


def attach_methods(op_module):
    """Give Symbol the operator methods NDArray has (``x.sum(axis=0)``, ``x.reshape(...)``)."""
    for meth in list(METHODS) + ['reshape', 'broadcast_to']:
        if hasattr(op_module, meth) and not hasattr(Symbol, meth):
            setattr(Symbol, meth, _forwarder(op_module, meth))



def __getattr__(name):
    # MXNet's register module re-exports the contrib AdamW updates, generated after it loads
    if name in ('adamw_update', 'mp_adamw_update'):
        from . import contrib   # pylint: disable=import-outside-toplevel
        return getattr(contrib, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
