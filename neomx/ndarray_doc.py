"""``mx.ndarray_doc``: extra documentation of NDArray operators, one class per operator
(``<Op>Doc``), whose docstring holds examples."""

__all__ = ['NDArrayDoc', 'ReshapeDoc', 'elemwise_addDoc', 'BroadcastToDoc', 'StackDoc', 'CustomDoc']


class NDArrayDoc:
    """Base class of the operators' documentation."""


class ReshapeDoc(NDArrayDoc):
    """
    >>> mx.nd.reshape(mx.nd.arange(6), shape=(2, -1)).shape
    (2, 3)
    """


class elemwise_addDoc(NDArrayDoc):  # pylint: disable=invalid-name  (MXNet's name)
    """
    >>> mx.nd.elemwise_add(mx.nd.ones((2,)), mx.nd.ones((2,))).asnumpy().tolist()
    [2.0, 2.0]
    """


class BroadcastToDoc(NDArrayDoc):
    """
    >>> mx.nd.broadcast_to(mx.nd.array([[1], [2]]), shape=(2, 3)).asnumpy().tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """


class StackDoc(NDArrayDoc):
    """
    >>> mx.nd.stack(mx.nd.ones((2,)), mx.nd.zeros((2,)), axis=1).asnumpy().tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """


class CustomDoc(NDArrayDoc):
    """
    ``mx.nd.Custom(data, op_type='my_op')`` applies the custom operator registered as
    ``my_op`` (see ``mx.operator.register``).
    """
