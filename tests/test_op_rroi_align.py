"""contrib.RROIAlign (rotated ROIAlign): values recorded from MXNet 1.9.1, gradients, errors."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

DATA = np.arange(2 * 2 * 6 * 6, dtype='float32').reshape(2, 2, 6, 6)
ROIS = np.array([[0, 20, 20, 30, 40, 30], [1, 10, 30, 50, 20, -45], [0, 90, 90, 10, 10, 0],
                 [1, 40, 40, 200, 300, 90]])
# MXNet 1.9.1, pooled_size=(2, 3), spatial_scale=0.125, channel 0 of each ROI
ADAPTIVE = [[[13.04728, 10.37981, 7.79781], [27.20219, 24.62019, 21.95272]],
            [[83.31942, 93.54029, 103.3056], [73.87191, 97.95972, 86.80905]],
            [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
            [[0.0, 19.96874, 5.27873], [0.0, 3.4295, 0.91358]]]
SAMPLING_2 = [[[13.04728, 10.37981, 7.71234], [27.28766, 24.62019, 21.95272]],
              [[83.32093, 93.54029, 103.29659], [66.45558, 97.95971, 78.17407]],
              [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
              [[0.0, 22.45312, 0.0], [0.0, 0.0, 0.0]]]


@pytest.mark.parametrize('sampling_ratio,expect', [(-1, ADAPTIVE), (2, SAMPLING_2)])
def test_rroi_align_values(sampling_ratio, expect):
    out = mx.nd.contrib.RROIAlign(mx.nd.array(DATA), mx.nd.array(ROIS), pooled_size=(2, 3),
                                  spatial_scale=0.125, sampling_ratio=sampling_ratio)
    assert out.shape == (4, 2, 2, 3)
    np.testing.assert_allclose(out.asnumpy()[:, 0], expect, rtol=1e-5, atol=1e-4)
    # channel 1 is channel 0 plus 36 wherever all samples lie inside the map (first ROI)
    np.testing.assert_allclose(out.asnumpy()[0, 1], np.array(expect[0]) + 36, rtol=1e-5)


def test_rroi_align_gradient_with_respect_to_data():
    rois = mx.nd.array(ROIS[:2])
    data = np.random.RandomState(0).rand(2, 2, 6, 6)
    check_numeric_gradient(lambda d: mx.nd.contrib.RROIAlign(d, rois, pooled_size=(2, 2), spatial_scale=0.125),
                           [data], rtol=1e-2, atol=1e-3)


def test_rroi_align_symbol_and_errors():
    sym = mx.sym.contrib.RROIAlign(mx.sym.Variable('d'), mx.sym.Variable('r'), pooled_size=(2, 2), spatial_scale=1.0)
    assert sym.infer_shape(d=(2, 3, 8, 8), r=(5, 6))[1] == [(5, 3, 2, 2)]
    with pytest.raises(mx.base.MXNetError, match=r'RROIAlign: rois must have shape \(R, 6\)'):
        mx.nd.contrib.RROIAlign(mx.nd.array(DATA), mx.nd.array(ROIS[:, :5]), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(mx.base.MXNetError, match='RROIAlign: data must be 4-D'):
        mx.nd.contrib.RROIAlign(mx.nd.ones((2, 6, 6)), mx.nd.array(ROIS), pooled_size=(2, 2), spatial_scale=1.0)
