"""Quantization operators (``mx.nd.contrib.quantize`` / ``dequantize``): float32 arrays to 8-bit
integers over a given range, and back.

neomx gives the numbers of MXNet 1.9.1's CPU build (its oneDNN kernels), which differ from
MXNet's generic kernels:

* ``quantize`` scales by ``qmax / R`` with ``R = max(|min_range|, |max_range|)`` and
  ``qmax`` 127 (int8) or 255 (uint8), rounds half to even and saturates to the type's range.
  int8 results report the range ``(-R, R)``; uint8 results report the given range.
* ``dequantize`` multiplies by ``R / (qmax + 0.5)``.

Neither operator is differentiable (MXNet defines no gradient for them).
"""
import torch

from .dtype_rules import DTypeRule
from .registry import check, choice, register

_QMAX = {torch.int8: 127.0, torch.uint8: 255.0}
_RANGE_TYPES = {'min_range': 'float32', 'max_range': 'float32'}


def _real_range(op, min_range, max_range):
    check(min_range.numel() == 1 and max_range.numel() == 1, op, 'min_range and max_range must hold one '
          'value each, got shapes %s and %s', tuple(min_range.shape), tuple(max_range.shape))
    return torch.maximum(min_range.abs(), max_range.abs()).reshape(())


@register('_contrib_quantize', inputs=('data', 'min_range', 'max_range'),
          attrs=[('out_type', choice('int8', 'uint8'), 'uint8')], num_outputs=3,
          dtypes=DTypeRule(fixed=_RANGE_TYPES, output=lambda dtypes, attrs: getattr(torch, attrs['out_type']),
                           later_outputs=lambda dtypes, attrs: torch.float32))
def quantize(data, min_range, max_range, out_type):
    """Quantize ``data`` to ``out_type`` over ``[min_range, max_range]``.

    Parameters
    ----------
    data : Tensor, any shape, float32
    min_range, max_range : Tensor, shape (1,), float32

    Returns
    -------
    (quantized, data's shape and ``out_type``; min and max of the range it stands for,
    shape (1,), float32)

    Example
    -------
    >>> import neomx as mx
    >>> q, lo, hi = mx.nd.contrib.quantize(mx.nd.array([0.1392, -0.5]), mx.nd.array([0]),
    ...                                    mx.nd.array([1]), out_type='int8')
    >>> q.asnumpy().tolist(), lo.asnumpy().tolist(), hi.asnumpy().tolist()
    ([18, -64], [-1.0], [1.0])
    """
    op = '_contrib_quantize'
    check(data.dtype.is_floating_point, op, 'data must be a float array, got %s', data.dtype)
    dtype = getattr(torch, out_type)
    with torch.no_grad():
        real = _real_range(op, min_range, max_range).float()
        qmax = _QMAX[dtype]
        scaled = torch.round(data.float() * (qmax / real))
        low = -128.0 if dtype is torch.int8 else 0.0
        quantized = scaled.clamp(low, qmax).to(dtype)
        if dtype is torch.int8:
            return quantized, (-real).reshape(1), real.reshape(1)
        return quantized, min_range.reshape(1).float().clone(), max_range.reshape(1).float().clone()


@register('_contrib_dequantize', inputs=('data', 'min_range', 'max_range'),
          attrs=[('out_type', choice('float32'), 'float32')],
          dtypes=DTypeRule(free=('data',), fixed=_RANGE_TYPES, output='float32'))
def dequantize(data, min_range, max_range, out_type):
    """Float32 values of int8 or uint8 ``data`` quantized over ``[min_range, max_range]``.

    Parameters
    ----------
    data : Tensor, any shape, int8 or uint8
    min_range, max_range : Tensor, shape (1,), float32

    Returns
    -------
    Tensor, data's shape, float32
    """
    op = '_contrib_dequantize'
    check(data.dtype in _QMAX, op, 'data must be int8 or uint8, got %s', data.dtype)
    with torch.no_grad():
        real = _real_range(op, min_range, max_range).float()
        return data.float() * (real / (_QMAX[data.dtype] + 0.5))
