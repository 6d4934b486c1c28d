"""``mx.contrib.tensorboard``: :class:`LogMetricsCallback`, training metrics as TensorBoard
scalars (through ``torch.utils.tensorboard``; needs ``pip install "neomx[tensorboard]"``)."""
from .._optional import require

__all__ = ['LogMetricsCallback']


def _summary_writer(logging_dir):
    require('tensorboard', 'tensorboard', 'mx.contrib.tensorboard.LogMetricsCallback')
    return require('torch.utils.tensorboard', 'tensorboard',
                   'mx.contrib.tensorboard.LogMetricsCallback').SummaryWriter(logging_dir)


class LogMetricsCallback:
    """A batch-end or epoch-end callback (``Module.fit``, ``score``) writing each metric of
    ``param.eval_metric`` as a scalar, at step ``param.epoch``, to TensorBoard event files in
    ``logging_dir``; names get ``prefix-`` in front when ``prefix`` is given.

    Parameters
    ----------
    logging_dir : str
    prefix : str, optional

    Example
    -------
    >>> cb = mx.contrib.tensorboard.LogMetricsCallback('/tmp/logs', prefix='train')  # doctest: +SKIP
    >>> mod.fit(train_iter, batch_end_callback=cb)                                    # doctest: +SKIP
    """

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        self.summary_writer = _summary_writer(logging_dir)

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = '%s-%s' % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
