"""``Executor``: a Symbol bound to argument, gradient and auxiliary arrays.

The executor runs the Symbol's compiled graph (see ``graph.py``) on the bound arrays'
tensors. ``forward(is_train=True)`` records the pass with torch autograd, starting from
fresh leaves that share memory with the arguments that want gradients; ``backward`` asks
torch for exactly those gradients and writes or adds them into the gradient arrays.
"""
import numpy as np
import torch

from .. import autograd
from ..base import MXNetError
from ..ndarray.ndarray import NDArray, wrap_tensor, zeros
from ..ndarray.sparse_arrays import SPARSE_MADE, hold_value, storage_tensor, with_stype
from ..operator.storage import to_dense
from ..operator.custom import bound_operators
from .. import _int_grad
from ..operator.detection import has_zero_gradient
from .common_expr import elimination_requested, eliminate_common_expr
from .graph import compiled, infer, resolve_open_shapes
from .integer_grads import carry_integer_gradients, needs_integer_gradients
from .memory_estimate import allocated_bytes
from .passes import INFERENCE_PASSES
from .placement import DevicePass, argument_contexts, placement
from .sparse_storage import check_bound_storage, keep_sparse_storage, output_stypes

__all__ = ['Executor', 'simple_bind']

_GRAD_REQS = ('write', 'add', 'null')
_STRIDED = torch.strided       # dense tensors' layout (a gradient of another is sparse)


def _as_list(arrays, names, what):
    """Arrays given as a list (in ``names`` order) or a dict, as a list; ValueError if any is missing."""
    if isinstance(arrays, dict):
        missing = [n for n in names if n not in arrays]
        if missing:
            raise ValueError('key `%s` is missing in `%s`' % (missing[0], what))
        return [arrays[n] for n in names]
    arrays = list(arrays or ())
    if len(arrays) != len(names):
        raise ValueError('Length of %s does not match the number of %s (%d): %s'
                         % (what, 'arguments' if what != 'aux_states' else 'auxiliary states', len(names), names))
    return arrays


def _optional_list(arrays, names):
    """Gradient arrays as a list with None where none is given."""
    if arrays is None:
        return [None] * len(names)
    if isinstance(arrays, dict):
        return [arrays.get(n) for n in names]
    return _as_list(arrays, names, 'args_grad')



def _check_global_context(ctx, arg_arrays, grad_arrays):
    """MXNet's bind rule: without ``group2ctx`` every argument and gradient array lives on the
    executor's context (auxiliary states are not checked, as in MXNet)."""
    for (kind, plural), arrays in ((('Input', 'arguments'), arg_arrays), (('Gradient', 'gradients'), grad_arrays)):
        for array in arrays:
            if array is not None and array.context != ctx:
                raise MXNetError('Check failed: x == default_ctx: %s array is in %s while binding with ctx=%s. '
                                 'All %s must be in global context (%s) unless group2ctx is specified for '
                                 'cross-device graph.' % (kind, array.context, ctx, plural, ctx))

def _grad_reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, 'null') for n in names]
    else:
        reqs = _as_list(grad_req, names, 'grad_req')
    for req in reqs:
        if req not in _GRAD_REQS:
            raise ValueError("grad_req must be one of 'write', 'add', 'null', got %r" % (req,))
    return reqs


def _copy_into(dst, value):
    if dst.stype != 'default' and isinstance(value, NDArray):
        value.copyto(dst)       # a sparse argument keeps its storage type (checks the shape)
        return
    src = value._t if isinstance(value, NDArray) else torch.as_tensor(np.asarray(value))
    if tuple(src.shape) != tuple(dst._t.shape):
        raise MXNetError('cannot copy an array of shape %s into argument of shape %s'
                         % (tuple(src.shape), tuple(dst._t.shape)))
    with torch.no_grad():
        dst._t.copy_(src)


class Executor:
    """A Symbol bound to arrays on one context; created by ``Symbol.bind``/``simple_bind``.

    Attributes
    ----------
    arg_arrays, grad_arrays, aux_arrays : list of NDArray
        In ``list_arguments()`` / ``list_auxiliary_states()`` order; a gradient is None for
        arguments with ``grad_req='null'`` or no gradient buffer.
    arg_dict, grad_dict, aux_dict : dict of str -> NDArray
    outputs : list of NDArray
        The results of the last :meth:`forward` (the same objects across calls).

    Example
    -------
    >>> x = mx.sym.var('x')
    >>> y = 2 * x * x
    >>> exe = y.simple_bind(mx.cpu(), x=(2,))
    >>> exe.arg_dict['x'][:] = mx.nd.array([1, 3])
    >>> exe.forward(is_train=True)[0]
    <BLANKLINE>
    [ 2. 18.]
    <NDArray 2 @cpu(0)>
    >>> exe.backward(mx.nd.ones(2))
    >>> exe.grad_dict['x']                      # 4 x
    <BLANKLINE>
    [ 4. 12.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req='write', aux_states=None, group2ctx=None,
                 handle=None):
        if handle is not None:
            raise MXNetError('Executor: neomx has no C executor handles; create executors with '
                             'Symbol.bind or simple_bind')
        self._symbol, self._ctx = symbol, ctx
        self._group2ctx = dict(group2ctx) if group2ctx else None
        arg_names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
        self.arg_arrays = _as_list(args, arg_names, 'args')
        grads = _optional_list(args_grad, arg_names)
        self._grad_req = [req if g is not None else 'null' for req, g in zip(_grad_reqs(grad_req, arg_names), grads)]
        self.grad_arrays = [g if req != 'null' else None for g, req in zip(grads, self._grad_req)]
        self.aux_arrays = _as_list(aux_states, aux_names, 'aux_states')
        if not self._group2ctx:
            _check_global_context(ctx, self.arg_arrays, self.grad_arrays)
        self.arg_dict = dict(zip(arg_names, self.arg_arrays))
        self.grad_dict = dict(zip(arg_names, self.grad_arrays))
        self.aux_dict = dict(zip(aux_names, self.aux_arrays))
        if any(req != 'null' for req in self._grad_req):
            _check_differentiable(symbol, {n for n, req in zip(arg_names, self._grad_req) if req != 'null'})
        # the graph that runs: with common subexpressions merged unless MXNET_ELIMINATE_COMMON_EXPR=0
        self._optimized = eliminate_common_expr(symbol) if elimination_requested() else symbol
        self._open_shapes = resolve_open_shapes(self._optimized, {n: a.shape for n, a in self.arg_dict.items()})
        inputs = None if self._optimized is symbol else symbol.list_inputs()
        trained = [a._t for a, req in zip(self.arg_arrays, self._grad_req) if req != 'null']
        carry = trained and needs_integer_gradients(self._optimized, trained)
        # sparse arguments not differentiated enter the graph as sparse tensors, whose calls
        # then follow the operators' storage rules (a csr batch is never densified)
        sparse_args = {n for n, a, req in zip(arg_names, self.arg_arrays, self._grad_req)
                       if a.stype != 'default' and req == 'null'}
        sparse_pass = (keep_sparse_storage,) if sparse_args else ()
        # the outputs' storage types, as MXNet infers them at bind (whether or not the sparse
        # arguments are differentiated, which makes them enter the graph dense)
        self._output_stypes = ['default'] * len(symbol._heads)
        if any(a is not None and a.stype != 'default' for a in self.arg_arrays):
            arg_stypes = {n: a.stype for n, a in self.arg_dict.items() if a is not None}
            check_bound_storage(self._optimized, arg_stypes)
            self._output_stypes = output_stypes(symbol, arg_stypes)
        # model parallelism: each operator on its ctx_group's context (the inference
        # rewrites, which make new nodes, are left out then)
        self._devices = placement(self._optimized, ctx, self._group2ctx)
        self._placed = (DevicePass(self._devices),) if self._group2ctx else ()
        self._graph = compiled(self._optimized, ctx, inputs, open_shapes=self._open_shapes,
                               passes=((carry_integer_gradients,) if carry else ()) + sparse_pass + self._placed)
        self._inference = compiled(self._optimized, ctx, self._graph.input_names,
                                   passes=(() if self._placed else INFERENCE_PASSES) + sparse_pass + self._placed,
                                   mirror=False, open_shapes=self._open_shapes)
        self._monitor = None        # (monitored graph, reporting function) of set_monitor_callback
        self._monitor_callback = self._monitor_all = None
        by_name = dict(self.arg_dict, **self.aux_dict)
        self._inputs = [by_name[n] for n in self._graph.input_names]
        self._sparse_inputs = {i for i, n in enumerate(self._graph.input_names) if n in sparse_args}
        position = {n: i for i, n in enumerate(self._graph.input_names)}
        self._trained = [(position[n], g, req) for n, g, req in zip(arg_names, self.grad_arrays, self._grad_req)
                         if req != 'null']
        self.outputs = self._allocate_outputs()
        self._written_outputs = set()   # outputs whose memory results are copied into (see reshape)
        self._heads = self._leaves = None
        self._rng_before = None     # generator state before the last inference pass (see forward)
        self._custom_ops = []       # the CustomOp instances of its Custom nodes (operator.custom)

    def _allocate_outputs(self):
        shapes, dtypes = infer(self._symbol, {n: a.shape for n, a in self.arg_dict.items()},
                               {n: a.dtype for n, a in self.arg_dict.items()})
        return [zeros(shapes.get(h, ()), ctx=self._output_context(h), dtype=dtypes.get(h), stype=stype)
                for h, stype in zip(self._symbol._heads, self._output_stypes)]

    def _output_context(self, head):
        """Where output ``head`` lives: on its operator's context (see :mod:`.placement`)."""
        node = head[0]
        if node.is_variable:
            arrays = dict(self.arg_dict, **self.aux_dict)
            return arrays[node.name].context if node.name in arrays else self._ctx
        return self._devices.get(node, self._ctx)

    @property
    def output_dict(self):
        """``{output name: NDArray}``."""
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def forward(self, is_train=False, **kwargs):
        """Run the graph; keyword arrays are first copied into the arguments of those names.

        With ``is_train`` the pass runs in training mode (Dropout active, BatchNorm on batch
        statistics) and is recorded for :meth:`backward`; without, it runs the graph
        rewritten for inference (:mod:`neomx.symbol.passes`: convolutions fused with
        BatchNorm, sums and relu). Returns :attr:`outputs`.
        """
        for name, value in kwargs.items():
            if name not in self.arg_dict:
                raise ValueError('Unknown argument %s; arguments are %s' % (name, list(self.arg_dict)))
            _copy_into(self.arg_dict[name], value)
        tensors = self._input_tensors()
        record = is_train and bool(self._trained)
        if record:
            leaves = _leaves(tensors, self._trained)
        scope = autograd.record(train_mode=is_train) if record else autograd.pause(train_mode=is_train)
        # a backward pass after an inference pass recomputes it: with the same random draws
        self._rng_before = _rng_state(self._ctx) if not record and self._trained else None
        with scope, bound_operators(self._custom_ops):
            if self._monitor is not None:
                results = self._monitor[0](tensors, self._monitor[1])
            else:
                results = (self._graph if is_train else self._inference)(tensors)
        for i, (out, tensor) in enumerate(zip(self.outputs, results)):
            if type(out) is not NDArray and out.stype != 'default':
                hold_value(out, tensor)     # its storage type inferred at bind
                continue
            tensor = tensor if tensor.layout is torch.strided else to_dense(tensor)
            if i in self._written_outputs and tensor.shape == out._t.shape:
                with torch.no_grad():
                    out._t.copy_(tensor)
            else:
                out._t = tensor
        self._heads = results if record else None
        self._leaves = leaves if record else None
        return self.outputs

    def _input_tensors(self):
        if not self._sparse_inputs:
            return [a._t for a in self._inputs]
        # the sparse inputs' compressed tensors: no dense form made
        return [storage_tensor(a) if i in self._sparse_inputs else a._t for i, a in enumerate(self._inputs)]

    def _record_pass(self, train_mode):
        """Run the bound graph recorded for backward (without changing the outputs)."""
        tensors = self._input_tensors()
        leaves = _leaves(tensors, self._trained)
        replayed, now = self._rng_before, None
        if replayed is not None:
            now = _rng_state(self._ctx)
            _set_rng_state(self._ctx, replayed)
        try:
            with autograd.record(train_mode=train_mode), bound_operators(self._custom_ops):
                self._heads = self._graph(tensors)
        finally:
            if now is not None:
                _set_rng_state(self._ctx, now)
        self._leaves = leaves

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` on every operator output (and input, with
        ``monitor_all``) in later forward passes, which then run the graph as bound (no
        inference rewrites, no mirroring).

        ``name`` is bytes as in MXNet (``fc_output``, ``fc_data``...); ``array`` is the
        value as an NDArray (MXNet passes a raw NDArrayHandle).
        """
        self._monitor_callback, self._monitor_all = callback, monitor_all     # kept by reshape
        graph = compiled(self._optimized, self._ctx, self._graph.input_names, mirror=False,
                         open_shapes=self._open_shapes, passes=self._placed,
                         monitor='executor_all' if monitor_all else 'outputs')
        ctx = self._ctx

        def report(name, op_name, tensor):  # pylint: disable=unused-argument
            callback(name, wrap_tensor(tensor, ctx))
        self._monitor = (graph, report)

    def backward(self, out_grads=None, is_train=True):
        """Gradients of the outputs (weighted by ``out_grads``, ones by default) with respect
        to the arguments, written (``'write'``) or added (``'add'``) into the gradient arrays.
        """
        if self._heads is None:
            if not self._trained:
                return
            # as MXNet: after forward(is_train=False) (or no forward at all), backward
            # differentiates an inference-mode pass over the current arguments
            self._record_pass(train_mode=False)
        if isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        heads, head_grads = [], []
        for i, head in enumerate(self._heads):
            if not head.requires_grad and _int_grad.is_integer(head):
                head = _int_grad.carrier_of(head)
            if head is not None and head.requires_grad:
                given = None if out_grads is None or i >= len(out_grads) else out_grads[i]
                if given is not None and given.size != head.numel():
                    if has_zero_gradient(head):     # never read: MXNet does not check it either
                        continue
                    raise MXNetError('Executor.backward: out_grads[%d] has shape %s, but output %d has '
                                     'shape %s' % (i, given.shape, i, tuple(head.shape)))
                heads.append(head)
                # MXNet copies out_grads into the executor's own arrays: any context will do
                head_grads.append(torch.ones_like(head) if given is None
                                  else given._t.to(device=head.device, dtype=head.dtype).reshape(head.shape))
        scope = autograd.train_mode() if is_train else autograd.predict_mode()
        grads = [None] * len(self._leaves)
        differentiable = [i for i, leaf in enumerate(self._leaves) if leaf.requires_grad]
        if heads and differentiable:
            with scope:
                found = torch.autograd.grad(heads, [self._leaves[i] for i in differentiable], head_grads,
                                            retain_graph=True, allow_unused=True)
            for i, grad in zip(differentiable, found):
                grads[i] = grad
        for (_, grad_array, req), grad in zip(self._trained, grads):
            if grad is None:
                if req == 'write':
                    grad_array._t.zero_()
                continue
            if SPARSE_MADE[0] and grad.layout is not _STRIDED:      # a sparse gradient: the rows dot(csr, w) used
                if req == 'write' and grad_array.stype == 'row_sparse':
                    grad_array._t = grad    # stored as they are, row_sparse
                    continue
                if req != 'add':
                    grad = grad.to_dense()  # for a dense buffer
            buf = grad_array._t
            if grad.dtype is not buf.dtype:     # an integer argument's float64 gradient
                grad = grad.to(buf.dtype)
            if req == 'add':
                buf.add_(grad)
            else:
                buf.copy_(grad)

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy parameter values into the bound arrays (cast to their dtypes).

        Raises
        ------
        ValueError
            For a name the symbol does not have, unless ``allow_extra_params``.
        """
        for params, targets in ((arg_params, self.arg_dict), (aux_params or {}, self.aux_dict)):
            for name, value in params.items():
                if name in targets:
                    with torch.no_grad():
                        targets[name]._t.copy_(value._t.to(targets[name]._t.dtype))
                elif not allow_extra_params:
                    raise ValueError('Find name "%s" that is not in the arguments' % name)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new Executor for new input shapes, sharing the arrays whose shapes do not change.

        Parameters
        ----------
        partial_shaping : bool
            Allow arguments not named in ``kwargs`` to change shape.
        allow_up_sizing : bool
            Allow arrays to grow.
        **kwargs : tuple of int
            New shapes by argument name.
        """
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise MXNetError('reshape: cannot infer every shape from %s' % kwargs)

        def resized(name, array, shape):
            if array is None or array.shape == tuple(shape):
                return array
            if name not in kwargs and not partial_shaping:
                raise MXNetError('Shape of unspecified array %s changed. This can cause the new executor '
                                 'to not share parameters with the old one. Please check for error in '
                                 'network. If this is intended, set partial_shaping=True to suppress '
                                 'this warning.' % name)
            size = int(np.prod(shape))
            if size > array.size:
                if not allow_up_sizing:
                    raise MXNetError('New shape of %s is larger than the original; set allow_up_sizing=True '
                                     'to allow it' % name)
                return zeros(shape, ctx=array.context, dtype=array.dtype)
            if array.stype != 'default' or not array._t.is_contiguous():
                return zeros(shape, ctx=array.context, dtype=array.dtype)
            # as MXNet: a smaller array is the first elements of the old one (same memory)
            return wrap_tensor(array._t.view(-1)[:size].view(tuple(shape)), array.context)
        names = self._symbol.list_arguments()
        args = [resized(n, a, s) for n, a, s in zip(names, self.arg_arrays, arg_shapes)]
        grads = [resized(n, g, s) for n, g, s in zip(names, self.grad_arrays, arg_shapes)]
        aux = [resized(n, a, s) for n, a, s in zip(self._symbol.list_auxiliary_states(), self.aux_arrays, aux_shapes)]
        reshaped = Executor(self._symbol, self._ctx, args, grads, self._grad_req, aux, group2ctx=self._group2ctx)
        reshaped.keep_monitor_of(self)
        # As MXNet's, whose executors share one memory pool: an output no larger than this
        # executor's is written into the first elements of it.
        for i, (mine, new) in enumerate(zip(self.outputs, reshaped.outputs)):
            if new.size <= mine.size and new.dtype == mine.dtype and new.context == mine.context \
                    and mine.stype == 'default' and mine._t.is_contiguous():
                reshaped.outputs[i] = wrap_tensor(mine._t.view(-1)[:new.size].view(new.shape), mine.context)
                reshaped._written_outputs.add(i)
        return reshaped

    def keep_monitor_of(self, other):
        """Install the monitor callback of executor ``other`` (if any) on this one, as
        MXNet's reshaped executors keep theirs."""
        if other._monitor_callback is not None:
            self.set_monitor_callback(other._monitor_callback, other._monitor_all)

    def get_optimized_symbol(self):
        """The Symbol this executor runs: its graph after common-subexpression elimination
        (see :mod:`.common_expr`)."""
        return self._optimized

    def debug_str(self):
        """The compiled graph's source, each operator call annotated with its node, and the
        estimated memory of its arrays as MXNet's last line, ``Total N MB allocated`` (see
        :mod:`.memory_estimate`)."""
        return self._graph.listing() + 'Total %d MB allocated\n' % (self.allocated_bytes() >> 20)

    def allocated_bytes(self):
        """The estimated bytes of the outputs and of the values kept for backward (see
        :mod:`.memory_estimate`; the total :meth:`debug_str` reports)."""
        shapes, dtypes = infer(self._optimized, {n: a.shape for n, a in self.arg_dict.items()},
                               {n: a.dtype for n, a in self.arg_dict.items()})
        trained = {n for n, req in zip(self._symbol.list_arguments(), self._grad_req) if req != 'null'}
        return allocated_bytes(self._optimized, shapes, dtypes, trained)


# Operators whose inputs get zero gradients whatever follows them: MXNet's gradient pass
# needs no gradient of the operators before them.
_GRADIENT_BLOCKS = frozenset(('BlockGrad', 'zeros_like', 'ones_like', 'shape_array', 'size_array'))


def _check_differentiable(symbol, trained):
    """Refuse, as MXNet's gradient pass does, a symbol whose heads reach a variable of
    ``trained`` (names) through an operator with no gradient (``spec.differentiable``)
    not behind a ``BlockGrad``."""
    leads_to_trained = {}
    for node in symbol._nodes():        # inputs before the nodes that use them
        leads_to_trained[node] = (node.name in trained if node.is_variable
                                  else any(leads_to_trained[child] for child, _ in node.inputs))
    seen, stack = set(), [node for node, _ in symbol._heads]
    while stack:
        node = stack.pop()
        if node in seen or node.is_variable or node.op in _GRADIENT_BLOCKS:
            continue
        seen.add(node)
        if not node.spec.differentiable and leads_to_trained[node]:
            raise MXNetError('Operator %s is non-differentiable because it didn\'t register FGradient '
                             'attribute (node %s; bind it with grad_req=\'null\' for its inputs or '
                             'put a stop_gradient after it)' % (node.op, node.name))
        stack.extend(child for child, _ in node.inputs)


def _rng_state(ctx):
    """The state of the torch generator that operators on ``ctx`` draw from."""
    device = ctx.torch_device
    if device.type == 'cuda':
        return torch.cuda.get_rng_state(device)
    return torch.get_rng_state()


def _set_rng_state(ctx, state):
    device = ctx.torch_device
    if device.type == 'cuda':
        torch.cuda.set_rng_state(state, device)
    else:
        torch.set_rng_state(state)


def _leaves(tensors, trained):
    """Fresh leaves for the arguments to differentiate (``(position, _, _)`` in ``trained``),
    put into ``tensors`` in place of theirs: aliases requiring gradients, or for an integer
    argument an alias carrying its gradient (see :mod:`neomx._int_grad`). Returns the
    tensors torch differentiates, in ``trained`` order."""
    leaves = []
    for pos, _, _ in trained:
        alias = tensors[pos] = tensors[pos].detach()
        if _int_grad.is_integer(alias):
            leaves.append(_int_grad.make_leaf(alias))
        else:
            leaves.append(alias.requires_grad_())
    return leaves


_STYPE_OF_FLAG = {'0': 'default', '1': 'row_sparse', '2': 'csr'}


def storage_types(symbol, stype_dict=None):
    """``({argument: stype}, {argument: gradient stype})`` of ``symbol``'s arguments, as
    ``simple_bind`` allocates them (the variables' ``stype`` unless ``stype_dict`` says)."""
    args, _ = symbol._variables()
    stypes = _arg_stypes(symbol, args, stype_dict or {})
    names = [n.name for n in args]
    return dict(zip(names, stypes)), dict(zip(names, _grad_stypes(symbol, args, stypes)))


def _arg_stypes(symbol, args, stype_dict):
    """Each argument's storage type: ``stype_dict``'s, else its variable's ``stype``."""
    return [stype_dict.get(n.name) or _STYPE_OF_FLAG.get(n.attrs.get('__storage_type__'), 'default')
            for n in args]


def _grad_stypes(symbol, args, stypes):
    """The gradients' storage types, as MXNet's backward storage inference gives them for the
    cases sparse models use: row_sparse for a row_sparse argument, for the right operand of a
    ``dot`` whose left operand is a csr argument, and for the weight of ``SparseEmbedding`` or
    of ``Embedding(sparse_grad=True)``; default otherwise, and for the weight of an
    ``Embedding(sparse_grad=False)`` even where that weight is row_sparse."""
    stype_of = {n: s for n, s in zip(args, stypes)}
    sparse = {n for n, s in stype_of.items() if s == 'row_sparse'}
    dense = set()       # the weights of Embedding(sparse_grad=False): a dense gradient, whatever their stype
    for node in symbol._nodes():
        if node.is_variable or not node.inputs:
            continue
        if node.spec.name == 'dot' and len(node.inputs) == 2 and not node.params.get('transpose_a') \
                and stype_of.get(node.inputs[0][0]) == 'csr':
            sparse.add(node.inputs[1][0])
        if node.spec.name == '_contrib_SparseEmbedding' or (
                node.spec.name == 'Embedding' and node.params.get('sparse_grad')):
            sparse.add(node.inputs[1][0])
        elif node.spec.name == 'Embedding' and len(node.inputs) > 1:
            dense.add(node.inputs[1][0])
    return ['row_sparse' if n in sparse and n not in dense else 'default' for n in args]


def simple_bind(symbol, ctx, grad_req, type_dict, shapes, stype_dict=None, group2ctx=None):
    """``Symbol.simple_bind``: zero-filled arrays of the inferred shapes and dtypes (float32
    where nothing decides), sparse where the variables' ``stype`` or ``stype_dict`` say (and
    their gradients where MXNet makes them row_sparse, see :func:`_grad_stypes`)."""
    known_shapes, known_dtypes = infer(symbol, shapes, type_dict)
    default_ctx = ctx
    args, aux = symbol._variables()
    unknown = [n.name for n in args + aux if (n, 0) not in known_shapes]
    if unknown:
        raise MXNetError('simple_bind: cannot infer the shapes of %s from %s' % (', '.join(unknown), shapes))

    # model parallelism: each array on the context of the group that uses it, as MXNet's
    contexts = argument_contexts(symbol, ctx, group2ctx) if group2ctx else {}

    def allocate(node, stype='default', compressed=False):
        shape, dtype = known_shapes[(node, 0)], known_dtypes.get((node, 0), torch.float32)
        ctx = contexts.get(node.name, default_ctx)
        if compressed:      # an input not differentiated: only its non-zeros are ever stored
            return zeros(shape, ctx=ctx, dtype=dtype, stype=stype)
        arr = zeros(shape, ctx=ctx, dtype=dtype)
        return arr if stype == 'default' else with_stype(arr._t, ctx, stype)
    reqs = _grad_reqs(grad_req, [n.name for n in args])
    stypes = _arg_stypes(symbol, args, stype_dict or {})
    arg_arrays = [allocate(n, s, s != 'default' and req == 'null') for n, s, req in zip(args, stypes, reqs)]
    grads = [allocate(n, s) if req != 'null' else None
             for n, req, s in zip(args, reqs, _grad_stypes(symbol, args, stypes))]
    return Executor(symbol, ctx, arg_arrays, grads, reqs, [allocate(n) for n in aux], group2ctx=group2ctx)
