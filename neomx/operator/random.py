"""Random samplers.

Three forms per distribution, as in MXNet:

* ``_random_<dist>`` -- scalar parameters as attributes, creates an array of ``shape`` on
  ``ctx`` (``mx.nd.random.uniform(0, 1, shape=(2, 3))``);
* ``_sample_<dist>`` -- parameters are arrays of one shape ``S``; every element is one
  distribution, sampled ``shape`` times: the output has shape ``S + shape``;
* ``_random_<dist>_like`` -- scalar parameters, shape, dtype and device of an input array.

Plus ``_random_randint``, ``_sample_multinomial`` and ``_shuffle``. Draws come from torch's
generators, so ``mx.random.seed`` makes them reproducible; the values differ from MXNet's
generator, only the distributions agree. As in MXNet, no gradient flows into distribution
parameters; the log-likelihoods of ``_sample_multinomial(get_prob=True)`` are differentiable.
"""
import math

import torch
from torch.distributions import Gamma

from ..async_errors import defer_error
from ..base import MXNetError, dtype_name, torch_dtype
from ..util import is_np_shape
from .dtype_rules import DTypeRule
from .registry import BOOL, CTX, FLOAT, INT, OPT_SHAPE, SHAPE, Attr, check, register

_FLOAT_NAMES = ('float16', 'float32', 'float64')
_CPU = torch.device('cpu')


def _dtype_attr(names, default=None):
    """A dtype attribute that accepts only ``names``; None (or 'None') means ``default``."""
    allowed = frozenset(torch_dtype(n) for n in names)
    kind = '{%s}' % ', '.join("'%s'" % n for n in (('None',) if default is None else ()) + names)

    def parse(value):
        if value is None or (isinstance(value, str) and value == 'None'):
            return default
        dtype = torch_dtype(value)
        if dtype not in allowed:
            raise ValueError('unsupported dtype')
        return dtype
    return Attr(kind, parse, default)


FLOAT_DTYPE = _dtype_attr(_FLOAT_NAMES)


def _compute_dtype(dtype):
    """Draw in float64 for float64 outputs, else float32 (torch has no half gamma kernel)."""
    return torch.float64 if dtype is torch.float64 else torch.float32


def _device(ctx):
    # Symbolic shape inference may run an impl without a resolved context.
    return _CPU if ctx is None else ctx.torch_device


def _filled(out, value):
    """``value`` (a number, or a tensor broadcastable to ``out``) as a tensor shaped like ``out``."""
    if isinstance(value, torch.Tensor):
        return value.expand_as(out)
    return out.fill_(value)


# ---------------------------------------------------------- element-wise samplers
# Each takes ``out``, an uninitialised tensor of the output shape in the compute dtype,
# and the distribution parameters as numbers or tensors broadcastable to it.
def _uniform(out, low, high):
    return out.uniform_().mul_(high - low).add_(low)


def _normal(out, loc, scale):
    return out.normal_().mul_(scale).add_(loc)


def _gamma(out, alpha, beta):
    # Scaling a standard gamma draw (rather than passing the rate 1 / beta) allows beta = 0.
    return Gamma(_filled(out, alpha), 1.0, validate_args=False).sample().mul_(beta)


def _exponential(out, lam):
    return out.exponential_().div_(lam)


def _poisson(out, lam):
    return torch.poisson(_filled(out, lam))


def _negative_binomial(out, k, p):
    # Failures before the k-th success: Poisson with a Gamma(k, (1 - p) / p) rate.
    return _poisson(out, _gamma(out, k, (1 - p) / p))


def _generalized_negative_binomial(out, mu, alpha):
    # Mean mu, variance mu + alpha * mu^2: Poisson with a Gamma(1 / alpha, alpha * mu)
    # rate; alpha = 0 is the Poisson limit.
    if not isinstance(alpha, torch.Tensor):
        rate = _gamma(out, 1.0 / alpha, alpha * mu) if alpha > 0 else mu
        return _poisson(out, rate)
    positive = alpha > 0
    safe_alpha = torch.where(positive, alpha, torch.ones_like(alpha))
    rate = torch.where(positive, _gamma(out, 1.0 / safe_alpha, safe_alpha * mu), mu)
    return _poisson(out, rate)


class _Distribution:
    """One distribution: its sampler, its scalar attributes and its array inputs.

    Parameters
    ----------
    sampler : callable(out, *params) -> Tensor
    params : list of (name, Attr, default)
        The scalar parameters, in MXNet's attribute order.
    array_names : tuple of str
        Input names of the ``_sample_`` form (MXNet names them differently: mu, sigma).
    validate : callable(*values) -> str or None
        Checks scalar parameters; returns what is wrong, or None.
    """

    def __init__(self, sampler, params, array_names, validate):
        self.sampler = sampler
        self.params = params
        self.names = tuple(p[0] for p in params)
        self.array_names = array_names
        self.validate = validate


def _rules(**rules):
    """A validator from per-parameter rules: name=(predicate, 'must be ...'), in order."""
    def validate(*values):
        for (name, (ok, text)), value in zip(rules.items(), values):
            if ok is not None and not ok(value):
                return '%s %s, got %s' % (name, text, value)
        return None
    return validate


_ANY = (None, '')
_POSITIVE = (lambda v: v > 0, 'must be positive')
_NON_NEGATIVE = (lambda v: v >= 0, 'must be non-negative')


def _validate_uniform(low, high):
    return None if high >= low else 'low must be less or equal to high, got low=%s, high=%s' % (low, high)


DISTRIBUTIONS = {
    'uniform': _Distribution(_uniform, [('low', FLOAT, 0.0), ('high', FLOAT, 1.0)],
                             ('low', 'high'), _validate_uniform),
    'normal': _Distribution(_normal, [('loc', FLOAT, 0.0), ('scale', FLOAT, 1.0)],
                            ('mu', 'sigma'), _rules(loc=_ANY, scale=_POSITIVE)),
    'gamma': _Distribution(_gamma, [('alpha', FLOAT, 1.0), ('beta', FLOAT, 1.0)],
                           ('alpha', 'beta'), _rules(alpha=_POSITIVE, beta=_POSITIVE)),
    'exponential': _Distribution(_exponential, [('lam', FLOAT, 1.0)], ('lam',), _rules(lam=_POSITIVE)),
    'poisson': _Distribution(_poisson, [('lam', FLOAT, 1.0)], ('lam',), _rules(lam=_NON_NEGATIVE)),
    'negative_binomial': _Distribution(
        _negative_binomial, [('k', INT, 1), ('p', FLOAT, 1.0)], ('k', 'p'),
        _rules(k=_NON_NEGATIVE, p=(lambda v: 0 < v <= 1, 'must be in (0, 1]'))),
    'generalized_negative_binomial': _Distribution(
        _generalized_negative_binomial, [('mu', FLOAT, 1.0), ('alpha', FLOAT, 1.0)],
        ('mu', 'alpha'), _rules(mu=_NON_NEGATIVE, alpha=_NON_NEGATIVE)),
}


def _draw(op, dist, values, shape, dtype, device):
    """Samples of ``shape`` in ``dtype`` (None: float32) from scalar parameters ``values``."""
    message = dist.validate(*values)
    if message is not None:
        # MXNet checks the parameters in the sampling kernel: the error comes with the result
        out = torch.zeros(shape, dtype=dtype or torch.float32, device=device)
        return defer_error(out, MXNetError('%s: %s' % (op, message)))
    out = torch.empty(shape, dtype=_compute_dtype(dtype), device=device)
    return dist.sampler(out, *values).to(dtype or torch.float32)


def _register_scalar_form(name, dist):
    op = '_random_' + name

    def random_scalar(shape, ctx, dtype, **values):
        # () is a scalar's shape under NumPy shape semantics, an unknown one outside them
        check(shape is not None and (len(shape) > 0 or is_np_shape()), op,
              'shape must be given and non-empty, got %s', shape)
        return _draw(op, dist, [values[n] for n in dist.names], shape, dtype, _device(ctx))
    random_scalar.__doc__ = ('Samples of the %s distribution with scalar parameters (%s); output of '
                             'shape ``shape`` on ``ctx``, float32 unless ``dtype`` says otherwise.'
                             % (name, ', '.join(dist.names)))
    register(op, attrs=dist.params + [('shape', OPT_SHAPE, None), ('ctx', CTX, None),
                                      ('dtype', FLOAT_DTYPE, None)])(random_scalar)


def _register_like_form(name, dist):
    op = '_random_%s_like' % name

    def random_like(data, **values):
        check(data.dtype.is_floating_point, op, 'only floating point inputs are supported, got %s',
              dtype_name(data.dtype))
        return _draw(op, dist, [values[n] for n in dist.names], data.shape, data.dtype, data.device)
    random_like.__doc__ = ('Samples of the %s distribution with the shape, dtype and device of '
                           '``data`` (its values are ignored).' % name)
    register(op, inputs=('data',), attrs=dist.params, same_shape=True)(random_like)


def _register_array_form(name, dist):
    op = '_sample_' + name

    def sample_arrays(*params, shape, dtype):
        first = params[0]
        for pname, p in zip(dist.array_names[1:], params[1:]):
            check(p.shape == first.shape, op, 'parameter %s has shape %s but %s has shape %s', pname,
                  p.shape, dist.array_names[0], first.shape)
        compute = _compute_dtype(dtype)
        out = torch.empty(tuple(first.shape) + shape, dtype=compute, device=first.device)
        # One distribution per parameter element: trailing unit axes broadcast it over ``shape``.
        per_element = [p.detach().to(compute).reshape(tuple(p.shape) + (1,) * len(shape)) for p in params]
        return dist.sampler(out, *per_element).to(dtype or torch.float32)
    sample_arrays.__doc__ = ('Samples of %s distributions whose parameters (%s) are arrays of one '
                             'shape S; output shape S + ``shape``.' % (name, ', '.join(dist.array_names)))
    register(op, inputs=dist.array_names,
             attrs=[('shape', SHAPE, ()), ('dtype', FLOAT_DTYPE, None)],
             dtypes=DTypeRule(output='float32'))(sample_arrays)


for _name, _dist in DISTRIBUTIONS.items():
    _register_scalar_form(_name, _dist)
    _register_like_form(_name, _dist)
    _register_array_form(_name, _dist)


@register('_random_randint', attrs=[('low', INT), ('high', INT), ('shape', OPT_SHAPE, None),
                                    ('ctx', CTX, None), ('dtype', _dtype_attr(('int32', 'int64')), None)])
def random_randint(low, high, shape, ctx, dtype):
    """Integers drawn uniformly from [low, high); output of ``shape``, int32 unless ``dtype``."""
    check(shape is not None and len(shape) > 0, '_random_randint', 'shape must be given and non-empty')
    check(low < high, '_random_randint', 'low must be less than high (low=%d, high=%d)', low, high)
    return torch.randint(low, high, shape, dtype=dtype or torch.int32, device=_device(ctx))


_MULTINOMIAL_DTYPE = _dtype_attr(('float16', 'float32', 'float64', 'int32', 'uint8'), torch.int32)


@register('_sample_multinomial', inputs=('data',),
          attrs=[('shape', SHAPE, ()), ('get_prob', BOOL, False), ('dtype', _MULTINOMIAL_DTYPE, torch.int32)],
          num_outputs=lambda a: 2 if a['get_prob'] else 1, dtype_casts=False)
def sample_multinomial(data, shape, get_prob, dtype):
    """Category indices drawn from the distributions on the last axis of ``data``.

    ``data`` of shape (..., k) holds probabilities (summing to one on the last axis); the
    samples have shape ``data.shape[:-1] + shape`` (``(1,)`` when that is empty), in
    ``dtype``. With ``get_prob``, also returns the log-probability of each sample, in
    ``data``'s dtype; it is differentiable with respect to ``data``.
    """
    check(data.dim() >= 1, '_sample_multinomial', 'data must have at least one axis, got shape %s',
          data.shape)
    k = data.shape[-1]
    draws = math.prod(shape)
    probs = data.detach().reshape(-1, k).to(_compute_dtype(data.dtype))
    indices = torch.multinomial(probs, draws, replacement=True)
    out_shape = (tuple(data.shape[:-1]) + shape) or (1,)
    samples = indices.reshape(out_shape).to(dtype)
    if not get_prob:
        return samples
    log_prob = torch.log(torch.gather(data.reshape(-1, k), 1, indices)).reshape(out_shape)
    return samples, log_prob


@register('_shuffle', inputs=('data',), same_shape=True)
def shuffle(data):
    """A random permutation of ``data`` along its first axis (a new array).

    Differentiable (the gradient is un-permuted), where MXNet's has no gradient.
    """
    check(data.dim() >= 1, '_shuffle', 'data must have at least one axis, got shape %s', data.shape)
    return data[torch.randperm(data.shape[0], device=data.device)]


def _log_uniform_classes(count, range_max, device):
    """``count`` classes in [0, range_max) drawn with P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)."""
    scaled = torch.rand(count, dtype=torch.float64, device=device) * math.log(range_max + 1)
    return (torch.exp(scaled) - 1).long() % range_max


def _first_unique(draws, count):
    """The first ``count`` distinct values of ``draws`` in order of appearance, and the number
    of draws it took; None when ``draws`` has fewer distinct values."""
    values, inverse = torch.unique(draws, return_inverse=True)
    if values.numel() < count:
        return None
    positions = torch.arange(draws.numel(), device=draws.device)
    first = torch.full((values.numel(),), draws.numel(), dtype=torch.long, device=draws.device)
    first = first.scatter_reduce(0, inverse, positions, reduce='amin').sort().values[:count]
    return draws[first], int(first[-1]) + 1


@register('_sample_unique_zipfian', attrs=[('range_max', INT), ('shape', OPT_SHAPE, None)], num_outputs=2,
          dtypes=DTypeRule(output='int64'))
def sample_unique_zipfian(range_max, shape):
    """Per row of ``shape`` (batch, num_sampled): distinct classes of [0, range_max) drawn from
    the log-uniform (Zipfian) distribution without replacement, and how many draws each row
    took (int64, shapes ``shape`` and (batch,))."""
    op = '_sample_unique_zipfian'
    check(shape is not None and len(shape) == 2, op, 'shape must be 2-D (batch_size, num_sampled), got %s', shape)
    batch, count = shape
    check(0 < count <= range_max, op, 'cannot draw %d distinct classes out of range_max=%d', count, range_max)
    samples, tries = [], []
    for _ in range(batch):
        draws = _log_uniform_classes(2 * count, range_max, _CPU)
        found = _first_unique(draws, count)
        while found is None:        # rarely: too many repeats, draw more
            draws = torch.cat([draws, _log_uniform_classes(2 * count, range_max, _CPU)])
            found = _first_unique(draws, count)
        samples.append(found[0])
        tries.append(found[1])
    return torch.stack(samples), torch.tensor(tries, dtype=torch.int64)
