"""Operators: dense and convolutional layers, pooling, resampling, ROI pooling and embedding.

MXNet semantics kept here: ``stride``/``dilate``/``pad`` default to empty tuples meaning
1/1/0 in every spatial dimension; channel-last layouts (``NHWC``...) keep their weights
channel-last too (``(num_filter, *kernel, C)``); ``Deconvolution`` defaults to
``no_bias=True``; pooling supports MXNet's ``full`` convention (windows may run past the
padded input: max gives the dtype's lowest value there, sums give 0) and counts padding
in averages unless ``count_include_pad=False``; ``Embedding`` clips indices into range.
"""
import math

import torch
import torch.nn.functional as F

from .._sparse_state import SPARSE_MADE
from .layout import as_layout
from .elemwise import _round_half_away
from .dtype_rules import DTypeRule
from .registry import (BOOL, DTYPE, FLOAT, INT, OPT_BOOL, OPT_FLOAT, OPT_INT, SHAPE, Attr, check, choice,
                       memoized, register, variadic_name)


def _optional_choice(*values):
    """An enumeration that may also be None, its default (``layout``, ``cudnn_tune``)."""
    def parse(value):
        return None if value is None or value == 'None' else str(value)
    kind = '{None, %s}' % ', '.join("'%s'" % v for v in values)
    return Attr(kind, parse, None, (None,) + values)


def _without_bias(attrs):
    return ('bias',) if attrs['no_bias'] else ()


def _shape_of(tensor):
    return tuple(tensor.shape)


# ------------------------------------------------------------- FullyConnected
def _fc_args(shapes, attrs):
    """Weight ``(num_hidden, in_units)`` and bias ``(num_hidden,)`` from the data shape."""
    num_hidden = attrs['num_hidden']
    out = {'bias': (num_hidden,)}
    data = shapes.get('data')
    if data is not None:
        in_units = math.prod(data[1:]) if attrs['flatten'] else data[-1]
        out['weight'] = (num_hidden, in_units)
    return out


@register('FullyConnected', inputs=('data', 'weight', 'bias'),
          attrs=[('num_hidden', INT), ('no_bias', BOOL, False), ('flatten', BOOL, True)],
          optional_inputs=_without_bias, infer_args=_fc_args)
def fully_connected(data, weight, bias, num_hidden, no_bias, flatten):
    """Dense layer ``data @ weight.T + bias``.

    Parameters
    ----------
    data : Tensor, shape (N, *d)
        Flattened to ``(N, prod(d))`` when ``flatten``; else the last axis is the input.
    weight : Tensor, shape (num_hidden, in_units)
    bias : Tensor, shape (num_hidden,), or None when ``no_bias``

    Returns
    -------
    Tensor, shape (N, num_hidden), or ``(*data.shape[:-1], num_hidden)`` without flatten.
    """
    if weight.shape[0] != num_hidden:      # tested inline: the message is built only on failure
        check(False, 'FullyConnected', 'weight shape %s does not match num_hidden=%d (data %s)',
              weight.shape, num_hidden, data.shape)
    if flatten and data.dim() != 2:
        data = data.reshape(data.shape[0], -1)
    if bias is not None and bias.dim() == 2 and bias.shape == (num_hidden, 1):
        bias = bias.reshape(num_hidden)     # MXNet also takes a (num_hidden, 1) bias
    return F.linear(data, weight, None if no_bias else bias)


# ---------------------------------------------------------------- convolution
_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_DECONV = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_CHANNEL_LAST = frozenset(('NWC', 'NHWC', 'NDHWC'))
_CONV_LAYOUTS = ('NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC')
_CUDNN_TUNE = ('fastest', 'limited_workspace', 'off')


def _per_dim(op, name, value, kernel, default):
    """One of MXNet's ``stride``/``dilate``/``pad``/``adj``: empty means ``default`` in every dim."""
    if len(value) == len(kernel):
        return value
    check(not value, op, '%s %s must have as many dimensions as kernel %s', name, value, kernel)
    return (default,) * len(kernel)


@memoized(512)
def conv_geometry(op, kernel, stride, dilate, pad):
    """(stride, dilate, pad) filled in: cached, since a network repeats a few geometries per call."""
    return (_per_dim(op, 'stride', stride, kernel, 1), _per_dim(op, 'dilate', dilate, kernel, 1),
            _per_dim(op, 'pad', pad, kernel, 0))


def _channels(data_shape, layout):
    return data_shape[-1] if layout in _CHANNEL_LAST else data_shape[1]


def _kernel_weight_shape(first, per_group, kernel, layout):
    """A convolution weight shape: ``(first, per_group, *kernel)``, channel-last if the layout is."""
    if layout in _CHANNEL_LAST:
        return (first,) + kernel + (per_group,)
    return (first, per_group) + kernel


def _conv_weight_shape(data_shape, num_filter, num_group, kernel, layout):
    return _kernel_weight_shape(num_filter, _channels(data_shape, layout) // num_group, kernel, layout)


def _deconv_weight_shape(data_shape, num_filter, num_group, kernel, layout):
    return _kernel_weight_shape(_channels(data_shape, layout), num_filter // num_group, kernel, layout)


def _filter_args(weight_shape):
    """``infer_args`` for (de)convolutions: the weight from the data shape, the bias from num_filter."""
    def infer(shapes, attrs):
        out = {'bias': (attrs['num_filter'],)}
        data = shapes.get('data')
        if data is not None:
            out['weight'] = weight_shape(data, attrs['num_filter'], attrs['num_group'], attrs['kernel'],
                                         attrs['layout'])
        return out
    return infer


def _check_filter_inputs(op, data, weight, expected_weight, kernel):
    """Data must have the kernel's spatial rank and the weight its expected shape.

    Called on every forward, so the passing case costs three comparisons.
    """
    if data.dim() == len(kernel) + 2 <= 5 and weight.shape == expected_weight:
        return
    check(1 <= len(kernel) <= 3, op, 'kernel %s must have 1, 2 or 3 dimensions', kernel)
    check(data.dim() == len(kernel) + 2, op, 'data shape %s does not fit a %d-D kernel %s',
          data.shape, len(kernel), kernel)
    check(False, op, 'weight shape %s, expected %s for data %s', weight.shape, expected_weight,
          data.shape)


def _run_filter(fn, layout, data, weight, *args):
    """Apply a torch (transposed) convolution, moving channel-last data and weights to axis 1.

    ``args`` follow ``data, weight`` positionally in ``fn``'s signature (cheaper than keywords).
    """
    if layout not in _CHANNEL_LAST:
        return fn(data, weight, *args)
    return fn(data.movedim(-1, 1), weight.movedim(-1, 1), *args).movedim(1, -1)


_FILTER_COUNTS = [('num_filter', INT), ('num_group', INT, 1)]
_FILTER_TAIL = [('cudnn_tune', _optional_choice(*_CUDNN_TUNE)), ('cudnn_off', BOOL, False),
                ('layout', _optional_choice(*_CONV_LAYOUTS))]
_WINDOW_ATTRS = [('kernel', SHAPE), ('stride', SHAPE, ()), ('dilate', SHAPE, ()), ('pad', SHAPE, ())]


@register('Convolution', inputs=('data', 'weight', 'bias'),
          attrs=_WINDOW_ATTRS + _FILTER_COUNTS + [('workspace', INT, 1024), ('no_bias', BOOL, False)]
          + _FILTER_TAIL,
          optional_inputs=_without_bias, infer_args=_filter_args(_conv_weight_shape))
def convolution(data, weight, bias, kernel, stride, dilate, pad, num_filter, num_group, workspace,
                no_bias, cudnn_tune, cudnn_off, layout):
    """1-D, 2-D or 3-D convolution (cross-correlation), grouped by ``num_group``.

    Parameters
    ----------
    data : Tensor, shape (N, C, *spatial), or (N, *spatial, C) for channel-last layouts
    weight : Tensor, shape (num_filter, C / num_group, *kernel) (channel-last: C last)
    bias : Tensor, shape (num_filter,), or None when ``no_bias``

    Returns
    -------
    Tensor, shape (N, num_filter, *out) with ``out = (in + 2 pad - dilate (k - 1) - 1) // stride + 1``.
    """
    _check_filter_inputs('Convolution', data, weight,
                         _conv_weight_shape(data.shape, num_filter, num_group, kernel, layout), kernel)
    stride, dilate, pad = conv_geometry('Convolution', kernel, stride, dilate, pad)
    return _convolution(data, weight, None if no_bias else bias, kernel, stride, dilate, pad, num_group, layout)


def convolution_casting_filters(cast, data, weight, bias, kernel, stride, dilate, pad, num_filter, num_group,
                                workspace, no_bias, cudnn_tune, cudnn_off, layout):
    """:func:`convolution` with the filters ``cast(weight)`` (mixed precision's ``amp_cast``),
    the same values and gradients. Where one kernel position alone meets the data (1-pixel
    inputs, see :func:`_single_taps`), only that position's filters are cast: a cast of the
    whole filter array, and of its gradient (zero but for that position) back, costs ResNet-18
    on 32x32 images three times its last stage's matrix products."""
    _check_filter_inputs('Convolution', data, weight,
                         _conv_weight_shape(data.shape, num_filter, num_group, kernel, layout), kernel)
    stride, dilate, pad = conv_geometry('Convolution', kernel, stride, dilate, pad)
    bias = None if no_bias else bias
    taps = _taps_of(data, kernel, stride, dilate, pad, num_group, layout)
    if taps is not None:
        return _single_tap_convolution(data, weight, bias, taps, cast)
    return _convolution(data, cast(weight), bias, kernel, stride, dilate, pad, num_group, layout)


def _taps_of(data, kernel, stride, dilate, pad, num_group, layout):
    """The kernel position meeting a 1-pixel input (see :func:`_single_taps`) where
    :func:`convolution` runs it as a dense layer, else None."""
    if (data.shape[2:].numel() != 1 or num_group != 1 or layout in _CHANNEL_LAST
            or data.device.type != 'cpu'):
        return None
    return _single_taps(kernel, stride, dilate, pad)


def _convolution(data, weight, bias, kernel, stride, dilate, pad, num_group, layout):
    """The convolution once the inputs are checked: by the kernels fastest for its shape."""
    pixels = data.shape[2:].numel()
    if pixels <= _FEW_PIXELS and layout not in _CHANNEL_LAST and data.device.type == 'cpu':
        taps = _taps_of(data, kernel, stride, dilate, pad, num_group, layout)
        if taps is not None:
            return _single_tap_convolution(data, weight, bias, taps)
        out_size = _conv_out_size(data.shape[2:], kernel, stride, dilate, pad)
        if (data.dtype is torch.bfloat16 and math.prod(out_size) <= _MATMUL_PIXELS and data.dim() == 4
                and num_group == 1):
            return _matmul_convolution(data, weight, bias, stride, pad, dilate, out_size)
        if data.dim() == 4 and data.dtype is not torch.bfloat16:
            data = as_layout(data, torch.contiguous_format)
    return _run_filter(_CONV[len(kernel)], layout, data, weight, bias, stride, pad, dilate, num_group)


# Up to this many pixels per channel, oneDNN's channels-first convolutions (backward most)
# beat its channels-last ones on CPUs (measured on ResNet-18's layers: 10-40% at 2x2), and
# their filter gradients need no copy into the parameters' layout: channels-last inputs
# (from max pooling) are copied back first. Not for bfloat16 (mixed precision casts to it
# channels-last, see amp_cast): its backward is several times slower on mixed layouts.
_FEW_PIXELS = 16


# Up to this many output pixels per channel (from inputs of at most _FEW_PIXELS), a bfloat16
# 2-D convolution runs as one matrix product of its filters with the unfolded data: oneDNN's
# bfloat16 kernels (AMX) pad such inputs to the kernel's size and take 2-5 times as long
# forward and backward (ResNet-18's 2x2 stage at one thread, forward and backward: 2.6 ms
# against 5.1-5.9 ms; its strided 256 to 512 filters 2.3 ms against 9.7-12 ms, 128 to 256
# filters 1.5 ms against 2.8-3.1 ms). At 4x4 outputs oneDNN is faster again. float32
# convolutions gain less so, and keep oneDNN's channels-first kernels.
_MATMUL_PIXELS = 4


def _conv_out_size(spatial, kernel, stride, dilate, pad):
    return [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, s, d, p in zip(spatial, kernel, stride, dilate, pad)]


def _matmul_convolution(data, weight, bias, stride, pad, dilate, out_size):
    """A 2-D convolution (one group) as ``filters @ unfold(data)``: the same sums, by torch's
    matrix product, whose gradients are matrix products and a fold."""
    columns = F.unfold(data, tuple(weight.shape[2:]), dilation=dilate, padding=pad, stride=stride)
    out = torch.matmul(weight.flatten(1), columns)
    if bias is not None:
        out = out + bias[:, None]
    return out.view(data.shape[0], weight.shape[0], *out_size)


def _single_taps(kernel, stride, dilate, pad):
    """For a 1-pixel input giving a 1-pixel output: the kernel position that meets the input
    in each dimension (the others only see padding), else None."""
    taps = []
    for k, s, d, p in zip(kernel, stride, dilate, pad):
        if not 0 <= 2 * p - d * (k - 1) < s or p % d or p // d >= k:
            return None
        taps.append(p // d)
    return tuple(taps)


def _single_tap_convolution(data, weight, bias, taps, cast=None):
    """The convolution of 1-pixel inputs where one kernel position meets the input: a dense
    layer with that position's filters (passed through ``cast`` when given). oneDNN pads such
    inputs to the kernel's size, at 10-30 times the cost (ResNets on small images reach 1x1
    in their last stage); the gradient of the other positions is zero either way."""
    position = 0
    for tap, size in zip(taps, weight.shape[2:]):
        position = position * size + tap
    # one select on the flattened kernel (its gradient: one zero-filled filter array), copied
    # once: the matrix products of forward and backward then share it instead of each
    # gathering the strided filters (a cast, too, is faster on the copy than on the strides)
    filters = weight.flatten(2)[:, :, position].contiguous()
    if cast is not None:
        filters = cast(filters)
    out = F.linear(data.flatten(1), filters, bias)
    return out.reshape(out.shape + (1,) * len(taps))


def _pad_for_target(in_sizes, kernel, stride, dilate, target_shape):
    """MXNet's ``target_shape``: the (pad, adj) per dim giving exactly that output size."""
    pads, adjs = [], []
    for size, k, s, d, target in zip(in_sizes, kernel, stride, dilate, target_shape):
        total = s * (size - 1) + d * (k - 1) + 1 - target
        pads.append((total + 1) // 2)
        adjs.append(total % 2)
    return tuple(pads), tuple(adjs)


@register('Deconvolution', inputs=('data', 'weight', 'bias'),
          attrs=_WINDOW_ATTRS + [('adj', SHAPE, ()), ('target_shape', SHAPE, ())] + _FILTER_COUNTS
          + [('workspace', INT, 512), ('no_bias', BOOL, True)] + _FILTER_TAIL,
          optional_inputs=_without_bias, infer_args=_filter_args(_deconv_weight_shape))
def deconvolution(data, weight, bias, kernel, stride, dilate, pad, adj, target_shape, num_filter,
                  num_group, workspace, no_bias, cudnn_tune, cudnn_off, layout):
    """Transposed convolution, the gradient of :func:`convolution` with respect to its data.

    Parameters
    ----------
    data : Tensor, shape (N, C, *spatial) (channel-last layouts: C last)
    weight : Tensor, shape (C, num_filter / num_group, *kernel) (channel-last: last axis)
    bias : Tensor, shape (num_filter,), or None when ``no_bias`` (the default)

    Returns
    -------
    Tensor, shape (N, num_filter, *out) with
    ``out = stride (in - 1) + dilate (k - 1) + 1 - 2 pad + adj``, or ``target_shape`` when given
    (which then decides ``pad`` and ``adj``).
    """
    _check_filter_inputs('Deconvolution', data, weight,
                         _deconv_weight_shape(data.shape, num_filter, num_group, kernel, layout), kernel)
    stride, dilate, pad = conv_geometry('Deconvolution', kernel, stride, dilate, pad)
    adj = _per_dim('Deconvolution', 'adj', adj, kernel, 0)
    if target_shape:
        check(len(target_shape) == len(kernel), 'Deconvolution',
              'target_shape %s must have as many dimensions as kernel %s', target_shape, kernel)
        spatial = data.shape[1:-1] if layout in _CHANNEL_LAST else data.shape[2:]
        pad, adj = _pad_for_target(spatial, kernel, stride, dilate, target_shape)
    return _run_filter(_DECONV[len(kernel)], layout, data, weight, None if no_bias else bias, stride, pad,
                       adj, num_group, dilate)


# -------------------------------------------------------------------- pooling
_MAX_POOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}


def _sum_pool(x, kernel, stride):
    """Sums over pooling windows (no padding): average pooling with divisor 1.

    torch has no divisor override in 1-D, so 1-D inputs pool as 2-D of height 1.
    """
    if len(kernel) == 1:
        out = F.avg_pool2d(x.unsqueeze(-2), (1,) + kernel, (1,) + stride, divisor_override=1)
        return out.squeeze(-2)
    pool = F.avg_pool2d if len(kernel) == 2 else F.avg_pool3d
    return pool(x, kernel, stride, divisor_override=1)


def _pool_pads(spatial, kernel, stride, pad, convention):
    """(left, right) padding per spatial dim after which padding-free pooling gives MXNet's size.

    ``valid`` floors the window count, ``full`` ceils it (the last window may run past the
    padded input), ``same`` gives ``ceil(size / stride)`` windows with centred padding.
    A negative right pad crops rows no window reaches.
    """
    pads = []
    for size, k, s, p in zip(spatial, kernel, stride, pad):
        if convention == 'same':
            out = -(-size // s)
            p = max((out - 1) * s + k - size, 0) // 2
        elif convention == 'full':
            out = -(-(size + 2 * p - k) // s) + 1
        else:
            out = (size + 2 * p - k) // s + 1
        pads.append((p, (out - 1) * s + k - size - p))
    return pads


def _torch_pad(pads):
    """F.pad's argument: (left, right) pairs from the last dim backwards."""
    return [edge for pair in reversed(pads) for edge in pair]


def _window_counts(x, spatial, kernel, stride, pad, pads, include_pad):
    """How many elements each average-pooling window divides by, as MXNet counts them.

    With ``include_pad`` a window counts the explicit padding but not the extra cells a
    ``full`` window runs past it; without, it counts only real input elements.
    """
    ones = x.new_ones((1, 1) + spatial)
    if include_pad:
        ones = F.pad(ones, _torch_pad([(p, p) for p in pad]), value=1.0)
        pads = [(0, right - p) for (_, right), p in zip(pads, pad)]
    return _sum_pool(F.pad(ones, _torch_pad(pads)), kernel, stride)


def _lowest(dtype):
    return torch.finfo(dtype).min if dtype.is_floating_point else torch.iinfo(dtype).min


def _pool_window(data, kernel, stride, pad, global_pool):
    """The filled (kernel, stride, pad); a global pool covers the whole input, unpadded."""
    ndim = data.dim() - 2
    check(1 <= ndim <= 3, 'Pooling', 'data shape %s must be 3-D, 4-D or 5-D', data.shape)
    if global_pool:
        return tuple(data.shape[2:]), (1,) * ndim, (0,) * ndim
    check(len(kernel) == ndim, 'Pooling', 'kernel %s does not fit data shape %s', kernel, data.shape)
    # as MXNet, a longer pad is read for its first len(kernel) dimensions
    return (kernel, _per_dim('Pooling', 'stride', stride, kernel, 1),
            _per_dim('Pooling', 'pad', pad[:len(kernel)] if pad else pad, kernel, 0))


_AVG_POOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def _native_pool(data, kernel, stride, pad, pool_type, convention, global_pool, include_pad):
    """Max or average pooling by torch's own padding, where its windows are MXNet's: the
    ``valid`` convention with pads of at most half the kernel, and global average pooling.
    None elsewhere.

    Padding inside torch's kernels saves a padded copy of the input, and keeps the
    channels-last layout of oneDNN's convolution outputs.
    """
    if pool_type not in ('max', 'avg') or not data.is_floating_point():
        return None
    if global_pool and pool_type == 'avg':      # one window, whatever the convention
        return data.mean(tuple(range(2, data.dim())), keepdim=True)
    if convention != 'valid':
        return None
    if any(2 * p > k for p, k in zip(pad, kernel)):
        return None
    if pool_type == 'max':
        return _MAX_POOL[len(kernel)](_pooling_layout(data), kernel, stride, pad)
    return _AVG_POOL[len(kernel)](data, kernel, stride, pad, count_include_pad=include_pad)


def _pooling_layout(data):
    """``data`` channels-last where torch's max pooling is much faster so (2-D on CPUs:
    its channels-first kernel takes ten times as long at one thread, more than the copy);
    the output keeps that layout (same values), which later convolutions take as it is."""
    if data.dim() == 4 and data.device.type == 'cpu' and data.shape[1] > 1:
        return as_layout(data, torch.channels_last)
    return data


def _check_pooling(data, kernel, pad, pool_type, p_value, convention):
    """MXNet's restrictions: pad below kernel, kernel within the padded input, lp needs p."""
    check(all(p < k for p, k in zip(pad, kernel)), 'Pooling', 'pad %s must be smaller than kernel %s',
          pad, kernel)
    check(all(k <= n + 2 * p for k, n, p in zip(kernel, data.shape[2:], pad)), 'Pooling',
          'kernel %s exceeds the padded input (data %s, pad %s)', kernel, data.shape, pad)
    check(pool_type != 'lp' or p_value is not None, 'Pooling', "pool_type 'lp' needs p_value")
    check(convention != 'same' or (len(kernel) == 1 and pool_type == 'max' and not any(pad)), 'Pooling',
          "pooling_convention 'same' supports only 1-D max pooling without pad (data %s)",
          data.shape)


def _onednn_workspace(attrs):
    """MXNet's oneDNN build gives max pooling over 1-3 dims in NC* layouts a hidden workspace
    output, which its Symbol JSON counts."""
    layout = attrs.get('layout')
    return int(attrs['pool_type'] == 'max' and 1 <= len(attrs['kernel']) <= 3
               and layout in (None, 'NCW', 'NCHW', 'NCDHW'))


@register('Pooling', inputs=('data',), hidden_outputs=_onednn_workspace,
          attrs=[('kernel', SHAPE, ()), ('pool_type', choice('avg', 'lp', 'max', 'sum')('max')),
                 ('global_pool', BOOL, False), ('cudnn_off', BOOL, False),
                 ('pooling_convention', choice('full', 'same', 'valid')('valid')),
                 ('stride', SHAPE, ()), ('pad', SHAPE, ()), ('p_value', OPT_INT, None),
                 ('count_include_pad', OPT_BOOL, None),
                 ('layout', _optional_choice('NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC', 'NWC'))])
def pooling(data, kernel, pool_type, global_pool, cudnn_off, pooling_convention, stride, pad,
            p_value, count_include_pad, layout):
    """Max, average, sum or Lp pooling over 1, 2 or 3 spatial dimensions.

    Parameters
    ----------
    data : Tensor, shape (N, C, *spatial) (channel-last layouts: C last)

    Returns
    -------
    Tensor, shape (N, C, *out): ``out`` per ``pooling_convention`` (``valid`` floors,
    ``full`` ceils the window count); ``global_pool`` pools everything to size 1.
    Lp pooling gives ``sign(s) |s|^(1/p)`` with ``s`` the window sum of ``x^p``.
    """
    channel_last = layout in _CHANNEL_LAST
    if channel_last:
        data = data.movedim(-1, 1)
    kernel, stride, pad = _pool_window(data, kernel, stride, pad, global_pool)
    _check_pooling(data, kernel, pad, pool_type, p_value, pooling_convention)
    out = _native_pool(data, kernel, stride, pad, pool_type, pooling_convention, global_pool,
                       count_include_pad is not False)
    if out is not None:
        return out.movedim(1, -1) if channel_last else out
    spatial = tuple(data.shape[2:])
    pads = _pool_pads(spatial, kernel, stride, pad, pooling_convention)
    if pool_type == 'max':
        padded = F.pad(data, _torch_pad(pads), value=_lowest(data.dtype))
        out = _MAX_POOL[len(kernel)](padded, kernel, stride)
    elif pool_type == 'lp':
        sums = _sum_pool(F.pad(data ** p_value, _torch_pad(pads)), kernel, stride)
        out = sums.sign() * sums.abs() ** (1.0 / p_value)
    else:
        out = _sum_pool(F.pad(data, _torch_pad(pads)), kernel, stride)
        if pool_type == 'avg':
            out = out / _window_counts(data, spatial, kernel, stride, pad, pads,
                                       count_include_pad is not False).clamp(min=1)
    return out.movedim(1, -1) if channel_last else out


# ----------------------------------------------------------------- resampling
def _bilinear_kernel(scale):
    return 2 * scale - scale % 2


def _upsampling_args(shapes, attrs):
    """Bilinear upsampling's weight: one ``(k, k)`` filter per channel, ``k = 2 scale - scale % 2``."""
    if attrs['sample_type'] != 'bilinear':
        return {}
    k = _bilinear_kernel(attrs['scale'])
    shape = (attrs['num_filter'], 1, k, k)
    # graph inference names a variadic operator's inputs arg0, arg1...: the weight is the second
    return {'weight': shape, variadic_name(1): shape}


def _upsample_bilinear(data, weight, scale):
    """A depthwise transposed convolution with stride ``scale``: MXNet's learnable bilinear mode."""
    k = _bilinear_kernel(scale)
    expected = (data.shape[1], 1, k, k)
    check(_shape_of(weight) == expected, 'UpSampling', 'bilinear weight shape %s, expected %s for data %s',
          weight.shape, expected, data.shape)
    return F.conv_transpose2d(data, weight, stride=scale, padding=scale // 2, groups=data.shape[1])


def _upsample_nearest(inputs, scale, multi_input_mode):
    """Every input repeated to ``scale`` times the first one's size, then concatenated or summed."""
    size = tuple(n * scale for n in inputs[0].shape[2:])
    outs = []
    for x in inputs:
        check(x.dim() == 4 and all(s % n == 0 for s, n in zip(size, x.shape[2:])), 'UpSampling',
              'input shape %s cannot be upsampled to %s by an integer factor', x.shape, size)
        outs.append(F.interpolate(x, size=size, mode='nearest'))
    if multi_input_mode == 'concat':
        return torch.cat(outs, dim=1)
    return sum(outs[1:], outs[0])


@register('UpSampling', variadic='num_args',
          attrs=[('scale', INT), ('num_filter', INT, 0), ('sample_type', choice('bilinear', 'nearest')),
                 ('multi_input_mode', choice('concat', 'sum')('concat')), ('num_args', INT),
                 ('workspace', INT, 512)],
          infer_args=_upsampling_args,
          num_inputs=lambda a: 2 if a['sample_type'] == 'bilinear' else a['num_args'])
def upsampling(*inputs, scale, num_filter, sample_type, multi_input_mode, num_args, workspace):
    """Upsample 4-D (N, C, H, W) inputs by an integer ``scale``.

    ``nearest`` takes one or more inputs, all brought to ``(H0 scale, W0 scale)`` of the first
    and joined by ``multi_input_mode``; ``bilinear`` takes ``(data, weight)`` with weight
    ``(C, 1, k, k)``. Output: (N, C_total, H0 scale, W0 scale).
    """
    if sample_type == 'bilinear':
        check(len(inputs) == 2, 'UpSampling', 'bilinear sampling takes data and weight, got %d inputs',
              len(inputs))
        return _upsample_bilinear(inputs[0], inputs[1], scale)
    return _upsample_nearest(inputs, scale, multi_input_mode)


_PARITY_RESIZE = {'to_even_down': lambda n: n - n % 2, 'to_even_up': lambda n: n + n % 2,
                  'to_odd_down': lambda n: n - 1 + n % 2, 'to_odd_up': lambda n: n + 1 - n % 2}


def _resized(mode, size, target, scale):
    """One output dimension of BilinearResize2D for ``mode``."""
    if mode == 'size':
        return target if scale is None else int(size * scale)
    if mode == 'odd_scale':
        check(scale is not None, '_contrib_BilinearResize2D',
              "mode 'odd_scale' needs scale_height and scale_width")
        return int(size * scale) if size % 2 == 0 else int((size - 1) * scale) + 1
    return _PARITY_RESIZE[mode](size)


@register('_contrib_BilinearResize2D', inputs=('data', 'like'), dtypes=DTypeRule(soft=('like',)),
          attrs=[('height', INT, 1), ('width', INT, 1), ('scale_height', OPT_FLOAT, None),
                 ('scale_width', OPT_FLOAT, None),
                 ('mode', choice('like', 'odd_scale', 'size', 'to_even_down', 'to_even_up', 'to_odd_down',
                                 'to_odd_up')('size')),
                 ('align_corners', BOOL, True)],
          optional_inputs=lambda attrs: () if attrs['mode'] == 'like' else ('like',))
def bilinear_resize_2d(data, like, height, width, scale_height, scale_width, mode, align_corners):
    """Bilinear resize of (N, C, H, W) data to a size chosen by ``mode``.

    ``size``: (height, width), or the input size times ``scale_height``/``scale_width``;
    ``like``: the spatial size of ``like``; ``odd_scale``/``to_*``: derived from the input size.
    """
    check(data.dim() == 4, '_contrib_BilinearResize2D', 'data shape %s must be 4-D (N, C, H, W)',
          data.shape)
    if mode == 'like':
        size = tuple(like.shape[2:])
    else:
        size = (_resized(mode, data.shape[2], height, scale_height),
                _resized(mode, data.shape[3], width, scale_width))
    return F.interpolate(data, size=size, mode='bilinear', align_corners=align_corners)


# ---------------------------------------------------------------- ROI pooling
def _roi_bins(start, end, bins, limit):
    """Bin masks along one axis: ``(R, bins, limit)`` booleans and ``(R, bins)`` emptiness.

    The ROI spans ``[start, end]`` inclusive (at least one cell); bin ``i`` covers
    ``[floor(i w), ceil((i + 1) w))`` shifted by ``start``, with ``w = span / bins``, clipped.
    """
    width = (end - start + 1).clamp(min=1).to(torch.float64).unsqueeze(1) / bins
    index = torch.arange(bins, device=start.device, dtype=torch.float64)
    lo = (torch.floor(index * width).long() + start.unsqueeze(1)).clamp(0, limit)
    hi = (torch.ceil((index + 1) * width).long() + start.unsqueeze(1)).clamp(0, limit)
    cells = torch.arange(limit, device=start.device)
    inside = (cells >= lo.unsqueeze(-1)) & (cells < hi.unsqueeze(-1))
    return inside, hi <= lo


def _masked_max(values, mask):
    """Max over the last axis of ``values`` where ``mask``; the gradient goes to one element."""
    return torch.where(mask, values, _lowest(values.dtype)).max(dim=-1).values


@register('ROIPooling', inputs=('data', 'rois'), attrs=[('pooled_size', SHAPE), ('spatial_scale', FLOAT)])
def roi_pooling(data, rois, pooled_size, spatial_scale):
    """Max-pool each region of interest into a fixed ``pooled_size`` grid.

    Parameters
    ----------
    data : Tensor, shape (N, C, H, W)
    rois : Tensor, shape (R, 5)
        ``[batch_index, x1, y1, x2, y2]`` in input coordinates, scaled by ``spatial_scale``
        and rounded.

    Returns
    -------
    Tensor, shape (R, C, pooled_h, pooled_w); empty bins give 0.
    """
    check(data.dim() == 4 and rois.dim() == 2 and rois.shape[1] == 5, 'ROIPooling',
          'data must be (N, C, H, W) and rois (R, 5), got %s and %s', data.shape, rois.shape)
    pooled_h, pooled_w = pooled_size
    corners = _round_half_away(rois[:, 1:].detach() * spatial_scale).long()
    rows, empty_rows = _roi_bins(corners[:, 1], corners[:, 3], pooled_h, data.shape[2])
    cols, empty_cols = _roi_bins(corners[:, 0], corners[:, 2], pooled_w, data.shape[3])
    regions = data[rois[:, 0].long()]                                   # (R, C, H, W)
    # Separable max: over each column bin first, then over each row bin.
    by_cols = _masked_max(regions.unsqueeze(3), cols[:, None, None])   # (R, C, H, pooled_w)
    out = _masked_max(by_cols.transpose(2, 3).unsqueeze(2), rows[:, None, :, None])
    empty = empty_rows[:, :, None] | empty_cols[:, None, :]
    return out.masked_fill(empty.unsqueeze(1), 0)


# ------------------------------------------------------------------ embedding
@register('Embedding', inputs=('data', 'weight'),
          attrs=[('input_dim', INT), ('output_dim', INT), ('dtype', DTYPE, torch.float32),
                 ('sparse_grad', BOOL, False)],
          infer_args=lambda shapes, attrs: {'weight': (attrs['input_dim'], attrs['output_dim'])},
          dtype_inputs=('weight',))
def embedding(data, weight, input_dim, output_dim, dtype, sparse_grad):
    """Rows of ``weight`` (input_dim, output_dim) picked by the indices in ``data``.

    Indices are truncated to integers and clipped to ``[0, input_dim - 1]``.
    Output: ``data.shape + (output_dim,)`` in the weight's dtype.
    """
    check(_shape_of(weight) == (input_dim, output_dim), 'Embedding',
          'weight shape %s, expected (input_dim, output_dim) = %s', weight.shape,
          (input_dim, output_dim))
    # sparse_grad: torch gives the weight's gradient as the rows looked up (a sparse tensor,
    # row_sparse for the buffer), never a dense one of input_dim rows, as MXNet's
    if sparse_grad:
        SPARSE_MADE[0] = True   # the weight's gradient will be sparse (see neomx._sparse_state)
    return F.embedding(data.long().clamp(0, input_dim - 1), weight, sparse=bool(sparse_grad))
