"""``mx.sym`` / ``mx.symbol``: symbolic graphs over the operator registry, and their executors."""
import builtins as _builtins  # the op names max/min/pow shadow the builtins here
import sys

from .. import operator as _operator  # noqa: F401  (registers every operator)
from .creation import zeros, ones, full, arange, eye, linspace
from . import _internal, contrib, image, linalg, op, random_internal, sparse
from . import register as _register
from .attribute import AttrScope
from .symbol import Symbol, var, Variable, Group, load, load_json  # noqa: F401
from .. import autograd as _autograd
_autograd.Symbol = Symbol      # as MXNet's mx.autograd has it (get_symbol's result type)

_register.populate({'op': op, '_internal': _internal, 'contrib': contrib, 'linalg': linalg,
                    'image': image, 'random_internal': random_internal, 'sparse': sparse})
_self = sys.modules[__name__]
for _name in dir(op):
    if not _name.startswith('__'):
        setattr(_self, _name, getattr(op, _name))
_register.attach_methods(op)

from .graph import compiled as _compiled  # noqa: E402
from .. import upper_layers as _upper_layers  # noqa: E402
# control-flow operators run Symbol subgraphs; PythonOp builds Custom Symbols (lower layers)
_upper_layers.register('compiled_graph', _compiled)
_upper_layers.register('custom_symbol', op.Custom)
_upper_layers.register('symbol_from_json', load_json)
from .recorded import recorded_symbol as _recorded_symbol  # noqa: E402
_upper_layers.register('recorded_symbol', _recorded_symbol)     # autograd.get_symbol
from . import numpy  # noqa: E402  (mx.sym.np; its functions are put there by neomx.numpy_extension)
from . import numpy as np  # noqa: E402
from . import numpy_extension  # noqa: E402
from . import numpy_extension as npx  # noqa: E402
_upper_layers.register('np_symbol_call', numpy.symbol_call)
_upper_layers.register('np_records_creation', numpy.records_creation)

from . import random  # noqa: E402,F401
from .executor import Executor  # noqa: E402,F401
from . import cached_op  # noqa: E402,F401
from ..ndarray import op as _nd_op  # noqa: E402
_nd_op.CachedOp = cached_op.CachedOp    # MXNet's mx.nd.op.CachedOp, the class Gluon runs graphs with

from ..ndarray.functions import make_ufunc as _make_ufunc, split_v2_attrs as _split_v2_attrs  # noqa: E402
from .symbol import _apply  # noqa: E402


def _node(op_name, hint):
    """A maker of ``op_name`` nodes named like MXNet's (``_maximumscalar0``...)."""
    def make(*inputs, scalar=None):
        return _apply(op_name, list(inputs), {} if scalar is None else {'scalar': scalar}, hint)
    make.__name__ = op_name
    return make


def _sym_ufunc(name, array_op, scalar_op, rscalar_op, py_fn, params=('left', 'right')):
    # MXNet's mx.sym helpers use the same-shape operators for two Symbols (not broadcast_*).
    return _make_ufunc(name, Symbol, _node(array_op, array_op), _node(scalar_op, scalar_op.replace('_scalar', 'scalar')),
                       _node(rscalar_op, rscalar_op.replace('_scalar', 'scalar')), py_fn, params)


maximum = _sym_ufunc('maximum', '_maximum', '_maximum_scalar', '_maximum_scalar', _builtins.max)
minimum = _sym_ufunc('minimum', '_minimum', '_minimum_scalar', '_minimum_scalar', _builtins.min)
power = _sym_ufunc('power', '_power', '_power_scalar', '_rpower_scalar', _builtins.pow, ('base', 'exp'))
pow = power  # pylint: disable=redefined-builtin
hypot = _sym_ufunc('hypot', '_hypot', '_hypot_scalar', '_hypot_scalar', lambda a, b: (a * a + b * b) ** 0.5)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices (a
    tuple): the Symbol form of :func:`neomx.nd.split_v2`."""
    return _internal._split_v2(ary, axis=axis, squeeze_axis=squeeze_axis,
                               **_split_v2_attrs(indices_or_sections))


def histogram(a, bins=10, range=None, **kwargs):  # pylint: disable=redefined-builtin
    """Histogram of ``a`` (outputs: counts, bin edges): the Symbol form of
    :func:`neomx.nd.histogram`; ``bins`` is a Symbol of edges, or a number of bins over
    ``range``, which a Symbol needs."""
    if isinstance(bins, Symbol):
        return _internal._histogram(data=a, bins=bins, **kwargs)
    if isinstance(bins, int) and not isinstance(bins, bool):
        if range is None:
            raise ValueError('null range is not supported in symbol mode')
        return _internal._histogram(data=a, bin_cnt=bins, range=range, **kwargs)
    raise ValueError('bins argument should be either an integer or an NDArray')


# MXNet defines these helpers in mx.sym's symbol module, where code imports them from
from . import symbol as _symbol_module  # noqa: E402
for _name in ('zeros', 'ones', 'full', 'arange', 'eye', 'linspace', 'maximum', 'minimum', 'power', 'pow',
              'hypot', 'split_v2', 'histogram'):
    setattr(_symbol_module, _name, globals()[_name])
