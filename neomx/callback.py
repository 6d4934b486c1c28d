"""``mx.callback``: callbacks for ``Module.fit``.

Batch-end callbacks receive a ``BatchEndParam`` (``epoch``, ``nbatch``, ``eval_metric``,
``locals``); epoch-end callbacks receive ``(epoch, symbol, arg_params, aux_params)``.
"""
import logging
import math
import time

from .model import save_checkpoint
# defined in mx.model, whose FeedForward.fit uses it (mx.model cannot import this module)
from .model import LogValidationMetricsCallback

__all__ = ['module_checkpoint', 'do_checkpoint', 'log_train_metric', 'Speedometer', 'ProgressBar',
           'LogValidationMetricsCallback']


def _every(period):
    """Whether epoch ``iter_no`` (0-based) ends a period of ``period`` epochs (at least 1)."""
    period = int(max(1, period))
    return lambda iter_no: (iter_no + 1) % period == 0


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback that saves ``mod`` (``mod.save_checkpoint``) every ``period`` epochs.

    The checkpoint of epoch ``i`` (0-based) is numbered ``i + 1``.
    """
    due = _every(period)

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if due(iter_no):
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """An epoch-end callback writing ``prefix-symbol.json`` and ``prefix-%04d.params`` every
    ``period`` epochs (the checkpoint of epoch ``i``, 0-based, is numbered ``i + 1``).

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = tmp.name
    >>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2), name='softmax')
    >>> train_iter = mx.io.NDArrayIter(np.ones((4, 3)), np.array([0, 1, 0, 1]), batch_size=2)
    >>> module = mx.mod.Module(net)
    >>> module.fit(train_iter, num_epoch=2,
    ...            epoch_end_callback=mx.callback.do_checkpoint(os.path.join(folder, 'mlp')))
    >>> sorted(os.listdir(folder))
    ['mlp-0001.params', 'mlp-0002.params', 'mlp-symbol.json']
    >>> tmp.cleanup()
    """
    due = _every(period)

    def _callback(iter_no, sym, arg, aux):
        if due(iter_no):
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback logging ``Iter[epoch] Batch[n] Train-<metric>=<value>`` every
    ``period`` batches, then resetting the metric's local statistics with ``auto_reset``."""
    def _callback(param):
        if param.nbatch % period or param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info('Iter[%d] Batch[%d] Train-%s=%f', param.epoch, param.nbatch, name, value)
        if auto_reset:
            param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """A batch-end callback logging the training speed (and the metric) every ``frequent`` batches.

    Logs ``Epoch[e] Batch [a-b]\\tSpeed: <n> samples/sec\\t<metric>=<value>``; with
    ``auto_reset`` the metric's local statistics restart after each log line, so each line
    shows the metric of the last ``frequent`` batches (else of the epoch so far, ``[0-b]``).

    Parameters
    ----------
    batch_size : int
    frequent : int
    auto_reset : bool

    Example
    -------
    >>> import logging, sys
    >>> root, handler = logging.getLogger(), logging.StreamHandler(sys.stdout)
    >>> level = root.level
    >>> root.addHandler(handler); root.setLevel(logging.INFO)          # log to stdout here
    >>> metric = mx.metric.Accuracy()
    >>> metric.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.8, 0.2]])])
    >>> speedometer = mx.callback.Speedometer(batch_size=2, frequent=2)
    >>> for nbatch in range(3):                 # the first call starts the clock
    ...     speedometer(mx.model.BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=metric, locals=None))
    Epoch[0] Batch [0-2] Speed: ... samples/sec accuracy=0.500000
    >>> root.removeHandler(handler); root.setLevel(level)
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:  # a new epoch started: restart the clock
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float('inf')
        self._log(param, count, speed)
        self.tic = time.time()

    def _log(self, param, count, speed):
        if param.eval_metric is None:
            logging.info('Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec', param.epoch, count, speed)
            return
        name_value = param.eval_metric.get_name_value()
        first = count - self.frequent if self.auto_reset else 0
        if self.auto_reset:
            param.eval_metric.reset_local()
        msg = 'Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec' + '\t%s=%f' * len(name_value)
        logging.info(msg, param.epoch, first, count, speed, *[x for pair in name_value for x in pair])


class ProgressBar:
    """A batch-end callback logging a text progress bar ``[=====-----] 50%`` of an epoch.

    Parameters
    ----------
    total : int
        Number of batches per epoch.
    length : int
        Width of the bar in characters.

    Example
    -------
    >>> import logging, sys
    >>> root, handler = logging.getLogger(), logging.StreamHandler(sys.stdout)
    >>> level = root.level
    >>> root.addHandler(handler); root.setLevel(logging.INFO)          # log to stdout here
    >>> bar = mx.callback.ProgressBar(total=4, length=10)
    >>> bar(mx.model.BatchEndParam(epoch=0, nbatch=2, eval_metric=None, locals=None))
    [=====-----] 50%
    >>> root.removeHandler(handler); root.setLevel(level)
    """

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        fraction = param.nbatch / float(self.total)
        filled = int(round(self.bar_len * fraction))
        bar = '=' * filled + '-' * (self.bar_len - filled)
        logging.info('[%s] %s%s\r', bar, math.ceil(100.0 * fraction), '%')
