"""2-bit gradient compression (``kv.set_gradient_compression({'type': '2bit', 'threshold': t})``).

Each worker adds its residual to the gradient it pushes, sends ``+t`` where the sum is at least
``t``, ``-t`` where it is at most ``-t`` and 0 elsewhere, and keeps the difference as its new
residual (MXNet's ``quantize_2bit``). Only what workers send is compressed: the codes travel as
2 bits a value (four to a byte, all-gathered), and every worker decodes every rank's codes and
sums them in rank order, so all workers get the same sum -- what MXNet's servers compute.
"""
import torch

from ..base import MXNetError

__all__ = ['TwoBitCompression', 'parse_compression']

_PLUS, _MINUS = 3, 2      # MXNet's 2-bit codes: 11 is +threshold, 10 is -threshold, 00 is 0


def parse_compression(params):
    """The compressor described by ``params`` (MXNet's checks and messages)."""
    if not isinstance(params, dict):
        raise MXNetError('set_gradient_compression: expected a dict such as {"type": "2bit", '
                         '"threshold": 0.5}, got %r' % (params,))
    if 'type' not in params:
        raise MXNetError('Required parameter type of string is not presented')
    kind = str(params['type'])
    if kind != '2bit':
        raise MXNetError('Unknown type for gradient compression %s' % kind)
    raw = params.get('threshold', 0.5)
    try:
        threshold = float(raw)
    except (TypeError, ValueError):
        raise MXNetError("Invalid Parameter format for threshold expect float but value='%s'" % (raw,)) from None
    if not threshold > 0:
        raise MXNetError('Check failed: params.threshold > 0 (%s vs. 0) : threshold must be greater than 0'
                         % (raw,))
    return TwoBitCompression(threshold)


class TwoBitCompression:
    """Quantizes gradients to {-t, 0, +t} with a residual per key, and sums workers' codes."""

    type = '2bit'

    def __init__(self, threshold):
        self.threshold = threshold
        self._residuals = {}

    def quantize(self, key, grad):
        """Codes (uint8 per value, 0/2/3) of ``grad`` plus ``key``'s residual; updates the residual."""
        residual = self._residuals.get(key)
        if residual is None:
            residual = self._residuals[key] = torch.zeros_like(grad)
        total = grad + residual
        t = torch.tensor(self.threshold, dtype=total.dtype)
        plus, minus = total >= t, total <= -t
        sent = torch.where(plus, t, torch.where(minus, -t, torch.zeros_like(total)))
        torch.sub(total, sent, out=residual)
        return plus.to(torch.uint8) * _PLUS + minus.to(torch.uint8) * _MINUS

    @staticmethod
    def pack(codes):
        """Four 2-bit codes to a byte."""
        pad = (-codes.numel()) % 4
        if pad:
            codes = torch.cat([codes, codes.new_zeros(pad)])
        c = codes.view(-1, 4)
        return c[:, 0] | (c[:, 1] << 2) | (c[:, 2] << 4) | (c[:, 3] << 6)

    def dequantize(self, packed, count, dtype):
        """The values {-t, 0, +t} that ``packed`` (from :meth:`pack`) encodes, ``count`` of them."""
        codes = torch.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], dim=1).reshape(-1)[:count]
        t = torch.tensor(self.threshold, dtype=dtype)
        zero = torch.zeros((), dtype=dtype)
        return torch.where(codes == _PLUS, t, torch.where(codes == _MINUS, -t, zero))
