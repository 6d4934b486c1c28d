"""The Symbol class: a graph of operator nodes, composed lazily and run by an Executor.

A :class:`Symbol` is a list of *output entries* ``(node, index)``. A node is either a
variable (an argument or auxiliary state the caller supplies) or one registry operator
applied to input entries. Node attributes are kept as the strings MXNet stores in its
JSON files (``"(3, 3)"``, ``"True"``); the operator's typed attributes are parsed from them
once, when the node is created, so nothing is parsed at run time.
"""
import json

import numpy as np

from .. import _fileio
from ..base import (MXNetError, NotImplementedForSymbol, TYPE_FLAG_OF_TORCH, refuse_numpy_shape,
                    np_dtype, numeric_types, torch_dtype)
from ..name import NameManager
from ..operator import registry
from ..util import is_np_shape
from . import executor, loading
from .attribute import AttrScope
from .nodes import (_AUX_INIT, _OP_INPUT_INIT, _STORAGE_TYPE_FLAG, _Node, _is_dunder, _listed_attrs, _op_params,
                    _stored_key, _variable_node, attr_string)

__all__ = ['Symbol', 'var', 'Variable', 'Group', 'load', 'load_json', 'create_op_node', 'register_np_symbol']

MXNET_VERSION = 10901

_MULT_KEYWORDS = ('lr_mult', 'wd_mult')


def create_op_node(spec, inputs, kwargs, name=None, attr=None, hint=None, subgraphs=()):
    """Apply operator ``spec`` to input Symbols, creating variables for the missing inputs.

    Parameters
    ----------
    spec : OpSpec
    inputs : dict of str -> Symbol, or list of Symbol
        By input name; or a list, in input order, for variadic operators (``concat``).
    kwargs : dict
        Operator attributes as the user gave them (Python values or MXNet strings).
    name : str, optional
        Node name; automatic (``hint`` + counter) when omitted.
    attr : dict of str -> str, optional
        Extra node attributes, merged over the current :class:`AttrScope`'s.
    hint : str, optional
        Prefix of automatic names (the lower-cased function name by default).
    subgraphs : sequence of Symbol, optional
        The graphs a control-flow operator runs (see :attr:`_Node.subgraphs`).

    Returns
    -------
    Symbol
        All visible outputs of the new node.
    """
    # lr_mult/wd_mult given to an operator are attributes of it and of the variables it
    # creates (its weights), as in MXNet: Module's optimizer reads them from there
    for key, value in kwargs.items():
        if isinstance(value, np.ndarray):       # its text loses what makes it wrong
            spec.check_value(key, value)
    attrs = {('__%s__' % k if k in _MULT_KEYWORDS else k): attr_string(v) for k, v in kwargs.items()}
    for key, value in AttrScope.current.get(attr).items():
        # Plain keys other than the hidden ones are operator arguments, as in MXNet.
        attrs[_stored_key(key)] = value
    params = _op_params(spec, attrs, subgraphs)
    name = NameManager.current.get(name, hint or spec.name.lower())
    if isinstance(inputs, dict):
        names = spec.input_names(params)
        # An input these attributes leave out (bias with no_bias) may be None; given, MXNet
        # refuses it, as it refuses a variadic operator's keyword input that names no input.
        unknown = [n for n, v in inputs.items() if n not in names and (spec.variadic or v is not None)]
        if unknown:
            raise MXNetError('%s: no input named %s for these attributes; inputs are %s'
                             % (spec.name, unknown[0], ', '.join(names)))
    else:
        names = spec.input_names(params, len(inputs))
        if len(inputs) > len(names):
            raise MXNetError('%s: expects %d inputs, got %d' % (spec.name, len(names), len(inputs)))
        inputs = dict(zip(names, inputs))
    entries = [_single_entry(inputs[n], spec, n) if inputs.get(n) is not None
               else _auto_variable(name, n, attrs, spec.name) for n in names]
    node = _Node(spec.name, name, attrs, entries, spec, params, subgraphs)
    return Symbol([(node, i) for i in range(node.num_visible())])


def _single_entry(sym, spec, input_name):
    if not isinstance(sym, Symbol):
        raise TypeError('%s: input %s must be a Symbol, got %s' % (spec.name, input_name, type(sym).__name__))
    if len(sym._heads) != 1:
        raise MXNetError('%s: input %s has %d outputs; compose with one output (sym[i])'
                         % (spec.name, input_name, len(sym._heads)))
    return sym._heads[0]


def _auto_variable(op_name, input_name, op_attrs, op_type=None):
    """The variable MXNet creates for an input not given: ``<op>_<input>``, with the op's attrs."""
    attrs = dict(op_attrs)
    if input_name in _AUX_INIT:
        attrs['__init__'] = _AUX_INIT[input_name]
    if (op_type, input_name) in _OP_INPUT_INIT:
        attrs['__init__'] = _OP_INPUT_INIT[(op_type, input_name)]
    return (_variable_node('%s_%s' % (op_name, input_name), attrs), 0)


def _topo_order(heads):
    """Nodes reachable from ``heads`` in depth-first post-order (MXNet's JSON node order)."""
    order, visited = [], set()
    for head, _ in heads:
        if head in visited:
            continue
        visited.add(head)
        stack = [(head, iter(head.inputs))]
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class Symbol:
    """A symbolic graph: one or more output entries of operator and variable nodes.

    Symbols are built with ``mx.sym.var`` and the ``mx.sym.<Op>`` functions, composed
    with Python operators, inspected (``list_arguments``, ``infer_shape``), serialized
    (``tojson``) and run through :meth:`bind` / :meth:`simple_bind` / :meth:`eval`.

    Example
    -------
    >>> data = mx.sym.var('data')
    >>> net = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    >>> net = mx.sym.Activation(net, act_type='relu', name='relu')
    >>> net.list_arguments(), net.list_outputs()
    (['data', 'fc_weight', 'fc_bias'], ['relu_output'])
    >>> arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=(2, 4))
    >>> arg_shapes, out_shapes
    ([(2, 4), (3, 4), (3,)], [(2, 3)])
    >>> exe = net.simple_bind(mx.cpu(), data=(2, 4))
    >>> exe.forward(is_train=False, data=mx.nd.ones((2, 4)))[0].shape
    (2, 3)
    """
    __slots__ = ('_heads', '_cache', '__weakref__')
    # NumPy defers to Symbol's reflected operators: ``np.float64(2) - sym`` is a Symbol, as in MXNet
    __array_priority__ = 1000.0

    def __init__(self, handle):
        # ``handle``, MXNet's name: here the graph's output entries, (node, index) pairs
        self._heads = tuple(handle)
        self._cache = {}

    # ---------------------------------------------------------------- graph walks
    def _nodes(self):
        nodes = self._cache.get('nodes')
        if nodes is None:
            nodes = self._cache['nodes'] = _topo_order(self._heads)
        return nodes

    def _aux_nodes(self):
        """Variables fed into auxiliary-state inputs (``moving_mean``...)."""
        return {child for node in self._nodes() for child, _ in node.mutated_inputs()}

    def _variables(self):
        """(argument nodes, auxiliary nodes), each in graph order."""
        cached = self._cache.get('variables')
        if cached is None:
            aux = self._aux_nodes()
            variables = [n for n in self._nodes() if n.is_variable]
            cached = self._cache['variables'] = ([n for n in variables if n not in aux],
                                                 [n for n in variables if n in aux])
        return cached

    def _head_node(self):
        """The node behind every output, or None when the outputs come from several nodes."""
        nodes = {node for node, _ in self._heads}
        return next(iter(nodes)) if len(nodes) == 1 else None

    # --------------------------------------------------------------------- lists
    @property
    def name(self):
        """The name of the node behind the outputs (None for a group of several nodes)."""
        node = self._head_node()
        return None if node is None else node.name

    def list_arguments(self):
        """Names of the arguments (learned or fed variables), in graph order."""
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (``moving_mean``...), in graph order."""
        return [n.name for n in self._variables()[1]]

    def list_inputs(self):
        """Names of every variable, arguments and auxiliary states, in graph order."""
        return [n.name for n in self._nodes() if n.is_variable]

    def list_outputs(self):
        """Output names: ``<node>_<output>`` for operators, the name for variables."""
        return [node.output_name(i) for node, i in self._heads]

    def __len__(self):
        return len(self._heads)

    def __iter__(self):
        return (Symbol([h]) for h in self._heads)

    def __getitem__(self, index):
        """Output ``index`` as a Symbol; a string selects the output of that name."""
        if isinstance(index, str):
            names = self.list_outputs()
            if names.count(index) != 1:
                raise ValueError('There are %d outputs named %r; outputs are %s'
                                 % (names.count(index), index, names))
            index = names.index(index)
        if isinstance(index, slice):
            return Symbol(self._heads[index])
        if not -len(self._heads) <= index < len(self._heads):
            raise IndexError('Symbol has %d outputs, index %d is out of range' % (len(self._heads), index))
        return Symbol([self._heads[index]])

    def get_internals(self):
        """A Symbol grouping every visible output of every node of the graph."""
        return Symbol([(node, i) for node in self._nodes() for i in range(node.num_visible())])

    def get_children(self):
        """A Symbol grouping the inputs of the output nodes (each node once, as MXNet: the
        outputs of one ``SliceChannel`` have its data as their only child), None for a variable."""
        entries = [e for node in dict.fromkeys(n for n, _ in self._heads) for e in node.inputs]
        return Symbol(entries) if entries else None

    def _gen_atomic_symbol(self):
        """The operator of the output node alone: same operator and attributes, no inputs and
        no name, every visible output (``MXGenAtomicSymbolFromSymbol``)."""
        node = self._head_node()
        if node is None or node.is_variable:
            raise MXNetError('_gen_atomic_symbol needs the outputs of one operator node, not %r' % self)
        atomic = _Node(node.op, '', dict(node.attrs), (), node.spec, node.params, node.subgraphs)
        return Symbol([(atomic, i) for i in range(atomic.num_visible())])

    # ---------------------------------------------------------------- attributes
    def attr(self, key):
        """The string attribute ``key`` of the output node, None when absent."""
        node = self._head_node()
        if node is None:
            return None
        return node.attrs.get(_stored_key(key), node.attrs.get(key))

    def list_attr(self, recursive=False):
        """The output node's attributes (a dict of strings); with ``recursive``, every node's
        as ``'<node>$<key>'``."""
        if recursive:
            return {'%s$%s' % (name, k): v for name, attrs in self.attr_dict().items() for k, v in attrs.items()}
        node = self._head_node()
        return {} if node is None else _listed_attrs(node.attrs)

    def attr_dict(self):
        """``{node name: attributes}`` for every node of the graph that has attributes."""
        return {n.name: _listed_attrs(n.attrs) for n in self._nodes() if n.attrs}

    def _set_attr(self, **kwargs):
        """Set string attributes on the output node."""
        node = self._head_node()
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError('Set Attr only accepts string values')
            node.attrs[_stored_key(key)] = value

    # -------------------------------------------------------------- composition
    def __call__(self, *args, **kwargs):
        """A copy of this graph with variables replaced: positionally in ``list_arguments``
        order, or by name."""
        name = kwargs.pop('name', None)
        if args and kwargs:
            raise TypeError('compose only accepts input Symbols either as positional or keyword arguments, not both')
        replace = dict(zip(self.list_arguments(), args)) if args else kwargs
        for key, sym in replace.items():
            if not isinstance(sym, Symbol) or len(sym) != 1:
                raise TypeError('compose expects single-output Symbols, got %r for %s' % (sym, key))
        unknown = set(replace) - set(self.list_inputs())
        if unknown:
            raise MXNetError('compose: no argument named %s; arguments are %s' % (sorted(unknown), self.list_inputs()))
        copied = self._copy_graph({name_: sym._heads[0] for name_, sym in replace.items()})
        if name is not None:
            copied._head_node().name = name
        return copied

    def _copy_graph(self, replace=None):
        """A structural copy whose variables named in ``replace`` become the given entries."""
        replace = replace or {}
        copies = {}

        def entry(node, index):
            return replace[node.name] if node.is_variable and node.name in replace else (copies[node], index)
        for node in self._nodes():
            if not (node.is_variable and node.name in replace):
                copies[node] = _Node(node.op, node.name, dict(node.attrs),
                                     [entry(c, i) for c, i in node.inputs], node.spec, node.params,
                                     node.subgraphs)
        return Symbol([entry(n, i) for n, i in self._heads])

    def __copy__(self):
        return self._copy_graph()

    def __getstate__(self):
        # as MXNet, a Symbol pickles as its JSON text (nothing of the graph's objects)
        return {'handle': self.tojson()}

    def __setstate__(self, state):
        self._heads = load_json(state['handle'])._heads
        self._cache = {}

    def __deepcopy__(self, memo):
        return self._copy_graph()

    def __repr__(self):
        name = self.name
        if name is not None and len(self._heads) == 1:
            return '<Symbol %s>' % name
        return '<Symbol group [%s]>' % ', '.join(n.name for n in dict.fromkeys(n for n, _ in self._heads))

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, 'bool')

    # --------------------------------------------------------- serialization
    def _graph_dict(self, top=True):
        """The JSON object of the graph; a subgraph's (``top`` False) has no ``attrs``."""
        nodes = self._nodes()
        index = {node: i for i, node in enumerate(nodes)}
        json_nodes, row_ptr = [], [0]
        versions = {}   # a variable's version counts the operators that updated it so far
        for node in nodes:
            entry = {'op': node.op, 'name': node.name}
            if node.attrs:
                entry['attrs'] = dict(sorted(node.attrs.items()))
            mutated = node.mutated_inputs()
            for child, _ in mutated:
                versions[child] = versions.get(child, 0) + 1
            entry['inputs'] = [[index[child], i, versions[child] if (child, i) in mutated else 0]
                               for child, i in node.inputs]
            if node.subgraphs:
                entry['subgraphs'] = [sub._graph_dict(top=False) for sub in node.subgraphs]
            json_nodes.append(entry)
            row_ptr.append(row_ptr[-1] + (1 if node.spec is None else node.spec.count_recorded(node.params)))
        graph = {'nodes': json_nodes,
                 'arg_nodes': [i for i, node in enumerate(nodes) if node.is_variable],
                 'node_row_ptr': row_ptr,
                 'heads': [[index[node], i, 0] for node, i in self._heads]}
        if top:
            # files written under NumPy shape semantics say so: their 0s are real sizes
            graph['attrs'] = dict({'is_np_shape': ['int', 1]} if is_np_shape() else {},
                                  mxnet_version=['int', MXNET_VERSION])
        return graph

    def tojson(self, remove_amp_cast=True):
        """The graph as MXNet 1.9.1's JSON text (same layout, byte for byte); with
        ``remove_amp_cast``, without the casts mixed precision inserted (``amp_cast``,
        ``amp_multicast``), as MXNet writes it."""
        sym = remove_amp_cast_nodes(self) if remove_amp_cast else self
        return _json_value(sym._graph_dict(), 0, top=True)

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname`` (atomically: a partial file never replaces it)."""
        _fileio.write_atomic(fname, [self.tojson(remove_amp_cast).encode('utf-8')])

    # ------------------------------------------------------ inference, execution
    def infer_shape(self, *args, **kwargs):
        """Shapes of (arguments, outputs, auxiliary states) from known argument shapes.

        Shapes are given positionally in ``list_arguments`` order or by name; variables'
        ``__shape__`` attributes count as given. Returns ``(None, None, None)`` when some
        shape stays unknown; raises ``MXNetError`` for inconsistent shapes.

        Example
        -------
        >>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
        >>> net.infer_shape(data=(5, 4))
        ([(5, 4), (3, 4), (3,)], [(5, 3)], [])
        >>> net.infer_shape_partial(fc_weight=(3, 4))
        ([(), (3, 4), ()], [()], [])
        """
        from .graph import infer_shape
        return infer_shape(self, self._known(args, kwargs), partial=False)

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape`, with ``()`` for the shapes that stay unknown."""
        from .graph import infer_shape
        return infer_shape(self, self._known(args, kwargs), partial=True)

    def infer_type(self, *args, **kwargs):
        """Dtypes (numpy types) of (arguments, outputs, auxiliary states) from known ones."""
        from .graph import infer_type
        return infer_type(self, self._known(args, kwargs))

    def infer_type_partial(self, *args, **kwargs):
        """Like :meth:`infer_type`, with ``None`` for the dtypes that stay unknown."""
        from .inference import per_group, infer
        dtypes = infer(self, dtypes=self._known(args, kwargs))[1]
        return tuple([None if d is None else np_dtype(d) for d in group]
                     for group in per_group(self, dtypes))

    def _known(self, args, kwargs):
        if args and kwargs:
            raise ValueError('Can only specify known argument shapes either by positional or kwargs way.')
        if args:
            return {n: v for n, v in zip(self.list_arguments(), args) if v is not None}
        return {k: v for k, v in kwargs.items() if v is not None}

    def bind(self, ctx, args, args_grad=None, grad_req='write', aux_states=None, group2ctx=None,
             shared_exec=None):
        """An :class:`Executor` over the given argument arrays (shared, not copied).

        Parameters
        ----------
        ctx : Context
        args : list of NDArray or dict of str -> NDArray
            One array per argument; ``ValueError`` names any missing.
        args_grad : list or dict of NDArray, optional
            Gradient buffers; arguments without one get no gradient.
        grad_req : {'write', 'add', 'null'}, or a list/dict of them
        aux_states : list or dict of NDArray, optional

        Example
        -------
        >>> a, b = mx.sym.var('a'), mx.sym.var('b')
        >>> exe = (a * b).bind(mx.cpu(), {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([3, 4])},
        ...                    args_grad={'a': mx.nd.zeros(2), 'b': mx.nd.zeros(2)})
        >>> exe.forward(is_train=True)[0]
        <BLANKLINE>
        [3. 8.]
        <NDArray 2 @cpu(0)>
        >>> exe.backward(mx.nd.ones(2))
        >>> exe.grad_dict['a']
        <BLANKLINE>
        [3. 4.]
        <NDArray 2 @cpu(0)>
        """
        from ..context import as_context
        return executor.Executor(self, as_context(ctx), args, args_grad, grad_req, aux_states, group2ctx=group2ctx)

    def simple_bind(self, ctx, grad_req='write', type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """An :class:`Executor` with zero-filled arrays of the shapes inferred from ``kwargs``.

        Example
        -------
        >>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
        >>> exe = net.simple_bind(mx.cpu(), data=(2, 4))
        >>> sorted((name, arr.shape) for name, arr in exe.arg_dict.items())
        [('data', (2, 4)), ('fc_bias', (3,)), ('fc_weight', (3, 4))]
        """
        from ..context import as_context
        return executor.simple_bind(self, as_context(ctx), grad_req, type_dict or {}, kwargs, stype_dict,
                                    group2ctx=group2ctx)

    def eval(self, ctx=None, **kwargs):
        """Run the graph once on the named NDArrays; returns the list of outputs."""
        return self.bind(ctx, kwargs, grad_req='null').forward()

    # ------------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _arith(self, other, ('elemwise_add', '_plus'), ('_plus_scalar', '_plusscalar'))

    def __radd__(self, other):
        return _arith(self, other, None, ('_plus_scalar', '_plusscalar'))

    def __sub__(self, other):
        return _arith(self, other, ('elemwise_sub', '_minus'), ('_minus_scalar', '_minusscalar'))

    def __rsub__(self, other):
        return _arith(self, other, None, ('_rminus_scalar', '_rminusscalar'))

    def __mul__(self, other):
        return _arith(self, other, ('elemwise_mul', '_mul'), ('_mul_scalar', '_mulscalar'))

    def __rmul__(self, other):
        return _arith(self, other, None, ('_mul_scalar', '_mulscalar'))

    def __truediv__(self, other):
        return _arith(self, other, ('elemwise_div', '_div'), ('_div_scalar', '_divscalar'))

    def __rtruediv__(self, other):
        return _arith(self, other, None, ('_rdiv_scalar', '_rdivscalar'))

    def __mod__(self, other):
        return _arith(self, other, ('_mod', '_mod'), ('_mod_scalar', '_modscalar'))

    def __rmod__(self, other):
        return _arith(self, other, None, ('_rmod_scalar', '_rmodscalar'))

    def __pow__(self, other):
        return _arith(self, other, ('_power', '_power'), ('_power_scalar', '_powerscalar'))

    def __rpow__(self, other):
        return _arith(self, other, None, ('_rpower_scalar', '_rpower_scalar'))

    def __neg__(self):
        return _apply('_mul_scalar', [self], {'scalar': -1.0}, '_mulscalar')

    def __abs__(self):
        return _apply('abs', [self], {}, 'abs')

    def __eq__(self, other):
        return _arith(self, other, ('_equal', '_equal'), ('_equal_scalar', '_equal_scalar'))

    def __ne__(self, other):
        return _arith(self, other, ('_not_equal', '_not_equal'), ('_not_equal_scalar', '_not_equal_scalar'))

    def __lt__(self, other):
        return _arith(self, other, ('_lesser', '_lesser'), ('_lesser_scalar', '_lesser_scalar'))

    def __le__(self, other):
        return _arith(self, other, ('_lesser_equal', '_lesser_equal'),
                      ('_lesser_equal_scalar', '_lesser_equal_scalar'))

    def __gt__(self, other):
        return _arith(self, other, ('_greater', '_greater'), ('_greater_scalar', '_greater_scalar'))

    def __ge__(self, other):
        return _arith(self, other, ('_greater_equal', '_greater_equal'),
                      ('_greater_equal_scalar', '_greater_equal_scalar'))

    def astype(self, dtype):
        """Cast to ``dtype`` (the ``Cast`` operator)."""
        return _apply('Cast', [self], {'dtype': dtype}, 'cast')

    def as_np_ndarray(self):
        """The NumPy-semantics Symbol (``mx.sym.np._Symbol``) of this graph."""
        return _NP_SYMBOL[0](self)

    def as_nd_ndarray(self):
        """This (legacy) Symbol."""
        return self


# mx.sym.np's Symbol maker, registered by neomx.symbol.numpy (which sits above this module)
_NP_SYMBOL = [None]


def register_np_symbol(maker):
    """Give :meth:`Symbol.as_np_ndarray` the maker of NumPy-semantics Symbols."""
    _NP_SYMBOL[0] = maker


_AMP_CAST_OPS = ('amp_cast', 'amp_multicast')


def remove_amp_cast_nodes(sym):
    """``sym`` without its ``amp_cast`` and ``amp_multicast`` nodes: each reader reads what
    the cast read (MXNet's ``RemoveAmpCast``); ``sym`` itself when it has none."""
    nodes = sym._nodes()
    if not any(n.op in _AMP_CAST_OPS for n in nodes):
        return sym
    copies = {}

    def source(entry):
        node, index = entry
        while node.op in _AMP_CAST_OPS:
            node, index = node.inputs[0 if node.op == 'amp_cast' else index]
        return (copies[node], index)
    for node in nodes:
        if node.op not in _AMP_CAST_OPS:
            copies[node] = _Node(node.op, node.name, dict(node.attrs), [source(e) for e in node.inputs],
                                 node.spec, node.params, node.subgraphs)
    return Symbol([source(e) for e in sym._heads])


# What mixed precision (``mx.contrib.amp.init``) does to the nodes Symbol arithmetic makes:
# ``hook(op_name, symbol) -> symbol``, or None (nothing, the default).
_ARITHMETIC_HOOK = [None]


def set_arithmetic_hook(hook):
    """Have ``hook(op_name, symbol)`` rewrite each node Symbol arithmetic makes (``a + b``,
    ``a * 2``, ``astype``) and return the Symbol to use; None removes it. MXNet routes that
    arithmetic through the ``mx.sym`` functions, which ``mx.contrib.amp`` wraps."""
    _ARITHMETIC_HOOK[0] = hook


def _apply(op_name, inputs, kwargs, hint):
    spec = registry.get(op_name)
    sym = create_op_node(spec, dict(zip(spec.inputs, inputs)), kwargs, hint=hint)
    hook = _ARITHMETIC_HOOK[0]
    return sym if hook is None else hook(op_name, sym)


def _arith(sym, other, symbol_op, scalar_op):
    """``sym <op> other``: (op, name hint) pairs for a Symbol and for a number on the right."""
    if isinstance(other, Symbol) and symbol_op is not None:
        return _apply(symbol_op[0], [sym, other], {}, symbol_op[1])
    if isinstance(other, numeric_types):
        return _apply(scalar_op[0], [sym], {'scalar': other}, scalar_op[1])
    raise TypeError('type %s not supported' % type(other).__name__)


# -------------------------------------------------------------------- creation
def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None, stype=None,
        profiler_scope=None, **kwargs):
    """A variable: an input of the graph, given when the graph is bound.

    Parameters
    ----------
    name : str
    attr : dict of str -> str, optional
        Extra attributes.
    shape : tuple of int, optional
        Known shape, used by shape inference (``__shape__``).
    lr_mult, wd_mult : float, optional
        Learning-rate and weight-decay multipliers for the optimizer.
    dtype : str or numpy dtype, optional
        Known dtype, used by type inference (``__dtype__``).
    init : Initializer or str, optional
        The initializer Module and Gluon use for this variable (``__init__``).
    stype : {'default', 'row_sparse', 'csr'}, optional
    profiler_scope : str, optional
    **kwargs : str
        Further attributes, named ``__key__``.

    Returns
    -------
    Symbol

    Example
    -------
    >>> x = mx.sym.var('x', shape=(2, 3), lr_mult=0.5)
    >>> x.name, x.attr('__shape__'), x.attr('__lr_mult__')
    ('x', '(2, 3)', '0.5')
    >>> (x * 2).infer_shape()[1]
    [(2, 3)]
    """
    if not isinstance(name, str):
        raise TypeError('Expect a string for variable `name`')
    attrs = {_stored_key(k): v for k, v in AttrScope.current.get(attr).items()}
    given = {'__shape__': refuse_numpy_shape(shape, 'var'), '__lr_mult__': lr_mult, '__wd_mult__': wd_mult,
             '__profiler_scope__': profiler_scope,
             '__dtype__': None if dtype is None else TYPE_FLAG_OF_TORCH[torch_dtype(dtype, 'var')],
             '__storage_type__': None if stype is None else _STORAGE_TYPE_FLAG[stype],
             '__init__': None if init is None else (init if isinstance(init, str) else init.dumps())}
    for key, value in given.items():
        if value is not None:
            attrs[key] = str(value)
    for key, value in kwargs.items():
        if not _is_dunder(key):
            raise ValueError('Attribute name=%s is not supported. Additional attributes must start and '
                             'end with double underscores, e.g, __yourattr__' % key)
        attrs[key] = str(value)
    return Symbol([(_variable_node(name, attrs), 0)])


Variable = var


def Group(symbols, create_fn=Symbol):  # pylint: disable=invalid-name
    """One Symbol whose outputs are the outputs of ``symbols``, in order; ``create_fn``
    (a Symbol subclass) makes it from their heads."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError('Expected a list of symbols as input')
    return create_fn([h for s in symbols for h in s._heads])


# ------------------------------------------------------------------ JSON files
def _json_value(value, depth, top=False):
    """dmlc's JSON layout: objects of several keys and arrays of more than ten items, or of
    objects, take one line per item, indented by two spaces a level; ``", "`` separates."""
    if isinstance(value, dict):
        items = ['%s: %s' % (json.dumps(k), _json_value(v, depth + 1)) for k, v in value.items()]
        return _json_join('{', items, '}', depth, top or len(items) > 1)
    if isinstance(value, list):
        items = [_json_value(v, depth + 1) for v in value]
        return _json_join('[', items, ']', depth, len(items) > 10 or any(isinstance(v, dict) for v in value))
    return json.dumps(value)


def _json_join(opening, items, closing, depth, multi_line):
    if not multi_line:
        return opening + ', '.join(items) + closing
    inner = '\n' + '  ' * (depth + 1)
    return opening + inner + (', ' + inner).join(items) + '\n' + '  ' * depth + closing



def load(fname):
    """The Symbol saved in JSON file ``fname`` (checked as :func:`load_json` does; errors
    name the file)."""
    return loading.read_file(fname, Symbol)


def load_json(json_str):
    """The Symbol described by MXNet JSON text (as written by :meth:`Symbol.tojson`).

    Raises
    ------
    MXNetError
        For text that is not JSON or not a valid graph, naming the node at fault by index,
        name and operator.
    """
    return loading.read_json(json_str, 'load_json', Symbol)
