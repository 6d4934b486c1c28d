"""MXNet's legacy Python operators: ``PythonOp``, ``NumpyOp`` and ``NDArrayOp``.

MXNet deprecated them for :class:`~neomx.operator.custom.CustomOp` but still ships them:
an instance describes one operator (``list_arguments``, ``list_outputs``,
``infer_shape(in_shapes) -> (in_shapes, out_shapes)``, ``forward(in_data, out_data)``,
``backward(out_grad, in_data, out_data, in_grad)``) and ``get_symbol(*inputs, name=...)``
puts it into a Symbol graph. neomx runs them as custom operators: each ``get_symbol`` call
registers a :class:`~neomx.operator.custom.CustomOpProp` for that instance (so its state
lives as long as the graphs using it, as MXNet keeps a reference to it). ``NumpyOp`` sees
numpy copies of the arrays and its writes are copied back; ``NDArrayOp`` sees NDArrays.
"""
import itertools
import warnings

from .. import upper_layers
from .custom import CustomOp, CustomOpProp, register

__all__ = ['PythonOp', 'NumpyOp', 'NDArrayOp']

_OP_NUMBERS = itertools.count()


class PythonOp:
    """Base class of operators written in Python (deprecated in MXNet: use ``CustomOp``).

    Parameters
    ----------
    need_top_grad : bool
        What :meth:`need_top_grad` answers: False for loss-like operators whose backward
        ignores the outputs' gradients.
    """
    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn('PythonOp has been deprecated. Please use CustomOp')

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A Symbol applying this operator to the input Symbols ``args`` (``name=`` names it)."""
        raise NotImplementedError('Must override this')

    def forward(self, in_data, out_data):
        """Fill ``out_data`` from ``in_data``; copies the first input by default."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Fill ``in_grad``; ones by default."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """``(argument shapes, output shapes)``; the outputs have the first argument's shape."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def need_top_grad(self):
        """Whether :meth:`backward` uses the outputs' gradients."""
        return self.need_top_grad_


def _symbol_of(python_op, compute_class, args, kwargs):
    """``mx.sym.Custom`` over ``args`` computed by ``compute_class(python_op)``."""
    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=python_op.need_top_grad())

        def list_arguments(self):
            return python_op.list_arguments()

        def list_outputs(self):
            return python_op.list_outputs()

        def infer_shape(self, in_shape):
            in_shapes, out_shapes = python_op.infer_shape(in_shape)
            return in_shapes, out_shapes, []

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return compute_class(python_op)

    op_type = '_%s%d' % (type(python_op).__name__, next(_OP_NUMBERS))
    register(op_type)(_Prop)
    python_op.info_ = op_type       # what the _Native/_NDArray operators' ``info`` names
    PythonOp._ref_holder.append(python_op)
    return upper_layers.get('custom_symbol')(*args, op_type=op_type, **kwargs)


class _NumpyCompute(CustomOp):
    """Runs a :class:`NumpyOp` on numpy copies, copying what it writes back."""

    def __init__(self, python_op):
        self.python_op = python_op

    def forward(self, is_train, req, in_data, out_data, aux):
        outs = [o.asnumpy() for o in out_data]
        self.python_op.forward(in_data=[a.asnumpy() for a in in_data], out_data=outs)
        for dst, r, src in zip(out_data, req, outs):
            self.assign(dst, r, src)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        grads = [g.asnumpy() for g in in_grad]
        self.python_op.backward(out_grad=[g.asnumpy() for g in out_grad],
                                in_data=[a.asnumpy() for a in in_data],
                                out_data=[o.asnumpy() for o in out_data], in_grad=grads)
        for dst, r, src in zip(in_grad, req, grads):
            self.assign(dst, r, src)


class NumpyOp(PythonOp):
    """An operator computed with numpy: :meth:`forward` and :meth:`backward` receive numpy
    arrays and write their results into ``out_data`` / ``in_grad`` in place.

    Example
    -------
    >>> import neomx as mx
    >>> op = NumpyOp()                      # forward copies, backward writes ones
    >>> exe = op.get_symbol(mx.sym.var('x')).bind(mx.cpu(), {'x': mx.nd.ones(2) * 3},
    ...                                           args_grad={'x': mx.nd.zeros(2)})
    >>> exe.forward(is_train=True)[0].asnumpy()
    array([3., 3.], dtype=float32)
    """

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn('NumpyOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        return _symbol_of(self, _NumpyCompute, args, kwargs)


class _NDArrayCompute(CustomOp):
    """Runs an :class:`NDArrayOp` on the operator's NDArrays."""

    def __init__(self, python_op):
        self.python_op = python_op

    def forward(self, is_train, req, in_data, out_data, aux):
        self.python_op.forward(in_data=in_data, out_data=out_data)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.python_op.backward(out_grad=out_grad, in_data=in_data, out_data=out_data, in_grad=in_grad)


class NDArrayOp(PythonOp):
    """An operator computed with NDArrays: :meth:`forward` and :meth:`backward` receive
    NDArrays and write into ``out_data`` / ``in_grad``."""

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn('NDArrayOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        return _symbol_of(self, _NDArrayCompute, args, kwargs)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The ids of the arrays :meth:`backward` reads (all of them; neomx keeps them all)."""
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps
