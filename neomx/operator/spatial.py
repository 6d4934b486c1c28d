"""Spatial transformer operators: GridGenerator, BilinearSampler and SpatialTransformer.

A sampling grid has shape ``(N, 2, H, W)``: channel 0 holds source x, channel 1 source y,
both normalised to [-1, 1] where -1 is the centre of the first pixel and 1 the centre of
the last (torch's ``align_corners=True``). Sampling outside the image reads zeros, corner by
corner, which is torch's ``padding_mode='zeros'``; MXNet's gradients with respect to data and
grid are those of torch's ``grid_sample`` then.

Each operator also records scratch outputs in MXNet's graph (the generated grids); neomx
does not compute them and only counts them (``hidden_outputs``) so exported JSON matches.
"""
import torch
import torch.nn.functional as tF

from .registry import OPT_BOOL, SHAPE, check, choice, register


def _check_float(op, name, tensor):
    check(tensor.dtype.is_floating_point, op, '%s must be a floating point array, got %s (shape %s)',
          name, tensor.dtype, tensor.shape)


def _check_target_shape(op, target_shape):
    check(len(target_shape) == 2 and min(target_shape) > 0, op,
          'target_shape must be a positive (H, W), got %s', target_shape)


def _affine_grid(op, theta, target_shape):
    """Sampling grid (N, 2, H, W) of the affine maps ``theta`` (N, 6) over an (H, W) target."""
    _check_float(op, 'data', theta)
    check(theta.dim() == 2 and theta.shape[1] == 6, op,
          'affine data must have shape (batch, 6), got %s', theta.shape)
    _check_target_shape(op, target_shape)
    height, width = target_shape
    grid = tF.affine_grid(theta.reshape(-1, 2, 3), (theta.shape[0], 1, height, width), align_corners=True)
    return grid.permute(0, 3, 1, 2)


def _warp_grid(flow):
    """Sampling grid (N, 2, H, W) of pixel displacements ``flow`` (N, 2, H, W): x then y."""
    _check_float('GridGenerator', 'data', flow)
    check(flow.dim() == 4 and flow.shape[1] == 2, 'GridGenerator',
          'warp data must be a flow field of shape (batch, 2, H, W), got %s', flow.shape)
    height, width = flow.shape[2:]
    rows = torch.arange(height, dtype=flow.dtype, device=flow.device)[:, None].expand(height, width)
    cols = torch.arange(width, dtype=flow.dtype, device=flow.device)[None, :].expand(height, width)
    # Pixel coordinates -> [-1, 1]: pixel 0 maps to -1, pixel size-1 to 1.
    half_extent = flow.new_tensor([(width - 1) / 2.0, (height - 1) / 2.0]).reshape(1, 2, 1, 1)
    return (flow + torch.stack([cols, rows])) / half_extent - 1


def _bilinear_sample(op, data, grid):
    """Sample data (N, C, H, W) at grid (N, 2, Ho, Wo); returns (N, C, Ho, Wo)."""
    _check_float(op, 'data', data)
    check(data.dim() == 4, op, 'data must be 4-D (N, C, H, W), got shape %s', data.shape)
    check(grid.dim() == 4 and grid.shape[1] == 2, op,
          'grid must have shape (batch, 2, H, W), got %s', grid.shape)
    check(grid.shape[0] == data.shape[0], op, 'data %s and grid %s have different batch sizes',
          data.shape, grid.shape)
    return tF.grid_sample(data, grid.permute(0, 2, 3, 1), mode='bilinear', padding_mode='zeros',
                          align_corners=True)


@register('GridGenerator', inputs=('data',),
          attrs=[('transform_type', choice('affine', 'warp')), ('target_shape', SHAPE, (0, 0))],
          hidden_outputs=lambda a: 1)
def grid_generator(data, transform_type, target_shape):
    """Sampling grid for BilinearSampler.

    Parameters
    ----------
    data : Tensor
        ``affine``: row-major 2x3 matrices, shape (N, 6), mapping target to source
        coordinates, both normalised to [-1, 1]. ``warp``: a flow field (N, 2, H, W) of
        pixel displacements (x, then y); ``target_shape`` is ignored.

    Returns
    -------
    Tensor, shape (N, 2, H, W), with H, W from ``target_shape`` (affine) or the flow.
    """
    if transform_type == 'affine':
        return _affine_grid('GridGenerator', data, target_shape)
    return _warp_grid(data)


@register('BilinearSampler', inputs=('data', 'grid'), attrs=[('cudnn_off', OPT_BOOL, None)],
          hidden_outputs=lambda a: 1)
def bilinear_sampler(data, grid, cudnn_off):
    """Bilinear sampling of data (N, C, H, W) at the normalised grid (N, 2, Ho, Wo) -> (N, C, Ho, Wo).

    Points outside the image read zeros.
    """
    return _bilinear_sample('BilinearSampler', data, grid)


@register('SpatialTransformer', inputs=('data', 'loc'),
          attrs=[('target_shape', SHAPE, (0, 0)), ('transform_type', choice('affine')),
                 ('sampler_type', choice('bilinear')), ('cudnn_off', OPT_BOOL, None)],
          hidden_outputs=lambda a: 2)
def spatial_transformer(data, loc, target_shape, transform_type, sampler_type, cudnn_off):
    """Warp data (N, C, H, W) by the affine maps loc (N, 6) onto a ``target_shape`` grid.

    Returns
    -------
    Tensor, shape (N, C) + target_shape.
    """
    return _bilinear_sample('SpatialTransformer', data, _affine_grid('SpatialTransformer', loc, target_shape))
