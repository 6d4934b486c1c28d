"""mx.mod.Module: binding, training, prediction, checkpoints and data parallelism.

Literal values were recorded with MXNet 1.9.1 running the same code.
"""
import logging
import os

import numpy as np
import pytest

import neomx as mx
from neomx.module.executor_group import split_batch

RNG = np.random.RandomState(0)
X = RNG.randn(40, 6).astype('f')
Y = RNG.randint(0, 3, 40).astype('f')
W1 = RNG.randn(8, 6).astype('f') * .3
W2 = RNG.randn(3, 8).astype('f') * .3


def mlp(act_type='tanh'):
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=8, name='fc1')
    net = mx.sym.Activation(net, act_type=act_type, name='a1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def initial_params():
    return {'fc1_weight': mx.nd.array(W1), 'fc1_bias': mx.nd.full((8,), .1),
            'fc2_weight': mx.nd.array(W2), 'fc2_bias': mx.nd.zeros((3,))}


def fitted(context=mx.cpu(), kvstore='local', num_epoch=2, **kwargs):
    mod = mx.mod.Module(mlp(), context=context)
    mod.fit(mx.io.NDArrayIter(X, Y, batch_size=10), num_epoch=num_epoch, arg_params=initial_params(),
            kvstore=kvstore, optimizer_params={'learning_rate': 0.3, 'momentum': 0.9, 'wd': 0.01}, **kwargs)
    return mod


def bound(batch_size=10, **bind_kwargs):
    mod = mx.mod.Module(mlp())
    mod.bind([('data', (batch_size, 6))], [('softmax_label', (batch_size,))], **bind_kwargs)
    mod.init_params(arg_params=initial_params())
    return mod


def batch(start, stop):
    return mx.io.DataBatch([mx.nd.array(X[start:stop])], [mx.nd.array(Y[start:stop])])


# --------------------------------------------------------------------- training
def test_fit_learns_separable_data(caplog):
    rng = np.random.RandomState(1)
    centers = rng.randn(3, 10) * 2
    labels = rng.randint(0, 3, 300).astype('f')
    data = (centers[labels.astype(int)] + rng.randn(300, 10)).astype('f')
    train = mx.io.NDArrayIter(data[:240], labels[:240], batch_size=20, shuffle=True)
    val = mx.io.NDArrayIter(data[240:], labels[240:], batch_size=20)
    data_var = mx.sym.var('data')
    net = mx.sym.Activation(mx.sym.FullyConnected(data_var, num_hidden=16, name='fc1'), act_type='relu')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=3, name='fc2'), name='softmax')
    mx.random.seed(0)
    mod = mx.mod.Module(net)
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=val, num_epoch=4, initializer=mx.init.Xavier(),
                optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    assert dict(mod.score(val, 'acc'))['accuracy'] >= 0.95
    for message in ('Epoch[0] Train-accuracy=', 'Epoch[0] Time cost=', 'Epoch[3] Validation-accuracy='):
        assert any(r.getMessage().startswith(message) for r in caplog.records), message


def test_fit_matches_mxnet_on_two_contexts():
    mod = fitted(context=[mx.cpu(0), mx.cpu(1)])
    args, _ = mod.get_params()
    np.testing.assert_allclose(args['fc2_bias'].asnumpy(), [0.24676046, -0.22004184, -0.02671864], atol=1e-5)
    np.testing.assert_allclose(args['fc2_weight'].asnumpy()[0],
                               [-0.0612761, -0.06367336, 0.09377313, 0.00077835, -0.26493558, -0.07133469,
                                0.1626144, -0.16990575], atol=1e-5)
    scores = dict(mod.score(mx.io.NDArrayIter(X, Y, batch_size=10), ['acc', 'ce']))
    assert scores['accuracy'] == pytest.approx(0.525)
    assert scores['cross-entropy'] == pytest.approx(0.9963160574436187, rel=1e-5)
    probs = mod.predict(mx.io.NDArrayIter(X, Y, batch_size=7)).asnumpy()
    np.testing.assert_allclose(probs[:2], [[0.27309054, 0.21869819, 0.5082113],
                                           [0.4236148, 0.08804948, 0.48833576]], atol=1e-5)


@pytest.mark.parametrize('context, kvstore', [([mx.cpu(0), mx.cpu(1)], 'local'),
                                              ([mx.cpu(0), mx.cpu(1)], 'device'),
                                              ([mx.cpu(0), mx.cpu(1), mx.cpu(2)], mx.kv.create('local'))])
def test_several_contexts_give_the_single_context_result(context, kvstore):
    expected, _ = fitted().get_params()
    got, _ = fitted(context=context, kvstore=kvstore).get_params()
    for name in expected:
        np.testing.assert_allclose(got[name].asnumpy(), expected[name].asnumpy(), rtol=1e-5, atol=1e-6)


def test_without_kvstore_each_context_learns_alone():
    # MXNet: with kvstore=None the contexts' gradients are not summed; get_params averages.
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (10, 6))], [('softmax_label', (10,))])
    mod.init_params(arg_params=initial_params())
    mod.init_optimizer(kvstore=None, optimizer_params={'learning_rate': 1.0})
    mod.forward_backward(batch(0, 10))
    mod.update()
    weights = [w.asnumpy() for w in mod._exec_group.param_arrays[0]]
    assert not np.allclose(weights[0], weights[1])
    np.testing.assert_allclose(mod.get_params()[0]['fc1_weight'].asnumpy(), (weights[0] + weights[1]) / 2,
                               rtol=1e-6)


def test_one_sgd_step_matches_imperative_computation():
    lr, wd = 0.1, 0.01
    mod = bound(inputs_need_grad=True)
    mod.init_optimizer(optimizer_params={'learning_rate': lr, 'wd': wd})
    mod.forward(batch(0, 10))
    mod.backward()
    mod.update()

    params = initial_params()
    data = mx.nd.array(X[:10])
    for p in list(params.values()) + [data]:
        p.attach_grad()
    with mx.autograd.record():
        hidden = mx.nd.tanh(mx.nd.FullyConnected(data, params['fc1_weight'], params['fc1_bias'], num_hidden=8))
        logits = mx.nd.FullyConnected(hidden, params['fc2_weight'], params['fc2_bias'], num_hidden=3)
        loss = -mx.nd.pick(mx.nd.log_softmax(logits), mx.nd.array(Y[:10])).sum()
    loss.backward()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), mx.nd.softmax(logits).asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), data.grad.asnumpy(), rtol=1e-4, atol=1e-7)
    args, _ = mod.get_params()
    for name, p in params.items():
        # rescale_grad = 1 / batch_size; biases get no weight decay.
        decay = wd if name.endswith('_weight') else 0
        expected = p.asnumpy() - lr * (p.grad.asnumpy() / 10 + decay * p.asnumpy())
        np.testing.assert_allclose(args[name].asnumpy(), expected, rtol=1e-5, atol=1e-7)


def test_fixed_params_do_not_move():
    mod = mx.mod.Module(mlp(), fixed_param_names=['fc1_weight'])
    mod.bind([('data', (10, 6))], [('softmax_label', (10,))])
    mod.init_params(arg_params=initial_params())
    mod.init_optimizer(optimizer_params={'learning_rate': 1.0})
    mod.forward_backward(batch(0, 10))
    mod.update()
    args, _ = mod.get_params()
    np.testing.assert_array_equal(args['fc1_weight'].asnumpy(), W1)
    assert not np.allclose(args['fc2_weight'].asnumpy(), W2)


def test_optimizer_instance_and_rescale_warning():
    mod = bound()
    with pytest.warns(UserWarning, match='rescale_grad'):
        mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))
    assert mod._optimizer.idx2name == {0: 'fc1_weight', 1: 'fc1_bias', 2: 'fc2_weight', 3: 'fc2_bias'}


# ------------------------------------------------------------------ parameters
def test_init_params_uses_the_initializer_by_name():
    data = mx.sym.var('data')
    net = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=4, name='fc'), name='bn')
    mod = mx.mod.Module(net, label_names=None)
    mod.bind([('data', (2, 3))])
    mod.init_params(mx.init.Constant(0.5))
    args, aux = mod.get_params()
    np.testing.assert_array_equal(args['fc_weight'].asnumpy(), np.full((4, 3), 0.5))
    np.testing.assert_array_equal(args['fc_bias'].asnumpy(), np.zeros(4))
    np.testing.assert_array_equal(args['bn_gamma'].asnumpy(), np.ones(4))
    np.testing.assert_array_equal(aux['bn_moving_var'].asnumpy(), np.ones(4))
    np.testing.assert_array_equal(aux['bn_moving_mean'].asnumpy(), np.zeros(4))
    mod.init_optimizer()
    mod.forward(mx.io.DataBatch([mx.nd.array([[1, 2, 3], [3, 2, 1]])]), is_train=True)
    mod.backward([mx.nd.ones((2, 4))])
    mod.update()
    # training mode updated the running statistics, which get_params reads back after update()
    assert mod.get_params()[1]['bn_moving_mean'].asnumpy().any()


def test_set_params_and_missing_params():
    mod = bound()
    with pytest.warns(UserWarning, match='already initialized'):
        mod.init_params()
    partial = initial_params()
    del partial['fc2_bias']
    with pytest.raises(RuntimeError, match='fc2_bias'):
        mod.set_params(partial, {})
    partial['fc1_bias'] = mx.nd.full((8,), 7.)
    mod.set_params(partial, {}, allow_missing=True)
    args, _ = mod.get_params()
    np.testing.assert_array_equal(args['fc1_bias'].asnumpy(), np.full(8, 7.))
    mod.set_params(dict(initial_params(), extra=mx.nd.zeros(1)), {})   # ignored, as in MXNet


# ------------------------------------------------------------------ inference
def test_predict_and_score():
    mod = bound()
    merged = mod.predict(mx.io.NDArrayIter(X, Y, batch_size=7))   # 6 batches, the last padded
    assert merged.shape == (40, 3)
    per_batch = mod.predict(mx.io.NDArrayIter(X, Y, batch_size=7), merge_batches=False)
    assert [len(outs) for outs in per_batch] == [1] * 6
    assert [outs[0].shape[0] for outs in per_batch] == [7] * 5 + [5]
    np.testing.assert_allclose(np.concatenate([o[0].asnumpy() for o in per_batch]), merged.asnumpy())
    listed = mod.predict(mx.io.NDArrayIter(X, Y, batch_size=7), num_batch=2, always_output_list=True)
    assert isinstance(listed, list) and listed[0].shape == (14, 3)
    accuracy = dict(mod.score(mx.io.NDArrayIter(X, Y, batch_size=10), 'acc'))['accuracy']
    assert accuracy == pytest.approx(np.mean(merged.asnumpy().argmax(1) == Y))
    direct = mod.predict(mx.nd.array(X[:10]))
    np.testing.assert_allclose(direct.asnumpy(), merged.asnumpy()[:10], rtol=1e-6)
    outputs = [o for o, _, _ in mod.iter_predict(mx.io.NDArrayIter(X, Y, batch_size=7))]
    assert outputs[-1][0].shape == (5, 3)


def test_batch_size_change_rebinds():
    mod = bound()
    mod.forward(batch(0, 4), is_train=False)
    assert mod.get_outputs()[0].shape == (4, 3)
    assert mod.output_shapes == [('softmax_output', (4, 3))]
    assert mod.data_shapes[0].shape == (4, 6) and mod.label_shapes[0].shape == (4,)
    reference = bound(batch_size=4)
    reference.forward(batch(0, 4), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), reference.get_outputs()[0].asnumpy())


def test_outputs_per_context_and_work_loads():
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[3, 1])
    mod.bind([('data', (8, 6))], [('softmax_label', (8,))])
    mod.init_params(arg_params=initial_params())
    mod.forward(batch(0, 8), is_train=False)
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape[0] for p in parts] == [6, 2]
    assert [p.context for p in parts] == [mx.cpu(0), mx.cpu(1)]
    single = bound(batch_size=8)
    single.forward(batch(0, 8), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), single.get_outputs()[0].asnumpy(), rtol=1e-6)


def test_split_batch():
    assert split_batch(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert split_batch(10, [1, 1, 1]) == [slice(0, 3), slice(3, 6), slice(6, 10)]
    assert split_batch(7, [2, 1]) == [slice(0, 5), slice(5, 7)]
    with pytest.raises(ValueError, match='empty'):
        split_batch(2, [1, 1, 1])


# ------------------------------------------------------------------ checkpoints
def test_checkpoint_round_trip_resumes_training(tmp_path):
    prefix = str(tmp_path / 'mlp')
    mod = bound()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    mod.forward_backward(batch(0, 10))
    mod.update()
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    saved_probs = mod.predict(mx.nd.array(X[:10])).asnumpy()
    for suffix in ('-symbol.json', '-0001.params', '-0001.states'):
        assert os.path.exists(prefix + suffix)

    loaded = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    loaded.bind([('data', (10, 6))], [('softmax_label', (10,))])
    loaded.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    for module in (mod, loaded):   # the momentum carries over
        module.forward_backward(batch(10, 20))
        module.update()
    expected, got = mod.get_params()[0], loaded.get_params()[0]
    for name in expected:
        np.testing.assert_allclose(got[name].asnumpy(), expected[name].asnumpy(), rtol=1e-6)

    predictor = mx.mod.Module.load(prefix, 1)
    with pytest.warns(UserWarning, match='label_names'):   # as MXNet: no label for softmax_label
        predictor.bind([('data', (10, 6))], for_training=False)
    assert predictor.label_shapes is None
    np.testing.assert_allclose(predictor.predict(mx.nd.array(X[:10])).asnumpy(), saved_probs, rtol=1e-6)
    symbol, args, _ = mx.model.load_checkpoint(prefix, 1)
    assert symbol.list_arguments() == mlp().list_arguments()
    assert sorted(args) == ['fc1_bias', 'fc1_weight', 'fc2_bias', 'fc2_weight']


def test_save_and_load_params(tmp_path):
    fname = str(tmp_path / 'p.params')
    mod = bound()
    mod.save_params(fname)
    assert sorted(mx.nd.load(fname)) == ['arg:fc1_bias', 'arg:fc1_weight', 'arg:fc2_bias', 'arg:fc2_weight']
    other = mx.mod.Module(mlp())
    other.bind([('data', (10, 6))], [('softmax_label', (10,))])
    other.init_params()
    other.load_params(fname)
    np.testing.assert_array_equal(other.get_params()[0]['fc1_weight'].asnumpy(), W1)
    mx.nd.save(fname, {'bad': mx.nd.zeros(1)})
    with pytest.raises(ValueError, match='bad'):
        other.load_params(fname)


# ---------------------------------------------------------------------- errors
def test_input_name_checks():
    with pytest.raises(ValueError, match='images'):
        mx.mod.Module(mlp(), data_names=['images'])
    with pytest.warns(UserWarning, match='labels'):
        mx.mod.Module(mlp(), label_names=['labels'])
    mod = mx.mod.Module(mlp())
    with pytest.raises(ValueError, match='does not match'):
        mod.bind([('x', (10, 6))], [('softmax_label', (10,))])


def test_calls_out_of_order():
    mod = mx.mod.Module(mlp())
    with pytest.raises(AssertionError, match='binded'):
        mod.forward(batch(0, 10))
    with pytest.raises(ValueError, match='num_epoch'):
        mod.fit(mx.io.NDArrayIter(X, Y, batch_size=10))
    predicting = mx.mod.Module(mlp())
    predicting.bind([('data', (10, 6))], [('softmax_label', (10,))], for_training=False)
    predicting.init_params()
    with pytest.raises(mx.MXNetError, match='for_training'):
        predicting.backward()
    with pytest.raises(mx.MXNetError, match='inputs_need_grad'):
        predicting.get_input_grads()


# --------------------------------------------------- resuming MXNet's checkpoints
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')


def _resumed_after_one_step(load_optimizer_states):
    """The fixture checkpoint of MXNet 1.9.1 (tests/data/make_fixtures.py ``states``: two
    SGD steps with momentum), loaded and trained one more step on its third batch."""
    mod = mx.mod.Module.load(os.path.join(_DATA, 'mxnet_mlp'), 2,
                             load_optimizer_states=load_optimizer_states, context=mx.cpu())
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('softmax_label', (4,))])
    mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1), ('momentum', 0.9),
                                                          ('wd', 0.01)))
    rs = np.random.RandomState(3)
    batches = [(rs.uniform(-1, 1, (4, 5)), rs.randint(0, 3, 4)) for _ in range(3)]
    data, label = batches[2]
    mod.forward(mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)]), is_train=True)
    mod.backward()
    mod.update()
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def test_resumes_mxnet_training_from_its_pickled_optimizer_states():
    want = np.load(os.path.join(_DATA, 'mxnet_mlp_step3.npz'))
    got = _resumed_after_one_step(True)
    assert sorted(got) == sorted(want.files)
    for name in want.files:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    # Without the momentum of the first two steps the third lands elsewhere.
    fresh = _resumed_after_one_step(False)
    assert not np.allclose(fresh['fc1_weight'], want['fc1_weight'], rtol=1e-4, atol=1e-5)


def test_python_loss_module_trains_after_a_symbolic_module():
    # MXNet's pattern: a symbolic net whose loss gradient a Python function gives
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc')
    seq = mx.mod.SequentialModule()
    # on the context the iterator's labels are on (Module's default is cpu): grad_func mixes the two
    seq.add(mx.mod.Module(net, label_names=[], context=mx.current_context()))
    seq.add(mx.mod.PythonLossModule(grad_func=lambda scores, labels: scores - labels.reshape(scores.shape)),
            take_labels=True, auto_wiring=True)
    x = np.random.RandomState(0).rand(8, 3).astype('float32')
    y = x.sum(axis=1)
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    seq.fit(it, num_epoch=40, optimizer_params=(('learning_rate', 0.5),), eval_metric='mse')
    pred = seq.predict(mx.io.NDArrayIter(x, batch_size=4)).asnumpy().ravel()
    assert np.abs(pred - y).max() < 0.1
