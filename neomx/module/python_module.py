"""Modules written in Python: :class:`PythonModule` (no parameters, outputs computed by the
subclass) and :class:`PythonLossModule` (a loss whose gradient a Python function gives),
for use in a :class:`~neomx.module.SequentialModule` after symbolic modules."""
import logging

from .. import ndarray as nd
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ['PythonModule', 'PythonLossModule', 'BaseModule', 'Uniform']


class PythonModule(BaseModule):
    """A module without parameters whose computation subclasses write in Python: they define
    ``_compute_output_shapes`` (the ``[(name, shape)]`` of the outputs), ``forward``,
    ``backward``, ``get_outputs`` and ``get_input_grads``.

    Parameters
    ----------
    data_names, label_names, output_names : list of str
    logger : logging.Logger

    Example
    -------
    A module doubling its input:

    >>> class Double(mx.mod.PythonModule):
    ...     def _compute_output_shapes(self):
    ...         return [('double_output', self.data_shapes[0][1])]
    ...     def forward(self, data_batch, is_train=None):
    ...         self._outputs = [data_batch.data[0] * 2]
    ...     def get_outputs(self, merge_multi_context=True):
    ...         return self._outputs
    ...     def backward(self, out_grads=None):
    ...         pass
    ...     def get_input_grads(self, merge_multi_context=True):
    ...         return []
    >>> mod = Double(data_names=['data'], label_names=None, output_names=['double_output'])
    >>> mod.bind(data_shapes=[('data', (1, 2))])
    >>> mod.output_shapes
    [('double_output', (1, 2))]
    >>> mod.forward(mx.io.DataBatch([mx.nd.array([[1, 2]])]))
    >>> mod.get_outputs()[0]
    <BLANKLINE>
    [[2. 4.]]
    <NDArray 1x2 @cpu(0)>
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names) if isinstance(data_names, tuple) else data_names
        self._label_names = list(label_names) if isinstance(label_names, tuple) else label_names
        self._output_names = output_names
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        """No parameters: two empty dicts."""
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False):
        """Nothing to initialize."""

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        """Nothing to set."""

    def update(self):
        """Nothing to update."""

    def init_optimizer(self, kvstore='local', optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
                       force_init=False):
        """No optimizer: nothing is learned."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with ``labels`` and the outputs (when bound with labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError('PythonModule does not support presliced labels')
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Record the input shapes (``[(name, shape)]``, in ``data_names`` order) and compute
        the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        assert grad_req == 'write', 'Python module only support write gradient'
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        assert len(data_shapes) == len(self._data_names)
        assert [x[0] for x in data_shapes] == self._data_names
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        if label_shapes is not None:
            assert self._label_names is not None
            assert len(self._label_names) == len(label_shapes)
            assert [x[0] for x in label_shapes] == self._label_names
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        raise NotImplementedError()


class PythonLossModule(PythonModule):
    """A loss: its output is its input (the scores), and backward gives the gradient that
    ``grad_func(scores, labels)`` returns.

    Parameters
    ----------
    name : str, default 'pyloss'
    data_names : one name, default ('data',)
    label_names : one name, default ('softmax_label',)
    logger : logging.Logger
    grad_func : callable(scores, labels) -> NDArray or array-like
        The gradient of the loss with respect to the scores.

    Shape
    -----
    Output: the data's shape; input gradient: the same.

    Example
    -------
    >>> loss = mx.mod.PythonLossModule(grad_func=lambda scores, labels: scores - labels)
    >>> loss.bind([('data', (2, 1))], [('softmax_label', (2, 1))])
    >>> loss.forward(mx.io.DataBatch([mx.nd.array([[3], [5]])], [mx.nd.array([[1], [1]])]), is_train=True)
    >>> loss.backward()
    >>> loss.get_input_grads()[0].asnumpy().tolist()
    [[2.0], [4.0]]
    """

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',), logger=logging,
                 grad_func=None):
        super().__init__(data_names, label_names, [name + '_output'], logger=logger)
        self._name = name
        assert len(data_names) == 1
        assert len(label_names) == 1
        self._scores = self._labels = self._scores_grad = None
        if grad_func is not None:
            assert callable(grad_func)
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + '_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, in training, the labels) of ``data_batch``."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        assert merge_multi_context is True
        return [self._scores]

    def backward(self, out_grads=None):
        """The gradient of the scores, from ``grad_func``."""
        assert out_grads is None, 'For a loss module, out_grads should be None'
        assert self.for_training
        self._backward_impl()

    def _backward_impl(self):
        if self._grad_func is None:
            raise NotImplementedError()
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True):
        assert merge_multi_context is True
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError()
