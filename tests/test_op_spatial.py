"""GridGenerator, BilinearSampler and SpatialTransformer against MXNet 1.9.1's results."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

# MXNet's documentation image for the sampler examples.
_IMAGE = np.array([[[[1, 4, 3, 6], [1, 8, 8, 9], [0, 4, 1, 5], [1, 0, 1, 3]]]], dtype='float32')


def _bilinear_reference(data, grid):
    """Plain numpy bilinear sampling with zero padding, one output pixel at a time."""
    batch, channels, height, width = data.shape
    out = np.zeros((batch, channels) + grid.shape[2:])
    for n in range(batch):
        for i in range(grid.shape[2]):
            for j in range(grid.shape[3]):
                x = (grid[n, 0, i, j] + 1) * (width - 1) / 2
                y = (grid[n, 1, i, j] + 1) * (height - 1) / 2
                x0, y0 = int(np.floor(x)), int(np.floor(y))
                for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                    for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
                        if 0 <= yy < height and 0 <= xx < width:
                            out[n, :, i, j] += wy * wx * data[n, :, yy, xx]
    return out


def _affine_reference(theta, height, width):
    ys, xs = np.meshgrid(np.linspace(-1, 1, height), np.linspace(-1, 1, width), indexing='ij')
    points = np.stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])          # (3, H*W)
    return (theta.reshape(-1, 2, 3) @ points).reshape(-1, 2, height, width)


def test_grid_generator_affine_zoom_matches_mxnet_example():
    grid = mx.nd.GridGenerator(mx.nd.array([[2, 0, 0, 0, 2, 0]]), transform_type='affine', target_shape=(4, 4))
    assert grid.shape == (1, 2, 4, 4) and grid.dtype == np.float32
    out = mx.nd.BilinearSampler(mx.nd.array(_IMAGE), grid)
    np.testing.assert_allclose(out.asnumpy()[0, 0], [[0, 0, 0, 0], [0, 3.5, 6.5, 0],
                                                     [0, 1.25, 2.5, 0], [0, 0, 0, 0]], atol=1e-6)


def test_grid_generator_affine_random_matches_reference():
    theta = np.random.RandomState(0).uniform(-1, 1, (2, 6))
    grid = mx.nd.GridGenerator(mx.nd.array(theta, dtype='float64'), 'affine', (3, 5))
    np.testing.assert_allclose(grid.asnumpy(), _affine_reference(theta, 3, 5), atol=1e-12)


def test_grid_generator_warp_shift_matches_mxnet_example():
    flow = np.zeros((1, 2, 4, 4), dtype='float32')
    flow[:, 0] = 1                                    # every pixel reads its right neighbour
    grid = mx.nd.GridGenerator(mx.nd.array(flow), transform_type='warp')
    out = mx.nd.BilinearSampler(mx.nd.array(_IMAGE), grid)
    np.testing.assert_allclose(out.asnumpy()[0, 0], [[4, 3, 6, 0], [8, 8, 9, 0], [4, 1, 5, 0], [0, 1, 3, 0]])


def test_grid_generator_warp_random_matches_reference():
    flow = np.random.RandomState(1).uniform(-2, 2, (2, 2, 3, 4))
    ys, xs = np.meshgrid(np.arange(3), np.arange(4), indexing='ij')
    expect = np.stack([(flow[:, 0] + xs) / 1.5 - 1, (flow[:, 1] + ys) / 1.0 - 1], axis=1)
    grid = mx.nd.GridGenerator(mx.nd.array(flow, dtype='float64'), transform_type='warp')
    np.testing.assert_allclose(grid.asnumpy(), expect, atol=1e-12)


def test_bilinear_sampler_random_grid_with_outside_points():
    rng = np.random.RandomState(2)
    data, grid = rng.uniform(-1, 1, (2, 3, 5, 6)), rng.uniform(-1.3, 1.3, (2, 2, 4, 3))
    out = mx.nd.BilinearSampler(mx.nd.array(data, dtype='float64'), mx.nd.array(grid, dtype='float64'))
    assert out.shape == (2, 3, 4, 3) and out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), _bilinear_reference(data, grid), atol=1e-12)


def test_spatial_transformer_matches_mxnet():
    data = mx.nd.array(np.arange(12).reshape(1, 1, 3, 4))
    loc = mx.nd.array([[0.8, 0.3, 0.1, -0.2, 0.9, 0.05]])
    out = mx.nd.SpatialTransformer(data, loc, target_shape=(2, 3), transform_type='affine', sampler_type='bilinear')
    np.testing.assert_allclose(out.asnumpy(), [[[[1.4, 1.8, 2.28], [7.565, 9.9, 7.0]]]], rtol=1e-5)


def test_symbol_outputs_and_shapes():
    sym = mx.sym.SpatialTransformer(mx.sym.var('data'), mx.sym.var('loc'), target_shape=(4, 3),
                                    transform_type='affine', sampler_type='bilinear')
    assert sym.list_outputs() == [sym.name + '_output']
    _, out_shapes, _ = sym.infer_shape(data=(2, 3, 5, 6), loc=(2, 6))
    assert out_shapes == [(2, 3, 4, 3)]
    grid = mx.sym.GridGenerator(mx.sym.var('flow'), transform_type='warp')
    assert grid.infer_shape(flow=(2, 2, 7, 9))[1] == [(2, 2, 7, 9)]


@pytest.mark.parametrize('call, match', [
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 5)), 'affine', (3, 4)), 'shape'),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), 'affine'), 'target_shape'),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 3, 3, 3)), 'warp'), 'flow'),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), 'rotate', (3, 4)), 'transform_type'),
    (lambda: mx.nd.BilinearSampler(mx.nd.ones((2, 3, 3, 3)), mx.nd.ones((2, 3, 3, 3))), 'grid'),
    (lambda: mx.nd.BilinearSampler(mx.nd.ones((2, 3, 3, 3)), mx.nd.ones((1, 2, 3, 3))), 'batch'),
    (lambda: mx.nd.BilinearSampler(mx.nd.ones((1, 1, 2, 2), dtype='int32'),
                                   mx.nd.ones((1, 2, 2, 2), dtype='int32')), 'floating'),
    (lambda: mx.nd.SpatialTransformer(mx.nd.ones((2, 3, 3, 3)), mx.nd.ones((2, 6)), transform_type='affine',
                                      sampler_type='bilinear'), 'target_shape'),
])
def test_bad_inputs_raise(call, match):
    with pytest.raises(mx.base.MXNetError, match=match):
        call()


# Points away from pixel boundaries: bilinear sampling has kinks there.
def _grid_off_pixel_lines(rng, shape, height, width):
    grid = rng.uniform(-1.2, 1.2, shape)
    for axis, size in ((0, width), (1, height)):
        pixel = (grid[:, axis] + 1) * (size - 1) / 2
        grid[:, axis] = (np.floor(pixel) + np.clip(pixel - np.floor(pixel), 0.1, 0.9)) * 2 / (size - 1) - 1
    return grid


def test_bilinear_sampler_numeric_gradient():
    rng = np.random.RandomState(3)
    data, grid = rng.uniform(-1, 1, (1, 2, 4, 5)), _grid_off_pixel_lines(rng, (1, 2, 3, 3), 4, 5)
    check_numeric_gradient(mx.nd.BilinearSampler, [data, grid], numeric_eps=1e-6)


def test_grid_generator_numeric_gradients():
    rng = np.random.RandomState(4)
    check_numeric_gradient(lambda t: mx.nd.GridGenerator(t, 'affine', (3, 4)), [rng.uniform(-1, 1, (2, 6))])
    check_numeric_gradient(lambda f: mx.nd.GridGenerator(f, 'warp'), [rng.uniform(-1, 1, (1, 2, 3, 4))])


def test_spatial_transformer_numeric_gradient():
    rng = np.random.RandomState(5)
    data = rng.uniform(-1, 1, (1, 2, 4, 5))
    # A near-identity map keeps the sample points off the pixel lines of the 4x5 image.
    loc = np.array([[0.93, 0.02, 0.03, -0.03, 0.91, 0.04]])

    def transform(d, theta):
        return mx.nd.SpatialTransformer(d, theta, target_shape=(3, 3), transform_type='affine',
                                        sampler_type='bilinear')
    check_numeric_gradient(transform, [data, loc], numeric_eps=1e-6)
