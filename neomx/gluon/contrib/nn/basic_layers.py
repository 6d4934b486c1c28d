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
    """BatchNorm meant to share batch statistics across the devices of one step.

    neomx computes every context's forward eagerly, one after the other, so the statistics
    of a forward call cannot wait for the batches of the other devices: each call is
    normalized with the statistics of its own batch (exactly BatchNorm, and exact for one
    device). ``num_devices`` and the other arguments are kept for MXNet compatibility.

    Parameters
    ----------
    in_channels : int
    num_devices : int, optional
        Number of devices; by default the number of GPUs, or 1.
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
        self._num_devices = num_devices or max(context.num_gpus(), 1)
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats, 'ndev': self._num_devices,
                        'key': self.prefix}
        self._batchnorm_kwargs = {'axis': 1, 'eps': epsilon, 'momentum': momentum,
                                  'fix_gamma': not scale, 'use_global_stats': use_global_stats}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                           **self._batchnorm_kwargs)
