"""``mx.sym`` / ``mx.symbol``: symbolic graphs over the operator registry, and their executors."""
import sys

from .. import operator as _operator  # noqa: F401  (registers every operator)
from .creation import zeros, ones, full, arange  # (also registers the array-creating operators)
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

from . import random  # noqa: E402,F401
from .executor import Executor  # noqa: E402,F401
