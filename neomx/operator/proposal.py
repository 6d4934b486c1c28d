"""Region proposal operators of Faster R-CNN: ``_contrib_Proposal`` (one image) and
``_contrib_MultiProposal`` (a batch).

MXNet semantics kept here (pixel boxes with inclusive corners, so widths are
``x2 - x1 + 1``):

* Anchors: the ``feature_stride`` square at the origin, reshaped for each ratio (width
  ``round(sqrt(floor(area / ratio)))``, height ``round(width * ratio)``) then scaled by each
  scale, ratio-major; anchor ``a`` at feature cell ``(h, w)`` is shifted by
  ``(w, h) * feature_stride``. The foreground score of anchor ``a`` is ``cls_prob`` channel
  ``num_anchors + a``; its deltas are ``bbox_pred`` channels ``4a..4a+3`` (dx, dy, dw, dh).
* Decoded boxes are clipped to the image (``im_info`` rows: height, width, scale). Cells past
  ``im_info / feature_stride`` and boxes smaller than ``rpn_min_size * scale`` get score -1
  (the latter also grow by ``rpn_min_size`` in each direction).
* The ``rpn_pre_nms_top_n`` best (stable order at ties) go through greedy non-maximum
  suppression (IoU above ``threshold``) until ``rpn_post_nms_top_n`` are kept; fewer kept
  boxes repeat cyclically to fill the output.

The outputs are rows ``(batch index, x1, y1, x2, y2)`` and, with ``output_score``, their
scores. Both operators back-propagate zeros, as MXNet's.
"""
import math

import torch

from .detection import _not_differentiable
from .registry import BOOL, FLOAT, FLOATS, INT, check, register


def _base_anchors(stride, scales, ratios):
    """(A, 4) anchors around the stride square at the origin, ratio-major (MXNet's order)."""
    size = float(stride)
    center = (size - 1) / 2
    anchors = []
    for ratio in ratios:
        width = math.floor(math.sqrt(math.floor(size * size / ratio)) + 0.5)
        height = math.floor(width * ratio + 0.5)
        for scale in scales:
            half_w, half_h = (width * scale - 1) / 2, (height * scale - 1) / 2
            anchors.append([center - half_w, center - half_h, center + half_w, center + half_h])
    return anchors


def _decode(anchors, deltas, iou_loss):
    """Boxes (K, 4) from anchors (K, 4) and deltas (K, 4)."""
    if iou_loss:                # the deltas move the corners directly
        return anchors + deltas
    width = anchors[:, 2] - anchors[:, 0] + 1
    height = anchors[:, 3] - anchors[:, 1] + 1
    center_x, center_y = anchors[:, 0] + 0.5 * (width - 1), anchors[:, 1] + 0.5 * (height - 1)
    pred_x, pred_y = deltas[:, 0] * width + center_x, deltas[:, 1] * height + center_y
    pred_w, pred_h = torch.exp(deltas[:, 2]) * width, torch.exp(deltas[:, 3]) * height
    return torch.stack([pred_x - 0.5 * (pred_w - 1), pred_y - 0.5 * (pred_h - 1),
                        pred_x + 0.5 * (pred_w - 1), pred_y + 0.5 * (pred_h - 1)], dim=1)


def _overlaps(first, second):
    """IoU (pixel boxes, inclusive corners) of every box of ``first`` (M, 4) with every box
    of ``second`` (K, 4): (M, K)."""
    first, second = first[:, None, :], second[None, :, :]
    width = (torch.minimum(first[..., 2], second[..., 2]) - torch.maximum(first[..., 0], second[..., 0]) + 1)
    height = (torch.minimum(first[..., 3], second[..., 3]) - torch.maximum(first[..., 1], second[..., 1]) + 1)
    overlap = width.clamp(min=0) * height.clamp(min=0)

    def area(b):
        return (b[..., 2] - b[..., 0] + 1) * (b[..., 3] - b[..., 1] + 1)
    return overlap / (area(first) + area(second) - overlap)


_BLOCK = 256


def _greedy_keep(boxes, threshold, limit):
    """Indices of the boxes (sorted best first) that greedy suppression keeps, at most ``limit``.

    The boxes go in blocks: boxes already kept suppress a block at once; inside it, the
    greedy answer is the fixed point of ``keep[j] = alive[j] and no kept i < j overlaps j``,
    reached from ``keep = alive`` after at most one pass per suppression chain (pass t
    settles box t), which costs a few block-sized steps instead of one step per box.
    """
    kept = boxes.new_zeros((0, 4))
    keep = []
    for begin in range(0, len(boxes), _BLOCK):
        block = boxes[begin:begin + _BLOCK]
        alive = ~(_overlaps(kept, block) > threshold).any(0) if len(kept) else \
            torch.ones(len(block), dtype=torch.bool, device=boxes.device)
        suppresses = (_overlaps(block, block) > threshold).triu(1)
        chosen = alive
        while True:
            settled = alive & ~(suppresses & chosen[:, None]).any(0)
            if torch.equal(settled, chosen):
                break
            chosen = settled
        index = torch.nonzero(chosen).reshape(-1)
        keep.extend((index + begin).tolist())
        if len(keep) >= limit:
            return keep[:limit]
        kept = torch.cat([kept, block[index]])
    return keep


def _propose(scores, deltas, info, anchors, stride, pre_nms, post_nms, threshold, min_size, iou_loss):
    """Proposals of one image: scores (A, H, W), deltas (4A, H, W), info (3,) -> (P, 4), (P,)."""
    num, height, width = scores.shape
    shift_y = torch.arange(height, dtype=scores.dtype, device=scores.device) * stride
    shift_x = torch.arange(width, dtype=scores.dtype, device=scores.device) * stride
    shifts = torch.stack(torch.meshgrid(shift_x, shift_y, indexing='xy'), -1).repeat(1, 1, 2)   # (H, W, 4)
    cell_anchors = (shifts[:, :, None, :] + anchors[None, None]).reshape(-1, 4)      # order (h, w, a)
    cell_deltas = deltas.reshape(num, 4, height, width).permute(2, 3, 0, 1).reshape(-1, 4)
    score = scores.permute(1, 2, 0).reshape(-1).clone()
    im_height, im_width, im_scale = (float(v) for v in info)
    boxes = _decode(cell_anchors, cell_deltas, iou_loss)
    limits = boxes.new_tensor([im_width - 1, im_height - 1, im_width - 1, im_height - 1])
    boxes = torch.minimum(boxes, limits).clamp(min=0)
    rows = torch.arange(height, device=scores.device)[:, None, None].expand(height, width, num).reshape(-1)
    cols = torch.arange(width, device=scores.device)[None, :, None].expand(height, width, num).reshape(-1)
    score[(rows >= int(im_height / stride)) | (cols >= int(im_width / stride))] = -1
    smallest = min_size * im_scale
    small = ((boxes[:, 2] - boxes[:, 0] + 1) < smallest) | ((boxes[:, 3] - boxes[:, 1] + 1) < smallest)
    grow = boxes.new_tensor([-smallest / 2, -smallest / 2, smallest / 2, smallest / 2])
    boxes = torch.where(small[:, None], boxes + grow, boxes)
    score[small] = -1
    count = len(score) if pre_nms <= 0 else min(pre_nms, len(score))
    order = torch.sort(score, descending=True, stable=True).indices[:count]
    boxes, score = boxes[order], score[order]
    keep = _greedy_keep(boxes, threshold, post_nms)
    if not keep:
        return boxes.new_zeros((post_nms, 4)), score.new_zeros(post_nms)
    chosen = torch.tensor(keep, device=boxes.device)[torch.arange(post_nms, device=boxes.device) % len(keep)]
    return boxes[chosen], score[chosen]


def _check_inputs(op, cls_prob, bbox_pred, im_info, num_anchors):
    check(cls_prob.dim() == 4 and cls_prob.shape[1] == 2 * num_anchors, op, 'cls_prob must have shape '
          '(batch, 2 * %d anchors, H, W), got %s', num_anchors, tuple(cls_prob.shape))
    batch, _, height, width = cls_prob.shape
    check(tuple(bbox_pred.shape) == (batch, 4 * num_anchors, height, width), op,
          'bbox_pred must have shape %s, got %s', (batch, 4 * num_anchors, height, width), tuple(bbox_pred.shape))
    check(tuple(im_info.shape) == (batch, 3), op, 'im_info must have shape %s, got %s', (batch, 3),
          tuple(im_info.shape))


def _proposals(op, cls_prob, bbox_pred, im_info, rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold,
               rpn_min_size, scales, ratios, feature_stride, output_score, iou_loss):
    anchors_list = _base_anchors(feature_stride, scales, ratios)
    num = len(anchors_list)
    _check_inputs(op, cls_prob, bbox_pred, im_info, num)
    batch = cls_prob.shape[0]
    post = rpn_post_nms_top_n
    if cls_prob.is_meta:
        return (torch.empty((batch * post, 5), dtype=cls_prob.dtype, device='meta'),
                torch.empty((batch * post, 1), dtype=cls_prob.dtype, device='meta'))
    anchors = torch.tensor(anchors_list, dtype=torch.float32, device=cls_prob.device)
    rois, scores = [], []
    for b in range(batch):
        boxes, score = _propose(cls_prob[b, num:].float(), bbox_pred[b].float(), im_info[b].float(), anchors,
                                feature_stride, rpn_pre_nms_top_n, post, threshold, rpn_min_size, iou_loss)
        rois.append(torch.cat([boxes.new_full((post, 1), float(b)), boxes], dim=1))
        scores.append(score[:, None])
    return torch.cat(rois).to(cls_prob.dtype), torch.cat(scores).to(cls_prob.dtype)


_ATTRS = [('rpn_pre_nms_top_n', INT, 6000), ('rpn_post_nms_top_n', INT, 300), ('threshold', FLOAT, 0.7),
          ('rpn_min_size', INT, 16), ('scales', FLOATS, (4.0, 8.0, 16.0, 32.0)), ('ratios', FLOATS, (0.5, 1.0, 2.0)),
          ('feature_stride', INT, 16), ('output_score', BOOL, False), ('iou_loss', BOOL, False)]
_SPEC = dict(inputs=('cls_prob', 'bbox_pred', 'im_info'), attrs=_ATTRS, num_outputs=2,
             num_visible_outputs=lambda a: 2 if a['output_score'] else 1, output_names=('output', 'score'))


@register('_contrib_Proposal', **_SPEC)
@_not_differentiable
def proposal(cls_prob, bbox_pred, im_info, **attrs):
    """Region proposals of one image from RPN scores and box deltas.

    Parameters
    ----------
    cls_prob : Tensor, shape (1, 2A, H, W), A = len(scales) * len(ratios)
    bbox_pred : Tensor, shape (1, 4A, H, W)
    im_info : Tensor, shape (1, 3): image height, width, scale

    Returns
    -------
    rois : Tensor, shape (rpn_post_nms_top_n, 5): 0, x1, y1, x2, y2
    score : Tensor, shape (rpn_post_nms_top_n, 1), shown with ``output_score``
    """
    check(cls_prob.shape[0] == 1, '_contrib_Proposal', 'takes one image (batch size 1), got cls_prob of '
          'shape %s; use MultiProposal for a batch', tuple(cls_prob.shape))
    return _proposals('_contrib_Proposal', cls_prob, bbox_pred, im_info, **attrs)


@register('_contrib_MultiProposal', **_SPEC)
@_not_differentiable
def multi_proposal(cls_prob, bbox_pred, im_info, **attrs):
    """Region proposals of each image of a batch (see ``Proposal``).

    Parameters
    ----------
    cls_prob : Tensor, shape (B, 2A, H, W)
    bbox_pred : Tensor, shape (B, 4A, H, W)
    im_info : Tensor, shape (B, 3)

    Returns
    -------
    rois : Tensor, shape (B * rpn_post_nms_top_n, 5): batch index, x1, y1, x2, y2
    score : Tensor, shape (B * rpn_post_nms_top_n, 1), shown with ``output_score``
    """
    return _proposals('_contrib_MultiProposal', cls_prob, bbox_pred, im_info, **attrs)
