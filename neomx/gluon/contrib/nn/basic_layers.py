"""Contributed layers: Concurrent, HybridConcurrent, Identity, SyncBatchNorm."""
from .... import context, ndarray
from ...nn import BatchNorm, HybridSequential, Sequential

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

    The synchronisation happens in the ``_contrib_SyncBatchNorm`` operator, keyed by this
    block's prefix, so it works alike imperatively and inside a hybridized block, whose
    exported graph holds that operator as MXNet's does. Elsewhere it is BatchNorm on each
    context's own part: outside a parallel step (``[net(x) for x in parts]`` runs the
    contexts one after the other, so none can wait for the others), in predict mode and
    with ``use_global_stats``.

    Parameters
    ----------
    in_channels : int
        Number of channels (axis 1); 0 to infer it.
    num_devices : int, optional
        Number of contexts of a parallel step; a step with another number is an error. It
        defaults to the number of GPUs, or 1 (MXNet's default); 1 accepts any step size.
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
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats,
                        'ndev': num_devices or max(context.num_gpus(), 1), 'key': self.prefix}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                                       **self._kwargs)
