"""Array-creating operators (``_zeros``, ``_ones``, ``_full``, ``_arange``, ``_eye``,
``_linspace``): no inputs, a shape and a context. ``mx.nd`` creates arrays directly; graphs
(``mx.sym.zeros``...) need them as operator nodes with MXNet's names and attributes.
"""
import math

import torch

from ..base import TORCH_OF_TYPE_FLAG, torch_dtype
from .dtype_rules import DTypeRule
from .registry import BOOL, CTX, FLOAT, INT, OPT_DTYPE, OPT_FLOAT, SHAPE, Attr, register

_CREATION_ATTRS = [('shape', SHAPE, ()), ('ctx', CTX, None), ('dtype', OPT_DTYPE, None)]


def _device(ctx):
    return torch.device('cpu') if ctx is None else ctx.torch_device


@register('_zeros', attrs=_CREATION_ATTRS)
def zeros(shape, ctx, dtype):
    """An array of zeros of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    return torch.zeros(shape, dtype=torch_dtype(dtype), device=_device(ctx))


def _type_flag(value):
    """MXNet's integer type flag (0 float32, 1 float64, 6 int64...) as a torch dtype; -1: None."""
    flag = INT.parse(value)
    if flag == -1:
        return None
    if flag not in TORCH_OF_TYPE_FLAG:
        raise ValueError('unknown type flag %d' % flag)
    return TORCH_OF_TYPE_FLAG[flag]


@register('_zeros_without_dtype', attrs=[('shape', SHAPE, ()), ('ctx', CTX, None),
                                         ('dtype', Attr('int (type flag)', _type_flag, None))],
          dtypes=DTypeRule(output=lambda dtypes, attrs: attrs['dtype'] or torch.float32))
def zeros_without_dtype(shape, ctx, dtype):
    """Zeros of ``shape`` whose ``dtype`` is given as MXNet's type flag (0 float32, 6 int64...);
    -1, the default, means float32."""
    return torch.zeros(shape, dtype=dtype or torch.float32, device=_device(ctx))


@register('_ones', attrs=_CREATION_ATTRS)
def ones(shape, ctx, dtype):
    """An array of ones of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    return torch.ones(shape, dtype=torch_dtype(dtype), device=_device(ctx))


@register('_full', attrs=_CREATION_ATTRS + [('value', FLOAT)])
def full(shape, ctx, dtype, value):
    """An array of ``shape`` filled with ``value``."""
    return torch.full(shape, value, dtype=torch_dtype(dtype), device=_device(ctx))


@register('_arange', attrs=[('start', FLOAT), ('stop', OPT_FLOAT, None), ('step', FLOAT, 1.0),
                            ('repeat', INT, 1), ('infer_range', BOOL, False), ('ctx', CTX, None),
                            ('dtype', OPT_DTYPE, None)])
def arange(start, stop, step, repeat, infer_range, ctx, dtype):
    """Values ``start, start + step, ...`` below ``stop`` (``[0, start)`` without ``stop``),
    each repeated ``repeat`` times; shape ``(ceil((stop - start) / step) * repeat,)``.

    For an integer ``dtype`` the length comes from the given values, but ``start`` and ``step``
    are truncated to integers (``arange(1.3, 4, 1.3, dtype='int32')`` is ``[1, 2, 3]``), as
    MXNet does; values wrap around in unsigned types."""
    if stop is None:
        start, stop = 0.0, start
    count = max(math.ceil((stop - start) / step), 0)
    out_dtype = torch_dtype(dtype)
    if out_dtype.is_floating_point:
        values = start + torch.arange(count, dtype=torch.float64, device=_device(ctx)) * step
    else:   # as MXNet: the length from the real values, then start and step cut to integers
        values = int(start) + torch.arange(count, dtype=torch.int64, device=_device(ctx)) * int(step)
    if repeat != 1:
        values = values.repeat_interleave(repeat)
    return values.to(out_dtype)


@register('_eye', attrs=[('N', INT), ('M', INT, 0), ('k', INT, 0), ('ctx', CTX, None),
                         ('dtype', OPT_DTYPE, None)])
def eye(N, M, k, ctx, dtype):  # pylint: disable=invalid-name
    """(N, M or N) array with ones on diagonal ``k`` (above the main one for k > 0)."""
    rows, cols = N, M or N
    idx = torch.arange(rows, device=_device(ctx))
    out = torch.zeros((rows, cols), dtype=torch_dtype(dtype), device=_device(ctx))
    keep = (idx + k >= 0) & (idx + k < cols)
    out[idx[keep], (idx + k)[keep]] = 1
    return out


@register('_linspace', attrs=[('start', FLOAT), ('stop', FLOAT), ('num', INT), ('endpoint', BOOL, True),
                              ('ctx', CTX, None), ('dtype', OPT_DTYPE, None)])
def linspace(start, stop, num, endpoint, ctx, dtype):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included with ``endpoint``)."""
    step = (stop - start) / max(num - 1 if endpoint else num, 1)
    values = start + torch.arange(num, dtype=torch.float64, device=_device(ctx)) * step
    return values.to(torch_dtype(dtype))
