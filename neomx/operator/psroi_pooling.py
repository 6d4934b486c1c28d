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

from .registry import BOOL, FLOAT, INT, check, register

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


# ------------------------------------------------------ deformable PS ROI pooling
_DEFORMABLE = '_contrib_DeformablePSROIPooling'


def _deformable_inputs(attrs):
    return ('trans',) if attrs['no_trans'] else ()


def _bilinear(planes, y, x, height, width):
    """Bilinear samples of ``planes`` (flat) at (y, x) within the map; ``planes`` offsets
    (same shape as y) index the first pixel of each sample's plane."""
    y0, x0 = torch.floor(y), torch.floor(x)
    y1, x1 = torch.ceil(y), torch.ceil(x)
    dy, dx = y - y0, x - x0

    def at(rows, cols):
        return planes[1](planes[0] + rows.long() * width + cols.long())
    return ((1 - dx) * (1 - dy) * at(y0, x0) + (1 - dx) * dy * at(y1, x0)
            + dx * (1 - dy) * at(y0, x1) + dx * dy * at(y1, x1))


@register(_DEFORMABLE, inputs=('data', 'rois', 'trans'), optional_inputs=_deformable_inputs,
          attrs=[('spatial_scale', FLOAT), ('output_dim', INT), ('group_size', INT), ('pooled_size', INT),
                 ('part_size', INT, 0), ('sample_per_part', INT, 1), ('trans_std', FLOAT, 0.0),
                 ('no_trans', BOOL, False)],
          num_outputs=2, num_visible_outputs=1, output_names=('output', 'top_count'))
def deformable_psroi_pooling(data, rois, trans, spatial_scale, output_dim, group_size, pooled_size, part_size,
                             sample_per_part, trans_std, no_trans):
    """Deformable position-sensitive ROI pooling (Dai et al. 2017, Deformable R-FCN).

    Each bin of each ROI averages ``sample_per_part`` x ``sample_per_part`` bilinear samples of
    its position-sensitive channel, the bin shifted by ``trans`` (scaled by ``trans_std`` and
    the ROI's size) unless ``no_trans``. ROI corners are rounded, the right and bottom edges
    inclusive, and half-pixel centred as in MXNet; samples more than half a pixel outside the
    map are skipped.

    Parameters
    ----------
    data : Tensor, shape (N, output_dim * group_size ** 2, H, W)
    rois : Tensor, shape (R, 5): batch index, x1, y1, x2, y2 in image pixels
    trans : Tensor, shape (R, 2 * num_classes, part_size, part_size): (x, y) offsets per
        class; output channel d belongs to class ``d // (output_dim / num_classes)``

    Returns
    -------
    (output (R, output_dim, pooled_size, pooled_size), top_count: samples taken per bin).
    Differentiable with respect to data and trans.
    """
    op = 'DeformablePSROIPooling'
    check(data.dim() == 4, op, 'data must be 4-D (N, C, H, W), got shape %s', data.shape)
    check(rois.dim() == 2 and rois.shape[1] == 5, op, 'rois must have shape (R, 5), got %s', rois.shape)
    check(min(output_dim, group_size, pooled_size, sample_per_part) >= 1, op, 'output_dim, group_size, '
          'pooled_size and sample_per_part must be positive')
    batch, channels, height, width = data.shape
    check(channels == output_dim * group_size * group_size, op, 'data has %d channels, expected output_dim * '
          'group_size ** 2 = %d', channels, output_dim * group_size * group_size)
    part = part_size if part_size > 0 else pooled_size
    num_classes = 1 if no_trans else trans.shape[1] // 2
    check(no_trans or (trans.dim() == 4 and trans.shape[0] == rois.shape[0] and trans.shape[2:] == (part, part)
                       and num_classes >= 1 and output_dim % num_classes == 0), op,
          'trans must have shape (R, 2 * num_classes, %d, %d) with output_dim divisible by num_classes, got %s',
          part, part, None if trans is None else trans.shape)
    work = torch.float32 if data.dtype in (torch.float16, torch.bfloat16) else data.dtype
    dev = data.device
    boxes = rois.detach().to(work)
    start_x = _round_away(boxes[:, 1]) * spatial_scale - 0.5
    start_y = _round_away(boxes[:, 2]) * spatial_scale - 0.5
    roi_w = ((_round_away(boxes[:, 3]) + 1) * spatial_scale - 0.5 - start_x).clamp(min=0.1)
    roi_h = ((_round_away(boxes[:, 4]) + 1) * spatial_scale - 0.5 - start_y).clamp(min=0.1)
    bins = torch.arange(pooled_size, device=dev)
    steps = torch.arange(sample_per_part, device=dev, dtype=work)
    depth = torch.arange(output_dim, device=dev)
    if no_trans:
        shift_x = shift_y = torch.zeros((rois.shape[0], output_dim, pooled_size, pooled_size), dtype=work, device=dev)
    else:
        cells = (bins.to(work) / pooled_size * part).floor().long()                     # part cell of each bin
        klass = depth // (output_dim // num_classes)
        offsets = trans.to(work)[:, (2 * klass)[:, None], :, :], trans.to(work)[:, (2 * klass + 1)[:, None], :, :]
        shift_x, shift_y = (o[:, :, 0][:, :, cells][:, :, :, cells] * trans_std for o in offsets)
    # sample coordinates: (R, D, P, P, S, S)
    bin_w, bin_h = roi_w / pooled_size, roi_h / pooled_size
    r = (slice(None),) + (None,) * 5
    x = (bins.to(work)[None, None, None, :, None, None] * bin_w[r] + start_x[r]
         + shift_x[..., None, None] * roi_w[r] + steps[None, None, None, None, None, :] * (bin_w / sample_per_part)[r])
    y = (bins.to(work)[None, None, :, None, None, None] * bin_h[r] + start_y[r]
         + shift_y[..., None, None] * roi_h[r] + steps[None, None, None, None, :, None] * (bin_h / sample_per_part)[r])
    inside = (x >= -0.5) & (x <= width - 0.5) & (y >= -0.5) & (y <= height - 0.5)
    x, y = x.clamp(0, width - 1), y.clamp(0, height - 1)
    cell = (bins * group_size // pooled_size).clamp(max=group_size - 1)
    channel = (depth[:, None, None] * group_size + cell[None, :, None]) * group_size + cell[None, None, :]
    image = boxes[:, 0].long().clamp(0, batch - 1)
    plane = ((image[:, None, None, None] * channels + channel[None]) * height * width)[..., None, None]
    flat = data.to(work).reshape(-1)
    samples = _bilinear((plane.expand_as(x), lambda index: flat[index]), y, x, height, width)
    count = inside.sum((-2, -1)).to(work)
    total = torch.where(inside, samples, samples.new_zeros(())).sum((-2, -1))
    out = torch.where(count > 0, total / count.clamp(min=1), total.new_zeros(()))
    return out.to(data.dtype), count.to(data.dtype)
