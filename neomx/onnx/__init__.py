"""Export of MXNet models to ONNX (``mx.onnx``), as MXNet 1.9.1's ``mxnet.onnx``.

Needs the ``onnx`` package (``pip install "neomx[onnx]"``), imported when a function is called.
The graph is read from the Symbol's MXNet JSON, and each MXNet operator becomes ONNX nodes
through its converter in :mod:`neomx.onnx.converters` (ONNX opset 13).
"""
import json
import logging

import numpy as np

from ..base import MXNetError, string_types
from .._optional import require
from .. import ndarray as nd
from .. import symbol
from .converters import CONVERTERS, OPSET, GraphBuilder
from . import tensor_converters, nn_converters  # noqa: F401  (they register their converters)

__all__ = ['export_model', 'get_operator_support']


def get_operator_support(opset_version=None):
    """The MXNet operators :func:`export_model` converts (sorted), for ``opset_version``
    (default: the installed onnx package's newest); ``[]`` below opset 12, as MXNet."""
    if opset_version is None:
        opset_version = require('onnx.defs', 'onnx', 'mx.onnx.get_operator_support').onnx_opset_version()
    if opset_version < 12:
        return []
    return sorted(CONVERTERS)


def _load_params(params):
    if isinstance(params, string_types):
        params = nd.load(params)
        if isinstance(params, list):
            if params:
                raise MXNetError('export_model: the params file holds unnamed arrays; save them by name')
            params = {}
    if isinstance(params, (list, tuple)) and len(params) == 2:
        merged = dict(params[0])
        merged.update(params[1])
        params = merged
    if not isinstance(params, dict):
        raise ValueError('Input sym and params should either be files or objects')
    return {k.split(':', 1)[1] if k.startswith(('arg:', 'aux:')) else k: v for k, v in params.items()}


def _internal_info(sym, input_shapes, input_types, params):
    """(shape, dtype) of each internal output of ``sym`` by MXNet's internal output name, where
    shape and type inference know them (``None`` where not)."""
    internals = sym.get_internals()
    names = set(internals.list_arguments() + internals.list_auxiliary_states())
    types = {k: np.dtype(v) for k, v in input_types.items()}
    types.update({k: np.dtype(_as_numpy(v).dtype) for k, v in params.items()})
    shapes = dict(input_shapes)
    shapes.update({k: tuple(_as_numpy(v).shape) for k, v in params.items()})
    outputs = internals.list_outputs()
    try:
        _, out_types, _ = internals.infer_type_partial(**{k: v for k, v in types.items() if k in names})
    except Exception:  # pylint: disable=broad-except
        out_types = None
    if out_types is None:   # a multi-output operator whose later outputs' dtypes need shapes
        out_types = [types.get(n) for n in outputs]
    try:
        _, out_shapes, _ = internals.infer_shape_partial(**{k: v for k, v in shapes.items() if k in names})
    except Exception:  # pylint: disable=broad-except
        out_shapes = [shapes.get(n) for n in outputs]
    # partial inference leaves 0 for a dimension it does not know
    return {n: (None if s is None or 0 in tuple(s) else tuple(s), None if t is None else np.dtype(t))
            for n, s, t in zip(outputs, out_shapes, out_types)}


def _onnx_inferred_types(onnx, helper, ctx, value_infos, initializers, out_names, out_types):
    """The ONNX element types of the graph's outputs: those neomx's type inference knows, the
    others (later outputs of multi-output operators) from ONNX's own type inference."""
    probe = helper.make_model_gen_version(
        helper.make_graph(ctx.nodes, 'probe', value_infos, [helper.make_empty_tensor_value_info(n) for n in out_names],
                          initializer=initializers + ctx.initializers),
        opset_imports=[helper.make_opsetid('', OPSET)])
    inferred = onnx.shape_inference.infer_shapes(probe)
    found = {v.name: v.type.tensor_type.elem_type for v in list(inferred.graph.value_info) + list(inferred.graph.output)
             if v.type.tensor_type.elem_type}
    return [helper.np_dtype_to_tensor_dtype(t) if t is not None else found.get(n, onnx.TensorProto.FLOAT)
            for n, t in zip(out_names, out_types)]


def _output_info(info, node, j):
    """(shape, dtype) of output ``j`` of JSON node ``node`` from :func:`_internal_info`."""
    name = node['name']
    for key in ((name,) if node['op'] == 'null' else ('%s_output%d' % (name, j), name + '_output')):
        if key in info:
            return info[key]
    return None, None


def _evaluate(node):
    """The value of a JSON node without inputs (a creation operator), computed by neomx."""
    graph = {'nodes': [dict(node, inputs=[])], 'arg_nodes': [], 'node_row_ptr': [0, 1],
             'heads': [[0, 0, 0]], 'attrs': {'mxnet_version': ['int', 10901]}}
    return symbol.load_json(json.dumps(graph)).eval()[0].asnumpy()


def _as_numpy(value):
    return value.asnumpy() if isinstance(value, nd.NDArray) else np.asarray(value)


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path='model.onnx', verbose=False,
                 dynamic=False, dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None):
    """Export a Symbol and its parameters (objects or the paths of MXNet's ``-symbol.json`` and
    ``.params`` files) to an ONNX file; returns ``onnx_file_path``.

    ``params``: a dict of all parameters, ``[arg_params, aux_params]``, or a file path.
    ``in_shapes``/``in_types``: one shape and dtype per input (the Symbol's arguments that are
    not parameters, in order). ``dynamic``: the input dimensions are symbolic
    (``dynamic_input_shapes`` gives them, ``None`` for a symbolic one).
    ``input_type``/``input_shape`` are the old names of ``in_types``/``in_shapes``.
    An operator without a converter raises MXNetError naming it and its node.
    """
    onnx = require('onnx', 'onnx', 'mx.onnx.export_model')
    from onnx import helper, numpy_helper  # pylint: disable=import-outside-toplevel
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if isinstance(sym, string_types):
        sym = symbol.load(sym)
    if not isinstance(sym, symbol.Symbol):
        raise ValueError('Input sym and params should either be files or objects')
    params = _load_params(params)
    graph = json.loads(sym.tojson())
    nodes = graph['nodes']
    inputs = [n['name'] for n in nodes if n['op'] == 'null' and n['name'] not in params]
    if in_shapes is None:
        raise MXNetError('export_model: in_shapes is required (one shape per input %s)' % inputs)
    if not isinstance(in_types, list):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise MXNetError('export_model: in_types (%d) and in_shapes (%d) must have the same length'
                         % (len(in_types), len(in_shapes)))
    if len(in_shapes) != len(inputs):
        raise MXNetError('export_model: %d in_shapes given for the %d inputs %s'
                         % (len(in_shapes), len(inputs), inputs))
    ctx = GraphBuilder(helper, numpy_helper)
    value_infos = []
    for i, (name, shape, dtype) in enumerate(zip(inputs, in_shapes, in_types)):
        if dynamic:
            shape = (dynamic_input_shapes[i] if dynamic_input_shapes is not None else [None] * len(shape))
        value_infos.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape)))
    ctx.dynamic = bool(dynamic)
    ctx.evaluate = _evaluate
    info = _internal_info(sym, dict(zip(inputs, (tuple(s) for s in in_shapes))), dict(zip(inputs, in_types)),
                          params)
    names = []       # ONNX name of each node's outputs
    used_params = set()
    for node in nodes:
        if node['op'] == 'null':
            names.append([node['name']])
            if node['name'] in params:
                used_params.add(node['name'])
            continue
        node.setdefault('attrs', {})     # MXNet JSON leaves out an empty attrs
        converter = CONVERTERS.get(node['op'])
        if converter is None:
            raise MXNetError("export_model: operator '%s' (node '%s') has no ONNX converter; "
                             "mx.onnx.get_operator_support() lists those that do" % (node['op'], node['name']))
        node_inputs = []
        for i, j, *_ in node['inputs']:
            onnx_name = names[i][j] if j < len(names[i]) else '%s_output%d' % (nodes[i]['name'], j)
            shape, dtype = _output_info(info, nodes[i], j)
            if shape is not None:
                ctx.shapes[onnx_name] = shape
            if dtype is not None:
                ctx.dtypes[onnx_name] = dtype
            node_inputs.append(onnx_name)
        ctx.out_shapes = [_output_info(info, node, j)[0] for j in range(8)]
        outs = converter(node, node_inputs, ctx)
        if verbose:
            logging.info('%s %s -> %s', node['op'], node['name'], outs)
        names.append(outs)
    initializers = [numpy_helper.from_array(_as_numpy(params[n]), n) for n in sorted(used_params)]
    _, out_shapes, _ = sym.infer_shape(**dict(zip(inputs, (tuple(s) for s in in_shapes))))
    out_names = [names[i][j] for i, j, *_ in graph['heads']]
    out_types = [_output_info(info, nodes[i], j)[1] for i, j, *_ in graph['heads']]
    if any(t is None for t in out_types):
        out_types = _onnx_inferred_types(onnx, helper, ctx, value_infos, initializers, out_names, out_types)
    else:
        out_types = [helper.np_dtype_to_tensor_dtype(t) for t in out_types]
    outputs = []
    for name, shape, dtype in zip(out_names, out_shapes, out_types):
        outputs.append(helper.make_tensor_value_info(
            name, dtype, [None] * len(shape) if dynamic else list(shape)))
    onnx_graph = helper.make_graph(ctx.nodes, 'mxnet_converted_model', value_infos, outputs,
                                   initializer=initializers + ctx.initializers)
    # the oldest IR version that can hold OPSET (not the installed onnx's newest), so that
    # runtimes older than the onnx package (onnxruntime lags it) load the file
    model = helper.make_model_gen_version(onnx_graph, opset_imports=[helper.make_opsetid('', OPSET)],
                                          producer_name='neomx')
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # pylint: disable=broad-except
            logging.info('Shape inference failed, original export is kept.')
    with open(onnx_file_path, 'wb') as f:
        f.write(model.SerializeToString())
    return onnx_file_path
