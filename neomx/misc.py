"""``mx.misc``: MXNet's original learning-rate schedulers, called with the iteration count
(``mx.lr_scheduler`` holds the ones optimizers use)."""
import logging
import math

__all__ = ['LearningRateScheduler', 'FactorScheduler']


class LearningRateScheduler:
    """Base class: ``scheduler(iteration)`` returns the learning rate; ``base_lr`` is 0.01.

    Example
    -------
    >>> class Halving(mx.misc.LearningRateScheduler):
    ...     def __call__(self, iteration):
    ...         return self.base_lr / 2 ** iteration
    >>> [Halving()(i) for i in range(3)]
    [0.01, 0.005, 0.0025]
    """

    def __init__(self):
        self.base_lr = 0.01

    def __call__(self, iteration):
        raise NotImplementedError('must override this')


class FactorScheduler(LearningRateScheduler):
    """``base_lr * factor ** (iteration // step)``.

    Parameters
    ----------
    step : int
        Iterations between reductions (at least 1).
    factor : float
        The reduction factor (below 1).

    >>> import neomx as mx
    >>> sched = mx.misc.FactorScheduler(step=2, factor=0.5)
    >>> [sched(i) for i in range(5)]
    [0.01, 0.01, 0.005, 0.005, 0.0025]
    """

    def __init__(self, step, factor=0.1):
        super().__init__()
        if step < 1:
            raise ValueError('Schedule step must be greater or equal than 1 round')
        if factor >= 1.0:
            raise ValueError('Factor must be less than 1 to make lr reduce')
        self.step = step
        self.factor = factor
        self.old_lr = self.base_lr
        self.init = False

    def __call__(self, iteration):
        if not self.init:
            self.init = True
            self.old_lr = self.base_lr
        lr = self.base_lr * math.pow(self.factor, int(iteration / self.step))
        if lr != self.old_lr:
            self.old_lr = lr
            logging.info('At Iteration [%d]: Swith to new learning rate %.5f', iteration, lr)
        return lr
