"""Contributed layers: Concurrent, HybridConcurrent, Identity, SyncBatchNorm."""
from .... import autograd, context, ndarray
from ....base import MXNetError
from ...nn import BatchNorm, HybridSequential, Sequential
from ..parallel import current_step

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SyncBatchNorm']


class Concurrent(Sequential):
    """Feed the same input to every child and concatenate their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return ndarray.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Hybridizable :class:`Concurrent`."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridSequential):
    """Return the input unchanged (a placeholder branch in Concurrent blocks)."""

    def hybrid_forward(self, F, x):
        return x


class _RunningStatsUpdate(autograd.Function):
    """Identity on a step's batch statistics whose backward folds them into the running ones.

    MXNet updates BatchNorm's running statistics in the backward pass, so a forward-only
    pass leaves them alone; backward reaches these statistics exactly when it reaches the
    layer's output.
    """

    def __init__(self, running_mean, running_var, momentum):
        super().__init__()
        self._running = (running_mean, running_var)
        self._momentum = momentum

    def forward(self, mean, var):  # pylint: disable=arguments-differ
        self.save_for_backward(mean, var)
        return mean.copy(), var.copy()

    def backward(self, mean_grad, var_grad):  # pylint: disable=arguments-differ
        for running, batch in zip(self._running, self.saved_tensors):
            running *= self._momentum
            running += batch.astype(running.dtype, copy=False) * (1 - self._momentum)
        return mean_grad, var_grad


def _combine_moments(parts, ctx):
    """The mean and biased variance of a batch from those of its parts.

    Parameters
    ----------
    parts : list of (int, NDArray, NDArray)
        Each part's number of values per channel, mean and biased variance, shape (C,).
    ctx : Context
        Where the result is computed; the parts are copied there (differentiably).

    Returns
    -------
    (mean, var) : NDArray, shape (C,)
    """
    total = sum(count for count, _, _ in parts)
    weights = [count / total for count, _, _ in parts]
    means = [mean.as_in_context(ctx) for _, mean, _ in parts]
    mean = ndarray.add_n(*[part_mean * w for part_mean, w in zip(means, weights)])
    # each part's spread around its own mean plus its mean's offset from the global one
    var = ndarray.add_n(*[(part_var.as_in_context(ctx) + ndarray.square(part_mean - mean)) * w
                          for part_mean, (_, _, part_var), w in zip(means, parts, weights)])
    return mean, var


class SyncBatchNorm(BatchNorm):
    """BatchNorm whose training statistics cover the whole batch of a data-parallel step.

    Within a parallel step of several contexts (:func:`~neomx.gluon.contrib.parallel.
    parallel_apply` or ``DataParallelModel`` with ``sync=True``, which run each context in
    its own thread), every context computes the mean and biased variance of its part of
    the batch (``(N_i, C, ...)``), the contexts exchange them, and each normalises with the
    statistics of the whole batch. The exchange is differentiable, so gradients flow
    between the contexts exactly as through BatchNorm on the concatenated batch. In the
    backward pass each context folds the same global statistics into its copy of the
    running statistics, so the copies stay equal and match BatchNorm on the full batch.

    Elsewhere it is BatchNorm on each context's own part: outside a parallel step
    (``[net(x) for x in parts]`` runs the contexts one after the other, so none can wait
    for the others), in predict mode, with ``use_global_stats``, and when a hybridized
    block runs it as part of its graph.

    Parameters
    ----------
    in_channels : int
        Number of channels (axis 1); 0 to infer it.
    num_devices : int, optional
        Number of contexts of a parallel step; when given, a step with another number is an
        error. It defaults to the number of GPUs, or 1 (MXNet's default), and then any step
        size is accepted.
    momentum, epsilon, center, scale, use_global_stats, *_initializer
        As :class:`~neomx.gluon.nn.BatchNorm`.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5, center=True,
                 scale=True, use_global_stats=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', **kwargs):
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats, beta_initializer,
                         gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)
        self._required_devices = num_devices
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats,
                        'ndev': num_devices or max(context.num_gpus(), 1), 'key': self.prefix}
        self._batchnorm_kwargs = {'axis': 1, 'eps': epsilon, 'momentum': momentum,
                                  'fix_gamma': not scale, 'use_global_stats': use_global_stats}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        step = current_step()
        if (F is ndarray and step is not None and step.num_devices > 1
                and autograd.is_training() and not self._batchnorm_kwargs['use_global_stats']):
            return self._synchronised_forward(step, x, gamma, beta, running_mean, running_var)
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                           **self._batchnorm_kwargs)

    def _synchronised_forward(self, step, x, gamma, beta, running_mean, running_var):
        """Training-mode BatchNorm of this context's part with the step's global statistics."""
        who = "SyncBatchNorm '%s'" % self.name
        if self._required_devices not in (None, step.num_devices):
            raise MXNetError('%s: created with num_devices=%d but run in a parallel step of %d '
                             'contexts' % (who, self._required_devices, step.num_devices))
        local_mean, local_var = ndarray.moments(x, axes=(0,) + tuple(range(2, x.ndim)))
        parts = step.allgather(self, (x.size // x.shape[1], local_mean, local_var), who)
        mean, var = _combine_moments(parts, x.context)
        mean, var = _RunningStatsUpdate(running_mean, running_var,
                                        self._batchnorm_kwargs['momentum'])(mean, var)
        channel_shape = (1, -1) + (1,) * (x.ndim - 2)
        scale = ndarray.rsqrt(var + self._batchnorm_kwargs['eps'])
        if not self._batchnorm_kwargs['fix_gamma']:
            scale = scale * gamma
        return (x - mean.reshape(channel_shape)) * scale.reshape(channel_shape) + \
            beta.reshape(channel_shape)
