"""Operators written in Python: MXNet's ``mx.operator.CustomOp`` / ``CustomOpProp`` API.

A user describes an operator with a :class:`CustomOpProp` subclass (argument, output and
auxiliary-state names, shape and type inference, which :class:`CustomOp` computes it),
registers it with ``@mx.operator.register('name')`` and calls it as
``mx.nd.Custom(*inputs, op_type='name', **kwargs)`` or ``mx.sym.Custom(...)``; the keyword
arguments reach the prop's constructor as strings.

Everything the frontends need to know about one ``Custom`` node -- input and output names,
the number of outputs, argument shapes -- depends on its ``op_type`` and keyword arguments,
so the registry entry is a :class:`_CustomSpec` whose answers come from the prop. The
implementation runs the user's ``forward`` inside a ``torch.autograd.Function`` whose
backward calls the user's ``backward``: gradients flow through torch autograd in
``autograd.record()``, Symbol executors and hybridized blocks alike. On ``device='meta'``
tensors (graph shape inference) it returns empty outputs of the shapes and dtypes the
prop infers, without calling the user's code.

``create_operator`` runs once per call imperatively and in hybridized blocks, and once per
node of a bound Symbol executor (which keeps its operators, so they may keep state across
passes), as in MXNet; MXNet calls it at bind time, neomx at the first forward pass.
"""
import collections
import contextlib
import threading
import warnings

import torch

from .. import _op_profile, autograd
from ..base import MXNetError, TYPE_FLAG_OF_TORCH, np_dtype, torch_dtype
from ..context import context_of_device, current_context
from .. import upper_layers
from ..util import is_np_array
from . import registry

__all__ = ['CustomOp', 'CustomOpProp', 'register', 'get_all_registered_operators',
           'get_operator_arguments', 'OperatorArguments']

_PROPS = {}                     # op_type -> CustomOpProp subclass
_NP_ARRAYS = {}                 # op_type -> whether it was registered under NumPy array semantics
_PROP_CACHE_SIZE = 256          # (op_type, kwargs) combinations whose prop is kept


class CustomOp:
    """The computation of a custom operator: override :meth:`forward` and :meth:`backward`.

    Both receive lists of NDArrays wrapping the operator's tensors; results are written into
    ``out_data`` / ``in_grad`` in place, best with :meth:`assign`, which honours ``req``.
    """

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute the outputs.

        Parameters
        ----------
        is_train : int
            1 in training mode (``autograd.record()``, ``forward(is_train=True)``), else 0.
        req : list of str
            How to write each output: ``'write'``, ``'add'``, ``'inplace'`` or ``'null'``.
        in_data : list of NDArray
            The arguments, in ``list_arguments`` order.
        out_data : list of NDArray
            The outputs to fill, of the shapes ``infer_shape`` gave.
        aux : list of NDArray
            The auxiliary states, updated in place.
        """

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute the gradients of the arguments.

        Parameters
        ----------
        req : list of str
            How to write each argument's gradient (``'null'``: not needed).
        out_grad : list of NDArray
            Gradients of the outputs (meaningless for props with ``need_top_grad=False``).
        in_data, out_data, aux : list of NDArray
            As in :meth:`forward`.
        in_grad : list of NDArray
            The argument gradients to fill.
        """

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` asks: ``'write'``/``'inplace'`` copy, ``'add'``
        accumulates, ``'null'`` (or anything else) leaves ``dst`` alone."""
        if req in ('write', 'inplace'):
            dst[:] = src
        elif req == 'add':
            dst[:] = dst + src


class CustomOpProp:
    """The description of a custom operator: names, shape and type inference, and the
    :class:`CustomOp` that computes it.

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` uses the outputs' gradients; loss-like operators, which start
        the backward pass themselves, set it False.
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def list_arguments(self):
        """Names of the arguments (inputs); ``['data']`` by default."""
        return ['data']

    def list_outputs(self):
        """Names of the outputs; ``['output']`` by default."""
        return ['output']

    def list_auxiliary_states(self):
        """Names of the auxiliary states; none by default."""
        return []

    def infer_shape(self, in_shape):
        """``(argument shapes, output shapes, auxiliary shapes)`` from the argument shapes
        (lists; ``[]`` where unknown). By default every output has the first argument's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """``(argument types, output types, auxiliary types)`` (numpy types) from the argument
        types. By default everything has the first argument's type."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types of (arguments, outputs, auxiliary states): all ``'default'``.

        As MXNet's, this default refuses sparse arguments (AssertionError): an operator that
        takes them overrides it (and ``infer_storage_type_backward``)."""
        for i, stype in enumerate(in_stype):
            if stype != 'default':
                raise AssertionError(
                    "Default infer_storage_type implementation doesnt allow non default stypes: found non "
                    "default stype '%s' for in_stype[%d]. Please implement infer_storage_type and "
                    "infer_storage_type_backward interface in your custom operator if you have non-default "
                    "input/output stypes" % (stype, i))
        return (in_stype, ['default'] * len(self.list_outputs()),
                ['default'] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        """Storage types of the backward pass's arrays: all ``'default'``."""
        return (ograd_stype, in_stype, out_stype, ['default'] * len(igrad_stype), aux_stype)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays ``backward`` reads: the output gradients (if ``need_top_grad``), the
        inputs and the outputs."""
        return (list(out_grad) if self.need_top_grad_ else []) + list(in_data) + list(out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The :class:`CustomOp` computing this operator.

        Parameters
        ----------
        ctx : Context
        in_shapes : list of list of int
            Shapes of the arguments then the auxiliary states.
        in_dtypes : list of int
            Their MXNet type flags (0 float32, 1 float64...).
        """
        return CustomOp()


def register(reg_name):
    """Class decorator: register a :class:`CustomOpProp` subclass as custom operator
    ``reg_name`` (``op_type`` of ``mx.nd.Custom``); a later registration replaces it."""
    def do_register(prop_cls):
        if reg_name in _PROPS:
            warnings.warn('New registration is overriding existing custom operator %s' % reg_name,
                          stacklevel=2)
        _PROPS[reg_name] = prop_cls
        _NP_ARRAYS[reg_name] = is_np_array()    # as MXNet: the arrays its code gets are mx.np's then
        return prop_cls
    return do_register


def get_all_registered_operators():
    """The names of every registered operator (aliases included), sorted.

    Returns
    -------
    list of str
    """
    return sorted(registry.all_ops())


OperatorArguments = collections.namedtuple('OperatorArguments', ['narg', 'names', 'types'])


def _attr_type(attr):
    if attr.default is registry.REQUIRED:
        return '%s, required' % attr.kind
    default = int(attr.default) if isinstance(attr.default, bool) else attr.default
    return '%s, optional, default=%s' % (attr.kind, default)


def get_operator_arguments(op_name):
    """The arguments of operator ``op_name``: inputs then attributes, with their types.

    Returns
    -------
    OperatorArguments
        ``(narg, names, types)``.

    Raises
    ------
    MXNetError
        When no operator of that name is registered.
    """
    spec = registry.get(op_name)
    inputs = [('data', 'NDArray-or-Symbol[]')] if spec.variadic else [
        (name, 'NDArray-or-Symbol') for name in spec.inputs]
    arguments = inputs + [(name, _attr_type(attr)) for name, attr in spec.attrs.items()]
    return OperatorArguments(len(arguments), [n for n, _ in arguments], [t for _, t in arguments])


# ------------------------------------------------------------------ the operator
@registry.memoized(_PROP_CACHE_SIZE)
def _make_prop(prop_cls, op_type, kwargs):
    try:
        return prop_cls(**dict(kwargs))
    except TypeError as err:
        raise MXNetError('Custom: cannot create custom operator %s with arguments %s: %s'
                         % (op_type, dict(kwargs), err)) from None


def _prop_of(op_type, kwargs):
    """The prop of custom operator ``op_type`` made with the string ``kwargs`` (an items tuple).

    Props describe an operator and are made once per set of arguments: every frontend
    question about a node (names, number of outputs) asks the same instance.
    """
    prop_cls = _PROPS.get(op_type)
    registry.check(prop_cls is not None, 'Custom', 'Cannot find custom operator %s', op_type)
    return _make_prop(prop_cls, op_type, kwargs)


def _prop_for(attrs):
    """The prop of a ``Custom`` node's parsed attributes."""
    kwargs = tuple(item for item in attrs.items() if item[0] != 'op_type')
    return _prop_of(attrs['op_type'], kwargs)


class _CustomSpec(registry.OpSpec):
    """The registry entry of ``Custom``: any keyword is an attribute (kept as MXNet's string),
    and the inputs are the prop's arguments then its auxiliary states."""

    def parse_attrs(self, kwargs):
        attrs = {'op_type': None}
        for key, value in kwargs.items():
            if not (key.startswith('__') and key.endswith('__')):    # Symbol annotations
                attrs[key] = value if isinstance(value, str) else str(value)
        registry.check(attrs['op_type'] is not None, 'Custom', "Required argument 'op_type' is missing.")
        _prop_for(attrs)       # unknown op_types and bad arguments fail here, at the call
        return attrs

    def input_names(self, attrs, num_args=None):
        prop = _prop_for(attrs)
        return tuple(prop.list_arguments()) + tuple(prop.list_auxiliary_states())

    def aux_names(self, attrs):
        return tuple(_prop_for(attrs).list_auxiliary_states())


def _list_outputs(attrs):
    return tuple(_prop_for(attrs).list_outputs())


def _count_outputs(attrs):
    return len(_prop_for(attrs).list_outputs())


def _infer_shapes(prop, arg_shapes):
    """``(argument, output, auxiliary)`` shapes as tuples from the prop's ``infer_shape``
    (given lists, ``[]`` for unknown shapes, as MXNet gives them)."""
    result = prop.infer_shape([list(s) if s is not None else [] for s in arg_shapes])
    args, outs, aux = result if len(result) == 3 else (result[0], result[1], ())
    return ([tuple(s) for s in args], [tuple(s) for s in outs], [tuple(s) for s in aux])


def _infer_args(shapes, attrs):
    """Argument and auxiliary-state shapes from the known ones (the prop's ``infer_shape``)."""
    prop = _prop_for(attrs)
    names = prop.list_arguments()
    args, _, aux = _infer_shapes(prop, [shapes.get(n) for n in names])
    return dict(zip(list(names) + list(prop.list_auxiliary_states()), args + aux))


def _output_types(prop, args):
    """The outputs' torch dtypes from the prop's ``infer_type`` on the arguments' numpy types."""
    result = prop.infer_type([np_dtype(t.dtype) for t in args])
    return [torch_dtype(t) for t in result[1]]


class _BoundOperators(threading.local):
    """The CustomOp instances of the executor running on this thread, if any."""

    def __init__(self):
        super().__init__()
        self.store = None       # the executor's list of (key, CustomOp), by call position
        self.position = 0       # Custom calls made so far in this pass


_BOUND = _BoundOperators()


@contextlib.contextmanager
def bound_operators(store):
    """Scope of one executor pass: its ``Custom`` nodes reuse the operators kept in
    ``store`` (a list, empty at first), the n-th call of the pass taking the n-th entry
    when it was made for the same prop, context, shapes and types."""
    previous = _BOUND.store, _BOUND.position
    _BOUND.store, _BOUND.position = store, 0
    try:
        yield
    finally:
        _BOUND.store, _BOUND.position = previous


def _operator_for(prop, ctx, shapes, type_flags):
    """``prop.create_operator(...)``, or the executor's operator for this call position."""
    store = _BOUND.store
    if store is None:
        return prop.create_operator(ctx, [list(s) for s in shapes], list(type_flags))
    key = (prop, ctx, shapes, type_flags)
    position = _BOUND.position
    _BOUND.position += 1
    if position < len(store) and store[position][0] == key:
        return store[position][1]
    op = prop.create_operator(ctx, [list(s) for s in shapes], list(type_flags))
    del store[position:]
    store.append((key, op))
    return op


class _Invocation:
    """One run of a user's :class:`CustomOp`: what its forward and backward calls share."""
    __slots__ = ('op', 'ctx', 'aux', 'out_shapes', 'out_dtypes', 'op_type')

    def __init__(self, op, ctx, aux, out_shapes, out_dtypes, op_type=None):
        self.op, self.ctx, self.aux, self.op_type = op, ctx, aux, op_type
        self.out_shapes, self.out_dtypes = out_shapes, out_dtypes

    def wrap(self, tensors):
        array_from_tensor = upper_layers.get('np_array_from_tensor' if _NP_ARRAYS.get(self.op_type)
                                             else 'array_from_tensor')
        return [array_from_tensor(t, self.ctx) for t in tensors]

    def forward(self, args):
        device = args[0].device if args else self.ctx.torch_device
        outputs = self.wrap([torch.zeros(s, dtype=d, device=device)
                             for s, d in zip(self.out_shapes, self.out_dtypes)])
        with _op_profile.custom_scope(self.op_type):
            _run_user_code(self.op.forward, 'forward', is_train=int(autograd.is_training()),
                           req=['write'] * len(outputs), in_data=self.wrap(args), out_data=outputs,
                           aux=self.wrap(self.aux))
        return tuple(o._t for o in outputs)

    def backward(self, out_grads, args, outputs, needs_grad):
        in_grads = self.wrap([torch.zeros_like(t) for t in args])
        with _op_profile.custom_scope(self.op_type, backward=True):
            _run_user_code(self.op.backward, 'backward',
                           req=['write' if needed else 'null' for needed in needs_grad],
                           out_grad=self.wrap(out_grads), in_data=self.wrap(args),
                           out_data=self.wrap(outputs), in_grad=in_grads, aux=self.wrap(self.aux))
        return tuple(g._t if needed else None for g, needed in zip(in_grads, needs_grad))


def _run_user_code(method, what, **kwargs):
    """Call a user's ``forward``/``backward``; what it raises reaches the caller as an
    ``MXNetError`` naming the operator's class and the exception, as in MXNet."""
    try:
        method(**kwargs)
    except MXNetError:
        raise
    except Exception as err:    # pylint: disable=broad-except
        raise MXNetError('custom operator %s.%s failed: %s: %s' % (
            type(method.__self__).__name__, what, type(err).__name__, err)) from err


class _CustomFunction(torch.autograd.Function):
    """The user's forward and backward as one torch autograd node."""

    @staticmethod
    def forward(ctx, invocation, *args):        # pylint: disable=arguments-differ
        outputs = invocation.forward(args)
        ctx.mark_non_differentiable(*[o for o in outputs if not o.is_floating_point()])
        ctx.invocation = invocation
        ctx.save_for_backward(*args, *outputs)
        return outputs

    @staticmethod
    def backward(ctx, *out_grads):              # pylint: disable=arguments-differ
        saved = ctx.saved_tensors
        n_args = len(saved) - len(out_grads)
        grads = ctx.invocation.backward(out_grads, saved[:n_args], saved[n_args:], ctx.needs_input_grad[1:])
        return (None,) + grads


@registry.register('Custom', variadic=True, spec_class=_CustomSpec, attrs=[('op_type', registry.STR)],
                   num_outputs=_count_outputs, output_names=_list_outputs, infer_args=_infer_args)
def custom(*tensors, op_type, **kwargs):
    """Apply a custom operator written in Python (a registered :class:`CustomOpProp`).

    Takes the arguments then the auxiliary states of custom operator ``op_type``; the
    other keyword arguments reach its prop's constructor as strings.
    """
    prop = _prop_of(op_type, tuple(kwargs.items()))
    n_args, n_aux = len(prop.list_arguments()), len(prop.list_auxiliary_states())
    registry.check(len(tensors) == n_args + n_aux, 'Custom', 'custom operator %s expects %d inputs, but got %d '
                   'instead.', op_type, n_args + n_aux, len(tensors))
    args, aux = tensors[:n_args], tensors[n_args:]
    in_shapes, out_shapes, aux_shapes = _infer_shapes(prop, [t.shape for t in args])
    given = [tuple(t.shape) for t in tensors]
    registry.check(in_shapes + aux_shapes == given, 'Custom', 'infer_shape of %s gives input shapes %s for '
                   'inputs of shapes %s', op_type, in_shapes + aux_shapes, given)
    out_dtypes = _output_types(prop, args)
    if any(t.is_meta for t in tensors):     # shape inference: no user code runs
        return _single_or_tuple(tuple(torch.empty(s, dtype=d, device='meta') for s, d in zip(out_shapes, out_dtypes)))
    ctx = context_of_device(tensors[0].device) if tensors else current_context()
    op = _operator_for(prop, ctx, tuple(given), tuple(TYPE_FLAG_OF_TORCH[t.dtype] for t in tensors))
    outputs = _CustomFunction.apply(_Invocation(op, ctx, aux, out_shapes, out_dtypes, op_type), *args)
    return _single_or_tuple(outputs)


def _single_or_tuple(outputs):
    # A single-output operator returns its tensor: compiled graphs use the value directly.
    return outputs[0] if len(outputs) == 1 else outputs
