"""Normalization layers: BatchNorm, InstanceNorm, LayerNorm, GroupNorm.

Each learns a scale ``gamma`` and a shift ``beta``; with ``scale=False`` (``center=False``)
that parameter gets ``grad_req='null'`` and keeps its initial value. Parameter shapes
that depend on the input (``in_channels=0``) are completed at the first forward pass.
"""
import numpy as np

from ..block import HybridBlock

__all__ = ['BatchNorm', 'BatchNormReLU', 'InstanceNorm', 'LayerNorm', 'GroupNorm']


def _kwargs_repr(kwargs):
    return ', '.join('%s=%r' % item for item in kwargs.items())


class _AffineNorm(HybridBlock):
    """Creates the ``gamma``/``beta`` pair every normalization layer has.

    Parameters
    ----------
    num_params : int
        Length of gamma and beta; 0 to infer it at the first forward pass.
    center, scale : bool
        Whether beta / gamma are learned.
    """

    def __init__(self, num_params, center, scale, beta_initializer, gamma_initializer,
                 differentiable_when_fixed=True, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.gamma = self.params.get(
                'gamma', grad_req='write' if scale else 'null', shape=(num_params,),
                init=gamma_initializer, allow_deferred_init=True,
                differentiable=scale or differentiable_when_fixed)
            self.beta = self.params.get(
                'beta', grad_req='write' if center else 'null', shape=(num_params,),
                init=beta_initializer, allow_deferred_init=True,
                differentiable=center or differentiable_when_fixed)


class BatchNorm(_AffineNorm):
    """Normalize each channel by batch statistics in training, running statistics otherwise.

    ``out = gamma * (x - mean) / sqrt(var + epsilon) + beta`` per channel along ``axis``.
    In training the running statistics are updated as
    ``running = momentum * running + (1 - momentum) * batch``.

    Parameters
    ----------
    axis : int
        The channel axis (1 for NCHW, -1 for NHWC).
    momentum : float
    epsilon : float
    center, scale : bool
        Learn beta / gamma (otherwise they stay 0 / 1).
    use_global_stats : bool
        Use the running statistics in training too (frozen BatchNorm).
    beta_initializer, gamma_initializer, running_mean_initializer, running_variance_initializer
    in_channels : int
        Number of channels; 0 to infer it.

    Shape
    -----
    data, out : ``(batch, channels, ...)`` (channels on ``axis``), the same.

    Example
    -------
    >>> bn = mx.gluon.nn.BatchNorm()
    >>> bn.initialize()
    >>> x = mx.nd.array([[[1, 3]], [[5, 7]]])      # (batch 2, channels 1, width 2)
    >>> with mx.autograd.record():                  # training: batch statistics
    ...     y = bn(x)
    >>> y
    <BLANKLINE>
    [[[-1.3416394  -0.44721314]]
    <BLANKLINE>
     [[ 0.44721314  1.3416394 ]]]
    <NDArray 2x1x2 @cpu(0)>
    >>> y.backward()                                # MXNet updates the running statistics here
    >>> bn.running_mean.data()
    <BLANKLINE>
    [0.4]
    <NDArray 1 @cpu(0)>
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super().__init__(in_channels, center, scale, beta_initializer, gamma_initializer,
                         differentiable_when_fixed=False, **kwargs)
        self._kwargs = {'axis': axis, 'eps': epsilon, 'momentum': momentum,
                        'fix_gamma': not scale, 'use_global_stats': use_global_stats}
        if in_channels != 0:
            self.in_channels = in_channels
        with self.name_scope():
            self.running_mean = self.params.get(
                'running_mean', grad_req='null', shape=(in_channels,),
                init=running_mean_initializer, allow_deferred_init=True, differentiable=False)
            self.running_var = self.params.get(
                'running_var', grad_req='null', shape=(in_channels,),
                init=running_variance_initializer, allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        # Statistics stay float32 for float16 nets, as MXNet's kernels require.
        if np.dtype(dtype).name == 'float16':
            dtype = 'float32'
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{}({}, in_channels={})'.format(self.__class__.__name__, _kwargs_repr(self._kwargs),
                                               self.gamma.shape[0] or None)


class BatchNormReLU(BatchNorm):
    """:class:`BatchNorm` followed by ReLU (MXNet fuses the two in one operator,
    ``contrib.BatchNormWithReLU``); the parameters are BatchNorm's.

    Shape
    -----
    data, out : ``(batch, channels, ...)`` (channels on ``axis``), the same.

    Example
    -------
    >>> bn = mx.gluon.nn.BatchNormReLU()
    >>> bn.initialize()
    >>> with mx.autograd.record():
    ...     y = bn(mx.nd.array([[[1, 3]], [[5, 7]]]))
    >>> y
    <BLANKLINE>
    [[[0.         0.        ]]
    <BLANKLINE>
     [[0.44721314 1.3416394 ]]]
    <NDArray 2x1x2 @cpu(0)>
    """

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.relu(super().hybrid_forward(F, x, gamma, beta, running_mean, running_var))


class InstanceNorm(_AffineNorm):
    """Normalize each sample and channel over its spatial positions.

    Note that with the default ``scale=False`` gamma is not learned but still applied.

    Shape
    -----
    data, out : ``(batch, channels, ...)`` (channels on ``axis``), the same.

    Example
    -------
    >>> norm = mx.gluon.nn.InstanceNorm()
    >>> norm.initialize()
    >>> x = mx.nd.array([[[1, 3]], [[5, 7]]])      # (batch 2, channels 1, width 2)
    >>> norm(x)
    <BLANKLINE>
    [[[-0.999995  0.999995]]
    <BLANKLINE>
     [[-0.999995  0.999995]]]
    <NDArray 2x1x2 @cpu(0)>
    """

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer='zeros',
                 gamma_initializer='ones', in_channels=0, **kwargs):
        super().__init__(in_channels, center, scale, beta_initializer, gamma_initializer, **kwargs)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        x = F.swapaxes(x, dim1=1, dim2=self._axis)
        out = F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        return F.swapaxes(out, dim1=1, dim2=self._axis)

    def __repr__(self):
        return '{}({}, in_channels={})'.format(self.__class__.__name__, _kwargs_repr(self._kwargs),
                                               self.gamma.shape[0])


class LayerNorm(_AffineNorm):
    """Normalize each sample over ``axis`` (the last one by default), then scale and shift.

    Shape
    -----
    data, out : any shape, the same (``axis`` of size ``in_channels``).

    Example
    -------
    >>> norm = mx.gluon.nn.LayerNorm()
    >>> norm.initialize()
    >>> norm(mx.nd.array([[1, 3], [5, 9]]))
    <BLANKLINE>
    [[-0.999995   0.999995 ]
     [-0.9999988  0.9999988]]
    <NDArray 2x2 @cpu(0)>
    """

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer='zeros',
                 gamma_initializer='ones', in_channels=0, prefix=None, params=None):
        super().__init__(in_channels, center, scale, beta_initializer, gamma_initializer,
                         prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        return '{}({}, in_channels={})'.format(self.__class__.__name__, _kwargs_repr(self._kwargs),
                                               self.gamma.shape[0])


class GroupNorm(_AffineNorm):
    """Split the channels (axis 1) into ``num_groups`` groups and normalize each group of
    each sample; gamma and beta have one value per group (MXNet 1.9.1).

    Shape
    -----
    data, out : ``(batch, channels, ...)``, the same; ``channels`` a multiple of ``num_groups``.

    Example
    -------
    >>> norm = mx.gluon.nn.GroupNorm(num_groups=2)
    >>> norm.initialize()
    >>> norm(mx.nd.array([[[1], [3], [5], [9]]]))
    <BLANKLINE>
    [[[-0.999995 ]
      [ 0.999995 ]
      [-0.9999988]
      [ 0.9999987]]]
    <NDArray 1x4x1 @cpu(0)>
    """

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', prefix=None, params=None):
        super().__init__(num_groups, center, scale, beta_initializer, gamma_initializer,
                         prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'num_groups': num_groups, 'center': center,
                        'scale': scale}
        self._num_groups = num_groups
        self._epsilon = epsilon

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, _kwargs_repr(self._kwargs))
