"""``_contrib_PSROIPooling``: position-sensitive ROI pooling of R-FCN detectors.

MXNet semantics kept here: ROI corners are rounded to whole pixels (halves away from zero),
the right and bottom edges are inclusive (``(x2 + 1) * spatial_scale``), a ROI is at least
0.1 wide and high, and bin ``(ph, pw)`` spans rows ``floor(ph * bin_h + y1)`` to
``ceil((ph + 1) * bin_h + y1)`` clipped to the map. Output channel ``d`` of bin ``(ph, pw)``
averages input channel ``(d * group + gh) * group + gw`` with
``gh = ph * group // pooled_size``; empty bins give 0. The gradient spreads each bin's
gradient evenly over its pixels; the ROIs get none.

Each bin's sum reads four corners of the map's summed-area table, so the work does not grow
with the size of the bins.
"""
import torch
import torch.nn.functional as F

from .registry import FLOAT, INT, check, register

_OP = '_contrib_PSROIPooling'


def _round_away(x):
    """C's ``round``: halves away from zero (torch rounds them to even)."""
    return torch.sign(x) * torch.floor(x.abs() + 0.5)


def _bin_edges(start, extent, pooled_size, limit):
    """First and one-past-last pixel of each of ``pooled_size`` bins per ROI: (R, P) each."""
    steps = torch.arange(pooled_size, dtype=start.dtype, device=start.device)
    size = (extent / pooled_size)[:, None]
    first = torch.floor(steps * size + start[:, None]).clamp(0, limit)
    last = torch.ceil((steps + 1) * size + start[:, None]).clamp(0, limit)
    return first.long(), last.long()


@register(_OP, inputs=('data', 'rois'),
          attrs=[('spatial_scale', FLOAT), ('output_dim', INT), ('pooled_size', INT), ('group_size', INT, 0)])
def psroi_pooling(data, rois, spatial_scale, output_dim, pooled_size, group_size):
    """Position-sensitive average pooling of ``data`` over each ROI.

    Parameters
    ----------
    data : Tensor, shape (N, output_dim * group_size ** 2, H, W)
    rois : Tensor, shape (R, 5): batch index, x1, y1, x2, y2 in image pixels

    Returns
    -------
    Tensor, shape (R, output_dim, pooled_size, pooled_size)

    Example
    -------
    >>> import neomx as mx
    >>> out = mx.nd.contrib.PSROIPooling(mx.nd.ones((1, 8, 6, 6)), mx.nd.array([[0, 0, 0, 5, 5]]),
    ...                                  spatial_scale=1.0, output_dim=2, pooled_size=2)
    >>> out.shape, float(out.sum().asscalar())
    ((1, 2, 2, 2), 8.0)
    """
    group = group_size or pooled_size
    check(data.dim() == 4, _OP, 'data must be 4-D (N, C, H, W), got shape %s', tuple(data.shape))
    check(rois.dim() == 2 and rois.shape[1] == 5, _OP, 'rois must have shape (R, 5), got %s', tuple(rois.shape))
    check(pooled_size >= 1 and output_dim >= 1 and group >= 1, _OP,
          'output_dim, pooled_size and group_size must be positive, got %d, %d, %d',
          output_dim, pooled_size, group_size)
    batch, channels, height, width = data.shape
    check(channels == output_dim * group * group, _OP, 'data has %d channels, expected output_dim * '
          'group_size ** 2 = %d', channels, output_dim * group * group)
    work = torch.float32 if data.dtype in (torch.float16, torch.bfloat16) else data.dtype
    boxes = rois.detach().to(torch.float64)
    x1, y1 = _round_away(boxes[:, 1]) * spatial_scale, _round_away(boxes[:, 2]) * spatial_scale
    x2, y2 = (_round_away(boxes[:, 3]) + 1) * spatial_scale, (_round_away(boxes[:, 4]) + 1) * spatial_scale
    h_first, h_last = _bin_edges(y1, (y2 - y1).clamp(min=0.1), pooled_size, height)     # (R, P)
    w_first, w_last = _bin_edges(x1, (x2 - x1).clamp(min=0.1), pooled_size, width)
    cell = torch.arange(pooled_size, device=data.device) * group // pooled_size
    cell = cell.clamp(max=group - 1)
    channel = ((torch.arange(output_dim, device=data.device)[:, None, None] * group + cell[None, :, None]) * group
               + cell[None, None, :])                                                   # (D, P, P)
    table = F.pad(data.to(work).cumsum(2).cumsum(3), (1, 0, 1, 0)).reshape(-1)           # (N, C, H+1, W+1)
    image = boxes[:, 0].long().clamp(0, batch - 1)
    base = (image[:, None, None, None] * channels + channel[None]) * (height + 1)       # (R, D, P, P)

    def corner(rows, cols):
        index = (base + rows[:, None, :, None]) * (width + 1) + cols[:, None, None, :]
        return table[index]

    sums = (corner(h_last, w_last) - corner(h_first, w_last) - corner(h_last, w_first)
            + corner(h_first, w_first))
    area = ((h_last - h_first)[:, None, :, None] * (w_last - w_first)[:, None, None, :]).to(work)
    out = torch.where(area > 0, sums / area.clamp(min=1), torch.zeros((), dtype=work, device=data.device))
    return out.to(data.dtype)
