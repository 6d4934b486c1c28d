"""``mx.test_utils``: comparing arrays, random test data, numeric gradient checks."""
import contextlib
import os

import numpy as np

from . import autograd
from .base import MXNetError
from .context import Context, current_context
from .ndarray.ndarray import NDArray, array

__all__ = ['default_context', 'set_default_context', 'assert_almost_equal', 'almost_equal', 'same',
           'rand_ndarray', 'rand_shape_2d', 'rand_shape_3d', 'rand_shape_nd', 'check_numeric_gradient',
           'numeric_grad', 'environment', 'assert_exception', 'get_mnist']

_DEFAULT_CTX = [None]


def default_context():
    """The context tests run on (``set_default_context`` changes it; cpu(0) by default)."""
    return _DEFAULT_CTX[0] or current_context()


def set_default_context(ctx):
    _DEFAULT_CTX[0] = Context(ctx)


def _as_numpy(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    return np.asarray(x)


_DEFAULT_TOL = {np.dtype(np.float16): (1e-2, 1e-2), np.dtype(np.float32): (1e-4, 1e-5),
                np.dtype(np.float64): (1e-7, 1e-9)}


def _tols(a, b, rtol, atol):
    dt = max((np.dtype(a.dtype), np.dtype(b.dtype)), key=lambda d: _DEFAULT_TOL.get(d, (0, 0))[0])
    r, t = _DEFAULT_TOL.get(dt, (1e-5, 1e-8))
    return (r if rtol is None else rtol), (t if atol is None else atol)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False):
    """Whether ``a`` and ``b`` (NDArrays or numpy) are equal within tolerances."""
    a, b = _as_numpy(a), _as_numpy(b)
    rtol, atol = _tols(a, b, rtol, atol)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False, **kwargs):
    """Raise AssertionError naming the worst element unless ``a`` and ``b`` are close."""
    a, b = _as_numpy(a), _as_numpy(b)
    rtol, atol = _tols(a, b, rtol, atol)
    if a.shape != b.shape:
        raise AssertionError('shapes differ: %s %s vs %s %s' % (names[0], a.shape, names[1], b.shape))
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    err = np.abs(a.astype(np.float64) - b.astype(np.float64)) - atol - rtol * np.abs(b.astype(np.float64))
    idx = np.unravel_index(np.nanargmax(err), err.shape) if err.size else ()
    raise AssertionError('%s and %s differ beyond rtol=%g atol=%g; worst at %s: %s=%r %s=%r'
                         % (names[0], names[1], rtol, atol, idx, names[0], a[idx], names[1], b[idx]))


def same(a, b):
    """Exact equality of values and shapes."""
    return np.array_equal(_as_numpy(a), _as_numpy(b))


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError('%s did not raise %s' % (getattr(f, '__name__', f), exception_type.__name__))


def rand_shape_2d(dim0=10, dim1=10):
    return np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    return np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1), np.random.randint(1, dim2 + 1)


def rand_shape_nd(num_dim, dim=10):
    return tuple(np.random.randint(1, dim + 1, size=num_dim))


def rand_ndarray(shape, stype='default', density=None, dtype=None, ctx=None, **kwargs):
    """A dense NDArray of uniform [0, 1) values (sparse storage types are stored densely)."""
    values = np.random.uniform(size=shape)
    if density is not None:
        values = values * (np.random.uniform(size=shape) < density)
    return array(values, ctx=ctx or default_context(), dtype=dtype or np.float32)


@contextlib.contextmanager
def environment(*args):
    """Temporarily set environment variables: ``environment('NAME', 'value')`` or a dict."""
    env = args[0] if len(args) == 1 else {args[0]: args[1]}
    saved = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _as_function(fn):
    """A callable on NDArrays from a callable or a Symbol (run on its arguments, in order)."""
    if callable(fn) and not hasattr(fn, 'list_arguments'):
        return fn, None
    from .symbol.graph import invoke
    names = fn.list_arguments()

    def run(*arrays):
        outputs = invoke(fn, dict(zip(names, arrays)))
        return outputs[0] if len(outputs) == 1 else outputs
    return run, names


def numeric_grad(fn, location, eps=1e-4, head_grad=None):
    """Central finite differences of ``sum(fn(*location) * head_grad)`` w.r.t. each input.

    ``location`` is a list of float64 numpy arrays; returns a list of numpy gradients.
    """
    def objective(values):
        with autograd.pause():
            out = fn(*[array(v, dtype=v.dtype) for v in values])
        outs = out if isinstance(out, (list, tuple)) else [out]
        total = 0.0
        for i, o in enumerate(outs):
            w = 1.0 if head_grad is None else head_grad[i]
            total += float(np.sum(o.asnumpy().astype(np.float64) * w))
        return total

    grads = []
    for k, x in enumerate(location):
        g = np.zeros_like(x, dtype=np.float64)
        flat = x.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + eps
            plus = objective(location)
            flat[i] = orig - eps
            minus = objective(location)
            flat[i] = orig
            g.reshape(-1)[i] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=1e-4, rtol=1e-2, atol=None,
                           grad_nodes=None, use_forward_train=True, ctx=None, grad_stype_dict=None,
                           dtype=np.float64):
    """Compare autograd's gradients with central finite differences.

    Parameters
    ----------
    sym : callable or Symbol
        A function of NDArrays returning an NDArray (or list), or a Symbol whose arguments
        are given by ``location``.
    location : list of array-like or dict
        Input values; a dict maps Symbol argument names to values.
    grad_nodes : list of int or str, optional
        Which inputs to check (all by default).
    dtype : numpy dtype
        Precision of the check (float64 by default, so small ``numeric_eps`` is exact enough).
    """
    fn, names = _as_function(sym)
    if isinstance(location, dict):
        names = names or list(location)
        location = [location[n] for n in names]
    location = [np.array(_as_numpy(v), dtype=dtype) for v in location]
    if grad_nodes is None:
        check_idx = list(range(len(location)))
    else:
        check_idx = [names.index(g) if isinstance(g, str) else g for g in grad_nodes]
    rng = np.random.RandomState(0)
    arrays = [array(v, ctx=ctx, dtype=v.dtype) for v in location]
    for i in check_idx:
        arrays[i].attach_grad()
    with autograd.record(train_mode=use_forward_train):
        out = fn(*arrays)
    outs = out if isinstance(out, (list, tuple)) else [out]
    head = [rng.normal(size=o.shape) for o in outs]
    autograd.backward(outs, [array(h, ctx=o.context, dtype=o.dtype) for h, o in zip(head, outs)])
    numeric = numeric_grad(fn, location, eps=numeric_eps, head_grad=head)
    for i in check_idx:
        name = names[i] if names else 'input %d' % i
        assert_almost_equal(arrays[i].grad.asnumpy(), numeric[i], rtol=rtol,
                            atol=1e-4 if atol is None else atol,
                            names=('autograd gradient of %s' % name, 'numeric gradient'))


def get_mnist(path=None):
    """MNIST as numpy arrays: {'train_data', 'train_label', 'test_data', 'test_label'}.

    Images are float32 (N, 1, 28, 28) in [0, 1]. Reads the IDX files under ``path``
    (default: the copy carried in the repository, else ``$MXNET_HOME/datasets/mnist``).
    """
    from .gluon.data.vision.datasets import read_mnist_arrays
    return read_mnist_arrays(path)
