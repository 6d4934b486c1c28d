"""How the Estimator trains and evaluates on one batch."""
from .... import autograd
from ...utils import split_and_load

__all__ = ['BatchProcessor']


class BatchProcessor:
    """The per-batch steps of :class:`Estimator`: override :meth:`fit_batch` and
    :meth:`evaluate_batch` in a subclass to customise them.

    Both take the estimator, a batch ``(data, label, ...)`` from a DataLoader and the batch
    axis, split data and label across ``estimator.context`` with ``split_and_load`` and
    return four lists with one entry per context: ``data, label, pred, loss``.

    Example
    -------
    A processor that also counts the batches it trains on:

    >>> class Counting(mx.gluon.contrib.estimator.BatchProcessor):
    ...     batches = 0
    ...     def fit_batch(self, estimator, train_batch, batch_axis=0):
    ...         Counting.batches += 1
    ...         return super().fit_batch(estimator, train_batch, batch_axis)
    >>> x = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]], dtype='float32')
    >>> data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.array([1, 0, 1, 0])), batch_size=2)
    >>> net = mx.gluon.nn.Dense(2)
    >>> net.initialize()
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    >>> est = mx.gluon.contrib.estimator.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(),
    ...                                            trainer=trainer, context=mx.cpu(),
    ...                                            batch_processor=Counting())
    >>> est.logger.disabled = True
    >>> est.fit(data, epochs=3)
    >>> Counting.batches
    6
    """

    @staticmethod
    def _get_data_and_label(batch, ctx, batch_axis=0):
        """Shard ``batch[0]`` (data) and ``batch[1]`` (label) over the contexts ``ctx``."""
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Run ``estimator.val_net`` and ``estimator.val_loss`` on one validation batch.

        Parameters
        ----------
        estimator : Estimator
        val_batch : tuple of NDArray
            ``(data, label)`` from the validation DataLoader.
        batch_axis : int, default 0
            Axis along which the batch is split over the contexts.

        Returns
        -------
        data, label, pred, loss : list of NDArray
            One entry per context.
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward ``estimator.net`` and ``estimator.loss`` under ``autograd.record`` and
        back-propagate; the parameter update is left to :class:`GradientUpdateHandler`.

        Parameters
        ----------
        estimator : Estimator
        train_batch : tuple of NDArray
            ``(data, label)`` from the training DataLoader.
        batch_axis : int, default 0
            Axis along which the batch is split over the contexts.

        Returns
        -------
        data, label, pred, loss : list of NDArray
            One entry per context; ``loss[i]`` has one value per sample.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        autograd.backward(loss)
        return data, label, pred, loss
