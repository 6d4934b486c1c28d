"""``mx.monitor`` (``mx.mon``): statistics of the arrays executors compute, for debugging.

A :class:`Monitor` installed on executors (``Module.install_monitor`` or ``fit(monitor=)``)
collects, every ``interval`` batches between :meth:`~Monitor.tic` and :meth:`~Monitor.toc`,
a statistic of each operator output (and input, with ``monitor_all``) whose name matches a
pattern, then of the arguments and auxiliary states.
"""
import logging
import math
import re

from . import ndarray
from .ndarray import NDArray

__all__ = ['Monitor']

# names MXNet's module also holds (imported from its base module)
from math import sqrt  # noqa: E402,F401
from .base import py_str  # noqa: E402,F401


def _root_mean_square(array):
    """MXNet's default statistic: ``norm(x) / sqrt(size(x))``."""
    return ndarray.norm(array) / math.sqrt(array.size)


class Monitor:
    """Watch the tensors of executors every ``interval`` batches.

    Parameters
    ----------
    interval : int
        Batches between two collections (the first batch is collected).
    stat_func : callable, optional
        ``NDArray -> NDArray`` (or a list of them); the root mean square by default.
    pattern : str
        Regular expression: only names it matches (from their start) are collected, for
        example ``'.*weight|.*output'``.
    sort : bool
        Sort the results by name.
    monitor_all : bool
        Also collect each operator's inputs, not only its outputs.

    Example
    -------
    >>> data = mx.sym.var('data')
    >>> net = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    >>> exe = net.simple_bind(mx.cpu(), data=(1, 3))
    >>> exe.arg_dict['fc_weight'][:] = 1
    >>> exe.arg_dict['fc_bias'][:] = 0
    >>> mon = mx.monitor.Monitor(1, pattern='fc_output')
    >>> mon.install(exe)
    >>> mon.tic()
    >>> _ = exe.forward(data=mx.nd.ones((1, 3)))
    >>> [(step, name, text.strip()) for step, name, text in mon.toc()]     # root mean square, as text
    [(1, 'fc_output', '3.0')]
    """

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        self.interval = interval
        self.stat_func = stat_func or _root_mean_square
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all
        self.activated = False
        self.queue = []         # (step, name, statistic)
        self.step = 0
        self.exes = []

    def install(self, exe):
        """Watch executor ``exe`` (several may be installed)."""
        exe.set_monitor_callback(self._collect, self.monitor_all)
        self.exes.append(exe)

    def _collect(self, name, array):
        name = name.decode() if isinstance(name, bytes) else name
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def tic(self):
        """Start a batch (call before ``forward``): collect it when its turn comes."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End the batch: the collected ``[(step, name, statistic as text)]``, the
        arguments' and auxiliary states' statistics last; empty when not collected."""
        if not self.activated:
            return []
        for exe in self.exes:
            symbol = exe._symbol
            named = list(zip(symbol.list_arguments(), exe.arg_arrays))
            named += zip(symbol.list_auxiliary_states(), exe.aux_arrays)
            self.queue.extend((self.step, name, self.stat_func(array)) for name, array in named
                              if self.re_prog.match(name))
        self.activated = False
        queue, self.queue = self.queue, []
        if self.sort:
            queue.sort(key=lambda entry: entry[1])
        return [(step, name, _as_text(stat)) for step, name, stat in queue]

    def toc_print(self):
        """End the batch and log the results."""
        for step, name, text in self.toc():
            logging.info('Batch: %7d %-30s %s', step, name, text)


def _as_text(stat):
    """Tab-terminated values of a statistic: scalars as numbers, other arrays as numpy prints."""
    values = [stat] if isinstance(stat, NDArray) else list(stat)
    return ''.join((str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + '\t' for v in values)
