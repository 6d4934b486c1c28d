"""NumPy's dispatch protocols for ``mx.np.ndarray``: official NumPy functions and ufuncs
called on ``mx.np`` arrays run ``mx.np``'s implementation where one is registered (see
:mod:`neomx.numpy_dispatch_protocol`, which fills the tables as MXNet 1.9.1 does), else
NumPy's own on copies, with ``mx.np`` arrays as results (refused while autograd records).
"""
import numpy as onp

from .. import autograd
from ..context import current_context
from ._array import ndarray, array

__all__ = ['NUMPY_ARRAY_FUNCTION_DICT', 'NUMPY_ARRAY_UFUNC_DICT']

NUMPY_ARRAY_FUNCTION_DICT = {}     # official NumPy function -> mx.np function
NUMPY_ARRAY_UFUNC_DICT = {}        # ufunc name -> mx.np function
_ONP_OP_MODULES = (onp, onp.linalg, onp.random, onp.fft)


def _as_onp(x):
    """``x`` with every ``mx.np`` array (in lists, tuples and dicts too) as a NumPy array;
    and the context of the first one found."""
    if isinstance(x, ndarray):
        return x.asnumpy(), x.ctx
    if isinstance(x, (list, tuple)):
        ctx = None
        out = []
        for item in x:
            v, c = _as_onp(item)
            out.append(v)
            ctx = ctx or c
        return type(x)(out) if not hasattr(x, '_fields') else type(x)(*out), ctx
    return x, None


def _as_mx(x, ctx):
    """NumPy arrays in ``x`` (a result) as ``mx.np`` arrays on ``ctx``."""
    if isinstance(x, onp.ndarray):
        if x.dtype.kind in 'OUSVc':
            return x
        return array(x, dtype=x.dtype, ctx=ctx)
    if isinstance(x, (list, tuple)):
        items = [_as_mx(v, ctx) for v in x]
        return type(x)(*items) if hasattr(x, '_fields') else type(x)(items)
    return x


def _refuse_recording(name):
    if autograd.is_recording():
        raise ValueError('Falling back to NumPy operator %s with autograd active is not supported. Please '
                         'consider moving the operator to the outside of the autograd scope.' % name)


def _official_op(name):
    for mod in _ONP_OP_MODULES:
        op = getattr(mod, name, None)
        if op is not None:
            return op
    raise ValueError('Operator `%s` is not supported by `mxnet.numpy`.' % name)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``ndarray.__array_ufunc__``: ``onp.add(mx_a, mx_b)`` runs ``mx.np.add``."""
    if 'out' in kwargs:
        out = kwargs['out']
        if len(out) != 1:
            raise ValueError('The `out` parameter must have exactly one ndarray')
        kwargs['out'] = out[0]
    if method != '__call__':
        return NotImplemented
    name = ufunc.__name__
    mx_ufunc = NUMPY_ARRAY_UFUNC_DICT.get(name)
    if mx_ufunc is not None:
        return mx_ufunc(*inputs, **kwargs)
    _refuse_recording(name)
    ctx = next((x.ctx for x in inputs if isinstance(x, ndarray)), None) or current_context()
    out = kwargs.pop('out', None)
    res = _official_op(name)(*[x.asnumpy() if isinstance(x, ndarray) else x for x in inputs], **kwargs)
    res = _as_mx(res, ctx)
    if out is not None:
        out[...] = res
        return out
    return res


def array_function(self, func, types, args, kwargs):
    """``ndarray.__array_function__``: ``onp.sum(mx_a)`` runs ``mx.np.sum``."""
    mx_func = NUMPY_ARRAY_FUNCTION_DICT.get(func)
    if mx_func is None:
        _refuse_recording(getattr(func, '__name__', func))
        new_args, ctx = _as_onp(args)
        new_kwargs = {}
        for k, v in kwargs.items():
            new_kwargs[k], c = _as_onp(v)
            ctx = ctx or c
        if ctx is None:
            ctx = current_context()
        return _as_mx(func(*new_args, **new_kwargs), ctx)
    if not all(issubclass(t, ndarray) for t in types):
        return NotImplemented
    return mx_func(*args, **kwargs)


ndarray.__array_ufunc__ = array_ufunc
ndarray.__array_function__ = array_function
