"""Output (loss) layers: SoftmaxOutput, the regression outputs, MakeLoss/make_loss,
softmax_cross_entropy, the per-position cross entropy behind Gluon's SoftmaxCrossEntropyLoss
and CTCLoss.

MXNet's output layers end a network: their backward pass does not use the head gradient
but writes the gradient of an implied loss (``softmax - one_hot(label)`` for SoftmaxOutput,
``out - label`` for LinearRegressionOutput...). :class:`_HeadIgnoringOutput` reproduces
that on torch autograd. ``softmax_cross_entropy``, the per-position cross entropy and ``CTCLoss``
are ordinary differentiable losses: their gradients do scale with the head gradient.
"""
import math

import torch
import torch.nn.functional as F

from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, INT, check, choice, register
from .shape import normalize_axis


class _HeadIgnoringOutput(torch.autograd.Function):
    """Output layer node: ``forward(data)`` forward, ``gradient(out)`` for data backward."""

    @staticmethod
    def forward(ctx, data, forward, gradient):  # pylint: disable=arguments-differ
        out = forward(data)
        ctx.gradient = gradient
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, head_grad):  # pylint: disable=arguments-differ
        out, = ctx.saved_tensors
        return ctx.gradient(out), None, None


def _output_layer(data, forward, gradient):
    """Apply ``forward`` to data; when recorded, backward yields ``gradient(output)``."""
    if data.requires_grad and torch.is_grad_enabled():
        return _HeadIgnoringOutput.apply(data, forward, gradient)
    return forward(data)


# ------------------------------------------------------------- SoftmaxOutput
def _as_rows(data, multi_output, preserve_shape):
    """View data as (rows, classes) with the classes last.

    Returns the rows and a function that brings an array of the rows' shape back to data's.
    multi_output: classes on axis 1, one row per (sample, position); preserve_shape: classes
    on the last axis; otherwise each sample's flattened values form one row.
    """
    if multi_output:
        moved = data.movedim(1, -1)
        return moved.reshape(-1, data.shape[1]), lambda rows: rows.reshape(moved.shape).movedim(-1, 1)
    if preserve_shape:
        return data.reshape(-1, data.shape[-1]), lambda rows: rows.reshape(data.shape)
    return data.reshape(data.shape[0], -1), lambda rows: rows.reshape(data.shape)


def _label_rows(label, data, num_rows, multi_output, preserve_shape):
    """One class label per softmax row, or per-class probabilities when label has data's shape."""
    if label.shape == data.shape:
        return _as_rows(label, multi_output, preserve_shape)[0]
    if multi_output or preserve_shape:
        check(label.numel() == num_rows, 'SoftmaxOutput',
              'label of shape %s does not match data of shape %s (expected %d labels)',
              label.shape, data.shape, num_rows)
        return label.reshape(-1)
    # MXNet expects label shape data.shape[:-1] here but only reads the first N entries.
    check(label.numel() >= num_rows and label.shape[0] == num_rows, 'SoftmaxOutput',
          'label of shape %s does not match data of shape %s (expected (%d,))',
          label.shape, data.shape, num_rows)
    return label.reshape(-1)[:num_rows]


def _softmax_target(labels, probs, smooth_alpha):
    """The distribution the softmax is pulled towards: one-hot labels, optionally smoothed.

    Labels are truncated to integers; out-of-range labels give an all-zero row, as in MXNet.
    """
    if labels.dim() == 2:
        return labels
    classes = probs.shape[1]
    target = (labels.to(torch.int64)[:, None] == torch.arange(classes, device=probs.device))
    target = target.to(probs.dtype)
    if smooth_alpha:
        target = target * (1 - smooth_alpha) + (1 - target) * (smooth_alpha / (classes - 1))
    return target


def _softmax_output_gradient(labels, data, attrs):
    """Backward of SoftmaxOutput: ``(softmax - target) * grad_scale / normalizer`` per row."""
    multi_output, preserve_shape = attrs['multi_output'], attrs['preserve_shape']

    def gradient(out):
        probs, restore = _as_rows(out, multi_output, preserve_shape)
        grad = probs - _softmax_target(labels, probs, attrs['smooth_alpha'])
        if attrs['out_grad']:
            # MXNet 1.9.1 scales by the layer's own output here, not by the head gradient.
            grad = grad * probs
        num_rows = probs.shape[0]
        normalization = attrs['normalization']
        if attrs['use_ignore'] and labels.dim() == 1:
            keep = (labels != attrs['ignore_label']).to(grad.dtype)
            grad = grad * keep[:, None]
            valid = keep.sum().clamp(min=1)
        else:
            valid = num_rows
        if normalization == 'batch':
            grad = grad / num_rows
        elif normalization == 'valid':
            grad = grad / valid
        elif multi_output:
            grad = grad / (num_rows // data.shape[0])   # 'null' still averages over positions
        return restore(grad * attrs['grad_scale'])
    return gradient


_SOFTMAX_OUTPUT_ATTRS = [
    ('grad_scale', FLOAT, 1.0), ('ignore_label', FLOAT, -1.0), ('multi_output', BOOL, False),
    ('use_ignore', BOOL, False), ('preserve_shape', BOOL, False),
    ('normalization', choice('batch', 'null', 'valid'), 'null'), ('out_grad', BOOL, False),
    ('smooth_alpha', FLOAT, 0.0)]


def _infer_softmax_label(shapes, attrs):
    data = shapes.get('data')
    if data is None:
        return {}
    return {'label': (data[0],) + tuple(data[2:]) if attrs['multi_output'] else tuple(data[:-1])}


def _infer_label_like_data(shapes, attrs):
    data = shapes.get('data')
    return {} if data is None else {'label': tuple(data)}


@register('SoftmaxOutput', aliases=('Softmax',), inputs=('data', 'label'),
          attrs=_SOFTMAX_OUTPUT_ATTRS, infer_args=_infer_softmax_label)
def softmax_output(data, label, **attrs):
    """Softmax forward; backward gives the cross-entropy gradient w.r.t. the label.

    Parameters
    ----------
    data : Tensor, shape (N, C) or (N, ...) flattened per sample; (N, C, positions...) with
        ``multi_output``; (..., C) with ``preserve_shape``
    label : Tensor, shape (N,), (N, positions...) or data.shape[:-1] respectively, or data's
        shape for probability labels

    Returns
    -------
    Tensor, data's shape: the softmax probabilities.
    """
    rows, restore = _as_rows(data, attrs['multi_output'], attrs['preserve_shape'])
    labels = _label_rows(label, data, rows.shape[0], attrs['multi_output'], attrs['preserve_shape'])

    def forward(x):
        return restore(torch.softmax(_as_rows(x, attrs['multi_output'], attrs['preserve_shape'])[0], -1))
    return _output_layer(data, forward, _softmax_output_gradient(labels, data, attrs))


# ------------------------------------------------------ regression outputs
def _per_sample_outputs(data):
    return data.numel() // data.shape[0] if data.dim() else 1


def _regression_output(name, forward, residual_gradient):
    """Register a regression output layer: forward ``forward(data)``; backward
    ``residual_gradient(out, label) * grad_scale / outputs per sample``."""
    def regression_output(data, label, grad_scale):
        check(label.numel() == data.numel(), name,
              'label of shape %s does not match data of shape %s', label.shape, data.shape)
        label = label.reshape(data.shape).to(data.dtype)
        scale = grad_scale / _per_sample_outputs(data)

        def gradient(out):
            return residual_gradient(out, label) * scale
        return _output_layer(data, forward, gradient)
    regression_output.__doc__ = (
        'Regression output layer (data and label of the same shape (N, ...)): forward is %s; '
        'backward ignores the head gradient.' % forward.__doc__)
    register(name, inputs=('data', 'label'), attrs=[('grad_scale', FLOAT, 1.0)],
             infer_args=_infer_label_like_data)(regression_output)


def _identity(data):
    """the identity"""
    return data.clone()


def _sigmoid(data):
    """the logistic sigmoid"""
    return torch.sigmoid(data)


_regression_output('LinearRegressionOutput', _identity, torch.sub)
_regression_output('LogisticRegressionOutput', _sigmoid, torch.sub)
_regression_output('MAERegressionOutput', _identity, lambda out, label: torch.sign(out - label))


# ---------------------------------------------------------------- MakeLoss
def _make_loss_normalizer(out, normalization, valid_thresh):
    if normalization == 'batch':
        # MXNet flattens to 2-D keeping the last axis, and divides by the number of rows.
        return out.numel() // out.shape[-1]
    if normalization == 'valid':
        return (out > valid_thresh).sum().clamp(min=1)
    return 1


@register('MakeLoss', inputs=('data',),
          attrs=[('grad_scale', FLOAT, 1.0), ('valid_thresh', FLOAT, 0.0),
                 ('normalization', choice('batch', 'null', 'valid'), 'null')])
def make_loss_layer(data, grad_scale, valid_thresh, normalization):
    """Mark data as a loss: forward copies it; backward gives ``grad_scale / normalizer``
    everywhere, the normalizer being 1 ('null'), the rows of data flattened to 2-D ('batch')
    or the number of outputs above ``valid_thresh`` ('valid')."""
    def gradient(out):
        return torch.full_like(out, grad_scale) / _make_loss_normalizer(out, normalization, valid_thresh)
    return _output_layer(data, _identity, gradient)


@register('make_loss', inputs=('data',), output_names=('loss',), same_shape=True)
def make_loss(data):
    """Mark data as a loss: forward copies it; backward gives ones, ignoring the head gradient."""
    return _output_layer(data, _identity, torch.ones_like)


# ------------------------------------------------------------------ losses
@register('softmax_cross_entropy', inputs=('data', 'label'))
def softmax_cross_entropy(data, label):
    """Summed cross-entropy of softmax(data) against integer labels.

    Parameters
    ----------
    data : Tensor, shape (N, C)
    label : Tensor, shape (N,), class indices

    Returns
    -------
    Tensor, shape (1,)
    """
    check(data.dim() == 2 and label.dim() == 1 and label.shape[0] == data.shape[0],
          'softmax_cross_entropy', 'expects data (N, C) and label (N,), got %s and %s',
          data.shape, label.shape)
    return F.cross_entropy(data, label.to(torch.int64), reduction='sum').reshape(1)


def _class_indices(label, classes):
    """``label`` as int64 class indices in [0, classes): truncated toward zero and clipped, as
    ``pick`` reads its index (a new tensor; the label is not modified)."""
    if label.dtype is torch.int64:
        return label.clamp(0, classes - 1)
    target = label.long()           # a new tensor: clipped in place
    return target.clamp_(0, classes - 1)


@register('_softmax_cross_entropy_per_position', inputs=('data', 'label'),
          attrs=[('axis', INT, -1), ('keepdims', BOOL, False)])
def softmax_cross_entropy_per_position(data, label, axis, keepdims):
    """``-pick(log_softmax(data, axis), label, axis, keepdims)`` in one torch call.

    Gluon's SoftmaxCrossEntropyLoss with class-index labels: torch's fused cross entropy
    runs forward and backward (``softmax - one_hot``, scaled by the head gradient) in two
    kernels each, where the chain of operators takes three forward and four backward nodes.
    Labels follow ``pick``'s default: float labels are truncated toward zero and
    out-of-range labels are clipped to the nearest class.

    Parameters
    ----------
    data : Tensor, shape (d0, ..., C, ..., dk), C classes on ``axis``
    label : Tensor, the size of data without ``axis`` (any shape), class indices
    axis : int
    keepdims : bool
        Keep ``axis`` in the output, with size 1.

    Returns
    -------
    Tensor, data's shape without ``axis`` (or with it as 1 when ``keepdims``); (1,) for 1-D data
    """
    shape = data.shape
    if len(shape) == 2 and (axis == -1 or axis == 1) and not keepdims and label.shape == shape[:1]:
        # (N, C) scores and N labels, a classifier's batch: the general path without its steps
        return F.cross_entropy(data, _class_indices(label, shape[1]), reduction='none')
    axis = normalize_axis(axis, len(shape), '_softmax_cross_entropy_per_position')
    positions = shape[:axis] + shape[axis + 1:]
    target = _class_indices(label, shape[axis])
    if target.shape != positions:
        check(target.numel() == math.prod(positions), '_softmax_cross_entropy_per_position',
              'label of shape %s does not match data of shape %s without axis %d',
              label.shape, tuple(shape), axis)
        target = target.reshape(positions)
    # cross_entropy takes the classes on dim 1 of a batch, or a single unbatched sample (C,)
    loss = F.cross_entropy(data if axis == 1 or len(shape) == 1 else data.movedim(axis, 1), target,
                           reduction='none')
    if len(shape) == 1:
        return loss.reshape(1)
    return loss.unsqueeze(axis) if keepdims else loss


def _absent_ctc_lengths(attrs):
    absent = []
    if not attrs['use_data_lengths']:
        absent.append('data_lengths')
    if not attrs['use_label_lengths']:
        absent.append('label_lengths')
    return absent


def _label_lengths(labels, padding):
    """Each label sequence ends at the first padding value (or spans the whole row)."""
    is_pad = labels == padding
    first_pad = is_pad.to(torch.int8).argmax(1)
    return torch.where(is_pad.any(1), first_pad, torch.full_like(first_pad, labels.shape[1]))


@register('CTCLoss', aliases=('ctc_loss', '_contrib_CTCLoss', '_contrib_ctc_loss'),
          inputs=('data', 'label', 'data_lengths', 'label_lengths'),
          attrs=[('use_data_lengths', BOOL, False), ('use_label_lengths', BOOL, False),
                 ('blank_label', choice('first', 'last'), 'first')],
          optional_inputs=_absent_ctc_lengths, output_names=('output0',),
          dtypes=DTypeRule(free=('label', 'data_lengths', 'label_lengths')),
          hidden_outputs=lambda attrs: 1)     # MXNet's graph also records the gradient
def ctc_loss(data, label, data_lengths, label_lengths, use_data_lengths, use_label_lengths,
             blank_label):
    """Connectionist temporal classification loss of unnormalised activations.

    Parameters
    ----------
    data : Tensor, shape (T, N, alphabet), softmax is applied over the alphabet
    label : Tensor, shape (N, L); with ``blank_label='first'`` the blank is 0, labels are
        1..alphabet-1 and 0 pads; with 'last' the blank is alphabet-1 and -1 pads.
    data_lengths : Tensor, shape (N,), used with ``use_data_lengths`` (default T)
    label_lengths : Tensor, shape (N,), used with ``use_label_lengths`` (default: up to the
        first padding value)

    Returns
    -------
    Tensor, shape (N,): the negative log-likelihood per sample; 0 where the label cannot be
    aligned within the data length (as MXNet).
    """
    check(data.dim() == 3 and label.dim() == 2 and label.shape[0] == data.shape[1], 'CTCLoss',
          'expects data (T, N, alphabet) and label (N, L), got %s and %s',
          data.shape, label.shape)
    steps, batch, alphabet = data.shape
    if data.is_meta:    # torch has no meta kernel for ctc_loss; shape inference needs only this
        return data.new_empty((batch,))
    blank, padding = (0, 0) if blank_label == 'first' else (alphabet - 1, -1)
    labels = label.to(torch.int64)
    target_lengths = (label_lengths.to(torch.int64) if use_label_lengths
                      else _label_lengths(labels, padding))
    if use_data_lengths:
        input_lengths = data_lengths.to(torch.int64)
        # steps past a sequence's length take no part, NaN padding included: their gradient is 0
        inside = torch.arange(steps, device=data.device).unsqueeze(1) < input_lengths.unsqueeze(0)
        data = torch.where(inside.unsqueeze(2), data, torch.zeros((), dtype=data.dtype, device=data.device))
    else:
        input_lengths = torch.full((batch,), steps, dtype=torch.int64, device=data.device)
    log_probs = torch.log_softmax(data, -1)
    return F.ctc_loss(log_probs, labels.clamp(min=0), input_lengths, target_lengths, blank=blank,
                      reduction='none', zero_infinity=True)
