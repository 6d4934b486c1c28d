"""gluon.Trainer's parameter indices and saved states, against MXNet 1.9.1's files.

The fixtures (tests/data/make_fixtures.py ``states``): MXNet trained a small MLP two Adam
steps, saved its parameters and ``Trainer.save_states`` (pickled states and optimizer),
then took a third step (``mxnet_trainer_step3.npz``).
"""
import os

import numpy as np
import pytest

import neomx as mx

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')


def _mlp():
    with mx.name.NameManager():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(4, activation='tanh', in_units=3), mx.gluon.nn.Dense(2, in_units=4))
    net.initialize()
    return net


def _third_step(net, trainer):
    rs = np.random.RandomState(5)
    data, label = [(rs.uniform(-1, 1, (6, 3)).astype('float32'), rs.uniform(-1, 1, (6, 2)).astype('float32'))
                   for _ in range(3)][2]
    with mx.autograd.record():
        loss = mx.gluon.loss.L2Loss()(net(mx.nd.array(data)), mx.nd.array(label))
    loss.backward()
    trainer.step(data.shape[0])
    return {k: v.data().asnumpy() for k, v in net.collect_params().items()}


def _resumed(load_states):
    net = _mlp()
    net.load_parameters(os.path.join(DATA, 'mxnet_trainer.params'))
    trainer = mx.gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.05, 'wd': 0.01})
    if load_states:
        trainer.load_states(os.path.join(DATA, 'mxnet_trainer.states'))
    return trainer, _third_step(net, trainer)


def test_parameters_are_indexed_by_name_as_in_mxnet():
    net = _mlp()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd')
    assert [p.name for p in trainer._params] == sorted(net.collect_params().keys())
    assert list(net.collect_params().keys())[0] == 'hybridsequential0_dense0_weight'
    assert trainer._params[0].name == 'hybridsequential0_dense0_bias'


def test_resumes_mxnet_training_from_its_saved_states_and_optimizer():
    trainer, got = _resumed(True)
    want = np.load(os.path.join(DATA, 'mxnet_trainer_step3.npz'))
    assert sorted(got) == sorted(want.files)
    for name in want.files:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    # MXNet's Adam, its settings and update counts became neomx's.
    assert isinstance(trainer._optimizer, mx.optimizer.Adam)
    assert (trainer._optimizer.lr, trainer._optimizer.wd) == (0.05, 0.01)
    assert trainer._optimizer.num_update == 3
    _, fresh = _resumed(False)      # the first two steps' moments matter
    assert not np.allclose(fresh['hybridsequential0_dense0_weight'],
                           want['hybridsequential0_dense0_weight'], rtol=1e-4, atol=1e-5)


def test_neomx_states_round_trip(tmp_path):
    trainer, after_mxnet_states = _resumed(True)
    trainer.save_states(str(tmp_path / 'neomx.states'))
    assert open(str(tmp_path / 'neomx.states'), 'rb').read(8) == b'NEOMXOS1'
    net = _mlp()
    for name, param in net.collect_params().items():
        param.set_data(mx.nd.array(after_mxnet_states[name]))
    reloaded = mx.gluon.Trainer(net.collect_params(), 'sgd')
    reloaded.load_states(str(tmp_path / 'neomx.states'))
    assert isinstance(reloaded._optimizer, mx.optimizer.Adam) and reloaded._optimizer.num_update == 3
    for index, state in trainer._updaters[0].states.items():
        for got, want in zip(reloaded._updaters[0].states[index], state):
            np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_mxnet_states_never_unpickle_foreign_objects():
    import pickle
    from neomx.optimizer import state_format

    class Payload:
        def __reduce__(self):
            return (print, ('ran',))
    with pytest.raises(mx.base.MXNetError, match='refusing to load builtins.print'):
        state_format.loads(pickle.dumps({0: Payload()}, protocol=4))
    with pytest.raises(mx.base.MXNetError, match='not a valid MXNet optimizer state'):
        state_format.loads(b'\x80\x04garbage')
