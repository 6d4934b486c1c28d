"""Random samplers of MXNet's NumPy interface (``_npi_uniform``, ``_npi_normal``...).

Each distribution parameter is either a scalar attribute or an array input (``input1``,
``input2``: the attribute is None then), broadcast together; ``size`` gives the output's
shape (the parameters' broadcast shape by default). Draws come from torch's generators,
which ``mx.random.seed``/``mx.np.random.seed`` seed; float32 unless ``dtype``.
"""
import torch
from torch.distributions import Gamma

from ..base import torch_dtype
from .np_creation import device_of
from .registry import ANY, BOOL, CTX, INT, OPT_FLOAT, Attr, register

__all__ = ['NP_DISTRIBUTIONS']

_DTYPE = Attr('dtype', lambda v: None if v is None or v == 'None' else torch_dtype(v), None)


def _uniform(shape, low, high, gen_dtype, device):
    return torch.rand(shape, dtype=gen_dtype, device=device) * (high - low) + low


def _normal(shape, loc, scale, gen_dtype, device):
    return torch.randn(shape, dtype=gen_dtype, device=device) * scale + loc


def _gamma(shape, alpha, scale, gen_dtype, device):
    a = torch.as_tensor(alpha, dtype=gen_dtype, device=device).expand(shape)
    return Gamma(a, torch.ones_like(a), validate_args=False).rsample() * scale


def _exponential(shape, scale, gen_dtype, device):
    return torch.empty(shape, dtype=gen_dtype, device=device).exponential_() * scale


def _gumbel(shape, loc, scale, gen_dtype, device):
    u = torch.rand(shape, dtype=gen_dtype, device=device).clamp_min(1e-12)
    return loc - scale * torch.log(-torch.log(u))


def _logistic(shape, loc, scale, gen_dtype, device):
    u = torch.rand(shape, dtype=gen_dtype, device=device).clamp(1e-12, 1 - 1e-7)
    return loc + scale * torch.log(u / (1 - u))


def _pareto(shape, a, gen_dtype, device):
    e = torch.empty(shape, dtype=gen_dtype, device=device).exponential_()
    return torch.expm1(e / torch.as_tensor(a, dtype=gen_dtype, device=device))


def _rayleigh(shape, scale, gen_dtype, device):
    e = torch.empty(shape, dtype=gen_dtype, device=device).exponential_()
    return scale * torch.sqrt(2 * e)


def _weibull(shape, a, gen_dtype, device):
    e = torch.empty(shape, dtype=gen_dtype, device=device).exponential_()
    a = torch.as_tensor(a, dtype=gen_dtype, device=device)
    return torch.where(a == 0, torch.zeros_like(e), torch.pow(e, 1.0 / a))     # a = 0: zeros, as NumPy


def _power(shape, a, gen_dtype, device):
    return torch.pow(torch.rand(shape, dtype=gen_dtype, device=device), 1.0 / torch.as_tensor(a, dtype=gen_dtype,
                                                                                             device=device))


# name: (operator, sampler, parameter attributes with defaults, check on scalar values)
NP_DISTRIBUTIONS = {
    'uniform': ('_npi_uniform', _uniform, (('low', 0.0), ('high', 1.0)), None),
    'normal': ('_npi_normal', _normal, (('loc', 0.0), ('scale', 1.0)), ('scale',)),
    'gamma': ('_npi_gamma', _gamma, (('shape', 1.0), ('scale', 1.0)), ('shape', 'scale', 'positive')),
    'exponential': ('_npi_exponential', _exponential, (('scale', 1.0),), ('scale',)),
    'gumbel': ('_npi_gumbel', _gumbel, (('loc', 0.0), ('scale', 1.0)), ('scale',)),
    'logistic': ('_npi_logistic', _logistic, (('loc', 0.0), ('scale', 1.0)), ('scale',)),
    'pareto': ('_npi_pareto', _pareto, (('a', 1.0),), ('a', 'positive')),
    'rayleigh': ('_npi_rayleigh', _rayleigh, (('scale', 1.0),), ('scale',)),
    'weibull': ('_npi_weibull', _weibull, (('a', 1.0),), ('a', 'positive')),
    'power': ('_npi_powerd', _power, (('a', 1.0),), ('a', 'positive')),
}


def _size_tuple(size):
    if size is None:
        return None
    if isinstance(size, int):
        return (size,)
    return tuple(int(s) for s in size)


def _register(name, op, sampler, params, non_negative):
    names = tuple(p for p, _ in params)
    positive = bool(non_negative) and 'positive' in non_negative     # gamma: parameters must be > 0
    inputs = tuple('input%d' % (i + 1) for i in range(len(names)))

    def sample(*args, size, ctx, dtype):
        tensors, values = args[:len(names)], args[len(names):]
        out_dtype = torch.float32 if dtype is None else torch_dtype(dtype, name)
        gen_dtype = torch.float64 if out_dtype is torch.float64 else torch.float32
        device = device_of(ctx)
        params_ = []
        shapes = []
        for pname, t, v in zip(names, tensors, values):
            if v is None and t is None:
                raise ValueError('%s: parameter %s is missing' % (name, pname))
            if v is None:
                if non_negative and pname in non_negative and bool(((t <= 0) if positive else (t < 0)).any()):
                    raise ValueError('%s: %s %s 0' % (name, pname, '<=' if positive else '<'))
                params_.append(t.to(device=device, dtype=gen_dtype))    # samples differentiate w.r.t. it
                shapes.append(tuple(t.shape))
                device = t.device
            else:
                if non_negative and pname in non_negative and (v <= 0 if positive else v < 0):
                    raise ValueError('%s: %s %s 0' % (name, pname, '<=' if positive else '<'))
                params_.append(v)
        shape = _size_tuple(size)
        if shape is None:
            shape = tuple(torch.broadcast_shapes(*shapes)) if shapes else ()
        return sampler(shape, *params_, gen_dtype, device).to(out_dtype)
    sample.__doc__ = 'Samples of the %s distribution (parameters %s).' % (name, ', '.join(names))
    attrs = [(n, OPT_FLOAT, d) for n, d in params] + [('size', ANY, None), ('ctx', CTX, None), ('dtype', _DTYPE)]

    def absent(attrs_, inputs_=inputs, names_=names):
        return tuple(i for i, n in zip(inputs_, names_) if attrs_.get(n) is not None)
    # the scalar defaults make every input absent unless its attribute is None
    register(op, inputs=inputs, attrs=attrs, optional_inputs=absent)(_positional(sample, names))


def _positional(sample, names):
    """``sample`` taking what the registry passes: the inputs, then the parameter
    attributes, ``size``, ``ctx`` and ``dtype``, by position or (graphs) by name."""
    order = tuple('input%d' % (i + 1) for i in range(len(names))) + tuple(names) + ('size', 'ctx', 'dtype')

    def impl(*args, **kwargs):
        values = dict(zip(order, args))
        values.update(kwargs)
        n = len(names)
        return sample(*[values.get(k) for k in order[:2 * n]], size=values.get('size'), ctx=values.get('ctx'),
                      dtype=values.get('dtype'))
    impl.__doc__ = sample.__doc__
    return impl


for _name, (_op, _sampler, _params, _check) in NP_DISTRIBUTIONS.items():
    _register(_name, _op, _sampler, _params, _check)


@register('_npi_random_randint', attrs=[('low', INT), ('high', INT), ('shape', ANY, None), ('ctx', CTX, None),
                                        ('dtype', _DTYPE)])
def randint(low, high, shape, ctx, dtype):
    """Integers drawn uniformly from [low, high) (int64 unless ``dtype``)."""
    if low >= high:
        raise ValueError('low >= high')
    return torch.randint(low, high, _size_tuple(shape) or (), dtype=torch.int64 if dtype is None else
                         torch_dtype(dtype, 'randint'), device=device_of(ctx))


@register('_npi_choice', inputs=('input1', 'input2'),
          attrs=[('a', ANY, None), ('size', ANY, None), ('ctx', CTX, None), ('replace', BOOL, True),
                 ('weighted', BOOL, False)],
          optional_inputs=lambda attrs: tuple(n for n, absent in (('input1', attrs['a'] is not None),
                                                                  ('input2', not attrs['weighted'])) if absent))
def choice(input1, input2, a, size, ctx, replace, weighted):   # pylint: disable=unused-argument
    """Samples of ``a`` (an array, or range(a) for an int), uniformly or with probabilities ``input2``."""
    device = device_of(ctx) if input1 is None else input1.device
    n = int(a) if input1 is None else input1.shape[0]
    shape = _size_tuple(size) or ()
    count = 1
    for s in shape:
        count *= s
    if input2 is not None:
        p = input2.to(torch.float64)
    else:
        p = torch.ones(n, dtype=torch.float64, device=device)
    if not replace and count > n:
        raise ValueError('Cannot take a larger sample than population when replace is False')
    idx = torch.multinomial(p, count, replacement=replace) if count else torch.zeros(0, dtype=torch.int64)
    idx = idx.reshape(shape)
    return idx if input1 is None else input1[idx]


@register('_npi_multinomial', inputs=('a',), attrs=[('n', INT), ('pvals', ANY, None), ('size', ANY, None)],
          optional_inputs=lambda attrs: ('a',) if attrs['pvals'] is not None else ())
def multinomial(a, n, pvals, size):
    """Counts of ``n`` draws over the outcomes with probabilities ``pvals`` (or the array ``a``)."""
    p = torch.as_tensor(pvals, dtype=torch.float64) if a is None else a.to(torch.float64)
    if p.numel() == 0:      # no outcomes: empty counts
        return torch.zeros((_size_tuple(size) or ()) + (0,), dtype=torch.int64)
    if float(p[:-1].sum()) > 1 + 1e-6:     # float32 probabilities summing to 1 may round above it
        raise ValueError('sum(pvals[:-1]) > 1.0')
    p = torch.cat([p[:-1], (1 - p[:-1].sum()).clamp_min(0).reshape(1)])
    shape = _size_tuple(size) or ()
    count = 1
    for s in shape:
        count *= s
    if count == 0 and shape:
        return torch.zeros(shape + (p.numel(),), dtype=torch.int64)
    draws = torch.multinomial(p.expand(max(count, 1), -1), n, replacement=True) if n else \
        torch.zeros((max(count, 1), 0), dtype=torch.int64)
    counts = torch.zeros((max(count, 1), p.numel()), dtype=torch.int64).scatter_add_(
        1, draws, torch.ones_like(draws))
    return counts.reshape(shape + (p.numel(),)).to(device='cpu' if a is None else a.device)


@register('_npi_shuffle', inputs=('data',))
def shuffle(data):
    """``data`` with its first axis permuted at random."""
    return data[torch.randperm(data.shape[0], device=data.device)] if data.dim() else data.clone()


@register('_npi_bernoulli', inputs=('input1',),
          attrs=[('prob', OPT_FLOAT, None), ('logit', OPT_FLOAT, None), ('size', ANY, None), ('ctx', CTX, None),
                 ('dtype', _DTYPE), ('is_logit', BOOL, False)],
          optional_inputs=lambda attrs: ('input1',) if attrs['prob'] is not None or attrs['logit'] is not None else ())
def bernoulli(input1, prob, logit, size, ctx, dtype, is_logit):
    """1 with probability ``prob`` (or ``sigmoid(logit)``), else 0."""
    if input1 is not None:
        p = torch.sigmoid(input1.double()) if is_logit else input1.double()
        device = input1.device
    else:
        p = torch.tensor(prob if prob is not None else 1 / (1 + torch.exp(torch.tensor(-logit)).item()),
                         dtype=torch.float64)
        device = device_of(ctx)
    if bool(((p < 0) | (p > 1)).any()):
        raise ValueError('bernoulli: prob must be in [0, 1]')
    shape = _size_tuple(size) or tuple(p.shape)
    res = torch.bernoulli(p.to(device).expand(shape))
    return res.to(torch.float32 if dtype is None else torch_dtype(dtype, 'bernoulli'))


@register('_npi_mvn_fallback', inputs=('mean', 'cov'), attrs=[('size', ANY, None)])
def multivariate_normal(mean, cov, size):
    """Samples of multivariate normal distributions: ``mean + L @ eps`` with ``L`` the Cholesky
    factor of ``cov`` (both broadcast over their batch dims), of shape ``size + batch + (k,)``."""
    shape = _size_tuple(size) or ()
    batch = torch.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    k = mean.shape[-1]
    lower = torch.linalg.cholesky(cov.to(torch.float64))
    eps = torch.randn(tuple(shape) + tuple(batch) + (k, 1), dtype=torch.float64, device=mean.device)
    res = mean.to(torch.float64) + torch.matmul(lower, eps).squeeze(-1)
    return res.to(mean.dtype if mean.dtype.is_floating_point else torch.float32)
