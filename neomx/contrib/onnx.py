"""Import of ONNX models (``mx.contrib.onnx``), as MXNet 1.9.1: an ONNX graph becomes a Symbol
and its initializers parameter arrays. Needs the ``onnx`` package (``pip install "neomx[onnx]"``).
"""
import functools

from ..base import MXNetError
from .._optional import require
from .. import ndarray as nd
from .. import symbol as sym
from ..gluon.block import SymbolBlock
from ..onnx import export_model   # MXNet 1.9.1 keeps the old path mx.contrib.onnx.export_model
from . import onnx2mx
from . import protobuf_wire

__all__ = ['import_model', 'get_model_metadata', 'import_to_gluon', 'export_model']


def _attrs(node):
    from onnx import helper  # pylint: disable=import-outside-toplevel
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _Constants:
    """The graph's constant arrays: initializers (parameters, and inputs such as shapes and
    clip bounds read at import) and the values of ``Constant`` nodes."""

    def __init__(self, graph, numpy_helper, opset):
        self.arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.used_as_constant = set()
        self.opset = opset

    def _array(self, symbol_, op):
        if symbol_ is None or symbol_.name not in self.arrays:
            raise onnx2mx.Unsupported("import_model: %s needs the constant value of its input '%s', which the "
                                      "graph computes" % (op, getattr(symbol_, 'name', None)))
        return self.arrays[symbol_.name]

    def shape_of(self, symbol_):
        return self._array(symbol_, 'a shape').shape

    def ndim_of(self, symbol_):
        """The number of dimensions of a constant input, None for a computed one."""
        array = self.arrays.get(getattr(symbol_, 'name', None))
        return None if array is None else array.ndim

    def value_of(self, symbol_, op='this operator'):
        value = self._array(symbol_, op)
        self.used_as_constant.add(symbol_.name)
        return value


def _load(model_file):
    onnx = require('onnx', 'onnx', 'mx.contrib.onnx.import_model')
    try:
        with open(model_file, 'rb') as f:
            data = f.read()
    except OSError as err:
        raise MXNetError("import_model: cannot read ONNX file '%s': %s" % (model_file, err)) from err
    try:
        return onnx.load_model_from_string(data)
    except Exception as err:  # protobuf's DecodeError and friends
        where = protobuf_wire.first_error(data, onnx.ModelProto.DESCRIPTOR)
        raise MXNetError("import_model: '%s' is not a readable ONNX file%s (%s)"
                         % (model_file, ': %s at byte offset %d' % (where[1], where[0]) if where else '',
                            err)) from err


def _opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')]
    return versions[0] if versions else 13


def import_model(model_file):
    """Read an ONNX file into ``(sym, arg_params, aux_params)`` as MXNet 1.9.1's
    ``mx.contrib.onnx.import_model``: the graph's initializers are the parameters (those of
    ``BatchNormalization``'s statistics auxiliary states).

    Raises
    ------
    MXNetError
        Naming the file and the byte offset for a corrupt file, and the first ONNX operator
        (or attribute) without an MXNet equivalent.
    """
    model = _load(model_file)
    from onnx import numpy_helper  # pylint: disable=import-outside-toplevel
    graph = model.graph
    const = _Constants(graph, numpy_helper, _opset(model))
    env = {name: sym.var(name) for name in const.arrays}
    for value in graph.input:
        if value.name not in env:
            env[value.name] = sym.var(value.name)
    aux_names = set()
    for node in graph.node:
        name = node.name or node.output[0]
        attrs = _attrs(node)
        if node.op_type == 'Constant':
            value = attrs.get('value')
            if value is None:
                raise MXNetError("import_model: Constant node '%s' has no tensor 'value'" % name)
            const.arrays[node.output[0]] = numpy_helper.to_array(value)
            env[node.output[0]] = sym.var(node.output[0])
            continue
        convert = onnx2mx.CONVERTERS.get(node.op_type)
        if convert is None:
            raise MXNetError("import_model: ONNX operator '%s' (node '%s') has no MXNet equivalent"
                             % (node.op_type, name))
        if node.op_type == 'Split':
            convert = functools.partial(convert, outputs=len(node.output))
        ins = [env[i] if i else None for i in node.input]
        if node.op_type in ('BatchNormalization', 'SpatialBN'):
            aux_names.update(node.input[3:5])
        try:
            out = convert(ins, attrs, name, const)
        except onnx2mx.Unsupported as err:
            raise MXNetError("import_model: node '%s' (%s): %s" % (name, node.op_type, err)) from None
        outputs = out.list_outputs()
        for i, output_name in enumerate(node.output):
            if output_name and i < len(outputs):
                env[output_name] = out[i] if len(outputs) > 1 else out
    outputs = [env[o.name] for o in graph.output]
    result = outputs[0] if len(outputs) == 1 else sym.Group(outputs)
    arg_params, aux_params = {}, {}
    used = set(result.list_arguments()) | set(result.list_auxiliary_states())
    for name, array in const.arrays.items():
        if name in const.used_as_constant and name not in used:
            continue
        # a 0-d constant (a scalar) is shape (1,) outside mx.np_shape(), as MXNet holds scalars
        array = array.reshape(1) if array.ndim == 0 else array
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
