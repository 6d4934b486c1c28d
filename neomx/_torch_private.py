"""Every private torch entry point neomx uses, each behind a capability check with a public fallback.

neomx keeps its hot paths close to raw torch through a few of torch's private functions: the
multi-tensor ``torch._foreach_*`` family (optimizer updates), the plain grad-mode setter and
the backward engine (autograd), torch's fused SGD kernel (momentum updates in one pass), the fused RNN kernels of ``torch._VF`` (the ``RNN``
operator), oneDNN's ``torch.ops.mkldnn`` convolutions (inference rewrites), inductor's
freezing switch (``hybridize(backend='inductor')``) and the NVRTC compiler behind ``mx.rtc``
(which has no public fallback: without it ``mx.rtc`` refuses to compile). Each is looked
up here, once; where a torch release renames or drops one, its public equivalent runs
instead (slower, same values). A torch upgrade therefore touches this file only, and
``tests/test_torch_private.py`` runs every fallback against the private path.

Example
-------
>>> import torch
>>> from neomx._torch_private import foreach
>>> ys = [torch.ones(2), torch.zeros(3)]
>>> _ = foreach.add_(ys, [torch.ones(2), torch.ones(3)], alpha=2.0)
>>> [y.tolist() for y in ys]
[[3.0, 3.0], [2.0, 2.0, 2.0]]
"""
import contextlib
import functools
import struct

import torch

__all__ = ['foreach', 'tensor_version', 'per_tensor', 'momentum_sgd_', 'set_grad_enabled', 'engine_run_backward',
           'rnn_kernel', 'onednn_ops', 'has_lapack', 'inductor_freezing', 'aoti_compile_and_package',
           'nvrtc_available', 'nvrtc_compile', 'cuda_launch', 'tcp_rpc_options', 'materialized']


# ------------------------------------------------------------------ foreach
def per_tensor(name):
    """The public fallback of ``torch._foreach_<name>``: the tensor method ``name`` applied to
    each tensor of the first list, list arguments taken item by item, others as they are.
    In-place names (ending in ``_``) return None: callers of in-place ops use the
    tensors they passed (the fused ones return them in some torch releases, not others)."""
    inplace = name.endswith('_')

    def run(tensors, *args, **kwargs):
        results = []
        for i, tensor in enumerate(tensors):
            item_args = [a[i] if isinstance(a, (list, tuple)) else a for a in args]
            method = getattr(tensor, name, None)
            if method is None and inplace:  # no in-place method (maximum_): compute, copy back
                results.append(tensor.copy_(getattr(tensor, name[:-1])(*item_args, **kwargs)))
            else:
                results.append(method(*item_args, **kwargs))
        return None if inplace else results
    run.__name__ = 'foreach_' + name
    return run


class _Foreach:
    """``foreach.<name>(tensors, ...)``: ``torch._foreach_<name>`` where this torch has it,
    else :func:`per_tensor`. Resolved on first use and kept as an attribute."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        fn = getattr(torch, '_foreach_' + name, None) or per_tensor(name)
        setattr(self, name, fn)
        return fn


foreach = _Foreach()


# ------------------------------------------------------------------ fused SGD
_FUSED_SGD_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


@functools.lru_cache(maxsize=None)
def _fused_sgd_runs_on(device_type, dtype):
    """Whether ``torch._fused_sgd_`` exists and runs for tensors of this device type and dtype
    (tried once on a one-element tensor)."""
    kernel = getattr(torch, '_fused_sgd_', None)
    if kernel is None or dtype not in _FUSED_SGD_DTYPES:
        return False
    try:
        probe = [torch.ones(1, dtype=dtype, device=device_type)]
        kernel(probe, [torch.ones_like(probe[0])], [torch.zeros_like(probe[0])], weight_decay=0.0,
               momentum=0.5, lr=-1.0, dampening=2.0, nesterov=False, maximize=False, is_first_step=False)
        return probe[0].item() == 0.0      # mom = 0.5 * 0 - 1 * 1; w = 1 + mom
    except (RuntimeError, NotImplementedError, TypeError):
        return False


@functools.lru_cache(maxsize=None)
def _fused_sgd_rounds_dampening(device_type):
    """Whether torch's fused SGD kernel on this device type rounds ``dampening`` to float32
    before taking ``1 - dampening`` (its CUDA kernel does, its CPU kernel keeps double
    precision): :func:`momentum_sgd_` passes the learning rate as ``1 - dampening``, which
    rounded is off by up to 6e-8 absolute (5% of a learning rate of 1e-6)."""
    probe = [torch.zeros(1, dtype=torch.float32, device=device_type)]
    torch._fused_sgd_(probe, [torch.ones_like(probe[0])], [torch.zeros_like(probe[0])], weight_decay=0.0,
                      momentum=0.5, lr=-1.0, dampening=1.0 + 2.0 ** -30, nesterov=False, maximize=False,
                      is_first_step=False)
    return probe[0].item() == 0.0       # -2**-30 (representable in float32) unless rounded away


def _float32(value):
    return struct.unpack('f', struct.pack('f', value))[0]


def _fused_sgd_applies_exactly(device_type, step):
    """Whether the fused kernel multiplies the gradients by float32 ``step`` exactly, as the
    foreach passes do (and MXNet's kernels)."""
    return (not _fused_sgd_rounds_dampening(device_type)
            or _float32(1.0 - _float32(1.0 - step)) == _float32(step))


def momentum_sgd_(weights, grads, moms, momentum, step, decay):
    """In place, for every tensor: ``mom = momentum * mom + step * (grad + decay * weight);
    weight += mom`` (MXNet's momentum form: the buffer holds the learning rate's sign and
    size). One pass over memory through torch's fused SGD kernel, given ``lr`` -1 and
    ``dampening`` 1 - ``step`` to express that form, where it runs for these tensors (one
    device and dtype, contiguous; a non-zero momentum, which the kernel needs to take
    buffers; a ``step`` the kernel applies exactly); else foreach's three passes. ``grads``
    are not modified.

    Example
    -------
    >>> w, g, m = [torch.ones(2)], [torch.ones(2)], [torch.zeros(2)]
    >>> momentum_sgd_(w, g, m, 0.9, -0.5, 0.0)
    >>> w[0].tolist(), m[0].tolist()
    ([0.5, 0.5], [-0.5, -0.5])
    """
    first = weights[0]
    if (momentum != 0 and _fused_sgd_runs_on(first.device.type, first.dtype)
            and _fused_sgd_applies_exactly(first.device.type, step)
            and all(t.dtype == first.dtype and t.device == first.device and t.is_contiguous()
                    for group in (weights, grads, moms) for t in group)):
        torch._fused_sgd_(weights, grads, moms, weight_decay=decay, momentum=momentum, lr=-1.0,
                          dampening=1.0 - step, nesterov=False, maximize=False, is_first_step=False)
        return
    foreach.mul_(moms, momentum)
    if decay != 0:
        foreach.add_(moms, weights, alpha=step * decay)
    foreach.add_(moms, grads, alpha=step)
    foreach.add_(weights, moms)


# ------------------------------------------------------------------ autograd
# Setting the grad mode is on the path of every record() scope and every update: the public
# ``torch.set_grad_enabled`` builds a context object at each call, the private setter behind
# it only sets the mode.
set_grad_enabled = getattr(getattr(torch, '_C', None), '_set_grad_enabled', None) or torch.set_grad_enabled

# The engine call behind ``torch.autograd.backward``, which would validate gradients that
# neomx has already checked (about 10 us a call); None: callers use torch.autograd.backward.
engine_run_backward = getattr(torch.autograd.graph, '_engine_run_backward', None)


# ------------------------------------------------------------------ RNN kernels
_RNN_MODULES = {'lstm': torch.nn.LSTM, 'gru': torch.nn.GRU, 'rnn_relu': torch.nn.RNN, 'rnn_tanh': torch.nn.RNN}


def rnn_kernel(mode):
    """torch's fused multi-layer RNN kernel for ``mode`` ('lstm', 'gru', 'rnn_relu',
    'rnn_tanh'), called as ``torch._VF.<mode>`` is: ``(data, hx, weights, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)``, or with packed data
    ``(data, batch_sizes, hx, weights, has_biases, num_layers, dropout, train,
    bidirectional)``. Returns ``(output, h[, c])``. Without ``torch._VF``, the same through
    ``torch.nn``'s module and ``torch.func.functional_call``."""
    kernel = getattr(getattr(torch, '_VF', None), mode, None)
    return kernel if kernel is not None else functools.partial(_rnn_through_module, mode)


def _rnn_through_module(mode, data, *args):
    packed = isinstance(args[0], torch.Tensor) and args[0].dim() == 1
    batch_sizes, args = (args[0], args[1:]) if packed else (None, args)
    hx, weights, has_biases, num_layers, dropout, train, bidirectional = args[:7]
    batch_first = bool(args[7]) if len(args) > 7 and not packed else False
    h0 = hx[0] if isinstance(hx, (tuple, list)) else hx
    hidden = hx[1].shape[-1] if mode == 'lstm' else h0.shape[-1]
    options = {}
    if mode.startswith('rnn_'):
        options['nonlinearity'] = mode[4:]
    if mode == 'lstm' and h0.shape[-1] != hidden:
        options['proj_size'] = h0.shape[-1]
    module = _RNN_MODULES[mode](weights[0].shape[1], hidden, num_layers, bias=has_biases, dropout=dropout,
                                bidirectional=bidirectional, batch_first=batch_first, device='meta',
                                **options)
    module.train(train)
    names = [name for name, _ in module.named_parameters()]
    x = torch.nn.utils.rnn.PackedSequence(data, batch_sizes) if packed else data
    state = tuple(hx) if isinstance(hx, (tuple, list)) else hx
    out, state = torch.func.functional_call(module, dict(zip(names, weights)), (x, state))
    out = out.data if packed else out
    return (out,) + (tuple(state) if isinstance(state, tuple) else (state,))


# ------------------------------------------------------------------ oneDNN
@functools.lru_cache(maxsize=None)
def onednn_ops():
    """``torch.ops.mkldnn`` when this torch build has oneDNN's fused convolutions (pointwise
    post-ops and weight reordering), else None: callers then run the plain operators."""
    if not torch.backends.mkldnn.is_available():
        return None
    try:
        ops = torch.ops.mkldnn
        return ops if ops._convolution_pointwise.binary and ops._reorder_convolution_weight else None
    except (AttributeError, RuntimeError):
        return None


def inductor_freezing():
    """A context in which inductor compiles with ``freezing`` (parameters as constants):
    its config switch, which ``torch.compile``'s per-call ``options`` cannot set; a no-op
    context where this torch has no such switch (compiling then proceeds without it)."""
    config = getattr(getattr(torch, '_inductor', None), 'config', None)
    if config is None or not hasattr(config, 'freezing'):
        return contextlib.nullcontext()
    return config.patch(freezing=True)


def has_lapack():
    """Whether this torch build links LAPACK (linear-algebra operators need it)."""
    value = getattr(getattr(torch, '_C', None), 'has_lapack', None)
    if value is not None:
        return bool(value)
    try:
        torch.linalg.inv(torch.eye(1))
        return True
    except RuntimeError:
        return False


# ------------------------------------------------------------------ version counter
_NEVER_EQUAL = object


def tensor_version(tensor):
    """torch's in-place write counter of ``tensor`` (``Tensor._version``): a sparse array that
    handed out a dense copy recompresses it only after something wrote into it. Without the
    counter every call returns a fresh object, which never compares equal (always recompress)."""
    try:
        return tensor._version
    except AttributeError:
        return _NEVER_EQUAL()


def materialized(tensor):
    """``tensor`` as an ordinary tensor: torch's backward formulas may return a ZeroTensor
    (``Tensor._is_zerotensor``: zeros that hold no memory, e.g. the second derivative of abs),
    which numpy cannot read; those are copied into real zeros, other tensors returned as they are."""
    is_zero = getattr(tensor, '_is_zerotensor', None)
    return tensor.clone() if is_zero is not None and is_zero() else tensor


# ------------------------------------------------------------------ AOTInductor
def aoti_compile_and_package(exported_program, package_path, inductor_configs=None):
    """Compile an ``ExportedProgram`` ahead of time into a ``.pt2`` package
    (``torch._inductor.aoti_compile_and_package``: torch 2.13 has no public name for it);
    torch loads it with ``torch._inductor.aoti_load_package``, without neomx. None where
    this torch lacks AOTInductor."""
    compile_and_package = getattr(getattr(torch, '_inductor', None), 'aoti_compile_and_package', None)
    if compile_and_package is None:
        try:
            import torch._inductor as inductor  # pylint: disable=import-outside-toplevel
        except ImportError:
            return None
        compile_and_package = getattr(inductor, 'aoti_compile_and_package', None)
        if compile_and_package is None:
            return None
    return compile_and_package(exported_program, package_path=package_path, inductor_configs=inductor_configs)


# ------------------------------------------------------------------ NVRTC (mx.rtc)
def nvrtc_available():
    """Whether kernels can be compiled at run time: a CUDA build of torch with a GPU and
    its NVRTC helpers (``torch.cuda._utils._nvrtc_compile``, present since torch 2.8)."""
    if not torch.cuda.is_available():
        return False
    try:
        from torch.cuda import _utils  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    return all(hasattr(_utils, n) for n in ('_nvrtc_compile', '_cuda_load_module', '_get_gpu_runtime_library'))


def nvrtc_compile(source, name, options=()):
    """Compile CUDA ``source`` with NVRTC for the current GPU and load kernel ``name`` (a
    C++ name expression: ``axpy``, ``axpy<float>``); returns the loaded function handle
    (a ctypes pointer). RuntimeError with NVRTC's log when compilation fails."""
    from torch.cuda import _utils  # pylint: disable=import-outside-toplevel
    binary, lowered = _utils._nvrtc_compile(source, name, None, None, list(options) or None)
    return _utils._cuda_load_module(binary, [lowered])[lowered].func


def cuda_launch(function, grid, block, arguments, shared_mem, stream):
    """``cuLaunchKernel`` of a loaded ``function`` on ``stream`` (a torch.cuda.Stream);
    ``arguments``: a ctypes array of pointers to each argument's value."""
    from torch.cuda import _utils  # pylint: disable=import-outside-toplevel
    libcuda = _utils._get_gpu_runtime_library()
    result = libcuda.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                    shared_mem, stream._as_parameter_, arguments, None)
    if result != 0:
        raise RuntimeError('cuLaunchKernel failed with CUDA error %d' % result)


def tcp_rpc_options(init_method, timeout):
    """``torch.distributed.rpc`` options whose processes talk over TCP only (TensorPipe's
    private ``_transports``): its shared-memory transport keeps a thread busy-polling in every
    process, a third of a core each even when idle, which the training loops of a few
    processes on one small machine pay for; the fallback keeps torch's defaults."""
    from torch.distributed import rpc
    try:
        return rpc.TensorPipeRpcBackendOptions(init_method=init_method, rpc_timeout=timeout, _transports=['uv'])
    except TypeError:
        return rpc.TensorPipeRpcBackendOptions(init_method=init_method, rpc_timeout=timeout)
