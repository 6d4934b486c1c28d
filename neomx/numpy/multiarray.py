"""``mx.np``'s functions (MXNet 1.9.1's ``mxnet.numpy.multiarray``), made from the operator
registry.

The tables below name, for each function, the registry operator it runs; see
:mod:`._invoke` for how a call reaches the operator's implementation. Functions whose work
is a composition of operators (``atleast_2d``, ``split``...) are written out further down.
"""
import numpy as _np

from ..operator import np_elemwise as _elemwise
from ._array import ndarray, array, empty, zeros, ones, full, arange, wrap
from ._invoke import unary_function, binary_function, run

__all__ = ['ndarray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange']


def _export(fn, name=None):
    name = name or fn.__name__
    globals()[name] = fn
    __all__.append(name)
    return fn


# ----------------------------------------------------------- element-wise
for _name, (_op, _impl) in _elemwise.NP_UNARY.items():
    _export(unary_function(_name, _op))
_export(unary_function('abs', '_npi_absolute'), 'abs')
_export(unary_function('invert', '_npi_bitwise_not'), 'invert')
_export(unary_function('deg2rad', '_npi_radians'), 'deg2rad')
_export(unary_function('rad2deg', '_npi_degrees'), 'rad2deg')
_export(unary_function('fabs', '_npi_absolute'), 'fabs')

for _name, (_op, _impl, _bool) in _elemwise.NP_BINARY.items():
    if _name in _elemwise.MIRRORED:
        _rop = _elemwise.NP_BINARY[_elemwise.MIRRORED[_name]][0] + '_scalar'
    else:
        _rop = _op + '_scalar' if _name in _elemwise._COMMUTATIVE else '_npi_r' + _op[5:] + '_scalar'
    _export(binary_function(_name, _op, _op + '_scalar', _rop))
_export(binary_function('divide', '_npi_true_divide', '_npi_true_divide_scalar', '_npi_rtrue_divide_scalar'))
_export(binary_function('remainder', '_npi_mod', '_npi_mod_scalar', '_npi_rmod_scalar'))
