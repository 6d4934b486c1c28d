"""Deferred (lazy) initialisation: the first call of a block whose parameters still have
unknown shapes (``Dense(10)`` without ``in_units``).

:func:`call_params` gives ``hybrid_forward`` a :class:`PendingParam` for each such
parameter, and :class:`ShapeInferringOps` wraps ``mx.nd`` so that an operator receiving one
completes its shape with the operator's ``infer_args`` rule, initializes it and runs on its
value. (``neomx.gluon.block`` falls back to shape inference over the traced graph for
parameters no such rule reaches.) The same role as ``torch/nn/modules/lazy.py``.
"""
import types

from ..ndarray import NDArray
from .parameter import DeferredInitializationError, shape_is_known

__all__ = ['PendingParam', 'ShapeInferringOps', 'call_params']


def call_params(reg_params, ctx):
    """``{name: value on ctx}`` of a block's parameters for its first call: those of known
    shape are initialized now, the others are :class:`PendingParam` placeholders."""
    params = {}
    for key, param in reg_params.items():
        if param._data is None and param._deferred_init and shape_is_known(param.shape):
            param._finish_deferred_init()
        params[key] = param.data(ctx) if param._data is not None else PendingParam(param, ctx)
    return params


class PendingParam:
    """Stands for a parameter of unknown shape in the first call of ``hybrid_forward`` (see
    :class:`ShapeInferringOps`' example)."""
    __slots__ = ('param', 'ctx')

    def __init__(self, param, ctx):
        self.param, self.ctx = param, ctx

    def __repr__(self):
        return '<pending %r>' % self.param


class ShapeInferringOps:
    """An ``F`` namespace wrapping ``mx.nd``: an operator that receives pending parameters
    completes their shapes with its ``infer_args``, initializes them and then runs.

    Example
    -------
    >>> weight = mx.gluon.Parameter('w', shape=(2, 0), allow_deferred_init=True)
    >>> weight.initialize(mx.init.One())
    >>> params = call_params({'weight': weight}, mx.cpu())
    >>> params['weight']
    <pending Parameter w (shape=(2, 0), ...)>
    >>> F = ShapeInferringOps(mx.nd)
    >>> F.FullyConnected(mx.nd.ones((1, 3)), params['weight'], num_hidden=2, no_bias=True)
    <BLANKLINE>
    [[3. 3.]]
    <NDArray 1x2 @cpu(0)>
    >>> weight.shape
    (2, 3)
    """

    def __init__(self, namespace):
        self._namespace = namespace

    def __getattr__(self, attr):
        value = getattr(self._namespace, attr)
        spec = getattr(value, 'spec', None)
        if spec is not None:
            return _inferring_op(value, spec)
        if isinstance(value, types.ModuleType):
            return ShapeInferringOps(value)
        return value


def _inferring_op(op, spec):
    def call(*args, **kwargs):
        args, kwargs = list(args), dict(kwargs)
        pending = _pending_inputs(spec, args, kwargs)
        if pending:
            _complete_shapes(spec, args, kwargs, pending)
        return op(*args, **kwargs)
    return call


def _input_slots(spec, args, kwargs):
    """(container, index or key, input name) of every input given to an op call."""
    n_in = len(spec.inputs)
    slots = [(args, i, spec.inputs[i]) for i in range(min(n_in, len(args)))]
    slots += [(kwargs, k, k) for k in spec.inputs if k in kwargs]
    return slots


def _pending_inputs(spec, args, kwargs):
    return [slot for slot in _input_slots(spec, args, kwargs)
            if isinstance(slot[0][slot[1]], PendingParam)]


def _complete_shapes(spec, args, kwargs, pending):
    """Infer, initialize and substitute the pending parameters among an op's inputs."""
    n_in = len(spec.inputs)
    attrs = dict(zip(spec.attr_names, args[n_in:]))
    attrs.update((k, v) for k, v in kwargs.items() if k not in spec.inputs and k not in ('name', 'out'))
    shapes = {name: (value.shape if isinstance(value, NDArray) else None)
              for holder, key, name in _input_slots(spec, args, kwargs)
              for value in (holder[key],)}
    if spec.infer_args is None:
        names = ', '.join(holder[key].param.name for holder, key, _ in pending)
        raise DeferredInitializationError(
            'Cannot infer the shape of %s: operator %s does not infer argument shapes; give '
            'the parameter a complete shape (in_units, in_channels...)' % (names, spec.name))
    inferred = spec.infer_args(shapes, spec.parse_attrs(attrs))
    for holder, key, name in pending:
        pending_param = holder[key]
        param = pending_param.param
        shape = inferred.get(name)
        if shape is None:
            raise DeferredInitializationError(
                "Operator %s could not infer the shape of input '%s' (Parameter '%s') from input "
                "shapes %s" % (spec.name, name, param.name, shapes))
        param.shape = tuple(shape)
        param._finish_deferred_init()
        holder[key] = param.data(pending_param.ctx)
