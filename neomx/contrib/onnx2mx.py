"""ONNX operators as MXNet Symbols, for :mod:`neomx.contrib.onnx`'s import: one converter per
ONNX operator (at least those MXNet 1.9.1 imports), ``convert(ins, attrs, name, const)`` with
``ins`` the input Symbols (None for an omitted optional input) and ``const`` the graph's
constant arrays (initializers and ``Constant`` nodes: shapes, axes, bounds read at import).
Attributes that later opsets moved to inputs (``axes``, ``pads``, ``split``...) are read
from either place.
"""
import numpy as np

from ..base import MXNetError
from .. import symbol as sym

__all__ = ['CONVERTERS', 'Unsupported']


class Unsupported(MXNetError):
    """An ONNX attribute value or input MXNet's operators cannot express."""


def _window(attrs, op, x, pad_value=0.0):
    """The kernel/stride/pad keywords of a convolution or pooling, and its input: padded first
    by a ``Pad`` node where ONNX's pads are asymmetric (MXNet pads both sides alike)."""
    if attrs.get('auto_pad', 'NOTSET') not in ('NOTSET', 'VALID', b'NOTSET', b'VALID'):
        raise Unsupported("%s: auto_pad=%s has no MXNet equivalent; give explicit pads" % (op, attrs['auto_pad']))
    kernel = tuple(attrs['kernel_shape'])
    n = len(kernel)
    pads = list(attrs.get('pads', [0] * 2 * n))
    kw = dict(kernel=kernel, stride=tuple(attrs.get('strides', (1,) * n)))
    if pads[:n] == pads[n:]:
        return dict(kw, pad=tuple(pads[:n])), n, x
    if n not in (2, 3) or pad_value is None:
        raise Unsupported('%s: asymmetric pads %s have no MXNet equivalent here' % (op, pads))
    width = (0, 0, 0, 0) + tuple(w for pair in zip(pads[:n], pads[n:]) for w in pair)
    return dict(kw, pad=(0,) * n), n, sym.Pad(x, mode='constant', pad_width=width, constant_value=pad_value)


def _conv(ins, a, name, const):
    kw, n, x = _window(a, 'Conv', ins[0])
    return sym.Convolution(x, *[i for i in ins[1:] if i is not None], dilate=tuple(a.get('dilations', (1,) * n)),
                           num_group=a.get('group', 1), num_filter=const.shape_of(ins[1])[0],
                           no_bias=len(ins) < 3 or ins[2] is None, name=name, **kw)


def _conv_transpose(ins, a, name, const):
    kw, n, x = _window(a, 'ConvTranspose', ins[0], pad_value=None)
    group = a.get('group', 1)
    extra = {'target_shape': tuple(a['output_shape'][-n:])} if 'output_shape' in a else {}
    return sym.Deconvolution(x, *[i for i in ins[1:] if i is not None], dilate=tuple(a.get('dilations', (1,) * n)),
                             adj=tuple(a.get('output_padding', (0,) * n)), num_group=group,
                             num_filter=const.shape_of(ins[1])[1] * group, no_bias=len(ins) < 3 or ins[2] is None,
                             name=name, **kw, **extra)


def _gemm(ins, a, name, const):
    alpha, beta = a.get('alpha', 1.0), a.get('beta', 1.0)
    trans_a, trans_b = bool(a.get('transA', 0)), bool(a.get('transB', 0))
    bias = ins[2] if len(ins) > 2 else None
    if trans_b and not trans_a and alpha == 1.0 and beta == 1.0 and (bias is None or const.ndim_of(bias) == 1):
        return sym.FullyConnected(ins[0], ins[1], *([bias] if bias is not None else []),
                                  num_hidden=const.shape_of(ins[1])[0], no_bias=bias is None, name=name)
    out = sym.dot(ins[0], ins[1], transpose_a=trans_a, transpose_b=trans_b)
    if alpha != 1.0:
        out = out * alpha
    if bias is not None:
        out = sym.broadcast_add(out, bias * beta if beta != 1.0 else bias)
    return sym.identity(out, name=name)


def _fc(ins, a, name, const):
    return sym.FullyConnected(*ins, num_hidden=const.shape_of(ins[1])[0], no_bias=len(ins) < 3, name=name)


def _pool(pool_type):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        # max pools pad with -inf; an average's divisor would count the padding
        pad_value = {'max': float('-inf'), 'lp': 0.0}.get(pool_type)
        kw, _, x = _window(a, 'Pool', ins[0], pad_value=pad_value)
        if any(d != 1 for d in a.get('dilations', ())):
            raise Unsupported('Pool: dilations %s have no MXNet equivalent' % (a['dilations'],))
        extra = {'p_value': a.get('p', 2)} if pool_type == 'lp' else {}
        if pool_type == 'avg':
            extra['count_include_pad'] = bool(a.get('count_include_pad', 0))
        return sym.Pooling(x, pool_type=pool_type, pooling_convention='full' if a.get('ceil_mode', 0)
                           else 'valid', name=name, **kw, **extra)
    return convert


def _global_pool(pool_type):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        extra = {'p_value': a.get('p', 2)} if pool_type == 'lp' else {}
        return sym.Pooling(ins[0], kernel=(1, 1), global_pool=True, pool_type=pool_type, name=name, **extra)
    return convert


def _simple(fn, **fixed):
    return lambda ins, a, name, const: fn(*[i for i in ins if i is not None], name=name, **fixed)


def _batch_norm(ins, a, name, const):  # pylint: disable=unused-argument
    return sym.BatchNorm(*ins[:5], eps=a.get('epsilon', 1e-5), momentum=a.get('momentum', 0.9), fix_gamma=False,
                         name=name)


def _ints(const, symbol_, attrs, key, op):
    """An integer list given as attribute ``key`` (older opsets) or as a constant input."""
    if symbol_ is not None:
        return [int(v) for v in np.atleast_1d(const.value_of(symbol_, op))]
    if key in attrs:
        return [int(v) for v in attrs[key]]
    return None


def _reshape(ins, a, name, const):
    shape = _ints(const, ins[1] if len(ins) > 1 else None, a, 'shape', 'Reshape')
    if 0 in shape and a.get('allowzero', 0):
        raise Unsupported('Reshape: allowzero=1 with a 0 in the shape has no MXNet equivalent')
    return sym.reshape(ins[0], shape=tuple(shape), name=name)


def _clip(ins, a, name, const):
    lo = float(const.value_of(ins[1], 'Clip')) if len(ins) > 1 and ins[1] is not None else a.get('min', -3.4e38)
    hi = float(const.value_of(ins[2], 'Clip')) if len(ins) > 2 and ins[2] is not None else a.get('max', 3.4e38)
    return sym.clip(ins[0], a_min=lo, a_max=hi, name=name)


def _flatten(ins, a, name, const):  # pylint: disable=unused-argument
    axis = a.get('axis', 1)
    if axis == 1:
        return sym.Flatten(ins[0], name=name)
    if axis == 0:
        return sym.reshape(ins[0], shape=(1, -1), name=name)
    # axes before `axis` into one, the rest into another: reshape's -3 merges two axes at a time
    raise Unsupported('Flatten: axis=%s (MXNet flattens after axis 0 or 1)' % axis)


def _reduce(op, post=None, pre=None):
    def convert(ins, a, name, const):
        axes = _ints(const, ins[1] if len(ins) > 1 else None, a, 'axes', 'Reduce')
        keepdims = bool(a.get('keepdims', 1))
        x = pre(ins[0]) if pre else ins[0]
        if axes is None and a.get('noop_with_empty_axes', 0):
            return sym.identity(x, name=name)
        out = op(x, **({'axis': tuple(axes)} if axes else {}), keepdims=keepdims)
        return sym.identity(post(out) if post else out, name=name)
    return convert


def _arg(op):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        if a.get('select_last_index', 0):
            raise Unsupported('ArgMax/ArgMin: select_last_index=1 has no MXNet equivalent')
        out = op(ins[0], axis=a.get('axis', 0), keepdims=bool(a.get('keepdims', 1)))
        return sym.Cast(out, dtype='int64', name=name)
    return convert


def _squeeze(ins, a, name, const):
    axes = _ints(const, ins[1] if len(ins) > 1 else None, a, 'axes', 'Squeeze')
    return sym.squeeze(ins[0], **({'axis': tuple(axes)} if axes else {}), name=name)


def _unsqueeze(ins, a, name, const):
    out = ins[0]
    for axis in sorted(_ints(const, ins[1] if len(ins) > 1 else None, a, 'axes', 'Unsqueeze')):
        out = sym.expand_dims(out, axis=axis)
    return sym.identity(out, name=name)


def _slice(ins, a, name, const):
    def given(i, key):
        return _ints(const, ins[i] if len(ins) > i and ins[i] is not None else None, a, key, 'Slice')
    starts, ends = given(1, 'starts'), given(2, 'ends')
    axes = given(3, 'axes') or list(range(len(starts)))
    steps = given(4, 'steps') or [1] * len(starts)
    out = ins[0]
    for axis, begin, end, step in zip(axes, starts, ends, steps):
        if step != 1:
            if axis < 0:
                raise Unsupported('Slice: step %d on a negative axis' % step)
            out = sym.slice(out, begin=(None,) * axis + (begin,), end=(None,) * axis + (
                None if abs(end) >= 2 ** 31 - 1 else end,), step=(None,) * axis + (step,))
        else:
            out = sym.slice_axis(out, axis=axis, begin=begin, end=None if end >= 2 ** 31 - 1 else end)
    return sym.identity(out, name=name)


def _split(ins, a, name, const, outputs=1):
    axis = a.get('axis', 0)
    sizes = _ints(const, ins[1] if len(ins) > 1 and ins[1] is not None else None, a, 'split', 'Split')
    if sizes is None or len(set(sizes)) == 1:
        n = len(sizes) if sizes else outputs
        return sym.split(ins[0], num_outputs=n, axis=axis, name=name)
    ends = np.cumsum(sizes)
    return sym.Group([sym.slice_axis(ins[0], axis=axis, begin=int(e - s), end=int(e))
                      for s, e in zip(sizes, ends)])


def _pad(ins, a, name, const):
    pads = _ints(const, ins[1] if len(ins) > 1 else None, a, 'pads', 'Pad')
    value = a.get('value', 0.0)
    if len(ins) > 2 and ins[2] is not None:
        value = float(const.value_of(ins[2], 'Pad'))
    n = len(pads) // 2
    width = tuple(w for pair in zip(pads[:n], pads[n:]) for w in pair)
    mode = a.get('mode', 'constant')
    if isinstance(mode, bytes):
        mode = mode.decode()
    return sym.Pad(ins[0], mode=mode, pad_width=width, constant_value=value, name=name)


def _cast(ins, a, name, const):  # pylint: disable=unused-argument
    from onnx import helper  # pylint: disable=import-outside-toplevel
    return sym.Cast(ins[0], dtype=np.dtype(helper.tensor_dtype_to_np_dtype(a['to'])).name, name=name)


def _lrn(ins, a, name, const):  # pylint: disable=unused-argument
    return sym.LRN(ins[0], alpha=a.get('alpha', 1e-4), beta=a.get('beta', 0.75), knorm=a.get('bias', 1.0),
                   nsize=a['size'], name=name)


def _prelu(ins, a, name, const):  # pylint: disable=unused-argument
    # ONNX's slope broadcasts (shape (C, 1, 1) for NCHW): relu(x) - slope * relu(-x)
    return sym.broadcast_sub(sym.relu(ins[0]), sym.broadcast_mul(ins[1], sym.relu(-ins[0])), name=name)


def _hardmax(ins, a, name, const):  # pylint: disable=unused-argument
    axis = a.get('axis', -1)
    first = sym.argmax(ins[0], axis=axis, keepdims=True)
    positions = sym.contrib.arange_like(ins[0], axis=axis)
    if axis not in (-1,):
        raise Unsupported('Hardmax: axis=%s (MXNet import takes the last axis)' % axis)
    return sym.Cast(sym.broadcast_equal(positions, first), dtype='float32', name=name)


def _lp_normalization(ins, a, name, const):  # pylint: disable=unused-argument
    axis = a.get('axis', -1)
    return sym.broadcast_div(ins[0], sym.norm(ins[0], ord=a.get('p', 2), axis=axis, keepdims=True), name=name)


def _topk(ins, a, name, const):
    k = _ints(const, ins[1] if len(ins) > 1 else None, a, 'k', 'TopK')
    k = k[0] if isinstance(k, list) else a['k']
    return sym.topk(ins[0], axis=a.get('axis', -1), k=k, ret_typ='both', is_ascend=not a.get('largest', 1),
                    dtype='int64', name=name)


def _gather(ins, a, name, const):  # pylint: disable=unused-argument
    return sym.take(ins[0], ins[1], axis=a.get('axis', 0), mode='wrap', name=name)


def _random(op, like):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        params = {'low': a.get('low', 0.0), 'high': a.get('high', 1.0)} if 'uniform' in op else \
            {'loc': a.get('mean', 0.0), 'scale': a.get('scale', 1.0)}
        if like:
            fn = sym.random.uniform_like if 'uniform' in op else sym.random.normal_like
            return fn(ins[0], name=name, **params)
        fn = sym.random.uniform if 'uniform' in op else sym.random.normal
        return fn(shape=tuple(a['shape']), dtype=_dtype(a.get('dtype', 1)), name=name, **params)
    return convert


def _dtype(code):
    from onnx import helper  # pylint: disable=import-outside-toplevel
    return np.dtype(helper.tensor_dtype_to_np_dtype(code)).name


def _multinomial(ins, a, name, const):  # pylint: disable=unused-argument
    # ONNX samples from unnormalized log-probabilities
    return sym.sample_multinomial(sym.softmax(ins[0], axis=-1), shape=a.get('sample_size', 1),
                                  dtype=_dtype(a.get('dtype', 6)), name=name)


def _depth_to_space(ins, a, name, const):  # pylint: disable=unused-argument
    mode = a.get('mode', b'DCR')
    if mode not in (b'DCR', 'DCR'):
        raise Unsupported('DepthToSpace: mode=%s (MXNet has DCR)' % mode)
    return sym.depth_to_space(ins[0], block_size=a['blocksize'], name=name)


def _mean(ins, a, name, const):  # pylint: disable=unused-argument
    total = ins[0]
    for other in ins[1:]:
        total = sym.broadcast_add(total, other)
    return sym.identity(total / len(ins), name=name)


def _variadic(op):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        out = ins[0]
        for other in ins[1:]:
            out = op(out, other)
        return sym.identity(out, name=name)
    return convert


def _dropout(ins, a, name, const):  # pylint: disable=unused-argument
    return sym.identity(ins[0], name=name)       # inference: the identity (ONNX's mask output unused)


def _softmax(op):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        if const.opset >= 13:
            return op(ins[0], axis=a.get('axis', -1), name=name)
        # before opset 13: over all axes from `axis` on, as one (the input seen as 2-D)
        axis = a.get('axis', 1)
        if axis == -1:
            return op(ins[0], axis=-1, name=name)
        if axis != 1:
            raise Unsupported('opset %d softmax over the axes from %s on' % (const.opset, axis))
        return sym.reshape_like(op(sym.reshape(ins[0], shape=(0, -1)), axis=-1), ins[0], name=name)
    return convert


def _tile(ins, a, name, const):
    return sym.tile(ins[0], reps=tuple(_ints(const, ins[1], a, 'repeats', 'Tile')), name=name)


def _expand(ins, a, name, const):
    # ONNX broadcasts both ways (a target 1 keeps the input's size, missing leading axes are
    # added): adding zeros of the target shape does exactly that (float32 inputs)
    shape = _ints(const, ins[1], a, 'shape', 'Expand')
    return sym.broadcast_add(ins[0], sym.zeros(shape=tuple(shape)), name=name)


def _constant_of_shape(ins, a, name, const):
    from onnx import numpy_helper  # pylint: disable=import-outside-toplevel
    value = numpy_helper.to_array(a['value']) if 'value' in a else np.zeros(1, 'float32')
    return sym.full(shape=tuple(_ints(const, ins[0], a, 'shape', 'ConstantOfShape')), val=value.item(),
                    dtype=value.dtype.name, name=name)


def _range(ins, a, name, const):  # pylint: disable=unused-argument
    start, limit, delta = (const.value_of(i, 'Range') for i in ins[:3])
    return sym.arange(start=start.item(), stop=limit.item(), step=delta.item(), dtype=start.dtype.name, name=name)


CONVERTERS = {
    'Conv': _conv, 'ConvTranspose': _conv_transpose, 'Gemm': _gemm, 'FC': _fc,
    'MaxPool': _pool('max'), 'AveragePool': _pool('avg'), 'LpPool': _pool('lp'),
    'GlobalAveragePool': _global_pool('avg'), 'GlobalMaxPool': _global_pool('max'), 'GlobalLpPool': _global_pool('lp'),
    'BatchNormalization': _batch_norm, 'SpatialBN': _batch_norm,
    'InstanceNormalization': lambda ins, a, name, const: sym.InstanceNorm(*ins, eps=a.get('epsilon', 1e-5),
                                                                          name=name),
    'LRN': _lrn, 'Flatten': _flatten, 'Reshape': _reshape, 'Clip': _clip, 'Pad': _pad, 'Cast': _cast,
    'Relu': _simple(sym.Activation, act_type='relu'), 'Sigmoid': _simple(sym.Activation, act_type='sigmoid'),
    'Tanh': _simple(sym.Activation, act_type='tanh'), 'Softplus': _simple(sym.Activation, act_type='softrelu'),
    'Softsign': _simple(sym.softsign),
    'LeakyRelu': lambda ins, a, name, const: sym.LeakyReLU(ins[0], act_type='leaky', slope=a.get('alpha', 0.01),
                                                           name=name),
    'Elu': lambda ins, a, name, const: sym.LeakyReLU(ins[0], act_type='elu', slope=a.get('alpha', 1.0), name=name),
    'Selu': lambda ins, a, name, const: sym.identity(a.get('gamma', 1.0507009873554805) * sym.LeakyReLU(
        ins[0], act_type='elu', slope=a.get('alpha', 1.6732632423543772)), name=name),
    'PRelu': _prelu,
    'HardSigmoid': lambda ins, a, name, const: sym.hard_sigmoid(ins[0], alpha=a.get('alpha', 0.2),
                                                                beta=a.get('beta', 0.5), name=name),
    'Add': _simple(sym.broadcast_add), 'Sub': _simple(sym.broadcast_sub), 'Mul': _simple(sym.broadcast_mul),
    'Div': _simple(sym.broadcast_div), 'Pow': _simple(sym.broadcast_power),
    'Max': _variadic(sym.broadcast_maximum), 'Min': _variadic(sym.broadcast_minimum),
    'Sum': _variadic(sym.broadcast_add), 'Mean': _mean,
    'Less': _simple(sym.broadcast_lesser), 'Greater': _simple(sym.broadcast_greater),
    'Equal': _simple(sym.broadcast_equal), 'And': _simple(sym.broadcast_logical_and),
    'Or': _simple(sym.broadcast_logical_or), 'Xor': _simple(sym.broadcast_logical_xor),
    'Not': _simple(sym.logical_not),
    'Exp': _simple(sym.exp), 'Log': _simple(sym.log), 'Sqrt': _simple(sym.sqrt), 'Abs': _simple(sym.abs),
    'Neg': _simple(sym.negative), 'Reciprocal': _simple(sym.reciprocal), 'Ceil': _simple(sym.ceil),
    'Floor': _simple(sym.floor), 'Sin': _simple(sym.sin), 'Cos': _simple(sym.cos), 'Tan': _simple(sym.tan),
    'Asin': _simple(sym.arcsin), 'Acos': _simple(sym.arccos), 'Atan': _simple(sym.arctan),
    'Identity': _simple(sym.identity), 'Dropout': _dropout,
    'Concat': lambda ins, a, name, const: sym.concat(*ins, dim=a['axis'], name=name),
    'Softmax': _softmax(sym.softmax), 'LogSoftmax': _softmax(sym.log_softmax), 'Hardmax': _hardmax,
    'Transpose': lambda ins, a, name, const: sym.transpose(ins[0], axes=tuple(a.get('perm', ())), name=name),
    'ReduceMax': _reduce(sym.max), 'ReduceMin': _reduce(sym.min), 'ReduceMean': _reduce(sym.mean),
    'ReduceSum': _reduce(sym.sum), 'ReduceProd': _reduce(sym.prod),
    'ReduceLogSum': _reduce(sym.sum, post=sym.log), 'ReduceLogSumExp': _reduce(sym.sum, post=sym.log, pre=sym.exp),
    'ReduceSumSquare': _reduce(sym.sum, pre=sym.square),
    'ArgMax': _arg(sym.argmax), 'ArgMin': _arg(sym.argmin),
    'Squeeze': _squeeze, 'Unsqueeze': _unsqueeze, 'Slice': _slice, 'Split': _split,
    'Shape': _simple(sym.shape_array), 'Size': _simple(sym.size_array), 'Gather': _gather,
    'MatMul': lambda ins, a, name, const: (sym.dot(ins[0], ins[1], name=name) if const.ndim_of(ins[1]) == 2
                                           else sym.linalg.gemm2(ins[0], ins[1], name=name)),
    'MaxRoiPool': lambda ins, a, name, const: sym.ROIPooling(ins[0], ins[1], pooled_size=tuple(a['pooled_shape']),
                                                             spatial_scale=a.get('spatial_scale', 1.0), name=name),
    'DepthToSpace': _depth_to_space,
    'SpaceToDepth': lambda ins, a, name, const: sym.space_to_depth(ins[0], block_size=a['blocksize'], name=name),
    'LpNormalization': _lp_normalization, 'TopK': _topk,
    'Erf': _simple(sym.erf), 'Sign': _simple(sym.sign), 'Round': _simple(sym.round), 'Tile': _tile,
    'Expand': _expand, 'ConstantOfShape': _constant_of_shape, 'Range': _range,
    'RandomUniform': _random('uniform', False), 'RandomNormal': _random('normal', False),
    'RandomUniformLike': _random('uniform', True), 'RandomNormalLike': _random('normal', True),
    'Multinomial': _multinomial,
}
