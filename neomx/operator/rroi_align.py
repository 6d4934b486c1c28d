"""``_contrib_RROIAlign``: ROIAlign over rotated boxes (rotated text and object detectors).

MXNet semantics kept here: a ROI is ``(batch index, center x, center y, width, height,
angle in degrees)`` in image pixels, scaled by ``spatial_scale``; width and height are at
least 1. Each of the ``pooled_size`` bins averages a grid of ``sampling_ratio`` x
``sampling_ratio`` samples (``ceil(roi_height / pooled_h)`` x ``ceil(roi_width / pooled_w)``
when ``sampling_ratio <= 0``) placed at the grid cells' centres in the box's own frame and
rotated by the angle about the centre (``x = xx cos + yy sin + cx``,
``y = yy cos - xx sin + cy``). A sample reads the map bilinearly; one further than a pixel
outside the map reads 0, and one within a pixel outside reads the border.

MXNet 1.9.1 cannot differentiate this operator; neomx differentiates it with respect to
``data`` (the ROIs get no gradient, as with ``ROIAlign``).
"""
import math

import torch

from .registry import FLOAT, INT, SHAPE, check, register

_OP = '_contrib_RROIAlign'


def _sample_points(rois, pooled_h, pooled_w, spatial_scale, sampling_ratio):
    """Sample coordinates (R, PH, PW, Gh, Gw) each for y and x, the mask of the samples each
    ROI really takes, and each ROI's sample count (R,)."""
    center_x, center_y = rois[:, 1] * spatial_scale, rois[:, 2] * spatial_scale
    width = (rois[:, 3] * spatial_scale).clamp(min=1.0)
    height = (rois[:, 4] * spatial_scale).clamp(min=1.0)
    theta = rois[:, 5] * (math.pi / 180.0)
    bin_h, bin_w = height / pooled_h, width / pooled_w
    if sampling_ratio > 0:
        grid_h = grid_w = torch.full_like(height, float(sampling_ratio))
    else:
        grid_h, grid_w = torch.ceil(height / pooled_h), torch.ceil(width / pooled_w)
    most_h, most_w = int(grid_h.max()) if len(rois) else 1, int(grid_w.max()) if len(rois) else 1
    dev, dt = rois.device, rois.dtype
    ph = torch.arange(pooled_h, device=dev, dtype=dt)[None, :, None]
    pw = torch.arange(pooled_w, device=dev, dtype=dt)[None, :, None]
    iy = torch.arange(most_h, device=dev, dtype=dt)[None, None, :]
    ix = torch.arange(most_w, device=dev, dtype=dt)[None, None, :]

    def col(v):
        return v[:, None, None]
    yy = -col(height) / 2 + ph * col(bin_h) + (iy + 0.5) * col(bin_h) / col(grid_h)       # (R, PH, Gh)
    xx = -col(width) / 2 + pw * col(bin_w) + (ix + 0.5) * col(bin_w) / col(grid_w)        # (R, PW, Gw)
    yy, xx = yy[:, :, None, :, None], xx[:, None, :, None, :]
    cos, sin = [t[:, None, None, None, None] for t in (torch.cos(theta), torch.sin(theta))]
    x = xx * cos + yy * sin + center_x[:, None, None, None, None]
    y = yy * cos - xx * sin + center_y[:, None, None, None, None]
    taken = ((iy[0, 0][None, :] < grid_h[:, None])[:, None, None, :, None]
             & (ix[0, 0][None, :] < grid_w[:, None])[:, None, None, None, :])
    return y, x, taken, grid_h * grid_w


def _corner_weights(coord, size):
    """Low and high pixel indices and their weights along one axis (MXNet's border rules)."""
    coord = coord.clamp(min=0)
    low = torch.floor(coord)
    at_edge = low >= size - 1
    low = torch.where(at_edge, torch.full_like(low, size - 1), low)
    coord = torch.where(at_edge, low, coord)
    high = torch.where(at_edge, low, low + 1)
    frac = coord - low
    return low.long(), high.long(), 1 - frac, frac


@register(_OP, inputs=('data', 'rois'),
          attrs=[('pooled_size', SHAPE), ('spatial_scale', FLOAT), ('sampling_ratio', INT, -1)])
def rroi_align(data, rois, pooled_size, spatial_scale, sampling_ratio):
    """Bilinear average pooling of ``data`` over rotated ROIs.

    Parameters
    ----------
    data : Tensor, shape (N, C, H, W)
    rois : Tensor, shape (R, 6): batch index, center x, center y, width, height, angle (degrees)

    Returns
    -------
    Tensor, shape (R, C, pooled_h, pooled_w)

    Example
    -------
    >>> import neomx as mx
    >>> out = mx.nd.contrib.RROIAlign(mx.nd.ones((1, 2, 8, 8)), mx.nd.array([[0, 4, 4, 4, 4, 30]]),
    ...                               pooled_size=(2, 2), spatial_scale=1.0)
    >>> out.shape, float(out.mean().asscalar())
    ((1, 2, 2, 2), 1.0)
    """
    check(data.dim() == 4, _OP, 'data must be 4-D (N, C, H, W), got shape %s', tuple(data.shape))
    check(rois.dim() == 2 and rois.shape[1] == 6, _OP, 'rois must have shape (R, 6), got %s', tuple(rois.shape))
    check(len(pooled_size) == 2 and min(pooled_size) >= 1, _OP, 'pooled_size must be a positive (h, w), got %s',
          pooled_size)
    batch, channels, height, width = data.shape
    pooled_h, pooled_w = pooled_size
    if data.is_meta or rois.is_meta:        # the sample grid depends on the ROIs' values
        return torch.empty((rois.shape[0], channels, pooled_h, pooled_w), dtype=data.dtype, device=data.device)
    boxes = rois.detach().float()
    y, x, taken, count = _sample_points(boxes, pooled_h, pooled_w, spatial_scale, sampling_ratio)
    inside = taken & (y >= -1.0) & (y <= height) & (x >= -1.0) & (x <= width)
    y_low, y_high, hy, ly = _corner_weights(y, height)
    x_low, x_high, hx, lx = _corner_weights(x, width)
    pixels = data.permute(0, 2, 3, 1).reshape(batch, height * width, channels)
    image = boxes[:, 0].long().clamp(0, batch - 1)[:, None]
    num = rois.shape[0]

    def read(rows, cols):                   # (R, PH, PW, Gh, Gw, C)
        index = (rows * width + cols).reshape(num, -1)
        return pixels[image, index].reshape(rows.shape + (channels,))

    mask = inside.to(data.dtype)[..., None]
    value = ((hy * hx).to(data.dtype)[..., None] * read(y_low, x_low)
             + (hy * lx).to(data.dtype)[..., None] * read(y_low, x_high)
             + (ly * hx).to(data.dtype)[..., None] * read(y_high, x_low)
             + (ly * lx).to(data.dtype)[..., None] * read(y_high, x_high))
    pooled = (value * mask).sum((3, 4)) / count.to(data.dtype)[:, None, None, None]
    return pooled.permute(0, 3, 1, 2).contiguous()
