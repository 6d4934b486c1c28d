"""mx.rtc: CUDA kernels compiled at run time (NVRTC through torch) and launched on NDArrays.
The signature parsing and the argument checks run everywhere; compiling needs CUDA."""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.base import MXNetError

CUDA = torch.cuda.is_available()
AXPY = r'''
extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    y[i] += alpha * x[i];
}'''
TEMPLATE = r'''
template<typename DType>
__global__ void axpy(const DType *x, DType *y, DType alpha) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    y[i] += alpha * x[i];
}
extern "C" __global__ void fill(long long *out, long long value, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = value + i;
}'''


def test_signatures_parse_as_mxnet_parses_them():
    assert mx.rtc.parse_signature('const float *x, double *y, int alpha') == [
        (True, True, np.dtype('float32')), (True, False, np.dtype('float64')), (False, False, np.dtype('int32'))]
    assert mx.rtc.parse_signature('const   __half*,  int64_t ,uint8_t * out') == [
        (True, True, np.dtype('float16')), (False, False, np.dtype('int64')), (True, False, np.dtype('uint8'))]
    for bad in ('float x y', 'const *x', 'float **x'):
        with pytest.raises(ValueError, match='Invalid function prototype'):
            mx.rtc.parse_signature(bad)
    with pytest.raises(TypeError, match='Unsupported kernel argument type short x'):
        mx.rtc.parse_signature('short x')


def test_modules_keep_their_options_and_launch_checks_its_arguments():
    module = mx.rtc.CudaModule(AXPY, options='-default-device', exports='axpy')
    assert module.options == ('-default-device',) and module.exports == ('axpy',)
    kernel = mx.rtc.CudaKernel(None, 'axpy', [True, True, False], ['float32', 'float32', 'float32'])
    x = mx.nd.ones((4,))
    with pytest.raises(AssertionError, match='only be launched on GPU'):
        kernel.launch([x, x, 1.0], mx.cpu(), (1, 1, 1), (4, 1, 1))
    with pytest.raises(AssertionError, match='expects 3 arguments but got 2'):
        kernel.launch([x, x], mx.gpu(0), (1, 1, 1), (4, 1, 1))
    with pytest.raises(AssertionError, match='grid_dims'):
        kernel.launch([x, x, 1.0], mx.gpu(0), (1, 1), (4, 1, 1))
    with pytest.raises(AssertionError, match='2-th argument is expected to be a number'):
        kernel.launch([x, x, x], mx.gpu(0), (1, 1, 1), (4, 1, 1))
    with pytest.raises(AssertionError, match='0-th argument is expected to be a NDArray'):
        kernel.launch([1.0, x, 1.0], mx.gpu(0), (1, 1, 1), (4, 1, 1))


@pytest.mark.skipif(CUDA, reason='checks the CPU-only error')
def test_compiling_without_cuda_is_a_clear_error():
    module = mx.rtc.CudaModule(AXPY)
    with pytest.raises(ValueError):         # the signature is checked first
        module.get_kernel('axpy', 'float x y')
    with pytest.raises(MXNetError, match='needs a CUDA build of torch'):
        module.get_kernel('axpy', 'const float *x, float *y, float alpha')


@pytest.mark.skipif(not CUDA, reason='needs a GPU')
def test_extern_c_kernel_runs_on_ndarrays():
    module = mx.rtc.CudaModule(AXPY)
    func = module.get_kernel('axpy', 'const float *x, float *y, float alpha')
    x = mx.nd.arange(10, ctx=mx.gpu(0))
    y = mx.nd.ones((10,), ctx=mx.gpu(0))
    func.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))
    np.testing.assert_allclose(y.asnumpy(), 1 + 3 * np.arange(10))
    with pytest.raises(MXNetError, match='float32 array'):
        func.launch([x.astype('float64'), y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))
    with pytest.raises(MXNetError, match='get_kernel'):
        module.get_kernel('missing', 'float *x')


@pytest.mark.skipif(not CUDA, reason='needs a GPU')
def test_template_exports_and_integer_scalars():
    module = mx.rtc.CudaModule(TEMPLATE, exports=['axpy<float>', 'axpy<double>'])
    for dtype, cpp in (('float32', 'float'), ('float64', 'double')):
        func = module.get_kernel('axpy<%s>' % cpp, 'const %s *x, %s *y, %s alpha' % (cpp, cpp, cpp))
        x = mx.nd.ones((8,), dtype=dtype, ctx=mx.gpu(0))
        y = mx.nd.zeros((8,), dtype=dtype, ctx=mx.gpu(0))
        func.launch([x, y, 2.5], mx.gpu(0), (2, 1, 1), (4, 1, 1))
        assert y.asnumpy().tolist() == [2.5] * 8
    fill = module.get_kernel('fill', 'int64_t *out, int64_t value, int n')
    out = mx.nd.zeros((5,), dtype='int64', ctx=mx.gpu(0))
    fill.launch([out, 2 ** 40, 5], mx.gpu(0), (1, 1, 1), (8, 1, 1))
    assert out.asnumpy().tolist() == [2 ** 40 + i for i in range(5)]
