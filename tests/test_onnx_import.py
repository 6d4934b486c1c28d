"""mx.contrib.onnx.import_model, operator by operator: each ONNX operator MXNet 1.9.1 imports,
in a one-node model that onnxruntime runs, gives onnxruntime's values once imported; model-zoo
networks exported then imported give the network's outputs; corrupt files name the offset."""
import numpy as np
import pytest

import neomx as mx

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')
from onnx import TensorProto, helper, numpy_helper  # noqa: E402  pylint: disable=wrong-import-position

from device_tolerance import kernel_tolerance  # noqa: E402  pylint: disable=wrong-import-position

_CUDNN_OPS = ('Conv', 'ConvTranspose')     # TF32 kernels on a GPU

_RNG = np.random.RandomState(0)


def _f(*shape, low=-1.0, high=1.0):
    return _RNG.uniform(low, high, size=shape).astype('float32')


_X = _f(2, 3, 4, 4)
_ONNX_TYPES = {np.dtype('float32'): TensorProto.FLOAT, np.dtype('int64'): TensorProto.INT64,
               np.dtype('bool'): TensorProto.BOOL, np.dtype('int32'): TensorProto.INT32}


def _model(op, inputs, consts=None, n_out=1, opset=13, **attrs):
    """A one-node model: ``inputs`` (name -> array) are graph inputs, ``consts`` initializers."""
    consts = consts or {}
    names = list(inputs) + list(consts)
    outs = ['y%d' % i for i in range(n_out)]
    node = helper.make_node(op, [n if n in inputs or n in consts else '' for n in names], outs, name='n', **attrs)
    graph = helper.make_graph(
        [node], 'g', [helper.make_tensor_value_info(k, _ONNX_TYPES[v.dtype], v.shape) for k, v in inputs.items()],
        [], [numpy_helper.from_array(v, k) for k, v in consts.items()])
    # the oldest IR version holding the opset: onnxruntime may lag the installed onnx's newest
    model = helper.make_model_gen_version(graph, opset_imports=[helper.make_opsetid('', opset)])
    # the outputs' types as ONNX's shape inference gives them
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    model.graph.output.extend(inferred[o] for o in outs)
    return model


def _check(tmp_path, op, inputs, consts=None, n_out=1, opset=13, rtol=1e-5, atol=1e-6, **attrs):
    model = _model(op, inputs, consts, n_out, opset, **attrs)
    path = str(tmp_path / 'm.onnx')
    onnx.save(model, path)
    expected = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, inputs)
    sym, arg_params, aux_params = mx.contrib.onnx.import_model(path)
    args = dict(arg_params, **{k: mx.nd.array(v, dtype=v.dtype) for k, v in inputs.items()})
    got = sym.bind(mx.current_context(), args=args, aux_states=aux_params).forward()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if op == 'Size':        # MXNet's size_array (as MXNet 1.9.1 imports Size) has shape (1,)
            e = e.reshape(1)
        assert g.shape == e.shape, (op, g.shape, e.shape)
        tolerance = kernel_tolerance(rtol, atol, np.abs(e).max()) if op in _CUDNN_OPS else dict(rtol=rtol, atol=atol)
        np.testing.assert_allclose(g.asnumpy().astype(e.dtype) if e.dtype == bool else g.asnumpy(), e,
                                   err_msg=op, **tolerance)


_i64 = lambda *v: np.array(v, dtype='int64')  # noqa: E731
_W = _f(5, 3, 3, 3)
_CASES = {
    'Conv': ({'x': _X}, {'w': _W, 'b': _f(5)}, dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])),
    'ConvTranspose': ({'x': _X}, {'w': _f(3, 2, 3, 3)}, dict(kernel_shape=[3, 3], strides=[2, 2],
                                                             output_padding=[1, 1])),
    'Gemm': ({'x': _f(2, 3)}, {'w': _f(4, 3), 'c': _f(4)}, dict(transB=1)),
    'MatMul': ({'x': _f(2, 3, 4)}, {'w': _f(4, 5)}, {}),
    'MaxPool': ({'x': _X}, {}, dict(kernel_shape=[2, 2], strides=[2, 2])),
    'AveragePool': ({'x': _X}, {}, dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    'LpPool': ({'x': _X}, {}, dict(kernel_shape=[2, 2], strides=[2, 2], p=2)),
    'GlobalAveragePool': ({'x': _X}, {}, {}), 'GlobalMaxPool': ({'x': _X}, {}, {}),
    'GlobalLpPool': ({'x': _X}, {}, dict(p=2)),
    'BatchNormalization': ({'x': _X}, {'s': _f(3), 'b': _f(3), 'm': _f(3), 'v': _f(3, low=0.5, high=1.5)},
                           dict(epsilon=1e-3)),
    'InstanceNormalization': ({'x': _X}, {'s': _f(3), 'b': _f(3)}, {}),
    'LRN': ({'x': _X}, {}, dict(size=3, alpha=1e-3)),
    'Flatten': ({'x': _X}, {}, {}), 'Reshape': ({'x': _X}, {'s': _i64(2, -1, 4)}, {}),
    'Clip': ({'x': _X}, {'lo': np.array(-0.5, 'float32'), 'hi': np.array(0.3, 'float32')}, {}),
    'Pad': ({'x': _X}, {'p': _i64(0, 0, 1, 2, 0, 0, 2, 1)}, dict(mode='reflect')),
    'Cast': ({'x': _X}, {}, dict(to=TensorProto.INT32)),
    'Relu': ({'x': _X}, {}, {}), 'Sigmoid': ({'x': _X}, {}, {}), 'Tanh': ({'x': _X}, {}, {}),
    'Softplus': ({'x': _X}, {}, {}), 'Softsign': ({'x': _X}, {}, {}),
    'LeakyRelu': ({'x': _X}, {}, dict(alpha=0.2)), 'Elu': ({'x': _X}, {}, dict(alpha=0.7)),
    'Selu': ({'x': _X}, {}, {}), 'PRelu': ({'x': _X}, {'s': _f(3, 1, 1)}, {}),
    'HardSigmoid': ({'x': _X}, {}, dict(alpha=0.3)),
    'Add': ({'x': _X, 'z': _f(4)}, {}, {}), 'Sub': ({'x': _X, 'z': _f(3, 1, 1)}, {}, {}),
    'Mul': ({'x': _X, 'z': _f(4)}, {}, {}), 'Div': ({'x': _X, 'z': _f(4, low=1, high=2)}, {}, {}),
    'Pow': ({'x': _f(3, 4, low=0.5, high=2), 'z': _f(4)}, {}, {}),
    'Max': ({'x': _X, 'z': _f(4), 'u': _f(4, 1)}, {}, {}), 'Min': ({'x': _X, 'z': _f(4)}, {}, {}),
    'Sum': ({'x': _X, 'z': _f(4), 'u': _f(4, 1)}, {}, {}), 'Mean': ({'x': _X, 'z': _f(4), 'u': _f(4, 1)}, {}, {}),
    'Less': ({'x': _X, 'z': _f(4)}, {}, {}), 'Greater': ({'x': _X, 'z': _f(4)}, {}, {}),
    'Equal': ({'x': _i64(1, 2, 3), 'z': _i64(1, 0, 3)}, {}, {}),
    'And': ({'x': np.array([True, False, True]), 'z': np.array([True, True, False])}, {}, {}),
    'Or': ({'x': np.array([True, False, False]), 'z': np.array([True, True, False])}, {}, {}),
    'Xor': ({'x': np.array([True, False, False]), 'z': np.array([True, True, False])}, {}, {}),
    'Not': ({'x': np.array([True, False])}, {}, {}),
    'Exp': ({'x': _X}, {}, {}), 'Log': ({'x': _f(3, 4, low=0.1, high=2)}, {}, {}),
    'Sqrt': ({'x': _f(3, 4, low=0.1, high=2)}, {}, {}), 'Abs': ({'x': _X}, {}, {}), 'Neg': ({'x': _X}, {}, {}),
    'Reciprocal': ({'x': _f(3, 4, low=0.5, high=2)}, {}, {}), 'Ceil': ({'x': _X * 3}, {}, {}),
    'Floor': ({'x': _X * 3}, {}, {}), 'Sin': ({'x': _X}, {}, {}), 'Cos': ({'x': _X}, {}, {}),
    'Tan': ({'x': _X}, {}, {}), 'Asin': ({'x': _X * 0.9}, {}, {}), 'Acos': ({'x': _X * 0.9}, {}, {}),
    'Atan': ({'x': _X}, {}, {}), 'Identity': ({'x': _X}, {}, {}), 'Dropout': ({'x': _X}, {}, {}),
    'Concat': ({'x': _X, 'z': _f(2, 1, 4, 4)}, {}, dict(axis=1)),
    'Softmax': ({'x': _X}, {}, dict(axis=1)), 'LogSoftmax': ({'x': _X}, {}, {}), 'Hardmax': ({'x': _X}, {}, {}),
    'Transpose': ({'x': _X}, {}, dict(perm=[0, 2, 3, 1])),
    'ReduceMax': ({'x': _X}, {}, dict(axes=[1, 2])), 'ReduceMin': ({'x': _X}, {}, dict(axes=[3], keepdims=0)),
    'ReduceMean': ({'x': _X}, {}, dict(axes=[-1])), 'ReduceSum': ({'x': _X}, {'a': _i64(1)}, {}),
    'ReduceProd': ({'x': _X}, {}, dict(axes=[2])), 'ReduceLogSum': ({'x': _X + 2}, {}, dict(axes=[1])),
    'ReduceLogSumExp': ({'x': _X}, {}, dict(axes=[1])), 'ReduceSumSquare': ({'x': _X}, {}, dict(axes=[1])),
    'ArgMax': ({'x': _X}, {}, dict(axis=1)), 'ArgMin': ({'x': _X}, {}, dict(axis=2, keepdims=0)),
    'Squeeze': ({'x': _f(2, 1, 3)}, {'a': _i64(1)}, {}), 'Unsqueeze': ({'x': _f(2, 3)}, {'a': _i64(0, 3)}, {}),
    'Slice': ({'x': _X}, {'s': _i64(1, 0), 'e': _i64(3, -1), 'a': _i64(1, 3)}, {}),
    'Shape': ({'x': _X}, {}, {}), 'Size': ({'x': _X}, {}, {}),
    'Gather': ({'x': _X}, {'i': _i64(2, 0)}, dict(axis=1)),
    'DepthToSpace': ({'x': _f(1, 8, 2, 3)}, {}, dict(blocksize=2)),
    'SpaceToDepth': ({'x': _f(1, 2, 4, 6)}, {}, dict(blocksize=2)),
    'LpNormalization': ({'x': _X}, {}, dict(axis=1)),
    'MaxRoiPool': ({'x': _X}, {'r': np.array([[0, 0, 0, 3, 3], [1, 1, 0, 2, 3]], 'float32')},
                   dict(pooled_shape=[2, 2])),
}


# beyond MXNet 1.9.1's list: operators neomx's own export writes
_CASES.update({
    'Erf': ({'x': _X}, {}, {}), 'Sign': ({'x': _X}, {}, {}), 'Round': ({'x': _X * 3}, {}, {}),
    'Tile': ({'x': _f(2, 3)}, {'r': _i64(2, 1)}, {}), 'Expand': ({'x': _f(3, 1)}, {'s': _i64(2, 3, 4)}, {}),
    'ConstantOfShape': ({}, {'s': _i64(2, 3)}, dict(value=numpy_helper.from_array(np.array([1.5], 'float32')))),
    'Range': ({}, {'a': np.array(1.0, 'float32'), 'b': np.array(7.0, 'float32'), 'c': np.array(1.5, 'float32')},
              {}),
})


@pytest.mark.parametrize('op', sorted(_CASES))
def test_imported_operator_equals_onnxruntime(op, tmp_path):
    inputs, consts, attrs = _CASES[op]
    _check(tmp_path, op, inputs, consts, **attrs)


def test_asymmetric_pads_pad_first(tmp_path):
    _check(tmp_path, 'Conv', {'x': _X}, {'w': _W}, kernel_shape=[3, 3], pads=[0, 1, 1, 2])
    _check(tmp_path, 'MaxPool', {'x': _X}, kernel_shape=[2, 2], pads=[0, 0, 1, 1], strides=[2, 2])
    with pytest.raises(mx.MXNetError, match=r"node 'n' \(AveragePool\): .*asymmetric pads"):
        path = str(tmp_path / 'a.onnx')
        onnx.save(_model('AveragePool', {'x': _X}, kernel_shape=[2, 2], pads=[0, 0, 1, 1]), path)
        mx.contrib.onnx.import_model(path)


def test_split_topk_and_multiple_outputs(tmp_path):
    _check(tmp_path, 'Split', {'x': _f(6, 4)}, {'s': _i64(2, 4)}, n_out=2)
    _check(tmp_path, 'Split', {'x': _f(6, 4)}, n_out=3, axis=0)
    _check(tmp_path, 'TopK', {'x': _f(3, 5)}, {'k': _i64(2)}, n_out=2)


def test_opset_11_attribute_forms(tmp_path):
    _check(tmp_path, 'Squeeze', {'x': _f(2, 1, 3)}, opset=11, axes=[1])
    _check(tmp_path, 'Unsqueeze', {'x': _f(2, 3)}, opset=11, axes=[1])
    _check(tmp_path, 'ReduceSum', {'x': _X}, opset=11, axes=[2, 3])
    _check(tmp_path, 'Split', {'x': _f(6, 4)}, n_out=2, opset=11, split=[1, 5])
    _check(tmp_path, 'Softmax', {'x': _X}, opset=11)


def test_constant_node_feeds_an_operator(tmp_path):
    const = helper.make_node('Constant', [], ['c'], value=numpy_helper.from_array(_f(4), 'c'))
    add = helper.make_node('Add', ['x', 'c'], ['y'])
    graph = helper.make_graph([const, add], 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, _X.shape)],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
    path = str(tmp_path / 'c.onnx')
    onnx.save(helper.make_model_gen_version(graph, opset_imports=[helper.make_opsetid('', 13)]), path)
    block = mx.contrib.onnx.import_to_gluon(path, mx.current_context())
    expected = ort.InferenceSession(path).run(None, {'x': _X})[0]
    np.testing.assert_allclose(block(mx.nd.array(_X)).asnumpy(), expected, rtol=1e-6)


@pytest.mark.parametrize('op,attrs,shape', [('RandomUniform', dict(shape=[3, 4], low=2.0, high=3.0), (3, 4)),
                                            ('RandomNormal', dict(shape=[50, 40], mean=1.0), (50, 40))])
def test_random_operators(op, attrs, shape, tmp_path):
    graph = helper.make_graph([helper.make_node(op, [], ['y'], **attrs)], 'g', [],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
    path = str(tmp_path / 'r.onnx')
    onnx.save(helper.make_model(graph), path)
    sym, _, _ = mx.contrib.onnx.import_model(path)
    out = sym.bind(mx.cpu(), args={}).forward()[0].asnumpy()
    assert out.shape == shape
    if op == 'RandomUniform':
        assert out.min() >= 2.0 and out.max() <= 3.0
    else:
        assert abs(out.mean() - 1.0) < 0.1


def test_random_like_and_multinomial(tmp_path):
    for op, extra in (('RandomUniformLike', {}), ('RandomNormalLike', {}), ('Multinomial', dict(sample_size=3))):
        x = _f(2, 5) if op != 'Multinomial' else np.log(np.full((2, 5), 0.2, 'float32'))
        model = _model(op, {'x': x}, **extra)
        path = str(tmp_path / 'r.onnx')
        onnx.save(model, path)
        sym, _, _ = mx.contrib.onnx.import_model(path)
        out = sym.bind(mx.cpu(), args={'x': mx.nd.array(x)}).forward()[0]
        assert out.shape == ((2, 3) if op == 'Multinomial' else (2, 5)), op


def _zoo_round_trip(name, size, tmp_path):
    net = mx.gluon.model_zoo.vision.get_model(name)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(1, 3, size, size))
    ref = net(x).asnumpy()
    net.export(str(tmp_path / name))
    path = mx.onnx.export_model(str(tmp_path / (name + '-symbol.json')), str(tmp_path / (name + '-0000.params')),
                                [x.shape], np.float32, str(tmp_path / (name + '.onnx')))
    # the imported graph computes the same operators, possibly grouped otherwise (BatchNorm folded
    # into a convolution's filters or not), which TF32 convolutions on a GPU tell apart
    scale = max(1.0, np.abs(ref).max())
    tolerance = kernel_tolerance(1e-5, 1e-5 * scale, scale)
    block = mx.contrib.onnx.import_to_gluon(path, mx.current_context())
    np.testing.assert_allclose(block(x).asnumpy(), ref, **tolerance)
    sym, arg_params, aux_params = mx.contrib.onnx.import_model(path)
    out = sym.bind(mx.current_context(), args=dict(arg_params, data=x), aux_states=aux_params).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), ref, **tolerance)


@pytest.mark.parametrize('name,size', [('resnet18_v1', 32), ('mobilenet0.25', 32)])
def test_model_zoo_export_then_import_gives_the_same_outputs(name, size, tmp_path):
    _zoo_round_trip(name, size, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize('name,size', [('resnet18_v2', 32), ('mobilenetv2_0.25', 32), ('squeezenet1.1', 224),
                                       ('vgg11_bn', 32), ('densenet121', 224), ('alexnet', 224),
                                       ('inceptionv3', 299)])
def test_more_model_zoo_round_trips(name, size, tmp_path):
    _zoo_round_trip(name, size, tmp_path)


def test_corrupt_file_names_the_file_and_the_offset(tmp_path):
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 4)))
    net.export(str(tmp_path / 'd'))
    good = mx.onnx.export_model(str(tmp_path / 'd-symbol.json'), str(tmp_path / 'd-0000.params'), [(1, 4)],
                                np.float32, str(tmp_path / 'd.onnx'))
    data = open(good, 'rb').read()
    truncated = tmp_path / 'truncated.onnx'
    truncated.write_bytes(data[:len(data) - 7])
    with pytest.raises(mx.MXNetError, match=r"'%s' is not a readable ONNX file: .* at byte offset \d+"
                       % str(truncated).replace('\\', '\\\\')) as info:
        mx.contrib.onnx.import_model(str(truncated))
    offset = int(str(info.value).split('byte offset ')[1].split(' ')[0])
    assert 0 <= offset < len(data) - 7
    garbage = tmp_path / 'garbage.onnx'
    garbage.write_bytes(b'\x08\x07\x3a\x40\x0a')
    with pytest.raises(mx.MXNetError, match=r"field 7 \(graph\) declares 64 bytes, 1 remain at byte offset 3"):
        mx.contrib.onnx.get_model_metadata(str(garbage))
    with pytest.raises(mx.MXNetError, match='cannot read ONNX file'):
        mx.contrib.onnx.import_model(str(tmp_path / 'missing.onnx'))


def test_operator_needing_a_constant_input_is_a_clear_error(tmp_path):
    model = _model('Reshape', {'x': _X, 's': _i64(2, -1)})
    path = str(tmp_path / 'r.onnx')
    onnx.save(model, path)
    with pytest.raises(mx.MXNetError, match=r"node 'n' \(Reshape\): .*constant value of its input 's'"):
        mx.contrib.onnx.import_model(path)
