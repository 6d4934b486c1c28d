"""Containers and basic layers: Sequential, HybridSequential, Dense, Dropout, Embedding,
Flatten, Lambda, HybridLambda."""
import warnings

from ... import ndarray
from ..block import Block, HybridBlock, _indent
from .activations import Activation
from .norm_layers import BatchNorm, BatchNormReLU, GroupNorm, InstanceNorm, LayerNorm  # noqa: F401  (MXNet's home)

__all__ = ['Sequential', 'HybridSequential', 'Dense', 'Dropout', 'Embedding', 'Flatten',
           'Lambda', 'HybridLambda']


class _SequentialMixin:
    """What Sequential and HybridSequential share: adding, indexing, slicing, repr."""
    _summary_row = False        # Block.summary shows the children's rows only

    def add(self, *blocks):
        """Append blocks; they run in the order added."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        children = '\n'.join('  ({key}): {block}'.format(key=key, block=_indent(repr(block), 2))
                             for key, block in self._children.items())
        return '{name}(\n{children}\n)'.format(name=self.__class__.__name__, children=children)

    def __getitem__(self, key):
        """A child by position, or a new container of the same type for a slice."""
        layers = list(self._children.values())[key]
        if not isinstance(layers, list):
            return layers
        net = type(self)(prefix=self._prefix)
        with net.name_scope():
            net.add(*layers)
        return net

    def __len__(self):
        return len(self._children)

    def _run_children(self, x, args):
        """Feed each child the previous output; a tuple output feeds several inputs."""
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, args = x[0], tuple(x[1:])
        return (x,) + args if args else x


class Sequential(_SequentialMixin, Block):
    """Blocks applied one after the other.

    Example
    -------
    >>> net = mx.gluon.nn.Sequential()
    >>> net.add(mx.gluon.nn.Dense(4, activation='relu'), mx.gluon.nn.Dense(2))
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 5))).shape
    (3, 2)
    >>> len(net), net[0]
    (2, Dense(5 -> 4, Activation(relu)))
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, x, *args):
        return self._run_children(x, args)

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn("All children of this Sequential layer '%s' are HybridBlocks. Consider "
                          "using HybridSequential for the best performance." % self.prefix,
                          stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """HybridBlocks applied one after the other (hybridizable as a whole).

    Example
    -------
    >>> net = mx.gluon.nn.HybridSequential()
    >>> net.add(mx.gluon.nn.Dense(4, activation='relu'), mx.gluon.nn.Dense(2))
    >>> net.initialize()
    >>> net.hybridize()
    >>> net(mx.nd.ones((3, 5))).shape
    (3, 2)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args):
        return self._run_children(x, args)


def _optional_activation(activation):
    """The Activation child of a layer (named ``<layer prefix><activation>_``), or None."""
    if activation is None:
        return None
    return Activation(activation, prefix=activation + '_')


def _mapping(weight_shape, in_axis=1, out_axis=0):
    """``'in -> out'`` of a layer's repr, ``None`` for a not yet known input size."""
    return '{0} -> {1}'.format(weight_shape[in_axis] or None, weight_shape[out_axis])


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str, optional
        Activation applied to the output ('relu', 'tanh'...).
    use_bias : bool
    flatten : bool
        Flatten all but the first axis of the input (True), or apply to the last axis only.
    dtype : str
    weight_initializer, bias_initializer : Initializer or str
    in_units : int
        Input size; 0 defers it to the first forward pass.

    Shape
    -----
    data : ``(batch, in_units)``, or ``(batch, x1, ..., xn)`` flattened to ``in_units``;
        with ``flatten=False``, ``(x1, ..., xn, in_units)``.
    out : ``(batch, units)``; with ``flatten=False``, ``(x1, ..., xn, units)``.

    Example
    -------
    >>> layer = mx.gluon.nn.Dense(2, in_units=3)
    >>> layer.initialize(mx.init.Constant(0.5))
    >>> layer(mx.nd.ones((4, 3)))
    <BLANKLINE>
    [[1.5 1.5]
     [1.5 1.5]
     [1.5 1.5]
     [1.5 1.5]]
    <NDArray 4x2 @cpu(0)>
    >>> mx.gluon.nn.Dense(2, flatten=False, in_units=3)
    Dense(3 -> 2, linear)
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype='float32',
                 weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        self._units = units
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(units, in_units), init=weight_initializer,
                                          dtype=dtype, allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=(units,), init=bias_initializer, dtype=dtype,
                                        allow_deferred_init=True) if use_bias else None
            self.act = _optional_activation(activation)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name='fwd')
        return out if self.act is None else self.act(out)

    def __repr__(self):
        return '{name}({mapping}, {act})'.format(name=self.__class__.__name__,
                                                 mapping=_mapping(self.weight.shape),
                                                 act=self.act if self.act else 'linear')


class Dropout(HybridBlock):
    """Zero each element with probability ``rate`` in training, scaling the rest by
    ``1 / (1 - rate)``; the identity in prediction.

    Parameters
    ----------
    rate : float
    axes : tuple of int
        Axes along which one mask value is shared (variational dropout).

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.random.seed(0)
    >>> drop = mx.gluon.nn.Dropout(0.5)
    >>> x = mx.nd.ones((2, 4))
    >>> drop(x)                 # prediction mode: the identity
    <BLANKLINE>
    [[1. 1. 1. 1.]
     [1. 1. 1. 1.]]
    <NDArray 2x4 @cpu(0)>
    >>> with mx.autograd.train_mode():
    ...     y = drop(x)
    >>> sorted(set(y.asnumpy().ravel().tolist()))     # zeroed or scaled by 1 / (1 - 0.5)
    [0.0, 2.0]

    """

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name='fwd', cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return '{}(p = {}, axes={})'.format(self.__class__.__name__, self._rate, self._axes)


class Embedding(HybridBlock):
    """Look up rows of a ``(input_dim, output_dim)`` weight by integer index.

    Shape
    -----
    data : indices of any shape ``S`` (float or int).
    out : ``S + (output_dim,)``.

    Example
    -------
    >>> emb = mx.gluon.nn.Embedding(10, 3)
    >>> emb.initialize()
    >>> emb(mx.nd.array([[1, 2], [3, 9]])).shape
    (2, 2, 3)
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': sparse_grad}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype='row_sparse' if sparse_grad else 'default')

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=self.__class__.__name__, **self._kwargs)


class Flatten(HybridBlock):
    """Reshape ``(batch, d1, d2, ...)`` to ``(batch, d1 * d2 * ...)``.

    Shape
    -----
    data : ``(batch, d1, ..., dn)``.
    out : ``(batch, d1 * ... * dn)``.

    Example
    -------
    >>> mx.gluon.nn.Flatten()(mx.nd.ones((2, 3, 4))).shape
    (2, 12)
    """

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return self.__class__.__name__


def _lambda_function(function, namespace):
    """(callable, its name) for a Lambda: a name of an ``namespace`` function, or a callable."""
    if isinstance(function, str):
        assert hasattr(namespace, function), 'Function name %s is not found in ndarray.' % function
        return getattr(namespace, function), function
    if callable(function):
        return function, function.__name__
    raise ValueError('Unrecognized function in lambda: {} of type {}'.format(function, type(function)))


class Lambda(Block):
    """Wrap a function of NDArrays (or the name of an ``mx.nd`` function) as a Block.

    Example
    -------
    >>> mx.gluon.nn.Lambda('tanh')(mx.nd.zeros(2))
    <BLANKLINE>
    [0. 0.]
    <NDArray 2 @cpu(0)>
    >>> mx.gluon.nn.Lambda(lambda x: x * 2)(mx.nd.ones(2))
    <BLANKLINE>
    [2. 2.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        self._func_impl, self._func_name = _lambda_function(function, ndarray)

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return '{name}({function})'.format(name=self.__class__.__name__, function=self._func_name)


class HybridLambda(HybridBlock):
    """Wrap ``function(F, *inputs)`` (or the name of an operator) as a HybridBlock.

    Example
    -------
    >>> block = mx.gluon.nn.HybridLambda(lambda F, x: F.relu(x) + 1)
    >>> block.hybridize()
    >>> block(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [1. 3.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            _lambda_function(function, ndarray)        # fail early on unknown names
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        else:
            self._func, self._func_name = _lambda_function(function, ndarray)

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return '{name}({function})'.format(name=self.__class__.__name__, function=self._func_name)
