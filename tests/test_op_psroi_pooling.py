"""contrib.PSROIPooling: values recorded from MXNet 1.9.1, gradients, shapes and errors."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

DATA = np.arange(2 * 8 * 5 * 6, dtype='float64').reshape(2, 8, 5, 6) % 7
ROIS = np.array([[0, 0, 0, 40, 40], [1, 10.5, 5.4, 30, 44], [0, -20, -10, 30, 40], [1, 100, 100, 99, 99]])

# MXNet 1.9.1, spatial_scale=0.125, output_dim=2, pooled_size=2
POOLED_2 = [[[[2.333333, 3.916667], [2.0, 3.0]], [[1.777778, 3.75], [3.0, 2.25]]],
            [[[2.0, 4.125], [4.0, 1.75]], [[3.0, 3.375], [5.0, 1.0]]],
            [[[3.0, 3.0], [1.5, 3.6875]], [[0.5, 4.0], [2.5, 3.375]]],
            [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]]
# ... pooled_size=3, group_size=2: first two ROIs
POOLED_3_GROUP_2 = [[[[1.75, 1.5, 4.333334], [4.333334, 2.333333, 4.0], [1.0, 2.5, 3.0]],
                     [[1.0, 2.5, 3.0], [3.0, 1.777778, 4.222222], [2.0, 3.5, 1.666667]]],
                    [[[2.5, 3.5, 3.666667], [1.0, 2.0, 4.5], [4.0, 5.0, 0.5]],
                     [[3.5, 4.5, 2.333333], [2.0, 3.0, 5.5], [5.0, 4.25, 1.5]]]]


def _pool(data, rois, **kwargs):
    return mx.nd.contrib.PSROIPooling(mx.nd.array(data), mx.nd.array(rois), spatial_scale=0.125,
                                      output_dim=2, **kwargs)


def test_psroipooling_values():
    np.testing.assert_allclose(_pool(DATA, ROIS, pooled_size=2).asnumpy(), POOLED_2, rtol=1e-5, atol=1e-6)
    out = _pool(DATA, ROIS, pooled_size=3, group_size=2).asnumpy()
    assert out.shape == (4, 2, 3, 3)
    np.testing.assert_allclose(out[:2], POOLED_3_GROUP_2, rtol=1e-5, atol=1e-6)
    half = mx.nd.contrib.PSROIPooling(mx.nd.array(DATA, dtype='float16'), mx.nd.array(ROIS, dtype='float16'),
                                      spatial_scale=0.125, output_dim=2, pooled_size=2)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.asnumpy(), POOLED_2, rtol=2e-3, atol=1e-3)


def test_psroipooling_gradients():
    data = np.random.RandomState(0).rand(2, 8, 5, 6)
    rois = mx.nd.array(ROIS[:3])
    check_numeric_gradient(lambda d: mx.nd.contrib.PSROIPooling(d, rois, spatial_scale=0.125, output_dim=2,
                                                                pooled_size=2), [data], rtol=1e-2, atol=1e-3)
    d, r = mx.nd.array(data), mx.nd.array(ROIS)
    d.attach_grad()
    r.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.PSROIPooling(d, r, spatial_scale=0.125, output_dim=2, pooled_size=2)
    out.backward()
    assert float(r.grad.abs().sum().asscalar()) == 0.0
    # each non-empty bin spreads its unit gradient over its pixels: total = number of such bins
    assert abs(float(d.grad.sum().asscalar()) - 24.0) < 1e-4


def test_psroipooling_symbol_and_errors():
    sym = mx.sym.contrib.PSROIPooling(spatial_scale=0.0625, output_dim=2, pooled_size=3, name='psroipool')
    assert sym.list_arguments() == ['psroipool_data', 'psroipool_rois']
    assert sym.infer_shape(psroipool_data=(1, 18, 14, 14), psroipool_rois=(2, 5))[1] == [(2, 2, 3, 3)]
    with pytest.raises(mx.base.MXNetError, match='PSROIPooling: data has 8 channels'):
        _pool(DATA, ROIS, pooled_size=3)
    with pytest.raises(mx.base.MXNetError, match=r'PSROIPooling: rois must have shape \(R, 5\)'):
        _pool(DATA, ROIS[:, :4], pooled_size=2)
    with pytest.raises(mx.base.MXNetError, match="required argument 'pooled_size'"):
        mx.nd.contrib.PSROIPooling(mx.nd.array(DATA), mx.nd.array(ROIS), spatial_scale=0.1, output_dim=2)
