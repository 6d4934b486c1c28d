"""neomx's form of ``check_numeric_gradient``: a function of NDArrays checked through autograd."""
import numpy as np

from .. import autograd
from ..ndarray.ndarray import array
from .assertions import assert_almost_equal
from .tolerances import as_numpy as _as_numpy


def _as_function(fn):
    """``fn`` and no argument names: callables take their inputs by position."""
    return fn, None


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


def check_callable_gradient(sym, location, numeric_eps=None, rtol=None, atol=None, grad_nodes=None,
                            use_forward_train=True, ctx=None, dtype=np.float64):
    """Compare autograd's gradients with central finite differences.

    Parameters
    ----------
    sym : callable
        A function of NDArrays returning an NDArray (or list).
    location : list of array-like or dict
        Input values, in the order the function takes them.
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
    numeric = numeric_grad(fn, location, eps=1e-4 if numeric_eps is None else numeric_eps,
                           head_grad=head)
    for i in check_idx:
        name = names[i] if names else 'input %d' % i
        assert_almost_equal(arrays[i].grad.asnumpy(), numeric[i], rtol=1e-2 if rtol is None else rtol,
                            atol=1e-4 if atol is None else atol,
                            names=('autograd gradient of %s' % name, 'numeric gradient'))
