"""Contributed layers: Concurrent, HybridConcurrent, Identity, SparseEmbedding, SyncBatchNorm,
PixelShuffle1D/2D/3D."""
from .... import context, ndarray
from ...block import Block, HybridBlock
from ...nn import BatchNorm, Embedding, HybridSequential, Sequential

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding', 'SyncBatchNorm',
           'PixelShuffle1D', 'PixelShuffle2D', 'PixelShuffle3D']


class Concurrent(Sequential):
    """Feed the same input to every child and concatenate their outputs along ``axis``.

    Shape
    -----
    The children's outputs concatenated along ``axis``.

    Example
    -------
    >>> net = mx.gluon.contrib.nn.Concurrent(axis=1)
    >>> net.add(mx.gluon.nn.Dense(2), mx.gluon.nn.Dense(3), mx.gluon.contrib.nn.Identity())
    >>> net.initialize()
    >>> net(mx.nd.ones((4, 5))).shape           # 2 + 3 + 5 columns
    (4, 10)
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return ndarray.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Hybridizable :class:`Concurrent`.

    Shape
    -----
    The children's outputs concatenated along ``axis``.

    Example
    -------
    >>> net = mx.gluon.contrib.nn.HybridConcurrent(axis=1)
    >>> net.add(mx.gluon.nn.Dense(2), mx.gluon.contrib.nn.Identity())
    >>> net.initialize(mx.init.One())
    >>> net.hybridize()
    >>> net(mx.nd.ones((1, 3)))                 # the Dense sums (3 + bias 0), then the input
    <BLANKLINE>
    [[3. 3. 1. 1. 1.]]
    <NDArray 1x5 @cpu(0)>
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridSequential):
    """Return the input unchanged (a placeholder branch in Concurrent blocks).

    Shape
    -----
    out: the input.

    Example
    -------
    >>> mx.gluon.contrib.nn.Identity()(mx.nd.array([1, 2]))
    <BLANKLINE>
    [1. 2.]
    <NDArray 2 @cpu(0)>
    """

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

    Shape
    -----
    data: ``(N, C, ...)``; out: the same.

    Example
    -------
    On one context it is BatchNorm (in a parallel step over several GPUs, each
    normalises with the statistics of the whole batch):

    >>> layer = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=2, num_devices=1)
    >>> layer.initialize()
    >>> x = mx.nd.array([[1, 10], [3, 30]])
    >>> with mx.autograd.record():
    ...     y = layer(x)
    >>> y.round()                               # per channel: (x - mean) / std
    <BLANKLINE>
    [[-1. -1.]
     [ 1.  1.]]
    <NDArray 2x2 @cpu(0)>
    >>> layer.running_mean.data()               # 0.9 * 0 + 0.1 * mean
    <BLANKLINE>
    [0. 0.]
    <NDArray 2 @cpu(0)>
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


class SparseEmbedding(Block):
    """Embedding whose weight and gradient MXNet keeps row-sparse, for large vocabularies.

    In neomx this is :class:`~neomx.gluon.nn.Embedding` with ``sparse_grad`` (its weight's
    gradient is row_sparse) run imperatively; unlike MXNet it also runs before a Trainer exists.
    Shapes: indices of any shape ``S`` -> ``S + (output_dim,)``.

    Example
    -------
    >>> layer = mx.gluon.contrib.nn.SparseEmbedding(10, 3)
    >>> layer.initialize(mx.init.Constant(0.5))
    >>> trainer = mx.gluon.Trainer(layer.collect_params(), 'sgd')     # MXNet needs one first
    >>> x = mx.nd.array([[1, 4], [4, 9]])
    >>> with mx.autograd.record():
    ...     y = layer(x)
    >>> y.backward()
    >>> y.shape, layer.weight.grad().stype
    ((2, 2, 3), 'row_sparse')
    >>> layer.weight.grad().indices                     # only the rows looked up
    <BLANKLINE>
    [1 4 9]
    <NDArray 3 @cpu(0)>
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': True}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, stype='row_sparse', grad_stype='row_sparse')

    def forward(self, x):
        return ndarray.Embedding(x, self.weight._array_on(x.context), name="fwd", **self._kwargs)

    __repr__ = Embedding.__repr__


def _factors(factor, count):
    """``factor`` as a tuple of ``count`` ints (one int repeats)."""
    factors = (factor,) * count if isinstance(factor, int) else tuple(factor)
    assert len(factors) == count, 'expected %d factors, got %s' % (count, factor)
    return factors


class _PixelShuffle(HybridBlock):
    """Move channel groups into ``factor``-times larger spatial dimensions (sub-pixel
    convolution's upscaling); subclasses give the reshapes."""

    def __init__(self, factor):
        super().__init__()
        self._factors = factor

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, self._factors)


class PixelShuffle1D(_PixelShuffle):
    """Shapes: (N, f * C, W) -> (N, C, W * f).

    Example
    -------
    >>> x = mx.nd.arange(8).reshape((1, 4, 2))          # (N, f * C, W) with f = 2, C = 2
    >>> mx.gluon.contrib.nn.PixelShuffle1D(2)(x)
    <BLANKLINE>
    [[[0. 2. 1. 3.]
      [4. 6. 5. 7.]]]
    <NDArray 1x2x4 @cpu(0)>
    """

    def __init__(self, factor):
        super().__init__(int(factor))

    def hybrid_forward(self, F, x):
        f = self._factors
        x = F.reshape(x, (0, -4, -1, f, 0))                 # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))                    # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))


class PixelShuffle2D(_PixelShuffle):
    """Shapes: (N, f1 * f2 * C, H, W) -> (N, C, H * f1, W * f2).

    Example
    -------
    >>> x = mx.nd.arange(16).reshape((1, 4, 2, 2))      # f1 = f2 = 2, C = 1
    >>> mx.gluon.contrib.nn.PixelShuffle2D((2, 2))(x)
    <BLANKLINE>
    [[[[ 0.  4.  1.  5.]
       [ 8. 12.  9. 13.]
       [ 2.  6.  3.  7.]
       [10. 14. 11. 15.]]]]
    <NDArray 1x1x4x4 @cpu(0)>
    """

    def __init__(self, factor):
        super().__init__(_factors(factor, 2))

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))        # (N, C, f1 * f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))          # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))              # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))


class PixelShuffle3D(_PixelShuffle):
    """Shapes: (N, f1 * f2 * f3 * C, D, H, W) -> (N, C, D * f1, H * f2, W * f3).

    Example
    -------
    >>> x = mx.nd.ones((1, 24, 2, 3, 4))                 # f = (2, 3, 4), C = 1
    >>> mx.gluon.contrib.nn.PixelShuffle3D((2, 3, 4))(x).shape
    (1, 1, 4, 9, 16)
    """

    def __init__(self, factor):
        super().__init__(_factors(factor, 3))

    def hybrid_forward(self, F, x):
        # One spatial axis at a time, as MXNet's graph does (6-D transposes at most).
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))   # (N, C, f1 f2 f3, D, H, W)
        x = F.swapaxes(x, dim1=2, dim2=3)                       # (N, C, D, f1 f2 f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))      # (N, C, D, f1, f2 f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                   # (N, C, D f1, f2 f3, H, W)
        x = F.swapaxes(x, dim1=3, dim2=4)                       # (N, C, D f1, H, f2 f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))           # (N, C, D f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                   # (N, C, D f1, H f2, f3, W)
        x = F.swapaxes(x, dim1=4, dim2=5)                       # (N, C, D f1, H f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))
