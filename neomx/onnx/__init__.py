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


def _node_dtypes(sym, input_types, params):
    """The NumPy dtype of each node's (first) output, by node name, where type inference knows it."""
    internals = sym.get_internals()
    known = {k: np.dtype(v) for k, v in input_types.items()}
    known.update({k: np.dtype(_as_numpy(v).dtype) for k, v in params.items()})
    try:
        _, out_types, _ = internals.infer_type_partial(
            **{k: v for k, v in known.items() if k in internals.list_arguments() + internals.list_auxiliary_states()})
    except Exception:  # pylint: disable=broad-except
        return known
    for name, dtype in zip(internals.list_outputs(), out_types):
        if dtype is not None:
            known[name[:-len('_output')] if name.endswith('_output') else name] = np.dtype(dtype)
    return known


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
    ctx.dtypes = _node_dtypes(sym, dict(zip(inputs, in_types)), params)
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
        node_inputs = [names[i][j] if j < len(names[i]) else '%s_output%d' % (nodes[i]['name'], j)
                       for i, j, *_ in node['inputs']]
        outs = converter(node, node_inputs, ctx)
        if verbose:
            logging.info('%s %s -> %s', node['op'], node['name'], outs)
        names.append(outs)
    initializers = [numpy_helper.from_array(_as_numpy(params[n]), n) for n in sorted(used_params)]
    _, out_shapes, _ = sym.infer_shape(**dict(zip(inputs, (tuple(s) for s in in_shapes))))
    _, out_types, _ = sym.infer_type(**dict(zip(inputs, (np.dtype(t) for t in in_types))))
    outputs = []
    for (i, j, *_), shape, dtype in zip(graph['heads'], out_shapes, out_types):
        outputs.append(helper.make_tensor_value_info(
            names[i][j], helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [None] * len(shape) if dynamic else list(shape)))
    onnx_graph = helper.make_graph(ctx.nodes, 'mxnet_converted_model', value_infos, outputs,
                                   initializer=initializers + ctx.initializers)
    model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid('', OPSET)],
                              producer_name='neomx')
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # pylint: disable=broad-except
            logging.info('Shape inference failed, original export is kept.')
    with open(onnx_file_path, 'wb') as f:
        f.write(model.SerializeToString())
    return onnx_file_path
