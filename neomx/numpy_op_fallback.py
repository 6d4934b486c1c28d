"""MXNet 1.9.1's ``mxnet.numpy_op_fallback``: NumPy functions run by official NumPy as custom
operators (``Custom`` nodes of ``op_type`` ``empty_like_fallback``, ``resize_fallback``,
``unravel_index_fallback`` and ``mvn_fallback``), so that graphs holding them run.

Each operator is a :class:`neomx.operator.CustomOp` with its :class:`~neomx.operator.CustomOpProp`,
registered under NumPy array semantics (its code gets ``mx.np`` arrays) and callable as
``mx.nd.np._internal.<name>`` / ``mx.sym.np._internal.<name>``, as in MXNet. None of them has
a gradient (their ``backward`` raises, as MXNet's).

Example
-------
>>> from neomx import np, npx
>>> resized = mx.nd.np._internal.resize_fallback(np.array([1.0, 2.0, 3.0]), new_shape=(2, 2))
>>> resized.tolist()
[[1.0, 2.0], [3.0, 1.0]]
"""
import functools

import numpy as onp

from ._parsing import literal_eval
from . import numpy as _mx_np
from . import operator
from .ndarray.numpy import internal as _nd_npi
from .symbol.numpy import internal as _sym_npi
from .util import np_array, use_np

__all__ = ['register', 'EmptyLike', 'EmptyLikeProp', 'Resize', 'ResizeProp', 'Unravel_index',
           'Unravel_indexProp', 'MultivariateNormal', 'MultivariateNormalProp', 'np_array', 'use_np']


def register(op_name, imperative=True, symbolic=True):
    """Class decorator: register a :class:`~neomx.operator.CustomOpProp` as custom operator
    ``op_name`` under NumPy array semantics, and put ``Custom(op_type=op_name)`` into
    ``mx.nd.np._internal`` (``imperative``) and ``mx.sym.np._internal`` (``symbolic``).

    Raises
    ------
    ValueError
        Where one of those modules has ``op_name`` already.
    """
    modules = [m for m, wanted in ((_nd_npi, imperative), (_sym_npi, symbolic)) if wanted]

    def decorate(prop_cls):
        for module in modules:      # checked first: a refused name registers nothing
            if hasattr(module, op_name):
                raise ValueError('Duplicate name {} found in module {}'.format(op_name, module.__name__))
        with np_array():
            prop_cls = operator.register(op_name)(prop_cls)
        for module in modules:
            setattr(module, op_name, functools.partial(module.Custom, op_type=op_name))
        return prop_cls
    return decorate


def _no_gradient(name):
    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):  # pylint: disable=unused-argument
        raise NotImplementedError('Operator %s does not support gradient computation' % name)
    return backward


def _literal(value):
    """A custom operator's attribute as given: a string of a Python literal (how graphs and
    ``Custom`` pass them) or the value itself."""
    return literal_eval(value) if isinstance(value, str) else value


@use_np
class EmptyLike(operator.CustomOp):
    """``numpy.empty_like`` of the input, computed by NumPy."""

    def __init__(self, dtype, order, subok, shape):
        super().__init__()
        self._dtype, self._order, self._subok, self._shape = dtype, order, subok, shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = onp.empty_like(in_data[0].asnumpy(), dtype=self._dtype, order=self._order, subok=self._subok)
        self.assign(out_data[0], req[0], _mx_np.array(out, ctx=in_data[0].ctx))

    backward = _no_gradient('empty_like')


@register('empty_like_fallback')
class EmptyLikeProp(operator.CustomOpProp):
    """Properties of ``empty_like_fallback``: one input, ``prototype``; the output of its
    shape, of ``dtype`` (the input's where None)."""

    def __init__(self, dtype, order, subok, shape):
        super().__init__(need_top_grad=True)
        self._dtype = None if dtype in (None, 'None') else dtype
        self._order = order
        self._subok = _literal(subok)
        self._shape = _literal(shape)

    def list_arguments(self):
        return ['prototype']

    def infer_shape(self, in_shape):
        return (in_shape[0],), (in_shape[0],), ()

    def infer_type(self, in_type):
        out = in_type[0] if self._dtype is None else onp.dtype(self._dtype).type
        return (in_type[0],), (out,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return EmptyLike(self._dtype, self._order, self._subok, self._shape)


@use_np
class Resize(operator.CustomOp):
    """``numpy.resize`` of the input (repeated to fill ``new_shape``), computed by NumPy."""

    def __init__(self, new_shape):
        super().__init__()
        self._new_shape = new_shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = onp.resize(in_data[0].asnumpy(), self._new_shape)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out.dtype, ctx=out_data[0].ctx))

    backward = _no_gradient('resize')


# mx.nd.np._internal.resize_fallback is the registry's operator (torch): only Custom's op_type here
@register('resize_fallback', imperative=False, symbolic=False)
class ResizeProp(operator.CustomOpProp):
    """Properties of ``resize_fallback``: input ``a``, output of shape ``new_shape``."""

    def __init__(self, new_shape):
        super().__init__(need_top_grad=True)
        self._new_shape = _literal(new_shape)

    def list_arguments(self):
        return ['a']

    def infer_shape(self, in_shape):
        out = (self._new_shape,) if onp.isscalar(self._new_shape) else tuple(self._new_shape)
        return (in_shape[0],), (out,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Resize(self._new_shape)


@use_np
class Unravel_index(operator.CustomOp):  # pylint: disable=invalid-name  (MXNet's name)
    """``numpy.unravel_index`` of integer ``indices`` into ``shape``, stacked: one row per axis."""

    def __init__(self, shape):
        super().__init__()
        self._shape = shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = onp.unravel_index(in_data[0].asnumpy(), self._shape)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out[0].dtype, ctx=out_data[0].ctx))

    backward = _no_gradient('Unravel_index')


@register('unravel_index_fallback')
class Unravel_indexProp(operator.CustomOpProp):  # pylint: disable=invalid-name  (MXNet's name)
    """Properties of ``unravel_index_fallback``: input ``indices``, output of shape
    ``(len(shape),) + indices.shape``."""

    def __init__(self, shape):
        super().__init__(need_top_grad=True)
        self._shape = _literal(shape)

    def list_arguments(self):
        return ['indices']

    def infer_shape(self, in_shape):
        rows = 1 if onp.isscalar(self._shape) else len(self._shape)
        return (in_shape[0],), ((rows,) + tuple(in_shape[0]),), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Unravel_index(self._shape)


@use_np
class MultivariateNormal(operator.CustomOp):
    """Draws of the multivariate normal ``N(mean, cov)``: ``mean + L @ z`` with ``L`` the
    Cholesky factor of ``cov`` and ``z`` standard normal draws, by ``mx.np`` functions."""

    def __init__(self, size=None):
        super().__init__()
        self._size = size

    def forward(self, is_train, req, in_data, out_data, aux):
        loc, cov = in_data[0], in_data[1]
        if cov.dtype == onp.float16:        # no float16 Cholesky: factor in float32
            scale = _mx_np.linalg.cholesky(cov.astype(onp.float32)).astype(onp.float16)
        else:
            scale = _mx_np.linalg.cholesky(cov)
        noise = _mx_np.random.normal(size=out_data[0].shape, dtype=loc.dtype, ctx=loc.ctx)
        self.assign(out_data[0], req[0], loc + _mx_np.einsum('...jk,...j->...k', scale, noise))

    backward = _no_gradient('random.multivariate_normal')


# mx.nd.np._internal.mvn_fallback is the registry's operator (torch): only Custom's op_type here
@register('mvn_fallback', imperative=False, symbolic=False)
class MultivariateNormalProp(operator.CustomOpProp):
    """Properties of ``mvn_fallback``: inputs ``mean`` (..., k) and ``cov`` (..., k, k); the
    output of their broadcast batch shape, after ``size`` where given."""

    def __init__(self, size=None):
        super().__init__(need_top_grad=True)
        self._size = _literal(size) if size is not None else None

    def list_arguments(self):
        return ['mean', 'cov']

    def infer_shape(self, in_shape):
        loc_shape, cov_shape = tuple(in_shape[0]), tuple(in_shape[1])
        if len(loc_shape) < 1:
            raise ValueError('mean must be at least 1 dimensional')
        if len(cov_shape) < 2:
            raise ValueError('cov must be at least 2 dimensional')
        if cov_shape[-1] != cov_shape[-2]:
            raise ValueError('the last two dimensions of cov must be equal, got cov of shape {}'.format(cov_shape))
        if cov_shape[-1] != loc_shape[-1]:
            raise ValueError('mean and cov must have the same length: mean of shape {}, cov of shape {}'
                             .format(loc_shape[-1:], cov_shape[-2:]))
        out_shape = onp.broadcast_shapes(loc_shape, cov_shape[:-1])
        if self._size is not None:
            out_shape = ((self._size,) if onp.isscalar(self._size) else tuple(self._size)) + out_shape
        return in_shape, (out_shape,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return MultivariateNormal(self._size)
