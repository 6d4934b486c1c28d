"""Dynamic loss scaling for AMP (``mx.contrib.amp.loss_scaler``)."""
import logging

from ... import autograd
from ...ndarray import multi_all_finite

__all__ = ['LossScaler']

_CHUNK = 200        # gradients checked per multi_all_finite call, as MXNet chunks them


class LossScaler:
    """MXNet's dynamic loss scaler: the loss is multiplied by :attr:`loss_scale` before the
    backward pass, so that small float16 gradients do not flush to zero.

    The scale starts at 2**16. A step whose gradients overflow (an inf or NaN) is skipped and
    halves the scale for the next one; 2000 steps in a row without overflow double it (at
    most 2**24). :func:`~neomx.contrib.amp.init_trainer` attaches one to a Trainer, whose
    ``step`` then calls :meth:`has_overflow`.

    Example
    -------
    >>> scaler = mx.contrib.amp.loss_scaler.LossScaler()
    >>> scaler.loss_scale
    65536.0
    """

    def __init__(self):
        self._loss_scale = 2.**16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.**24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        """The current loss scale."""
        return self._loss_scale

    def has_overflow(self, params):
        """Whether a gradient of the Parameters ``params`` holds an inf or NaN; updates the
        scale for the next step (see the class documentation)."""
        with autograd.pause():
            grads = [g for p in params if p.grad_req != 'null' for g in p.list_grad()[:1]]
            finite = True
            for start in range(0, len(grads), _CHUNK):
                chunk = grads[start:start + _CHUNK]
                finite = finite and bool(multi_all_finite(*chunk, num_arrays=len(chunk)).asscalar())
        overflow = not finite
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.
            self._unskipped = 0
            logging.info('AMP: decreasing loss scale to %f', self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.)
            logging.info('AMP: increasing loss scale to %f', self._next_loss_scale)
        return overflow
