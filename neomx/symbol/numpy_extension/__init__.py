"""``mx.sym.npx``: the Symbol form of MXNet's NumPy extension (``mxnet.symbol.numpy_extension``).

Each function records the registry operator its ``mx.npx`` counterpart runs
(:data:`neomx.operator.npx.NPX_FUNCTIONS`: ``npx.convolution`` records ``Convolution``,
``npx.relu`` ``_npx_relu``...) and returns an ``mx.sym.np._Symbol``.
"""
import functools

from ...operator import registry
from ...operator.npx import NPX_FUNCTIONS, NPX_IMAGE_FUNCTIONS, registered
from .. import register as _register
from ..numpy import np_symbol
from . import image, random  # noqa: F401

__all__ = sorted(registered(NPX_FUNCTIONS))


def npx_symbol_function(func_name, op_name):
    """The ``mx.sym.npx`` function ``func_name`` recording operator ``op_name``."""
    legacy = _register.make_function(registry.get(op_name), func_name)

    @functools.wraps(legacy)
    def function(*args, **kwargs):
        out = legacy(*args, **kwargs)
        return np_symbol(out)
    return function


for _name, _op in registered(NPX_FUNCTIONS).items():
    globals()[_name] = npx_symbol_function(_name, _op)
for _name, _op in NPX_IMAGE_FUNCTIONS.items():
    setattr(image, _name, npx_symbol_function(_name, _op))
