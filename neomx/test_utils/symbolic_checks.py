"""Checking Symbols against expected values and finite differences, through executors."""
import numpy as np

from ..ndarray.ndarray import NDArray, array
from .. import symbol as sym_mod
from .assertions import assert_almost_equal
from .env import default_context
from .random_data import create_sparse_array
from .tolerances import default_dtype, default_numeric_eps

__all__ = ['numeric_grad', 'check_numeric_gradient', 'check_symbolic_forward',
           'check_symbolic_backward', 'check_consistency', 'simple_forward', 'check_speed']


def _as_nd(value, ctx, dtype):
    """An NDArray of ``value`` on ``ctx``: numpy data takes ``dtype`` ('asnumpy': its own)."""
    if isinstance(value, NDArray):
        return value
    value = np.asarray(value)
    return array(value, ctx=ctx, dtype=value.dtype if dtype == 'asnumpy' else dtype)


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """``location`` (list in argument order, or dict) as {argument name: NDArray}."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        unknown = set(location) - set(names)
        if unknown:
            raise ValueError('Symbol arguments and keys of the given location do not match. '
                             'symbol args:%s, location.keys():%s' % (str(set(names)),
                                                                    str(set(location.keys()))))
    else:
        if len(location) != len(names):
            raise ValueError('Symbol arguments and the given location differ in number: '
                             'symbol args:%s, %d values' % (names, len(location)))
        location = dict(zip(names, location))
    return {k: _as_nd(v, ctx, dtype) for k, v in location.items()}


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """``aux_states`` (list in order of the auxiliary states, or dict) as {name: NDArray}."""
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError('Symbol aux_states names and given aux_states do not match. '
                             'symbol aux_names:%s, aux_states.keys:%s'
                             % (str(set(names)), str(set(aux_states.keys()))))
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: _as_nd(v, ctx, dtype) for k, v in aux_states.items()}


def _grad_req_of(grad_nodes, names):
    """{name: grad_req} from grad_nodes given as None, a list of names or a dict."""
    if grad_nodes is None:
        return {k: 'write' for k in names}
    if isinstance(grad_nodes, (list, tuple)):
        return {k: 'write' for k in grad_nodes}
    if isinstance(grad_nodes, dict):
        return dict(grad_nodes)
    raise ValueError('grad_nodes must be None, a list of names or a dict, got %r' % (grad_nodes,))


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Central finite differences of the sum of the executor's first output.

    ``location`` maps argument names to numpy arrays (changed in place and restored);
    returns {name: numpy gradient}. Auxiliary states are reset before every evaluation.
    """
    grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for name, value in location.items():
        flat = value.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            sides = []
            for delta in (eps / 2.0, -eps / 2.0):
                flat[i] = orig + delta
                executor.arg_dict[name][:] = value
                if aux_states is not None:
                    for key, val in aux_states.items():
                        executor.aux_dict[key][:] = val
                executor.forward(is_train=use_forward_train)
                sides.append(executor.outputs[0].asnumpy())
            grads[name].reshape(-1)[i] = (sides[0] - sides[1]).sum() / eps
            flat[i] = orig
        executor.arg_dict[name][:] = value
    return grads


def _check_callable_gradient(fn, location, numeric_eps, rtol, atol, grad_nodes, use_forward_train,
                             ctx, dtype):
    from ._callable_gradient import check_callable_gradient
    return check_callable_gradient(fn, location, numeric_eps=numeric_eps, rtol=rtol, atol=atol,
                                   grad_nodes=grad_nodes, use_forward_train=use_forward_train,
                                   ctx=ctx, dtype=dtype)


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None, atol=None,
                           grad_nodes=None, use_forward_train=True, ctx=None, grad_stype_dict=None,
                           dtype=None):
    """Compare a Symbol's backward with finite differences of a random projection of its output.

    Parameters
    ----------
    sym : Symbol or callable
        A Symbol (MXNet's form: its output is summed after an elementwise product with a random
        array), or a function of NDArrays (neomx's form: checked through autograd, float64 by
        default).
    location : list or dict
        Argument values: a list in ``sym.list_arguments()`` order, or {name: value}.
    grad_nodes : list or dict, optional
        Names to check (all arguments by default); a dict gives each one's grad_req.
    dtype : numpy dtype
        float32 by default for Symbols (float16/32/64 allowed).
    """
    if not isinstance(sym, sym_mod.Symbol):
        return _check_callable_gradient(sym, location, numeric_eps, rtol, atol, grad_nodes,
                                        use_forward_train, ctx, dtype or np.float64)
    dtype = np.dtype(dtype or default_dtype())
    if dtype.type not in (np.float16, np.float32, np.float64):
        raise ValueError('check_numeric_gradient works on float16/32/64, got %s' % dtype)
    ctx = ctx or default_context()
    numeric_eps = default_numeric_eps()[dtype] if numeric_eps is None else numeric_eps
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    grad_req = _grad_req_of(grad_nodes, sym.list_arguments())
    checked = list(grad_req)

    out_shapes = sym.infer_shape(**{k: v.shape for k, v in location.items()})[1]
    proj = sym_mod.Variable('__random_proj')
    out = sym_mod.make_loss(sym * proj)
    location['__random_proj'] = array(np.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    initial = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in checked}
    initial['__random_proj'] = np.random.normal(0, 0.01, size=out_shapes[0])
    args_grad = {k: array(v, ctx=ctx, dtype=dtype) for k, v in initial.items()}
    full_req = dict(grad_req)
    full_req['__random_proj'] = 'write'
    for name in out.list_arguments():
        full_req.setdefault(name, 'null')
    executor = out.bind(ctx, args=location, args_grad=args_grad, grad_req=full_req,
                        aux_states=aux_states)
    executor.forward(is_train=True)
    executor.backward()
    # a 'null' gradient is left alone: what the buffer held before (MXNet allocates it too)
    symbolic = {k: (args_grad[k] if executor.grad_dict.get(k) is None else executor.grad_dict[k]).asnumpy()
                for k in checked}
    numeric = numeric_grad(executor, location_npy, aux_npy, eps=numeric_eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name in checked:
        names = ('NUMERICAL_%s' % name, 'BACKWARD_%s' % name)
        if grad_req[name] == 'write':
            assert_almost_equal(numeric[name], symbolic[name], rtol, atol, names)
        elif grad_req[name] == 'add':
            assert_almost_equal(numeric[name], symbolic[name] - initial[name], rtol, atol, names)
        elif grad_req[name] == 'null':
            assert_almost_equal(initial[name], symbolic[name], rtol, atol, names)
        else:
            raise ValueError('unknown grad_req %r for %s' % (grad_req[name], name))


def _expected_dict(expected, names, what):
    if isinstance(expected, dict):
        return expected
    if len(expected) != len(names):
        raise ValueError('%d expected %s for %d outputs %s' % (len(expected), what, len(names), names))
    return dict(zip(names, expected))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None, ctx=None,
                           equal_nan=False, dtype=default_dtype()):
    """Run ``sym`` forward (inference) on ``location`` and compare with ``expected``.

    ``expected`` is a list in output order or {output name: value}; returns the outputs.
    """
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    expected = _expected_dict(expected, sym.list_outputs(), 'outputs')
    args_grad = {k: v.copy() for k, v in location.items()}
    executor = sym.bind(ctx, args=location, args_grad=args_grad, aux_states=aux_states)
    executor.forward(is_train=False)
    outputs = executor.outputs
    for name, output in zip(sym.list_outputs(), outputs):
        if name in expected:
            assert_almost_equal(expected[name], output, rtol, atol,
                                ('EXPECTED_%s' % name, 'FORWARD_%s' % name), equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req='write', ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Run ``sym`` forward (training) and backward with ``out_grads``; compare the gradients.

    ``expected`` is a list in argument order or {argument name: gradient}; ``grad_req`` a
    string, list or dict ('add' adds to random initial gradients). Only the arguments of
    ``expected`` get gradient buffers, random (in their sorted order), or empty sparse ones of
    the storage types ``grad_stypes`` names, as MXNet's. Returns {name: gradient NDArray}.
    """
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    expected = _expected_dict(expected, names, 'gradients')
    initial = {k: np.random.normal(size=v.shape) for k, v in sorted(expected.items())}
    args_grad = {}
    for k, v in initial.items():
        stype = (grad_stypes or {}).get(k) or 'default'
        if stype != 'default':
            args_grad[k] = create_sparse_array(v.shape, stype, density=0.0)
        else:
            args_grad[k] = array(v, ctx=ctx, dtype=np.asarray(expected[k]).dtype if dtype == 'asnumpy' else dtype)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    executor = sym.bind(ctx, args=location, args_grad=args_grad, aux_states=aux_states,
                        grad_req=grad_req)
    executor.forward(is_train=True)
    if isinstance(out_grads, (tuple, list)):
        out_grads = [_as_nd(v, ctx, dtype) for v in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: _as_nd(v, ctx, dtype) for k, v in out_grads.items()}
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    elif out_grads is not None:
        out_grads = [_as_nd(out_grads, ctx, dtype)]
    executor.backward(out_grads)
    grads = {k: args_grad[k] if executor.grad_dict.get(k) is None else executor.grad_dict[k] for k in args_grad}
    for name in expected:
        req = grad_req.get(name, 'write')
        pair = ('EXPECTED_%s' % name, 'BACKWARD_%s' % name)
        got = grads[name].asnumpy()
        if req == 'write':
            assert_almost_equal(expected[name], got, rtol, atol, pair, equal_nan=equal_nan)
        elif req == 'add':
            initial_cast = initial[name].astype(got.dtype)
            assert_almost_equal(expected[name], got - initial_cast, rtol, atol, pair, equal_nan=equal_nan)
        elif req == 'null':
            assert_almost_equal(initial[name].astype(got.dtype), got, rtol, atol, pair, equal_nan=equal_nan)
        else:
            raise ValueError('unknown grad_req %r for %s' % (req, name))
    return grads


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Outputs of ``sym`` on numpy ``inputs`` as numpy (one array for one output)."""
    ctx = ctx or default_context()
    inputs = {k: array(v, ctx=ctx) for k, v in inputs.items()}
    executor = sym.bind(ctx, args=inputs)
    executor.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in executor.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ='whole', **kwargs):
    """Seconds per run of ``sym`` ('whole': forward and backward; 'forward': forward only)."""
    import time
    ctx = ctx or default_context()
    grad_req = grad_req or 'write'
    if location is None:
        executor = sym.simple_bind(ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0)
                    for k, arr in executor.arg_dict.items()}
    else:
        executor = sym.simple_bind(ctx, grad_req=grad_req,
                                   **{k: np.asarray(v).shape for k, v in location.items()})
    for name, value in location.items():
        executor.arg_dict[name][:] = value
    if typ not in ('whole', 'forward'):
        raise ValueError('typ can only be "whole" or "forward", got %r' % (typ,))

    def once():
        executor.forward(is_train=(typ == 'whole'))
        if typ == 'whole':
            executor.backward(out_grads=[o.ones_like() if hasattr(o, 'ones_like') else o
                                         for o in executor.outputs])
        for output in executor.outputs:
            output.wait_to_read()
    once()
    tic = time.time()
    for _ in range(N):
        once()
    return (time.time() - tic) / N


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None, aux_params=None,
                      rtol=None, atol=None, raise_on_err=True, ground_truth=None, equal_nan=False,
                      use_uniform=False, rand_type=np.float64):
    """Run ``sym`` on several (context, dtype) settings and compare outputs and gradients.

    ``ctx_list`` holds dicts of ``simple_bind`` keywords (``ctx``, ``type_dict``, input shapes).
    The most precise setting is the ground truth; each other one is compared with it using the
    tolerances of its own dtype. Returns the ground truth arrays of each setting.
    """
    from ._consistency import run_consistency
    return run_consistency(sym, ctx_list, scale, grad_req, arg_params, aux_params, rtol, atol,
                           raise_on_err, ground_truth, equal_nan, use_uniform, rand_type)
