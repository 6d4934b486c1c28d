"""Gluon blocks as ``torch.nn.Module``s and torch modules as Gluon blocks, sharing memory.

neomx computes with torch, so a bridge needs no conversion of weights: :func:`to_torch`
gives a module whose parameters are views of the block's own parameter arrays, and
:func:`from_torch` gives a block whose parameters are views of the module's.
"""
import contextlib

import torch

from ..base import MXNetError
from .. import autograd
from .. import ndarray as nd
from .. import symbol
from ..gluon.block import Block, HybridBlock
from ..gluon.parameter import DeferredInitializationError
from . import fx_graph
from .._torch_private import aoti_compile_and_package

__all__ = ['to_torch', 'from_torch', 'export', 'aoti_package', 'GluonModule', 'TorchBlock']


def _torch_name(gluon_name):
    # torch refuses '.' in parameter names (it separates submodules); Gluon names use '_'
    return gluon_name.replace('.', '_')


def _to_nd(value):
    if isinstance(value, torch.Tensor):
        return nd.from_torch(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_nd(v) for v in value)
    return value


def _to_tensor(value):
    if isinstance(value, nd.NDArray):
        return value.as_torch()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_tensor(v) for v in value)
    return value


class GluonModule(torch.nn.Module):
    """A Gluon :class:`~neomx.gluon.Block` as a ``torch.nn.Module`` (made by :func:`to_torch`).

    Its parameters (``named_parameters()``) are the block's parameters under their Gluon
    names, as ``torch.nn.Parameter``s sharing memory with the block's arrays: an update by a
    torch optimizer is an update of the block. ``forward`` takes and returns torch tensors;
    ``module.train()`` and ``module.eval()`` select Gluon's training mode (dropout, batch norm).
    It runs under ``torch.compile`` and ``DistributedDataParallel``, pickles whole
    (``torch.save(module)``; the loaded module and its block share memory again) and exports
    with ``torch.export`` (see :func:`export` and :func:`aoti_package`).

    Shape
    -----
    As the block's: inputs and outputs are the block's arrays, as torch tensors.

    Example
    -------
    >>> net = mx.gluon.nn.Dense(2, in_units=3)
    >>> net.initialize(mx.init.One())
    >>> m = mx.bridge.to_torch(net)
    >>> sorted(n.split('_', 1)[1] for n, _ in m.named_parameters())   # Gluon's names
    ['bias', 'weight']
    >>> m(torch.ones(1, 3))
    tensor([[3., 3.]], grad_fn=<...>)
    """

    def __init__(self, block):
        super().__init__()
        self.block = None   # set below, outside torch's submodule bookkeeping
        object.__setattr__(self, 'block', block)
        self._bridged = []  # (gluon array, torch name of its Parameter)
        for name, param in block.collect_params().items():
            try:
                array = param.data()
            except DeferredInitializationError as err:
                raise MXNetError("to_torch: parameter '%s' of %s has a deferred shape; run the block "
                                 "once (or give in_units/in_channels) before bridging" % (name, block.name)) from err
            except RuntimeError as err:
                raise MXNetError("to_torch: parameter '%s' of %s is not initialized: %s"
                                 % (name, block.name, err)) from err
            if len(param.list_ctx()) > 1:
                raise MXNetError("to_torch: parameter '%s' lives on several contexts %s; bridge a "
                                 "block initialized on one" % (name, param.list_ctx()))
            # a new leaf on the same memory: torch's .grad stays on it, Gluon's own
            # gradient buffers are not touched
            tensor = torch.nn.Parameter(array.as_torch().detach(), requires_grad=param.grad_req != 'null')
            self.register_parameter(_torch_name(name), tensor)
            self._bridged.append((array, _torch_name(name)))

    def __setstate__(self, state):
        """Unpickled (``torch.load`` of a saved module): the block's arrays share memory with
        the module's Parameters again."""
        super().__setstate__(state)
        for array, name in self._bridged:
            array.set_torch(getattr(self, name).detach())

    @contextlib.contextmanager
    def _reading_torch_parameters(self):
        """While the block runs, its arrays stand for the torch Parameters (same memory), so
        that torch records the Parameters as the leaves of the graph."""
        # read by name at each call: torch.export, torch.func.functional_call and DDP put
        # their own tensors (fake, functional, replicated) in the module's place
        old = [array.set_torch(getattr(self, name)) for array, name in self._bridged]
        try:
            yield
        finally:
            for (array, _), tensor in zip(self._bridged, old):
                array.set_torch(tensor)

    def forward(self, *args):  # pylint: disable=arguments-differ
        inputs = [_to_nd(a) for a in args]
        with self._reading_torch_parameters():
            # compiling or exporting: the recorded path, whose operators torch can trace
            # (inference runs oneDNN kernels on raw memory, which fake tensors lack)
            if torch.is_grad_enabled() or torch.compiler.is_compiling():
                with autograd.record(train_mode=self.training):
                    out = self.block(*inputs)
            else:
                with autograd.predict_mode() if not self.training else autograd.train_mode():
                    out = self.block(*inputs)
        return _to_tensor(out)

    def extra_repr(self):
        return 'block=%s' % self.block.name


def to_torch(block):
    """A ``torch.nn.Module`` running Gluon ``block``, whose parameters share its memory.

    ``block`` must be initialized with known shapes (run it once if its shapes are deferred)
    and live on one context. See :class:`GluonModule`.
    """
    if not isinstance(block, Block):
        raise MXNetError('to_torch: expected a gluon Block, got %s' % type(block).__name__)
    return GluonModule(block)


def export(block, args, dynamic_shapes=None):
    """``torch.export`` of Gluon ``block`` in inference mode for inputs like ``args`` (NDArrays or
    torch tensors): an ``ExportedProgram`` of aten operators, whose parameters are the block's
    under their Gluon names, which torch runs, saves (``torch.export.save``) and serves
    without neomx. ``dynamic_shapes`` is ``torch.export.export``'s.

    Example
    -------
    >>> net = mx.gluon.nn.Dense(2, in_units=3, prefix='fc_')
    >>> net.initialize(mx.init.One())
    >>> net.hybridize()
    >>> program = mx.bridge.export(net, (mx.nd.ones((1, 3)),))
    >>> program.module()(torch.ones(1, 3)).tolist()
    [[3.0, 3.0]]
    >>> list(program.graph_signature.parameters)
    ['fc_weight', 'fc_bias']
    """
    module = to_torch(block).eval()
    tensors = tuple(_to_tensor(a) for a in args)
    return torch.export.export(module, tensors, dynamic_shapes=dynamic_shapes, strict=False)


def aoti_package(block, args, package_path, dynamic_shapes=None):
    """Gluon ``block`` compiled ahead of time by AOTInductor into the ``.pt2`` package
    ``package_path`` (returned), for inputs like ``args``: a C++ shared library and the
    weights, which ``torch._inductor.aoti_load_package(path)`` loads and runs in a process
    without neomx (or C++ without Python). Needs a C++ compiler.
    """
    path = aoti_compile_and_package(export(block, args, dynamic_shapes), package_path)
    if path is None:
        raise MXNetError('aoti_package: this torch (%s) has no AOTInductor' % torch.__version__)
    return path


class TorchBlock(HybridBlock):
    """A ``torch.nn.Module`` as a Gluon block (made by :func:`from_torch`).

    Each torch parameter is a Gluon Parameter named ``<prefix><torch name with '.' -> '_'>``
    sharing memory with it, so ``collect_params()`` lists it and ``Trainer`` updates it;
    buffers (batch-norm statistics) are Parameters with ``grad_req='null'``. The module runs
    with neomx's autograd (``record()``/``backward()``); Gluon's training mode selects the
    module's training and evaluation modes (``module.train()``, ``module.eval()``).

    ``hybridize()`` traces the module with ``torch.fx`` and translates each operation (layers
    such as ``nn.Conv2d``/``nn.Linear``/``nn.BatchNorm2d``, functions such as ``torch.cat``,
    tensor methods such as ``x.view``) into the MXNet operator computing it: the block then
    runs as a graph and :meth:`export` writes MXNet JSON. An operation without an MXNet
    operator raises MXNetError naming it, and so does a module whose tensors alias one
    another or whose forward writes into a parameter in place (Gluon keeps one array per
    Parameter and cannot track the alias).

    Shape
    -----
    As the module's: inputs and outputs are the module's tensors, as NDArrays.

    Example
    -------
    >>> lin = torch.nn.Linear(3, 2)
    >>> blk = mx.bridge.from_torch(lin)
    >>> sorted(k.split('_', 1)[1] for k in blk.collect_params().keys())
    ['bias', 'weight']
    >>> blk(mx.nd.ones((1, 3))).shape
    (1, 2)
    >>> blk.hybridize()
    >>> blk(mx.nd.ones((1, 3))).shape
    (1, 2)
    """

    def __init__(self, module, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if not isinstance(module, torch.nn.Module):
            raise MXNetError('from_torch: expected a torch.nn.Module, got %s' % type(module).__name__)
        self.module = module
        self._graph_module = None   # the fx trace, made by hybridize()
        self._keys = []             # (torch name, hybrid_forward keyword of its Parameter)
        self._key_of_tensor = {}    # id(torch tensor) -> keyword, for fx's get_attr (tied names too)
        named = [(n, t, 'write' if t.requires_grad else 'null') for n, t in module.named_parameters()]
        named += [(n, t, 'null') for n, t in module.named_buffers() if t.is_floating_point()]
        _refuse_aliases(module, named)
        with self.name_scope():
            for torch_name, tensor, grad_req in named:
                key = _torch_name(torch_name)
                if hasattr(self, key):
                    raise MXNetError("from_torch: %s's tensor '%s' is named as an attribute of Gluon's "
                                     "HybridBlock; rename it" % (type(module).__name__, torch_name))
                param = self.params.get(key, shape=tuple(tensor.shape),
                                        dtype=str(tensor.dtype).replace('torch.', ''),
                                        grad_req=grad_req, allow_deferred_init=False, init='zeros')
                param.initialize(ctx=_context_of(tensor))
                array = param.data()
                array.set_torch(tensor.detach())
                # the leaf Gluon's autograd fills is now the shared tensor
                array.attach_grad(grad_req)
                setattr(self, key, param)      # a keyword of hybrid_forward
                self._keys.append((torch_name, key))
                self._key_of_tensor[id(tensor)] = key

    def hybridize(self, active=True, **kwargs):  # pylint: disable=arguments-differ
        """Run the module as an MXNet graph translated from its ``torch.fx`` trace (see the
        class); raises MXNetError naming the first operation without an MXNet operator."""
        if active:
            graph_module = fx_graph.trace(self.module)
            with self.name_scope():     # translate once now, so that errors come at hybridize()
                fx_graph.to_symbol(graph_module, _placeholder_symbols(graph_module), self._traced_variable(
                    graph_module, {key: symbol.var('%s%s' % (self.prefix, key)) for _, key in self._keys}))
            self._graph_module = graph_module
        super().hybridize(active, **kwargs)

    def _traced_variable(self, graph_module, variables):
        def variable_of(name):
            tensor = graph_module.get_parameter(name) if name in dict(graph_module.named_parameters(
                remove_duplicate=False)) else graph_module.get_buffer(name)
            key = self._key_of_tensor.get(id(tensor))
            if key is None:
                raise MXNetError("from_torch: %s cannot be hybridized: its forward uses the tensor constant "
                                 "'%s', which is neither a parameter nor a floating-point buffer"
                                 % (type(self.module).__name__, name))
            return variables[key]
        return variable_of

    def hybrid_forward(self, F, x, *args, **params):  # pylint: disable=arguments-differ
        if F is symbol:
            if self._graph_module is None:      # traced by a parent without hybridize()
                self._graph_module = fx_graph.trace(self.module)
            return fx_graph.to_symbol(self._graph_module, (x,) + args,
                                      self._traced_variable(self._graph_module, params))
        self.module.train(autograd.is_training())
        state = {name: params[key].as_torch() for name, key in self._keys}
        tensors = [_to_tensor(a) for a in (x,) + args]
        try:
            with torch.set_grad_enabled(autograd.is_recording()):
                out = torch.func.functional_call(self.module, state, tuple(tensors), strict=False)
        except RuntimeError as err:
            if 'in-place' not in str(err):
                raise
            raise self._in_place_error() from err
        return _to_nd(out)

    def _in_place_error(self):
        """The error naming the parameter the module's forward writes into (torch refused it
        while recording), found in its ``torch.fx`` trace where it traces."""
        owner = type(self.module).__name__
        try:
            found = fx_graph.first_in_place_write(fx_graph.trace(self.module))
        except MXNetError:
            found = None
        if found is None:
            return MXNetError("from_torch: %s writes in place into a tensor autograd needs (see the torch "
                              "error above)" % owner)
        return fx_graph.in_place_error(owner, *found)


def _placeholder_symbols(graph_module):
    return [symbol.var(n.name) for n in graph_module.graph.nodes if n.op == 'placeholder']


def _refuse_aliases(module, named):
    """An MXNetError naming a tensor of ``module`` that shares memory with another (a view of
    it, or the same storage): each Gluon Parameter owns its array, and an update of one would
    silently change the other."""
    owner = {}
    for name, tensor, _ in named:
        if tensor.numel() == 0:
            continue
        storage = (tensor.device, tensor.untyped_storage().data_ptr())
        if storage in owner:
            raise MXNetError("from_torch: %s's tensor '%s' shares memory with '%s' (an in-place alias, such as "
                             "a view of it): Gluon keeps one array per Parameter and cannot track the alias; "
                             "make it a separate tensor, or tie the two as one Parameter"
                             % (type(module).__name__, name, owner[storage]))
        owner[storage] = name


def _context_of(tensor):
    from ..context import context_of_device  # pylint: disable=import-outside-toplevel
    return context_of_device(tensor.device)


def from_torch(module):
    """A Gluon :class:`TorchBlock` running ``module``, whose parameters share its memory."""
    return TorchBlock(module)
