"""mx.callback: the messages of the logging callbacks and the files of the checkpoint ones."""
import logging
import os

import numpy as np
import pytest

import neomx as mx
from neomx.module import BatchEndParam


def accuracy_after(correct, total):
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([1] * correct + [0] * (total - correct))], [mx.nd.array([[0, 1]] * total)])
    return metric


def messages(caplog):
    return [r.getMessage() for r in caplog.records]


@pytest.fixture
def clock(monkeypatch):
    """A fake time.time() advanced by hand."""
    now = [100.0]
    monkeypatch.setattr(mx.callback.time, 'time', lambda: now[0])
    return now


def test_speedometer_logs_speed_and_metric_every_frequent_batches(caplog, clock):
    speedometer = mx.callback.Speedometer(batch_size=4, frequent=2)
    metric = accuracy_after(3, 4)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            speedometer(BatchEndParam(0, nbatch, metric, None))
            clock[0] += 0.5
    # batch 0 starts the clock; batches 2 and 4 log 2 batches * 4 samples per second
    assert messages(caplog) == ['Epoch[0] Batch [0-2]\tSpeed: 8.00 samples/sec\taccuracy=0.750000',
                                'Epoch[0] Batch [2-4]\tSpeed: 8.00 samples/sec\taccuracy=nan']
    assert metric.num_inst == 0   # auto_reset cleared the local statistics


def test_speedometer_without_reset_or_metric(caplog, clock):
    cumulative = mx.callback.Speedometer(batch_size=1, frequent=1, auto_reset=False)
    plain = mx.callback.Speedometer(batch_size=1, frequent=1)
    metric = accuracy_after(1, 2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(2):
            cumulative(BatchEndParam(3, nbatch, metric, None))
            plain(BatchEndParam(3, nbatch, None, None))
            clock[0] += 0.25
        plain(BatchEndParam(4, 0, None, None))   # a new epoch restarts the clock silently
    assert messages(caplog) == ['Epoch[3] Batch [0-1]\tSpeed: 4.00 samples/sec\taccuracy=0.500000',
                                'Iter[3] Batch [1]\tSpeed: 4.00 samples/sec']
    assert metric.num_inst == 2


def test_log_train_metric(caplog):
    metric = accuracy_after(1, 4)
    callback = mx.callback.log_train_metric(period=2, auto_reset=True)
    with caplog.at_level(logging.INFO):
        callback(BatchEndParam(1, 1, metric, None))
        callback(BatchEndParam(1, 2, metric, None))
    assert messages(caplog) == ['Iter[1] Batch[2] Train-accuracy=0.250000']
    assert metric.num_inst == 0


def test_validation_metrics_and_progress_bar(caplog):
    with caplog.at_level(logging.INFO):
        mx.callback.LogValidationMetricsCallback()(BatchEndParam(2, 5, accuracy_after(1, 2), None))
        mx.callback.ProgressBar(total=4, length=8)(BatchEndParam(0, 1, None, None))
    assert messages(caplog) == ['Epoch[2] Validation-accuracy=0.500000', '[==------] 25%\r']


def small_module():
    data = mx.sym.var('data')
    return mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), name='softmax'))


def test_do_checkpoint_writes_every_period(tmp_path):
    prefix = str(tmp_path / 'net')
    mod = small_module()
    mod.bind([('data', (4, 3))], [('softmax_label', (4,))])
    mod.init_params()
    callback = mx.callback.do_checkpoint(prefix, period=2)
    args, aux = mod.get_params()
    for epoch in range(4):
        callback(epoch, mod.symbol, args, aux)
    assert sorted(os.listdir(tmp_path)) == ['net-0002.params', 'net-0004.params', 'net-symbol.json']
    _, loaded, _ = mx.model.load_checkpoint(prefix, 4)
    np.testing.assert_array_equal(loaded['fc_weight'].asnumpy(), args['fc_weight'].asnumpy())


def test_do_checkpoint_in_fit_and_module_checkpoint(tmp_path):
    prefix = str(tmp_path / 'fit')
    mod = small_module()
    data = mx.io.NDArrayIter(np.ones((8, 3), 'f'), np.zeros(8, 'f'), batch_size=4)
    mod.fit(data, num_epoch=2, epoch_end_callback=mx.callback.do_checkpoint(prefix))
    assert os.path.exists(prefix + '-0001.params') and os.path.exists(prefix + '-0002.params')
    mod.init_optimizer()
    mx.callback.module_checkpoint(mod, str(tmp_path / 'mod'), save_optimizer_states=True)(0)
    assert os.path.exists(str(tmp_path / 'mod-0001.states'))
