"""``mx.sym`` / ``mx.symbol``: symbolic graphs over the operator registry, and their executors."""
import builtins as _builtins  # the op names max/min/pow shadow the builtins here
import sys

from .. import operator as _operator  # noqa: F401  (registers every operator)
from .creation import zeros, ones, full, arange, eye, linspace
from . import _internal, contrib, image, linalg, op, random_internal, sparse
from . import register as _register
from .attribute import AttrScope
from .symbol import Symbol, var, Variable, Group, load, load_json  # noqa: F401

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
from .symbol import load_json as _load_json  # noqa: E402
_upper_layers.register('symbol_from_json', _load_json)     # _CachedOp runs a subgraph given as JSON

from . import random  # noqa: E402,F401
from .executor import Executor  # noqa: E402,F401
from . import cached_op  # noqa: E402,F401

from ..ndarray.functions import make_ufunc as _make_ufunc, split_v2_attrs as _split_v2_attrs  # noqa: E402
from .symbol import _apply  # noqa: E402


def _node(op_name, hint):
    """A maker of ``op_name`` nodes named like MXNet's (``_maximumscalar0``...)."""
    def make(*inputs, scalar=None):
        return _apply(op_name, list(inputs), {} if scalar is None else {'scalar': scalar}, hint)
    make.__name__ = op_name
    return make


def _sym_ufunc(name, array_op, scalar_op, rscalar_op, py_fn):
    # MXNet's mx.sym helpers use the same-shape operators for two Symbols (not broadcast_*).
    return _make_ufunc(name, Symbol, _node(array_op, array_op), _node(scalar_op, scalar_op.replace('_scalar', 'scalar')),
                       _node(rscalar_op, rscalar_op.replace('_scalar', 'scalar')), py_fn)


maximum = _sym_ufunc('maximum', '_maximum', '_maximum_scalar', '_maximum_scalar', _builtins.max)
minimum = _sym_ufunc('minimum', '_minimum', '_minimum_scalar', '_minimum_scalar', _builtins.min)
power = _sym_ufunc('power', '_power', '_power_scalar', '_rpower_scalar', _builtins.pow)
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
