"""Division and modulo with MXNet's semantics at zero, shared by the NDArray operators
(``a / b``, ``a % b``) and the registry's (``broadcast_div``, ``_mod_scalar``...).

- Integer division truncates; by zero it has no result (MXNet 1.9.1 dies of SIGFPE), so
  it raises ``MXNetError`` naming the operator. Floats follow IEEE (inf, nan).
- Modulo follows the divisor's sign (``-7 % 3 == 2``) and is 0 where the divisor is 0, for
  integers and floats, as MXNet defines it (numpy and torch give nan or raise).

Operands are tensors or Python numbers (a scalar on one side).
"""
import torch

from . import _int_grad
from .base import MXNetError


def _is_zero_anywhere(divisor):
    if isinstance(divisor, torch.Tensor):
        # A meta tensor (shape inference of a graph) has no values: its division is only
        # checked when the graph runs on data.
        return not divisor.is_meta and bool((divisor == 0).any())
    return divisor == 0


def _check_divisor(divisor, op):
    if _is_zero_anywhere(divisor):
        shape = tuple(divisor.shape) if isinstance(divisor, torch.Tensor) else 'a scalar'
        raise MXNetError('%s: integer division by zero (the divisor, %s, holds 0); cast to a '
                         'float type for inf/nan results' % (op, shape))


def _is_float(a, b):
    t = a if isinstance(a, torch.Tensor) else b
    return t.dtype.is_floating_point


def divide(a, b, op='division'):
    """``a / b``: true division for floats, truncating integer division (never by zero)."""
    if _is_float(a, b):
        return torch.div(a, b)
    _check_divisor(b, op)
    if not isinstance(a, torch.Tensor):
        a = torch.full_like(b, a)
    return torch.div(a, b, rounding_mode='trunc')


def divide_(a, b, op='division'):
    """In-place ``a /= b`` on tensor ``a``."""
    if a.dtype.is_floating_point:
        return a.div_(b)
    _check_divisor(b, op)
    return a.div_(b, rounding_mode='trunc')


def mod(a, b):
    """``a % b`` with the divisor's sign, 0 where ``b`` is 0; of integers, its gradient is 0
    as in MXNet (see :mod:`neomx._int_grad`)."""
    if _int_grad.carrying():
        return _mod(a, b).detach()
    return _mod(a, b)


def _mod(a, b):
    if not isinstance(b, torch.Tensor):
        if b == 0:
            return torch.zeros_like(a)
        return torch.remainder(a, b)
    if not isinstance(a, torch.Tensor):
        a = torch.full_like(b, a)
    zero = b == 0
    safe = b if b.dtype.is_floating_point else torch.where(zero, torch.ones_like(b), b)
    return torch.where(zero, torch.zeros((), dtype=b.dtype, device=b.device), torch.remainder(a, safe))


def mod_(a, b):
    """In-place ``a %= b`` on tensor ``a``."""
    return a.copy_(mod(a, b))
