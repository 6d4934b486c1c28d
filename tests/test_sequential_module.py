"""mx.mod.SequentialModule: a chain of modules equals the one combined module."""
import numpy as np
import pytest

import neomx as mx

BATCH, IN_UNITS, HIDDEN, CLASSES = 4, 5, 6, 3


def hidden_net(data):
    return mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=HIDDEN, name='fc1'), act_type='tanh', name='act1')


def output_net(hidden):
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=CLASSES, name='fc2'), name='softmax')


def chain(auto_wiring=True):
    """fc1+tanh, then fc2+softmax (taking the labels), as two modules."""
    first = mx.mod.Module(hidden_net(mx.sym.var('data')), label_names=None)
    second_input = 'hid' if auto_wiring else 'act1_output'
    second = mx.mod.Module(output_net(mx.sym.var(second_input)), data_names=[second_input])
    return mx.mod.SequentialModule().add(first).add(second, take_labels=True, auto_wiring=auto_wiring)


def random_params():
    rng = np.random.RandomState(0)
    shapes = {'fc1_weight': (HIDDEN, IN_UNITS), 'fc1_bias': (HIDDEN,),
              'fc2_weight': (CLASSES, HIDDEN), 'fc2_bias': (CLASSES,)}
    return {name: mx.nd.array(rng.randn(*shape) * 0.5) for name, shape in shapes.items()}


def a_batch():
    rng = np.random.RandomState(1)
    return mx.io.DataBatch([mx.nd.array(rng.randn(BATCH, IN_UNITS))], [mx.nd.array([0, 2, 1, 2])])


def trained_one_step(mod):
    mod.bind([('data', (BATCH, IN_UNITS))], [('softmax_label', (BATCH,))], inputs_need_grad=True)
    mod.set_params(random_params(), {})
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    mod.forward(a_batch(), is_train=True)
    outputs = mod.get_outputs()[0].asnumpy()
    mod.backward()
    input_grads = mod.get_input_grads()[0].asnumpy()
    mod.update()
    return outputs, input_grads, {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


@pytest.mark.parametrize('auto_wiring', [True, False])
def test_chain_equals_combined_module(auto_wiring):
    combined = mx.mod.Module(output_net(hidden_net(mx.sym.var('data'))))
    expected_out, expected_grads, expected_params = trained_one_step(combined)
    outputs, input_grads, params = trained_one_step(chain(auto_wiring))
    np.testing.assert_allclose(outputs, expected_out, rtol=1e-5)
    np.testing.assert_allclose(input_grads, expected_grads, rtol=1e-5, atol=1e-7)
    assert sorted(params) == sorted(expected_params)
    for name, value in expected_params.items():
        np.testing.assert_allclose(params[name], value, rtol=1e-5, atol=1e-7)


def test_properties_and_binding():
    seq = chain()
    assert seq.data_names == ['data'] and seq.output_names == ['softmax_output']
    for prop in ('data_shapes', 'label_shapes', 'output_shapes'):
        with pytest.raises(AssertionError):
            getattr(seq, prop)
    with pytest.raises(AssertionError):
        seq.forward(a_batch())
    seq.bind([('data', (BATCH, IN_UNITS))], [('softmax_label', (BATCH,))])
    assert seq.data_shapes[0].shape == (BATCH, IN_UNITS)
    assert seq.label_shapes == [('softmax_label', (BATCH,))]
    assert seq.output_shapes == [('softmax_output', (BATCH, CLASSES))]
    first, second = seq._modules
    # The second module gets the first one's outputs under its own data name, and the labels.
    assert second.data_shapes[0].name == 'hid' and second.data_shapes[0].shape == (BATCH, HIDDEN)
    assert second.label_shapes[0].name == 'softmax_label' and first.label_shapes is None
    assert not first.inputs_need_grad and second.inputs_need_grad


def test_update_matches_mxnet():
    # Recorded with MXNet 1.9.1: Constant(0.05) initialization, one SGD step with lr 1.
    seq = chain()
    seq.bind([('data', (2, IN_UNITS))], [('softmax_label', (2,))])
    seq.init_params(mx.init.Constant(0.05))
    # Uniform weights make every hidden unit equal: the numbers do not depend on HIDDEN.
    assert seq.output_shapes == [('softmax_output', (2, CLASSES))]
    x = mx.nd.array(np.arange(10).reshape(2, 5) / 10.)
    y = mx.nd.array([0, 2])
    seq.forward(mx.io.DataBatch([x], [y]), is_train=True)
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), np.full((2, 3), 1 / 3), rtol=1e-6)
    seq.backward()
    seq.init_optimizer(optimizer_params={'learning_rate': 1.0})
    seq.update()
    fc2 = seq.get_params()[0]['fc2_weight'].asnumpy()
    np.testing.assert_allclose(fc2[:, 0], [0.03778026, 0.01280108, 0.09941866], rtol=1e-5)
    metric = mx.metric.Accuracy()
    seq.update_metric(metric, [y])
    assert metric.get() == ('accuracy', 0.5)


def test_fit_and_score():
    rng = np.random.RandomState(2)
    x = rng.randn(64, IN_UNITS).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32) + (x[:, 1] > 0)
    train = mx.io.NDArrayIter(x, y, batch_size=16)
    seq = chain()
    seq.fit(train, eval_metric='ce', optimizer_params={'learning_rate': 0.5}, num_epoch=1,
            initializer=mx.init.Xavier())
    before = dict(seq.score(train, 'ce'))['cross-entropy']
    seq.fit(train, eval_metric='ce', optimizer_params={'learning_rate': 0.5}, num_epoch=20)
    assert dict(seq.score(train, 'ce'))['cross-entropy'] < 0.7 * before
    assert seq.predict(train).shape == (64, CLASSES)


def test_misuse_raises():
    module = mx.mod.Module(hidden_net(mx.sym.var('data')), label_names=None)
    with pytest.raises(AssertionError, match='Unknown meta "take_lables", a typo'):
        mx.mod.SequentialModule().add(module, take_lables=True)
    empty = mx.mod.SequentialModule()
    assert empty.data_names == [] and empty.output_names == []
    with pytest.raises(AssertionError, match='empty SequentialModule'):
        empty.bind([('data', (BATCH, IN_UNITS))])
    twice = mx.mod.SequentialModule().add(module).add(
        mx.mod.Module(hidden_net(mx.sym.var('data')), label_names=None), auto_wiring=True)
    twice.bind([('data', (BATCH, IN_UNITS))], for_training=False)
    with pytest.raises(AssertionError, match='Duplicated parameter names: name "fc1_weight" in layer 1'):
        twice.init_params()
    seq = chain()
    seq.bind([('data', (BATCH, IN_UNITS))], [('softmax_label', (BATCH,))])
    seq.init_params()
    with pytest.raises(AssertionError):
        seq.get_input_grads()
    unwired = mx.mod.SequentialModule().add(mx.mod.Module(hidden_net(mx.sym.var('data')), label_names=None)).add(
        mx.mod.Module(output_net(mx.sym.var('hid')), data_names=['hid']))
    with pytest.raises(ValueError, match='act1_output'):
        unwired.bind([('data', (BATCH, IN_UNITS))])
