"""The ``Correlation`` operator of optical-flow networks (FlowNet): how well each patch of one
feature map matches the patches of another at a grid of displacements.

MXNet semantics kept here: both maps are zero-padded by ``pad_size``; output position
``(i, j)`` compares the ``kernel_size`` square whose top-left corner is at
``(i * stride1 + max_displacement, j * stride1 + max_displacement)`` of the padded ``data1``
with the same square of ``data2`` moved by each displacement ``(dy, dx)`` on a grid of step
``stride2`` and radius ``max_displacement // stride2``; output channel ``gy * grid + gx``
holds displacement ``((gy - radius) * stride2, (gx - radius) * stride2)``. The comparison is
the product (``is_multiply``) or the absolute difference, averaged over the square and the
channels. The absolute difference's gradient is +1 towards ``data1`` where
``data1 >= data2`` and -1 elsewhere (ties included), as MXNet's.
"""
import torch
import torch.nn.functional as F

from .registry import BOOL, INT, check, register

_OP = 'Correlation'


def _grid_geometry(height, width, kernel_size, max_displacement, stride1, stride2, pad_size):
    """(top_height, top_width, grid_radius) of the output, or MXNetError if nothing fits
    (checked before the kernel's oddness, as MXNet does)."""
    check(min(kernel_size, stride1, stride2) >= 1 and max_displacement >= 0 and pad_size >= 0, _OP,
          'kernel_size, stride1 and stride2 must be positive, max_displacement and pad_size not '
          'negative; got %d, %d, %d, %d, %d', kernel_size, stride1, stride2, max_displacement, pad_size)
    border = max_displacement + (kernel_size - 1) // 2
    span_h, span_w = height + 2 * pad_size - 2 * border, width + 2 * pad_size - 2 * border
    check(span_h >= 1 and span_w >= 1, _OP, 'kernel_size %d and max_displacement %d do not fit in '
          'data of height and width %s padded by %d', kernel_size, max_displacement, (height, width), pad_size)
    check(kernel_size % 2 == 1, _OP, 'kernel_size must be odd, got %d', kernel_size)
    return -(-span_h // stride1), -(-span_w // stride1), max_displacement // stride2


def _abs_difference(a, b):
    """|a - b| with MXNet's gradient: sign +1 where a >= b (ties too), -1 elsewhere."""
    sign = torch.where(a >= b, 1.0, -1.0).to(a.dtype).detach()
    return (a - b) * sign


@register(_OP, inputs=('data1', 'data2'),
          attrs=[('kernel_size', INT, 1), ('max_displacement', INT, 1), ('stride1', INT, 1),
                 ('stride2', INT, 1), ('pad_size', INT, 0), ('is_multiply', BOOL, True)],
          hidden_outputs=lambda attrs: 2)     # MXNet's graph also records both padded maps
def correlation(data1, data2, kernel_size, max_displacement, stride1, stride2, pad_size, is_multiply):
    """Correlation of ``data1``'s patches with ``data2``'s patches at a grid of displacements.

    Parameters
    ----------
    data1, data2 : Tensor, shape (N, C, H, W), the same shape

    Returns
    -------
    Tensor, shape (N, (2 * (max_displacement // stride2) + 1) ** 2, top_height, top_width), where
    ``top = ceil((H + 2 * pad_size - 2 * (max_displacement + kernel_size // 2)) / stride1)``.

    Example
    -------
    >>> import neomx as mx
    >>> mx.nd.Correlation(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((1, 2, 5, 5))).shape
    (1, 9, 3, 3)
    """
    check(data1.dim() == 4 and tuple(data1.shape) == tuple(data2.shape), _OP,
          'data1 and data2 must be 4-D (N, C, H, W) of one shape, got %s and %s',
          tuple(data1.shape), tuple(data2.shape))
    channels, height, width = data1.shape[1:]
    top_h, top_w, radius = _grid_geometry(height, width, kernel_size, max_displacement, stride1, stride2,
                                          pad_size)
    dtype = data1.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype   # accumulate wider
    pad = (pad_size,) * 4
    padded1, padded2 = F.pad(data1.to(work), pad), F.pad(data2.to(work), pad)
    # the rows and columns of the padded maps that some output square reads
    rows, cols = (top_h - 1) * stride1 + kernel_size, (top_w - 1) * stride1 + kernel_size
    first = padded1[:, :, max_displacement:max_displacement + rows, max_displacement:max_displacement + cols]
    maps = []
    for gy in range(-radius, radius + 1):
        for gx in range(-radius, radius + 1):
            y0, x0 = max_displacement + gy * stride2, max_displacement + gx * stride2
            moved = padded2[:, :, y0:y0 + rows, x0:x0 + cols]
            compared = first * moved if is_multiply else _abs_difference(first, moved)
            maps.append(compared.sum(1))
    per_pixel = torch.stack(maps, 1)             # (N, displacements, rows, cols)
    out = F.avg_pool2d(per_pixel, kernel_size, stride=stride1) / channels
    return out.to(dtype)
