"""The SSD training and inference operators: ``MultiBoxTarget`` (anchor targets from
ground-truth boxes) and ``MultiBoxDetection`` (boxes from predictions, with per-class NMS).

Both follow MXNet 1.9.1's CPU kernels step by step, batched over images with torch:

- ``MultiBoxTarget`` first matches every ground truth to its best anchor (greedily, best IoU
  first), then marks the other anchors positive whose best IoU passes ``overlap_threshold``;
  with negative mining the negatives are the anchors with the lowest background probability
  among those whose best IoU is under ``negative_mining_thresh``, the rest are ignored.
- ``MultiBoxDetection`` keeps, per anchor, the best non-background class scoring at least
  ``threshold``, decodes its box, sorts by score, keeps ``nms_topk`` and suppresses
  same-class boxes overlapping a better one by ``nms_threshold`` or more. Suppressed rows keep
  their score and box with class -1, as MXNet leaves them.

Neither is differentiable: MXNet back-propagates zeros, and so does neomx.
"""
import torch

from .detection import _greedy_matching, _greedy_nms, _not_differentiable, _pairwise_iou, _take_rows
from .registry import BOOL, FLOAT, FLOATS, INT, check, register

_VARIANCES = (0.1, 0.1, 0.2, 0.2)


def _center_form(boxes):
    """Corner boxes (..., 4) -> centers (..., 2) and sizes (..., 2)."""
    size = boxes[..., 2:] - boxes[..., :2]
    return boxes[..., :2] + size * 0.5, size


def _check_variances(op, variances):
    check(len(variances) == 4, op, 'variances must hold 4 values, got %s', variances)


# ------------------------------------------------------------ MultiBoxTarget
def _valid_labels(op, label):
    """(B, M) mask of the ground truths MXNet reads: those before the first class id -1.

    A padding row must be -1 in its class and first coordinate, as MXNet checks."""
    is_pad = label[..., 0] == -1
    check(bool((label[..., 1][is_pad] == -1).all()), op,
          'a label row with class -1 (padding) must have -1 as its first coordinate too; label shape %s',
          label.shape)
    return torch.cumprod((~is_pad).to(torch.int8), dim=1).bool()


def _encode_targets(anchors, boxes, variances):
    """Offsets of corner ``boxes`` (B, N, 4) from corner ``anchors`` (N, 4), over variances."""
    (anchor_center, anchor_size), (center, size) = _center_form(anchors), _center_form(boxes)
    scale = anchors.new_tensor(variances)
    return torch.cat([(center - anchor_center) / anchor_size / scale[:2],
                      torch.log(size / anchor_size) / scale[2:]], dim=-1)


def _hard_negatives(candidates, background_prob, count):
    """(B, N) mask of the ``count[b]`` candidates with the lowest background probability
    (ties in anchor order)."""
    key = torch.where(candidates, background_prob, background_prob.new_tensor(float('inf')))
    order = key.argsort(dim=1, stable=True)
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(order.shape[1], device=order.device).expand_as(order))
    return candidates & (rank < count[:, None])


@register('_contrib_MultiBoxTarget', inputs=('anchor', 'label', 'cls_pred'),
          attrs=[('overlap_threshold', FLOAT, 0.5), ('ignore_label', FLOAT, -1.0),
                 ('negative_mining_ratio', FLOAT, -1.0), ('negative_mining_thresh', FLOAT, 0.5),
                 ('minimum_negative_samples', INT, 0), ('variances', FLOATS, _VARIANCES)],
          num_outputs=3, output_names=('loc_target', 'loc_mask', 'cls_target'))
@_not_differentiable
def multibox_target(anchor, label, cls_pred, overlap_threshold, ignore_label, negative_mining_ratio,
                    negative_mining_thresh, minimum_negative_samples, variances):
    """Training targets of SSD anchors from ground-truth boxes.

    Parameters
    ----------
    anchor : Tensor, shape (1, N, 4): corner anchors (``MultiBoxPrior``'s output)
    label : Tensor, shape (B, M, W >= 5): [class, xmin, ymin, xmax, ymax, ...] per object;
        rows of -1 pad the list
    cls_pred : Tensor, shape (B, C, N): class scores (class 0 is the background) used to
        rank negatives when mining

    Returns
    -------
    loc_target : Tensor, shape (B, N * 4): box offsets of positive anchors over variances
    loc_mask : Tensor, shape (B, N * 4): 1 for positive anchors' offsets, else 0
    cls_target : Tensor, shape (B, N): matched class + 1 for positives, 0 for negatives,
        ``ignore_label`` for the rest
    """
    op = 'MultiBoxTarget'
    _check_variances(op, variances)
    check(anchor.dim() == 3 and anchor.shape[-1] == 4, op, 'anchor must have shape (1, N, 4), got %s',
          anchor.shape)
    anchors = anchor.reshape(-1, 4)
    num = anchors.shape[0]
    check(label.dim() == 3 and label.shape[2] >= 5, op, 'label must have shape (B, M, W >= 5), got %s',
          label.shape)
    batch = label.shape[0]
    check(cls_pred.dim() == 3 and cls_pred.shape[0] == batch and cls_pred.shape[2] == num, op,
          'cls_pred must have shape (%d, num_classes, %d) for anchor %s and label %s, got %s',
          batch, num, anchor.shape, label.shape, cls_pred.shape)
    loc_target = anchors.new_zeros((batch, num, 4))
    if label.is_meta:
        return loc_target.flatten(1), loc_target.flatten(1), anchors.new_empty((batch, num))
    valid_gt = _valid_labels(op, label)                                             # (B, M)
    iou = _pairwise_iou(anchors.expand(batch, num, 4), label[..., 1:5])            # (B, N, M)
    iou = torch.where(valid_gt[:, None, :], iou, iou.new_tensor(-1.0))
    # Each ground truth's best anchor first, IoU above 1e-6 (MXNet's starting maximum)
    anchor_gt, _ = _greedy_matching(torch.where(iou > 1e-6, iou, iou.new_tensor(-1.0)), 0.0, label.shape[1])
    positive = anchor_gt >= 0
    best_iou, best_gt = iou.max(dim=2)
    matched_gt = torch.where(positive, anchor_gt, best_gt)
    if overlap_threshold > 0:
        positive |= best_iou > overlap_threshold
    has_gt = valid_gt.any(dim=1, keepdim=True)
    positive &= has_gt
    if negative_mining_ratio > 0:
        check(negative_mining_thresh > 0, op, 'negative_mining_thresh must be positive for negative '
              'mining, got %s', negative_mining_thresh)
        num_positive = positive.sum(1)
        count = (num_positive.double() * negative_mining_ratio).long()
        count = count.clamp(min=minimum_negative_samples)
        count = torch.minimum(count, num - num_positive)
        background_prob = torch.softmax(cls_pred.double(), dim=1)[:, 0]
        candidates = ~positive & (best_iou < negative_mining_thresh) & has_gt
        negative = _hard_negatives(candidates, background_prob, count)
    else:
        negative = ~positive & has_gt
    matched = _take_rows(label[..., 1:5], matched_gt.clamp(min=0))                 # (B, N, 4)
    targets = _encode_targets(anchors, matched, variances)
    loc_target = torch.where(positive[..., None], targets, loc_target)
    loc_mask = positive[..., None].expand(batch, num, 4).to(anchors.dtype)
    matched_class = label[..., 0].gather(1, matched_gt.clamp(min=0)) + 1
    cls_target = torch.where(positive, matched_class,
                             torch.where(negative, matched_class.new_zeros(()),
                                         matched_class.new_tensor(ignore_label)))
    return loc_target.flatten(1), loc_mask.flatten(1), cls_target


# --------------------------------------------------------- MultiBoxDetection
def _decode_boxes(loc_pred, anchors, variances, clip):
    """Corner boxes (B, N, 4) from offsets ``loc_pred`` (B, N, 4) to corner ``anchors`` (N, 4)."""
    anchor_center, anchor_size = _center_form(anchors)
    scale = anchors.new_tensor(variances)
    center = loc_pred[..., :2] * scale[:2] * anchor_size + anchor_center
    half = torch.exp(loc_pred[..., 2:] * scale[2:]) * anchor_size / 2
    boxes = torch.cat([center - half, center + half], dim=-1)
    return boxes.clamp(0, 1) if clip else boxes


def _first_in_order(mask, key=None):
    """Per row of (B, N): the positions where ``mask`` holds first (by decreasing ``key``
    when given, else in order), the others after, each group keeping its order."""
    if key is None:
        return (~mask).to(torch.int8).argsort(dim=1, stable=True)
    return torch.where(mask, key, key.new_tensor(-float('inf'))).argsort(dim=1, descending=True, stable=True)


@register('_contrib_MultiBoxDetection', inputs=('cls_prob', 'loc_pred', 'anchor'),
          attrs=[('clip', BOOL, True), ('threshold', FLOAT, 0.01), ('background_id', INT, 0),
                 ('nms_threshold', FLOAT, 0.5), ('force_suppress', BOOL, False),
                 ('variances', FLOATS, _VARIANCES), ('nms_topk', INT, -1)])
@_not_differentiable
def multibox_detection(cls_prob, loc_pred, anchor, clip, threshold, background_id, nms_threshold,
                       force_suppress, variances, nms_topk):
    """Detections from SSD class probabilities and box offsets.

    Parameters
    ----------
    cls_prob : Tensor, shape (B, C, N): class probabilities, class 0 the background (as in
        MXNet's CPU kernel, ``background_id`` is read but class 0 is always the background)
    loc_pred : Tensor, shape (B, N * 4): box offsets over ``variances``
    anchor : Tensor, shape (1, N, 4): corner anchors

    Returns
    -------
    Tensor, shape (B, N, 6): rows [class - 1, score, xmin, ymin, xmax, ymax], detections
    first by decreasing score; class -1 marks rows suppressed or beyond ``nms_topk``, and
    rows of -1 follow.
    """
    del background_id       # MXNet's kernel never reads it
    op = 'MultiBoxDetection'
    _check_variances(op, variances)
    check(anchor.dim() == 3 and anchor.shape[-1] == 4, op, 'anchor must have shape (1, N, 4), got %s',
          anchor.shape)
    anchors = anchor.reshape(-1, 4)
    num = anchors.shape[0]
    check(cls_prob.dim() == 3 and cls_prob.shape[2] == num and cls_prob.shape[1] >= 2, op,
          'cls_prob must have shape (B, num_classes >= 2, %d) for anchor %s, got %s', num, anchor.shape,
          cls_prob.shape)
    batch = cls_prob.shape[0]
    check(tuple(loc_pred.shape) == (batch, num * 4), op, 'loc_pred must have shape (%d, %d), got %s',
          batch, num * 4, loc_pred.shape)
    if cls_prob.is_meta:
        return cls_prob.new_empty((batch, num, 6))
    score, cls = cls_prob[:, 1:].max(dim=1)                                         # (B, N)
    valid = score >= threshold
    boxes = _decode_boxes(loc_pred.reshape(batch, num, 4), anchors.to(loc_pred.dtype), variances, clip)
    rows = torch.cat([cls[..., None].to(boxes.dtype), score[..., None].to(boxes.dtype), boxes], dim=-1)
    rows = _take_rows(rows, _first_in_order(valid))                                # valid ones first
    valid_count = valid.sum(1, keepdim=True)
    slot = torch.arange(num, device=rows.device)
    is_valid = slot < valid_count
    if 0 < nms_threshold <= 1:
        ranked = _take_rows(rows, _first_in_order(is_valid, rows[..., 1]))
        keep_count = valid_count if nms_topk <= 0 else valid_count.clamp(max=nms_topk)
        in_top = slot < keep_count
        # MXNet overwrites the top rows with the ranked ones; the remaining valid rows keep
        # their unranked content, marked -1.
        rows = torch.where(in_top[..., None], ranked, rows)
        kept = _greedy_nms(rows[..., 2:], in_top, nms_threshold, None if force_suppress else rows[..., 0],
                           at_threshold=True)
        rows = torch.cat([torch.where(kept, rows[..., 0], rows.new_tensor(-1.0))[..., None], rows[..., 1:]], dim=-1)
    return torch.where(is_valid[..., None], rows, rows.new_tensor(-1.0))

