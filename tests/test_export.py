"""HybridBlock.export, SymbolBlock and SymbolBlock.imports, with files of MXNet 1.9.1.

tests/data/ holds a small CNN exported by MXNet 1.9.1 (``mxnet_cnn-*``, with its input and
outputs as .npy) and the same model exported by neomx (``neomx_cnn-*``, which MXNet 1.9.1
loads and runs to the same outputs); tests/data/make_fixtures.py wrote them.
"""
import json
import os

import numpy as np
import pytest

import neomx as mx
from neomx.gluon import nn

from device_tolerance import kernel_tolerance

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
MXNET_PREFIX = os.path.join(DATA, 'mxnet_cnn')
NEOMX_PREFIX = os.path.join(DATA, 'neomx_cnn')


def _fixture(name):
    return np.load(os.path.join(DATA, name))


def _read(path, mode='r'):
    with open(path, mode) as f:
        return f.read()


def _exported_cnn():
    """make_fixtures.py's CNN (same names, same architecture), hybridized and called once,
    with the parameters MXNet exported."""
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
                    nn.MaxPool2D(2), nn.Flatten(), nn.Dense(5))
    net.initialize()
    net.hybridize()
    net(mx.nd.array(_fixture('cnn_input.npy')))
    net.collect_params().load(MXNET_PREFIX + '-0000.params')
    return net


def _cnn_tolerance(expected):
    return kernel_tolerance(1e-5, 1e-6, scale=np.abs(expected).max())


def test_imports_mxnet_export_gives_mxnet_outputs():
    block = mx.gluon.SymbolBlock.imports(MXNET_PREFIX + '-symbol.json', ['data'],
                                         MXNET_PREFIX + '-0000.params', ctx=mx.current_context())
    x = mx.nd.array(_fixture('cnn_input.npy'))
    expected = _fixture('cnn_output.npy')
    np.testing.assert_allclose(block(x).asnumpy(), expected, **_cnn_tolerance(expected))
    with mx.autograd.record():
        trained = block(x)
    expected = _fixture('cnn_output_train.npy')
    np.testing.assert_allclose(trained.asnumpy(), expected, **_cnn_tolerance(expected))
    assert block.collect_params()['hybridsequential0_conv0_weight'].data().shape == (4, 3, 3, 3)
    assert block.collect_params()['hybridsequential0_batchnorm0_running_var'].grad_req == 'null'


def test_load_checkpoint_of_mxnet_export_binds_and_runs():
    sym, args, auxs = mx.model.load_checkpoint(MXNET_PREFIX, 0)
    assert sorted(auxs) == ['hybridsequential0_batchnorm0_running_mean',
                            'hybridsequential0_batchnorm0_running_var']
    here = mx.current_context()         # the checkpoint loads on cpu; MXNet binds all arguments on one context
    args = {k: v.as_in_context(here) for k, v in args.items()}
    auxs = {k: v.as_in_context(here) for k, v in auxs.items()}
    args['data'] = mx.nd.array(_fixture('cnn_input.npy'))
    out = sym.bind(here, args, aux_states=auxs, grad_req='null').forward()[0]
    expected = _fixture('cnn_output.npy')
    np.testing.assert_allclose(out.asnumpy(), expected, **_cnn_tolerance(expected))


def test_export_writes_the_recorded_files(tmp_path):
    prefix = str(tmp_path / 'cnn')
    _exported_cnn().export(prefix)
    params = _read(prefix + '-0000.params', 'rb')
    assert params == _read(NEOMX_PREFIX + '-0000.params', 'rb')
    assert params == _read(MXNET_PREFIX + '-0000.params', 'rb')     # byte for byte MXNet's
    text = _read(prefix + '-symbol.json')
    assert text == _read(NEOMX_PREFIX + '-symbol.json')


def test_exported_graph_is_byte_for_byte_mxnets():
    # including node_row_ptr, which counts the hidden workspace output of oneDNN max pooling
    assert _read(NEOMX_PREFIX + '-symbol.json') == _read(MXNET_PREFIX + '-symbol.json')


def test_pooling_workspace_counts_only_for_max_pooling():
    spec = mx.operator.registry.get('Pooling')
    recorded = [spec.count_recorded(spec.parse_attrs(dict(kernel=(2, 2), pool_type=t))) for t in ('max', 'avg')]
    assert recorded == [2, 1]
    assert spec.count_recorded(spec.parse_attrs(dict(kernel=(2, 2), layout='NHWC'))) == 1


def test_export_epoch_names_arg_and_aux(tmp_path):
    net = _exported_cnn()
    net.export(str(tmp_path / 'net'), epoch=12)
    assert sorted(os.listdir(tmp_path)) == ['net-0012.params', 'net-symbol.json']
    keys = list(mx.nd.load(str(tmp_path / 'net-0012.params')))
    assert keys[:3] == ['arg:hybridsequential0_conv0_weight', 'arg:hybridsequential0_conv0_bias',
                        'arg:hybridsequential0_batchnorm0_gamma']
    assert 'aux:hybridsequential0_batchnorm0_running_mean' in keys


def test_export_writes_parameters_in_graph_input_order(tmp_path):
    # MXNet 1.9.1 writes the parameters in the order of the graph's inputs, not of
    # collect_params() (here observed with the oracle on the same block).
    class Net(mx.gluon.HybridBlock):
        """Children registered in another order than the graph uses them."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.late = nn.Dense(3)
                self.early = nn.Dense(4)
                self.bn = nn.BatchNorm()

        def hybrid_forward(self, F, x):  # pylint: disable=arguments-differ
            return self.late(self.bn(self.early(x)))

    with mx.name.NameManager():
        net = Net()
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((2, 5)))
    net.export(str(tmp_path / 'net'))
    assert list(mx.nd.load(str(tmp_path / 'net-0000.params'))) == [
        'arg:net0_dense1_weight', 'arg:net0_dense1_bias', 'arg:net0_batchnorm0_gamma',
        'arg:net0_batchnorm0_beta', 'aux:net0_batchnorm0_running_mean',
        'aux:net0_batchnorm0_running_var', 'arg:net0_dense0_weight', 'arg:net0_dense0_bias']
    assert list(net.collect_params())[0] == 'net0_dense0_weight'


def test_export_needs_a_traced_graph(tmp_path):
    dense = nn.Dense(2, in_units=2)
    dense.initialize()
    dense(mx.nd.ones((1, 2)))
    with pytest.raises(RuntimeError, match='hybridize'):
        dense.export(str(tmp_path / 'dense'))


def test_round_trip_keeps_outputs_and_gradients(tmp_path):
    net = _exported_cnn()
    x = mx.nd.array(_fixture('cnn_input.npy'))
    net.export(str(tmp_path / 'cnn'))
    block = mx.gluon.SymbolBlock.imports(str(tmp_path / 'cnn-symbol.json'), 'data',
                                         str(tmp_path / 'cnn-0000.params'), ctx=mx.current_context())
    grads = []
    for model in (net, block):
        with mx.autograd.record():
            out = model(x)
        out.backward()
        grads.append(model.collect_params()['hybridsequential0_dense0_weight'].grad().asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_symbolblock_with_two_inputs_and_outputs():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    total = mx.sym.FullyConnected(a, num_hidden=2, name='fc') + b
    block = mx.gluon.SymbolBlock([total, mx.sym.relu(b)], [a, b])
    block.initialize(mx.init.One())
    out, relu = block(mx.nd.ones((1, 3)), mx.nd.array([[-1.0, 1.0]]))
    np.testing.assert_array_equal(out.asnumpy(), [[3.0, 5.0]])
    np.testing.assert_array_equal(relu.asnumpy(), [[0.0, 1.0]])
    assert sorted(block.collect_params()) == ['fc_bias', 'fc_weight']
    assert sorted(block._reg_params) == ['bias', 'weight']       # common prefix stripped
    with pytest.raises(ValueError, match='input format'):
        block(mx.nd.ones((1, 3)), [mx.nd.ones((1, 2))])


def test_symbolblock_called_on_symbols_composes_its_graph():
    data = mx.sym.var('data')
    block = mx.gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), data)
    composed = block(mx.sym.var('features') * 2)
    assert composed.list_arguments() == ['features', 'fc_weight', 'fc_bias']
    block.hybridize()
    block.initialize()
    assert block(mx.nd.ones((3, 4))).shape == (3, 2)


def test_symbolblock_shares_the_parameters_it_is_given():
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(3, activation='relu', in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    data = mx.sym.var('data')
    features = net(data).get_internals()['hybridsequential0_dense0_relu_fwd_output']
    block = mx.gluon.SymbolBlock(features, data, params=net.collect_params())
    x = mx.nd.array([[0.5, -1.0]])
    np.testing.assert_array_equal(block(x).asnumpy(), net[0](x).asnumpy())
    net[0].weight.set_data(mx.nd.ones((3, 2)))
    np.testing.assert_array_equal(block(x).asnumpy(), net[0](x).asnumpy())


# ----------------------------------------------- RNN layers without begin states
MXNET_LSTM = os.path.join(DATA, 'mxnet_lstm')
LSTM_BATCHES = (2, 3)


def _lstm_input(batch):
    """make_fixtures.py's LSTM input for ``batch``."""
    return np.random.RandomState(batch).uniform(-1, 1, size=(batch, 4, 3)).astype('float32')


def test_imports_mxnet_lstm_whose_begin_states_wait_for_the_batch_size():
    # MXNet's graph creates the begin states as zeros of shape (1, 0, 8): the batch size
    # comes from shape inference, for each batch size.
    block = mx.gluon.SymbolBlock.imports(MXNET_LSTM + '-symbol.json', ['data'], MXNET_LSTM + '-0000.params',
                                         ctx=mx.current_context())
    expected = _fixture('lstm_outputs.npz')
    for batch in LSTM_BATCHES + LSTM_BATCHES:
        np.testing.assert_allclose(block(mx.nd.array(_lstm_input(batch))).asnumpy(),
                                   expected['batch%d' % batch], **kernel_tolerance(1e-5, 1e-6))


def test_lstm_export_is_byte_for_byte_mxnets(tmp_path):
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.rnn.LSTM(8, layout='NTC'), nn.Dense(2, flatten=False))
    net.initialize()
    net.hybridize()
    net(mx.nd.array(_lstm_input(2)))
    net.collect_params().load(MXNET_LSTM + '-0000.params')
    expected = _fixture('lstm_outputs.npz')
    for batch in LSTM_BATCHES:
        np.testing.assert_allclose(net(mx.nd.array(_lstm_input(batch))).asnumpy(),
                                   expected['batch%d' % batch], **kernel_tolerance(1e-5, 1e-6))
    net.export(str(tmp_path / 'lstm'))
    assert _read(str(tmp_path / 'lstm-symbol.json')) == _read(MXNET_LSTM + '-symbol.json')
    assert _read(str(tmp_path / 'lstm-0000.params'), 'rb') == _read(MXNET_LSTM + '-0000.params', 'rb')
