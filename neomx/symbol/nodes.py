"""The nodes of Symbol graphs, below ``Symbol`` itself: what the graph readers
(``loading.py``) and rewrites (``common_expr.py``) build without needing the Symbol class."""
import numpy as np
import torch

from ..base import dtype_name

# Attribute keys MXNet stores as ``__key__`` and lists under both spellings.
_HIDDEN_KEYS = frozenset(('ctx_group', 'lr_mult', 'wd_mult', 'force_mirroring', 'mirror_stage',
                          'profiler_scope'))

# Initializers MXNet attaches to auto-created auxiliary states, by input name.
_AUX_INIT = {'moving_mean': '["zero", {}]', 'moving_var': '["one", {}]'}
# ... and to auto-created inputs of particular operators, by (operator, input name).
_OP_INPUT_INIT = {('LeakyReLU', 'gamma'): '["Constant", {"value": 0.25}]'}

_STORAGE_TYPE_FLAG = {'default': 0, 'row_sparse': 1, 'csr': 2}


def _stored_key(key):
    return '__%s__' % key if key in _HIDDEN_KEYS else key


def _is_dunder(key):
    return key.startswith('__') and key.endswith('__')


def _listed_attrs(attrs):
    """A node's attributes as ``list_attr`` shows them: hidden keys under both spellings."""
    listed = {}
    for key, value in attrs.items():
        listed[key] = value
        if _is_dunder(key) and key[2:-2] in _HIDDEN_KEYS:
            listed[key[2:-2]] = value
    return listed


def attr_string(value):
    """An attribute value as MXNet writes it into Symbol JSON (``str`` of the user's value)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (torch.dtype, np.dtype)) or (isinstance(value, type) and issubclass(value, np.generic)):
        return dtype_name(value)
    if isinstance(value, (tuple, list)):
        # numpy 2 writes np.int64(3) inside containers; MXNet's strings hold plain numbers
        value = type(value)(v.item() if isinstance(v, np.generic) else v for v in value)
    return str(value)


class _Node:
    """One graph node: a variable (``spec`` is None) or an operator applied to input entries.

    Attributes
    ----------
    op : str
        MXNet's operator name as written to JSON, ``'null'`` for variables.
    name : str
    attrs : dict of str -> str
        Operator attributes and ``__dunder__`` annotations, as JSON strings.
    inputs : tuple of (_Node, int)
        The entries (node, output index) feeding the operator.
    spec : OpSpec or None
    params : dict or None
        The operator's typed attributes, parsed once from ``attrs`` (plus ``subgraphs``,
        see :func:`_op_params`).
    subgraphs : tuple of Symbol
        The graphs a control-flow operator runs (``_foreach``'s body), written to JSON
        under the node's ``"subgraphs"``; empty for other operators.
    """
    __slots__ = ('op', 'name', 'attrs', 'inputs', 'spec', 'params', 'subgraphs')

    def __init__(self, op, name, attrs, inputs=(), spec=None, params=None, subgraphs=()):
        self.op, self.name, self.attrs = op, name, attrs
        self.inputs, self.spec, self.params = tuple(inputs), spec, params
        self.subgraphs = tuple(subgraphs)

    @property
    def is_variable(self):
        return self.spec is None

    def num_outputs(self):
        return 1 if self.spec is None else self.spec.count_outputs(self.params)

    def num_visible(self):
        return 1 if self.spec is None else self.spec.count_visible(self.params)

    def output_name(self, index):
        if self.spec is None:
            return self.name
        suffix = self.spec.list_outputs(self.params)[index]
        return '%s_%s' % (self.name, suffix) if self.name else suffix

    def input_names(self):
        return self.spec.input_names(self.params, len(self.inputs) if self.spec.variadic else None)

    def mutated_inputs(self):
        """The input entries this operator updates in place (its auxiliary states)."""
        aux = () if self.spec is None else self.spec.aux_names(self.params)
        if not aux:
            return []
        return [e for e, n in zip(self.inputs, self.input_names()) if n in aux]


def _variable_node(name, attrs):
    return _Node('null', name, attrs)


def _op_params(spec, attrs, subgraphs=()):
    """The typed attributes of a node; an operator carrying subgraphs also receives them,
    as the keyword ``subgraphs`` of its implementation (see ``neomx/operator/control_flow.py``)."""
    params = spec.parse_attrs({k: v for k, v in attrs.items() if not _is_dunder(k)})
    if subgraphs:
        params['subgraphs'] = tuple(subgraphs)
    return params
