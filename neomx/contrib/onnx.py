"""Import of ONNX models (``mx.contrib.onnx``), as MXNet 1.9.1: an ONNX graph becomes a Symbol
and its initializers parameter arrays. Needs the ``onnx`` package (``pip install "neomx[onnx]"``).
"""
from ..base import MXNetError
from .._optional import require
from .. import ndarray as nd
from .. import symbol as sym
from ..gluon.block import SymbolBlock

__all__ = ['import_model', 'get_model_metadata', 'import_to_gluon']


def _attrs(node):
    from onnx import helper  # pylint: disable=import-outside-toplevel
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pads(attrs, nd_):
    pads = list(attrs.get('pads', [0] * 2 * nd_))
    if pads[:nd_] != pads[nd_:]:
        raise MXNetError('import_model: asymmetric pads %s have no MXNet equivalent' % (pads,))
    return tuple(pads[:nd_])


def _conv(ins, a, name, const):
    kernel = tuple(a['kernel_shape'])
    n = len(kernel)
    kw = dict(kernel=kernel, stride=tuple(a.get('strides', (1,) * n)), dilate=tuple(a.get('dilations', (1,) * n)),
              pad=_pads(a, n), num_group=a.get('group', 1), num_filter=const.shape_of(ins[1])[0],
              no_bias=len(ins) < 3, name=name)
    return sym.Convolution(*ins, **kw)


def _gemm(ins, a, name, const):
    if a.get('transA', 0) or not a.get('transB', 0) or a.get('alpha', 1.0) != 1.0 or a.get('beta', 1.0) != 1.0:
        raise MXNetError('import_model: Gemm %s: only transB=1, alpha=beta=1 maps to FullyConnected' % name)
    return sym.FullyConnected(*ins, num_hidden=const.shape_of(ins[1])[0], no_bias=len(ins) < 3, name=name)


def _pool(pool_type):
    def convert(ins, a, name, const):  # pylint: disable=unused-argument
        kernel = tuple(a['kernel_shape'])
        n = len(kernel)
        return sym.Pooling(ins[0], kernel=kernel, stride=tuple(a.get('strides', (1,) * n)), pad=_pads(a, n),
                           pool_type=pool_type, count_include_pad=bool(a.get('count_include_pad', 0)),
                           pooling_convention='full' if a.get('ceil_mode', 0) else 'valid', name=name)
    return convert


def _simple(fn, **fixed):
    return lambda ins, a, name, const: fn(*ins, name=name, **fixed)


def _batch_norm(ins, a, name, const):  # pylint: disable=unused-argument
    return sym.BatchNorm(*ins, eps=a.get('epsilon', 1e-5), momentum=a.get('momentum', 0.9), fix_gamma=False,
                         name=name)


def _reshape(ins, a, name, const):  # pylint: disable=unused-argument
    return sym.reshape(ins[0], shape=tuple(int(v) for v in const.value_of(ins[1])), name=name)


def _clip(ins, a, name, const):  # pylint: disable=unused-argument
    lo = float(const.value_of(ins[1])) if len(ins) > 1 else a.get('min', -3.4e38)
    hi = float(const.value_of(ins[2])) if len(ins) > 2 else a.get('max', 3.4e38)
    return sym.clip(ins[0], a_min=lo, a_max=hi, name=name)


def _flatten(ins, a, name, const):  # pylint: disable=unused-argument
    if a.get('axis', 1) != 1:
        raise MXNetError('import_model: Flatten %s with axis=%s has no MXNet equivalent' % (name, a.get('axis')))
    return sym.Flatten(ins[0], name=name)


_CONVERTERS = {
    'Conv': _conv, 'Gemm': _gemm, 'MaxPool': _pool('max'), 'AveragePool': _pool('avg'),
    'GlobalAveragePool': lambda ins, a, name, const: sym.Pooling(ins[0], kernel=(1, 1), global_pool=True,
                                                                 pool_type='avg', name=name),
    'GlobalMaxPool': lambda ins, a, name, const: sym.Pooling(ins[0], kernel=(1, 1), global_pool=True,
                                                             pool_type='max', name=name),
    'BatchNormalization': _batch_norm, 'Flatten': _flatten, 'Reshape': _reshape, 'Clip': _clip,
    'Relu': _simple(sym.Activation, act_type='relu'), 'Sigmoid': _simple(sym.Activation, act_type='sigmoid'),
    'Tanh': _simple(sym.Activation, act_type='tanh'), 'Softplus': _simple(sym.Activation, act_type='softrelu'),
    'LeakyRelu': lambda ins, a, name, const: sym.LeakyReLU(ins[0], act_type='leaky', slope=a.get('alpha', 0.01),
                                                           name=name),
    'Elu': lambda ins, a, name, const: sym.LeakyReLU(ins[0], act_type='elu', slope=a.get('alpha', 1.0), name=name),
    'Add': _simple(sym.broadcast_add), 'Sub': _simple(sym.broadcast_sub), 'Mul': _simple(sym.broadcast_mul),
    'Div': _simple(sym.broadcast_div), 'Max': _simple(sym.broadcast_maximum), 'Min': _simple(sym.broadcast_minimum),
    'Pow': _simple(sym.broadcast_power), 'Sum': _simple(sym.add_n), 'MatMul': _simple(sym.dot),   # 2-D operands
    'Exp': _simple(sym.exp), 'Log': _simple(sym.log), 'Sqrt': _simple(sym.sqrt), 'Abs': _simple(sym.abs),
    'Neg': _simple(sym.negative), 'Identity': _simple(sym.identity),
    'Dropout': lambda ins, a, name, const: sym.identity(ins[0], name=name),
    'Concat': lambda ins, a, name, const: sym.concat(*ins, dim=a['axis'], name=name),
    'Softmax': lambda ins, a, name, const: sym.softmax(ins[0], axis=a.get('axis', -1), name=name),
    'LogSoftmax': lambda ins, a, name, const: sym.log_softmax(ins[0], axis=a.get('axis', -1), name=name),
    'Transpose': lambda ins, a, name, const: sym.transpose(ins[0], axes=tuple(a.get('perm', ())), name=name),
}


class _Constants:
    """The graph's initializers: parameters, and constant inputs (shapes, clip bounds) read at import."""

    def __init__(self, graph, numpy_helper):
        self.arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.used_as_constant = set()

    def shape_of(self, symbol_):
        return self.arrays[symbol_.name].shape

    def value_of(self, symbol_):
        self.used_as_constant.add(symbol_.name)
        return self.arrays[symbol_.name]


def _load(model_file):
    onnx = require('onnx', 'onnx', 'mx.contrib.onnx.import_model')
    try:
        return onnx.load(model_file)
    except Exception as err:  # protobuf's DecodeError and friends
        raise MXNetError("import_model: '%s' is not a readable ONNX file: %s" % (model_file, err)) from err


def import_model(model_file):
    """Read an ONNX file into ``(sym, arg_params, aux_params)``; raises MXNetError naming the
    first ONNX operator without an MXNet equivalent."""
    model = _load(model_file)
    from onnx import numpy_helper  # pylint: disable=import-outside-toplevel
    graph = model.graph
    const = _Constants(graph, numpy_helper)
    env = {name: sym.var(name) for name in const.arrays}
    for value in graph.input:
        if value.name not in env:
            env[value.name] = sym.var(value.name)
    aux_names = set()
    for node in graph.node:
        convert = _CONVERTERS.get(node.op_type)
        if convert is None:
            raise MXNetError("import_model: ONNX operator '%s' (node '%s') has no MXNet equivalent"
                             % (node.op_type, node.name))
        ins = [env[i] for i in node.input if i]
        if node.op_type == 'BatchNormalization':
            aux_names.update(node.input[3:5])
        out = convert(ins, _attrs(node), node.name or node.output[0], const)
        env[node.output[0]] = out
    outputs = [env[o.name] for o in graph.output]
    result = outputs[0] if len(outputs) == 1 else sym.Group(outputs)
    arg_params, aux_params = {}, {}
    for name, array in const.arrays.items():
        if name in const.used_as_constant:
            continue
        (aux_params if name in aux_names else arg_params)[name] = nd.array(array, dtype=array.dtype)
    return result, arg_params, aux_params


def get_model_metadata(model_file):
    """``{'input_tensor_data': [(name, shape)], 'output_tensor_data': [(name, shape)]}`` of an ONNX
    file's graph inputs (without its initializers) and outputs."""
    graph = _load(model_file).graph
    initializers = {t.name for t in graph.initializer}

    def shape(value):
        return tuple(d.dim_value if d.HasField('dim_value') else d.dim_param
                     for d in value.type.tensor_type.shape.dim)
    return {'input_tensor_data': [(v.name, shape(v)) for v in graph.input if v.name not in initializers],
            'output_tensor_data': [(v.name, shape(v)) for v in graph.output]}


def import_to_gluon(model_file, ctx):
    """An ONNX file as a Gluon :class:`~neomx.gluon.SymbolBlock` on ``ctx``, parameters loaded."""
    result, arg_params, aux_params = import_model(model_file)
    inputs = [sym.var(name) for name, _ in get_model_metadata(model_file)['input_tensor_data']]
    block = SymbolBlock(result, inputs)
    params = dict(arg_params)
    params.update(aux_params)
    for name, param in block.collect_params().items():
        if name in params:
            param.shape = params[name].shape
            param.initialize(ctx=ctx)
            param.set_data(params[name])
    return block
