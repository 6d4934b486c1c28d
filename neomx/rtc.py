"""``mx.rtc``: compile CUDA source at run time and launch its kernels on NDArrays.

As MXNet's, on torch's NVRTC helpers (see :mod:`neomx._torch_private`): a
:class:`CudaModule` holds the source and compiler options, :meth:`CudaModule.get_kernel`
compiles one kernel (a name or a template instantiation such as ``axpy<float>``) and
parses its signature, and :meth:`CudaKernel.launch` runs it on the arrays and numbers
given, on the context's current torch CUDA stream. Without a CUDA build of torch and a GPU,
signatures still parse but compiling raises :class:`~neomx.base.MXNetError`.

Example
-------
>>> source = r'''
... extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
...     int i = threadIdx.x + blockIdx.x * blockDim.x;
...     y[i] += alpha * x[i];
... }'''
>>> module = mx.rtc.CudaModule(source)
>>> if mx.context.num_gpus():
...     func = module.get_kernel('axpy', 'const float *x, float *y, float alpha')
...     x, y = mx.nd.ones((10,), ctx=mx.gpu(0)), mx.nd.zeros((10,), ctx=mx.gpu(0))
...     func.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))
...     assert y.asnumpy().tolist() == [3.0] * 10
>>> mx.rtc.parse_signature('const float *x, double *y, int n')
[(True, True, dtype('float32')), (True, False, dtype('float64')), (False, False, dtype('int32'))]
"""
import ctypes
import re

import numpy as np
import torch

from . import _torch_private
from .base import (MXNetError, c_array, c_array_buf, c_str, c_str_array, check_call,  # noqa: F401
                   numeric_types, string_types)
from .ndarray import NDArray

__all__ = ['CudaModule', 'CudaKernel', 'parse_signature']

# C++ argument types MXNet's kernels take, by their numpy dtype
_DTYPE_CPP_TO_NP = {
    'float': np.float32, 'double': np.float64, '__half': np.float16, 'uint8_t': np.uint8,
    'int': np.int32, 'int32_t': np.int32, 'int8_t': np.int8, 'char': np.int8, 'int64_t': np.int64,
}
_ARGUMENT = re.compile(r'^(const)?\s?([\w_]+)\s?(\*)?\s?([\w_]+)?$')


def parse_signature(signature):
    """``[(is_array, is_const, numpy dtype)]`` of a kernel signature such as
    ``'const float *x, float *y, int n'`` (names optional: ``'const float *, int'``).

    Raises
    ------
    ValueError
        For an argument not of the form ``(const) type (*) (name)``.
    TypeError
        For a type MXNet's kernels cannot take.
    """
    parsed = []
    for argument in re.sub(r'\s+', ' ', signature).split(','):
        text = ' '.join(argument.split())
        match = _ARGUMENT.match(text)
        if not match or match.group(2) == 'const':
            raise ValueError('Invalid function prototype "%s". Must be in the form of "(const) type (*) (name)"'
                             % text)
        if match.group(2) not in _DTYPE_CPP_TO_NP:
            raise TypeError('Unsupported kernel argument type %s. Supported types are: %s.'
                            % (text, ','.join(_DTYPE_CPP_TO_NP)))
        parsed.append((bool(match.group(3)), bool(match.group(1)), np.dtype(_DTYPE_CPP_TO_NP[match.group(2)])))
    return parsed


class CudaModule:
    r"""Compile and run CUDA code from Python.

    Declare kernels ``extern "C"`` to call them by their plain names, or name template
    instantiations in ``exports`` (``'axpy<float>'``) and get them by those names.

    Parameters
    ----------
    source : str
        Complete source code.
    options : tuple of str
        Compiler flags. For example, use "-I/usr/local/cuda/include" to add cuda headers
        to include path.
    exports : tuple of str
        Export kernel names.

    Example
    -------
    >>> module = mx.rtc.CudaModule('extern "C" __global__ void noop() {}', options='-default-device')
    >>> module.options, module.exports
    (('-default-device',), ())
    """

    def __init__(self, source, options=(), exports=()):
        if isinstance(options, string_types):
            options = (options,)
        if isinstance(exports, string_types):
            exports = (exports,)
        if not isinstance(source, string_types):
            raise TypeError('CudaModule: source must be a string, got %s' % type(source).__name__)
        self.source, self.options, self.exports = source, tuple(options), tuple(exports)
        self._kernels = {}      # name -> loaded function: each kernel compiled once

    def get_kernel(self, name, signature):
        r"""Get CUDA kernel from compiled module.

        Parameters
        ----------
        name : str
            String name of the kernel.
        signature : str
            Function signature for the kernel. For a kernel declared as
            ``extern "C" __global__ void axpy(const float *x, double *y, int alpha)``
            it is ``const float *x, double *y, int alpha`` or ``const float *, double *, int``:
            ``*`` marks an argument as array and ``const`` as constant (input) array.

        Returns
        -------
        CudaKernel
            CUDA kernels that can be launched on GPUs.
        """
        parsed = parse_signature(signature)
        function = self._kernels.get(name)
        if function is None:
            if not _torch_private.nvrtc_available():
                raise MXNetError('rtc.CudaModule.get_kernel(%r): compiling CUDA kernels needs a CUDA build of '
                                 'torch and a GPU (NVRTC); this torch %s has none' % (name, torch.__version__))
            try:
                function = _torch_private.nvrtc_compile(self.source, name, self.options)
            except RuntimeError as err:
                raise MXNetError('rtc.CudaModule.get_kernel(%r): %s' % (name, err)) from None
            self._kernels[name] = function
        return CudaKernel(function, name, [p[0] for p in parsed], [p[2] for p in parsed])


class CudaKernel:
    """Constructs CUDA kernel. Should be created by `CudaModule.get_kernel`, not intended to
    be used by users.

    Parameters
    ----------
    handle : ctypes pointer
        The loaded kernel function.
    name : str
    is_ndarray : list of bool
        Which arguments are arrays (the others are numbers).
    dtypes : list of numpy dtype
        Each argument's element type.

    Example
    -------
    >>> kernel = mx.rtc.CudaKernel(None, 'axpy', [True, True, False], ['float32'] * 3)
    >>> kernel.launch([mx.nd.ones(2), mx.nd.ones(2), 2.0], mx.cpu(), (1, 1, 1), (2, 1, 1))
    Traceback (most recent call last):
    ...
    AssertionError: Cuda kernel can only be launched on GPU
    """

    def __init__(self, handle, name, is_ndarray, dtypes):
        self.handle = handle
        self._name = name
        self._is_ndarray = list(is_ndarray)
        self._dtypes = [np.dtype(d) for d in dtypes]

    def launch(self, args, ctx, grid_dims, block_dims, shared_mem=0):
        """Launch cuda kernel.

        Parameters
        ----------
        args : tuple of NDArray or numbers
            List of arguments for kernel. NDArrays are expected for pointer types (e.g.
            `float*`, `double*`) while numbers are expected for non-pointer types (e.g.
            `int`, `float`).
        ctx : Context
            The context to launch kernel on. Must be GPU context.
        grid_dims : tuple of 3 integers
            Grid dimensions for CUDA kernel.
        block_dims : tuple of 3 integers
            Block dimensions for CUDA kernel.
        shared_mem : integer, optional
            Size of dynamically allocated shared memory. Defaults to 0.
        """
        assert ctx.device_type == 'gpu', 'Cuda kernel can only be launched on GPU'
        assert len(grid_dims) == 3, 'grid_dims must be a tuple of 3 integers'
        assert len(block_dims) == 3, 'grid_dims must be a tuple of 3 integers'
        assert len(args) == len(self._dtypes), 'CudaKernel(%s) expects %d arguments but got %d' % (
            self._name, len(self._dtypes), len(args))
        for i, (arg, is_nd) in enumerate(zip(args, self._is_ndarray)):
            if is_nd:
                assert isinstance(arg, NDArray), 'The %d-th argument is expected to be a NDArray but got %s' % (
                    i, type(arg))
            else:
                assert isinstance(arg, numeric_types), 'The %d-th argument is expected to be a number, but got %s' % (
                    i, type(arg))
        values = []         # what the argument pointers point at, alive until the launch
        for i, (arg, is_nd, dtype) in enumerate(zip(args, self._is_ndarray, self._dtypes)):
            if not is_nd:
                values.append(np.array(arg, dtype=dtype))
                continue
            if arg.dtype != dtype or arg.context != ctx:
                raise MXNetError('CudaKernel(%s): argument %d must be a %s array on %s, got %s on %s'
                                 % (self._name, i, dtype.name, ctx, np.dtype(arg.dtype).name, arg.context))
            values.append(ctypes.c_void_p(arg._t.data_ptr()))
        if self.handle is None:
            raise MXNetError('CudaKernel(%s) was not compiled (create kernels with CudaModule.get_kernel)'
                             % self._name)
        pointers = (ctypes.c_void_p * len(values))(*[
            ctypes.addressof(v) if isinstance(v, ctypes.c_void_p) else v.ctypes.data for v in values])
        with torch.cuda.device(ctx.device_id):
            _torch_private.cuda_launch(self.handle, grid_dims, block_dims, pointers, shared_mem,
                                       torch.cuda.current_stream())
