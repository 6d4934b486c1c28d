"""mx.onnx export (and mx.contrib.onnx import): files pass onnx.checker and run in onnxruntime
equal to neomx."""
import numpy as np
import pytest

import neomx as mx

from device_tolerance import kernel_tolerance

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')


def _export_and_run(sym, params, inputs, path, **kwargs):
    shapes = [v.shape for v in inputs.values()]
    out = mx.onnx.export_model(sym, params, shapes, np.float32, str(path), **kwargs)
    assert out == str(path)
    onnx.checker.check_model(out)
    session = ort.InferenceSession(out)
    return session.run(None, {k: v.asnumpy() for k, v in inputs.items()})


def _zoo_check(name, size, tmp_path):
    net = mx.gluon.model_zoo.vision.get_model(name)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(1, 3, size, size))
    ref = net(x).asnumpy()
    sym = net(mx.sym.var('data'))
    params = {p.name: p.data() for p in net.collect_params().values()}
    (got,) = _export_and_run(sym, params, {'data': x}, tmp_path / (name + '.onnx'))
    scale = max(1.0, np.abs(ref).max())
    np.testing.assert_allclose(got, ref, **kernel_tolerance(1e-5, 1e-5 * scale, scale))


@pytest.mark.parametrize('name,size', [('resnet18_v1', 32), ('mobilenet0.25', 32)])
def test_export_model_zoo_nets_run_equal_in_onnxruntime(name, size, tmp_path):
    _zoo_check(name, size, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize('name,size', [('resnet18_v2', 64), ('resnet50_v1', 64), ('mobilenetv2_0.25', 64),
                                       ('alexnet', 224), ('vgg11_bn', 32), ('inceptionv3', 299),
                                       ('squeezenet1.1', 224), ('densenet121', 224)])
def test_export_more_model_zoo_nets(name, size, tmp_path):
    _zoo_check(name, size, tmp_path)


def test_export_from_files_and_arg_aux_lists(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, padding=1, in_channels=2), mx.gluon.nn.BatchNorm(),
            mx.gluon.nn.LeakyReLU(0.1), mx.gluon.nn.MaxPool2D(ceil_mode=True), mx.gluon.nn.Dropout(0.5),
            mx.gluon.nn.Flatten(), mx.gluon.nn.Dense(5, activation='tanh'))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 2, 7, 7))
    ref = net(x).asnumpy()
    net.export(str(tmp_path / 'm'))
    (got,) = _export_and_run(str(tmp_path / 'm-symbol.json'), str(tmp_path / 'm-0000.params'), {'data': x},
                             tmp_path / 'a.onnx')
    tolerance = kernel_tolerance(1e-5, 1e-5)      # onnxruntime on the CPU, neomx on the current context
    np.testing.assert_allclose(got, ref, **tolerance)
    sym = mx.sym.load(str(tmp_path / 'm-symbol.json'))
    saved = mx.nd.load(str(tmp_path / 'm-0000.params'))
    arg = {k[4:]: v for k, v in saved.items() if k.startswith('arg:')}
    aux = {k[4:]: v for k, v in saved.items() if k.startswith('aux:')}
    (got,) = _export_and_run(sym, [arg, aux], {'data': x}, tmp_path / 'b.onnx', dynamic=True)
    np.testing.assert_allclose(got, ref, **tolerance)


def test_export_symbol_arithmetic_and_shapes(tmp_path):
    a, b = mx.sym.var('a'), mx.sym.var('b')
    out = mx.sym.softmax(mx.sym.broadcast_add(a, b) * 2 - 1, axis=-1)
    out = mx.sym.concat(out, mx.sym.clip(a, 0.1, 0.5), dim=1)
    out = mx.sym.transpose(mx.sym.reshape(out, shape=(0, -1)), axes=(1, 0))
    out = mx.sym.sum(out, axis=0, keepdims=True) + mx.sym.mean(out, axis=0, keepdims=True)
    xa, xb = mx.nd.random.uniform(shape=(3, 4)), mx.nd.random.uniform(shape=(1, 4))
    ref = out.eval(a=xa, b=xb)[0].asnumpy()
    (got,) = _export_and_run(out, {}, {'a': xa, 'b': xb}, tmp_path / 'c.onnx')
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_export_refuses_an_operator_without_converter(tmp_path):
    sym = mx.sym.linalg.potrf(mx.sym.var('x'))
    with pytest.raises(mx.MXNetError, match="operator '_linalg_potrf'"):
        mx.onnx.export_model(sym, {}, [(2, 5)], np.float32, str(tmp_path / 'x.onnx'))


def test_export_input_count_mismatch_is_an_error(tmp_path):
    sym = mx.sym.var('x') + mx.sym.var('y')
    with pytest.raises(mx.MXNetError, match='inputs'):
        mx.onnx.export_model(sym, {}, [(2, 5)], np.float32, str(tmp_path / 'x.onnx'))


def test_get_operator_support():
    ops = mx.onnx.get_operator_support()
    for op in ('Convolution', 'FullyConnected', 'BatchNorm', 'Pooling', 'Activation', 'Concat', 'softmax'):
        assert op in ops
    assert ops == sorted(ops)
    assert mx.onnx.get_operator_support(11) == []


def _small_net():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, padding=1, in_channels=3), mx.gluon.nn.BatchNorm(in_channels=4),
            mx.gluon.nn.Activation('relu'), mx.gluon.nn.AvgPool2D(), mx.gluon.nn.GlobalMaxPool2D(),
            mx.gluon.nn.Flatten(), mx.gluon.nn.Dense(3, in_units=4))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def test_export_then_import_gives_the_same_outputs(tmp_path):
    net = _small_net()
    x = mx.nd.random.uniform(shape=(2, 3, 8, 8))
    ref = net(x).asnumpy()
    net.export(str(tmp_path / 'm'))
    path = mx.onnx.export_model(str(tmp_path / 'm-symbol.json'), str(tmp_path / 'm-0000.params'),
                                [(2, 3, 8, 8)], np.float32, str(tmp_path / 'm.onnx'))
    sym, arg_params, aux_params = mx.contrib.onnx.import_model(path)
    assert sorted(aux_params) == sorted(k for k in net.collect_params() if 'running' in k)
    args = dict(arg_params, data=x)
    out = sym.bind(mx.current_context(), args=args, aux_states=aux_params).forward()[0]
    # the same operators, possibly grouped otherwise (BatchNorm folded into the convolution's
    # filters or not), which TF32 convolutions on a GPU tell apart
    tolerance = kernel_tolerance(1e-5, 1e-6)
    np.testing.assert_allclose(out.asnumpy(), ref, **tolerance)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta['input_tensor_data'] == [('data', (2, 3, 8, 8))]
    assert meta['output_tensor_data'][0][1] == (2, 3)
    block = mx.contrib.onnx.import_to_gluon(path, mx.current_context())
    np.testing.assert_allclose(block(x).asnumpy(), ref, **tolerance)


def test_import_of_a_corrupt_file_is_an_error(tmp_path):
    bad = tmp_path / 'bad.onnx'
    bad.write_bytes(b'\x08\x07not an onnx model at all\xff\xff')
    with pytest.raises(mx.MXNetError, match='not a readable ONNX file'):
        mx.contrib.onnx.import_model(str(bad))


def test_import_refuses_an_operator_without_equivalent(tmp_path):
    from onnx import helper, TensorProto
    node = helper.make_node('Einsum', ['x'], ['y'], name='hm', equation='ij->ji')
    graph = helper.make_graph([node], 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 3])])
    path = str(tmp_path / 'h.onnx')
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(mx.MXNetError, match="'Einsum'"):
        mx.contrib.onnx.import_model(path)
