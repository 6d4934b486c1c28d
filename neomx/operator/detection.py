"""Object detection operators (``mx.nd.contrib.*``): box IoU, non-maximum suppression, box
encoding and decoding, bipartite matching, ROIAlign and the SSD multibox operators.

Boxes are ``corner`` ``[xmin, ymin, xmax, ymax]`` or ``center`` ``[x, y, width, height]``;
areas are plain products (no +1 pixel convention). MXNet documents most of these operators
as not differentiable and back-propagates zeros through them; neomx does the same (see
:func:`_zero_gradient`). ``box_nms`` copies the gradient of each kept output row back to the
input row it came from, and ``ROIAlign`` is differentiable with respect to its feature map.

Operators whose work depends on the values (NMS, matching, adaptive ROIAlign sampling) only
compute output shapes on ``meta`` tensors.
"""
import math

import torch

from .registry import BOOL, FLOAT, FLOATS, INT, SHAPE, check, choice, register

_FORMATS = ('corner', 'center')


# ------------------------------------------------------------------ helpers
class _ZeroGradientTo(torch.autograd.Function):
    """Identity on ``value`` that back-propagates zeros to ``inputs``."""

    @staticmethod
    def forward(ctx, value, *inputs):
        ctx.input_specs = [(x.shape, x.dtype, x.device) for x in inputs]
        return value.view_as(value)

    @staticmethod
    def backward(ctx, grad):
        zeros = tuple(torch.zeros(shape, dtype=dtype, device=device)
                      for shape, dtype, device in ctx.input_specs)
        return (grad,) + zeros


def _zero_gradient(value, *inputs):
    """``value`` with a zero gradient towards ``inputs`` (those that record gradients).

    MXNet writes zero gradients for operators it does not differentiate; a plain ``detach``
    would instead leave the inputs out of the graph, and a head computed by such an operator
    could not call ``backward`` at all.
    """
    tracked = [x for x in inputs if x is not None and x.requires_grad]
    if not tracked or not torch.is_grad_enabled():
        return value
    return _ZeroGradientTo.apply(value, *tracked)


def has_zero_gradient(tensor):
    """Whether ``tensor`` came from an operator that back-propagates zeros (its head
    gradient is never read, so MXNet's executors do not check its shape)."""
    return type(tensor.grad_fn) is _ZeroGradientTo._backward_cls  # pylint: disable=protected-access


def _not_differentiable(impl):
    """Run ``impl`` without recording; its outputs get zero gradients towards every input."""
    def wrapper(*inputs, **attrs):
        with torch.no_grad():
            outputs = impl(*inputs, **attrs)
        if isinstance(outputs, tuple):
            return tuple(_zero_gradient(out, *inputs) for out in outputs)
        return _zero_gradient(outputs, *inputs)
    wrapper.__name__, wrapper.__doc__ = impl.__name__, impl.__doc__
    return wrapper


def _check_boxes(op, name, boxes, width=4):
    check(boxes.dim() >= 1 and boxes.shape[-1] == width, op,
          '%s must have %d coordinates in its last axis, got shape %s', name, width, boxes.shape)


def _to_corner(boxes, box_format):
    """(..., 4) boxes in ``box_format`` -> corner form."""
    if box_format == 'corner':
        return boxes
    center, half = boxes[..., :2], boxes[..., 2:] / 2
    return torch.cat([center - half, center + half], dim=-1)


def _to_center(boxes):
    """(..., 4) corner boxes -> center form [x, y, width, height]."""
    size = boxes[..., 2:] - boxes[..., :2]
    return torch.cat([boxes[..., :2] + size / 2, size], dim=-1)


def _pairwise_iou(lhs, rhs):
    """IoU of corner boxes lhs (..., N, 4) and rhs (..., M, 4) -> (..., N, M)."""
    lhs, rhs = lhs[..., :, None, :], rhs[..., None, :, :]
    low = torch.maximum(lhs[..., :2], rhs[..., :2])
    high = torch.minimum(lhs[..., 2:], rhs[..., 2:])
    intersection = (high - low).clamp(min=0).prod(-1)
    area_lhs = (lhs[..., 2:] - lhs[..., :2]).prod(-1)
    area_rhs = (rhs[..., 2:] - rhs[..., :2]).prod(-1)
    return intersection / (area_lhs + area_rhs - intersection)


def _greedy_nms(boxes, candidate, overlap_thresh, classes=None, at_threshold=False):
    """Greedy suppression over boxes sorted by decreasing score.

    Parameters
    ----------
    boxes : Tensor, shape (B, N, 4), corner form, sorted best first
    candidate : BoolTensor, shape (B, N)
        Boxes taking part (valid, within top-k); the rest are neither kept nor suppress.
    classes : Tensor, shape (B, N), optional
        When given, a box only suppresses boxes of its own class.
    at_threshold : bool
        Whether an overlap equal to ``overlap_thresh`` suppresses too (``MultiBoxDetection``)
        or only a larger one (``box_nms``).

    Returns
    -------
    BoolTensor (B, N): the boxes kept.
    """
    keep = candidate.clone()
    # One step per candidate rank: box i suppresses the lower-ranked boxes it overlaps,
    # unless a better box suppressed it first.
    for i in range(int(candidate.sum(1).max()) if candidate.numel() else 0):
        iou = _pairwise_iou(boxes[:, i:i + 1], boxes[:, i + 1:])[:, 0]
        overlaps = iou >= overlap_thresh if at_threshold else iou > overlap_thresh
        if classes is not None:
            overlaps &= classes[:, i + 1:] == classes[:, i:i + 1]
        keep[:, i + 1:] &= ~(overlaps & keep[:, i:i + 1])
    return keep


def _rank_by_score(scores, valid):
    """Order (B, N) putting valid entries first by decreasing score, ties in input order."""
    return torch.where(valid, scores, scores.new_tensor(-math.inf)).argsort(dim=1, descending=True, stable=True)


def _take_rows(data, index):
    """Rows ``data[b, index[b, n]]`` of data (B, N, K) -> (B, N', K)."""
    return data.gather(1, index[..., None].expand(-1, -1, data.shape[-1]))


# ------------------------------------------------------------------ box_iou
@register('_contrib_box_iou', inputs=('lhs', 'rhs'), attrs=[('format', choice(*_FORMATS), 'corner')])
@_not_differentiable
def box_iou(lhs, rhs, format):  # pylint: disable=redefined-builtin
    """Intersection over union of every lhs box with every rhs box.

    Parameters
    ----------
    lhs : Tensor, shape (a_1, ..., a_n, 4)
    rhs : Tensor, shape (b_1, ..., b_m, 4)

    Returns
    -------
    Tensor, shape (a_1, ..., a_n, b_1, ..., b_m).
    """
    _check_boxes('box_iou', 'lhs', lhs)
    _check_boxes('box_iou', 'rhs', rhs)
    iou = _pairwise_iou(_to_corner(lhs.reshape(-1, 4), format), _to_corner(rhs.reshape(-1, 4), format))
    return iou.reshape(lhs.shape[:-1] + rhs.shape[:-1])


# ------------------------------------------------------------------ box_nms
def _check_nms_layout(data, coord_start, score_index, id_index):
    op, shape = 'box_nms', tuple(data.shape)
    check(data.dim() >= 2, op, 'data must be at least 2-D (..., num_boxes, width), got shape %s', shape)
    width = data.shape[-1]
    coords = range(coord_start, coord_start + 4)
    check(0 <= coord_start <= width - 4, op,
          'coord_start=%d leaves no room for 4 coordinates in data of shape %s', coord_start, shape)
    check(0 <= score_index < width and score_index not in coords, op,
          'score_index=%d is out of range or among the coordinates for data of shape %s', score_index, shape)
    if id_index >= 0:
        check(id_index < width and id_index not in coords and id_index != score_index, op,
              'id_index=%d is out of range or conflicts with the score or coordinates for data of shape %s',
              id_index, shape)


@register('_contrib_box_nms', aliases=('_contrib_box_non_maximum_suppression',), inputs=('data',),
          attrs=[('overlap_thresh', FLOAT, 0.5), ('valid_thresh', FLOAT, 0.0), ('topk', INT, -1),
                 ('coord_start', INT, 2), ('score_index', INT, 1), ('id_index', INT, -1),
                 ('background_id', INT, -1), ('force_suppress', BOOL, False),
                 ('in_format', choice(*_FORMATS), 'corner'), ('out_format', choice(*_FORMATS), 'corner')],
          output_names=('output0',), hidden_outputs=lambda a: 1)
def box_nms(data, overlap_thresh, valid_thresh, topk, coord_start, score_index, id_index, background_id,
            force_suppress, in_format, out_format):
    """Non-maximum suppression of scored boxes.

    Parameters
    ----------
    data : Tensor, shape (..., N, K)
        N boxes of K values each: a score at ``score_index``, 4 coordinates from
        ``coord_start``, a class id at ``id_index`` (if >= 0), anything else alongside.

    Returns
    -------
    Tensor, shape (..., N, K): the kept boxes by decreasing score, coordinates in
    ``out_format``, then rows of -1. The gradient of a kept row flows back to its input row.
    """
    _check_nms_layout(data, coord_start, score_index, id_index)
    if data.is_meta:
        return torch.empty_like(data)
    if topk == 0:       # MXNet then returns the input untouched
        return data.clone()
    rows = data.reshape((-1,) + data.shape[-2:])
    with torch.no_grad():
        source, num_kept = _nms_selection(rows, overlap_thresh, valid_thresh, topk, coord_start, score_index,
                                          id_index, background_id, force_suppress, in_format)
    is_kept = torch.arange(rows.shape[1], device=rows.device) < num_kept
    out = torch.where(is_kept[..., None], _take_rows(rows, source), rows.new_tensor(-1.0))
    if in_format != out_format:
        out = _convert_coordinates(out, coord_start, out_format, is_kept)
    return out.reshape(data.shape)


def _nms_selection(rows, overlap_thresh, valid_thresh, topk, coord_start, score_index, id_index,
                   background_id, force_suppress, in_format):
    """Which input rows (B, N, K) the output shows, in output order.

    Returns
    -------
    source : LongTensor (B, N)
        Input row of each output slot: kept boxes first, by decreasing score.
    num_kept : LongTensor (B, 1)
        How many leading slots hold kept boxes.
    """
    scores = rows[..., score_index]
    valid = scores > valid_thresh
    classes = rows[..., id_index] if id_index >= 0 else None
    if classes is not None:     # background_id -1 (the default) drops rows whose id is -1
        valid &= classes != background_id
    order = _rank_by_score(scores, valid)
    candidate = valid.gather(1, order)
    if topk > 0:
        candidate[:, topk:] = False
    boxes = _to_corner(_take_rows(rows[..., coord_start:coord_start + 4], order), in_format)
    per_class = classes is not None and not force_suppress
    keep = _greedy_nms(boxes, candidate, overlap_thresh, classes.gather(1, order) if per_class else None)
    kept_first = keep.to(torch.int8).argsort(dim=1, descending=True, stable=True)
    return order.gather(1, kept_first), keep.sum(1, keepdim=True)


def _convert_coordinates(rows, coord_start, out_format, is_kept):
    """Rows (B, N, K) with the kept rows' coordinates converted to ``out_format``.

    MXNet copies the output gradient back unchanged, ignoring the conversion; so does this.
    """
    coords = rows[..., coord_start:coord_start + 4]
    converted = _to_center(coords) if out_format == 'center' else _to_corner(coords, 'center')
    converted = coords + (converted - coords).detach()
    converted = torch.where(is_kept[..., None], converted, coords)
    return torch.cat([rows[..., :coord_start], converted, rows[..., coord_start + 4:]], dim=-1)


# ----------------------------------------------------------- box encoding
def _center_offsets(boxes, anchors):
    """Corner boxes relative to corner anchors (..., 4): [dx/w, dy/h, log(w'/w), log(h'/h)]."""
    boxes, anchors = _to_center(boxes), _to_center(anchors)
    shift = (boxes[..., :2] - anchors[..., :2]) / anchors[..., 2:]
    return torch.cat([shift, torch.log(boxes[..., 2:] / anchors[..., 2:])], dim=-1)


def _apply_offsets(offsets, anchors):
    """Inverse of :func:`_center_offsets` for center-form anchors: corner boxes (..., 4)."""
    center = offsets[..., :2] * anchors[..., 2:] + anchors[..., :2]
    half = torch.exp(offsets[..., 2:]) * anchors[..., 2:] / 2
    return torch.cat([center - half, center + half], dim=-1)


@register('_contrib_box_encode', inputs=('samples', 'matches', 'anchors', 'refs', 'means', 'stds'),
          num_outputs=2)
@_not_differentiable
def box_encode(samples, matches, anchors, refs, means, stds):
    """Regression targets of positive anchors towards their matched reference boxes.

    Parameters
    ----------
    samples : Tensor, shape (B, N): > 0.5 marks a positive anchor
    matches : Tensor, shape (B, N): index of each anchor's reference box, in [0, M)
    anchors : Tensor, shape (B, N, 4), corner form
    refs : Tensor, shape (B, M, 4), corner form
    means, stds : Tensor, shape (4,): the targets are normalised as (offset - mean) / std

    Returns
    -------
    targets : Tensor, shape (B, N, 4), zero for anchors that are not positive
    masks : Tensor, shape (B, N, 4), 1 for positive anchors, else 0
    """
    batch, num = samples.shape[:2] if samples.dim() == 2 else (None, None)
    check(samples.dim() == 2 and tuple(matches.shape) == (batch, num)
          and tuple(anchors.shape) == (batch, num, 4) and refs.dim() == 3 and refs.shape[0] == batch
          and refs.shape[2] == 4 and tuple(means.shape) == (4,) and tuple(stds.shape) == (4,), 'box_encode',
          'expected samples (B, N), matches (B, N), anchors (B, N, 4), refs (B, M, 4), means (4,) and '
          'stds (4,), got %s, %s, %s, %s, %s and %s', samples.shape, matches.shape,
          anchors.shape, refs.shape, means.shape, stds.shape)
    matched = _take_rows(refs, matches.long())
    positive = (samples > 0.5)[..., None].expand_as(anchors)
    targets = (_center_offsets(matched, anchors) - means) / stds
    return torch.where(positive, targets, torch.zeros_like(targets)), positive.to(anchors.dtype)


@register('_contrib_box_decode', inputs=('data', 'anchors'),
          attrs=[('std0', FLOAT, 1.0), ('std1', FLOAT, 1.0), ('std2', FLOAT, 1.0), ('std3', FLOAT, 1.0),
                 ('clip', FLOAT, -1.0), ('format', choice(*_FORMATS), 'center')])
@_not_differentiable
def box_decode(data, anchors, std0, std1, std2, std3, clip, format):  # pylint: disable=redefined-builtin
    """Corner boxes from center offsets predicted relative to anchors.

    Parameters
    ----------
    data : Tensor, shape (B, N, 4): offsets, scaled by (std0, ..., std3) before use
    anchors : Tensor, shape (1, N, 4), in ``format``
    clip : float
        When positive, the upper bound of the scaled log-size offsets.

    Returns
    -------
    Tensor, shape (B, N, 4), corner form.
    """
    check(data.dim() == 3 and data.shape[2] == 4 and anchors.dim() == 3 and anchors.shape[0] == 1
          and anchors.shape[1:] == data.shape[1:], 'box_decode',
          'expected data (B, N, 4) and anchors (1, N, 4), got %s and %s', data.shape, anchors.shape)
    offsets = data * data.new_tensor((std0, std1, std2, std3))
    if clip > 0:
        offsets = torch.cat([offsets[..., :2], offsets[..., 2:].clamp(max=clip)], dim=-1)
    return _apply_offsets(offsets, _to_center(_to_corner(anchors, format)))


# ------------------------------------------------------- bipartite matching
def _greedy_matching(scores, threshold, limit):
    """Repeatedly match the best remaining (row, column) pair scoring at least ``threshold``.

    Parameters
    ----------
    scores : Tensor, shape (B, N, M): higher is better
    limit : int, the most pairs to match

    Returns
    -------
    row_match : LongTensor (B, N), the column matched to each row or -1
    col_match : LongTensor (B, M), the row matched to each column or -1
    """
    batch, rows, cols = scores.shape
    row_match = torch.full((batch, rows), -1, dtype=torch.long, device=scores.device)
    col_match = torch.full((batch, cols), -1, dtype=torch.long, device=scores.device)
    open_pairs = scores >= threshold
    samples = torch.arange(batch, device=scores.device)
    for _ in range(limit):
        best, flat = torch.where(open_pairs, scores, scores.new_tensor(-math.inf)).flatten(1).max(1)
        found = torch.isfinite(best)
        if not found.any():
            break
        row, col = flat // cols, flat % cols
        row_match[samples[found], row[found]] = col[found]
        col_match[samples[found], col[found]] = row[found]
        open_pairs[samples, row] &= ~found[:, None]
        open_pairs[samples, :, col] &= ~found[:, None]
    return row_match, col_match


@register('_contrib_bipartite_matching', inputs=('data',),
          attrs=[('is_ascend', BOOL, False), ('threshold', FLOAT), ('topk', INT, -1)], num_outputs=2)
@_not_differentiable
def bipartite_matching(data, is_ascend, threshold, topk):
    """Greedy bipartite matching of a score matrix, best scores first.

    Parameters
    ----------
    data : Tensor, shape (..., N, M)
        Scores of N rows against M columns; with ``is_ascend`` lower scores are better and
        pairs above ``threshold`` are ignored, otherwise pairs below it are.

    Returns
    -------
    row_match : Tensor, shape (..., N): matched column per row, -1 if none
    col_match : Tensor, shape (..., M): matched row per column, -1 if none
    """
    check(data.dim() >= 2, 'bipartite_matching', 'the score matrix data must be at least 2-D (..., N, M), '
          'got shape %s', data.shape)
    lead, (rows, cols) = data.shape[:-2], data.shape[-2:]
    if data.is_meta:
        return torch.empty(lead + (rows,), device='meta'), torch.empty(lead + (cols,), device='meta')
    sign = -1.0 if is_ascend else 1.0
    # MXNet stops only after matching topk + 1 pairs; topk <= 0 means no limit.
    limit = min(rows, cols) if topk <= 0 else min(topk + 1, rows, cols)
    row_match, col_match = _greedy_matching(sign * data.reshape(-1, rows, cols), sign * threshold, limit)
    row_match, col_match = row_match.reshape(lead + (rows,)), col_match.reshape(lead + (cols,))
    return row_match.to(data.dtype), col_match.to(data.dtype)


# ---------------------------------------------------------------- ROIAlign
def _sampling_weights(start, bin_size, samples, max_samples, pooled, size):
    """Bilinear weights of ROIAlign's sample points along one image axis.

    Sample ``s`` of bin ``p`` lies at ``start + (p + (s + 0.5) / samples) * bin_size``; points
    more than one pixel outside the image count as zero, points within that margin clamp to
    the border pixel.

    Parameters
    ----------
    start, bin_size : Tensor, shape (R,)
    samples : Tensor, shape (R,): sample points per bin for each ROI
    max_samples : int, the largest of them

    Returns
    -------
    Tensor, shape (R, pooled, size): the average over a bin's samples of their weights on
    each pixel.
    """
    steps = torch.arange(max_samples, dtype=start.dtype, device=start.device)
    bins = torch.arange(pooled, dtype=start.dtype, device=start.device)[:, None]
    start, bin_size, samples = start[:, None, None], bin_size[:, None, None], samples[:, None, None]
    points = start + (bins + (steps + 0.5) / samples) * bin_size                     # (R, pooled, S)
    inside = (points >= -1) & (points <= size) & (steps < samples)
    points = points.clamp(min=0, max=size - 1)
    low = points.floor().long().clamp(max=size - 1)
    high = (low + 1).clamp(max=size - 1)
    frac = points - low
    weights = torch.zeros(start.shape[0], pooled, size, dtype=start.dtype, device=start.device)
    weights.scatter_add_(2, low, torch.where(inside, 1 - frac, 0.0))
    weights.scatter_add_(2, high, torch.where(inside, frac, 0.0))
    return weights / samples


def _roi_geometry(rois, pooled_size, spatial_scale, sample_ratio, aligned):
    """Per ROI and axis (y, x): start, bin size and samples per bin, each (R,)."""
    offset = 0.5 if aligned else 0.0
    corners = rois[:, 1:] * spatial_scale - offset                    # x1, y1, x2, y2
    geometry = []
    for axis, pooled in ((1, pooled_size[0]), (0, pooled_size[1])):
        extent = corners[:, axis + 2] - corners[:, axis]
        if not aligned:      # legacy ROIAlign: ROIs span at least one pixel
            extent = extent.clamp(min=1.0)
        bin_size = extent / pooled
        samples = (torch.full_like(bin_size, sample_ratio) if sample_ratio > 0
                   else torch.ceil(bin_size).clamp(min=1))
        geometry.append((corners[:, axis], bin_size, samples))
    return geometry


@register('_contrib_ROIAlign', inputs=('data', 'rois'),
          attrs=[('pooled_size', SHAPE), ('spatial_scale', FLOAT), ('sample_ratio', INT, -1),
                 ('position_sensitive', BOOL, False), ('aligned', BOOL, False)])
def roi_align(data, rois, pooled_size, spatial_scale, sample_ratio, position_sensitive, aligned):
    """Average of bilinearly sampled points in each bin of each region of interest.

    Parameters
    ----------
    data : Tensor, shape (N, C, H, W)
    rois : Tensor, shape (R, 5): [batch_index, x1, y1, x2, y2] in image coordinates
        (scaled by ``spatial_scale``); a negative batch index gives zeros.

    Returns
    -------
    Tensor, shape (R, C, PH, PW), or (R, C / (PH * PW), PH, PW) when ``position_sensitive``:
    output channel c of bin (i, j) then reads input channel (c * PH + i) * PW + j.
    Differentiable with respect to data; rois get zero gradients.
    """
    op = 'ROIAlign'
    check(data.dim() == 4, op, 'data must be 4-D (N, C, H, W), got shape %s', data.shape)
    check(rois.dim() == 2 and rois.shape[1] == 5, op, 'rois must have shape (R, 5), got %s', rois.shape)
    check(len(pooled_size) == 2 and min(pooled_size) > 0, op, 'pooled_size must be a positive (h, w), got %s',
          pooled_size)
    channels, bins = data.shape[1], pooled_size[0] * pooled_size[1]
    check(not position_sensitive or channels % bins == 0, op, 'position-sensitive pooling needs channels '
          'divisible by %d, got data of shape %s', bins, data.shape)
    out_channels = channels // bins if position_sensitive else channels
    if data.is_meta and sample_ratio <= 0:       # the sampling depends on the ROIs' values
        return data.new_empty((rois.shape[0], out_channels) + tuple(pooled_size))
    with torch.no_grad():
        per_axis = [_sampling_weights(start, bin_size, samples, _max_samples(sample_ratio, samples),
                                      pooled, size)
                    for (start, bin_size, samples), pooled, size
                    in zip(_roi_geometry(rois.to(data.dtype), pooled_size, spatial_scale, sample_ratio, aligned),
                           pooled_size, data.shape[2:])]
        rows, cols = per_axis
        # Fold each ROI's image choice into its row weights: one contraction over all images.
        image = rois[:, 0].long()[:, None] == torch.arange(data.shape[0], device=rois.device)
        rows = (rows[:, :, None, :] * image[:, None, :, None]).flatten(2)          # (R, PH, N*H)
    stacked = data.transpose(0, 1).flatten(1, 2)                                     # (C, N*H, W)
    out = torch.einsum('rcpx,rqx->rcpq', torch.einsum('rpk,ckx->rcpx', rows, stacked), cols)
    if position_sensitive:
        out = _position_sensitive_bins(out, out_channels, pooled_size)
    return _zero_gradient(out, rois)


def _max_samples(sample_ratio, samples):
    """Sample points per bin to lay out: the fixed ratio, or the most any ROI needs."""
    if sample_ratio > 0:
        return sample_ratio
    return int(samples.max()) if samples.numel() else 1


def _position_sensitive_bins(pooled, out_channels, pooled_size):
    """From (R, C, PH, PW) pooled over every channel, keep for each output channel c and bin
    (i, j) the input channel (c * PH + i) * PW + j: (R, C / (PH * PW), PH, PW)."""
    bins = pooled_size[0] * pooled_size[1]
    grouped = pooled.reshape(pooled.shape[0], out_channels, bins, bins)
    return grouped.diagonal(dim1=2, dim2=3).reshape((pooled.shape[0], out_channels) + tuple(pooled_size))


# ----------------------------------------------------------- MultiBoxPrior
def _prior_half_sizes(sizes, ratios, aspect):
    """Half widths and heights (A,) of the anchors at one location: every size with the first
    ratio, then the first size with every other ratio. Widths are scaled by the feature map's
    height / width so that ratio 1 anchors are square in the image."""
    shapes = [(size, ratios[0]) for size in sizes] + [(sizes[0], ratio) for ratio in ratios[1:]]
    half_w = [size * aspect * math.sqrt(ratio) / 2 for size, ratio in shapes]
    half_h = [size / math.sqrt(ratio) / 2 for size, ratio in shapes]
    return half_w, half_h


@register('_contrib_MultiBoxPrior', inputs=('data',),
          attrs=[('sizes', FLOATS, (1.0,)), ('ratios', FLOATS, (1.0,)), ('clip', BOOL, False),
                 ('steps', FLOATS, (-1.0, -1.0)), ('offsets', FLOATS, (0.5, 0.5))])
@_not_differentiable
def multibox_prior(data, sizes, ratios, clip, steps, offsets):
    """SSD anchor boxes centred on every location of a feature map.

    Parameters
    ----------
    data : Tensor, shape (N, C, H, W); only its height and width are used
    steps : (step_y, step_x) between anchor centres, in [0, 1] image units; -1 for 1/H, 1/W
    offsets : (offset_y, offset_x) of the first centre, in steps

    Returns
    -------
    Tensor, shape (1, H * W * A, 4), float32 corner boxes in [0, 1] image units, ordered by
    row, column, then anchor, with A = len(sizes) + len(ratios) - 1.
    """
    check(data.dim() == 4, 'MultiBoxPrior', 'data must be 4-D (N, C, H, W), got shape %s', data.shape)
    check(len(steps) == 2 and len(offsets) == 2, 'MultiBoxPrior',
          'steps %s and offsets %s must each hold (y, x)', steps, offsets)
    height, width = data.shape[2:]
    step_y = steps[0] if steps[0] > 0 else 1.0 / height
    step_x = steps[1] if steps[1] > 0 else 1.0 / width
    half_w, half_h = _prior_half_sizes(sizes, ratios, height / width)
    options = dict(dtype=torch.float32, device=data.device)
    center_y = (torch.arange(height, **options) + offsets[0]) * step_y
    center_x = (torch.arange(width, **options) + offsets[1]) * step_x
    centers = torch.stack(torch.meshgrid(center_x, center_y, indexing='xy'), dim=-1)      # (H, W, 2)
    half = torch.stack([torch.tensor(half_w, **options), torch.tensor(half_h, **options)], dim=-1)
    centers, half = centers[:, :, None, :], half[None, None]
    anchors = torch.cat([centers - half, centers + half], dim=-1).reshape(1, -1, 4)
    return anchors.clamp(0, 1) if clip else anchors
