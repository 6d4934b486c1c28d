"""gluon.contrib.estimator against MXNet 1.9.1's recorded behaviour (numbers, file names,
log lines and handler order were produced by the reference on the same data)."""
import os
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import gluon
from neomx.gluon.contrib import estimator as E

_RNG = np.random.RandomState(0)
X = _RNG.randn(40, 4).astype('float32')
Y = (X[:, 0] > 0).astype('float32')
W0 = _RNG.randn(2, 4).astype('float32') * 0.1
LOADER = gluon.data.DataLoader(gluon.data.ArrayDataset(X, Y), batch_size=10)   # 4 batches


def _estimator(caplog, lr=0.5, **kwargs):
    """A Dense(2) classifier with fixed initial weights, its logs captured by ``caplog``."""
    net = gluon.nn.Dense(2, in_units=4)
    net.initialize()
    net.weight.set_data(mx.nd.array(W0))
    net.bias.set_data(mx.nd.zeros(2))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': lr})
    est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, **kwargs)
    est.logger.addHandler(caplog.handler)
    caplog.clear()
    return est


def _values(metrics):
    return [metric.get()[1] for metric in metrics]


def test_default_metrics_and_fit_matches_mxnet(caplog):
    est = _estimator(caplog)
    assert [m.name for m in est.train_metrics] == ['training accuracy',
                                                   'training softmaxcrossentropyloss']
    assert [m.name for m in est.val_metrics] == ['validation accuracy',
                                                 'validation softmaxcrossentropyloss']
    assert est.val_metrics[0] is not est.train_metrics[0]
    est.fit(LOADER, val_data=LOADER, epochs=2)
    # MXNet 1.9.1: final training/validation accuracy and mean loss, and the trained weight
    np.testing.assert_allclose(_values(est.train_metrics), [1.0, 0.221388], atol=2e-6)
    np.testing.assert_allclose(_values(est.val_metrics), [1.0, 0.184751], atol=2e-6)
    np.testing.assert_allclose(est.net.weight.data().asnumpy(),
                               [[-1.05685, 0.06896, -0.07227, -0.01785],
                                [0.8845, 0.20843, 0.06719, -0.12787]], atol=2e-5)
    msgs = caplog.messages
    assert msgs[:4] == ['Training begin: using optimizer SGD with current learning rate 0.5000 ',
                        'Train for 2 epochs.', '[Epoch 0] Begin, current learning rate: 0.5000',
                        'Validation Begin']
    assert msgs[4].startswith('[Epoch 0] Finished in ')
    assert msgs[4].endswith('s, validation accuracy: 1.0000, validation softmaxcrossentropyloss: 0.2467')
    assert msgs[5].endswith('s, training accuracy: 0.8000, training softmaxcrossentropyloss: 0.4811')
    assert msgs[-1].endswith('with 2 epochs. training accuracy: 1.0000, '
                             'training softmaxcrossentropyloss: 0.2214')
    assert len(msgs) == 11


def test_training_reduces_loss(caplog):
    est = _estimator(caplog, lr=0.2)
    est.evaluate(LOADER)
    loss_before = est.val_metrics[1].get()[1]
    est.fit(LOADER, epochs=2)
    est.evaluate(LOADER)
    assert est.val_metrics[1].get()[1] < loss_before


def test_evaluate_matches_mxnet(caplog):
    est = _estimator(caplog)
    est.evaluate(LOADER)
    np.testing.assert_allclose(_values(est.val_metrics), [0.35, 0.7607792], rtol=1e-5)
    assert caplog.messages[0] == 'Validation Begin'
    assert caplog.messages[1].endswith(
        's, validation accuracy: 0.3500, validation softmaxcrossentropyloss: 0.7608')
    assert len(caplog.messages) == 2


def test_fit_by_batches_and_interval_logging(caplog):
    est = _estimator(caplog)
    est.fit(LOADER, batches=6,
            event_handlers=[E.LoggingHandler(log_interval=2, metrics=est.train_metrics)])
    msgs = caplog.messages
    assert msgs[1] == 'Train for 6 batches.'
    batch_lines = [m.split(' time/interval')[0] for m in msgs if '][Batch' in m]
    # batch 0, 2 of epoch 0 (4 batches), then the counter restarts; samples accumulate
    assert batch_lines == ['[Epoch 0][Batch 0][Samples 10]', '[Epoch 0][Batch 2][Samples 30]',
                           '[Epoch 1][Batch 0][Samples 50]']
    assert msgs[-1].startswith('Train finished using total 0s with 2 epochs. training accuracy: ')
    with pytest.raises(ValueError, match="integer or string 'epoch'"):
        E.LoggingHandler(log_interval='batch')


class _Recorder(E.TrainBegin, E.TrainEnd, E.EpochBegin, E.EpochEnd, E.BatchBegin, E.BatchEnd):
    """Appends ``(tag, event)`` to a shared list for every event."""

    def __init__(self, tag, events, priority=0):
        self.tag, self.events, self.priority = tag, events, priority

    def train_begin(self, estimator, *args, **kwargs):
        self.events.append((self.tag, 'train_begin'))

    def train_end(self, estimator, *args, **kwargs):
        self.events.append((self.tag, 'train_end'))

    def epoch_begin(self, estimator, *args, **kwargs):
        self.events.append((self.tag, 'epoch_begin'))

    def epoch_end(self, estimator, *args, **kwargs):
        self.events.append((self.tag, 'epoch_end'))

    def batch_begin(self, estimator, *args, **kwargs):
        self.events.append((self.tag, 'batch_begin'))

    def batch_end(self, estimator, *args, **kwargs):
        assert sorted(kwargs) == ['batch', 'label', 'loss', 'pred']
        self.events.append((self.tag, 'batch_end'))


def test_handler_order_and_counts(caplog):
    events = []
    est = _estimator(caplog)
    est.fit(LOADER, val_data=LOADER, epochs=2,
            event_handlers=[_Recorder('late', events, 5), _Recorder('early', events, -5)])
    kinds = [event for _, event in events]
    assert [kinds.count(k) for k in ('train_begin', 'epoch_begin', 'batch_begin', 'batch_end',
                                     'epoch_end', 'train_end')] == [2, 4, 16, 16, 4, 2]
    # lower priority first, for every event
    assert [tag for tag, _ in events] == ['early', 'late'] * (len(events) // 2)
    assert events[:6] == [('early', 'train_begin'), ('late', 'train_begin'),
                          ('early', 'epoch_begin'), ('late', 'epoch_begin'),
                          ('early', 'batch_begin'), ('late', 'batch_begin')]


def test_default_handlers_and_priorities(caplog):
    est = _estimator(caplog)
    est.max_epoch, est.max_batch = 1, None
    handlers = est._prepare_default_handlers(LOADER, None)
    assert [type(h).__name__ for h in handlers] == [
        'GradientUpdateHandler', 'MetricHandler', 'ValidationHandler', 'StoppingHandler',
        'LoggingHandler']
    assert [getattr(h, 'priority', 0) for h in handlers] == [-2000, -1000, -1000, 0, float('inf')]
    own_logger = E.LoggingHandler(metrics=est.train_metrics)
    handlers = est._prepare_default_handlers(None, own_logger)
    assert [type(h).__name__ for h in handlers].count('LoggingHandler') == 1
    assert own_logger in handlers
    validation = est._prepare_default_validation_handlers(None)
    assert [type(h).__name__ for h in validation] == ['MetricHandler', 'LoggingHandler']
    assert validation[0].metrics == est.val_metrics


def test_categorize_handlers_groups_by_event_mixin(caplog):
    # MXNet's private hook, which its own tests and subclasses call: one list per event, a
    # handler in every list of a mixin it subclasses, handlers kept in the order given
    class Begin(E.TrainBegin):
        def train_begin(self, estimator, *args, **kwargs):
            pass

    class Many(E.EpochBegin, E.BatchBegin, E.BatchEnd, E.TrainEnd):
        pass

    begin, many, other = Begin(), Many(), E.StoppingHandler(max_epoch=1)
    groups = _estimator(caplog)._categorize_handlers([many, begin, other])
    assert groups == ([begin, other], [many], [many], [many, other], [other], [many])


def test_stopping_handler_stops_inside_an_epoch(caplog):
    events = []
    est = _estimator(caplog)
    est.fit(LOADER, batches=3, event_handlers=[_Recorder('r', events)])
    assert [e for _, e in events].count('batch_end') == 3
    assert [e for _, e in events].count('epoch_end') == 1
    assert caplog.messages[-1].startswith('Train finished using total 0s with 1 epochs.')


def test_checkpoints_by_epoch_and_resume(caplog, tmp_path):
    est = _estimator(caplog)
    checkpoint = E.CheckpointHandler(str(tmp_path), max_checkpoints=2, monitor=est.train_metrics[1],
                                     save_best=True, mode='min', verbose=1)
    est.fit(LOADER, epochs=3, event_handlers=[checkpoint])
    # MXNet's files, plus each checkpoint's random generators (.rng)
    assert sorted(os.listdir(tmp_path)) == [
        'model-best.params', 'model-best.rng', 'model-best.states', 'model-epoch1batch8.params',
        'model-epoch1batch8.rng', 'model-epoch1batch8.states', 'model-epoch2batch12.params',
        'model-epoch2batch12.rng', 'model-epoch2batch12.states']
    saves = [m for m in caplog.messages if 'saving model' in m]
    assert saves[0] == ('[Epoch 0] CheckpointHandler: trained total 5 batches, saving model at %s '
                        'with prefix: model-epoch0batch4' % tmp_path)
    assert checkpoint.best == pytest.approx(0.17453, abs=1e-5)
    trained = est.net.weight.data().asnumpy()

    resumed = _estimator(caplog)
    resumed.fit(LOADER, epochs=5,
                event_handlers=[E.CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])
    assert caplog.messages[0] == ('CheckpointHandler: Checkpoint resumed from epoch 2 batch 12, '
                                  'continue to train for 2 epochs ')
    assert resumed.max_epoch == 2
    # MXNet leaves the checkpoints of the earlier run in place
    assert {'model-epoch3batch16.params', 'model-epoch4batch20.states',
            'model-epoch1batch8.params'} <= set(os.listdir(tmp_path))
    loaded = gluon.nn.Dense(2, in_units=4)
    loaded.load_parameters(str(tmp_path / 'model-epoch2batch12.params'))
    np.testing.assert_array_equal(loaded.weight.data().asnumpy(), trained)

    with pytest.raises(ValueError, match='maximum number of epoch 3 reached'):
        _estimator(caplog).fit(LOADER, epochs=3, event_handlers=[
            E.CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])


def test_checkpoints_by_batch_and_resume(caplog, tmp_path):
    def handler(**kwargs):
        return E.CheckpointHandler(str(tmp_path), epoch_period=None, batch_period=2,
                                   max_checkpoints=10, **kwargs)
    _estimator(caplog).fit(LOADER, batches=6, event_handlers=[handler()])
    assert sorted(f for f in os.listdir(tmp_path) if not f.endswith('.rng')) == [
        'model-epoch0batch1.params', 'model-epoch0batch1.states', 'model-epoch0batch3.params',
        'model-epoch0batch3.states', 'model-epoch1batch5.params', 'model-epoch1batch5.states']
    # a checkpoint whose writer died before its .states (written last) is not resumed from
    (tmp_path / 'model-epoch1batch7.params').write_bytes((tmp_path / 'model-epoch1batch5.params').read_bytes())
    est = _estimator(caplog)
    est.fit(LOADER, batches=9, event_handlers=[handler(resume_from_checkpoint=True)])
    assert est.max_batch == 3
    assert 'model-epoch2batch7.params' in os.listdir(tmp_path)
    assert ('CheckpointHandler: Checkpoint resumed from epoch 1 batch 5, continue to train for '
            '3 batches ') in caplog.messages
    with pytest.raises(AssertionError, match='same type of period'):
        _estimator(caplog).fit(LOADER, batches=9, event_handlers=[
            E.CheckpointHandler(str(tmp_path), batch_period=2, resume_from_checkpoint=True)])


def test_checkpoints_to_a_url_and_resume(caplog):
    fsspec = pytest.importorskip('fsspec')
    url = 'memory://neomx-estimator-%d/run' % os.getpid()
    est = _estimator(caplog)
    est.fit(LOADER, epochs=2, event_handlers=[E.CheckpointHandler(url, max_checkpoints=1)])
    fs = fsspec.filesystem('memory')
    names = sorted(p.rsplit('/', 1)[-1] for p in fs.ls(url[len('memory://'):], detail=False))
    assert names == ['model-epoch1batch8.params', 'model-epoch1batch8.rng', 'model-epoch1batch8.states']
    resumed = _estimator(caplog)
    resumed.fit(LOADER, epochs=3, event_handlers=[E.CheckpointHandler(url, resume_from_checkpoint=True)])
    assert caplog.messages[0] == ('CheckpointHandler: Checkpoint resumed from epoch 1 batch 8, '
                                  'continue to train for 1 epochs ')
    # the resumed run continues from the saved weights, not from W0
    fresh = _estimator(caplog)
    fresh.fit(LOADER, epochs=3)
    np.testing.assert_allclose(resumed.net.weight.data().asnumpy(), fresh.net.weight.data().asnumpy(),
                               rtol=1e-5, atol=1e-6)
    fs.rm(url[len('memory://'):], recursive=True)


def test_checkpoint_symbol_file_and_validation(caplog, tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(2))
    net.hybridize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), initializer=mx.init.One())
    assert [str(w.message) for w in caught] == [
        'No trainer specified, default SGD optimizer with learning rate 0.001 is used.']
    est.fit(LOADER, batches=1, event_handlers=[E.CheckpointHandler(str(tmp_path), 'net')])
    assert 'net-symbol.json' in os.listdir(tmp_path)
    with pytest.raises(ValueError, match='provide one of the metric objects'):
        E.CheckpointHandler(str(tmp_path), save_best=True)


def test_early_stopping(caplog):
    est = _estimator(caplog)
    with pytest.warns(UserWarning, match='`greater` operator will be used to determine if '
                                         'training softmaxcrossentropyloss has improved'):
        stopper = E.EarlyStoppingHandler(est.train_metrics[1])
    # MXNet's 'auto' mode compares with `greater` even for a loss: a falling loss stops
    est.fit(LOADER, epochs=5, event_handlers=[stopper])
    assert (stopper.stopped_epoch, stopper.current_epoch) == (1, 2)
    assert caplog.messages[-2] == ('[Epoch 1] EarlyStoppingHanlder: early stopping due to '
                                   'training softmaxcrossentropyloss not improving')

    est = _estimator(caplog)
    stopper = E.EarlyStoppingHandler(est.train_metrics[1], mode='min', baseline=0.3)
    est.fit(LOADER, epochs=5, event_handlers=[stopper])
    # the first epoch's loss (0.481) does not beat the baseline
    assert (stopper.stopped_epoch, stopper.current_epoch) == (0, 1)
    with pytest.raises(ValueError, match='CompositeEvalMetric is not supported'):
        E.EarlyStoppingHandler(mx.metric.CompositeEvalMetric(['acc']))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        stopper = E.EarlyStoppingHandler(est.train_metrics[0], mode='median')
    # an unknown mode falls back to 'auto', which warns in its turn
    assert [w.category for w in caught] == [RuntimeWarning, UserWarning]
    assert str(caught[0].message).startswith('EarlyStopping mode median is unknown')


class _ScaledLossProcessor(E.BatchProcessor):
    """Counts its calls and doubles the reported training loss."""

    def __init__(self):
        self.calls = {'fit': 0, 'evaluate': 0}

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        self.calls['fit'] += 1
        data, label, pred, loss = super().fit_batch(estimator, train_batch, batch_axis)
        return data, label, pred, [l * 2 for l in loss]

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        self.calls['evaluate'] += 1
        return super().evaluate_batch(estimator, val_batch, batch_axis)


def test_custom_batch_processor(caplog):
    processor = _ScaledLossProcessor()
    est = _estimator(caplog, batch_processor=processor)
    est.fit(LOADER, val_data=LOADER, epochs=1)
    assert processor.calls == {'fit': 4, 'evaluate': 4}
    data, label, pred, loss = E.BatchProcessor().evaluate_batch(est, next(iter(LOADER)))
    assert [x.shape for x in (data[0], label[0], pred[0], loss[0])] == [(10, 4), (10,), (10, 2), (10,)]
    with pytest.raises(ValueError, match='must contain fit_batch'):
        _estimator(caplog, batch_processor=object())


def test_argument_errors(caplog):
    est = _estimator(caplog)
    net = est.net
    with pytest.raises(ValueError, match='loss must be a Loss'):
        E.Estimator(net, mx.metric.Loss(), trainer=est.trainer)
    with pytest.raises(ValueError, match='context must be a Context'):
        E.Estimator(net, gluon.loss.L2Loss(), trainer=est.trainer, context='cpu')
    with pytest.raises(ValueError, match='Trainer must be a Gluon Trainer'):
        E.Estimator(net, gluon.loss.L2Loss(), trainer='sgd')
    with pytest.warns(UserWarning, match='Network already fully initialized'):
        E.Estimator(net, gluon.loss.L2Loss(), trainer=est.trainer, initializer=mx.init.One())
    with pytest.raises(ValueError, match='only support input as Gluon DataLoader'):
        est.fit(mx.nd.array(X), epochs=1)
    with pytest.raises(ValueError, match='only support input as Gluon DataLoader'):
        est.evaluate([(X, Y)])
    with pytest.raises(ValueError, match='exactly one type of iteration'):
        est.fit(LOADER, epochs=1, batches=2)
    with pytest.raises(ValueError, match='exactly one type of iteration'):
        est.fit(LOADER)
    with pytest.raises(ValueError, match='handlers must be an EventHandler'):
        est.fit(LOADER, epochs=1, event_handlers=[object()])
    # a user handler mixed with default ones must use the estimator's metrics
    with pytest.raises(ValueError, match='LoggingHandler refers to a metric instance'):
        est.fit(LOADER, epochs=1, event_handlers=[E.LoggingHandler(metrics=[mx.metric.Accuracy()])])


def test_explicit_metrics_are_renamed(caplog):
    train = mx.metric.CompositeEvalMetric(['acc', mx.metric.MAE()])
    est = _estimator(caplog, train_metrics=train, val_metrics=mx.metric.RMSE())
    assert [m.name for m in est.train_metrics] == ['training accuracy', 'training mae']
    assert [m.name for m in est.val_metrics] == ['validation rmse']
    with pytest.warns(UserWarning, match='No trainer specified'):
        l2 = E.Estimator(gluon.nn.Dense(1), gluon.loss.L2Loss())
    # no accuracy for a regression loss, only the loss named after the block
    assert [m.name for m in l2.train_metrics] == ['training l2loss']
    assert [m.name for m in l2.val_metrics] == ['validation l2loss']


def _one_dense(params=None, scope=True):
    net = gluon.nn.Sequential(params=params)
    if scope:
        with net.name_scope():
            net.add(gluon.nn.Dense(2, in_units=4))
    else:
        net.add(gluon.nn.Dense(2, in_units=4))
    return net


def test_val_net_shares_or_misses_the_trained_parameters(caplog):
    # a val_net built on net.collect_params() within a name scope evaluates the trained weights
    # (values as MXNet 1.9.1); without the scope its layer names differ, so its parameters are
    # new and uninitialized and the first validation raises MXNet's RuntimeError
    net = _one_dense()
    net.initialize(mx.init.Constant(0.1))
    val_net = _one_dense(params=net.collect_params())
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, val_net=val_net)
    est.logger.addHandler(caplog.handler)
    est.fit(LOADER, val_data=LOADER, epochs=2)
    assert [name for name, _ in (m.get() for m in est.val_metrics)] == [
        'validation accuracy', 'validation softmaxcrossentropyloss']
    np.testing.assert_allclose(_values(est.val_metrics), [1.0, 0.186195], rtol=1e-4)
    np.testing.assert_array_equal(val_net(mx.nd.array(X)).asnumpy(), net(mx.nd.array(X)).asnumpy())

    net = _one_dense(scope=False)
    net.initialize()
    val_net = _one_dense(params=net.collect_params(), scope=False)
    assert set(val_net.collect_params().keys()).isdisjoint(net.collect_params().keys())
    est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                      trainer=gluon.Trainer(net.collect_params(), 'sgd'), val_net=val_net)
    est.logger.addHandler(caplog.handler)
    with pytest.raises(RuntimeError, match='has not been initialized'):
        est.fit(LOADER, val_data=LOADER, epochs=1)
