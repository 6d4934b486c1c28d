"""Mixed-precision graph rewriting: MXNet 1.9.1's ``ReducePrecision`` pass and ``RemoveAmpCast``.

:func:`reduce_precision` is what ``mx.contrib.amp.convert_symbol`` runs: it copies a float32
graph, inserting ``amp_cast`` nodes in front of the operators that run in the target
precision (to it) or in float32 (back to it), ``amp_multicast`` in front of the operators
that run in the widest type among their inputs when that type is not known yet, and a cast
to float32 of every graph output that is not float32 already. The nodes it adds are named
as MXNet names them (``<producer>[_<output>]_amp_cast_<dtype>``), so converted graphs
export to the same JSON as MXNet's. It then types the variables (``__dtype__``) as MXNet
does: the model parameters get the dtype the converted graph implies, and with
``cast_optional_params`` parameters read only by casts to the target dtype become that dtype.

``Symbol.tojson(remove_amp_cast=True)`` undoes the casts (:func:`neomx.symbol.symbol.remove_amp_cast`).
"""
import torch

from ..base import dtype_name, torch_dtype
from ..operator import registry
from ..operator.dtype_rules import DTypeMismatch
from .symbol import Symbol, _Node, _topo_order, create_op_node, set_arithmetic_hook
from . import inference

__all__ = ['reduce_precision', 'cast_inputs', 'multicast_inputs', 'set_arithmetic_hook']

# Operators whose outputs MXNet names (``FListOutputNames``): a cast of their output i is
# named after that name (``fullyconnected0_output_amp_cast_float32``), of other operators'
# after the index (``sin0_0_amp_cast_float32``). Found by converting each with MXNet 1.9.1.
_NAMED_OUTPUTS = frozenset([
    'Activation', 'BatchNorm', 'BatchNorm_v1', 'BilinearSampler', 'Concat', 'Convolution', 'Correlation',
    'Crop', 'Deconvolution', 'Dropout', 'FullyConnected', 'GridGenerator', 'GroupNorm',
    'IdentityAttachKLSparseReg', 'InstanceNorm', 'L2Normalization', 'LRN', 'LayerNorm', 'LeakyReLU',
    'MakeLoss', 'Pad', 'Pooling', 'Pooling_v1', 'RNN', 'ROIPooling', 'SVMOutput', 'SequenceLast',
    'SequenceMask', 'SequenceReverse', 'SliceChannel', 'SoftmaxActivation', 'SoftmaxOutput',
    'SpatialTransformer', 'SwapAxis', 'UpSampling', 'elemwise_add', 'softmax', 'softmin',
    '_contrib_DeformableConvolution', '_contrib_DeformablePSROIPooling', '_contrib_MultiBoxDetection',
    '_contrib_MultiBoxPrior', '_contrib_MultiBoxTarget', '_contrib_MultiProposal', '_contrib_PSROIPooling',
    '_contrib_Proposal', '_contrib_ROIAlign', '_contrib_SyncBatchNorm',
    '_contrib_interleaved_matmul_encdec_qk', '_contrib_interleaved_matmul_encdec_valatt',
    '_contrib_interleaved_matmul_selfatt_qk', '_contrib_interleaved_matmul_selfatt_valatt',
])
_FLOAT32 = torch.float32


def _suffix(entry, mirror):
    """MXNet's ``GetSuffix``: '' for a variable, else ``_<output name>`` or ``_<index>``."""
    node, index = entry
    if mirror[node].is_variable:
        return ''
    if node.op in _NAMED_OUTPUTS:
        return '_' + node.spec.list_outputs(node.params)[index]
    return '_%d' % index


def _cast_node(entry, suffix, source, dtype):
    """An ``amp_cast`` of ``source`` (an entry of the new graph) to ``dtype`` (a name)."""
    spec = registry.get('amp_cast')
    attrs = {'dtype': dtype}
    return _Node('amp_cast', '%s%s_amp_cast_%s' % (entry[0].name, suffix, dtype), attrs, [source],
                 spec, spec.parse_attrs(attrs))


def _output_dtypes(node, first_input):
    """The dtypes of ``node``'s outputs when its input 0 is ``first_input`` and the others are
    unknown (MXNet's per-node ``FInferType``; None for outputs that stay unknown), or None
    where the operator's rule refuses it."""
    spec = node.spec
    names = node.input_names()
    known = [first_input] + [None] * (len(node.inputs) - 1) + [None]
    attr_dtype = node.params.get('dtype') if 'dtype' in spec.attrs else None
    try:
        solved = spec.dtypes.solve(names, node.params, known, spec.dtype_inputs,
                                   None if attr_dtype is None else torch_dtype(attr_dtype),
                                   backward='dtype' not in spec.attrs)
    except DTypeMismatch:
        return None
    out = solved[-1]
    later = out
    if spec.dtypes.later_outputs is not None:
        later = spec.dtypes.later_outputs(solved[:-1], node.params)
    return [out] + [later] * (node.num_outputs() - 1), solved[:-1]


def _conditional_fp32(node, conditional, excluded):
    """Whether one of the (attribute, values) conditions of ``node``'s operator holds."""
    if node.is_variable or node.name in excluded or node.op not in conditional:
        return False
    return any(node.attrs.get(attr) in values for attr, values in conditional[node.op].items())


class _Rewrite:
    """The state of one :func:`reduce_precision` walk (MXNet's mirror maps)."""

    def __init__(self, target, target_ops, fp32_ops, widest_ops, conditional, excluded, data_names,
                 cast_optional_params):
        self.target, self.target_name = target, dtype_name(target)
        self.target_ops, self.fp32_ops, self.widest_ops = target_ops, fp32_ops, widest_ops
        self.conditional, self.excluded = conditional, excluded
        self.data_names, self.cast_optional_params = data_names, cast_optional_params
        self.mirror = {}        # old node -> new node
        self.fp32 = {}          # old entry -> new entry known to be float32
        self.low = {}           # old entry -> new entry known to be in the target dtype

    def mirrored(self, entry):
        return (self.mirror[entry[0]], entry[1])

    def cast_input(self, new, entry, dtype_name_, table):
        cast = _cast_node(entry, _suffix(entry, self.mirror), self.mirrored(entry), dtype_name_)
        table[entry] = (cast, 0)
        new.append((cast, 0))

    def record_outputs(self, node, new_node, dtypes):
        for i, dtype in enumerate(dtypes):
            if dtype == self.target:
                self.low[(node, i)] = (new_node, i)
            elif dtype == _FLOAT32:
                self.fp32[(node, i)] = (new_node, i)

    def to_fp32(self, node, new_node, variables_as_they_are):
        """Inputs cast to float32 (variables left as they are for an FP32_FUNCS operator)."""
        self.record_outputs(node, new_node, [_FLOAT32] * node.num_outputs())
        inputs = []
        mutated = set(node.mutated_inputs())
        for entry in node.inputs:
            if entry in self.fp32:
                inputs.append(self.fp32[entry])
            elif (variables_as_they_are and entry[0].is_variable) or (
                    not variables_as_they_are and entry in mutated):
                inputs.append(self.mirrored(entry))
            else:
                self.cast_input(inputs, entry, 'float32', self.fp32)
        return inputs

    def to_target(self, node, new_node):
        inputs = []
        typed = _output_dtypes(node, self.target)
        in_types = [None] * len(node.inputs)
        if typed is not None:
            out_types, in_types = typed
            self.record_outputs(node, new_node, out_types)
        mutated = set(node.mutated_inputs())
        for i, entry in enumerate(node.inputs):
            if entry in self.low:
                inputs.append(self.low[entry])
            elif ((self.cast_optional_params and entry[0].is_variable and entry[0].name not in self.data_names)
                  or entry in mutated or not (in_types[i] is None or in_types[i] == self.target)):
                # parameters converted offline, inputs updated in place, and inputs the
                # operator wants in float32 whatever its data (BatchNorm's) stay as they are
                inputs.append(self.mirrored(entry))
                if self.cast_optional_params and entry[0].is_variable:
                    self.low[entry] = self.mirrored(entry)
            else:
                self.cast_input(inputs, entry, self.target_name, self.low)
        return inputs

    def to_widest(self, node, new_node):
        if any(e not in self.low and e not in self.fp32 for e in node.inputs):
            # not all input types are known here: amp_multicast decides when it runs
            spec = registry.get('amp_multicast')
            attrs = {'num_outputs': str(len(node.inputs))}
            first = node.inputs[0]
            multicast = _Node('amp_multicast', '%s%s_amp_multicast' % (first[0].name, _suffix(first, self.mirror)),
                              attrs, [self.mirrored(e) for e in node.inputs], spec, spec.parse_attrs(attrs))
            return [(multicast, i) for i in range(len(node.inputs))]
        widest = _FLOAT32 if any(e in self.fp32 for e in node.inputs) else self.target
        self.record_outputs(node, new_node, [widest] * node.num_outputs())
        table, name = (self.fp32, 'float32') if widest == _FLOAT32 else (self.low, self.target_name)
        inputs = []
        for entry in node.inputs:
            if entry in table:
                inputs.append(table[entry])
            else:
                self.cast_input(inputs, entry, name, table)
        return inputs

    def as_it_is(self, node, new_node):
        if node.inputs and (node.inputs[0] in self.fp32 or node.inputs[0] in self.low):
            typed = _output_dtypes(node, self.target if node.inputs[0] in self.low else _FLOAT32)
            if typed is not None:
                self.record_outputs(node, new_node, typed[0])
        return [self.mirrored(e) for e in node.inputs]

    def visit(self, node):
        new_node = _Node(node.op, node.name, dict(node.attrs), (), node.spec, node.params, node.subgraphs)
        excluded = node.name in self.excluded
        if excluded or (not node.is_variable and node.op in self.fp32_ops):
            inputs = self.to_fp32(node, new_node, variables_as_they_are=True)
        elif not node.is_variable and node.op in self.target_ops:
            inputs = self.to_target(node, new_node)
        elif not node.is_variable and node.op in self.widest_ops:
            inputs = self.to_widest(node, new_node)
        elif _conditional_fp32(node, self.conditional, self.excluded):
            inputs = self.to_fp32(node, new_node, variables_as_they_are=False)
        else:
            inputs = self.as_it_is(node, new_node)
        new_node.inputs = tuple(inputs)
        self.mirror[node] = new_node

    def outputs(self, heads):
        out = []
        for entry in heads:
            if entry in self.fp32:
                out.append(self.fp32[entry])
            else:
                cast = _cast_node(entry, _suffix(entry, self.mirror), self.mirrored(entry), 'float32')
                self.fp32[entry] = (cast, 0)
                out.append((cast, 0))
        return out


def reduce_precision(sym, target_dtype, target_dtype_ops, fp32_ops, widest_dtype_ops, conditional_fp32_ops,
                     excluded_sym_names, data_names, model_param_names, cast_optional_params):
    """The float32 graph ``sym`` with casts for mixed precision (see the module documentation).

    Parameters
    ----------
    sym : Symbol
    target_dtype : str
        'float16' or 'bfloat16'.
    target_dtype_ops, fp32_ops, widest_dtype_ops : list of str
        Operator names (MXNet's, aliases included).
    conditional_fp32_ops : list of (str, str, list of str)
        (operator, attribute, the attribute's values (strings) that make it run in float32).
    excluded_sym_names : list of str
        Nodes left in float32.
    data_names : list of str
        The graph's data inputs: float32.
    model_param_names : list of str
        The variables that get a ``__dtype__`` (all that had one, when empty).
    cast_optional_params : bool

    Returns
    -------
    Symbol
    """
    target = torch_dtype(target_dtype)
    conditional = {}
    for op_name, attr, values in conditional_fp32_ops:
        conditional.setdefault(op_name, {}).setdefault(attr, []).extend(values)
    # nodes are matched by their operator's name as MXNet writes it (an alias in a list,
    # like '_sparse_FullyConnected', matches no node, as in MXNet)
    rewrite = _Rewrite(target, set(target_dtype_ops), set(fp32_ops), set(widest_dtype_ops),
                       conditional, set(excluded_sym_names), set(data_names), cast_optional_params)
    for node in _topo_order(sym._heads):
        rewrite.visit(node)
    result = Symbol(rewrite.outputs(sym._heads))
    _type_variables(result, target, data_names, model_param_names, cast_optional_params)
    return result


def _type_variables(sym, target, data_names, model_param_names, cast_optional_params):
    """Set the variables' ``__dtype__`` as ``MXReducePrecisionSymbol`` does: from the types the
    converted graph implies with the data float32 (the variables' own ``__dtype__`` not
    counted), unknown ones float32."""
    stripped = sym._copy_graph()
    for node in stripped._nodes():
        if node.is_variable:
            node.attrs.pop('__dtype__', None)
    _, dtypes = inference.infer(stripped, dtypes={n: 'float32' for n in data_names})
    by_name = {n.name: dtypes.get((n, 0)) for n in stripped._nodes() if n.is_variable}
    if cast_optional_params:
        by_name.update(_optional_param_dtypes(sym, target, by_name))
    given = set(model_param_names)
    for node in sym._nodes():
        if not node.is_variable:
            continue
        if given:
            if node.name not in given:
                continue
        elif '__dtype__' not in node.attrs:
            continue
        dtype = by_name.get(node.name)
        node.attrs['__dtype__'] = str(_TYPE_FLAGS[dtype if dtype is not None else _FLOAT32])
    for name in data_names:      # the data are float32 (MXNet keeps them in its name -> dtype map)
        for node in sym._nodes():
            if node.is_variable and node.name == name and '__dtype__' in node.attrs:
                node.attrs['__dtype__'] = '0'


_TYPE_FLAGS = {torch.float32: 0, torch.float64: 1, torch.float16: 2, torch.uint8: 3, torch.int32: 4,
               torch.int8: 5, torch.int64: 6, torch.bool: 7, torch.int16: 8, torch.bfloat16: 12}


def _optional_param_dtypes(sym, target, inferred):
    """MXNet's ``AMPInferUnknown``: variables of unknown type read by an ``amp_cast`` take its
    dtype (the first cast's; conflicting casts leave them as inferred), and variables read by
    an ``amp_multicast`` whose inputs are all variables take the target dtype."""
    result, seen = {}, {}

    def visit_var(name, dtype):
        if name not in seen:
            if inferred.get(name) is None:
                seen[name] = dtype
                result[name] = dtype
        elif seen[name] != dtype:
            result[name] = inferred.get(name)
    for node in sym._nodes():
        if node.op == 'amp_cast':
            for child, _ in node.inputs:
                if child.is_variable:
                    visit_var(child.name, torch_dtype(node.params['dtype']))
        elif node.op == 'amp_multicast':
            if all(child.is_variable for child, _ in node.inputs):
                for child, _ in node.inputs:
                    visit_var(child.name, target)
    return result


def _rebuilt(sym, inputs):
    """The output node of ``sym`` again, reading ``inputs`` (entries): same operator, name
    and attributes, all its visible outputs (MXNet composes ``_gen_atomic_symbol()``)."""
    node = sym._head_node()
    new = _Node(node.op, node.name, dict(node.attrs), inputs, node.spec, node.params, node.subgraphs)
    return Symbol([(new, i) for i in range(new.num_visible())])


def cast_inputs(sym, dtype, keep=None):
    """``sym`` (one operator's outputs) reading each input through an ``amp_cast`` to
    ``dtype``, as ``mx.contrib.amp`` wraps the ``mx.sym`` functions: the auxiliary states,
    and the inputs whose entry in ``keep`` (by position) is a non-empty name, read directly."""
    node = sym._head_node()
    aux = set(sym.list_auxiliary_states())
    cast = registry.get('amp_cast')
    inputs = []
    for i, entry in enumerate(node.inputs):
        if entry[0].is_variable and entry[0].name in aux or (keep and keep[i]):
            inputs.append(entry)
        else:
            inputs.append(create_op_node(cast, {'data': Symbol([entry])}, {'dtype': dtype})._heads[0])
    return _rebuilt(sym, inputs)


def multicast_inputs(sym):
    """``sym`` (one operator's outputs) reading its inputs through one ``amp_multicast``."""
    node = sym._head_node()
    multicast = create_op_node(registry.get('amp_multicast'), [Symbol([e]) for e in node.inputs],
                               {'num_outputs': len(node.inputs)})
    return _rebuilt(sym, list(multicast._heads))
