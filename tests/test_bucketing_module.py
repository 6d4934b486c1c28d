"""mx.mod.BucketingModule: buckets sharing parameters, switching, fit/score/predict, checkpoints."""
import logging
import os

import numpy as np
import pytest

import neomx as mx

NUM_CLASSES = 3
FEATURES = 2


def sym_gen(seq_len):
    """Sum over the steps of one FullyConnected (weights shared by name), then softmax."""
    data = mx.sym.var('data')
    weight, bias = mx.sym.var('step_weight'), mx.sym.var('step_bias')
    steps = mx.sym.split(data, num_outputs=seq_len, axis=1, squeeze_axis=True)
    total = None
    for t, step in enumerate(steps):
        out = mx.sym.FullyConnected(step, weight=weight, bias=bias, num_hidden=NUM_CLASSES, name='fc%d' % t)
        total = out if total is None else total + out
    return mx.sym.SoftmaxOutput(total, name='softmax'), ('data',), ('softmax_label',)


class CountingSymGen:
    """sym_gen that records the keys it is called with."""

    def __init__(self):
        self.keys = []

    def __call__(self, key):
        self.keys.append(key)
        return sym_gen(key)


def numpy_forward(x, step_weight, step_bias):
    """Softmax of sum_t (x_t W^T + b) for x of shape (batch, seq_len, features)."""
    logits = x.sum(axis=1) @ step_weight.T + x.shape[1] * step_bias
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def batch_of(x, y):
    """A DataBatch of bucket ``seq_len`` with its provide_data/provide_label."""
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=x.shape[1],
                           provide_data=[mx.io.DataDesc('data', x.shape)],
                           provide_label=[mx.io.DataDesc('softmax_label', y.shape)])


class BucketIter(mx.io.DataIter):
    """Batches of sequences of several lengths; class = index of the largest summed feature."""

    def __init__(self, lengths, batch_size=8, seed=0):
        super().__init__(batch_size)
        rng = np.random.RandomState(seed)
        self.batches = []
        for seq_len in lengths:
            x = rng.randn(batch_size, seq_len, FEATURES).astype(np.float32)
            summed = x.sum(axis=1)
            y = np.where(summed[:, 0] > summed[:, 1], 0, 1).astype(np.float32)
            self.batches.append(batch_of(x, y))
        self.default_bucket_key = max(lengths)
        self.provide_data = [mx.io.DataDesc('data', (batch_size, self.default_bucket_key, FEATURES))]
        self.provide_label = [mx.io.DataDesc('softmax_label', (batch_size,))]
        self.cursor = 0

    def reset(self):
        self.cursor = 0

    def next(self):
        if self.cursor == len(self.batches):
            raise StopIteration
        self.cursor += 1
        return self.batches[self.cursor - 1]


def fixed_params(seed=1):
    rng = np.random.RandomState(seed)
    return {'step_weight': rng.randn(NUM_CLASSES, FEATURES).astype(np.float32) * 0.5,
            'step_bias': rng.randn(NUM_CLASSES).astype(np.float32) * 0.1}


def bound_module(default_key=4, batch_size=2, sym=sym_gen, **bind_kwargs):
    mod = mx.mod.BucketingModule(sym, default_bucket_key=default_key)
    mod.bind([('data', (batch_size, default_key, FEATURES))], [('softmax_label', (batch_size,))], **bind_kwargs)
    mod.set_params({k: mx.nd.array(v) for k, v in fixed_params().items()}, {})
    return mod


def test_misuse_before_bind_raises():
    with pytest.raises(AssertionError):
        mx.mod.BucketingModule(sym_gen)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
    # The names come from the default bucket even before binding, as in MXNet.
    assert list(mod.data_names) == ['data'] and mod.output_names == ['softmax_output']
    for prop in ('symbol', 'data_shapes', 'label_shapes', 'output_shapes'):
        with pytest.raises(AssertionError):
            getattr(mod, prop)
    x = np.ones((2, 3, FEATURES), np.float32)
    with pytest.raises(AssertionError):
        mod.forward(batch_of(x, np.zeros(2, np.float32)))
    with pytest.raises(AssertionError):
        mod.init_params()
    with pytest.raises(AssertionError, match='call bind before switching bucket'):
        mod.switch_bucket(3, [('data', (2, 3, FEATURES))])
    with pytest.raises(AssertionError, match='Empty BucketingModule cannot be saved'):
        mod.save_checkpoint('unused', 1)
    with pytest.raises(ValueError, match='group2ctxs'):     # one context per device, as MXNet
        mx.mod.BucketingModule(sym_gen, default_bucket_key=4, group2ctxs={'a': [mx.cpu(), mx.cpu(1)]}).bind(
            [('data', (2, 4, FEATURES))], [('softmax_label', (2,))])


def test_misuse_after_bind_raises():
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
    mod.bind([('data', (2, 4, FEATURES))], [('softmax_label', (2,))])
    with pytest.raises(AssertionError):
        mod.forward(batch_of(np.ones((2, 4, FEATURES), np.float32), np.zeros(2, np.float32)))
    mod.init_params()
    with pytest.raises(AssertionError):
        mod.update()
    with pytest.raises(AssertionError):
        mod.get_input_grads()
    untold = mx.io.DataBatch([mx.nd.ones((2, 6, FEATURES))], [mx.nd.zeros((2,))], bucket_key=6)
    with pytest.raises(ValueError, match='bucket 6 is new'):
        mod.forward(untold)


def test_outputs_per_bucket_match_numpy():
    mod = bound_module()
    params = fixed_params()
    rng = np.random.RandomState(2)
    for seq_len in (4, 3, 2, 1, 5):
        x = rng.randn(2, seq_len, FEATURES).astype(np.float32)
        mod.forward(batch_of(x, np.array([0, 1], np.float32)), is_train=False)
        assert mod.data_shapes[0].shape == (2, seq_len, FEATURES)
        assert mod.output_shapes == [('softmax_output', (2, NUM_CLASSES))]
        assert mod.symbol.list_arguments() == ['data', 'step_weight', 'step_bias', 'softmax_label']
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                                   numpy_forward(x, params['step_weight'], params['step_bias']), rtol=1e-5)


def test_batch_without_bucket_key_runs_in_default_bucket():
    mod = bound_module()
    x = np.random.RandomState(3).randn(2, 4, FEATURES).astype(np.float32)
    out = mod.predict(mx.nd.array(x))
    np.testing.assert_allclose(out.asnumpy(), numpy_forward(x, **fixed_params()), rtol=1e-5)


def test_update_is_shared_by_every_bucket_and_buckets_are_reused():
    gen = CountingSymGen()
    mod = bound_module(sym=gen)
    mod.init_optimizer(optimizer_params={'learning_rate': 0.5})
    rng = np.random.RandomState(4)
    x3 = rng.randn(2, 3, FEATURES).astype(np.float32)
    x4 = rng.randn(2, 4, FEATURES).astype(np.float32)
    mod.forward(batch_of(x3, np.array([0, 2], np.float32)), is_train=True)
    mod.backward()
    mod.update()
    weight, bias = (mod.get_params()[0][n].asnumpy() for n in ('step_weight', 'step_bias'))
    assert not np.allclose(weight, fixed_params()['step_weight'])
    # The default bucket sees the update made through bucket 3.
    mod.forward(batch_of(x4, np.array([1, 1], np.float32)), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), numpy_forward(x4, weight, bias), rtol=1e-5)
    calls = len(gen.keys)
    mod.forward(batch_of(x3, np.array([0, 2], np.float32)), is_train=False)
    assert len(gen.keys) == calls   # bucket 3 is bound already: no new module
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), numpy_forward(x3, weight, bias), rtol=1e-5)


def test_sgd_step_matches_mxnet():
    # Recorded with MXNet 1.9.1: Constant(0.1) initialization, one SGD step (lr 0.5) in bucket 3.
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
    mod.bind([('data', (2, 4, FEATURES))], [('softmax_label', (2,))])
    mod.init_params(mx.init.Constant(0.1))
    x3 = np.arange(12, dtype=np.float32).reshape(2, 3, FEATURES) / 10
    mod.forward(batch_of(x3, np.array([0, 1], np.float32)), is_train=True)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.full((2, 3), 1 / 3), rtol=1e-6)
    mod.backward()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.5})
    mod.update()
    np.testing.assert_allclose(mod.get_params()[0]['step_weight'].asnumpy(),
                               [[0.0, 0.025], [0.45, 0.475], [-0.15, -0.2]], atol=1e-6)
    mod.forward(batch_of(np.ones((2, 4, FEATURES), np.float32), np.array([0, 1], np.float32)), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               [[2.6589138e-02, 9.7311550e-01, 2.9537853e-04]] * 2, rtol=1e-5)


def test_input_grads_per_bucket():
    mod = bound_module(inputs_need_grad=True)
    x = np.random.RandomState(5).randn(2, 3, FEATURES).astype(np.float32)
    y = np.array([2, 0])
    mod.forward(batch_of(x, y.astype(np.float32)), is_train=True)
    mod.backward()
    params = fixed_params()
    # SoftmaxOutput's gradient is p - onehot(y); every step gets the same data gradient.
    delta = numpy_forward(x, params['step_weight'], params['step_bias']) - np.eye(NUM_CLASSES)[y]
    expected = np.repeat((delta @ params['step_weight'])[:, None, :], 3, axis=1)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_fit_learns_and_score_predict_work():
    train = BucketIter([5, 3, 2, 5, 4, 3], seed=0)
    mod = mx.mod.BucketingModule(CountingSymGen(), default_bucket_key=train.default_bucket_key,
                                 logger=logging.getLogger('bucketing-test'))
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(mx.init.Constant(0.0))
    before = dict(mod.score(train, 'ce'))['cross-entropy']
    mod.fit(train, eval_metric='ce', optimizer_params={'learning_rate': 0.1}, num_epoch=15)
    after = dict(mod.score(train, 'ce'))['cross-entropy']
    assert before == pytest.approx(np.log(NUM_CLASSES), rel=1e-5)
    assert after < 0.5 * before
    assert sorted(mod._buckets) == [2, 3, 4, 5]
    predicted = mod.predict(train)
    assert predicted.shape == (6 * 8, NUM_CLASSES)
    accuracy = dict(mod.score(train, 'acc'))['accuracy']
    labels = np.concatenate([b.label[0].asnumpy() for b in train.batches])
    assert accuracy == pytest.approx(np.mean(predicted.asnumpy().argmax(axis=1) == labels))
    assert accuracy > 0.8


def test_force_rebind_keeps_parameters():
    mod = bound_module()
    mod.init_optimizer()
    x = np.ones((2, 3, FEATURES), np.float32)
    mod.forward(batch_of(x, np.zeros(2, np.float32)))
    mod.bind([('data', (2, 4, FEATURES))], [('softmax_label', (2,))], force_rebind=True)
    assert not mod.optimizer_initialized and mod.params_initialized
    np.testing.assert_array_equal(mod.get_params()[0]['step_weight'].asnumpy(), fixed_params()['step_weight'])


def test_checkpoint_round_trip(tmp_path):
    prefix = str(tmp_path / 'bucketed')
    mod = bound_module()
    x3 = np.random.RandomState(6).randn(2, 3, FEATURES).astype(np.float32)
    batch3 = batch_of(x3, np.array([0, 1], np.float32))
    mod.forward(batch3, is_train=False)
    expected = mod.get_outputs()[0].asnumpy()
    mod.save_checkpoint(prefix, 7)
    assert sorted(os.listdir(tmp_path)) == ['bucketed-0007.params', 'bucketed-3-symbol.json',
                                            'bucketed-4-symbol.json', 'bucketed.buckets']
    keys = mx.nd.load(prefix + '.buckets')[0]
    assert keys.dtype == np.int32 and keys.asnumpy().tolist() == [4, 3]
    with pytest.raises(AssertionError, match='sym_gen is required'):
        mx.mod.BucketingModule.load(prefix, 7)
    with pytest.raises(AssertionError, match='default_bucket_key is required'):
        mx.mod.BucketingModule.load(prefix, 7, sym_gen=sym_gen)
    loaded = mx.mod.BucketingModule.load(prefix, 7, sym_gen=sym_gen, default_bucket_key=4)
    assert loaded.params_initialized and not loaded.binded
    loaded.bind([('data', (2, 4, FEATURES))], [('softmax_label', (2,))], for_training=False)
    for name, value in fixed_params().items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value)
    loaded.forward(batch3)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), expected, rtol=1e-6)


def test_monitor_watches_new_buckets():
    class Recorder:
        def __init__(self):
            self.executors = []

        def install(self, executor):
            self.executors.append(executor)
    mod = bound_module()
    monitor = Recorder()
    mod.install_monitor(monitor)
    mod.forward(batch_of(np.ones((2, 2, FEATURES), np.float32), np.zeros(2, np.float32)))
    mod.forward(batch_of(np.ones((2, 4, FEATURES), np.float32), np.zeros(2, np.float32)))
    assert len(monitor.executors) == 2   # the default bucket's, then bucket 2's (once)


def test_prepare_binds_ahead_and_keeps_current_bucket():
    gen = CountingSymGen()
    mod = bound_module(sym=gen)
    mod.prepare(batch_of(np.ones((2, 2, FEATURES), np.float32), np.zeros(2, np.float32)))
    assert gen.keys[-1] == 2 and mod.data_shapes[0].shape == (2, 4, FEATURES)
