"""Array-creating operators (``_zeros``, ``_ones``, ``_full``, ``_arange``) and the
``mx.sym.zeros/ones/full/arange`` functions that place them in a graph.

``mx.nd`` creates arrays directly; a graph needs them as operator nodes, with MXNet's names
and attributes so the JSON matches. The executor supplies the context.
"""
import math

import torch

from ..base import torch_dtype
from ..operator.registry import (CTX, FLOAT, INT, BOOL, OPT_DTYPE, OPT_FLOAT, SHAPE, register)

__all__ = ['zeros', 'ones', 'full', 'arange']

_CREATION_ATTRS = [('shape', SHAPE, ()), ('ctx', CTX, None), ('dtype', OPT_DTYPE, None)]


def _device(ctx):
    return torch.device('cpu') if ctx is None else ctx.torch_device


@register('_zeros', attrs=_CREATION_ATTRS)
def _zeros_op(shape, ctx, dtype):
    """An array of zeros of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    return torch.zeros(shape, dtype=torch_dtype(dtype), device=_device(ctx))


@register('_ones', attrs=_CREATION_ATTRS)
def _ones_op(shape, ctx, dtype):
    """An array of ones of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    return torch.ones(shape, dtype=torch_dtype(dtype), device=_device(ctx))


@register('_full', attrs=_CREATION_ATTRS + [('value', FLOAT)])
def _full_op(shape, ctx, dtype, value):
    """An array of ``shape`` filled with ``value``."""
    return torch.full(shape, value, dtype=torch_dtype(dtype), device=_device(ctx))


@register('_arange', attrs=[('start', FLOAT), ('stop', OPT_FLOAT, None), ('step', FLOAT, 1.0),
                            ('repeat', INT, 1), ('infer_range', BOOL, False), ('ctx', CTX, None),
                            ('dtype', OPT_DTYPE, None)])
def _arange_op(start, stop, step, repeat, infer_range, ctx, dtype):
    """Values ``start, start + step, ...`` below ``stop`` (``[0, start)`` without ``stop``),
    each repeated ``repeat`` times; shape ``(ceil((stop - start) / step) * repeat,)``."""
    if stop is None:
        start, stop = 0.0, start
    count = max(math.ceil((stop - start) / step), 0)
    device = _device(ctx)
    values = start + torch.arange(count, dtype=torch.float64, device=device) * step
    if repeat != 1:
        values = values.repeat_interleave(repeat)
    return values.to(torch_dtype(dtype))


def _create(op, kwargs, name=None):
    from . import _internal
    return getattr(_internal, op)(name=name, **kwargs)


def zeros(shape, dtype=None, **kwargs):
    """A Symbol of zeros of ``shape`` (float32 by default)."""
    return _create('_zeros', dict(kwargs, shape=shape, dtype=dtype or 'float32'))


def ones(shape, dtype=None, **kwargs):
    """A Symbol of ones of ``shape`` (float32 by default)."""
    return _create('_ones', dict(kwargs, shape=shape, dtype=dtype or 'float32'))


def full(shape, val, dtype=None, **kwargs):
    """A Symbol of ``shape`` filled with ``val`` (float32 by default)."""
    return _create('_full', dict(kwargs, shape=shape, dtype=dtype or 'float32', value=float(val)))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """A Symbol of evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times.

    Returns
    -------
    Symbol, shape (ceil((stop - start) / step) * repeat,)
    """
    return _create('_arange', dict(start=start, stop=stop, step=step, repeat=repeat, infer_range=infer_range,
                                   dtype=dtype or 'float32'), name=name)
