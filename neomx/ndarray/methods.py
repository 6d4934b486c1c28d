"""NDArray methods that forward to ``mx.nd`` functions (``x.sum(axis=0)``, ``x.exp()``...)."""
import numpy as np

from . import op
from .ndarray import NDArray
from .register import make_function

# method name -> nd function name (MXNet 1.9.1's NDArray methods)
METHODS = {name: name for name in (
    'abs', 'sign', 'round', 'rint', 'ceil', 'floor', 'trunc', 'fix', 'square', 'sqrt', 'rsqrt',
    'cbrt', 'rcbrt', 'exp', 'expm1', 'log', 'log10', 'log2', 'log1p', 'sin', 'cos', 'tan',
    'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh', 'arcsinh', 'arccosh', 'arctanh',
    'degrees', 'radians', 'relu', 'sigmoid', 'reciprocal', 'softmax', 'log_softmax', 'softmin',
    'sum', 'nansum', 'prod', 'nanprod', 'mean', 'max', 'min', 'norm', 'argmax', 'argmin',
    'argmax_channel', 'argsort', 'sort', 'topk', 'clip', 'flatten', 'expand_dims', 'squeeze',
    'tile', 'transpose', 'swapaxes', 'flip', 'split', 'split_v2', 'slice', 'slice_axis',
    'slice_like', 'take', 'pick', 'one_hot', 'pad', 'repeat', 'reshape_like', 'broadcast_to',
    'broadcast_like', 'broadcast_axes', 'zeros_like', 'ones_like', 'diag', 'depth_to_space',
    'space_to_depth', 'shape_array', 'size_array')}


def _forwarder(fn_name):
    by_class = {}       # an NDArray subclass with its own interface (mx.np.ndarray) -> its function

    def method(self, *args, **kwargs):
        if self._is_np_array:       # the operator with the subclass's arrays in and out
            function = by_class.get(type(self))
            if function is None:
                legacy = getattr(op, fn_name)
                function = by_class[type(self)] = make_function(legacy.spec, fn_name, array_class=type(self))
            return function(self, *args, **kwargs)
        return getattr(op, fn_name)(self, *args, **kwargs)
    method.__name__ = fn_name
    method.__doc__ = 'Same as ``mx.nd.%s(self, ...)``.' % fn_name
    return method


def attach():
    for meth, fn_name in METHODS.items():
        if hasattr(op, fn_name) and not hasattr(NDArray, meth):
            setattr(NDArray, meth, _forwarder(fn_name))

    def shape_method(fn_name):
        # MXNet: a copy by default; ``inplace=True`` gives a view sharing memory with self
        def method(self, *args, inplace=False, **kwargs):
            out = getattr(op, fn_name)(self, *args, **kwargs)
            if inplace:
                return self.reshape(out.shape)
            return out.copy() if out._t.data_ptr() == self._t.data_ptr() else out
        method.__name__ = fn_name
        method.__doc__ = ('Same as ``mx.nd.%s(self, ...)``; ``inplace=True`` returns a view of '
                          'self instead of a copy.' % fn_name)
        return method
    for name in ('flatten', 'expand_dims', 'squeeze'):
        setattr(NDArray, name, shape_method(name))

    def broadcast_to(self, shape):
        # MXNet's method passes tuple(shape) on: a numpy array works here, not in the operator
        if isinstance(shape, np.ndarray) and shape.ndim == 1:
            shape = tuple(shape.tolist())
        return op.broadcast_to(self, shape=shape)
    NDArray.broadcast_to = broadcast_to
