"""Gluon losses: HybridBlocks computing one loss value per sample.

Every loss is written with ``F.<operator>`` calls only, so it runs imperatively
(``F = mx.nd``) and hybridizes. Conventions shared by all of them, as in MXNet 1.9.1:

* ``weight`` (a number) scales the loss; ``sample_weight`` (an array broadcastable to the
  element-wise loss, e.g. (N, 1)) weights samples.
* The element-wise loss is averaged over every axis except ``batch_axis``, so the
  result has shape (batch_size,).
* A label with as many elements as the prediction is reshaped to the prediction's shape
  (``(N,)`` labels for ``(N, 1)`` predictions); other labels are an error.
"""
import math

import numpy as np

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .block import HybridBlock

__all__ = ['Loss', 'L2Loss', 'L1Loss', 'SigmoidBinaryCrossEntropyLoss', 'SigmoidBCELoss',
           'SoftmaxCrossEntropyLoss', 'SoftmaxCELoss', 'KLDivLoss', 'CTCLoss', 'HuberLoss',
           'HingeLoss', 'SquaredHingeLoss', 'LogisticLoss', 'TripletLoss', 'PoissonNLLLoss',
           'CosineEmbeddingLoss', 'SDMLLoss']


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape (GluonCV's losses import this, as from MXNet)."""
    return x.reshape(y.shape) if isinstance(x, NDArray) else F.reshape_like(x, y)


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight`` (either factor optional)."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        assert isinstance(weight, (int, float, np.number)), 'weight must be a number'
        loss = loss * weight
    return loss


def _only_batch_axis_varies(shape, batch_axis):
    """Whether every axis of ``shape`` but ``batch_axis`` has size 1 (a valid axis)."""
    ndim = len(shape)
    if not -ndim <= batch_axis < ndim:
        return False
    return math.prod(shape) == shape[batch_axis]


def _softplus(F, x):
    """log(1 + exp(x)), computed stably."""
    return F.Activation(x, act_type='softrelu')


def _stable_logistic(F, pred, label):
    """max(x, 0) - x * z + log(1 + exp(-|x|)): cross entropy of logits x and targets z."""
    return F.relu(pred) - pred * label + _softplus(F, -F.abs(pred))


class Loss(HybridBlock):
    """Base class of losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight of the loss.
    batch_axis : int
        The axis that indexes samples; the loss is averaged over the others.

    Example
    -------
    >>> class MeanCube(mx.gluon.loss.Loss):
    ...     def hybrid_forward(self, F, pred, label):
    ...         return F.mean(F.abs(pred - label) ** 3, axis=self._batch_axis, exclude=True)
    >>> MeanCube(weight=None, batch_axis=0)(mx.nd.array([[2, 0]]), mx.nd.zeros((1, 2)))
    <BLANKLINE>
    [4.]
    <NDArray 1 @cpu(0)>
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return '{name}(batch_axis={_batch_axis}, w={_weight})'.format(name=type(self).__name__,
                                                                      **self.__dict__)

    def _like(self, F, x, pred, what='label'):
        """``x`` reshaped to ``pred``'s shape; MXNetError naming the loss if the sizes differ."""
        if not isinstance(x, NDArray):
            return F.reshape_like(x, pred)
        if x.size != pred.size:
            raise MXNetError('%s: %s of shape %s cannot be matched to the prediction of shape %s'
                             % (type(self).__name__, what, x.shape, pred.shape))
        return x.reshape(pred.shape)

    def _finish(self, F, loss, sample_weight, weight=None):
        """Weight the element-wise loss and average it over all axes but the batch axis."""
        loss = _apply_weighting(F, loss, self._weight if weight is None else weight, sample_weight)
        if isinstance(loss, NDArray) and _only_batch_axis_varies(loss.shape, self._batch_axis):
            # averaging over axes of size 1 changes nothing: a view is cheaper than a reduction
            return loss.reshape(-1)
        return F.mean(loss, axis=self._batch_axis, exclude=True)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class L2Loss(Loss):
    r"""Half the squared error: :math:`L = \frac{1}{2} \sum_i (label_i - pred_i)^2 / n`.

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size (reshaped to ``pred``'s shape).
    sample_weight : optional, broadcastable to ``pred``.
    out : ``(N,)``, the mean over the other axes.

    Example
    -------
    >>> pred, label = mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 0], [3, 1]])
    >>> mx.gluon.loss.L2Loss()(pred, label)
    <BLANKLINE>
    [1.   2.25]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = self._like(F, label, pred)
        return self._finish(F, F.square(label - pred), sample_weight, self._weight / 2)


class L1Loss(Loss):
    r"""Mean absolute error :math:`L = \sum_i |label_i - pred_i| / n`.

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size (reshaped to ``pred``'s shape).
    sample_weight : optional, broadcastable to ``pred``.
    out : ``(N,)``, the mean over the other axes.

    Example
    -------
    >>> pred, label = mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 0], [3, 1]])
    >>> mx.gluon.loss.L1Loss()(pred, label)
    <BLANKLINE>
    [1.  1.5]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = self._like(F, label, pred)
        return self._finish(F, F.abs(label - pred), sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy of logits (or probabilities, ``from_sigmoid=True``) and 0/1 labels.

    Parameters
    ----------
    from_sigmoid : bool
        ``pred`` holds probabilities rather than logits.

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size, 0 or 1.
    sample_weight, pos_weight : optional, broadcastable to ``pred`` (``pos_weight`` weighs
        the positive term).
    out : ``(N,)``.

    Example
    -------
    >>> loss = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    >>> loss(mx.nd.array([[0, 2], [-1, 0]]), mx.nd.array([[1, 1], [0, 0]]))
    <BLANKLINE>
    [0.41003758 0.50320446]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = self._like(F, label, pred)
        if self._from_sigmoid:
            eps = 1e-12
            positive = F.log(pred + eps) * label
            if pos_weight is not None:
                positive = F.broadcast_mul(positive, pos_weight)
            loss = -(positive + F.log(1. - pred + eps) * (1. - label))
        elif pos_weight is None:
            loss = _stable_logistic(F, pred, label)
        else:
            # x - x z + (1 + (w - 1) z) (log(1 + exp(-|x|)) + max(-x, 0)), stable for any x
            log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
            loss = pred - pred * label + log_weight * (_softplus(F, -F.abs(pred)) + F.relu(-pred))
        return self._finish(F, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Cross entropy of softmax(pred) along ``axis`` and class labels.

    Parameters
    ----------
    axis : int
        The class axis.
    sparse_label : bool
        Labels are class indices (shape of ``pred`` without ``axis``) rather than
        distributions (shape of ``pred``).
    from_logits : bool
        ``pred`` already holds log-probabilities.

    Shape
    -----
    pred : ``(N, ..., classes, ...)``, the classes on ``axis``.
    label : ``pred``'s shape without ``axis`` (class indices) with ``sparse_label``, else
        ``pred``'s shape.
    out : ``(N,)``, averaged over any further axes (time steps...).

    Example
    -------
    >>> loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    >>> loss(mx.nd.array([[1, 2, 3], [0, 0, 0]]), mx.nd.array([2, 0]))
    <BLANKLINE>
    [0.40760595 1.0986123 ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._sparse_label:
            if not self._from_logits:
                pred = F.log_softmax(pred, self._axis)
            label = self._like(F, label, pred)
            return self._finish(F, -F.sum(pred * label, axis=self._axis, keepdims=True), sample_weight)
        self._check_sparse_label(label, pred)
        if self._from_logits:
            return self._finish(F, -F.pick(pred, label, axis=self._axis, keepdims=True), sample_weight)
        if not isinstance(pred, NDArray):
            # a traced graph keeps MXNet's operators, so that exported files load in MXNet
            loss = -F.pick(F.log_softmax(pred, self._axis), label, axis=self._axis, keepdims=True)
            return self._finish(F, loss, sample_weight)
        if sample_weight is None and self._one_sample_per_row(pred):
            # the per-row cross entropy is already the per-sample loss: no class axis to keep
            # for broadcasting, none to average over
            loss = F._softmax_cross_entropy_per_position(pred, label, axis=self._axis)
            return _apply_weighting(F, loss, self._weight)
        loss = F._softmax_cross_entropy_per_position(pred, label, axis=self._axis, keepdims=True)
        return self._finish(F, loss, sample_weight)

    def _one_sample_per_row(self, pred):
        """Whether ``pred`` has shape (N, C) or (C, N): 2-D, with the batch axis and the class
        axis distinct."""
        return (pred.ndim == 2 and -2 <= self._batch_axis < 2
                and -2 <= self._axis < 2 and (self._axis - self._batch_axis) % 2 == 1)

    def _check_sparse_label(self, label, pred):
        if not isinstance(label, NDArray):
            return
        classes_removed = list(pred._t.shape)
        del classes_removed[self._axis]
        if label._t.numel() != math.prod(classes_removed):
            raise MXNetError('%s: sparse label of shape %s does not match the prediction of shape %s '
                             '(expected %s class indices, the shape without axis %d)'
                             % (type(self).__name__, label.shape, pred.shape, tuple(classes_removed),
                                self._axis))


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """Kullback-Leibler divergence ``label * (log(label) - pred)`` from log-probabilities ``pred``.

    Unlike the other losses it is summed (not averaged) over the non-batch axes, and the
    label is used as it is (not reshaped to the prediction's shape), as in MXNet 1.9.1.

    Parameters
    ----------
    from_logits : bool
        ``pred`` holds log-probabilities (default); otherwise log_softmax is applied on ``axis``.
    axis : int

    Shape
    -----
    pred : ``(N, ...)``, log-probabilities.
    label : the same shape, probabilities.
    out : ``(N,)``.

    Example
    -------
    >>> pred = mx.nd.log_softmax(mx.nd.array([[1, 2], [1, 1]]))
    >>> mx.gluon.loss.KLDivLoss()(pred, mx.nd.array([[0.5, 0.5], [0.5, 0.5]]))
    <BLANKLINE>
    [0.12011446 0.        ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = _apply_weighting(F, label * (F.log(label + 1e-12) - pred), self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification loss; the last class is the blank.

    Parameters
    ----------
    layout : {'NTC', 'TNC'}
        Layout of ``pred`` (batch, time, alphabet).
    label_layout : {'NT', 'TN'}
        Layout of ``label``; labels are padded with -1 (or given ``label_lengths``).

    Shape
    -----
    pred : ``(N, T, alphabet)`` for 'NTC', ``(T, N, alphabet)`` for 'TNC'.
    label : ``(N, L)`` for 'NT', ``(L, N)`` for 'TN', padded with -1.
    pred_lengths, label_lengths : optional ``(N,)``.
    out : ``(N,)``.

    Example
    -------
    >>> loss = mx.gluon.loss.CTCLoss()
    >>> pred = mx.nd.zeros((2, 4, 3))           # uniform over 2 letters and the blank
    >>> loss(pred, mx.nd.array([[0, 1], [1, -1]]))
    <BLANKLINE>
    [1.686399 2.091864]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, layout='NTC', label_layout='NT', weight=None, **kwargs):
        assert layout in ['NTC', 'TNC'], "Only 'NTC' and 'TNC' layouts for pred are supported. Got: %s" % layout
        assert label_layout in ['NT', 'TN'], "Only 'NT' and 'TN' layouts for label are supported. Got: %s" \
            % label_layout
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find('N'), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        if self._layout == 'NTC':
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label='last')
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smoothed L1: ``0.5 / rho * e**2`` where ``|e| <= rho``, else ``|e| - 0.5 * rho``.

    Parameters
    ----------
    rho : float
        Threshold between the quadratic and the linear part.

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size (reshaped to ``pred``'s shape).
    sample_weight : optional, broadcastable to ``pred``.
    out : ``(N,)``, the mean over the other axes.

    Example
    -------
    >>> pred, label = mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 0], [3, 1]])
    >>> mx.gluon.loss.HuberLoss(rho=1)(pred, label)
    <BLANKLINE>
    [0.75 1.25]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = self._like(F, label, pred)
        error = F.abs(label - pred)
        loss = F.where(error > self._rho, error - 0.5 * self._rho, (0.5 / self._rho) * F.square(error))
        return self._finish(F, loss, sample_weight)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` for labels in {-1, 1}.

    Parameters
    ----------
    margin : float

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size, -1 or 1.
    sample_weight : optional, broadcastable to ``pred``.
    out : ``(N,)``, the mean over the other axes.

    Example
    -------
    >>> pred, label = mx.nd.array([[0.5, -2], [3, 0]]), mx.nd.array([[1, 1], [-1, 1]])
    >>> mx.gluon.loss.HingeLoss()(pred, label)
    <BLANKLINE>
    [1.75 2.5 ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def _hinge(self, F, pred, label):
        return F.relu(self._margin - pred * self._like(F, label, pred))

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return self._finish(F, self._hinge(F, pred, label), sample_weight)


class SquaredHingeLoss(HingeLoss):
    """``max(0, margin - pred * label) ** 2`` for labels in {-1, 1}.

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size, -1 or 1.
    sample_weight : optional, broadcastable to ``pred``.
    out : ``(N,)``, the mean over the other axes.

    Example
    -------
    >>> pred, label = mx.nd.array([[0.5, -2], [3, 0]]), mx.nd.array([[1, 1], [-1, 1]])
    >>> mx.gluon.loss.SquaredHingeLoss()(pred, label)
    <BLANKLINE>
    [4.625 8.5  ]
    <NDArray 2 @cpu(0)>
    """

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return self._finish(F, F.square(self._hinge(F, pred, label)), sample_weight)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))``: logistic loss of logits.

    Parameters
    ----------
    label_format : {'signed', 'binary'}
        Labels in {-1, 1} or in {0, 1}.

    Shape
    -----
    pred : ``(N, ...)``.
    label : the same size, -1 or 1 ('signed') or 0 or 1 ('binary').
    sample_weight : optional, broadcastable to ``pred``.
    out : ``(N,)``, the mean over the other axes.

    Example
    -------
    >>> pred, label = mx.nd.array([[0.5, -2], [3, 0]]), mx.nd.array([[1, 1], [-1, 1]])
    >>> mx.gluon.loss.LogisticLoss()(pred, label)
    <BLANKLINE>
    [1.3005025 1.8708673]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, weight=None, batch_axis=0, label_format='signed', **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ['signed', 'binary']:
            raise ValueError('label_format can only be signed or binary, recieved %s.' % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = self._like(F, label, pred)
        if self._label_format == 'signed':
            label = (label + 1.0) / 2.0
        return self._finish(F, _stable_logistic(F, pred, label), sample_weight)


class TripletLoss(Loss):
    """``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)`` per sample.

    Shape
    -----
    pred, positive, negative : ``(N, ...)``, one shape (anchor, positive, negative).
    out : ``(N,)``.

    Example
    -------
    >>> anchor, positive = mx.nd.array([[0, 0], [0, 0]]), mx.nd.array([[1, 0], [1, 0]])
    >>> negative = mx.nd.array([[0, 1], [0, 3]])         # 1 - 1 + 1 and max(0, 1 - 9 + 1)
    >>> mx.gluon.loss.TripletLoss(margin=1)(anchor, positive, negative)
    <BLANKLINE>
    [1. 0.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative, sample_weight=None):
        positive = self._like(F, positive, pred, 'positive')
        negative = self._like(F, negative, pred, 'negative')
        gap = F.sum(F.square(positive - pred) - F.square(negative - pred), axis=self._batch_axis, exclude=True)
        return _apply_weighting(F, F.relu(gap + self._margin), self._weight, sample_weight)


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of ``target`` under a Poisson distribution; one mean for the batch.

    Parameters
    ----------
    from_logits : bool
        ``pred`` is the log of the rate (default) rather than the rate.
    compute_full : bool
        Add the Stirling approximation of ``log(target!)`` (for targets > 1).

    Shape
    -----
    pred, target : ``(N, ...)``, one shape.
    out : ``(1,)``, the mean over every element, as in MXNet.

    Example
    -------
    >>> loss = mx.gluon.loss.PoissonNLLLoss()
    >>> loss(mx.nd.array([[0, 1], [2, 0]]), mx.nd.array([[1, 2], [3, 0]]))
    <BLANKLINE>
    [1.0268345]
    <NDArray 1 @cpu(0)>
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = self._like(F, target, pred, 'target')
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(a, b)`` for label 1, ``max(0, cos(a, b) - margin)`` for label -1.

    Shape
    -----
    input1, input2 : ``(N, D)``.
    label : ``(N,)``, 1 (similar) or -1 (dissimilar).
    out : ``(N, 1)``, as in MXNet.

    Example
    -------
    >>> a, b = mx.nd.array([[1, 0], [1, 0]]), mx.nd.array([[1, 1], [1, 1]])
    >>> mx.gluon.loss.CosineEmbeddingLoss()(a, b, mx.nd.array([1, -1]))
    <BLANKLINE>
    [[0.29289323]
     [0.70710677]]
    <NDArray 2x1 @cpu(0)>
    """

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = self._like(F, input1, input2, 'input1')
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        similar = (1 - cos_sim) * (label == 1)
        # broadcast_maximum with a (1, 1) floor (and MXNet's stray ``axis``): the graph MXNet
        # 1.9.1 exports.
        dissimilar = F.broadcast_maximum(self._floor(F, 0, cos_sim), (label == -1) * (cos_sim - self._margin),
                                         axis=1)
        return _apply_weighting(F, similar + dissimilar, self._weight, sample_weight)

    @staticmethod
    def _floor(F, value, like):
        """A (1, 1) array of ``value``: float32 in graphs (MXNet's ``_zeros``/``_full`` nodes),
        of ``like``'s dtype for arrays (MXNet's float32 floor fails on float64 inputs)."""
        kwargs = {'dtype': like.dtype} if isinstance(like, NDArray) else {}
        return F.zeros((1, 1), **kwargs) if value == 0 else F.full((1, 1), value, **kwargs)

    def _cosine_similarity(self, F, x, y, axis=-1):
        """Cosine similarity along ``axis`` as (N, 1), with norms floored at 1e-12."""
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, self._floor(F, 1e-12, x_dot_y))


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss for a batch of positive pairs ``(x1[i], x2[i])``.

    Every other ``x2[j]`` is a negative for ``x1[i]``: the loss is the KL divergence between
    softmax(-squared distances) of each row and smoothed one-hot targets.

    Parameters
    ----------
    smoothing_parameter : float
        Probability mass spread over the negatives.

    Shape
    -----
    x1, x2 : ``(N, D)``; row ``i`` of both is a positive pair.
    out : ``(N,)``.

    Example
    -------
    >>> x1 = mx.nd.array([[0, 0], [4, 4]])
    >>> mx.gluon.loss.SDMLLoss()(x1, x1 + 0.1)
    <BLANKLINE>
    [9.469135 8.509136]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _smoothed_targets(self, F, distances, batch_size):
        gold = F.eye(batch_size, ctx=distances.context) if isinstance(distances, NDArray) else F.eye(batch_size)
        spread = self.smoothing_parameter / (batch_size - 1)
        return gold * (1 - self.smoothing_parameter) + (1 - gold) * spread

    def hybrid_forward(self, F, x1, x2):
        batch_size = x1.shape[0]
        distances = F.sum(F.square(F.broadcast_sub(F.expand_dims(x1, 1), F.expand_dims(x2, 0))), axis=2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, self._smoothed_targets(F, distances, batch_size))
