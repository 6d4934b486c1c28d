"""Array-creating operators of MXNet's NumPy interface (``_npi_zeros``, ``_npi_eye``,
``_npi_linspace``, windows...): no inputs, a ``ctx`` and a ``dtype`` (float32 by default).
"""
import math

import numpy as _np
import torch

from ..base import torch_dtype
from ..context import as_context
from .registry import ANY, BOOL, CTX, FLOAT, INT, OPT_FLOAT, OPT_INT, Attr, register

__all__ = ['device_of']

_DTYPE = Attr('dtype', lambda v: None if v is None or v == 'None' else torch_dtype(v), 'float32')
_CPU = torch.device('cpu')


def device_of(ctx):
    """The torch device of a ``ctx`` attribute (a Context, its name, or None: the CPU)."""
    if ctx is None or ctx == '':
        return as_context(None).torch_device
    device = getattr(ctx, 'torch_device', None)     # a Context, or shape inference's stand-in
    return device if device is not None else as_context(ctx).torch_device


def _dt(dtype, op):
    return torch.float32 if dtype is None else torch_dtype(dtype, op)


def _dims(shape):
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


@register('_npi_zeros', attrs=[('shape', ANY, ()), ('ctx', CTX, None), ('dtype', _DTYPE)])
def zeros(shape, ctx, dtype):
    """An array of zeros."""
    return torch.zeros(_dims(shape), dtype=_dt(dtype, 'zeros'), device=device_of(ctx))


@register('_npi_ones', attrs=[('shape', ANY, ()), ('ctx', CTX, None), ('dtype', _DTYPE)])
def ones(shape, ctx, dtype):
    """An array of ones."""
    return torch.ones(_dims(shape), dtype=_dt(dtype, 'ones'), device=device_of(ctx))


@register('_npi_full', attrs=[('shape', ANY, ()), ('ctx', CTX, None), ('dtype', _DTYPE), ('value', FLOAT)])
def full(shape, ctx, dtype, value):
    """An array filled with ``value``."""
    dt = _dt(dtype, 'full')
    if not dt.is_floating_point:
        value = bool(value) if dt is torch.bool else int(value)
    return torch.full(_dims(shape), value, dtype=dt, device=device_of(ctx))


@register('_npi_identity', attrs=[('shape', ANY, ()), ('ctx', CTX, None), ('dtype', _DTYPE)])
def identity(shape, ctx, dtype):
    """The identity matrix of ``shape`` (n, n)."""
    n = _dims(shape)[0]
    return torch.eye(n, dtype=_dt(dtype, 'identity'), device=device_of(ctx))


@register('_npi_eye', attrs=[('N', INT), ('M', OPT_INT, None), ('k', INT, 0), ('ctx', CTX, None), ('dtype', _DTYPE)])
def eye(N, M, k, ctx, dtype):   # pylint: disable=invalid-name
    """An N x M array with ones on the ``k``-th diagonal."""
    m = N if M is None else M
    if N < 0 or m < 0:
        raise ValueError('negative dimensions are not allowed')
    res = torch.zeros((N, m), dtype=_dt(dtype, 'eye'), device=device_of(ctx))
    if N and m:
        torch.diagonal(res, k).fill_(1)
    return res


@register('_npi_indices', attrs=[('dimensions', ANY), ('dtype', Attr('dtype', lambda v: v, 'int32')),
                                 ('ctx', CTX, None)])
def indices(dimensions, dtype, ctx):
    """The grid of indices of an array of shape ``dimensions``: one array per axis, stacked."""
    dims = _dims(dimensions)
    dev = device_of(ctx)
    grids = torch.meshgrid(*[torch.arange(n, device=dev) for n in dims], indexing='ij') if dims else []
    if not dims:
        return torch.zeros((0,), dtype=_dt(dtype, 'indices'), device=dev)
    return torch.stack(grids).to(_dt(dtype, 'indices'))


@register('_npi_arange', attrs=[('start', FLOAT), ('stop', OPT_FLOAT, None), ('step', OPT_FLOAT, 1.0),
                                ('repeat', INT, 1), ('infer_range', BOOL, False), ('ctx', CTX, None),
                                ('dtype', _DTYPE)])
def arange(start, stop, step, repeat, infer_range, ctx, dtype):    # pylint: disable=unused-argument
    """Evenly spaced values in [start, stop)."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1.0
    if step == 0:
        raise ZeroDivisionError('arange: step must not be zero')
    dt = _dt(dtype, 'arange')
    count = max(int(math.ceil((stop - start) / step)), 0)      # empty where step goes away from stop
    values = (start + torch.arange(count, dtype=torch.float64) * step).to(device=device_of(ctx), dtype=dt)
    return values.repeat_interleave(repeat) if repeat != 1 else values


@register('_npi_linspace', attrs=[('start', FLOAT), ('stop', FLOAT), ('num', INT, 50), ('endpoint', BOOL, True),
                                  ('ctx', CTX, None), ('dtype', _DTYPE)])
def linspace(start, stop, num, endpoint, ctx, dtype):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included with ``endpoint``)."""
    if num < 0:
        raise ValueError('Number of samples, %d, must be non-negative.' % num)
    dt = _dt(dtype, 'linspace')
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    values = start + torch.arange(num, dtype=torch.float64) * step
    if endpoint and num > 1:
        values[-1] = stop
    if not dt.is_floating_point:
        values = torch.floor(values)
    return values.to(device=device_of(ctx), dtype=dt)


@register('_npi_logspace', attrs=[('start', FLOAT), ('stop', FLOAT), ('num', INT, 50), ('endpoint', BOOL, True),
                                  ('base', FLOAT, 10.0), ('ctx', CTX, None), ('dtype', _DTYPE)])
def logspace(start, stop, num, endpoint, base, ctx, dtype):
    """``base`` to the powers ``linspace(start, stop, num, endpoint)``."""
    exps = linspace(start, stop, num, endpoint, None, 'float64')
    return torch.pow(torch.tensor(base, dtype=torch.float64), exps).to(device=device_of(ctx),
                                                                        dtype=_dt(dtype, 'logspace'))


def _window(coefficients):
    def impl(M, ctx, dtype):    # pylint: disable=invalid-name
        dt = _dt(dtype, 'window')
        if M < 1:
            return torch.zeros((0,), dtype=dt, device=device_of(ctx))
        if M == 1:
            return torch.ones((1,), dtype=dt, device=device_of(ctx))
        n = torch.arange(M, dtype=torch.float64)
        res = torch.zeros(M, dtype=torch.float64)
        for i, c in enumerate(coefficients):
            res = res + c * torch.cos(2 * math.pi * i * n / (M - 1)) * (-1) ** i
        return res.to(device=device_of(ctx), dtype=dt)
    return impl


_WINDOW_ATTRS = [('M', INT), ('ctx', CTX, None), ('dtype', _DTYPE)]
register('_npi_hanning', attrs=_WINDOW_ATTRS, doc='The Hanning window of M points.')(_window((0.5, 0.5)))
register('_npi_hamming', attrs=_WINDOW_ATTRS, doc='The Hamming window of M points.')(_window((0.54, 0.46)))
register('_npi_blackman', attrs=_WINDOW_ATTRS, doc='The Blackman window of M points.')(_window((0.42, 0.5, 0.08)))
