"""``mx.init``: parameter initializers.

An initializer fills an existing array in place. Called with an :class:`InitDesc` (a
parameter name plus attributes), it picks what to do as MXNet 1.9.1 does:

* an ``'__init__'`` attribute (an initializer, its name, or its ``dumps()`` JSON) wins and
  is applied as a weight initializer -- this is how a Gluon ``Parameter(init=...)`` works;
* otherwise the name suffix decides: ``*weight`` gets the initializer's own distribution,
  ``*bias``/``*beta``/``*min`` zeros, ``*gamma``/``*max`` ones, anything else ``ValueError``.

Random initializers draw from torch's generator, the one ``mx.random.seed`` seeds, and write
into the array's memory directly (no temporary array per parameter).
"""
import json
import logging
import math
import re
import warnings

import numpy as np
import torch

from .base import string_types

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed', 'Zero', 'One',
           'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier', 'MSRAPrelu', 'Bilinear',
           'LSTMBias']

# names MXNet's module also holds
from math import sqrt  # noqa: E402,F401
from .ndarray import NDArray, load  # noqa: E402,F401
from .util import is_np_array  # noqa: E402,F401


class InitDesc(str):
    """A parameter name with the attributes that steer its initialization.

    Parameters
    ----------
    name : str
        The parameter's name (``dense0_weight``).
    attrs : dict of str -> object, optional
        Attributes; ``'__init__'`` names an initializer that overrides the name-based choice.
    global_init : Initializer, optional
        The initializer of the whole model, set by the first initializer that sees the desc.

    Example
    -------
    >>> desc = mx.init.InitDesc('fc_weight', attrs={'__init__': mx.init.One().dumps()})
    >>> desc, desc.attrs
    ('fc_weight', {'__init__': '["one", {}]'})
    >>> arr = mx.nd.zeros(2)
    >>> mx.init.Zero()(desc, arr)                # the '__init__' attribute wins
    >>> arr
    <BLANKLINE>
    [1. 1.]
    <NDArray 2 @cpu(0)>
    """

    def __new__(cls, name, attrs=None, global_init=None):
        desc = super().__new__(cls, name)
        desc.attrs = attrs or {}
        desc.global_init = global_init
        return desc


_REGISTRY = {}


def register(klass):
    """Class decorator: make ``klass`` creatable by its lower-cased name (``create('xavier')``)."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*aliases):
    """Class decorator: register further (lower-case) names for an initializer class."""
    def deco(klass):
        for name in aliases:
            _REGISTRY[name.lower()] = klass
        return klass
    return deco


def create(initializer, **kwargs):
    """An initializer from an instance (returned as is), a registered name, or ``dumps()`` JSON.

    Raises
    ------
    AssertionError
        For a name that is not registered (MXNet's registry behaviour).
    """
    if isinstance(initializer, Initializer):
        return initializer
    if isinstance(initializer, type) and issubclass(initializer, Initializer):
        return initializer(**kwargs)
    if not isinstance(initializer, string_types):
        raise TypeError('cannot create an initializer from %r' % (initializer,))
    if initializer.startswith('['):
        name, saved_kwargs = json.loads(initializer)
        return create(name, **saved_kwargs)
    klass = _REGISTRY.get(initializer.lower())
    assert klass is not None, ('%s is not registered. Please register with initializer.register first'
                               % initializer)
    return klass(**kwargs)


def _fill_uniform(arr, low, high):
    with torch.no_grad():
        arr.as_torch().uniform_(low, high)


def _fill_normal(arr, mean, std):
    with torch.no_grad():
        arr.as_torch().normal_(mean, std)


class Initializer:
    """Base class: subclasses define ``_init_weight(name, arr)``.

    Keyword arguments given to the constructor are what :meth:`dumps` records, so that
    ``create(init.dumps())`` rebuilds an equal initializer.

    Example
    -------

    A subclass fills arrays in ``_init_weight`` (the name's suffix picks the method:
    ``_bias`` names get ``_init_bias``...):

    >>> class Arange(mx.init.Initializer):
    ...     def _init_weight(self, name, arr):
    ...         arr[:] = mx.nd.arange(arr.size).reshape(arr.shape)
    >>> weight = mx.nd.zeros((2, 2))
    >>> Arange()(mx.init.InitDesc('fc_weight'), weight)
    >>> weight
    <BLANKLINE>
    [[0. 1.]
     [2. 3.]]
    <NDArray 2x2 @cpu(0)>
    >>> bias = mx.nd.ones(2)
    >>> Arange()(mx.init.InitDesc('fc_bias'), bias)          # biases get zeros
    >>> bias
    <BLANKLINE>
    [0. 0.]
    <NDArray 2 @cpu(0)>
    >>> mx.init.Xavier(magnitude=2).dumps()
    '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}]'
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log the norm (or ``print_func(arr)``) of every array this initializer fills."""
        self._verbose = verbose
        self._print_func = print_func or _rms
        return self

    def __eq__(self, other):
        # as MXNet: initializers of one class with the same arguments are equal (unhashable then)
        if not isinstance(other, Initializer):
            return False
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None

    def dumps(self):
        """JSON ``[lower-cased class name, constructor kwargs]``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Fill ``arr`` (an NDArray) for the parameter described by ``desc``.

        Parameters
        ----------
        desc : InitDesc or str
            The parameter; a plain string takes MXNet's deprecated name-only path.
        arr : NDArray
            Filled in place.
        """
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        chosen = desc.attrs.get('__init__', '')
        if chosen:
            create(chosen)._init_weight(desc, arr)
            self._verbose_print(desc, chosen, arr)
            return
        for suffix, method in self._SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    # Name suffixes and the method that initializes them, checked in this order.
    _SUFFIX_RULES = (('weight', '_init_weight'), ('bias', '_init_bias'), ('gamma', '_init_gamma'),
                     ('beta', '_init_beta'), ('min', '_init_zero'), ('max', '_init_one'))
    # The deprecated string-name path also knows the running statistics of old symbols.
    _LEGACY_RULES = (('weight', '_init_weight'), ('bias', '_init_bias'), ('gamma', '_init_gamma'),
                     ('beta', '_init_beta'), ('moving_mean', '_init_zero'),
                     ('moving_var', '_init_one'), ('moving_inv_var', '_init_zero'),
                     ('moving_avg', '_init_zero'), ('min', '_init_zero'), ('max', '_init_one'))

    def _legacy_init(self, name, arr):
        warnings.warn('Calling initializer with init(str, NDArray) has been deprecated. '
                      'please use init(mx.init.InitDesc(...), NDArray) instead.',
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, string_types):
            raise TypeError('name must be a string, got %s' % type(name).__name__)
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
            return
        for suffix, method in self._LEGACY_RULES:
            if name.endswith(suffix):
                getattr(self, method)(name, arr)
                return
        self._init_default(name, arr)

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def _init_bilinear(self, _, arr):
        Bilinear()._init_weight(_, arr)

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    _init_bias = _init_zero
    _init_beta = _init_zero
    _init_gamma = _init_one

    def _init_weight(self, name, arr):
        raise NotImplementedError('%s must define _init_weight' % type(self).__name__)

    def _init_default(self, name, _):
        raise ValueError(
            'Unknown initialization pattern for %s. Default initialization is now limited to '
            '"weight", "bias", "gamma" (1.0), and "beta" (0.0). Please use '
            'mx.sym.Variable(init=mx.init.*) to set initialization pattern' % name)


def _rms(arr):
    values = arr.asnumpy()
    return str(float(np.linalg.norm(values) / math.sqrt(max(values.size, 1))))


class Load:
    """Initialize from saved arrays by name, falling back to ``default_init``.

    Parameters
    ----------
    param : str or dict of str -> NDArray
        A ``.params`` file name or the loaded dict; ``arg:``/``aux:`` prefixes are dropped.
    default_init : Initializer, optional
        For names absent from ``param``.
    verbose : bool
        Log which names were loaded.

    Example
    -------
    >>> init = mx.init.Load({'arg:fc_weight': mx.nd.array([1, 2])}, default_init=mx.init.Zero())
    >>> weight, bias = mx.nd.ones(2), mx.nd.ones(2)
    >>> init(mx.init.InitDesc('fc_weight'), weight)               # loaded
    >>> init(mx.init.InitDesc('fc_bias'), bias)                   # not saved: default_init
    >>> weight.asnumpy(), bias.asnumpy()
    (array([1., 2.], dtype=float32), array([0., 0.], dtype=float32))
    """

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, string_types):
            from .ndarray import load
            param = load(param)
        self.param = {(k[4:] if k.startswith(('arg:', 'aux:')) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            assert arr.shape == self.param[name].shape, (
                'Parameter %s cannot be initialized from loading. Shape mismatch, target %s vs loaded %s'
                % (name, arr.shape, self.param[name].shape))
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
            return
        assert self.default_init is not None, (
            'Cannot Initialize %s. Not found in loaded param and no default Initializer is provided.'
            % name)
        self.default_init(name, arr)
        if self.verbose:
            logging.info('Initialized %s by default', name)


class Mixed:
    """Pick the initializer of the first regular expression that matches the name.

    Parameters
    ----------
    patterns : list of str
        Regular expressions, matched at the start of the name (``re.match``).
    initializers : list of Initializer
        One per pattern.

    Example
    -------
    >>> init = mx.init.Mixed(['.*bias', '.*'], [mx.init.Constant(0.5), mx.init.One()])
    >>> bias, weight = mx.nd.zeros(2), mx.nd.zeros(2)
    >>> init(mx.init.InitDesc('fc_bias'), bias)
    >>> init(mx.init.InitDesc('fc_weight'), weight)
    >>> bias.asnumpy(), weight.asnumpy()
    (array([0., 0.], dtype=float32), array([1., 1.], dtype=float32))
    """

    def __init__(self, patterns, initializers):
        assert len(patterns) == len(initializers), 'patterns and initializers differ in length'
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError('Parameter name %s did not match any pattern. Consider add a ".*" pattern '
                         'at the and with default Initializer.' % name)


@register
@alias('zeros')
class Zero(Initializer):
    """Fill with 0.

    Example
    -------
    >>> layer = mx.gluon.nn.Dense(2, in_units=3, weight_initializer=mx.init.Zero())
    >>> layer.initialize()
    >>> layer.weight.data()
    <BLANKLINE>
    [[0. 0. 0.]
     [0. 0. 0.]]
    <NDArray 2x3 @cpu(0)>
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0.0


@register
@alias('ones')
class One(Initializer):
    """Fill with 1.

    Example
    -------
    >>> layer = mx.gluon.nn.Dense(2, in_units=3, weight_initializer=mx.init.One())
    >>> layer.initialize()
    >>> layer.weight.data()
    <BLANKLINE>
    [[1. 1. 1.]
     [1. 1. 1.]]
    <NDArray 2x3 @cpu(0)>
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1.0


@register
class Constant(Initializer):
    """Fill with ``value``: a scalar, or an array broadcastable to the parameter's shape.

    Example
    -------
    >>> layer = mx.gluon.nn.Dense(2, in_units=2, weight_initializer=mx.init.Constant([[1, 2], [3, 4]]))
    >>> layer.initialize()
    >>> layer.weight.data()
    <BLANKLINE>
    [[1. 2.]
     [3. 4.]]
    <NDArray 2x2 @cpu(0)>
    """

    def __init__(self, value):
        recorded = value
        if not np.isscalar(value):          # arrays are recorded (and dumped) as nested lists
            recorded = np.asarray(value.asnumpy() if hasattr(value, 'asnumpy') else value).tolist()
        super().__init__(value=recorded)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value


@register
class Uniform(Initializer):
    """Draw from U(-scale, scale).

    Example
    -------
    >>> mx.random.seed(0)
    >>> w = mx.nd.zeros((100,))
    >>> mx.init.Uniform(0.1)(mx.init.InitDesc('fc_weight'), w)
    >>> bool(w.abs().max() <= 0.1), bool(w.abs().sum() > 0)
    (True, True)
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _fill_uniform(arr, -self.scale, self.scale)


@register
class Normal(Initializer):
    """Draw from N(0, sigma^2).

    Example
    -------
    >>> mx.random.seed(0)
    >>> w = mx.nd.zeros((10000,))
    >>> mx.init.Normal(sigma=0.5)(mx.init.InitDesc('fc_weight'), w)
    >>> round(float(w.asnumpy().std()), 1)
    0.5
    """

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _fill_normal(arr, 0.0, self.sigma)


@register
class Orthogonal(Initializer):
    """A (scaled) orthogonal matrix over the flattened trailing dimensions.

    Parameters
    ----------
    scale : float
        Multiplies the orthonormal rows (or columns).
    rand_type : {'uniform', 'normal'}
        Distribution of the random matrix whose SVD gives the orthogonal factor.

    Example
    -------
    >>> mx.random.seed(0)
    >>> layer = mx.gluon.nn.Dense(3, in_units=3, weight_initializer=mx.init.Orthogonal(scale=1.0))
    >>> layer.initialize()
    >>> w = layer.weight.data().asnumpy()
    >>> np.allclose(w @ w.T, np.eye(3), atol=1e-5)      # orthonormal rows
    True
    """

    def __init__(self, scale=1.414, rand_type='uniform'):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == 'uniform':
            rand = torch.empty(nout, nin, dtype=torch.float64).uniform_(-1.0, 1.0)
        elif self.rand_type == 'normal':
            rand = torch.randn(nout, nin, dtype=torch.float64)
        else:
            raise ValueError('Unknown random type %r' % self.rand_type)
        u, _, vh = torch.linalg.svd(rand, full_matrices=False)
        # u is (nout, k) and vh (k, nin) with k = min: the one of the full shape is orthogonal.
        factor = u if u.shape == rand.shape else vh
        arr[:] = (self.scale * factor).reshape(arr.shape).numpy()


@register
class Xavier(Initializer):
    """Glorot initialization: variance ``magnitude / factor`` from the fans of the weight.

    Parameters
    ----------
    rnd_type : {'uniform', 'gaussian'}
        U(-s, s) with ``s = sqrt(magnitude / factor)``, or N(0, s^2).
    factor_type : {'avg', 'in', 'out'}
        ``factor`` is ``(fan_in + fan_out) / 2``, ``fan_in`` or ``fan_out``; for a weight of
        shape ``(out, in, *kernel)``, ``fan_in = in * prod(kernel)``, ``fan_out = out * prod(kernel)``.
    magnitude : float

    Example
    -------
    >>> mx.random.seed(0)
    >>> w = mx.nd.zeros((20, 30))                   # fan_out 20, fan_in 30: s = sqrt(3 / 25)
    >>> mx.init.Xavier(magnitude=3)(mx.init.InitDesc('fc_weight'), w)
    >>> bool(w.abs().max() <= (3 / 25) ** 0.5)
    True
    """

    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError('Xavier initializer cannot be applied to vector {0}. It requires at '
                             'least 2D.'.format(name))
        receptive = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        factors = {'avg': (fan_in + fan_out) / 2.0, 'in': fan_in, 'out': fan_out}
        if self.factor_type not in factors:
            raise ValueError('Incorrect factor type %r' % self.factor_type)
        scale = math.sqrt(self.magnitude / factors[self.factor_type])
        if self.rnd_type == 'uniform':
            _fill_uniform(arr, -scale, scale)
        elif self.rnd_type == 'gaussian':
            _fill_normal(arr, 0.0, scale)
        else:
            raise ValueError('Unknown random type %r' % self.rnd_type)


@register
class MSRAPrelu(Xavier):
    """He initialization for PReLU nets: Gaussian Xavier with magnitude ``2 / (1 + slope^2)``.

    Example
    -------
    >>> mx.random.seed(0)
    >>> layer = mx.gluon.nn.Dense(100, in_units=200, weight_initializer=mx.init.MSRAPrelu(slope=0.0))
    >>> layer.initialize()
    >>> w = layer.weight.data().asnumpy()       # std sqrt(2 / mean(fan_in, fan_out)) = 0.115
    >>> round(float(w.std()), 2)
    0.12
    """

    def __init__(self, factor_type='avg', slope=0.25):
        super().__init__('gaussian', factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


@register
class Bilinear(Initializer):
    """Bilinear-interpolation kernels (for upsampling with Deconvolution), per filter.

    Example
    -------
    >>> weight = mx.nd.zeros((1, 1, 4, 4))      # a 2x upsampling Deconvolution kernel
    >>> mx.init.Bilinear()(mx.init.InitDesc('up_weight'), weight)
    >>> weight[0, 0]
    <BLANKLINE>
    [[0.0625 0.1875 0.1875 0.0625]
     [0.1875 0.5625 0.5625 0.1875]
     [0.1875 0.5625 0.5625 0.1875]
     [0.0625 0.1875 0.1875 0.0625]]
    <NDArray 4x4 @cpu(0)>
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        shape = arr.shape
        f = math.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        wx = 1 - np.abs(np.arange(shape[3]) / f - c)
        wy = 1 - np.abs(np.arange(shape[2]) / f - c)
        arr[:] = np.broadcast_to(np.outer(wy, wx), shape).astype(np.float32)


@register
class LSTMBias(Initializer):
    """Zeros, except the forget-gate quarter (the second of four gates) set to ``forget_bias``.

    Example
    -------
    >>> cell = mx.gluon.rnn.LSTMCell(2, input_size=3, i2h_bias_initializer=mx.init.LSTMBias(1.0))
    >>> cell.initialize()
    >>> cell.i2h_bias.data()                    # 4 gates of 2 units: i, f, c, o
    <BLANKLINE>
    [0. 0. 1. 1. 0. 0. 0. 0.]
    <NDArray 8 @cpu(0)>
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, _, arr):
        arr[:] = 0.0
        num_hidden = arr.shape[0] // 4
        arr[num_hidden:2 * num_hidden] = self.forget_bias
