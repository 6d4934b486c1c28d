"""MXNet operator -> ONNX nodes: one converter per MXNet operator (ONNX opset 13).

A converter is ``fn(node, inputs, ctx) -> [output names]``: ``node`` is the MXNet JSON node
(``op``, ``name``, ``attrs``), ``inputs`` the ONNX names of its inputs, ``ctx`` the
:class:`GraphBuilder` that collects ONNX nodes and initializers.
"""
import ast

import numpy as np

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
    parsed = ast.literal_eval(value)
    return tuple(parsed) if isinstance(parsed, (tuple, list)) else (parsed,)


def _int(attrs, key, default=None):
    value = attrs.get(key)
    return default if value is None or value == 'None' else int(ast.literal_eval(value))


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
        self.params = {}        # name -> numpy array of the model's parameters
        self._count = 0

    def fresh(self, base):
        self._count += 1
        return '%s__%d' % (base, self._count)

    def add(self, op_type, inputs, name, outputs=None, **attrs):
        outputs = outputs or [name]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), list(outputs), name=name, **attrs))
        return outputs

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
        op_type = {'max': 'GlobalMaxPool', 'avg': 'GlobalAveragePool'}.get(pool_type)
        if op_type is None:
            raise MXNetError("export_model: global Pooling pool_type='%s' (node %s) has no ONNX converter"
                             % (pool_type, node['name']))
        return ctx.add(op_type, inputs[:1], _out(node))
    kernel = _tuple(a, 'kernel')
    nd = len(kernel)
    attrs = dict(kernel_shape=list(kernel), strides=list(_tuple(a, 'stride', (1,) * nd) or (1,) * nd),
                 pads=list(_tuple(a, 'pad', (0,) * nd) or (0,) * nd) * 2,
                 ceil_mode=int(a.get('pooling_convention', 'valid') == 'full'))
    if pool_type == 'max':
        return ctx.add('MaxPool', inputs[:1], _out(node), **attrs)
    if pool_type == 'avg':
        return ctx.add('AveragePool', inputs[:1], _out(node),
                       count_include_pad=int(_bool(a, 'count_include_pad', True)), **attrs)
    if pool_type == 'lp':
        return ctx.add('LpPool', inputs[:1], _out(node), p=_int(a, 'p_value', 2),
                       **{k: v for k, v in attrs.items() if k != 'ceil_mode'})
    raise MXNetError("export_model: Pooling pool_type='%s' (node %s) has no ONNX converter" % (pool_type, node['name']))


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
           'broadcast_equal': 'Equal', 'broadcast_greater': 'Greater', 'broadcast_lesser': 'Less'}


@converts(*_BINARY)
def _binary(node, inputs, ctx):
    op_type = _BINARY[node['op']]
    if op_type in ('Equal', 'Greater', 'Less'):     # MXNet returns the compared values' dtype
        b = ctx.add(op_type, inputs[:2], ctx.fresh(_out(node)))[0]
        return ctx.add('Cast', [b], _out(node), to=1)
    return ctx.add(op_type, inputs[:2], _out(node))


_SCALAR = {'_plus_scalar': ('Add', False), '_minus_scalar': ('Sub', False), '_rminus_scalar': ('Sub', True),
           '_mul_scalar': ('Mul', False), '_div_scalar': ('Div', False), '_rdiv_scalar': ('Div', True),
           '_power_scalar': ('Pow', False), '_rpower_scalar': ('Pow', True),
           '_maximum_scalar': ('Max', False), '_minimum_scalar': ('Min', False)}


@converts(*_SCALAR)
def _scalar(node, inputs, ctx):
    op_type, reverse = _SCALAR[node['op']]
    scalar = ctx.const(_out(node) + '_scalar', _float(node['attrs'], 'scalar', 0.0), np.float32)
    ins = [scalar, inputs[0]] if reverse else [inputs[0], scalar]
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
    if node['op'] == 'SoftmaxActivation':
        axis = 1 if a.get('mode') == 'channel' else -1
    elif node['op'] == 'SoftmaxOutput':
        axis = 1 if _bool(a, 'multi_output') else -1
    else:
        axis = _int(a, 'axis', -1)
    data = inputs[0]
    temperature = _float(a, 'temperature')
    if temperature is not None and temperature != 1.0:
        data = ctx.add('Div', [data, ctx.const(_out(node) + '_t', temperature, np.float32)],
                       ctx.fresh(_out(node)))[0]
    return ctx.add('LogSoftmax' if node['op'] == 'log_softmax' else 'Softmax', [data], _out(node), axis=axis)


@converts('Reshape', 'reshape')
def _reshape(node, inputs, ctx):
    a = node['attrs']
    shape = _tuple(a, 'shape')
    if any(s < -1 for s in shape) or _bool(a, 'reverse'):
        raise MXNetError('export_model: Reshape shape=%s (node %s): the special codes -2, -3, -4 and '
                         'reverse have no ONNX converter yet' % (shape, node['name']))
    return ctx.add('Reshape', [inputs[0], ctx.const(_out(node) + '_shape', shape)], _out(node))


@converts('transpose')
def _transpose(node, inputs, ctx):
    axes = _tuple(node['attrs'], 'axes')
    return ctx.add('Transpose', inputs[:1], _out(node), **({'perm': list(axes)} if axes else {}))


@converts('clip')
def _clip(node, inputs, ctx):
    a = node['attrs']
    lo = ctx.const(_out(node) + '_min', _float(a, 'a_min'), np.float32)
    hi = ctx.const(_out(node) + '_max', _float(a, 'a_max'), np.float32)
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
            ins[i] = ctx.add('Transpose', [ins[i]], ctx.fresh(_out(node) + '_T'), perm=[0, 2, 1])[0]
    return ctx.add('MatMul', ins, _out(node))
