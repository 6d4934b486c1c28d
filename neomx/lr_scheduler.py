"""``mx.lr_scheduler``: learning rate as a function of the number of updates.

A scheduler is called with the optimizer's update count and returns the learning rate.
All of them share a warmup phase: for the first ``warmup_steps`` updates the rate rises
linearly from ``warmup_begin_lr`` to ``base_lr`` (``warmup_mode='linear'``) or stays at
``warmup_begin_lr`` (``'constant'``).

As in MXNet 1.9.1 the schedulers are stateful: :class:`FactorScheduler` and
:class:`MultiFactorScheduler` keep the decayed rate in ``base_lr``, so asking for an earlier
count afterwards does not undo a decay, and ``Poly``/``Cosine`` keep the last rate they
computed. An optimizer given ``learning_rate`` overwrites ``base_lr`` but not the warmup
target, which stays the ``base_lr`` the scheduler was built with.
"""
import logging
from math import cos, pi

__all__ = ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler', 'CosineScheduler']

_WARMUP_MODES = ('linear', 'constant')


class LRScheduler:
    """Base class: the warmup phase.

    Parameters
    ----------
    base_lr : float
        The rate after warmup (before any decay).
    warmup_steps : int
        Number of warmup updates.
    warmup_begin_lr : float
        The rate at update 0; must not exceed ``base_lr``.
    warmup_mode : {'linear', 'constant'}

    Example
    -------

    A subclass defines ``__call__(num_update)``, using ``get_warmup_lr`` during warmup:

    >>> class Halving(mx.lr_scheduler.LRScheduler):
    ...     def __call__(self, num_update):
    ...         if num_update < self.warmup_steps:
    ...             return self.get_warmup_lr(num_update)
    ...         return self.base_lr / 2 ** (num_update - self.warmup_steps)
    >>> sched = Halving(base_lr=1.0, warmup_steps=2, warmup_begin_lr=0.5)
    >>> [sched(n) for n in range(5)]
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        if not isinstance(warmup_steps, int):
            raise AssertionError('warmup_steps must be an int, got %r' % (warmup_steps,))
        if warmup_begin_lr > base_lr:
            raise ValueError('Base lr has to be higher than warmup_begin_lr')
        if warmup_steps < 0:
            raise ValueError('Warmup steps has to be positive or 0')
        if warmup_mode not in _WARMUP_MODES:
            raise ValueError('Supports only linear and constant modes of warmup')
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The rate at ``num_update`` < ``warmup_steps``."""
        if not num_update < self.warmup_steps:
            raise AssertionError('update %d is past the %d warmup steps' % (num_update, self.warmup_steps))
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        progress = float(num_update) / float(self.warmup_steps)
        return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * progress

    def __call__(self, num_update):
        raise NotImplementedError('a scheduler must define __call__(num_update)')


def _check_factor(factor):
    if factor > 1.0:
        raise ValueError('Factor must be no more than 1 to make lr reduce')


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, never going below ``stop_factor_lr``.

    The rate at update ``n`` (after warmup) is ``base_lr * factor ** floor((n - 1) / step)``.

    Parameters
    ----------
    step : int
        Updates between two decays (>= 1).
    factor : float
        Decay factor (<= 1).
    stop_factor_lr : float
        Lower bound of the rate.

    Example
    -------
    >>> sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    >>> [sched(n) for n in range(1, 7)]
    [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError('Schedule step must be greater or equal than 1 round')
        _check_factor(factor)
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
            logging.info('Update[%d]: learning rate is now %0.5e', num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` each time the update count passes one of ``step``.

    Parameters
    ----------
    step : list of int
        Increasing update counts (each >= 1).
    factor : float
        Decay factor (<= 1).

    Example
    -------
    >>> sched = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    >>> [round(sched(n), 4) for n in range(1, 7)]
    [1.0, 1.0, 0.1, 0.1, 0.01, 0.01]
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not (isinstance(step, list) and step):
            raise AssertionError('step must be a non-empty list of update counts')
        if any(s < 1 for s in step):
            raise ValueError('Schedule step must be greater or equal than 1 round')
        if any(later <= earlier for earlier, later in zip(step, step[1:])):
            raise ValueError('Schedule step must be an increasing integer list')
        _check_factor(factor)
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info('Update[%d]: learning rate is now %0.5e', num_update, self.base_lr)
        return self.base_lr


class _AnnealingScheduler(LRScheduler):
    """A rate annealed from the original ``base_lr`` to ``final_lr`` over ``max_update`` updates.

    Subclasses give the annealing curve ``_decay(progress)``: 1 at progress 0, 0 at 1.
    Past ``max_update`` the last rate is kept.
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise AssertionError('max_update must be an int, got %r' % (max_update,))
        if max_update < 1:
            raise ValueError('maximum number of updates must be strictly positive')
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = max_update - warmup_steps

    def _decay(self, progress):
        raise NotImplementedError

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            progress = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * self._decay(progress)
        return self.base_lr


class PolyScheduler(_AnnealingScheduler):
    """Polynomial decay: ``final_lr + (base_lr - final_lr) * (1 - progress) ** pwr``.

    Parameters
    ----------
    max_update : int
        Update count at which ``final_lr`` is reached.
    pwr : float
        Power of the polynomial.
    final_lr : float

    Example
    -------
    >>> sched = mx.lr_scheduler.PolyScheduler(max_update=4, base_lr=1.0, pwr=2)
    >>> [round(sched(n), 4) for n in range(6)]
    [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr

    def _decay(self, progress):
        return pow(1 - progress, self.power)


class CosineScheduler(_AnnealingScheduler):
    """Cosine annealing: ``final_lr + (base_lr - final_lr) * (1 + cos(pi * progress)) / 2``.

    Parameters
    ----------
    max_update : int
        Update count at which ``final_lr`` is reached.
    final_lr : float

    Example
    -------
    >>> sched = mx.lr_scheduler.CosineScheduler(max_update=4, base_lr=1.0, final_lr=0.0)
    >>> [round(sched(n), 4) for n in range(0, 6)]
    [1.0, 0.8536, 0.5, 0.1464, 0.0, 0.0]
    """

    def _decay(self, progress):
        return (1 + cos(pi * progress)) / 2
