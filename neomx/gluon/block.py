"""Gluon blocks: :class:`Block` (imperative ``forward``), :class:`HybridBlock` and
:class:`SymbolBlock` (a block around a Symbol graph, as in MXNet's ``gluon.block``).

A HybridBlock writes its computation once, as ``hybrid_forward(F, x, *args, **params)``,
against an operator namespace ``F``: ``mx.nd`` when called on NDArrays, ``mx.sym`` when
called on Symbols. Layers therefore never touch torch; the registry operators do.

Naming follows MXNet 1.9.1 so ``.params`` files map onto blocks: a top-level block takes
the next per-kind counter of the current :class:`~neomx.name.NameManager` (``dense0_``);
a block created inside ``parent.name_scope()`` takes the parent's prefix and the parent's
own counters (``hybridsequential0_dense0_``).
"""
import functools
import json
import itertools
import re
import threading
import warnings
import weakref
from collections import OrderedDict, defaultdict

import numpy as np
import torch

from .._autograd_state import STATE as _AUTOGRAD
from .. import autograd, initializer, name as _name, ndarray, symbol
from .. import numpy_extension as _npx
from ..numpy import ndarray as _NP_NDARRAY
from .._np_semantics import ARRAY_ON as _NP_ARRAY_ON, STATE as _NP
_NP_ON = _NP_ARRAY_ON.on        # threads with NumPy array semantics on (see neomx._thread_switches)
from ..util import is_np_array
from ..symbol.numpy import NumpySymbol as np_symbol_class, np_symbol, recording_creation
from ..base import MXNetError, NotImplementedForSymbol, torch_dtype
from ..ndarray import NDArray
from ..symbol import Symbol
from . import lazy
from ._cached_graph import (CachedGraph, cached_for_format, check_numpy_outputs, first_context, flatten, input_kinds,
                            input_shapes, regroup, trace)
from . import parameter as _parameter
from .parameter import (DeferredInitializationError, Parameter, ParameterDict, _brief_print_list,
                        load_named_arrays)

__all__ = ['Block', 'HybridBlock', 'HookHandle', 'SymbolBlock']


class _BlockScope:
    """The naming scope a block opens with ``name_scope()``: prefixes and child counters."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new block of kind ``hint`` in the current scope."""
        current = getattr(_BlockScope._current, 'value', None)
        if current is None:
            if prefix is None:
                prefix = _name.NameManager.current.get(None, hint) + '_'
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = '%s%d_' % (hint, count)
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        # Symbols created inside the scope are named under the block's prefix too.
        name_scope = _name.Prefix(self._block.prefix)
        # What to restore is kept per thread: threads may trace one block at once.
        _BlockScope._saved().append((getattr(_BlockScope._current, 'value', None), name_scope))
        _BlockScope._current.value = self
        name_scope.__enter__()
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        old_scope, name_scope = _BlockScope._saved().pop()
        name_scope.__exit__(*exc)
        _BlockScope._current.value = old_scope

    @staticmethod
    def _saved():
        """This thread's stack of (outer scope, name scope) of the scopes entered."""
        saved = getattr(_BlockScope._current, 'saved', None)
        if saved is None:
            saved = _BlockScope._current.saved = []
        return saved


class HookHandle:
    """Returned by ``register_forward_hook``: ``detach()`` removes the hook again.

    Example
    -------
    >>> layer = mx.gluon.nn.Dense(1, in_units=1)
    >>> layer.initialize(mx.init.One())
    >>> handle = layer.register_forward_hook(lambda block, inputs, out: print(out.asnumpy().tolist()))
    >>> _ = layer(mx.nd.ones((1, 1)))
    [[1.0]]
    >>> handle.detach()
    >>> _ = layer(mx.nd.ones((1, 1)))            # the hook is gone
    """
    _ids = itertools.count()

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        """Add ``hook`` to ``hooks_dict`` under this handle's id."""
        assert self._hooks_dict_ref is None, 'The same handle cannot be attached twice.'
        self._id = next(HookHandle._ids)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        """Remove the hook (a no-op when already removed)."""
        hooks_dict = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks_dict is not None:
            hooks_dict.pop(self._id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def _holds_stray_block(value, children):
    """Whether nested lists, tuples and dicts ``value`` hold a Block whose id is not in
    ``children``."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_stray_block(item, children) for item in value)
    return isinstance(value, Block) and id(value) not in children


def _indent(text, spaces):
    """Indent every line of ``text`` but the first by ``spaces``."""
    lines = text.split('\n')
    return '\n'.join(lines[:1] + [' ' * spaces + line for line in lines[1:]])


def _shape_str(args):
    """Shapes of (nested) arrays as the summary table prints them."""
    flat, fmt = flatten(args)
    shapes = regroup([a.shape if isinstance(a, NDArray) else a for a in flat], fmt)[0]
    return str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)


class Block:
    """Base class of all layers and models: children, parameters, naming, persistence.

    Subclasses create children and parameters in ``__init__`` (inside ``self.name_scope()``
    for MXNet's names) and define ``forward``.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of this block's parameters and children; automatic by default.
    params : ParameterDict, optional
        Share the parameters of another block (``other.collect_params()``).

    Example
    -------
    >>> class Model(mx.gluon.Block):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense = mx.gluon.nn.Dense(2, in_units=3)
    ...     def forward(self, x):
    ...         return mx.nd.relu(self.dense(x))
    >>> model = Model(prefix='model_')
    >>> model.initialize(mx.init.One())
    >>> model(mx.nd.ones((1, 3)))
    <BLANKLINE>
    [[3. 3.]]
    <NDArray 1x2 @cpu(0)>
    >>> list(model.collect_params())
    ['model_dense0_weight', 'model_dense0_bias']
    """
    # Whether summary() gives the block a row of its own; containers that only chain their
    # children (Sequential, HybridSequential) do not, as in MXNet.
    _summary_row = True

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def _alias(self):
        """The kind used for automatic names (``dense`` in ``dense0_``)."""
        return self.__class__.__name__.lower()

    def __repr__(self):
        children = ['  ({key}): {block}'.format(key=key, block=_indent(repr(block), 2))
                    for key, block in self.__dict__.items() if isinstance(block, Block)]
        return '{name}(\n{children}\n)'.format(name=self.__class__.__name__,
                                              children='\n'.join(children))

    def __setattr__(self, name, value):
        """Register Block and Parameter attributes as children and parameters."""
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise TypeError('Changing attribute type for {name} from {type1} to {type2}is not '
                            'allowed.'.format(name=name, type1=type(existing), type2=type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            assert name not in self._reg_params, (
                "Overriding Parameter attribute %s is not allowed. If you want to share parameters "
                "between blocks, please set 'params' at Block construction instead." % name)
            self._reg_params[name] = value
        super().__setattr__(name, value)

    # ----------------------------------------------------------------- naming
    @property
    def prefix(self):
        """The prefix of this block's names (``dense0_``)."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing underscore (``dense0``)."""
        return self._name

    @property
    def params(self):
        """This block's own ParameterDict (children's parameters are not included)."""
        return self._params

    def name_scope(self):
        """Scope in which new blocks and symbols are named under this block's prefix."""
        return self._scope

    # --------------------------------------------------------------- children
    def register_child(self, block, name=None):
        """Add ``block`` as a child under ``name`` (its position by default)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def collect_params(self, select=None):
        """A ParameterDict of this block's and all descendants' parameters.

        Parameters
        ----------
        select : str, optional
            Regular expression (``'.*weight|.*bias'``) the full names must match.
        """
        self._warn_unregistered_blocks()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({key: p for key, p in self.params.items() if pattern.match(key)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _warn_unregistered_blocks(self):
        """Warn, as MXNet, about attributes that are lists, tuples or dicts holding blocks that
        are not children: their parameters are neither collected nor saved."""
        children = set(map(id, self._children.values()))
        for key, value in self.__dict__.items():
            if (isinstance(value, (list, tuple, dict)) and key != '_children'
                    and not key.startswith('__') and _holds_stray_block(value, children)):
                warnings.warn('"%s.%s" is an unregistered container with Blocks. Note that Blocks '
                              'inside the list, tuple or dict will not be registered '
                              'automatically. Make sure to register them using register_child() '
                              'or switching to nn.Sequential/nn.HybridSequential instead. '
                              % (type(self).__name__, key), stacklevel=3)

    def _collect_params_with_prefix(self, prefix=''):
        """Parameters by structural name (``0.weight``, ``features.1.bias``)."""
        if prefix:
            prefix += '.'
        ret = {prefix + key: p for key, p in self._reg_params.items()}
        for key, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + key))
        return ret

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant (children first), then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ parameters
    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False, force_reinit=False):
        """Initialize all parameters; ``init`` serves those without an initializer of their own."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def cast(self, dtype):
        """Convert every parameter to ``dtype`` (an unknown dtype changes none of them)."""
        torch_dtype(dtype, '%s.cast' % type(self).__name__)
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        self.collect_params().reset_ctx(ctx)

    def hybridize(self, active=True, **kwargs):
        """Pass the hybridize flags down to the HybridBlocks among the descendants."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def register_op_hook(self, callback, monitor_all=False):
        """Install ``callback`` on the hybridized blocks among the descendants (see
        :meth:`HybridBlock.register_op_hook`)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def save(self, prefix):
        """Save the architecture's names and the parameters: ``<prefix>-model.json`` (per
        block, in traversal order: its name, whether it is hybridized -- with the graph
        traced last -- and its children's names) and ``<prefix>-model.params``.

        :meth:`load` restores them into a model built the same way (the same blocks
        created in the same order), whatever names its blocks got this time.

        Example
        -------
        >>> import os, tempfile
        >>> net = mx.gluon.nn.HybridSequential()
        >>> net.add(mx.gluon.nn.Dense(2))
        >>> net.initialize(mx.init.One())
        >>> net.hybridize()
        >>> y = net(mx.nd.ones((1, 3)))
        >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
        >>> net.save(prefix)
        >>> again = mx.gluon.nn.HybridSequential()
        >>> again.add(mx.gluon.nn.Dense(2))
        >>> again.load(prefix)
        >>> again(mx.nd.ones((1, 3))).asnumpy().tolist(), again.name == net.name
        ([[3.0, 3.0]], True)
        """
        model = {}
        counter = [0]

        def describe(block, structure):
            entry = {'orig_name': block.name}
            structure[type(block).__name__.lower() + str(counter[0])] = entry
            if isinstance(block, HybridBlock):
                graph = block._cached_graph
                entry['hybridized'] = graph is not None
                if graph is not None:
                    entry['symbol'] = graph.symbol.tojson()
            children = {}
            entry['children'] = children
            for child_name, child in block._children.items():
                counter[0] += 1
                children[child.name] = child_name
                describe(child, entry)
        describe(self, model)
        with open(prefix + '-model.json', 'w') as f:
            json.dump(model, f)
        self.save_parameters(prefix + '-model.params')

    def load(self, prefix):
        """Load what :meth:`save` wrote under ``prefix``: the blocks take their saved names
        (and their parameters the matching names), the blocks that were hybridized are
        hybridized again (their graph is traced at the next call), and the parameters are
        loaded."""
        with open(prefix + '-model.json') as f:
            model = json.load(f)
        counter = [0]

        def restore(block, structure):
            entry = structure[type(block).__name__.lower() + str(counter[0])]
            block._name = entry['orig_name']
            if isinstance(block, HybridBlock) and entry.get('hybridized'):
                block._active = True
            params = block.params._params
            for key in list(params):
                param = params.pop(key)
                param.name = block.name + '_' + key[len(block.params._prefix):]
                params[param.name] = param
            for child in list(block._children.values()):
                counter[0] += 1
                restore(child, entry)
            saved_names = entry['children']
            for child_name in list(block._children):
                child = block._children.pop(child_name)
                block._children[saved_names[child.name]] = child
        restore(self, model)
        self.load_parameters(prefix + '-model.params')

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters under their structural names (``0.weight``), MXNet's format.

        Parameters
        ----------
        filename : str
        deduplicate : bool
            Save a shared parameter once, under its last structural name.
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            names_of = {param: key for key, param in params.items()}
            params = {key: param for param, key in names_of.items()}
        ndarray.save(filename, {key: param._reduce() for key, param in params.items()})

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source='current'):
        """Load parameters saved by :meth:`save_parameters` (or by ``collect_params().save``).

        Raises
        ------
        AssertionError
            A parameter is missing from the file (unless ``allow_missing``), or a saved shape
            does not fit.
        ValueError
            The file has a parameter this block lacks (unless ``ignore_extra``).
        """
        loaded = load_named_arrays(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any('.' in key for key in loaded):
            # Full names (collect_params().save, or a single layer): match them by prefix.
            self.collect_params().load_dict(loaded, ctx, allow_missing, ignore_extra, self.prefix,
                                            filename, cast_dtype, dtype_source)
            return
        if not allow_missing:
            keys_of = defaultdict(list)          # a shared parameter is saved under one name
            for key, param in params.items():
                keys_of[param].append(key)
            for key, param in params.items():
                assert any(k in loaded for k in keys_of[param]), (
                    "Parameter '%s' is missing in file '%s', which contains parameters: %s. Set "
                    "allow_missing=True to ignore missing parameters."
                    % (key, filename, _brief_print_list(loaded.keys())))
        for key, value in loaded.items():
            if key not in params:
                if ignore_extra:
                    continue
                raise ValueError(
                    "Parameter '%s' loaded from file '%s' is not present in ParameterDict, which "
                    "contains parameters %s. Set ignore_extra=True to ignore. "
                    % (key, filename, _brief_print_list(params.keys())))
            params[key]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def save_params(self, filename):
        """Deprecated: :meth:`collect_params` ``.save`` with this block's prefix stripped."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you want load from "
                      "SymbolBlock later, please use export instead. For details, see "
                      "https://mxnet.apache.org/tutorials/gluon/save_load_params.html")
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated alias of :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # ---------------------------------------------------------------- calling
    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before every forward; returns a :class:`HookHandle`."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after every forward; returns a :class:`HookHandle`."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def __call__(self, *args):
        if _AUTOGRAD.recording or not torch.is_grad_enabled():
            if not (self._forward_pre_hooks or self._forward_hooks or _NP_ON[0]):
                return self.forward(*args)      # no hooks, no NumPy outputs to check, as nearly always
            out = self._call_with_hooks(args)
        else:   # outside record() a forward pass builds no graph, in every thread
            out = autograd.run_without_graph(self._call_with_hooks, args)
        if _NP_ON[0] and type(out) is not _NP_NDARRAY and _NP.np_array:     # one mx.np array: the common output
            check_numpy_outputs(out)
        return out

    def _call_with_hooks(self, args):
        if self._forward_pre_hooks:
            for hook in self._forward_pre_hooks.values():
                hook(self, args)
        out = self.forward(*args)
        if self._forward_hooks:
            for hook in self._forward_hooks.values():
                hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation; subclasses override it."""
        raise NotImplementedError

    def summary(self, *inputs):
        """Run ``inputs`` through the block and print MXNet's table of layers, output shapes
        and parameter counts (not for hybridized blocks)."""
        rows = OrderedDict()
        rows['Input'] = {'output_shape': _shape_str(inputs), 'n_params': 0, 'trainable': 0,
                         'shared': 0}
        seen = set()
        handles = []

        def record_row(block, _, outputs):
            key = '%s-%i' % (block.__class__.__name__, len(rows))
            row = rows[key] = {'output_shape': _shape_str(outputs), 'n_params': 0,
                               'trainable': 0, 'shared': 0}
            for param in block.params.values():
                size = param.data().size
                row['n_params'] += size
                row['trainable'] += 0 if param.grad_req == 'null' else size
                if param in seen:
                    row['shared'] += size
                seen.add(param)

        def add_hook(block):
            assert not getattr(block, '_active', False), \
                '"{}" must not be hybridized to print summary.'.format(block.name)
            if block._summary_row:
                handles.append(block.register_forward_hook(record_row))

        try:
            self.apply(add_hook)
            self(*inputs)
            _print_summary(rows)
        finally:
            for handle in handles:
                handle.detach()


def _print_summary(rows):
    line = '{:>20}  {:>42} {:>15}'
    print('-' * 80)
    print(line.format('Layer (type)', 'Output Shape', 'Param #'))
    print('=' * 80)
    for key, row in rows.items():
        print(line.format(key, str(row['output_shape']), row['n_params']))
    total = sum(row['n_params'] for row in rows.values())
    trainable = sum(row['trainable'] for row in rows.values())
    shared = sum(row['shared'] for row in rows.values())
    print('=' * 80)
    print('Parameters in forward computation graph, duplicate included')
    print('   Total params: ' + str(total))
    print('   Trainable params: ' + str(trainable))
    print('   Non-trainable params: ' + str(total - trainable))
    print('Shared params in forward computation graph: ' + str(shared))
    print('Unique parameters in model: ' + str(total - shared))
    print('-' * 80)


class LayerForwardError(MXNetError):
    """An operator error re-raised with the layer that called the operator."""


class HybridizationError(MXNetError):
    """``hybrid_forward`` needs concrete values, so it cannot be traced into a graph."""


class _ImperativeOnly(threading.local):
    """Set while a hybridized block falls back to imperative execution: its descendants
    must run imperatively too."""
    active = False


_IMPERATIVE_ONLY = _ImperativeOnly()
_ONE_INPUT = (0,)                        # flatten((x,))[1]: the format of net(x)


def _needs_values(err):
    """Whether an exception raised while tracing comes from using a Symbol as a value
    (``if x.sum() > 0``, ``x.asnumpy()``, ``x.shape``, ``float(x)``) or from an NDArray-only
    function (``F.array``)."""
    if isinstance(err, NotImplementedForSymbol):
        return True
    if isinstance(err, AttributeError):
        owner = getattr(err, 'obj', None)
        return isinstance(owner, Symbol) or owner is symbol
    return isinstance(err, TypeError) and "'Symbol'" in str(err)


class HybridBlock(Block):
    """A block written as ``hybrid_forward(F, x, *args, **params)``.

    ``forward`` passes the parameters registered as attributes (``self.weight = ...``)
    as keyword arguments, as NDArrays on the context of ``x``. Parameters of unknown shape
    are completed at the first call from the operators they feed (deferred initialization,
    see ``lazy.py``).
    After :meth:`hybridize`, calls run a graph traced from ``hybrid_forward`` with
    ``F = mx.sym`` (see ``_cached_graph.py``), which :meth:`export` can save.

    Example
    -------
    >>> class Model(mx.gluon.HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.weight = self.params.get('weight', shape=(2, 0), allow_deferred_init=True)
    ...     def hybrid_forward(self, F, x, weight):
    ...         return F.FullyConnected(x, weight, num_hidden=2, no_bias=True)
    >>> model = Model()
    >>> model.initialize(mx.init.One())
    >>> model.hybridize()
    >>> model(mx.nd.ones((1, 3)))
    <BLANKLINE>
    [[3. 3.]]
    <NDArray 1x2 @cpu(0)>
    >>> model.weight.shape
    (2, 3)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._active = False
        self._flags = []
        self._backend = None
        self._cached_graphs = {}        # input format -> CachedGraph
        self._cached_graph = None       # the last traced, which export() writes
        self._op_hook = None            # (callback, monitor_all) of register_op_hook

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Run this block (and its descendants) as a compiled graph from the next call.

        Parameters
        ----------
        active : bool
            False goes back to imperative execution.
        backend : str, optional
            None runs the compiled graph over the registry's torch implementations;
            ``'inductor'`` runs it through ``torch.compile`` (keyword arguments for it in
            ``backend_opts``).
        clear : bool
            Drop the graphs traced so far (the next call traces again).
        static_alloc : bool
            Bind the parameter list once, and on CPUs keep freed host memory pooled in the
            process for the next call (as MXNet's static memory does).
        static_shape : bool
            With ``static_alloc`` on GPUs, replay CUDA graphs.
        inline_limit, forward_bulk_size, backward_bulk_size
            MXNet's CachedOp flags, recorded.
        **kwargs
            ``mirror=True`` recomputes graph segments in the backward pass instead of
            storing them (like ``MXNET_BACKWARD_DO_MIRROR=1``); ``backend_opts``.
        """
        self._active = active
        self._backend = backend
        self._flags = list(kwargs.items()) + [('static_alloc', static_alloc),
                                              ('static_shape', static_shape),
                                              ('inline_limit', inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(('forward_bulk_size', forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(('backward_bulk_size', backward_bulk_size))
        if clear:
            self._clear_cached_graphs()
        self._route_written_forward(active)
        super().hybridize(active, backend=backend, clear=clear, static_alloc=static_alloc,
                          static_shape=static_shape, inline_limit=inline_limit,
                          forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, **kwargs)

    def optimize_for(self, x, *args, backend=None, clear=False, static_alloc=False,
                     static_shape=False, inline_limit=2, forward_bulk_size=None,
                     backward_bulk_size=None, **kwargs):
        """Hybridize for ``backend`` and prepare the graph for inputs like ``(x, *args)``
        without running it: trace it, complete deferred parameter shapes and compile it.

        MXNet partitions the graph for a subgraph backend here. neomx's default backend
        already runs what MXNet's ``'MKLDNN'``/``'ONEDNN'`` partitioning fuses (convolutions
        with BatchNorm, sums and activations, on oneDNN) whenever it infers, so those names
        select it; ``export`` then writes the graph as traced, which any MXNet loads.

        Parameters
        ----------
        x, *args : NDArray
            Inputs of the shape to prepare for.
        backend : {None, 'MKLDNN', 'ONEDNN', 'inductor'}
        clear, static_alloc, static_shape, inline_limit, forward_bulk_size, backward_bulk_size
            As :meth:`hybridize`.
        **kwargs
            Backend options: ``torch.compile`` keyword arguments for ``'inductor'``.

        Raises
        ------
        MXNetError
            For another backend.
        """
        if backend not in _OPTIMIZE_BACKENDS:
            raise MXNetError("optimize_for: backend %r cannot be found; neomx has %s"
                             % (backend, ', '.join(repr(b) for b in _OPTIMIZE_BACKENDS)))
        graph_backend = _OPTIMIZE_BACKENDS[backend]
        options = {'backend_opts': kwargs} if graph_backend == 'inductor' and kwargs else {}
        self.hybridize(True, backend=graph_backend, clear=clear, static_alloc=static_alloc,
                       static_shape=static_shape, inline_limit=inline_limit,
                       forward_bulk_size=forward_bulk_size, backward_bulk_size=backward_bulk_size,
                       **options)
        graph, flat = self._graph_for((x,) + args)
        if not graph.complete_deferred(flat):
            self._run_imperatively((x,) + args)     # the shapes only imperative runs complete
        graph.prepare(flat, first_context(flat))

    def infer_shape(self, *args):
        """Give the parameters of unknown shape the shapes inferred from inputs like
        ``args`` through the traced graph, without running it or initializing them."""
        graph, flat = self._graph_for(args)
        graph.infer_parameter_shapes(flat)

    def infer_type(self, *args):
        """Give the parameters the dtypes inferred from the inputs' through the traced graph."""
        graph, flat = self._graph_for(args)
        graph.infer_parameter_types(flat)

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, array)`` on every operator output (and input, with
        ``monitor_all``) while this block and its descendants run hybridized.

        ``name`` (``dense0_fwd_output``, ``dense0_fwd_data``...) and ``op_name`` are bytes,
        as MXNet gives them; ``array`` is the value as an NDArray (MXNet passes a raw
        NDArrayHandle). The hooked graph runs as traced: default backend, no inference
        rewrites, no mirroring.
        """
        self._op_hook = (callback, monitor_all)
        super().register_op_hook(callback, monitor_all)

    # ------------------------------------------- blocks written as forward(self, x) (MXNet 2.0)
    def _writes_forward(self):
        """Whether the block is written MXNet 2.0's way: ``forward(self, x)`` with mx.np/npx
        (no ``hybrid_forward``)."""
        cls = type(self)
        return cls.forward is not HybridBlock.forward and cls.hybrid_forward is HybridBlock.hybrid_forward

    def _route_written_forward(self, active):
        """Make calls of a block written as ``forward`` run its traced graph while hybridized
        (MXNet 1.9.1 ran such blocks eagerly; 2.0 hybridizes them): the instance's
        ``forward`` becomes :meth:`_hybridized_forward`, which ``Block.__call__`` calls."""
        if not self._writes_forward():
            return
        if active:
            self.forward = self._hybridized_forward
        else:
            self.__dict__.pop('forward', None)

    def _hybridized_forward(self, *args):
        """``forward`` of a hybridized block written as ``forward``: the graph traced from it
        under NumPy array semantics; the block's own code for Symbols (a parent tracing),
        outside NumPy semantics (as 1.9.1) or while an imperative run is forced."""
        written = type(self).forward
        if _IMPERATIVE_ONLY.active or not (_NP_ON[0] and _NP.np_array):
            return written(self, *args)
        has_symbol, contexts = input_kinds(args)
        if has_symbol:
            return self._forward_symbolic(args[0], args[1:])
        if len(contexts) > 1:
            raise ValueError('Find multiple contexts in the input, After hybridized, the HybridBlock only '
                             'supports one input context. Find all contexts = %s' % (contexts,))
        return self._call_cached_graph(args)

    def _graph_for(self, args):
        """The traced CachedGraph for inputs like ``args`` (tracing it now if needed) and
        the flat inputs."""
        flat, fmt = flatten(args)
        graph = self._cached_graphs.get(fmt)
        return (graph if graph is not None else self._trace(flat, fmt)), flat

    def _clear_cached_graphs(self):
        self._cached_graphs = {}
        self._cached_graph = None

    def __getstate__(self):
        """Pickled without its traced graphs (compiled code, which pickle cannot hold): the
        first call after unpickling traces again."""
        state = self.__dict__.copy()
        state['_cached_graphs'] = {}
        state['_cached_graph'] = None
        return state

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(
                "Children of HybridBlock must also be HybridBlock, but %s has type %s. If you "
                "are using Sequential, please try HybridSequential instead."
                % (str(block), str(type(block))))
        super().register_child(block, name)
        self._clear_cached_graphs()

    def cast(self, dtype):
        self._clear_cached_graphs()         # the traced variables carry the dtype
        super().cast(dtype)

    def forward(self, x, *args):
        """Call ``hybrid_forward`` with ``F = mx.nd`` for NDArrays, ``mx.sym`` for Symbols;
        once hybridized, run the compiled graph instead.

        Inputs may be nested lists of arrays and None (an absent optional input), as long as
        they hold NDArrays or Symbols but not both.

        Raises
        ------
        ValueError
            For inputs mixing NDArrays and Symbols, holding neither, or, hybridized, on
            several contexts or holding other values than arrays and None.
        """
        hybridized = self._active and not _IMPERATIVE_ONLY.active
        # net(x) and, imperatively, loss(pred, label) need no look at their inputs: the common calls
        if not (isinstance(x, NDArray) and (not args or not hybridized and len(args) == 1
                                            and isinstance(args[0], NDArray))):
            has_symbol, contexts = input_kinds((x,) + args)
            if has_symbol:
                return self._forward_symbolic(x, args)
            if hybridized and len(contexts) > 1:
                raise ValueError('Find multiple contexts in the input, After hybridized, the '
                                 'HybridBlock only supports one input context. Find all '
                                 'contexts = %s' % (contexts,))
        if hybridized:
            return self._call_cached_graph((x,) + args)
        return self._forward_imperative(x, args)

    def _forward_imperative(self, x, args):
        params = {}
        if self._reg_params:        # losses and activations have none
            ctx = x._ctx if isinstance(x, NDArray) else first_context(flatten((x,) + args)[0])
            try:
                params = {key: p.data(ctx) for key, p in self._reg_params.items()}
            except DeferredInitializationError:
                return self._forward_deferred(x, args)
        return self._call_hybrid_forward(_npx.EAGER_OPERATORS if _NP_ON[0] and _NP.np_array else ndarray, x, args, params)

    def _call_hybrid_forward(self, F, x, args, params):
        try:
            return self.hybrid_forward(F, x, *args, **params)
        except MXNetError as err:
            raise self._named_error(err, (x,) + args) from None

    def _named_error(self, err, args):
        """``err`` re-raised as a LayerForwardError naming this block and its input shapes
        (unchanged when it is already named or of a specific type)."""
        if type(err) is not MXNetError:
            return err
        shapes = [a.shape for a in flatten(args)[0] if isinstance(a, NDArray)]
        return LayerForwardError("Error in layer '%s' (%s) with input shapes %s: %s"
                                 % (self.name, type(self).__name__, shapes, err))

    def _forward_deferred(self, x, args):
        """The first call with parameters of unknown shape: the operators that receive them
        complete their shapes (``infer_args``) and initialize them, then compute.

        A parameter that only an operator without such a rule receives (``relu(offset) + x``)
        gets its shape from shape inference over the block's whole traced graph instead,
        which runs backwards from the other operators, as in MXNet.
        """
        ctx = x.context if isinstance(x, NDArray) else first_context(flatten((x,) + args)[0])
        params = lazy.call_params(self._reg_params, ctx)
        try:
            namespace = _npx.EAGER_OPERATORS if is_np_array() else ndarray
            return self._call_hybrid_forward(lazy.ShapeInferringOps(namespace), x, args, params)
        except DeferredInitializationError:
            flat, fmt = flatten((x,) + args)
            if not trace(self, flat, fmt).complete_deferred(flat):
                raise
            return self._forward_imperative(x, args)

    def _forward_symbolic(self, x, args):
        if self._writes_forward():      # its code, on Symbols; parameters' data() are variables
            try:
                with self.name_scope(), _parameter.symbolic_data(), recording_creation():
                    return type(self).forward(self, x, *args)
            except (MXNetError, AttributeError, TypeError) as err:
                if not _needs_values(err):
                    raise
                raise HybridizationError(
                    "Block '%s' (%s) cannot be hybridized: its forward needs concrete values (%s: %s). "
                    "A hybridized block runs forward once on Symbols: compute with mx.np/mx.npx "
                    "functions only, or do not hybridize this block."
                    % (self.name, type(self).__name__, type(err).__name__, err)) from err
        params = {key: p.var() for key, p in self._reg_params.items()}
        F = symbol
        if is_np_array():
            F = _npx.SYMBOLIC_OPERATORS
            params = {key: v.as_np_ndarray() for key, v in params.items()}
        try:
            with self.name_scope():
                return self.hybrid_forward(F, x, *args, **params)
        except (MXNetError, AttributeError, TypeError) as err:
            if not _needs_values(err):
                raise
            raise HybridizationError(
                "Block '%s' (%s) cannot be hybridized: its hybrid_forward needs concrete "
                "values (%s: %s). A hybridized block runs hybrid_forward once with "
                "F = mx.sym, where inputs are Symbols without values or shapes: compute with "
                "F operators only, or do not hybridize this block."
                % (self.name, type(self).__name__, type(err).__name__, err)) from err

    # ------------------------------------------------------------ graphs
    def _call_cached_graph(self, args):
        """Run the graph traced for the structure of ``args`` (tracing it the first time)."""
        if len(args) == 1 and isinstance(args[0], NDArray):   # net(x): nothing to flatten
            flat, fmt, ctx = list(args), _ONE_INPUT, args[0]._ctx
        else:
            flat, fmt = flatten(args, strict=True)
            ctx = first_context(flat)
        graph = self._cached_graphs.get(fmt)
        if graph is None:
            graph = cached_for_format(self._cached_graphs, fmt) or self._trace(flat, fmt)
        if graph.input_shapes is not None:     # its forward read x.shape: one graph per input shapes
            graph = self._graph_for_shapes(graph, flat, fmt)
        run = graph if self._op_hook is None else functools.partial(graph.run_monitored, callback=self._op_hook[0],
                                                                     monitor_all=self._op_hook[1])
        try:
            try:
                outputs = run(flat, ctx)
            except DeferredInitializationError:
                if not graph.complete_deferred(flat):
                    return self._run_imperatively(args)
                outputs = run(flat, ctx)
        except MXNetError as err:
            raise self._named_error(err, args) from None
        return graph.regroup(outputs)

    def _graph_for_shapes(self, graph, flat, fmt):
        """The graph of ``graph``'s variants traced for the shapes of ``flat`` (traced now
        the first time): a forward that read its inputs' shapes holds them."""
        shapes = input_shapes(flat)
        if shapes == graph.input_shapes:
            return graph
        variant = graph.shape_variants.get(shapes)
        if variant is None:
            variant = graph.shape_variants[shapes] = trace(self, flat, fmt)
            self._cached_graph = variant
        return variant

    def _trace(self, flat, fmt):
        """Trace the CachedGraph for inputs of format ``fmt``; export() writes the latest."""
        graph = self._cached_graphs[fmt] = trace(self, flat, fmt)
        self._cached_graph = graph
        return graph

    def _run_imperatively(self, args):
        """One imperative call of the whole subtree (the first call of a graph whose
        parameter shapes only imperative execution can complete)."""
        previous, _IMPERATIVE_ONLY.active = _IMPERATIVE_ONLY.active, True
        try:
            if self._writes_forward():
                return type(self).forward(self, *args)
            return self._forward_imperative(args[0], args[1:])
        finally:
            _IMPERATIVE_ONLY.active = previous

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Save the traced graph and the parameters as MXNet does: ``path-symbol.json`` and
        ``path-%04d.params`` (arrays named ``arg:<name>`` and ``aux:<name>``), which
        ``SymbolBlock.imports`` and ``mx.model.load_checkpoint`` read.

        Raises
        ------
        RuntimeError
            Before the block was hybridized and called once.
        """
        if self._cached_graph is None:
            raise RuntimeError('Please first call block.hybridize() and then run forward with this '
                               'block at least once before calling export.')
        sym = self._cached_graph.symbol
        sym.save('%s-symbol.json' % path, remove_amp_cast=remove_amp_cast)
        # The graph's parameters in the order of its inputs, as MXNet writes them.
        aux_names = set(sym.list_auxiliary_states())
        arrays = {('aux:%s' if name in aux_names else 'arg:%s') % name: param._reduce()
                  for name, param in self._cached_graph.parameters()}
        ndarray.save('%s-%04d.params' % (path, epoch), arrays)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation, written with ``F.<operator>``; subclasses override it."""
        raise NotImplementedError


# optimize_for's backends: MXNet's oneDNN subgraph backends map to the default backend
# (whose inference rewrites fuse the same patterns).
_OPTIMIZE_BACKENDS = {None: None, 'MKLDNN': None, 'ONEDNN': None, 'inductor': 'inductor'}


# ------------------------------------------------------------ SymbolBlock
# A Gluon block around an existing Symbol graph: how exported models come back
# (``SymbolBlock.imports('net-symbol.json', ['data'], 'net-0000.params')``) and how a part of a
# graph (``net(sym).get_internals()[...]``) becomes a feature extractor. Every argument of the
# graph that is not an input becomes a Parameter of the block (auxiliary states with
# ``grad_req='null'``), of unknown shape until the first call infers it from the inputs.


def _common_prefix(names):
    """The longest string every name starts with."""
    if not names:
        return ''
    prefix = names[0]
    for name in names[1:]:
        i = 0
        while i < min(len(prefix), len(name)) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _param_dtypes(inputs, outputs):
    """``{variable name: numpy dtype}`` inferred from the inputs' dtypes (their ``__dtype__``
    attribute, float32 otherwise); float32 where inference cannot tell."""
    known = {sym.name: np.float32 if sym.attr('__dtype__') is None else _symbol_dtype(sym)
             for sym in inputs}
    arg_types, _, aux_types = outputs.infer_type(**known)
    names = outputs.list_arguments() + outputs.list_auxiliary_states()
    if arg_types is None:
        return {name: np.float32 for name in names}
    return dict(zip(names, list(arg_types) + list(aux_types)))


def _symbol_dtype(variable):
    """The dtype a variable declares with ``dtype=`` (its ``__dtype__`` type flag)."""
    from ..base import TORCH_OF_TYPE_FLAG, np_dtype
    return np_dtype(TORCH_OF_TYPE_FLAG[int(variable.attr('__dtype__'))])


_ROW_SPARSE_FLAG = '1'      # a variable's __storage_type__ attribute for stype='row_sparse'


class SymbolBlock(HybridBlock):
    """A HybridBlock computing ``outputs`` from the variables ``inputs``.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
    inputs : Symbol or list of Symbol
        Variables of ``outputs``' graph fed by the caller, in call order.
    params : ParameterDict, optional
        Parameters to use for the other variables (looked up by full name), e.g. the
        ``collect_params()`` of the block that built the graph; new ones are created for
        names it lacks.

    Calls always run the compiled graph; called on Symbols, the block returns a copy of
    its graph with the inputs replaced.

    Example
    -------
    >>> data = mx.sym.var('data')
    >>> out = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    >>> block = mx.gluon.SymbolBlock(out, data)
    >>> block.initialize(mx.init.One())
    >>> block(mx.nd.ones((1, 3)))                # fc_weight and fc_bias became parameters
    <BLANKLINE>
    [[4. 4.]]
    <NDArray 1x2 @cpu(0)>
    >>> sorted(block.collect_params().keys())
    ['fc_bias', 'fc_weight']
    """

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, Symbol) and len(inputs) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        variables, self._in_format = flatten(inputs)
        for sym in variables:
            assert len(sym.get_internals()) == 1, \
                'Input symbols must be variable, but %s is an output of operators' % str(sym)
        flat_out, out_fmt = flatten(outputs)
        graph_out = symbol.Group(flat_out)
        for node in graph_out.get_internals():
            # As MXNet: a SymbolBlock's parameters are dense.
            assert node.attr('__storage_type__') != _ROW_SPARSE_FLAG, \
                "SymbolBlock doesn't support Parameter '%s' because its storage type is " \
                "'row_sparse'." % node.name
        self._create_params(variables, graph_out)
        # NumPy semantics (set_np(), or mx.sym.np outputs): outputs are mx.np arrays, as in MXNet
        self._np_mode = is_np_array() or any(isinstance(o, np_symbol_class) for o in flat_out)
        self._symbol_graph = CachedGraph(self, variables, graph_out, out_fmt, np_mode=self._np_mode)
        self._clear_cached_graphs()
        prefix_len = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[prefix_len:]: param for key, param in self._params.items()}

    def _create_params(self, inputs, outputs):
        """A Parameter (shape inferred at the first call) for every non-input variable."""
        input_names = {sym.name for sym in inputs}
        dtypes = _param_dtypes(inputs, outputs)
        for name in outputs.list_arguments():
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True, dtype=dtypes[name])
        for name in outputs.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req='null', allow_deferred_init=True,
                                dtype=dtypes[name])

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from a ``-symbol.json`` file and, optionally, a ``.params`` file (as
        written by ``HybridBlock.export`` or ``mx.model.save_checkpoint``).

        Parameters
        ----------
        symbol_file : str
        input_names : str or list of str
            The variables fed by the caller (``'data'`` for exported blocks).
        param_file : str, optional
            Parameters to load; their saved dtypes are kept.
        ctx : Context or list of Context, optional
        allow_missing, ignore_extra : bool
            As in ``ParameterDict.load``.
        """
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        inputs = [symbol.var(name) for name in input_names]
        block = SymbolBlock(sym, inputs)
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source='saved')
        return block

    def _clear_cached_graphs(self):
        super()._clear_cached_graphs()
        self._cached_graphs = {self._in_format: self._symbol_graph}  # the graph is the block
        self._cached_graph = self._symbol_graph

    def _trace(self, flat, fmt):
        raise ValueError('Invalid input format: the block takes inputs structured as %s, got %s'
                         % (self._in_format, fmt))

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            return self._call_cached_graph((x,) + args)
        flat, fmt = flatten((x,) + args)
        assert fmt == self._in_format, 'Invalid input format'
        graph = self._symbol_graph
        composed = graph.symbol(**{v.name: sym for v, sym in zip(graph.variables, flat)})
        outputs = [np_symbol(o) for o in composed] if self._np_mode else list(composed)
        return graph.regroup(outputs)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError
