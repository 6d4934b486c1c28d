"""MXNet's arithmetic rules that differ from torch's, shared by the operator registry and
NDArray's operator dunders (which call torch directly for speed)."""
import torch


def mxnet_mod(a, b):
    """Remainder with the divisor's sign (Python's rule); MXNet gives 0 where the divisor is 0.

    ``a`` is a tensor, ``b`` a tensor or a number.
    """
    if not isinstance(b, torch.Tensor):
        return torch.zeros_like(a) if b == 0 else torch.remainder(a, b)
    zero = b == 0
    if not zero.any():
        return torch.remainder(a, b)
    safe = torch.where(zero, torch.ones_like(b), b)
    return torch.where(zero, torch.zeros((), dtype=a.dtype, device=a.device), torch.remainder(a, safe))
