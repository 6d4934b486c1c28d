"""Activation layers: Activation, LeakyReLU, PReLU, ELU, SELU, Swish, GELU.

All are elementwise (output shape = input shape) and run on the ``Activation`` and
``LeakyReLU`` operators.
"""
from ... import initializer
from ..block import HybridBlock

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']


class Activation(HybridBlock):
    """``act_type`` applied elementwise: 'relu', 'sigmoid', 'tanh', 'softrelu' or 'softsign'.

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.gluon.nn.Activation('relu')(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [0. 2.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, self._act_type)


class _LeakyReLUFamily(HybridBlock):
    """A fixed ``LeakyReLU`` operator variant (``act_type``, optional ``slope``)."""
    _act_type = None
    _node_name = 'fwd'      # the operator's name in the block's scope (None: numbered), as MXNet

    def __init__(self, slope=None, **kwargs):
        super().__init__(**kwargs)
        self._slope_kwargs = {} if slope is None else {'slope': slope}

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type=self._act_type, name=self._node_name, **self._slope_kwargs)


class LeakyReLU(_LeakyReLUFamily):
    """``x`` for ``x > 0``, ``alpha * x`` otherwise (``alpha >= 0``).

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.gluon.nn.LeakyReLU(0.1)(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [-0.1  2. ]
    <NDArray 2 @cpu(0)>
    """
    _act_type = 'leaky'

    def __init__(self, alpha, **kwargs):
        assert alpha >= 0, 'Slope coefficient for LeakyReLU must be no less than 0.'
        super().__init__(alpha, **kwargs)
        self._alpha = alpha

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, self._alpha)


class ELU(_LeakyReLUFamily):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.gluon.nn.ELU()(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [-0.63212055  2.        ]
    <NDArray 2 @cpu(0)>
    """
    _act_type = 'elu'
    _node_name = None

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(alpha, **kwargs)


class SELU(_LeakyReLUFamily):
    """Scaled ELU with the self-normalizing constants (scale 1.0507, alpha 1.6733).

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.gluon.nn.SELU()(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [-1.1113307  2.101402 ]
    <NDArray 2 @cpu(0)>
    """
    _act_type = 'selu'


class GELU(_LeakyReLUFamily):
    """Gaussian error linear unit ``x * Phi(x)`` (erf form).

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.gluon.nn.GELU()(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [-0.15865526  1.9544997 ]
    <NDArray 2 @cpu(0)>
    """
    _act_type = 'gelu'


class PReLU(HybridBlock):
    """Leaky ReLU whose negative slope ``alpha`` is learned (one per channel or shared).

    Parameters
    ----------
    alpha_initializer : Initializer
        Initial slope, 0.25 by default.
    in_channels : int
        Number of slopes: 1 shares one slope, else one per channel (axis 1).

    Shape
    -----
    data, out : any shape, the same; one slope per channel (axis 1) or one shared.

    Example
    -------
    >>> prelu = mx.gluon.nn.PReLU()
    >>> prelu.initialize()
    >>> prelu(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [-0.25  2.  ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``.

    Shape
    -----
    data, out : any shape, the same.

    Example
    -------
    >>> mx.gluon.nn.Swish()(mx.nd.array([-1, 2]))
    <BLANKLINE>
    [-0.26894143  1.761594  ]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')
