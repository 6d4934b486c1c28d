"""MXNet operator -> ONNX nodes: one converter per MXNet operator (ONNX opset 13).

A converter is ``fn(node, inputs, ctx) -> [output names]``: ``node`` is the MXNet JSON node
(``op``, ``name``, ``attrs``), ``inputs`` the ONNX names of its inputs, ``ctx`` the
:class:`GraphBuilder` that collects ONNX nodes and initializers.
"""

import numpy as np

from .._parsing import literal_eval
from ..base import MXNetError

OPSET = 13
CONVERTERS = {}


def converts(*names):
    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return register


def _tuple(attrs, key, default=()):
    value = attrs.get(key)
    if value is None or value in ('None', '()', '[]'):
        return tuple(default)
    parsed = literal_eval(value)
    return tuple(parsed) if isinstance(parsed, (tuple, list)) else (parsed,)


def _int(attrs, key, default=None):
    value = attrs.get(key)
    return default if value is None or value == 'None' else int(literal_eval(value))


def _float(attrs, key, default=None):
    value = attrs.get(key)
    return default if value is None or value == 'None' else float(value)


def _bool(attrs, key, default=False):
    value = attrs.get(key)
    return default if value is None else value in ('True', 'true', '1')


class GraphBuilder:
    """The ONNX nodes and initializers of one export, with fresh names."""

    def __init__(self, helper, numpy_helper):
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes = []
        self.initializers = []
        self.dtypes = {}        # ONNX tensor name -> numpy dtype, where type inference knows it
        self.shapes = {}        # ONNX tensor name -> static shape, where shape inference knows it
        self.out_shapes = []    # the static shapes of the node being converted's outputs (None: unknown)
        self.dynamic = False    # the export keeps input dimensions symbolic: converters use no static shapes
        self.evaluate = None    # node -> numpy value of an operator without inputs (set by export_model)
        self._count = 0

    def fresh(self, base):
        self._count += 1
        return '%s__%d' % (base, self._count)

    def add(self, op_type, inputs, name, outputs=None, **attrs):
        outputs = outputs or [name]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), list(outputs), name=name, **attrs))
        return outputs

    def dtype_of(self, name, default=np.float32):
        return self.dtypes.get(name, np.dtype(default))

    def rank_of(self, name, node):
        """The rank of tensor ``name`` (an input of ``node``), which ranks stay known even in a dynamic export."""
        shape = self.shapes.get(name)
        if shape is None:
            raise MXNetError("export_model: operator '%s' (node '%s') needs the rank of its input '%s', "
                             'which shape inference did not give' % (node['op'], node['name'], name))
        return len(shape)

    def static_shape(self, name, node):
        """The static shape of tensor ``name``; MXNetError naming ``node`` in a dynamic export or when unknown."""
        shape = self.shapes.get(name)
        if self.dynamic or shape is None or any(d is None or d < 0 for d in shape):
            raise MXNetError("export_model: operator '%s' (node '%s') is exported with static shapes only "
                             '(its input %s has no static shape; export with dynamic=False)'
                             % (node['op'], node['name'], name))
        return tuple(shape)

    def step(self, op_type, inputs, base, **attrs):
        """One ONNX node with a fresh output name (an intermediate result); returns that name."""
        return self.add(op_type, inputs, self.fresh(base), **attrs)[0]

    def const(self, base, value, dtype=np.int64):
        name = self.fresh(base)
        self.initializers.append(self.numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name


def _out(node):
    return node['name']


@converts('Convolution', 'Deconvolution')
def _conv(node, inputs, ctx):
    a = node['attrs']
    kernel = _tuple(a, 'kernel')
    nd = len(kernel)
    pad = _tuple(a, 'pad', (0,) * nd) or (0,) * nd
    attrs = dict(kernel_shape=list(kernel), strides=list(_tuple(a, 'stride', (1,) * nd) or (1,) * nd),
                 dilations=list(_tuple(a, 'dilate', (1,) * nd) or (1,) * nd),
                 pads=list(pad) * 2, group=_int(a, 'num_group', 1))
    ins = inputs[:2] if _bool(a, 'no_bias') else inputs[:3]
    if node['op'] == 'Deconvolution':
        adj = _tuple(a, 'adj', ())
        if adj:
            attrs['output_padding'] = list(adj)
        return ctx.add('ConvTranspose', ins, _out(node), **attrs)
    return ctx.add('Conv', ins, _out(node), **attrs)


@converts('FullyConnected')
def _fully_connected(node, inputs, ctx):
    a = node['attrs']
    data = inputs[0]
    if _bool(a, 'flatten', True):
        data = ctx.add('Flatten', [data], ctx.fresh(_out(node) + '_flat'), axis=1)[0]
        ins = [data, inputs[1]] + ([] if _bool(a, 'no_bias') else [inputs[2]])
        return ctx.add('Gemm', ins, _out(node), alpha=1.0, beta=1.0, transA=0, transB=1)
    wt = ctx.add('Transpose', [inputs[1]], ctx.fresh(_out(node) + '_wT'), perm=[1, 0])[0]
    if _bool(a, 'no_bias'):
        return ctx.add('MatMul', [data, wt], _out(node))
    mm = ctx.add('MatMul', [data, wt], ctx.fresh(_out(node) + '_mm'))[0]
    return ctx.add('Add', [mm, inputs[2]], _out(node))


_ACTIVATIONS = {'relu': 'Relu', 'sigmoid': 'Sigmoid', 'tanh': 'Tanh', 'softsign': 'Softsign'}


@converts('Activation')
def _activation(node, inputs, ctx):
    act = node['attrs'].get('act_type', 'relu')
    if act == 'softrelu':
        return ctx.add('Softplus', inputs[:1], _out(node))
    if act not in _ACTIVATIONS:
        raise MXNetError("export_model: Activation act_type='%s' (node %s) has no ONNX converter"
                         % (act, node['name']))
    return ctx.add(_ACTIVATIONS[act], inputs[:1], _out(node))


@converts('relu', 'sigmoid', 'tanh', 'exp', 'log', 'sqrt', 'abs', 'negative', 'floor', 'ceil',
          'sin', 'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'reciprocal', 'erf', 'sign', 'round',
          'softsign', 'identity', '_copy', 'BlockGrad', 'stop_gradient')
def _unary(node, inputs, ctx):
    op_type = {'relu': 'Relu', 'sigmoid': 'Sigmoid', 'tanh': 'Tanh', 'exp': 'Exp', 'log': 'Log',
               'sqrt': 'Sqrt', 'abs': 'Abs', 'negative': 'Neg', 'floor': 'Floor', 'ceil': 'Ceil',
               'sin': 'Sin', 'cos': 'Cos', 'tan': 'Tan', 'arcsin': 'Asin', 'arccos': 'Acos',
               'arctan': 'Atan', 'reciprocal': 'Reciprocal', 'erf': 'Erf', 'sign': 'Sign',
               'round': 'Round', 'softsign': 'Softsign'}.get(node['op'], 'Identity')
    return ctx.add(op_type, inputs[:1], _out(node))


@converts('LeakyReLU')
def _leaky_relu(node, inputs, ctx):
    a = node['attrs']
    act = a.get('act_type', 'leaky')
    slope = _float(a, 'slope', 0.25)
    if act == 'leaky':
        return ctx.add('LeakyRelu', inputs[:1], _out(node), alpha=slope)
    if act == 'elu':
        return ctx.add('Elu', inputs[:1], _out(node), alpha=slope)
    if act == 'selu':
        return ctx.add('Selu', inputs[:1], _out(node))
    if act == 'gelu':
        half = ctx.const(_out(node) + '_half', 0.5, np.float32)
        one = ctx.const(_out(node) + '_one', 1.0, np.float32)
        rs2 = ctx.const(_out(node) + '_rs2', 1 / np.sqrt(2), np.float32)
        t = ctx.add('Mul', [inputs[0], rs2], ctx.fresh(_out(node)))[0]
        t = ctx.add('Erf', [t], ctx.fresh(_out(node)))[0]
        t = ctx.add('Add', [t, one], ctx.fresh(_out(node)))[0]
        t = ctx.add('Mul', [inputs[0], t], ctx.fresh(_out(node)))[0]
        return ctx.add('Mul', [t, half], _out(node))
    raise MXNetError("export_model: LeakyReLU act_type='%s' (node %s) has no ONNX converter" % (act, node['name']))


@converts('BatchNorm')
def _batch_norm(node, inputs, ctx):
    a = node['attrs']
    if _int(a, 'axis', 1) != 1:
        raise MXNetError('export_model: BatchNorm with axis=%s (node %s): ONNX normalizes axis 1 only'
                         % (a.get('axis'), node['name']))
    gamma = inputs[1]
    if _bool(a, 'fix_gamma', True):
        # MXNet reads gamma as ones when fix_gamma
        gamma = ctx.add('Mul', [inputs[1], ctx.const(_out(node) + '_zero', 0.0, np.float32)],
                        ctx.fresh(_out(node) + '_g0'))[0]
        gamma = ctx.add('Add', [gamma, ctx.const(_out(node) + '_one', 1.0, np.float32)],
                        ctx.fresh(_out(node) + '_g1'))[0]
    return ctx.add('BatchNormalization', [inputs[0], gamma, inputs[2], inputs[3], inputs[4]], _out(node),
                   epsilon=_float(a, 'eps', 1e-3), momentum=_float(a, 'momentum', 0.9))


@converts('Pooling')
def _pooling(node, inputs, ctx):
    a = node['attrs']
    pool_type = a.get('pool_type', 'max')
    if _bool(a, 'global_pool'):
        op_type = {'max': 'GlobalMaxPool', 'avg': 'GlobalAveragePool', 'lp': 'GlobalLpPool'}.get(pool_type)
        if op_type is None:
            raise MXNetError("export_model: global Pooling pool_type='%s' (node %s) has no ONNX converter"
                             % (pool_type, node['name']))
        extra = {'p': _int(a, 'p_value', 2)} if pool_type == 'lp' else {}
        return ctx.add(op_type, inputs[:1], _out(node), **extra)
    kernel = _tuple(a, 'kernel')
    nd = len(kernel)
    strides = _tuple(a, 'stride', (1,) * nd) or (1,) * nd
    pads = _tuple(a, 'pad', (0,) * nd) or (0,) * nd
    full = a.get('pooling_convention', 'valid') == 'full'
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads) * 2, ceil_mode=int(full))
    base = _out(node)
    missing = _full_pooling_missing(ctx, inputs[0], kernel, strides, pads) if full else None
    out = ctx.fresh(base + '_pool') if missing else base
    if pool_type == 'max':
        ctx.add('MaxPool', inputs[:1], out, **attrs)
    elif pool_type == 'avg':
        ctx.add('AveragePool', inputs[:1], out, count_include_pad=int(_bool(a, 'count_include_pad', True)), **attrs)
    elif pool_type == 'lp':
        if full:
            raise MXNetError("export_model: Pooling pool_type='lp' with pooling_convention='full' (node %s) "
                             'has no ONNX converter' % node['name'])
        ctx.add('LpPool', inputs[:1], out, p=_int(a, 'p_value', 2),
                **{k: v for k, v in attrs.items() if k != 'ceil_mode'})
    else:
        raise MXNetError("export_model: Pooling pool_type='%s' (node %s) has no ONNX converter"
                         % (pool_type, node['name']))
    if not missing:
        return [out]
    # MXNet's 'full' convention keeps a last window that starts past the padded input (max
    # pooling gives the dtype's lowest value there, average pooling 0); ONNX's ceil mode drops it
    dtype = ctx.dtype_of(inputs[0])
    fill = np.finfo(dtype).min if pool_type == 'max' else 0
    return ctx.add('Pad', [out, ctx.const(base + '_pads', [0] * (nd + 2) + [0, 0] + list(missing)),
                           ctx.const(base + '_fill', fill, dtype)], base, mode='constant')


def _full_pooling_missing(ctx, data, kernel, strides, pads):
    """Per spatial axis, how many windows MXNet's 'full' convention has beyond ONNX's ceil mode
    (None when none or the shape is not static)."""
    shape = ctx.shapes.get(data)
    if ctx.dynamic or shape is None:
        return None
    missing = []
    for size, k, s, p in zip(shape[2:], kernel, strides, pads):
        mxnet = -(-(size + 2 * p - k) // s) + 1
        onnx = mxnet - 1 if (mxnet - 1) * s >= size + p else mxnet
        missing.append(mxnet - onnx)
    return missing if any(missing) else None


@converts('Flatten', 'flatten')
def _flatten(node, inputs, ctx):
    return ctx.add('Flatten', inputs[:1], _out(node), axis=1)


_BINARY = {'elemwise_add': 'Add', 'broadcast_add': 'Add', '_plus': 'Add', '_Plus': 'Add',
           'elemwise_sub': 'Sub', 'broadcast_sub': 'Sub', '_minus': 'Sub', '_Minus': 'Sub',
           'elemwise_mul': 'Mul', 'broadcast_mul': 'Mul', '_mul': 'Mul', '_Mul': 'Mul',
           'elemwise_div': 'Div', 'broadcast_div': 'Div', '_div': 'Div', '_Div': 'Div',
           'broadcast_power': 'Pow', '_power': 'Pow', '_Power': 'Pow',
           'broadcast_maximum': 'Max', '_maximum': 'Max', '_Maximum': 'Max',
           'broadcast_minimum': 'Min', '_minimum': 'Min', '_Minimum': 'Min',
           'broadcast_equal': 'Equal', 'broadcast_greater': 'Greater', 'broadcast_lesser': 'Less',
           'broadcast_not_equal': 'NotEqual', 'broadcast_greater_equal': 'GreaterOrEqual',
           'broadcast_lesser_equal': 'LessOrEqual', 'broadcast_logical_and': 'And',
           'broadcast_logical_or': 'Or', 'broadcast_logical_xor': 'Xor', 'broadcast_mod': 'Mod'}
_COMPARISONS = ('Equal', 'Greater', 'Less', 'NotEqual', 'GreaterOrEqual', 'LessOrEqual', 'And', 'Or', 'Xor')


def _tensor_type(dtype):
    from onnx import helper  # pylint: disable=import-outside-toplevel
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _compare(op_type, inputs, node, ctx):
    dtype = ctx.dtype_of(inputs[0])
    if op_type in ('And', 'Or', 'Xor'):       # on truth values
        inputs = [ctx.add('Cast', [i], ctx.fresh(_out(node) + '_b'), to=9)[0] for i in inputs]
    elif op_type == 'NotEqual':
        eq = ctx.add('Equal', inputs, ctx.fresh(_out(node) + '_eq'))[0]
        b = ctx.add('Not', [eq], ctx.fresh(_out(node)))[0]
        return ctx.add('Cast', [b], _out(node), to=_tensor_type(dtype))
    b = ctx.add(op_type, inputs, ctx.fresh(_out(node)))[0]
    return ctx.add('Cast', [b], _out(node), to=_tensor_type(dtype))


def _mod(node, inputs, ctx):
    """MXNet's modulo: the divisor's sign (as Python), and 0 where the divisor is 0."""
    base = _out(node)
    a, b = inputs[:2]
    dtype = ctx.dtype_of(a)
    zero = ctx.const(base + '_zero', 0, dtype)
    by_zero = ctx.step('Equal', [b, zero], base + '_b0')
    b = ctx.step('Where', [by_zero, ctx.const(base + '_one', 1, dtype), b], base + '_safe')
    if np.issubdtype(dtype, np.floating):     # ONNX's float Mod is C's fmod: the dividend's sign
        r = ctx.step('Mod', [a, b], base + '_fmod', fmod=1)
        signs_differ = ctx.step('Xor', [ctx.step('Less', [r, zero], base + '_rneg'),
                                        ctx.step('Less', [b, zero], base + '_bneg')], base + '_sd')
        nonzero = ctx.step('Not', [ctx.step('Equal', [r, zero], base + '_r0')], base + '_rnz')
        shift = ctx.step('And', [signs_differ, nonzero], base + '_shift')
        r = ctx.step('Where', [shift, ctx.step('Add', [r, b], base + '_rb'), r], base + '_py')
    else:
        r = ctx.step('Mod', [a, b], base + '_mod', fmod=0)
    return ctx.add('Where', [by_zero, zero, r], base)


@converts(*_BINARY)
def _binary(node, inputs, ctx):
    op_type = _BINARY[node['op']]
    if op_type == 'Mod':
        return _mod(node, inputs, ctx)
    if op_type in _COMPARISONS:     # MXNet returns 0/1 in the compared values' dtype
        return _compare(op_type, inputs[:2], node, ctx)
    return ctx.add(op_type, inputs[:2], _out(node))


_SCALAR = {'_plus_scalar': ('Add', False), '_minus_scalar': ('Sub', False), '_rminus_scalar': ('Sub', True),
           '_mul_scalar': ('Mul', False), '_div_scalar': ('Div', False), '_rdiv_scalar': ('Div', True),
           '_power_scalar': ('Pow', False), '_rpower_scalar': ('Pow', True),
           '_maximum_scalar': ('Max', False), '_minimum_scalar': ('Min', False),
           '_equal_scalar': ('Equal', False), '_not_equal_scalar': ('NotEqual', False),
           '_greater_scalar': ('Greater', False), '_greater_equal_scalar': ('GreaterOrEqual', False),
           '_lesser_scalar': ('Less', False), '_lesser_equal_scalar': ('LessOrEqual', False)}


@converts(*_SCALAR)
def _scalar(node, inputs, ctx):
    op_type, reverse = _SCALAR[node['op']]
    dtype = ctx.dtype_of(inputs[0])
    scalar = ctx.const(_out(node) + '_scalar', _float(node['attrs'], 'scalar', 0.0), dtype)
    ins = [scalar, inputs[0]] if reverse else [inputs[0], scalar]
    if op_type in _COMPARISONS:
        return _compare(op_type, ins, node, ctx)
    return ctx.add(op_type, ins, _out(node))


@converts('add_n', 'ElementWiseSum')
def _add_n(node, inputs, ctx):
    return ctx.add('Sum', inputs, _out(node))


@converts('Concat', 'concat')
def _concat(node, inputs, ctx):
    return ctx.add('Concat', inputs, _out(node), axis=_int(node['attrs'], 'dim', 1))


@converts('Dropout')
def _dropout(node, inputs, ctx):
    # inference graph: dropout is the identity
    return ctx.add('Identity', inputs[:1], _out(node))


@converts('softmax', 'SoftmaxActivation', 'SoftmaxOutput', 'log_softmax')
def _softmax(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    data = inputs[0]
    dtype = ctx.dtype_of(data)
    op_type = 'LogSoftmax' if node['op'] == 'log_softmax' else 'Softmax'
    if node['op'] == 'SoftmaxActivation':
        axis = 1 if a.get('mode') == 'channel' else -1
    elif node['op'] == 'SoftmaxOutput':
        if _bool(a, 'multi_output'):
            return ctx.add(op_type, [data], base, axis=1)
        if _bool(a, 'preserve_shape'):
            return ctx.add(op_type, [data], base, axis=-1)
        # MXNet normalizes over all the axes after the first
        flat = ctx.step('Flatten', [data], base + '_flat', axis=1)
        probs = ctx.step(op_type, [flat], base + '_probs', axis=-1)
        return ctx.add('Reshape', [probs, ctx.step('Shape', [data], base + '_shape')], base)
    else:
        axis = _int(a, 'axis', -1)
    temperature = _float(a, 'temperature')
    if temperature is not None and temperature != 1.0:
        data = ctx.step('Div', [data, ctx.const(base + '_t', temperature, dtype)], base + '_scaled')
    if not _bool(a, 'use_length'):
        return ctx.add(op_type, [data], base, axis=axis)
    # steps at or past the length are left out (-inf before the softmax) and give 0
    rank = ctx.rank_of(inputs[0], node)
    axis %= rank
    steps = ctx.step('Gather', [ctx.step('Shape', [data], base + '_shape'), ctx.const(base + '_ax', axis)],
                     base + '_steps', axis=0)
    t = ctx.step('Range', [ctx.const(base + '_0', 0), steps, ctx.const(base + '_1', 1)], base + '_t')
    others = [d for d in range(rank) if d != axis]
    if others:
        t = ctx.step('Unsqueeze', [t, ctx.const(base + '_tax', others)], base + '_tb')
    length = ctx.step('Unsqueeze', [ctx.step('Cast', [inputs[1]], base + '_len', to=7),
                                    ctx.const(base + '_lax', [axis])], base + '_lb')
    keep = ctx.step('Less', [t, length], base + '_keep')
    masked = ctx.step('Where', [keep, data, ctx.const(base + '_ninf', -np.inf, dtype)], base + '_masked')
    probs = ctx.step(op_type, [masked], base + '_probs', axis=axis)
    return ctx.add('Where', [keep, probs, ctx.const(base + '_zero', 0, dtype)], base)


@converts('Reshape', 'reshape')
def _reshape(node, inputs, ctx):
    a = node['attrs']
    shape = _tuple(a, 'shape')
    target = ctx.out_shapes[0]
    if ctx.dynamic or target is None:
        # ONNX's 0 (copy) and -1 (infer) read as MXNet's; the other codes need the static shape
        if any(s < -1 for s in shape) or _bool(a, 'reverse'):
            raise MXNetError("export_model: operator 'Reshape' (node '%s'): shape=%s uses the codes -2, -3, -4 "
                             'or reverse, which export with static shapes only' % (node['name'], shape))
        target = shape
    return ctx.add('Reshape', [inputs[0], ctx.const(_out(node) + '_shape', list(target))], _out(node))


@converts('transpose')
def _transpose(node, inputs, ctx):
    axes = _tuple(node['attrs'], 'axes')
    return ctx.add('Transpose', inputs[:1], _out(node), **({'perm': list(axes)} if axes else {}))


@converts('clip')
def _clip(node, inputs, ctx):
    a = node['attrs']
    dtype = ctx.dtype_of(inputs[0])
    lo = ctx.const(_out(node) + '_min', _float(a, 'a_min'), dtype)
    hi = ctx.const(_out(node) + '_max', _float(a, 'a_max'), dtype)
    return ctx.add('Clip', [inputs[0], lo, hi], _out(node))


@converts('expand_dims')
def _expand_dims(node, inputs, ctx):
    return ctx.add('Unsqueeze', [inputs[0], ctx.const(_out(node) + '_axes', [_int(node['attrs'], 'axis')])],
                   _out(node))


@converts('squeeze')
def _squeeze(node, inputs, ctx):
    axes = _tuple(node['attrs'], 'axis')
    ins = [inputs[0]] + ([ctx.const(_out(node) + '_axes', list(axes))] if axes else [])
    return ctx.add('Squeeze', ins, _out(node))


_REDUCE = {'sum': 'ReduceSum', 'mean': 'ReduceMean', 'max': 'ReduceMax', 'min': 'ReduceMin', 'prod': 'ReduceProd'}


@converts(*_REDUCE)
def _reduce(node, inputs, ctx):
    a = node['attrs']
    if _bool(a, 'exclude'):
        raise MXNetError('export_model: %s with exclude=True (node %s) has no ONNX converter' % (node['op'], node['name']))
    axes = _tuple(a, 'axis')
    keep = int(_bool(a, 'keepdims'))
    if node['op'] == 'sum':      # opset 13 takes ReduceSum's axes as an input
        ins = [inputs[0]] + ([ctx.const(_out(node) + '_axes', list(axes))] if axes else [])
        return ctx.add('ReduceSum', ins, _out(node), keepdims=keep)
    return ctx.add(_REDUCE[node['op']], inputs[:1], _out(node), keepdims=keep,
                   **({'axes': list(axes)} if axes else {}))


@converts('Cast', 'cast')
def _cast(node, inputs, ctx):
    from onnx import helper  # pylint: disable=import-outside-toplevel
    dtype = np.dtype(node['attrs']['dtype'])
    return ctx.add('Cast', inputs[:1], _out(node), to=helper.np_dtype_to_tensor_dtype(dtype))


@converts('slice_axis')
def _slice_axis(node, inputs, ctx):
    a = node['attrs']
    end = _int(a, 'end')
    ins = [inputs[0], ctx.const(_out(node) + '_b', [_int(a, 'begin')]),
           ctx.const(_out(node) + '_e', [np.iinfo(np.int64).max if end is None else end]),
           ctx.const(_out(node) + '_a', [_int(a, 'axis')])]
    return ctx.add('Slice', ins, _out(node))


@converts('Embedding')
def _embedding(node, inputs, ctx):
    idx = ctx.add('Cast', [inputs[0]], ctx.fresh(_out(node) + '_idx'), to=7)[0]
    return ctx.add('Gather', [inputs[1], idx], _out(node), axis=0)


@converts('LRN')
def _lrn(node, inputs, ctx):
    a = node['attrs']
    return ctx.add('LRN', inputs[:1], _out(node), alpha=_float(a, 'alpha', 1e-4), beta=_float(a, 'beta', 0.75),
                   bias=_float(a, 'knorm', 2.0), size=_int(a, 'nsize'))


@converts('InstanceNorm')
def _instance_norm(node, inputs, ctx):
    return ctx.add('InstanceNormalization', inputs[:3], _out(node), epsilon=_float(node['attrs'], 'eps', 1e-3))


@converts('dot')
def _dot(node, inputs, ctx):
    a = node['attrs']
    ins = list(inputs[:2])
    for i, key in ((0, 'transpose_a'), (1, 'transpose_b')):
        if _bool(a, key):
            ins[i] = ctx.add('Transpose', [ins[i]], ctx.fresh(_out(node) + '_T'))[0]
    return ctx.add('MatMul', ins, _out(node))


@converts('batch_dot')
def _batch_dot(node, inputs, ctx):
    a = node['attrs']
    ins = list(inputs[:2])
    for i, key in ((0, 'transpose_a'), (1, 'transpose_b')):
        if _bool(a, key):
            rank = ctx.rank_of(ins[i], node)
            ins[i] = ctx.step('Transpose', [ins[i]], _out(node) + '_T',
                              perm=list(range(rank - 2)) + [rank - 1, rank - 2])
    return ctx.add('MatMul', ins, _out(node))


@converts('square')
def _square(node, inputs, ctx):
    return ctx.add('Mul', [inputs[0], inputs[0]], _out(node))


@converts('log2')
def _log2(node, inputs, ctx):
    ln = ctx.add('Log', inputs[:1], ctx.fresh(_out(node)))[0]
    return ctx.add('Div', [ln, ctx.const(_out(node) + '_ln2', np.log(2), ctx.dtype_of(inputs[0]))], _out(node))


@converts('logical_not')
def _logical_not(node, inputs, ctx):
    b = ctx.add('Cast', inputs[:1], ctx.fresh(_out(node)), to=9)[0]
    b = ctx.add('Not', [b], ctx.fresh(_out(node)))[0]
    return ctx.add('Cast', [b], _out(node), to=_tensor_type(ctx.dtype_of(inputs[0])))


@converts('zeros_like', 'ones_like')
def _fill_like(node, inputs, ctx):
    value = 0 if node['op'] == 'zeros_like' else 1
    shape = ctx.add('Shape', inputs[:1], ctx.fresh(_out(node) + '_shape'))[0]
    from onnx import numpy_helper  # pylint: disable=import-outside-toplevel
    return ctx.add('ConstantOfShape', [shape], _out(node),
                   value=numpy_helper.from_array(np.array([value], dtype=ctx.dtype_of(inputs[0]))))


@converts('where')
def _where(node, inputs, ctx):
    base = _out(node)
    cond = ctx.step('Cast', inputs[:1], base + '_c', to=9)
    rank, cond_rank = ctx.rank_of(inputs[1], node), ctx.rank_of(inputs[0], node)
    if cond_rank < rank:     # a 1-d condition picks whole rows (MXNet), not trailing elements (NumPy)
        cond = ctx.step('Unsqueeze', [cond, ctx.const(base + '_ax', list(range(cond_rank, rank)))], base + '_cb')
    return ctx.add('Where', [cond, inputs[1], inputs[2]], base)


@converts('tile')
def _tile(node, inputs, ctx):
    reps = list(_tuple(node['attrs'], 'reps'))
    base = _out(node)
    data = inputs[0]
    rank = ctx.rank_of(data, node)
    # MXNet prepends ones to the shorter of reps and the shape
    if len(reps) < rank:
        reps = [1] * (rank - len(reps)) + reps
    elif len(reps) > rank:
        data = ctx.step('Unsqueeze', [data, ctx.const(base + '_ax', list(range(len(reps) - rank)))], base + '_nd')
    return ctx.add('Tile', [data, ctx.const(base + '_reps', reps)], base)


@converts('stack')
def _stack(node, inputs, ctx):
    axis = _int(node['attrs'], 'axis', 0)
    axes = ctx.const(_out(node) + '_axis', [axis])
    parts = [ctx.add('Unsqueeze', [i, axes], ctx.fresh(_out(node) + '_u'))[0] for i in inputs]
    return ctx.add('Concat', parts, _out(node), axis=axis)


@converts('hard_sigmoid')
def _hard_sigmoid(node, inputs, ctx):
    a = node['attrs']
    return ctx.add('HardSigmoid', inputs[:1], _out(node), alpha=_float(a, 'alpha', 0.2), beta=_float(a, 'beta', 0.5))


@converts('depth_to_space', 'space_to_depth')
def _depth_space(node, inputs, ctx):
    op_type = 'DepthToSpace' if node['op'] == 'depth_to_space' else 'SpaceToDepth'
    extra = {'mode': 'DCR'} if op_type == 'DepthToSpace' else {}
    return ctx.add(op_type, inputs[:1], _out(node), blocksize=_int(node['attrs'], 'block_size'), **extra)


@converts('broadcast_to')
def _broadcast_to(node, inputs, ctx):
    shape = _tuple(node['attrs'], 'shape')
    if 0 in shape:      # 0 keeps the input's dimension: Expand's 1 does the same
        shape = tuple(1 if s == 0 else s for s in shape)
    return ctx.add('Expand', [inputs[0], ctx.const(_out(node) + '_shape', list(shape))], _out(node))


@converts('argmax', 'argmin')
def _arg_reduce(node, inputs, ctx):
    a = node['attrs']
    axis = _int(a, 'axis')
    base = _out(node)
    op_type = 'ArgMax' if node['op'] == 'argmax' else 'ArgMin'
    if axis is None:    # over the flattened array
        flat = ctx.step('Reshape', [inputs[0], ctx.const(base + '_flat', [-1])], base + '_flat')
        i = ctx.step(op_type, [flat], base + '_i', axis=0, keepdims=1)
        if _bool(a, 'keepdims'):
            ones = ctx.const(base + '_ones', [1] * ctx.rank_of(inputs[0], node))
            i = ctx.step('Reshape', [i, ones], base + '_kept')
    else:
        i = ctx.step(op_type, inputs[:1], base + '_i', axis=axis, keepdims=int(_bool(a, 'keepdims')))
    return ctx.add('Cast', [i], base, to=_tensor_type(ctx.dtype_of(inputs[0])))


@converts('shape_array', 'size_array')
def _shape_array(node, inputs, ctx):
    shape = ctx.add('Shape', inputs[:1], ctx.fresh(_out(node)) if node['op'] == 'size_array' else _out(node))[0]
    if node['op'] == 'shape_array':
        return [shape]
    size = ctx.add('ReduceProd', [shape], ctx.fresh(_out(node)), keepdims=1)[0]
    return ctx.add('Identity', [size], _out(node))


@converts('_zeros', '_ones')
def _fill(node, inputs, ctx):  # pylint: disable=unused-argument
    from onnx import numpy_helper  # pylint: disable=import-outside-toplevel
    a = node['attrs']
    dtype = np.dtype(a.get('dtype', 'float32'))
    value = numpy_helper.from_array(np.array([0 if node['op'] == '_zeros' else 1], dtype=dtype))
    shape = ctx.const(_out(node) + '_shape', list(_tuple(a, 'shape')))
    return ctx.add('ConstantOfShape', [shape], _out(node), value=value)


@converts('broadcast_like', 'reshape_like')
def _like(node, inputs, ctx):
    a = node['attrs']
    op_type = 'Expand' if node['op'] == 'broadcast_like' else 'Reshape'
    partial = any(a.get(k, 'None') not in ('None', '()', '[]')
                  for k in ('lhs_axes', 'rhs_axes', 'lhs_begin', 'lhs_end', 'rhs_begin', 'rhs_end'))
    if not partial:
        shape = ctx.step('Shape', [inputs[1]], _out(node) + '_shape')
    elif ctx.dynamic or ctx.out_shapes[0] is None:
        raise MXNetError("export_model: operator '%s' (node '%s') with axes exports with static shapes only"
                         % (node['op'], node['name']))
    else:   # the shape MXNet's inference gives
        shape = ctx.const(_out(node) + '_shape', list(ctx.out_shapes[0]))
    return ctx.add(op_type, [inputs[0], shape], _out(node))


@converts('_contrib_div_sqrt_dim')
def _div_sqrt_dim(node, inputs, ctx):
    shape = ctx.add('Shape', inputs[:1], ctx.fresh(_out(node) + '_shape'))[0]
    last = ctx.add('Gather', [shape, ctx.const(_out(node) + '_last', -1)], ctx.fresh(_out(node) + '_d'))[0]
    last = ctx.add('Cast', [last], ctx.fresh(_out(node) + '_df'), to=_tensor_type(ctx.dtype_of(inputs[0])))[0]
    root = ctx.add('Sqrt', [last], ctx.fresh(_out(node) + '_sqrt'))[0]
    return ctx.add('Div', [inputs[0], root], _out(node))
