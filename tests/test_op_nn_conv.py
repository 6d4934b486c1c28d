"""Dense, convolution, pooling, resampling, ROI pooling and embedding operators.

Literal expectations were recorded from MXNet 1.9.1; others come from numpy references.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry
from neomx.test_utils import check_numeric_gradient


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype('float32')


def _infer(op, shapes, **attrs):
    spec = registry.get(op)
    return spec.infer_args(shapes, spec.parse_attrs(attrs))


def _correlate2d(x, w, pad=0):
    """Reference NCHW cross-correlation, stride 1, one group."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))
    return np.einsum('nchwij,fcij->nfhw', windows, w)


# ------------------------------------------------------------- FullyConnected
def test_fully_connected_matches_numpy_and_flattens():
    x, w, b = _rand(2, 3, 2), _rand(4, 6, seed=1), _rand(4, seed=2)
    out = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=4)
    np.testing.assert_allclose(out.asnumpy(), x.reshape(2, 6) @ w.T + b, rtol=1e-5)
    no_flat = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w[:, :2]), num_hidden=4, no_bias=True,
                                   flatten=False)
    assert no_flat.shape == (2, 3, 4)
    np.testing.assert_allclose(no_flat.asnumpy(), x @ w[:, :2].T, rtol=1e-5)


def test_fully_connected_infer_args_and_errors():
    assert _infer('FullyConnected', {'data': (2, 5, 3)}, num_hidden=4) == {'weight': (4, 15), 'bias': (4,)}
    assert _infer('FullyConnected', {'data': (2, 5, 3)}, num_hidden=4, flatten=False)['weight'] == (4, 3)
    with pytest.raises(mx.base.MXNetError, match='FullyConnected.*num_hidden=5'):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), mx.nd.ones((4,)), num_hidden=5)
    with pytest.raises(mx.base.MXNetError, match='FullyConnected'):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)), mx.nd.ones((4,)), num_hidden=4)


def test_fully_connected_gradient():
    check_numeric_gradient(lambda x, w, b: mx.nd.FullyConnected(x, w, b, num_hidden=3),
                           [_rand(2, 4), _rand(3, 4, seed=1), _rand(3, seed=2)])


# ---------------------------------------------------------------- Convolution
def test_convolution_2d_matches_numpy():
    x, w, b = _rand(2, 3, 5, 6), _rand(4, 3, 3, 3, seed=1), _rand(4, seed=2)
    out = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), kernel=(3, 3), num_filter=4,
                            pad=(1, 1))
    np.testing.assert_allclose(out.asnumpy(), _correlate2d(x, w, pad=1) + b[:, None, None], rtol=1e-4,
                               atol=1e-5)


def test_convolution_groups_dilate_stride_pad_mxnet_values():
    x = mx.nd.array(np.arange(32).reshape(1, 4, 2, 4) / 8)
    w = mx.nd.array(np.arange(16).reshape(2, 2, 2, 2) / 10 - 0.5)
    out = mx.nd.Convolution(x, w, kernel=(2, 2), num_filter=2, num_group=2, no_bias=True, dilate=(1, 2),
                            pad=(1, 0), stride=(1, 2))
    np.testing.assert_allclose(out.asnumpy(), [[[[0.3], [0.0], [-0.7]], [[8.3], [16.0], [7.3]]]], atol=1e-5)


def test_convolution_1d_3d_shapes_and_channel_last_layout():
    out1 = mx.nd.Convolution(mx.nd.ones((2, 2, 7)), mx.nd.ones((3, 2, 3)), mx.nd.zeros((3,)), kernel=(3,),
                             num_filter=3, stride=(2,), pad=(1,))
    assert out1.shape == (2, 3, 4)
    out3 = mx.nd.Convolution(mx.nd.ones((1, 1, 4, 4, 4)), mx.nd.ones((2, 1, 2, 2, 2)), kernel=(2, 2, 2),
                             num_filter=2, stride=(2, 2, 2), no_bias=True)
    assert out3.shape == (1, 2, 2, 2, 2) and np.all(out3.asnumpy() == 8)
    x, w = _rand(2, 5, 4, 3), _rand(4, 3, 2, 3, seed=1)          # NHWC data, OHWI weight
    nhwc = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(3, 2), num_filter=4, layout='NHWC',
                             no_bias=True)
    nchw = mx.nd.Convolution(mx.nd.array(x.transpose(0, 3, 1, 2)), mx.nd.array(w.transpose(0, 3, 1, 2)),
                             kernel=(3, 2), num_filter=4, no_bias=True)
    np.testing.assert_allclose(nhwc.asnumpy(), nchw.asnumpy().transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-6)


def test_convolution_infer_args_and_errors():
    assert _infer('Convolution', {'data': (2, 6, 5, 5)}, kernel=(3, 2), num_filter=4, num_group=2) == \
        {'weight': (4, 3, 3, 2), 'bias': (4,)}
    assert _infer('Convolution', {'data': (2, 5, 5, 6)}, kernel=(3, 2), num_filter=4, num_group=2,
                  layout='NHWC')['weight'] == (4, 3, 2, 3)
    x = mx.nd.ones((1, 2, 5, 5))
    with pytest.raises(mx.base.MXNetError, match=r'Convolution.*weight shape \(3, 2, 3, 3\)'):
        mx.nd.Convolution(x, mx.nd.ones((3, 2, 3, 3)), mx.nd.ones((3,)), kernel=(3, 3), num_filter=4)
    with pytest.raises(mx.base.MXNetError, match='Convolution.*pad'):
        mx.nd.Convolution(x, mx.nd.ones((3, 2, 3, 3)), mx.nd.ones((3,)), kernel=(3, 3), num_filter=3, pad=(1,))
    with pytest.raises(mx.base.MXNetError, match="Convolution.*layout"):
        mx.nd.Convolution(x, mx.nd.ones((3, 2, 3)), kernel=(3,), num_filter=3, layout='NWC')


def test_convolution_gradient():
    check_numeric_gradient(
        lambda x, w, b: mx.nd.Convolution(x, w, b, kernel=(2, 2), num_filter=2, stride=(2, 1), pad=(1, 0)),
        [_rand(1, 2, 4, 3), _rand(2, 2, 2, 2, seed=1), _rand(2, seed=2)])


# -------------------------------------------------------------- Deconvolution
def test_deconvolution_mxnet_values_and_default_no_bias():
    x = mx.nd.array(np.arange(8).reshape(1, 2, 2, 2) / 4)
    w = mx.nd.array(np.arange(24).reshape(2, 3, 2, 2) / 10 - 1)
    out = mx.nd.Deconvolution(x, w, mx.nd.array([1, 2, 3]), kernel=(2, 2), num_filter=3, stride=(2, 2),
                              pad=(1, 1), adj=(1, 1), no_bias=False)
    np.testing.assert_allclose(out.asnumpy()[0, 0], [[1.5, 1.3, 1.45], [1.0, 0.6, 0.85], [1.4, 1.1, 1.35]],
                               atol=1e-6)
    np.testing.assert_allclose(out.asnumpy()[0, 2, 2], [5.0, 5.1, 5.35], atol=1e-6)
    plain = mx.nd.Deconvolution(x, w, kernel=(2, 2), num_filter=3)          # no_bias=True by default
    assert plain.shape == (1, 3, 3, 3)


def test_deconvolution_is_the_adjoint_of_convolution():
    x, y, w = _rand(1, 2, 5, 5), _rand(1, 3, 3, 3, seed=1), _rand(3, 2, 3, 3, seed=2)
    geometry = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), dilate=(1, 1))
    conv = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), num_filter=3, no_bias=True, **geometry)
    deconv = mx.nd.Deconvolution(mx.nd.array(y), mx.nd.array(w), num_filter=2, **geometry)
    assert deconv.shape == x.shape
    np.testing.assert_allclose(np.sum(conv.asnumpy() * y), np.sum(x * deconv.asnumpy()), rtol=1e-4)


def test_deconvolution_shapes_target_shape_and_infer_args():
    x = mx.nd.ones((2, 6, 5, 5))
    w = mx.nd.ones((6, 2, 3, 3))
    assert mx.nd.Deconvolution(x, w, kernel=(3, 3), num_filter=4, num_group=2, stride=(2, 2), dilate=(2, 2),
                               pad=(1, 1), adj=(1, 1)).shape == (2, 4, 12, 12)
    for target in [(10, 10), (11, 9)]:
        out = mx.nd.Deconvolution(x, w, kernel=(3, 3), num_filter=4, num_group=2, stride=(2, 2),
                                  target_shape=target)
        assert out.shape[2:] == target
    assert _infer('Deconvolution', {'data': (2, 6, 5, 5)}, kernel=(3, 3), num_filter=4, num_group=2) == \
        {'weight': (6, 2, 3, 3), 'bias': (4,)}
    assert _infer('Deconvolution', {'data': (2, 5, 5, 6)}, kernel=(3, 2), num_filter=4, num_group=2,
                  layout='NHWC')['weight'] == (6, 3, 2, 2)


def test_deconvolution_gradient():
    check_numeric_gradient(
        lambda x, w, b: mx.nd.Deconvolution(x, w, b, kernel=(2, 2), num_filter=2, stride=(2, 2), no_bias=False),
        [_rand(1, 3, 2, 2), _rand(3, 2, 2, 2, seed=1), _rand(2, seed=2)])


# -------------------------------------------------------------------- Pooling
def test_pooling_types_match_numpy_blocks():
    x = _rand(2, 3, 4, 6)
    blocks = x.reshape(2, 3, 2, 2, 3, 2)
    nd_x = mx.nd.array(x)
    for pool_type, reduce in [('max', np.max), ('avg', np.mean), ('sum', np.sum)]:
        out = mx.nd.Pooling(nd_x, kernel=(2, 2), stride=(2, 2), pool_type=pool_type)
        np.testing.assert_allclose(out.asnumpy(), reduce(blocks, axis=(3, 5)), rtol=1e-5, atol=1e-6)
    lp = mx.nd.Pooling(nd_x, kernel=(2, 2), stride=(2, 2), pool_type='lp', p_value=2)
    np.testing.assert_allclose(lp.asnumpy(), np.sqrt(np.sum(blocks ** 2, axis=(3, 5))), rtol=1e-5)
    gavg = mx.nd.Pooling(nd_x, global_pool=True, pool_type='avg')
    np.testing.assert_allclose(gavg.asnumpy(), x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_pooling_conventions_and_padding_mxnet_values():
    x = mx.nd.array(np.arange(6).reshape(1, 2, 3) - 2.5)
    full = mx.nd.Pooling(x, kernel=(2,), stride=(2,), pooling_convention='full')
    np.testing.assert_allclose(full.asnumpy(), [[[-1.5, -0.5], [1.5, 2.5]]])
    exclude = mx.nd.Pooling(x, kernel=(2,), stride=(1,), pad=(1,), pool_type='avg', count_include_pad=False)
    np.testing.assert_allclose(exclude.asnumpy(), [[[-2.5, -2.0, -1.0, -0.5], [0.5, 1.0, 2.0, 2.5]]])
    include = mx.nd.Pooling(x, kernel=(2,), stride=(1,), pad=(1,), pool_type='avg')
    np.testing.assert_allclose(include.asnumpy(), [[[-1.25, -2.0, -1.0, -0.25], [0.25, 1.0, 2.0, 1.25]]])
    lp3 = mx.nd.Pooling(x, kernel=(3,), stride=(3,), pool_type='lp', p_value=3)
    np.testing.assert_allclose(lp3.asnumpy(), [[[-2.6742406], [2.6742406]]], rtol=1e-6)
    # a 'full' window past the input: max gives the lowest float32, sums give 0
    y = mx.nd.array(np.arange(5).reshape(1, 1, 5))
    assert mx.nd.Pooling(y, kernel=(1,), stride=(3,), pooling_convention='full').asnumpy()[0, 0, 2] == \
        np.finfo(np.float32).min
    assert mx.nd.Pooling(y, kernel=(1,), stride=(3,), pool_type='sum',
                         pooling_convention='full').asnumpy()[0, 0, 2] == 0
    z = mx.nd.array(np.arange(35).reshape(1, 1, 5, 7))
    avg_full = mx.nd.Pooling(z, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg',
                             pooling_convention='full')
    np.testing.assert_allclose(avg_full.asnumpy()[0, 0, 0], [1.7777778, 3.6666667, 5.0, 4.0], rtol=1e-6)


def test_pooling_channel_last_layout_and_3d():
    x = _rand(1, 4, 6, 3)
    nhwc = mx.nd.Pooling(mx.nd.array(x), kernel=(2, 2), stride=(2, 2), layout='NHWC')
    nchw = mx.nd.Pooling(mx.nd.array(x.transpose(0, 3, 1, 2)), kernel=(2, 2), stride=(2, 2))
    np.testing.assert_allclose(nhwc.asnumpy(), nchw.asnumpy().transpose(0, 2, 3, 1))
    assert mx.nd.Pooling(mx.nd.ones((1, 2, 4, 5, 3)), kernel=(2, 2, 2), stride=(2, 2, 1), pad=(1, 0, 1),
                         pool_type='avg').shape == (1, 2, 3, 2, 4)


def test_pooling_errors():
    x = mx.nd.ones((1, 1, 4, 4))
    with pytest.raises(mx.base.MXNetError, match="Pooling.*pool_type"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type='nope')
    with pytest.raises(mx.base.MXNetError, match='Pooling.*kernel'):
        mx.nd.Pooling(x, pool_type='max')
    with pytest.raises(mx.base.MXNetError, match='Pooling.*exceeds'):
        mx.nd.Pooling(x, kernel=(5, 5))
    with pytest.raises(mx.base.MXNetError, match='Pooling.*p_value'):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type='lp')
    with pytest.raises(mx.base.MXNetError, match="Pooling.*same"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type='avg', pooling_convention='same')


def test_pooling_gradients():
    x = _rand(1, 2, 4, 5)
    check_numeric_gradient(lambda d: mx.nd.Pooling(d, kernel=(2, 2), stride=(2, 2), pool_type='max'), [x])
    check_numeric_gradient(lambda d: mx.nd.Pooling(d, kernel=(3, 2), stride=(1, 2), pad=(1, 1), pool_type='avg',
                                                   count_include_pad=False), [x])
    check_numeric_gradient(lambda d: mx.nd.Pooling(d, kernel=(2, 2), pool_type='lp', p_value=2), [x + 2])


# ----------------------------------------------------------------- resampling
def test_upsampling_nearest_concat_and_sum():
    x = mx.nd.array(np.arange(8).reshape(1, 2, 2, 2))
    y = mx.nd.array([0.0, 1.0]).reshape((1, 2, 1, 1))
    one = mx.nd.UpSampling(x, scale=2, sample_type='nearest')
    np.testing.assert_array_equal(one.asnumpy()[0, 0], [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])
    concat = mx.nd.UpSampling(x, y, scale=2, sample_type='nearest', num_args=2)
    assert concat.shape == (1, 4, 4, 4) and np.all(concat.asnumpy()[0, 3] == 1)
    summed = mx.nd.UpSampling(x, y, scale=2, sample_type='nearest', num_args=2, multi_input_mode='sum')
    np.testing.assert_array_equal(summed.asnumpy(), one.asnumpy() + np.array([0, 1]).reshape(1, 2, 1, 1))


def test_upsampling_bilinear_mxnet_values():
    x = mx.nd.array(np.arange(8).reshape(1, 2, 2, 2))
    out = mx.nd.UpSampling(x, mx.nd.array(np.arange(32).reshape(2, 1, 4, 4)), scale=2, sample_type='bilinear',
                           num_filter=2)
    np.testing.assert_allclose(out.asnumpy()[0, 0], [[0, 4, 5, 6], [2, 12, 18, 16], [10, 36, 42, 32],
                                                     [18, 44, 49, 30]])
    out3 = mx.nd.UpSampling(x, mx.nd.array(np.arange(50).reshape(2, 1, 5, 5)), scale=3, sample_type='bilinear',
                            num_filter=2)
    assert out3.shape == (1, 2, 6, 6)
    np.testing.assert_allclose(out3.asnumpy()[0, 1, 2], [320, 330, 715, 737, 399, 411])
    inferred = _infer('UpSampling', {}, scale=3, sample_type='bilinear', num_filter=2, num_args=1)
    assert inferred['weight'] == inferred['arg1'] == (2, 1, 5, 5)
    up = mx.sym.UpSampling(mx.sym.Variable('data'), mx.sym.Variable('w'), sample_type='bilinear', scale=3,
                           num_filter=2, num_args=2)
    assert up.infer_shape(data=(2, 2, 4, 4))[0] == [(2, 2, 4, 4), (2, 1, 5, 5)]


def test_bilinear_resize_modes_and_values():
    x = mx.nd.array(np.arange(30).reshape(1, 1, 5, 6))
    resize = mx.nd.contrib.BilinearResize2D
    np.testing.assert_allclose(resize(x, height=3, width=4).asnumpy()[0, 0, 1],
                               [12, 13.666667, 15.333333, 17], rtol=1e-6)
    small = mx.nd.array(np.arange(6).reshape(1, 1, 2, 3))
    np.testing.assert_allclose(resize(small, height=3, width=4, align_corners=False).asnumpy()[0, 0],
                               [[0, 0.625, 1.375, 2], [1.5, 2.125, 2.875, 3.5], [3, 3.625, 4.375, 5]])
    expected_shapes = {'to_even_down': (4, 6), 'to_even_up': (6, 6), 'to_odd_down': (5, 5), 'to_odd_up': (5, 7)}
    for mode, shape in expected_shapes.items():
        assert resize(x, mode=mode).shape[2:] == shape
    assert resize(x, scale_height=2, scale_width=2, mode='odd_scale').shape[2:] == (9, 12)
    assert resize(x, scale_height=1.5, scale_width=0.5).shape[2:] == (7, 3)
    assert resize(x, mx.nd.ones((1, 1, 2, 3)), mode='like').shape[2:] == (2, 3)


def test_resampling_gradients():
    x = _rand(1, 2, 2, 3)
    check_numeric_gradient(lambda d: mx.nd.UpSampling(d, scale=2, sample_type='nearest'), [x])
    check_numeric_gradient(lambda d, w: mx.nd.UpSampling(d, w, scale=2, sample_type='bilinear', num_filter=2),
                           [x, _rand(2, 1, 4, 4, seed=1)])
    check_numeric_gradient(lambda d: mx.nd.contrib.BilinearResize2D(d, height=4, width=5), [x])


# ---------------------------------------------------------------- ROIPooling
def test_roi_pooling_mxnet_values():
    x = mx.nd.array(np.arange(20).reshape(1, 1, 4, 5))
    rois = mx.nd.array([[0, 0, 0, 4, 3], [0, 1.4, 0.6, 3, 2], [0, 2, 1, 9, 9]])
    out = mx.nd.ROIPooling(x, rois, pooled_size=(2, 2), spatial_scale=1.0)
    np.testing.assert_array_equal(out.asnumpy(), [[[[7, 9], [17, 19]]], [[[7, 8], [12, 13]]],
                                                  [[[19, 0], [0, 0]]]])
    half = mx.nd.ROIPooling(x, rois, pooled_size=(3, 2), spatial_scale=0.5)
    np.testing.assert_array_equal(half.asnumpy()[:, 0], [[[1, 2], [6, 7], [11, 12]], [[1, 2], [6, 7], [6, 7]],
                                                         [[13, 14], [18, 19], [0, 0]]])


def test_roi_pooling_gradient():
    rois = mx.nd.array([[0, 0, 0, 4, 3], [1, 1, 1, 3, 2]])
    check_numeric_gradient(lambda d: mx.nd.ROIPooling(d, rois, pooled_size=(2, 2), spatial_scale=1.0),
                           [_rand(2, 2, 4, 5)])


# ------------------------------------------------------------------ Embedding
def test_embedding_clips_and_truncates_indices():
    weight = mx.nd.array(np.arange(15).reshape(5, 3))
    out = mx.nd.Embedding(mx.nd.array([[0.7, 7], [-1, 3.6]]), weight, input_dim=5, output_dim=3)
    np.testing.assert_array_equal(out.asnumpy(), [[[0, 1, 2], [12, 13, 14]], [[0, 1, 2], [9, 10, 11]]])
    assert out.dtype == np.float32
    wide = mx.nd.Embedding(mx.nd.array([1], dtype='int32'), weight.astype('float64'), input_dim=5, output_dim=3)
    assert wide.dtype == np.float64
    assert _infer('Embedding', {'data': (2, 3)}, input_dim=5, output_dim=4) == {'weight': (5, 4)}
    with pytest.raises(mx.base.MXNetError, match=r'Embedding.*\(6, 3\)'):
        mx.nd.Embedding(mx.nd.array([0]), weight, input_dim=6, output_dim=3)


def test_embedding_gradient_accumulates_repeated_rows():
    weight = mx.nd.ones((4, 2))
    weight.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Embedding(mx.nd.array([[0, 2], [2, 2]]), weight, input_dim=4, output_dim=2)
    out.backward()
    np.testing.assert_array_equal(weight.grad.asnumpy(), [[1, 1], [0, 0], [3, 3], [0, 0]])
    check_numeric_gradient(lambda w: mx.nd.Embedding(mx.nd.array([3, 0, 3]), w, input_dim=4, output_dim=2),
                           [_rand(4, 2)])


def test_pooling_reads_a_longer_pad_for_the_kernel_dims():
    # shapes from MXNet 1.9.1: pad entries past len(kernel) are ignored
    x = mx.nd.array(np.random.rand(1, 1, 6, 6))
    assert mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pad=(1, 0, 0), pool_type='max').shape == (1, 1, 4, 3)
    x1 = mx.nd.array(np.random.rand(1, 1, 10))
    assert mx.nd.Pooling(x1, kernel=2, stride=2, pad=(0, 0, 0), pool_type='max',
                         pooling_convention='same').shape == (1, 1, 5)
