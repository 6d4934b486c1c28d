"""MXNet's int8 inference operators (``mx.nd.contrib.quantize_v2``, ``requantize``,
``quantize_asym`` and the ``quantized_*`` layers), as MXNet 1.9.1's CPU build computes them.

An int8/uint8 array stands for real values over a range given beside it (``min``/``max``
arrays of shape (1,)), ``R = max(|min|, |max|)``: one int8 step is ``R / 127.5`` and one
uint8 step ``R / 255.5`` (oneDNN's convention, as ``dequantize`` reads them). Values are
scaled in float32 and rounded half to even, results saturate. Layers that multiply
(``quantized_fully_connected``, ``quantized_conv``) sum exact integer products into int32,
whose range is ``(R_data / s) * (R_weight / 127) * (2**31 - 1)`` with ``s`` 127 for int8 data,
255 for uint8 data of the fully connected layer (MXNet's convolution keeps 127); their int8
bias is rescaled into those steps (truncated). ``quantized_elemwise_add`` adds the real values into int32 over the range
``R_lhs + R_rhs``, or into int8 over a calibrated range. Layers that only move values
(flatten, ReLU, pooling, embedding) keep the input's range.

Where MXNet's kernels give no usable answer neomx follows the documented rule: without a
calibrated range ``requantize`` takes the range of the data (MXNet 1.9.1's CPU kernel reports
an inverted one). None of these operators is differentiable, as in MXNet.
"""
import numpy as np
import torch

from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, INT, OPT_FLOAT, OPT_INT, check, choice, get, register, variadic_name

_INT32_MAX = 2147483647.0
_STEPS = {torch.int8: 127.5, torch.uint8: 255.5}
_RANGE = 'float32'
_RANGED_OUTPUTS = ('output', 'min_output', 'max_output')     # MXNet's output names of the quantized layers


def _max_abs(low, high):
    return max(abs(float(low)), abs(float(high)))


def _given_range(op, minimum, maximum):
    check(minimum.numel() == 1 and maximum.numel() == 1, op, 'the min and max ranges must hold one value '
          'each, got shapes %s and %s', minimum.shape, maximum.shape)
    return float(minimum.reshape(())), float(maximum.reshape(()))


def _range_arrays(low, high, device):
    return (torch.tensor([low], dtype=torch.float32, device=device),
            torch.tensor([high], dtype=torch.float32, device=device))


def _scaled(values, scale):
    """``values * scale`` in float32, as MXNet's kernels compute it."""
    return values.float() * torch.tensor(scale, dtype=torch.float32)


def _to_integers(real, low, high, dtype):
    """``real`` values quantized to ``dtype`` over [low, high], with the range reported."""
    span = _max_abs(low, high)
    scale = _STEPS[dtype] / span if span > 0 else 0.0
    bounds = (-128.0, 127.0) if dtype is torch.int8 else (0.0, 255.0)
    quantized = torch.round(_scaled(real, scale)).clamp(*bounds).to(dtype)
    reported = (-span, span) if dtype is torch.int8 else (low, high)
    return (quantized,) + _range_arrays(*reported, real.device)


def _real_values(data, low, high):
    """The real values int8/uint8/int32 ``data`` stands for over [low, high] (float32)."""
    steps = _STEPS.get(data.dtype, _INT32_MAX)
    return _scaled(data, _max_abs(low, high) / steps)


def _calibrated(op, data_low, data_high, min_calib_range, max_calib_range):
    if min_calib_range is None or max_calib_range is None:
        return data_low, data_high
    check(min_calib_range <= max_calib_range, op, 'min_calib_range %s exceeds max_calib_range %s',
          min_calib_range, max_calib_range)
    return min_calib_range, max_calib_range


def _data_range(data):
    if data.numel() == 0:
        return 0.0, 0.0
    return float(data.min()), float(data.max())


def _out_type(out_type, min_calib_range):
    if out_type == 'auto':      # uint8 only where a calibrated range says the data is non-negative
        return torch.uint8 if min_calib_range is not None and min_calib_range >= 0 else torch.int8
    return getattr(torch, out_type)


def _out_dtype(dtypes, attrs):
    return _out_type(attrs['out_type'], attrs['min_calib_range'])


_FLOAT32_RANGES = DTypeRule(output=_out_dtype, later_outputs=lambda dtypes, attrs: torch.float32)
_CALIB = [('min_calib_range', OPT_FLOAT, None), ('max_calib_range', OPT_FLOAT, None)]


@register('_contrib_quantize_v2', inputs=('data',),
          attrs=[('out_type', choice('auto', 'int8', 'uint8'), 'int8')] + _CALIB, num_outputs=3,
          dtypes=_FLOAT32_RANGES, differentiable=False)
def quantize_v2(data, out_type, min_calib_range, max_calib_range):
    """Quantize float32 ``data`` over its calibrated range, else over its own min and max.

    Returns
    -------
    (quantized, min_range, max_range): int8 reports ``(-R, R)``, uint8 the range used;
    ``out_type='auto'`` is uint8 for a non-negative calibrated range, else int8.
    """
    op = 'quantize_v2'
    check(data.dtype.is_floating_point, op, 'data must be a float array, got %s', data.dtype)
    low, high = _calibrated(op, *_data_range(data), min_calib_range, max_calib_range)
    return _to_integers(data.detach(), low, high, _out_type(out_type, min_calib_range))


@register('_contrib_requantize', inputs=('data', 'min_range', 'max_range'),
          attrs=[('out_type', choice('auto', 'int8', 'uint8'), 'int8')] + _CALIB, num_outputs=3,
          dtypes=DTypeRule(fixed={'data': 'int32', 'min_range': _RANGE, 'max_range': _RANGE}, output=_out_dtype,
                           later_outputs=lambda dtypes, attrs: torch.float32), differentiable=False)
def requantize(data, min_range, max_range, out_type, min_calib_range, max_calib_range):
    """Int32 ``data`` over ``[min_range, max_range]`` (a layer's accumulator) to int8/uint8 over
    the calibrated range, else over the range of its real values."""
    op = 'requantize'
    check(data.dtype is torch.int32, op, 'data must be int32, got %s', data.dtype)
    real = _real_values(data, *_given_range(op, min_range, max_range))
    low, high = _calibrated(op, *_data_range(real), min_calib_range, max_calib_range)
    return _to_integers(real, low, high, _out_type(out_type, min_calib_range))


@register('_contrib_quantize_asym', inputs=('data',), attrs=_CALIB, num_outputs=3,
          output_names=('output', 'scale', 'shift'),
          dtypes=DTypeRule(output='uint8', later_outputs=lambda dtypes, attrs: torch.float32),
          differentiable=False)
def quantize_asym(data, min_calib_range, max_calib_range):
    """Asymmetric uint8 quantization: ``out = in * scale + shift + 0.5`` (truncated), with
    ``scale = 255 / (max - min)`` and ``shift = 255 - max * scale`` over the calibrated range,
    else the data's.

    Returns
    -------
    (quantized uint8, scale (1,), shift (1,))
    """
    op = 'quantize_asym'
    check(data.dtype.is_floating_point, op, 'data must be a float array, got %s', data.dtype)
    low, high = _calibrated(op, *_data_range(data), min_calib_range, max_calib_range)
    scale = 255.0 / (high - low) if high > low else 1.0
    shift = 255.0 - high * scale
    quantized = torch.floor(data.detach().double() * scale + shift + 0.5).clamp(0, 255).to(torch.uint8)
    return (quantized,) + _range_arrays(scale, shift, data.device)


# ------------------------------------------------- layers that keep the range
_PASS_RANGE = dict(num_outputs=3, differentiable=False, output_names=_RANGED_OUTPUTS,
                   dtypes=DTypeRule(free=('data',), fixed={'min_data': _RANGE, 'max_data': _RANGE},
                                    output=lambda dtypes, attrs: dtypes[0],
                                    later_outputs=lambda dtypes, attrs: torch.float32))


def _check_integers(op, data, allowed=(torch.int8, torch.uint8)):
    check(data.dtype in allowed, op, 'data must be %s, got %s', ' or '.join(str(t).split('.')[-1] for t in allowed),
          data.dtype)


def _with_range(out, min_data, max_data):
    return out, min_data.float().reshape(1).clone(), max_data.float().reshape(1).clone()


@register('_contrib_quantized_flatten', inputs=('data', 'min_data', 'max_data'), **_PASS_RANGE)
def quantized_flatten(data, min_data, max_data):
    """``Flatten`` of quantized data: (N, ...) -> (N, product of the rest), range unchanged."""
    _check_integers('quantized_flatten', data)
    return _with_range(data.reshape(data.shape[0], -1) if data.dim() else data.reshape(1, 1), min_data, max_data)


@register('_contrib_quantized_act', inputs=('data', 'min_data', 'max_data'),
          attrs=[('act_type', choice('relu'))], **_PASS_RANGE)
def quantized_act(data, min_data, max_data, act_type):
    """ReLU of quantized data, range unchanged (MXNet quantizes no other activation)."""
    _check_integers('quantized_act', data)
    return _with_range(data.clamp(min=0), min_data, max_data)


def _layer_attrs(name, *drop):
    """The attributes of float layer ``name`` (kernel, stride...) for its quantized form."""
    spec = get(name)
    return [(key, attr) for key, attr in spec.attrs.items() if key not in drop]


@register('_contrib_quantized_pooling', inputs=('data', 'min_data', 'max_data'), attrs=_layer_attrs('Pooling'),
          **_PASS_RANGE)
def quantized_pooling(data, min_data, max_data, **pooling):
    """``Pooling`` of quantized data (averages rounded), range unchanged."""
    _check_integers('quantized_pooling', data)
    check(pooling['pool_type'] in ('max', 'avg'), 'quantized_pooling', "pool_type must be 'max' or 'avg', got %s",
          pooling['pool_type'])
    pooled = get('Pooling').impl(data.double(), **pooling)
    bounds = (-128, 127) if data.dtype is torch.int8 else (0, 255)
    return _with_range(torch.round(pooled).clamp(*bounds).to(data.dtype), min_data, max_data)


@register('_contrib_quantized_embedding', inputs=('data', 'weight', 'min_weight', 'max_weight'),
          attrs=_layer_attrs('Embedding'), num_outputs=3, differentiable=False, output_names=_RANGED_OUTPUTS,
          dtypes=DTypeRule(free=('data', 'weight'), fixed={'min_weight': _RANGE, 'max_weight': _RANGE},
                           output=lambda dtypes, attrs: dtypes[1] or torch.int8,
                           later_outputs=lambda dtypes, attrs: torch.float32))
def quantized_embedding(data, weight, min_weight, max_weight, input_dim, output_dim, dtype, sparse_grad):
    """Rows of an int8 embedding table, with its range."""
    op = 'quantized_embedding'
    _check_integers(op, weight, (torch.int8,))
    check(tuple(weight.shape) == (input_dim, output_dim), op, 'weight must have shape (input_dim, output_dim) = '
          '(%d, %d), got %s', input_dim, output_dim, weight.shape)
    rows = data.long().clamp(0, input_dim - 1)
    return _with_range(weight[rows], min_weight, max_weight)


# ---------------------------------------------------- element-wise and concat
@register('_contrib_quantized_elemwise_add', inputs=('lhs', 'rhs', 'lhs_min', 'lhs_max', 'rhs_min', 'rhs_max'),
          attrs=_CALIB, num_outputs=3, differentiable=False, output_names=_RANGED_OUTPUTS,
          dtypes=DTypeRule(free=('lhs', 'rhs'), fixed=dict.fromkeys(('lhs_min', 'lhs_max', 'rhs_min', 'rhs_max'),
                                                                     _RANGE),
                           output=lambda dtypes, attrs: torch.int32 if attrs['max_calib_range'] is None
                           else torch.int8, later_outputs=lambda dtypes, attrs: torch.float32))
def quantized_elemwise_add(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, min_calib_range, max_calib_range):
    """Sum of two quantized arrays of one shape: int32 over ``R_lhs + R_rhs``, or int8 over
    the calibrated range when one is given."""
    op = 'quantized_elemwise_add'
    _check_integers(op, lhs)
    _check_integers(op, rhs)
    check(lhs.shape == rhs.shape, op, 'lhs and rhs must have one shape, got %s and %s', lhs.shape, rhs.shape)
    lhs_range, rhs_range = _given_range(op, lhs_min, lhs_max), _given_range(op, rhs_min, rhs_max)
    if min_calib_range is not None and max_calib_range is not None:
        real = _real_values(lhs, *lhs_range) + _real_values(rhs, *rhs_range)
        return _to_integers(real, min_calib_range, max_calib_range, torch.int8)
    span = _max_abs(*lhs_range) + _max_abs(*rhs_range)
    # oneDNN scales each operand into int32 steps in float32: so does this, for its rounding
    scales = [torch.tensor(_max_abs(*r) / _STEPS[t.dtype] * _INT32_MAX / span, dtype=torch.float32)
              for r, t in ((lhs_range, lhs), (rhs_range, rhs))]
    total = lhs.float() * scales[0] + rhs.float() * scales[1]
    out = torch.round(total.double()).clamp(-_INT32_MAX - 1, _INT32_MAX).to(torch.int32)
    return (out,) + _range_arrays(-span, span, lhs.device)


def _concat_inputs(attrs):
    n = attrs['num_args']
    return n * 3


@register('_contrib_quantized_concat', variadic='num_args', attrs=[('num_args', INT), ('dim', INT, 1)],
          num_inputs=_concat_inputs, num_outputs=3, differentiable=False, output_names=_RANGED_OUTPUTS,
          dtypes=DTypeRule(free=lambda a: tuple(variadic_name(i) for i in range(3 * a['num_args'])),
                           output=lambda dtypes, attrs: dtypes[0],
                           later_outputs=lambda dtypes, attrs: torch.float32))
def quantized_concat(*arrays, num_args, dim):
    """Concatenation of quantized arrays (inputs: the arrays, then min and max of each in
    turn) over the union of their ranges, each rescaled into it."""
    op = 'quantized_concat'
    check(len(arrays) == 3 * num_args, op, 'expects %d arrays then a min and a max for each (%d inputs), got %d',
          num_args, 3 * num_args, len(arrays))
    data, ranges = arrays[:num_args], arrays[num_args:]
    bounds = [_given_range(op, ranges[2 * i], ranges[2 * i + 1]) for i in range(num_args)]
    low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
    out_type = torch.uint8 if all(d.dtype is torch.uint8 for d in data) else torch.int8
    for d in data:
        _check_integers(op, d)
    parts = [_to_integers(_real_values(d, *b), low, high, out_type)[0] for d, b in zip(data, bounds)]
    return (torch.cat(parts, dim=dim),) + _range_arrays(low, high, data[0].device)


# ------------------------------------------------------ layers that multiply
def _multiply(op, layer, data, weight, bias, ranges, no_bias, uint8_steps, **attrs):
    """int32 ``layer`` of quantized data and weights; one data step is ``R / 127`` for int8
    data and ``R / uint8_steps`` for uint8 data."""
    _check_integers(op, data)
    _check_integers(op, weight, (torch.int8,))
    data_range = _given_range(op, ranges[0], ranges[1])
    weight_range = _given_range(op, ranges[2], ranges[3])
    data_steps = uint8_steps if data.dtype is torch.uint8 else 127.0
    step = _max_abs(*data_range) / data_steps * (_max_abs(*weight_range) / 127.0)
    f32 = np.float32    # MXNet computes the reported range in float32
    span = float(f32(_max_abs(*data_range)) / f32(data_steps) * (f32(_max_abs(*weight_range)) / f32(127))
                 * f32(_INT32_MAX))
    total = get(layer).impl(data.double(), weight.double(), None, no_bias=True, **attrs)
    if not no_bias:
        _check_integers(op, bias, (torch.int8,))
        bias_step = _max_abs(*_given_range(op, ranges[4], ranges[5])) / 127.0
        rescaled = torch.trunc(bias.double() * (bias_step / step)) if step > 0 else bias.double() * 0
        total = total + rescaled.reshape((1, -1) + (1,) * (total.dim() - 2))
    out = total.clamp(-_INT32_MAX - 1, _INT32_MAX).to(torch.int32)
    return (out,) + _range_arrays(-span, span, data.device)


def _multiply_inputs(attrs):
    if attrs['no_bias']:
        return ('bias', 'min_bias', 'max_bias')
    return ()


_MULTIPLY_INPUTS = ('data', 'weight', 'bias', 'min_data', 'max_data', 'min_weight', 'max_weight', 'min_bias',
                    'max_bias')
_MULTIPLY = dict(inputs=_MULTIPLY_INPUTS, optional_inputs=_multiply_inputs, num_outputs=3, differentiable=False,
                 output_names=_RANGED_OUTPUTS,
                 dtypes=DTypeRule(free=('data', 'weight', 'bias'),
                                  fixed=dict.fromkeys(_MULTIPLY_INPUTS[3:], _RANGE), output='int32',
                                  later_outputs=lambda dtypes, attrs: torch.float32))


@register('_contrib_quantized_fully_connected', attrs=_layer_attrs('FullyConnected'), **_MULTIPLY)
def quantized_fully_connected(data, weight, bias, min_data, max_data, min_weight, max_weight, min_bias, max_bias,
                              num_hidden, no_bias, flatten):
    """``FullyConnected`` of int8 (or uint8) data and int8 weights into int32.

    Inputs: data, weight, bias (unless ``no_bias``), then the min and max of each.
    Returns (int32 output, its min, its max).
    """
    ranges = (min_data, max_data, min_weight, max_weight, min_bias, max_bias)
    return _multiply('quantized_fully_connected', 'FullyConnected', data, weight, bias, ranges, no_bias, 255.0,
                     num_hidden=num_hidden, flatten=flatten)


@register('_contrib_quantized_conv', attrs=_layer_attrs('Convolution'), **_MULTIPLY)
def quantized_conv(data, weight, bias, min_data, max_data, min_weight, max_weight, min_bias, max_bias, no_bias,
                   **conv):
    """``Convolution`` of int8 (or uint8) data and int8 weights into int32.

    Inputs: data, weight, bias (unless ``no_bias``), then the min and max of each.
    Returns (int32 output, its min, its max).
    """
    ranges = (min_data, max_data, min_weight, max_weight, min_bias, max_bias)
    return _multiply('quantized_conv', 'Convolution', data, weight, bias, ranges, no_bias, 127.0, **conv)


# ------------------------------------------------------------- calibration
def _smoothed(dist, eps=1e-4):
    """``dist`` with every zero raised to ``eps``, the mass taken evenly from the non-zeros;
    None where all are zero."""
    zeros = dist == 0
    nonzero = int((~zeros).sum())
    if nonzero == 0:
        return None
    taken = eps * int(zeros.sum()) / nonzero
    return dist + torch.where(zeros, torch.full_like(dist, eps), torch.full_like(dist, -taken))


def _kl_divergence(p, q):
    """KL(p || q) of two unnormalized distributions (as ``scipy.stats.entropy(p, q)``)."""
    p, q = p / p.sum(), q / q.sum()
    terms = torch.where(p > 0, p * torch.log(p / q), torch.zeros_like(p))
    return float(terms.sum())


def _quantized_reference(window, reference, num_quantized_bins):
    """The window of histogram counts merged into ``num_quantized_bins`` bins (the last takes
    the remainder) and spread back evenly over the window's non-empty bins, kept where
    ``reference`` is non-zero."""
    size = window.numel()
    merged = size // num_quantized_bins
    group = torch.clamp(torch.arange(size, device=window.device) // merged, max=num_quantized_bins - 1)
    sums = torch.zeros(num_quantized_bins, dtype=window.dtype, device=window.device).index_add(0, group, window)
    counts = torch.zeros_like(sums).index_add(0, group, (window != 0).to(window.dtype))
    spread = torch.where(counts > 0, sums / counts.clamp(min=1),
                         torch.zeros_like(sums))[group]
    return torch.where(reference != 0, spread, torch.zeros_like(spread))


@register('_contrib_calibrate_entropy', inputs=('hist', 'hist_edges'), attrs=[('num_quantized_bins', INT, 255)],
          num_outputs=2, differentiable=False, output_names=('threshold', 'divergence'),
          dtypes=DTypeRule(free=('hist', 'hist_edges'), output='float32',
                                                               later_outputs=lambda dtypes, attrs: torch.float32))
def calibrate_entropy(hist, hist_edges, num_quantized_bins):
    """The clipping threshold of a symmetric histogram that loses the least information
    (KL divergence) when its central window is quantized to ``num_quantized_bins`` bins, as
    MXNet's entropy calibration of int8 models chooses it.

    Parameters
    ----------
    hist : Tensor, shape (B,), B odd: counts of bins symmetric about 0
    hist_edges : Tensor, shape (B + 1,)

    Returns
    -------
    (threshold (1,), its divergence (1,)), float32
    """
    op = 'calibrate_entropy'
    bins = hist.numel()
    check(hist.dim() == 1 and bins % 2 == 1 and hist_edges.numel() == bins + 1, op,
          'hist must hold an odd number of bins and hist_edges one more, got %s and %s', hist.shape,
          hist_edges.shape)
    check(0 < num_quantized_bins <= bins, op, 'num_quantized_bins=%d must be in [1, %d]', num_quantized_bins, bins)
    # on the CPU whatever the arrays' device, as MXNet's kernel (CPU only): the float32
    # divergences of neighbouring windows nearly tie, and another device's summation order
    # would pick another threshold (and a GPU would sync at each of the hundreds of windows)
    counts, edges = hist.detach().cpu().double().floor(), hist_edges.detach().cpu().double()
    center, half = bins // 2, num_quantized_bins // 2
    best = (float('inf'), float(edges[center + half + 1]))
    for i in range(half, center + 1):
        start, stop = center - i, center + i + 1
        # As MXNet's kernel: the window's first bin joins the left outliers (and leaves the
        # window), its last bin the right ones; the divergence is computed in float32.
        window = counts[start:stop].clone()
        window[0] = 0
        reference = window.clone()
        reference[0] = counts[:start + 1].sum()
        reference[-1] = counts[stop - 1:].sum()
        quantized = _quantized_reference(window, reference, num_quantized_bins)
        p, q = _smoothed(reference.float()), _smoothed(quantized.float())
        divergence = float('inf') if p is None or q is None else _kl_divergence(p, q)
        if divergence < best[0]:
            best = (divergence, float(edges[stop]))
    return _range_arrays(best[1], best[0], hist.device)


@register('_contrib_quantized_elemwise_mul', inputs=('lhs', 'rhs', 'lhs_min', 'lhs_max', 'rhs_min', 'rhs_max'),
          attrs=_CALIB + [('enable_float_output', BOOL, False)],
          num_outputs=lambda a: 1 if a['enable_float_output'] else 3, differentiable=False,
          output_names=lambda a: _RANGED_OUTPUTS[:1] if a['enable_float_output'] else _RANGED_OUTPUTS,
          dtypes=DTypeRule(free=('lhs', 'rhs'), fixed=dict.fromkeys(('lhs_min', 'lhs_max', 'rhs_min', 'rhs_max'),
                                                                     _RANGE),
                           output=lambda dtypes, attrs: torch.float32 if attrs['enable_float_output'] else (
                               torch.int32 if attrs['max_calib_range'] is None else torch.int8),
                           later_outputs=lambda dtypes, attrs: torch.float32))
def quantized_elemwise_mul(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, min_calib_range, max_calib_range,
                           enable_float_output):
    """Element-wise product of two quantized arrays: the int32 product of the integers (range
    as ``quantized_fully_connected``'s), its float32 value with ``enable_float_output``, or
    int8 over a calibrated range (truncated and, as MXNet's kernel does, wrapped rather than
    saturated)."""
    op = 'quantized_elemwise_mul'
    _check_integers(op, lhs)
    _check_integers(op, rhs)
    check(lhs.shape == rhs.shape, op, 'lhs and rhs must have one shape, got %s and %s', lhs.shape, rhs.shape)
    lhs_range, rhs_range = _given_range(op, lhs_min, lhs_max), _given_range(op, rhs_min, rhs_max)
    product = lhs.to(torch.int32) * rhs.to(torch.int32)
    step = _max_abs(*lhs_range) / _STEPS[lhs.dtype] * (_max_abs(*rhs_range) / _STEPS[rhs.dtype])
    if enable_float_output:
        return _scaled(product, step)
    if min_calib_range is not None and max_calib_range is not None:
        scale = _STEPS[torch.int8] / _max_abs(min_calib_range, max_calib_range)
        wrapped = torch.trunc(_scaled(_scaled(product, step), scale)).to(torch.int64).to(torch.int8)
        span = _max_abs(min_calib_range, max_calib_range)
        return (wrapped,) + _range_arrays(-span, span, lhs.device)
    f32 = np.float32
    span = float(f32(_max_abs(*lhs_range)) / f32(127) * (f32(_max_abs(*rhs_range)) / f32(127)) * f32(_INT32_MAX))
    return (product,) + _range_arrays(-span, span, lhs.device)


@register('_contrib_quantized_batch_norm',
          inputs=('data', 'gamma', 'beta', 'moving_mean', 'moving_var', 'min_data', 'max_data'),
          attrs=_layer_attrs('BatchNorm'), num_outputs=3, differentiable=False, output_names=_RANGED_OUTPUTS,
          aux=('moving_mean', 'moving_var'),
          dtypes=DTypeRule(free=('data',), fixed=dict.fromkeys(('gamma', 'beta', 'moving_mean', 'moving_var',
                                                                'min_data', 'max_data'), _RANGE),
                           output='int8', later_outputs=lambda dtypes, attrs: torch.float32))
def quantized_batch_norm(data, gamma, beta, moving_mean, moving_var, min_data, max_data, eps, momentum, fix_gamma,
                         use_global_stats, output_mean_var, axis, cudnn_off, min_calib_range, max_calib_range):
    """Inference ``BatchNorm`` (moving statistics) of int8 data into int8 over the calibrated
    range (else over the range of its results). As MXNet's CPU kernel, it applies ``gamma``
    even with ``fix_gamma``."""
    op = 'quantized_batch_norm'
    _check_integers(op, data, (torch.int8,))
    axis = axis % data.dim()
    channels = data.shape[axis]
    check(all(p.numel() == channels for p in (gamma, beta, moving_mean, moving_var)), op,
          'gamma, beta, moving_mean and moving_var must hold one value per channel (%d)', channels)
    shape = [1] * data.dim()
    shape[axis] = channels
    real = _real_values(data, *_given_range(op, min_data, max_data))
    scale = gamma.float() / torch.sqrt(moving_var.float() + eps)
    out = (real - moving_mean.float().reshape(shape)) * scale.reshape(shape) + beta.float().reshape(shape)
    low, high = _calibrated(op, *_data_range(out), min_calib_range, max_calib_range)
    quantized = _to_integers(out, low, high, torch.int8)[0]
    return (quantized,) + _range_arrays(low, high, data.device)


# ------------------------------------------------- recurrent
def _quantized_rnn_outputs(attrs):
    return 3 if attrs['state_outputs'] else 1


def _infer_quantized_rnn(shapes, attrs):
    inferred = get('RNN').infer_args(shapes, dict(attrs, use_sequence_length=False))
    inferred.update(data_scale=(1,), data_shift=(1,))
    return inferred


@register('_contrib_quantized_rnn', inputs=('data', 'parameters', 'state', 'state_cell', 'data_scale', 'data_shift'),
          attrs=[('state_size', INT), ('num_layers', INT), ('bidirectional', BOOL, False),
                 ('mode', choice('gru', 'lstm', 'rnn_relu', 'rnn_tanh')), ('p', FLOAT, 0.0),
                 ('state_outputs', BOOL, False), ('projection_size', OPT_INT, None),
                 ('lstm_state_clip_min', OPT_FLOAT, None), ('lstm_state_clip_max', OPT_FLOAT, None),
                 ('lstm_state_clip_nan', BOOL, False), ('use_sequence_length', BOOL, False)],
          num_outputs=_quantized_rnn_outputs,
          output_names=lambda a: ('output', 'state_output', 'statecell_output')[:_quantized_rnn_outputs(a)],
          infer_args=_infer_quantized_rnn,
          dtypes=DTypeRule(fixed={'data': 'uint8', 'data_scale': 'float32', 'data_shift': 'float32'},
                           output='float32'),
          differentiable=False)
def quantized_rnn(data, parameters, state, state_cell, data_scale, data_shift, state_size, num_layers,
                  bidirectional, mode, p, state_outputs, projection_size, lstm_state_clip_min, lstm_state_clip_max,
                  lstm_state_clip_nan, use_sequence_length):
    """An LSTM (``mode='lstm'`` only, as MXNet's) over uint8 data quantized asymmetrically
    (``quantize_asym``: ``q = x * data_scale + data_shift``): the data is read back as
    ``(q - data_shift) / data_scale`` and the float32 LSTM of ``RNN`` runs on it; outputs and
    states are float32. MXNet's oneDNN kernel also rounds the weights to int8, so its results
    differ from these by that rounding. Inference only.
    """
    op = 'quantized_rnn'
    check(mode == 'lstm', op, "only supports LSTM (mode='lstm'), got mode=%r", mode)
    check(projection_size is None and not use_sequence_length, op,
          'supports neither projection_size nor use_sequence_length (vanilla LSTM only)')
    check(data.dtype is torch.uint8, op, 'data must be uint8, got %s', data.dtype)
    scale, shift = data_scale.float().reshape(-1)[0], data_shift.float().reshape(-1)[0]
    real = (data.float() - shift) / scale
    return get('RNN').impl(real, parameters.float(), state.float(), state_cell.float(), None, state_size=state_size,
                           num_layers=num_layers, bidirectional=bidirectional, mode=mode, p=0.0,
                           state_outputs=state_outputs, projection_size=None, lstm_state_clip_min=lstm_state_clip_min,
                           lstm_state_clip_max=lstm_state_clip_max, lstm_state_clip_nan=lstm_state_clip_nan,
                           use_sequence_length=False)
