"""Writes the export/import fixtures of tests/test_export.py (not imported by the tests).

The same small CNN (Conv2D, BatchNorm, relu, MaxPool2D, Flatten, Dense) is built with
deterministic weights by MXNet 1.9.1 (the oracle) and by neomx; MXNet also exports an
LSTM layer without begin states (its graph creates them as ``zeros`` of batch size 0, left
to shape inference) with its outputs at two batch sizes (``lstm_outputs.npz``):

    ~/mxref/bin/python tests/data/make_fixtures.py mxnet   # mxnet_cnn-* and cnn_*.npy
    python tests/data/make_fixtures.py neomx               # neomx_cnn-*
    ~/mxref/bin/python tests/data/make_fixtures.py check   # MXNet loads neomx's export

``mxnet`` exports the hybridized model and saves its input and outputs (prediction and
training mode); ``neomx`` exports the same model; ``check`` imports neomx's files into
MXNet (``SymbolBlock.imports`` and ``load_checkpoint`` + ``bind``) and compares the outputs
with MXNet's own.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INPUT_SHAPE = (2, 3, 6, 6)


def build_cnn(mx):
    """The hybridized CNN with deterministic parameters, after one call on the input."""
    nn = mx.gluon.nn
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
                    nn.MaxPool2D(2), nn.Flatten(), nn.Dense(5))
    return _deterministic(mx, net, cnn_input())


def _deterministic(mx, net, x):
    """``net`` initialized, hybridized and called on ``x`` (completing the deferred shapes),
    with parameters set to fixed values."""
    net.initialize()
    net.hybridize()
    net(mx.nd.array(x))
    for i, param in enumerate(net.collect_params().values()):
        n = int(np.prod(param.shape))
        value = (np.sin(np.arange(n) * 0.37 + i) * 0.5).reshape(param.shape)
        param.set_data(mx.nd.array(np.abs(value) + 0.5 if param.grad_req == 'null' else value))
    return net


LSTM_BATCHES = (2, 3)


def build_lstm(mx):
    """LSTM(8) over (batch, 4 steps, 3 features) then Dense(2) per step, no begin states."""
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.rnn.LSTM(8, layout='NTC'), mx.gluon.nn.Dense(2, flatten=False))
    return _deterministic(mx, net, lstm_input(LSTM_BATCHES[0]))


def lstm_input(batch):
    return np.random.RandomState(batch).uniform(-1, 1, size=(batch, 4, 3)).astype('float32')


def cnn_input():
    return np.random.RandomState(7).uniform(-1, 1, size=INPUT_SHAPE).astype('float32')


def outputs(mx, net):
    """(prediction-mode output, training-mode output) on the fixed input."""
    x = mx.nd.array(cnn_input())
    predicted = net(x).asnumpy()
    with mx.autograd.record():
        trained = net(x).asnumpy()
    return predicted, trained


def write_mxnet():
    import mxnet as mx
    net = build_cnn(mx)
    predicted, trained = outputs(mx, net)
    net.export(os.path.join(HERE, 'mxnet_cnn'))
    np.save(os.path.join(HERE, 'cnn_input.npy'), cnn_input())
    np.save(os.path.join(HERE, 'cnn_output.npy'), predicted)
    np.save(os.path.join(HERE, 'cnn_output_train.npy'), trained)
    lstm = build_lstm(mx)
    lstm.export(os.path.join(HERE, 'mxnet_lstm'))
    np.savez(os.path.join(HERE, 'lstm_outputs.npz'),
             **{'batch%d' % b: lstm(mx.nd.array(lstm_input(b))).asnumpy() for b in LSTM_BATCHES})


def write_neomx():
    sys.path.insert(0, os.path.join(HERE, '..', '..'))
    import neomx as mx
    build_cnn(mx).export(os.path.join(HERE, 'neomx_cnn'))


def check_with_mxnet():
    import mxnet as mx
    expected = np.load(os.path.join(HERE, 'cnn_output.npy'))
    prefix = os.path.join(HERE, 'neomx_cnn')
    block = mx.gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data'], prefix + '-0000.params')
    imported = block(mx.nd.array(cnn_input())).asnumpy()
    sym, args, auxs = mx.model.load_checkpoint(prefix, 0)
    args['data'] = mx.nd.array(cnn_input())
    executor = sym.bind(mx.cpu(), args, aux_states=auxs, grad_req='null')
    bound = executor.forward(is_train=False)[0].asnumpy()
    for what, got in (('SymbolBlock.imports', imported), ('load_checkpoint + bind', bound)):
        print('%s: max abs difference %.3g' % (what, np.abs(got - expected).max()))
        assert np.allclose(got, expected, rtol=1e-5, atol=1e-6), what


if __name__ == '__main__':
    {'mxnet': write_mxnet, 'neomx': write_neomx, 'check': check_with_mxnet}[sys.argv[1]]()
