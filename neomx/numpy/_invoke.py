"""How ``mx.np`` functions run registry operators: argument handling, results, errors.

Every ``mx.np`` function that has an operator calls the operator's implementation (the one
:mod:`neomx.operator.registry` holds, which ``mx.nd``, ``mx.sym`` and graphs use) through
:func:`run` or one of the lean functions :func:`unary_function` and :func:`binary_function`
build: those test the common call (ndarrays, no ``out=``, nothing recording) inline and
call the implementation directly, as ``mx.nd``'s lean entries do.
"""
import inspect
import numbers

import numpy as _np
import torch

from .. import _autograd_state, _int_grad, autograd, upper_layers, util
from ..base import MXNetError, torch_dtype
from ..context import current_context
from ..ndarray import NDArray
from ..operator import registry
from ._array import ndarray, wrap, array, DEFAULT_DTYPE

__all__ = ['run', 'direct', 'tensor_of', 'results', 'unary_function', 'binary_function', 'op_impl', 'NumpyOperatorError',
           'into_out']

_Tensor = torch.Tensor
_run_untracked = autograd.run_untracked
_INT_LIVE = _int_grad.LIVE
_RECORDING = _autograd_state.STATE
_IMPL_ERRORS = (RuntimeError, ValueError, TypeError)


class NumpyOperatorError(MXNetError, ValueError):
    """Bad input to an ``mx.np`` operator (shapes that do not broadcast, a bad axis...): an
    MXNetError, as MXNet raises, that is also NumPy's ValueError."""


class NumpyIndexError(MXNetError, IndexError):
    """An index out of range in an ``mx.np`` operator: an MXNetError that is NumPy's IndexError."""


class NumpyLinAlgError(MXNetError, _np.linalg.LinAlgError):
    """A matrix an ``mx.np.linalg`` operator cannot work on: NumPy's LinAlgError, an MXNetError."""


def op_impl(op):
    """The implementation of registry operator ``op``."""
    return registry.get(op).impl


def operator_error(op, tensors, err):
    """The error for ``err`` raised by ``op``'s implementation on ``tensors``."""
    if isinstance(err, MXNetError):
        return err
    shapes = ', '.join(str(tuple(t.shape)) for t in tensors if isinstance(t, _Tensor))
    if isinstance(err, _np.linalg.LinAlgError):
        kind = NumpyLinAlgError
    elif isinstance(err, IndexError):
        kind = NumpyIndexError
    else:
        kind = TypeError if isinstance(err, TypeError) else NumpyOperatorError
    return kind('%s: %s (input shapes: %s)' % (op, str(err).split('\n')[0], shapes or 'none'))


def tensor_of(x, ctx=None, name='input'):
    """The tensor of an ``mx.np`` array argument (scalars, lists and numpy arrays become arrays:
    Python floats as float32, Python ints as int64... as NumPy with MXNet's float32 default)."""
    if type(x) is ndarray:
        return x._t
    if isinstance(x, NDArray):
        raise TypeError('%s: expected an mxnet.numpy.ndarray, got a legacy NDArray (type %s); use '
                        'as_np_ndarray() to convert it' % (name, type(x).__name__))
    if isinstance(x, _Tensor):
        return x
    if isinstance(x, _np.ndarray):
        return array(x, dtype=x.dtype, ctx=ctx)._t
    if isinstance(x, bool):
        return torch.tensor(x, device=(ctx or current_context()).torch_device)
    if isinstance(x, numbers.Number) or isinstance(x, (list, tuple)):
        host = _np.asarray(x)
        if host.dtype == _np.float64:
            host = host.astype(_np.float32)
        if host.dtype.kind in 'OUSV':
            raise TypeError('%s: cannot make an array of %r' % (name, x))
        return array(host, dtype=host.dtype, ctx=ctx)._t
    raise TypeError('%s: expected an mxnet.numpy.ndarray, got %s' % (name, type(x).__name__))


def into_out(res, out):
    """``res`` (an ndarray) written into the user's ``out`` (cast to its type); returns ``out``."""
    if out is None:
        return res
    if type(out) is not ndarray:
        raise TypeError('out must be an mxnet.numpy.ndarray, got %s' % type(out).__name__)
    if out._t.dtype is not res._t.dtype:
        raise TypeError('out: the output array has dtype %s, the result %s (they must match)'
                        % (out.dtype, res.dtype))
    out[...] = res
    return out


def results(res, ctx, out=None):
    """An implementation's result as ``mx.np`` values: a tensor as an ndarray (written into
    ``out`` where given), a tuple as a tuple, a list as a list."""
    if type(res) is _Tensor:
        return into_out(wrap(res, ctx), out)
    if isinstance(res, list):
        return [results(r, ctx) for r in res]
    if isinstance(res, tuple):
        return tuple(results(r, ctx) for r in res)
    return res


_CASTS = {}


def _casts(op):
    """Whether operator ``op`` has a ``dtype`` attribute (a cast to integers loses torch's graph)."""
    casts = _CASTS.get(op)
    if casts is None:
        spec = registry.get(op)
        casts = _CASTS[op] = 'dtype' in spec.attrs and not spec.ctx_attrs
    return casts


def _with_int_grads(op, impl, tensors, attrs):
    """``impl`` run by :func:`neomx._int_grad.run` (attributes by keyword, ``dtype`` as a torch
    dtype), or None where no integer gradient is involved."""
    kwargs = dict(attrs) if type(attrs) is dict else dict(zip(registry.get(op).attr_names, attrs))
    dtype = kwargs.get('dtype')
    if dtype is not None and not isinstance(dtype, torch.dtype):
        kwargs['dtype'] = torch_dtype(dtype, op)
    return _int_grad.run(impl, tensors, kwargs)


def _mark_constants(res):
    """Results without gradients of a recorded operation: backward from them gives zeros."""
    for r in (res,) if type(res) is _Tensor else res if isinstance(res, (list, tuple)) else ():
        if type(r) is _Tensor and not r.requires_grad and _int_grad.carrier_of(r) is None:
            autograd.mark_constant_result(r)


def direct(op, impl, tensors, ctx, attrs=None):
    """An ndarray of ``impl(*tensors)`` (or with keyword ``attrs``): the lean path of a call on
    arrays that need no autograd (the caller checked), as the generated entries take."""
    try:
        res = impl(*tensors) if attrs is None else impl(*tensors, **attrs)
    except _IMPL_ERRORS as err:
        raise operator_error(op, tensors, err) from None
    if type(res) is _Tensor:
        arr = _object_new(ndarray)
        arr._t = res
        arr._ctx = ctx
        arr._grad = None
        return arr
    return results(res, ctx)


def run(op, arrays, attrs=(), out=None, impl=None, ctx=None):
    """Run operator ``op`` on ``arrays`` (ndarrays, scalars or None for absent inputs) with
    its attributes ``attrs`` in declaration order (a dict for variadic operators); results as
    :func:`results` makes them."""
    impl = impl or _IMPLS.get(op) or _impl_of(op)
    tensors = []
    grad = False
    given = False
    for a in arrays:
        if a is None:
            tensors.append(None)
            continue
        if type(a) is ndarray:
            if ctx is None:
                ctx = a._ctx
            t = a._t
        elif hasattr(a, '_heads'):      # a Symbol: F.np in hybrid_forward, a traced forward
            return upper_layers.get('np_symbol_call')(op, arrays, attrs, out)
        else:
            t = tensor_of(a, ctx)
        given = True
        grad = grad or t.requires_grad
        tensors.append(t)
    if not given and upper_layers.get('np_records_creation')():
        return upper_layers.get('np_symbol_call')(op, arrays, attrs, out)   # F.np.eye(3), traced
    if ctx is None:
        ctx = current_context()
    if _RECORDING.recording and op and (_INT_LIVE[0] or _casts(op)):
        res = _with_int_grads(op, impl, tensors, attrs)     # integer gradients (see neomx._int_grad)
        if res is not None:
            _mark_constants(res)
            return results(res, ctx, out)
    try:
        if type(attrs) is dict:         # variadic operators take their attributes by keyword
            res = _run_untracked(impl, *tensors, **attrs) if grad else impl(*tensors, **attrs)
        else:
            res = _run_untracked(impl, *tensors, *attrs) if grad else impl(*tensors, *attrs)
    except _IMPL_ERRORS as err:
        raise operator_error(op, tensors, err) from None
    if grad and _RECORDING.recording:
        _mark_constants(res)
    if type(res) is _Tensor and out is None:     # the common result: one new array
        arr = _object_new(ndarray)
        arr._t = res
        arr._ctx = ctx
        arr._grad = None
        return arr
    return results(res, ctx, out)


_IMPLS = {}     # operator name -> implementation, for run()'s calls by name


def _impl_of(op):
    impl = _IMPLS[op] = op_impl(op)
    return impl


def _onp_scalar_fallback(name):
    """NumPy's own function ``name``, for calls on Python scalars only (MXNet gives NumPy's
    scalar result there: ``mx.np.sin(2.0)`` is a numpy float)."""
    fn = getattr(_np, name, None)
    return fn


def unary_function(name, op, doc=None):
    """``mx.np.<name>(x, out=None, **kwargs)`` running unary operator ``op``."""
    impl = op_impl(op)
    onp_fn = _onp_scalar_fallback(name)

    def function(x, out=None, **kwargs):
        if type(x) is ndarray and out is None and not kwargs:
            t = x._t
            if not (t.requires_grad or _INT_LIVE[0]):
                try:
                    res = impl(t)
                except _IMPL_ERRORS as err:
                    raise operator_error(op, (t,), err) from None
                arr = _object_new(ndarray)
                arr._t = res
                arr._ctx = x._ctx
                arr._grad = None
                return arr
        if kwargs:
            return checked(x, out=out, **kwargs)
        return general(x, out)

    def general(x, out):
        if isinstance(x, numbers.Number) and onp_fn is not None:
            return onp_fn(x)
        return run(op, (x,), (), out, impl)
    checked = _checked_unary(name, general)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc or registry.get(op).doc
    return function


_object_new = object.__new__
_SCALARS = (int, float, bool, _np.generic)


def _checked_unary(name, call):
    """``call(x, out)`` behind MXNet's checks of NumPy's ufunc keywords (``where``, ``casting``...)."""
    def checked(x, out=None):
        return call(x, out)
    checked.__name__ = name
    return util.wrap_np_unary_func(checked)


def _checked_binary(name, call):
    def checked(x1, x2, out=None):
        return call(x1, x2, out)
    checked.__name__ = name
    return util.wrap_np_binary_func(checked)


def binary_function(name, op, scalar_op, rscalar_op, doc=None, params=('x1', 'x2')):
    """``mx.np.<name>(x1, x2, out=None, **kwargs)`` running ``op`` on two arrays, ``scalar_op``
    on an array and a scalar, ``rscalar_op`` on a scalar and an array (``scalar_op`` again
    where the operator commutes)."""
    impl = op_impl(op)
    scalar_impl = op_impl(scalar_op)
    rscalar_impl = op_impl(rscalar_op)
    onp_fn = getattr(_np, name, None)

    def function(x1, x2, out=None, **kwargs):
        if kwargs:
            return checked(x1, x2, out=out, **kwargs)
        if type(x1) is ndarray:
            t1 = x1._t
            if type(x2) is ndarray:
                t2 = x2._t
                if out is None and not (t1.requires_grad or t2.requires_grad or _INT_LIVE[0]):
                    try:
                        res = impl(t1, t2)
                    except _IMPL_ERRORS as err:
                        raise operator_error(op, (t1, t2), err) from None
                    arr = _object_new(ndarray)
                    arr._t = res
                    arr._ctx = x1._ctx
                    arr._grad = None
                    return arr
            elif isinstance(x2, _SCALARS):
                if out is None and not (t1.requires_grad or _INT_LIVE[0]) and type(x2) in (int, float):
                    try:
                        res = scalar_impl(t1, x2, type(x2) is int)
                    except _IMPL_ERRORS as err:
                        raise operator_error(scalar_op, (t1,), err) from None
                    arr = _object_new(ndarray)
                    arr._t = res
                    arr._ctx = x1._ctx
                    arr._grad = None
                    return arr
                return run(scalar_op, (x1,), (_scalar(x2), type(x2) is not float), out, scalar_impl)
        elif isinstance(x1, _SCALARS):
            if type(x2) is ndarray:
                return run(rscalar_op, (x2,), (_scalar(x1), type(x1) is not float), out, rscalar_impl)
            if isinstance(x2, _SCALARS) and onp_fn is not None:
                return onp_fn(x1, x2)
        return run(op, (x1, x2), (), out, impl)
    checked = _checked_binary(name, function)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc or registry.get(op).doc
    if params != ('x1', 'x2'):
        function = _renamed(function, params)
    return function


def _scalar(x):
    return x.item() if isinstance(x, _np.generic) else x


def _renamed(function, params):
    """``function`` with its two array parameters named ``params`` (as MXNet's signature names
    them), taken by position or by those names; no generated source."""
    a, b = params
    missing = object()

    def renamed(*args, out=None, **kwargs):
        x1 = kwargs.pop(a, missing)
        x2 = kwargs.pop(b, missing)
        positional = list(args)
        if x1 is missing:
            if not positional:
                raise TypeError('%s() missing required argument %r' % (function.__name__, a))
            x1 = positional.pop(0)
        if x2 is missing:
            if not positional:
                raise TypeError('%s() missing required argument %r' % (function.__name__, b))
            x2 = positional.pop(0)
        if positional:
            if len(positional) > 1:
                raise TypeError('%s() takes at most 3 positional arguments' % function.__name__)
            out = positional[0]
        return function(x1, x2, out, **kwargs)

    renamed.__name__ = renamed.__qualname__ = function.__name__
    renamed.__doc__ = function.__doc__
    renamed.__signature__ = inspect.Signature([
        inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter(b, inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter('out', inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        inspect.Parameter('kwargs', inspect.Parameter.VAR_KEYWORD)])
    return renamed
