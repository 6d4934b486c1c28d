"""Writes the export/import fixtures of tests/test_export.py (not imported by the tests).

The same small CNN (Conv2D, BatchNorm, relu, MaxPool2D, Flatten, Dense) is built with
deterministic weights by MXNet 1.9.1 (the oracle) and by neomx; MXNet also exports an
LSTM layer without begin states (its graph creates them as ``zeros`` of batch size 0, left
to shape inference) with its outputs at two batch sizes (``lstm_outputs.npz``):

    ~/mxref/bin/python tests/data/make_fixtures.py mxnet   # mxnet_cnn-* and cnn_*.npy
    python tests/data/make_fixtures.py neomx               # neomx_cnn-*
    ~/mxref/bin/python tests/data/make_fixtures.py check   # MXNet loads neomx's export
    ~/mxref/bin/python tests/data/make_fixtures.py states  # mxnet_mlp-*, mxnet_trainer*: states

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


def build_module(mx):
    """A Module over a small MLP (SGD with momentum and weight decay), parameters fixed."""
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=6, name='fc1')
    net = mx.sym.Activation(net, act_type='tanh', name='tanh1')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=3, name='fc2'), name='softmax')
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('softmax_label', (4,))])
    mod.init_params(mx.init.Constant(0.1))
    args, _ = mod.get_params()
    for i, (name, value) in enumerate(sorted(args.items())):
        args[name] = mx.nd.array(np.sin(np.arange(value.size) * 0.7 + i).reshape(value.shape))
    mod.set_params(args, {})
    return mod


def module_batches(mx):
    """Three batches of the module's data."""
    rs = np.random.RandomState(3)
    return [mx.io.DataBatch([mx.nd.array(rs.uniform(-1, 1, (4, 5)))], [mx.nd.array(rs.randint(0, 3, 4))])
            for _ in range(3)]


MODULE_OPTIMIZER = ('sgd', (('learning_rate', 0.1), ('momentum', 0.9), ('wd', 0.01)))


def write_states():
    """MXNet trains the module two steps and checkpoints it with its optimizer states, then
    takes a third step; the parameters after it are what resuming must reach."""
    import mxnet as mx
    mod = build_module(mx)
    mod.init_optimizer(optimizer=MODULE_OPTIMIZER[0], optimizer_params=MODULE_OPTIMIZER[1])
    batches = module_batches(mx)
    for batch in batches:
        if batch is batches[2]:
            mod.save_checkpoint(os.path.join(HERE, 'mxnet_mlp'), 2, save_optimizer_states=True)
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    np.savez(os.path.join(HERE, 'mxnet_mlp_step3.npz'),
             **{k: v.asnumpy() for k, v in mod.get_params()[0].items()})


def build_gluon_mlp(mx):
    """Dense(4, tanh) -> Dense(2) on 3 features, deterministic parameters."""
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(4, activation='tanh', in_units=3), mx.gluon.nn.Dense(2, in_units=4))
    net.initialize()
    for i, param in enumerate(net.collect_params().values()):
        param.set_data(mx.nd.array(np.cos(np.arange(param.data().size) * 0.9 + i).reshape(param.shape)))
    return net


def gluon_batches():
    rs = np.random.RandomState(5)
    return [(rs.uniform(-1, 1, (6, 3)).astype('float32'), rs.uniform(-1, 1, (6, 2)).astype('float32'))
            for _ in range(3)]


TRAINER_OPTIMIZER = ('adam', {'learning_rate': 0.05, 'wd': 0.01})


def gluon_step(mx, net, trainer, batch):
    data, label = batch
    with mx.autograd.record():
        loss = mx.gluon.loss.L2Loss()(net(mx.nd.array(data)), mx.nd.array(label))
    loss.backward()
    trainer.step(data.shape[0])


def write_trainer_states():
    """MXNet's Trainer (Adam) after two steps: its parameters and states (with the pickled
    optimizer, as Trainer.save_states writes them); then the parameters after a third."""
    import mxnet as mx
    net = build_gluon_mlp(mx)
    trainer = mx.gluon.Trainer(net.collect_params(), *TRAINER_OPTIMIZER)
    batches = gluon_batches()
    for batch in batches[:2]:
        gluon_step(mx, net, trainer, batch)
    net.save_parameters(os.path.join(HERE, 'mxnet_trainer.params'))
    trainer.save_states(os.path.join(HERE, 'mxnet_trainer.states'))
    gluon_step(mx, net, trainer, batches[2])
    np.savez(os.path.join(HERE, 'mxnet_trainer_step3.npz'),
             **{k: v.data().asnumpy() for k, v in net.collect_params().items()})


if __name__ == '__main__':
    {'mxnet': write_mxnet, 'neomx': write_neomx, 'check': check_with_mxnet,
     'states': lambda: (write_states(), write_trainer_states())}[sys.argv[1]]()
