"""Operators: 2-D deformable convolutions, v1 (``_contrib_DeformableConvolution``) and v2
(``_contrib_ModulatedDeformableConvolution``).

A deformable convolution samples its input at the regular convolution grid moved by a learned,
fractional ``offset`` per output position and kernel tap, then applies the filters to those
samples. The offset has shape ``(N, 2 * num_deformable_group * kh * kw, OH, OW)``: for deformable
group ``g`` and kernel tap ``k = i * kw + j``, channel ``g * 2 kh kw + 2 k`` moves the sample along
y and the next channel along x. Input channels are split evenly between deformable groups.

MXNet's sampling rules, kept here:

* v1 samples only points with ``0 <= y < H`` and ``0 <= x < W`` (zero elsewhere) and clamps
  points beyond the last row or column onto it (gradient 0 for their offset there);
* v2 is plain bilinear interpolation with zeros outside the image, so a point within one pixel
  of the border still sees part of it; its ``mask`` scales every sample.
"""
import torch
import torch.nn.functional as F

from .nn_conv import conv_geometry, _optional_choice, _shape_of, _without_bias
from .registry import BOOL, INT, SHAPE, check, memoized, register

_V1 = '_contrib_DeformableConvolution'
_V2 = '_contrib_ModulatedDeformableConvolution'


@memoized(64)
def _regular_grid(out_size, kernel, stride, dilate, pad, dtype, device):
    """Undeformed sampling coordinates: ``(y, x)``, each of shape (kh * kw, OH * OW).

    Cached per geometry: a network repeats a few geometries on every call.
    """
    axes = []
    for axis in range(2):
        taps = torch.arange(kernel[axis], dtype=dtype, device=device) * dilate[axis]
        starts = torch.arange(out_size[axis], dtype=dtype, device=device) * stride[axis] - pad[axis]
        axes.append(taps[:, None] + starts[None, :])                       # (k, out)
    (ys, xs), (kh, kw), (oh, ow) = axes, kernel, out_size
    y = ys[:, None, :, None].expand(kh, kw, oh, ow).reshape(kh * kw, oh * ow)
    x = xs[None, :, None, :].expand(kh, kw, oh, ow).reshape(kh * kw, oh * ow)
    return y, x


def _bilinear(image, y, x):
    """Sample ``image`` at pixel coordinates, bilinearly, with zeros outside it.

    Parameters
    ----------
    image : Tensor, shape (B, C, H, W)
    y, x : Tensor, shape (B, K, L)

    Returns
    -------
    Tensor, shape (B, C, K, L)
    """
    height, width = image.shape[-2:]
    # grid_sample's normalised coordinates with align_corners=False: pixel centre p -> (2p + 1) / size - 1.
    grid = torch.stack(((2 * x + 1) / width - 1, (2 * y + 1) / height - 1), dim=-1)
    return F.grid_sample(image, grid, mode='bilinear', padding_mode='zeros', align_corners=False)


def _bilinear_v1(image, y, x):
    """:func:`_bilinear` with v1's rules: nothing outside ``[0, H) x [0, W)``, the last row and
    column extended to the border."""
    height, width = image.shape[-2:]
    inside = (y >= 0) & (y < height) & (x >= 0) & (x < width)
    # torch.where, not clamp: a point on or past the last row or column is a constant, whose
    # offset gets no gradient (clamp would pass it on the boundary itself).
    y = torch.where(y < height - 1, y, float(height - 1))
    x = torch.where(x < width - 1, x, float(width - 1))
    samples = _bilinear(image, y, x)
    return samples * inside.unsqueeze(1).to(samples.dtype)


def _check_shapes(op, data, offset, mask, weight, kernel, out_size, num_filter, num_group, num_deformable_group):
    """MXNet's shape rules for both versions (mask is None for v1)."""
    check(len(kernel) == 2, op, 'only 2-D kernels are supported, got kernel %s', kernel)
    check(data.dim() == 4, op, 'data shape %s must be 4-D (N, C, H, W)', data.shape)
    batch, channels = data.shape[:2]
    check(channels % num_deformable_group == 0, op,
          'data channels %d must be divisible by num_deformable_group %d', channels, num_deformable_group)
    check(channels % num_group == 0 and num_filter % num_group == 0, op,
          'data channels %d and num_filter %d must be divisible by num_group %d', channels, num_filter, num_group)
    check(min(out_size) > 0, op, 'kernel %s is larger than the padded input %s', kernel, data.shape)
    taps = kernel[0] * kernel[1] * num_deformable_group
    expected = (batch, 2 * taps) + out_size
    check(_shape_of(offset) == expected, op, 'offset shape %s, expected %s for data %s',
          offset.shape, expected, data.shape)
    if mask is not None:
        expected = (batch, taps) + out_size
        check(_shape_of(mask) == expected, op, 'mask shape %s, expected %s for data %s',
              mask.shape, expected, data.shape)
    expected = (num_filter, channels // num_group) + kernel
    check(_shape_of(weight) == expected, op, 'weight shape %s, expected %s for data %s',
          weight.shape, expected, data.shape)


def _deformable_conv(op, data, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter, num_group,
                     num_deformable_group):
    """The shared computation: deformed sampling (``mask``-scaled for v2), then a grouped
    matrix product with the filters."""
    stride, dilate, pad = conv_geometry(op, kernel, stride, dilate, pad)
    out_size = tuple((size + 2 * p - d * (k - 1) - 1) // s + 1
                     for size, k, s, d, p in zip(data.shape[2:], kernel, stride, dilate, pad))
    _check_shapes(op, data, offset, mask, weight, kernel, out_size, num_filter, num_group, num_deformable_group)
    batch, channels, height, width = data.shape
    taps, positions = kernel[0] * kernel[1], out_size[0] * out_size[1]
    groups = batch * num_deformable_group
    base_y, base_x = _regular_grid(out_size, kernel, stride, dilate, pad, data.dtype, data.device)
    moves = offset.reshape(groups, taps, 2, positions)
    y, x = base_y + moves[:, :, 0], base_x + moves[:, :, 1]                  # (groups, K, L)
    images = data.reshape(groups, channels // num_deformable_group, height, width)
    sample = _bilinear_v1 if mask is None else _bilinear
    columns = sample(images, y, x)                                           # (groups, C / dg, K, L)
    if mask is not None:
        columns = columns * mask.reshape(groups, 1, taps, positions)
    columns = columns.reshape(batch, num_group, channels // num_group, taps, positions)
    filters = weight.reshape(num_group, num_filter // num_group, channels // num_group, taps)
    out = torch.einsum('ngckl,gfck->ngfl', columns, filters).reshape(batch, num_filter, *out_size)
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _filter_args(shapes, attrs):
    """Weight ``(num_filter, C / num_group, kh, kw)`` from the data shape, bias ``(num_filter,)``."""
    num_filter = attrs['num_filter']
    out = {'bias': (num_filter,)}
    data = shapes.get('data')
    if data is not None:
        out['weight'] = (num_filter, data[1] // attrs['num_group']) + tuple(attrs['kernel'])
    return out


_LAYOUT = ('layout', _optional_choice('NCDHW', 'NCHW', 'NCW'))
_ATTRS = [('kernel', SHAPE), ('stride', SHAPE, ()), ('dilate', SHAPE, ()), ('pad', SHAPE, ()),
          ('num_filter', INT), ('num_group', INT, 1), ('num_deformable_group', INT, 1), ('workspace', INT, 1024),
          ('no_bias', BOOL, False)]


@register(_V1, inputs=('data', 'offset', 'weight', 'bias'), attrs=_ATTRS + [_LAYOUT],
          optional_inputs=_without_bias, infer_args=_filter_args)
def deformable_convolution(data, offset, weight, bias, kernel, stride, dilate, pad, num_filter, num_group,
                           num_deformable_group, workspace, no_bias, layout):
    """Deformable convolution v1 (Dai et al., 2017).

    Parameters
    ----------
    data : Tensor, shape (N, C, H, W)
    offset : Tensor, shape (N, 2 * num_deformable_group * kh * kw, OH, OW)
        (y, x) moves of every kernel tap, see the module docstring.
    weight : Tensor, shape (num_filter, C / num_group, kh, kw)
    bias : Tensor, shape (num_filter,), or None when ``no_bias``

    Returns
    -------
    Tensor, shape (N, num_filter, OH, OW) with ``O = (in + 2 pad - dilate (k - 1) - 1) // stride + 1``.
    """
    return _deformable_conv(_V1, data, offset, None, weight, bias, kernel, stride, dilate, pad, num_filter,
                            num_group, num_deformable_group)


@register(_V2, inputs=('data', 'offset', 'mask', 'weight', 'bias'),
          attrs=_ATTRS + [('im2col_step', INT, 64), _LAYOUT],
          optional_inputs=_without_bias, infer_args=_filter_args)
def modulated_deformable_convolution(data, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter,
                                     num_group, num_deformable_group, workspace, no_bias, im2col_step, layout):
    """Modulated deformable convolution v2 (Zhu et al., 2018): v1 with a weight per sample.

    Parameters
    ----------
    data, offset, weight, bias : as in :func:`deformable_convolution`
    mask : Tensor, shape (N, num_deformable_group * kh * kw, OH, OW)
        Scales the sample of each kernel tap.
    im2col_step : int
        MXNet's batch chunk; neomx samples the whole batch at once but keeps its rule that
        the batch size be a multiple of ``min(N, im2col_step)``.

    Returns
    -------
    Tensor, shape (N, num_filter, OH, OW).
    """
    step = min(data.shape[0], im2col_step)
    check(step > 0 and data.shape[0] % step == 0, _V2, 'batch size %d must be a multiple of im2col_step %d',
          data.shape[0], im2col_step)
    return _deformable_conv(_V2, data, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter,
                            num_group, num_deformable_group)
