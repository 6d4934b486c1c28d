"""Small contrib and utility operators: finiteness checks and sums of squares for mixed
precision training, straight-through estimators, adaptive average pooling, im2col/col2im,
the legacy ``Crop``, the interleaved attention products of GluonNLP's transformers and
``SVMOutput``.

MXNet quirks kept: ``all_finite`` answers in float32, ``allclose`` in a 0-d uint8;
``round_ste``/``sign_ste`` pass the head gradient straight through; ``gradientmultiplier``
is the identity forward and scales the gradient; ``SVMOutput`` ignores the head gradient.
"""
import math

import torch
import torch.nn.functional as F

from .nn_output import _output_layer
from .dtype_rules import DTypeRule
from .registry import BOOL, CTX, FLOAT, INT, OPT_FLOAT, OPT_INT, OPT_SHAPE, SHAPE, check, register, variadic_name
from .shape import normalize_axis

# --------------------------------------------------- mixed precision helpers


def _finite_flag(op, arrays, init_output):
    """1.0 (float32, shape (1,)) when every element of ``arrays`` is finite, else 0.0."""
    # MXNet ANDs into the existing output when init_output is False; an implementation here
    # never sees that output, so it cannot give MXNet's result.
    check(init_output, op, 'init_output=False (accumulating into out) is not supported')
    for a in arrays:
        check(a.dtype.is_floating_point, op, 'only floating point types are supported, not %s', a.dtype)
    finite = all(bool(torch.isfinite(a).all()) for a in arrays)
    return torch.full((1,), float(finite), device=arrays[0].device)


@register('all_finite', inputs=('data',), attrs=[('init_output', BOOL, True)],
          dtypes=DTypeRule(output='float32'))
def all_finite(data, init_output):
    """Whether every element of ``data`` is finite: a float32 array of shape (1,) holding 1 or 0."""
    return _finite_flag('all_finite', (data,), init_output)


def _all_inputs(attrs, count='num_arrays'):
    """The names of a variadic operator's inputs."""
    return tuple(variadic_name(i) for i in range(attrs[count]))


@register('multi_all_finite', variadic='num_arrays',
          attrs=[('num_arrays', INT, 1), ('init_output', BOOL, True)],
          dtypes=DTypeRule(free=_all_inputs, output='float32'))
def multi_all_finite(*arrays, num_arrays, init_output):
    """:func:`all_finite` over several arrays at once."""
    return _finite_flag('multi_all_finite', arrays, init_output)


@register('multi_sum_sq', variadic='num_arrays', attrs=[('num_arrays', INT)],
          dtypes=DTypeRule(output='float32'))
def multi_sum_sq(*arrays, num_arrays):
    """The sum of squares of each array: float32, shape (num_arrays,)."""
    return torch.stack([a.float().square().sum() for a in arrays])


@register('reset_arrays', variadic='num_arrays', attrs=[('num_arrays', INT)], num_outputs=0,
          aux=_all_inputs, dtypes=DTypeRule(free=_all_inputs, output='float32'))
def reset_arrays(*arrays, num_arrays):
    """Set every (floating point) input to zero, in place; no outputs."""
    for a in arrays:
        check(a.dtype.is_floating_point, 'reset_arrays', 'only floating point types are supported, not %s',
              a.dtype)
        a.zero_()
    return ()


_AMP_FLOATS = (torch.float16, torch.bfloat16, torch.float32)    # float64 and integer inputs are left alone


def _amp_target(dtypes, cast_narrow):
    """The dtype ``amp_multicast`` casts its float16/bfloat16/float32 inputs to (None: there are none)."""
    amp = [d for d in dtypes if d in _AMP_FLOATS]
    if not amp:
        return None
    return (min if cast_narrow else max)(amp, key=lambda d: torch.finfo(d).bits)


def _amp_output_dtype(dtypes, attrs):
    """``amp_multicast``'s first output's dtype (what ``infer_type`` tracks), None while an
    input's is unknown."""
    first = dtypes[0]
    if first not in _AMP_FLOATS:
        return first
    return None if None in dtypes else _amp_target(dtypes, attrs['cast_narrow'])


@register('amp_multicast', shares_input=True, variadic='num_outputs',
          attrs=[('num_outputs', INT), ('cast_narrow', BOOL, False)],
          num_outputs=lambda a: a['num_outputs'],
          dtypes=DTypeRule(free=lambda a: _all_inputs(a, 'num_outputs'), output=_amp_output_dtype))
def amp_multicast(*arrays, num_outputs, cast_narrow):
    """Cast the float16/bfloat16/float32 inputs to the widest of their dtypes (narrowest with
    ``cast_narrow``); other inputs come back unchanged. One output per input."""
    target = _amp_target([a.dtype for a in arrays], cast_narrow)
    if target is None:
        return tuple(a.clone() for a in arrays)
    return tuple(a.to(target) if a.dtype in _AMP_FLOATS else a.clone() for a in arrays)


# ----------------------------------------------------------- element-wise
@register('_contrib_arange_like', inputs=('data',),
          attrs=[('start', FLOAT, 0.0), ('step', FLOAT, 1.0), ('repeat', INT, 1), ('ctx', CTX, None),
                 ('axis', OPT_INT, None)])
def arange_like(data, start, step, repeat, ctx, axis):
    """``start, start + step, ...`` (each value ``repeat`` times) in data's dtype, shaped like
    data, or along ``data.shape[axis]`` only (1-D) when ``axis`` is given."""
    if axis is None:
        shape = tuple(data.shape)
    else:
        shape = (data.shape[normalize_axis(axis, data.dim(), '_contrib_arange_like')],)
    count = math.prod(shape)
    values = start + step * torch.div(torch.arange(count, device=data.device), repeat, rounding_mode='floor')
    return values.to(data.dtype).reshape(shape)


@register('_contrib_div_sqrt_dim', inputs=('data',), same_shape=True)
def div_sqrt_dim(data):
    """``data / sqrt(data.shape[-1])`` (integer data: truncated), as attention scales its scores."""
    scaled = data / math.sqrt(data.shape[-1])
    return scaled if data.dtype.is_floating_point else scaled.to(data.dtype)


def _straight_through(data, forward):
    """``forward(data)`` whose gradient is the head gradient itself."""
    return data + (forward(data) - data).detach()


@register('_contrib_round_ste', inputs=('data',), same_shape=True)
def round_ste(data):
    """Round halves away from zero; the gradient passes straight through."""
    if not data.dtype.is_floating_point:
        return data.clone()
    return _straight_through(data, lambda x: torch.sign(x) * torch.floor(torch.abs(x) + 0.5))


@register('_contrib_sign_ste', inputs=('data',), same_shape=True)
def sign_ste(data):
    """Sign (-1, 0 or 1); the gradient passes straight through."""
    return _straight_through(data, torch.sign)


@register('_contrib_gradientmultiplier', inputs=('data',),
          attrs=[('scalar', FLOAT, 1.0), ('is_int', BOOL, True)], same_shape=True)
def gradient_multiplier(data, scalar, is_int):
    """``data`` unchanged; the gradient is multiplied by ``scalar``."""
    frozen = data.detach()
    return frozen + (data - frozen) * scalar


@register('_contrib_backward_gradientmultiplier', inputs=('data',),
          attrs=[('scalar', FLOAT, 1.0), ('is_int', BOOL, True)], same_shape=True)
def backward_gradient_multiplier(data, scalar, is_int):
    """The gradient pass of ``gradientmultiplier``: the head gradient ``data`` times ``scalar``."""
    return data * scalar


@register('_contrib_backward_quadratic', inputs=('ograd', 'data'),
          attrs=[('a', FLOAT, 0.0), ('b', FLOAT, 0.0), ('c', FLOAT, 0.0)], same_shape=True)
def backward_quadratic(ograd, data, a, b, c):
    """The gradient pass of ``quadratic``: the head gradient ``ograd`` times ``2 a x + b``."""
    return ograd * (2 * a * data + b)


@register('_contrib_quadratic', inputs=('data',),
          attrs=[('a', FLOAT, 0.0), ('b', FLOAT, 0.0), ('c', FLOAT, 0.0)], same_shape=True)
def quadratic(data, a, b, c):
    """``a x^2 + b x + c`` in data's dtype (integer data: computed in float, truncated)."""
    x = data if data.dtype.is_floating_point else data.double()
    return (a * x * x + b * x + c).to(data.dtype)


@register('_contrib_allclose', inputs=('a', 'b'), dtypes=DTypeRule(free=('b',), output='uint8'),
          attrs=[('rtol', FLOAT, 1e-5), ('atol', FLOAT, 1e-8), ('equal_nan', BOOL, True)],
          differentiable=False)
def allclose(a, b, rtol, atol, equal_nan):
    """Whether ``|a - b| <= atol + rtol |b|`` everywhere: a 0-d uint8, 1 or 0 (no gradient)."""
    check(a.shape == b.shape, '_contrib_allclose', 'shapes of a %s and b %s must be equal',
          a.shape, b.shape)
    close = torch.isclose(a.detach(), b.detach(), rtol=rtol, atol=atol, equal_nan=equal_nan)
    return close.all().to(torch.uint8)


@register('_contrib_index_array', inputs=('data',), attrs=[('axes', OPT_SHAPE, None)],
          dtypes=DTypeRule(output='int64'))
def index_array(data, axes):
    """int64 array of shape ``data.shape + (len(axes),)``: each element's index along ``axes``
    (all axes when None)."""
    ndim = data.dim()
    axes = range(ndim) if axes is None else [normalize_axis(a, ndim, '_contrib_index_array') for a in axes]
    axes = list(axes)
    if not axes:        # a 0-d array (or ``axes=()``): no index to give, one empty last axis
        return torch.zeros(tuple(data.shape) + (0,), dtype=torch.int64, device=data.device)
    grids = torch.meshgrid(*[torch.arange(n, device=data.device) for n in data.shape], indexing='ij')
    return torch.stack([grids[a] for a in axes], dim=-1)


# ------------------------------------------------------------------ spatial
@register('_contrib_AdaptiveAvgPooling2D', inputs=('data',), attrs=[('output_size', SHAPE, ())])
def adaptive_avg_pooling_2d(data, output_size):
    """Average pooling of (N, C, H, W) data to ``output_size``: () means (1, 1), one value a square.

    Output window ``i`` covers input rows ``floor(i H / h)`` to ``ceil((i + 1) H / h)``.
    """
    check(data.dim() == 4, '_contrib_AdaptiveAvgPooling2D', 'data must be (N, C, H, W), got %s',
          data.shape)
    size = output_size or (1,)
    return F.adaptive_avg_pool2d(data, size * 2 if len(size) == 1 else size)


def _window_geometry(op, data_dims, kernel, stride, dilate, pad):
    """Per-dim stride, dilate and pad (MXNet's empty tuples mean 1, 1, 0) for 2-D windows."""
    check(len(kernel) == 2 and data_dims == 4, op, 'only 2-D kernels on (N, C, H, W) data are supported, '
          'got kernel %s', kernel)
    return (stride or (1, 1)), (dilate or (1, 1)), (pad or (0, 0))


@register('im2col', inputs=('data',),
          attrs=[('kernel', SHAPE), ('stride', SHAPE, ()), ('dilate', SHAPE, ()), ('pad', SHAPE, ())])
def im2col(data, kernel, stride, dilate, pad):
    """Sliding windows of (N, C, H, W) data as columns: (N, C * kh * kw, number of windows)."""
    stride, dilate, pad = _window_geometry('im2col', data.dim(), kernel, stride, dilate, pad)
    return F.unfold(data, kernel, dilation=dilate, padding=pad, stride=stride)


@register('col2im', inputs=('data',),
          attrs=[('output_size', SHAPE), ('kernel', SHAPE), ('stride', SHAPE, ()), ('dilate', SHAPE, ()),
                 ('pad', SHAPE, ())])
def col2im(data, output_size, kernel, stride, dilate, pad):
    """The adjoint of :func:`im2col`: columns (N, C * kh * kw, L) summed back into
    (N, C, *output_size)."""
    stride, dilate, pad = _window_geometry('col2im', 4, kernel, stride, dilate, pad)
    windows = math.prod((n + 2 * p - d * (k - 1) - 1) // s + 1
                        for n, k, s, d, p in zip(output_size, kernel, stride, dilate, pad))
    check(data.dim() == 3 and data.shape[1] % math.prod(kernel) == 0 and data.shape[2] == windows,
          'col2im', 'data of shape %s does not match output_size %s and kernel %s (%d windows)',
          data.shape, output_size, kernel, windows)
    return F.fold(data, output_size, kernel, dilation=dilate, padding=pad, stride=stride)


@register('Crop', variadic='num_args',
          attrs=[('num_args', INT), ('offset', SHAPE, (0, 0)), ('h_w', SHAPE, (0, 0)),
                 ('center_crop', BOOL, False)])
def crop(*arrays, num_args, offset, h_w, center_crop):
    """Crop (N, C, H, W) data to ``h_w``, or to the height and width of a second input.

    The window starts at ``offset`` (rows, columns), or in the middle with ``center_crop``.
    """
    data = arrays[0]
    height, width = arrays[1].shape[2:4] if num_args > 1 else h_w
    check(height >= 1 and width >= 1, 'Crop', 'the crop size (%d, %d) must be positive', height, width)
    spare_h, spare_w = data.shape[2] - height, data.shape[3] - width
    if center_crop:
        top, left = spare_h // 2, spare_w // 2
    else:
        top, left = offset
    check(0 <= top <= spare_h and 0 <= left <= spare_w, 'Crop',
          'a (%d, %d) window at (%d, %d) does not fit data of shape %s', height, width, top, left,
          data.shape)
    return data[:, :, top:top + height, left:left + width].clone()


# ------------------------------------------------- interleaved attention
# GluonNLP's layout: (length, batch, heads * parts * dim) with the parts (queries, keys,
# values) of each head next to each other. Scores and attention weights are
# (batch * heads, query length, key length).
def _heads(packed, heads, parts):
    """Split (L, B, heads * parts * D) into ``parts`` tensors of shape (B * heads, L, D)."""
    length, batch, width = packed.shape
    check(width % (heads * parts) == 0, 'interleaved_matmul', 'last dim %d of %s is not a multiple of '
          'heads * %d = %d', width, packed.shape, parts, heads * parts)
    split = packed.reshape(length, batch, heads, parts, -1)
    return [split[:, :, :, p].permute(1, 2, 0, 3).reshape(batch * heads, length, -1) for p in range(parts)]


def _scores(queries, keys):
    return torch.bmm(queries / math.sqrt(queries.shape[-1]), keys.transpose(1, 2))


def _merge_heads(values, attention, heads):
    """``attention @ values`` back in (L, B, heads * D)."""
    out = torch.bmm(attention, values)
    batch_heads, length, dim = out.shape
    return out.reshape(batch_heads // heads, heads, length, dim).permute(2, 0, 1, 3).reshape(
        length, batch_heads // heads, heads * dim)


@register('_contrib_interleaved_matmul_selfatt_qk', inputs=('queries_keys_values',), attrs=[('heads', INT)])
def interleaved_matmul_selfatt_qk(queries_keys_values, heads):
    """Scaled scores ``q k^T / sqrt(D)`` from packed (L, B, heads * 3 * D): (B * heads, L, L)."""
    queries, keys = _heads(queries_keys_values, heads, 3)[:2]
    return _scores(queries, keys)


@register('_contrib_interleaved_matmul_selfatt_valatt', inputs=('queries_keys_values', 'attention'),
          attrs=[('heads', INT)])
def interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads):
    """Attention (B * heads, L, L) applied to the packed values: (L, B, heads * D)."""
    return _merge_heads(_heads(queries_keys_values, heads, 3)[2], attention, heads)


@register('_contrib_interleaved_matmul_encdec_qk', inputs=('queries', 'keys_values'), attrs=[('heads', INT)])
def interleaved_matmul_encdec_qk(queries, keys_values, heads):
    """Scores of queries (Lq, B, heads * D) on packed keys (Lk, B, heads * 2 * D): (B * heads, Lq, Lk)."""
    return _scores(_heads(queries, heads, 1)[0], _heads(keys_values, heads, 2)[0])


@register('_contrib_interleaved_matmul_encdec_valatt', inputs=('keys_values', 'attention'),
          attrs=[('heads', INT)])
def interleaved_matmul_encdec_valatt(keys_values, attention, heads):
    """Attention (B * heads, Lq, Lk) applied to the packed values: (Lq, B, heads * D)."""
    return _merge_heads(_heads(keys_values, heads, 2)[1], attention, heads)


# ---------------------------------------------------------------- SVMOutput
def _svm_gradient(scores, label, margin, coefficient, use_linear):
    """MXNet's one-vs-all hinge gradient: the true class pulled above ``margin``, the others
    pushed below ``-margin``; L1 (``use_linear``) or squared hinge."""
    sign = torch.ones_like(scores)
    sign[torch.arange(scores.shape[0], device=scores.device), label.long()] = -1
    slack = margin + sign * scores        # positive where the hinge is active
    if use_linear:
        return coefficient * sign * (slack > 0).to(scores.dtype)
    return 2 * coefficient * sign * slack.clamp(min=0)


@register('SVMOutput', inputs=('data', 'label'),
          attrs=[('margin', FLOAT, 1.0), ('regularization_coefficient', FLOAT, 1.0), ('use_linear', BOOL, False)],
          infer_args=lambda shapes, a: {'label': shapes['data'][:1]} if shapes.get('data') else {})
def svm_output(data, label, margin, regularization_coefficient, use_linear):
    """Scores (N, C) unchanged; backward writes the hinge-loss gradient for class labels (N,),
    ignoring the head gradient."""
    check(data.dim() == 2 and label.shape == data.shape[:1], 'SVMOutput',
          'expected data (N, C) and label (N,), got %s and %s', data.shape, label.shape)
    return _output_layer(data, torch.clone, lambda out: _svm_gradient(
        out, label, margin, regularization_coefficient, use_linear))


# ------------------------------------------------------- KL sparseness penalty
class _KLSparseReg(torch.autograd.Function):
    """Identity forward; backward first moves the running mean activation ``moving_avg`` (in
    place) towards this batch's mean, then adds the gradient of the KL sparseness penalty."""

    @staticmethod
    def forward(ctx, data, moving_avg, sparseness_target, penalty, momentum):
        ctx.save_for_backward(data)
        ctx.moving_avg, ctx.params = moving_avg, (sparseness_target, penalty, momentum)
        return data.view_as(data)

    @staticmethod
    def backward(ctx, grad):
        data, = ctx.saved_tensors
        target, penalty, momentum = ctx.params
        avg = ctx.moving_avg
        with torch.no_grad():
            avg.mul_(momentum).add_(data.reshape(data.shape[0], -1).mean(0).reshape(avg.shape), alpha=1 - momentum)
            kl = penalty * (-target / avg + (1 - target) / (1 - avg))
        return grad + kl.reshape((1,) + tuple(avg.shape)), None, None, None, None


@register('IdentityAttachKLSparseReg', inputs=('data', 'moving_avg'), aux=('moving_avg',), shares_input=True,
          attrs=[('sparseness_target', FLOAT, 0.1), ('penalty', FLOAT, 0.001), ('momentum', FLOAT, 0.9)],
          infer_args=lambda shapes, a: {'moving_avg': shapes['data'][1:]} if shapes.get('data') else {})
def identity_attach_kl_sparse_reg(data, moving_avg, sparseness_target, penalty, momentum):
    """``data`` unchanged (sigmoid activations, (N, ...)); its gradient gains the KL sparseness
    penalty ``penalty * (-t / avg + (1 - t) / (1 - avg))`` towards the target mean activation
    ``t = sparseness_target``, with ``avg`` the running mean per feature (auxiliary state
    ``moving_avg``, updated by the backward pass: ``momentum * avg + (1 - momentum) * mean``)."""
    check(data.dim() >= 1 and tuple(moving_avg.shape) == tuple(data.shape[1:]), 'IdentityAttachKLSparseReg',
          'moving_avg must have the shape of one sample %s, got %s', data.shape[1:], moving_avg.shape)
    if not torch.is_grad_enabled() or not data.requires_grad:
        return data.view_as(data)
    return _KLSparseReg.apply(data, moving_avg, sparseness_target, penalty, momentum)


# oneDNN's fused forms of the two self-attention products, which MXNet's MKLDNN graph pass puts
# in place of the operators above (so exported graphs hold them): the same computation.
_SG_ATTRS = [('heads', INT), ('quantized', BOOL, False), ('enable_float_output', BOOL, False),
             ('min_calib_range', OPT_FLOAT, None), ('max_calib_range', OPT_FLOAT, None)]


def _float_only(op, quantized):
    check(not quantized, op, 'quantized=True (int8 inputs with their ranges) is not supported: run the float '
          'graph, or quantize with mx.contrib.quantization')


@register('_sg_mkldnn_selfatt_qk', inputs=('queries_keys_values',), attrs=_SG_ATTRS)
def sg_mkldnn_selfatt_qk(queries_keys_values, heads, quantized, enable_float_output, min_calib_range,
                         max_calib_range, subgraphs=()):
    """oneDNN's fused ``interleaved_matmul_selfatt_qk``: scaled scores ``q k^T / sqrt(D)`` from
    packed (L, B, heads * 3 * D), shape (B * heads, L, L); float graphs only. (A file's node
    carries the operator it replaced as a subgraph: computed here directly.)"""
    _float_only('_sg_mkldnn_selfatt_qk', quantized)
    return interleaved_matmul_selfatt_qk(queries_keys_values, heads)


@register('_sg_mkldnn_selfatt_valatt', inputs=('queries_keys_values', 'attention'), attrs=_SG_ATTRS)
def sg_mkldnn_selfatt_valatt(queries_keys_values, attention, heads, quantized, enable_float_output,
                             min_calib_range, max_calib_range, subgraphs=()):
    """oneDNN's fused ``interleaved_matmul_selfatt_valatt``: attention (B * heads, L, L) applied
    to the packed values, shape (L, B, heads * D); float graphs only."""
    _float_only('_sg_mkldnn_selfatt_valatt', quantized)
    return interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads)
