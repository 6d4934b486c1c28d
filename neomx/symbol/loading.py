"""Reading Symbol JSON files, checked whole before any of the graph is used.

A symbol file is data from anywhere. Its structure is checked when it is read, node by
node in file order, and anything wrong raises ``MXNetError`` naming the node's index, name
and operator: a node or entry of the wrong shape, an input that refers to a node at or
after its reader (a cycle or forward reference) or to an output the node does not have, a
head out of range, an operator given a different number of inputs than its attributes
require (a missing ``bias``), attributes the operator does not parse, and variable
annotations (``__shape__``, ``__dtype__``...) that are not what they declare. Names and
attribute values are kept as data only (see :mod:`neomx.symbol.codegen`), so no content
of a file runs.
"""
import json
import re

from .. import _fileio
from ..base import MXNetError, TORCH_OF_TYPE_FLAG
from ..operator import registry
from ..util import is_np_shape
from .nodes import _Node, _op_params, _variable_node

__all__ = ['read_json', 'read_file']

# Control-flow subgraphs nest; deeper nesting than this is refused before recursion runs out.
_MAX_SUBGRAPH_DEPTH = 32
_SHOWN_NAME = 60        # characters of a name shown in messages

_FLOAT_ANNOTATIONS = ('__lr_mult__', '__wd_mult__')
_STORAGE_TYPES = (-1, 0, 1, 2)      # undefined, default, row_sparse, csr
_PLAIN_SHAPE = re.compile(r'[(\[] *(-?[0-9]{1,18} *(, *-?[0-9]{1,18} *)*,? *)?[)\]]\Z')
_INTEGER = re.compile(r'-?[0-9]+')
_ANNOTATIONS = frozenset(('__shape__', '__dtype__', '__storage_type__') + _FLOAT_ANNOTATIONS)
_NODE_ERRORS = (MXNetError, ValueError, TypeError, KeyError, IndexError)


def _shown(name):
    text = repr(name)
    return text if len(text) <= _SHOWN_NAME else text[:_SHOWN_NAME] + '...'


class _Invalid(Exception):
    """A problem of the node being read; :class:`_GraphReader` adds where it is."""


def _node_attrs(entry):
    """A JSON node's attributes, from 'attrs' or the older 'param' and 'attr' keys."""
    attrs = {}
    for key in ('param', 'attr', 'attrs'):
        table = entry.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise _Invalid("'%s' is a %s, not an object" % (key, type(table).__name__))
        for name, value in table.items():
            if type(value) is not str:     # pylint: disable=unidiomatic-typecheck
                if isinstance(value, (list, dict)) or value is None:
                    raise _Invalid('attribute %s is a %s, not a string' % (_shown(name), type(value).__name__))
                value = str(value)
            attrs[name] = value
    return attrs


def _check_annotations(attrs):
    """The annotations neomx reads from variables hold what they declare."""
    if _ANNOTATIONS.isdisjoint(attrs):
        return
    if '__shape__' in attrs and attrs['__shape__'] != 'None':     # 'None': unknown number of dims
        text = attrs['__shape__']
        if _PLAIN_SHAPE.match(text):        # what MXNet writes: no need to parse it as a literal
            shape = [int(d) for d in _INTEGER.findall(text)]
        else:
            try:
                shape = registry.SHAPE.parse(text)
            except (ValueError, TypeError) as err:
                raise _Invalid('__shape__ %s is not a shape: %s' % (_shown(text), err)) from None
        if any(d is not None and d < -1 for d in shape):
            raise _Invalid('__shape__ %s has a negative dimension' % _shown(attrs['__shape__']))
    for key, known in (('__dtype__', TORCH_OF_TYPE_FLAG), ('__storage_type__', _STORAGE_TYPES)):
        if key in attrs:
            value = attrs[key].strip()
            if not (value.lstrip('-').isdigit() and len(value) < 4 and int(value) in known):
                raise _Invalid('%s %s is not a type flag MXNet writes' % (key, _shown(attrs[key])))
    for key in _FLOAT_ANNOTATIONS:
        if key in attrs:
            try:
                float(attrs[key])
            except ValueError:
                raise _Invalid('%s %s is not a number' % (key, _shown(attrs[key]))) from None


def _entry_indices(entry, what):
    """``(node index, output index)`` of a ``[node, output(, version)]`` entry."""
    # pylint: disable=unidiomatic-typecheck
    if not (type(entry) is list and 2 <= len(entry) <= 3 and type(entry[0]) is int and type(entry[1]) is int
            and (len(entry) == 2 or type(entry[2]) is int)):     # not bool, not float
        raise _Invalid('%s is %s, not [node, output] or [node, output, version] integers'
                       % (what, _shown(entry)))
    return entry[0], entry[1]


def _output_of(nodes, index, output, what, before):
    """The entry ``(node, output)`` that ``what`` refers to, of the nodes read so far; the
    reader is node ``before`` (None for a head)."""
    if index < 0:
        raise _Invalid('%s refers to node %d, which is not a node index' % (what, index))
    if index >= len(nodes):
        if before is not None:
            raise _Invalid('%s refers to node %d, which does not come before node %d (a cycle or a '
                           'forward reference)' % (what, index, before))
        raise _Invalid('%s refers to node %d, out of range (the graph has %d nodes)' % (what, index, len(nodes)))
    node = nodes[index]
    count = node.num_outputs()
    if not 0 <= output < count:
        raise _Invalid('%s refers to output %d of node %d %s (%s), which has %d output%s'
                       % (what, output, index, _shown(node.name), node.op, count, '' if count == 1 else 's'))
    return node, output


class _GraphReader:
    """Reads one graph object (a file's or a node's subgraph); ``where`` prefixes messages."""

    def __init__(self, where, symbol_class, depth=0):
        self.where, self.symbol_class, self.depth = where, symbol_class, depth

    def _fail(self, message):
        raise MXNetError('%s: %s' % (self.where, message))

    def symbol(self, graph):
        if not isinstance(graph, dict):
            self._fail('the graph is a %s, not an object' % type(graph).__name__)
        entries, heads = graph.get('nodes'), graph.get('heads')
        if not isinstance(entries, list) or not entries:
            self._fail("the graph has no list of nodes ('nodes')")
        if not isinstance(heads, list) or not heads:
            self._fail("the graph has no list of outputs ('heads')")
        nodes = []
        for i, entry in enumerate(entries):
            try:
                nodes.append(self._node(i, entry, nodes))
            except _Invalid as err:
                self._fail('node %d%s: %s' % (i, _described(entry), err))
        outputs = []
        for k, head in enumerate(heads):
            try:
                outputs.append(_output_of(nodes, *_entry_indices(head, 'head %d' % k), 'head %d' % k, None))
            except _Invalid as err:
                self._fail(str(err))
        return self.symbol_class(outputs)

    def _node(self, i, entry, nodes):
        if not isinstance(entry, dict):
            raise _Invalid('is a %s, not an object' % type(entry).__name__)
        op, name = entry.get('op'), entry.get('name')
        if not isinstance(op, str) or not isinstance(name, str):
            raise _Invalid("needs a string 'op' and 'name'")
        attrs = _node_attrs(entry)
        _check_annotations(attrs)
        raw_inputs = entry.get('inputs', [])
        if not isinstance(raw_inputs, list):
            raise _Invalid("'inputs' is a %s, not a list" % type(raw_inputs).__name__)
        inputs = [_output_of(nodes, *_entry_indices(e, 'input %d' % k), 'input %d' % k, i)
                  for k, e in enumerate(raw_inputs)]
        raw_subgraphs = entry.get('subgraphs', [])
        if not isinstance(raw_subgraphs, list):
            raise _Invalid("'subgraphs' is a %s, not a list" % type(raw_subgraphs).__name__)
        if op == 'null':
            if inputs or raw_subgraphs:
                raise _Invalid('a variable takes no inputs or subgraphs')
            return _variable_node(name, attrs)
        try:
            spec = registry.get(op)
        except MXNetError:
            raise _Invalid('operator %s is not registered' % _shown(op)) from None
        return self._operator_node(i, op, name, attrs, inputs, spec, raw_subgraphs)

    def _operator_node(self, i, op, name, attrs, inputs, spec, raw_subgraphs):
        if raw_subgraphs and self.depth >= _MAX_SUBGRAPH_DEPTH:
            raise _Invalid('subgraphs nest deeper than %d levels' % _MAX_SUBGRAPH_DEPTH)
        subgraphs = [_GraphReader('%s: subgraph %d of node %d %s' % (self.where, k, i, _shown(name)),
                                  self.symbol_class, self.depth + 1).symbol(sub)
                     for k, sub in enumerate(raw_subgraphs)]
        try:
            params = _op_params(spec, attrs, subgraphs)
            node = _Node(op, name, attrs, inputs, spec, params, subgraphs)
            expected = spec.count_inputs(params)
            node.num_outputs()
        except _NODE_ERRORS as err:
            raise _Invalid(str(err)) from None
        if len(inputs) != expected:
            names = node.spec.input_names(params, expected if spec.variadic else None)
            raise _Invalid('takes %d input%s (%s), the file gives %d'
                           % (expected, '' if expected == 1 else 's', ', '.join(names), len(inputs)))
        return node


def _described(entry):
    """`` 'name' (op)`` of a JSON node, as far as it has them."""
    if not isinstance(entry, dict):
        return ''
    name, op = entry.get('name'), entry.get('op')
    shown_op = ' (%s)' % (op if len(op) <= _SHOWN_NAME else op[:_SHOWN_NAME] + '...') if isinstance(op, str) else ''
    return '%s%s' % ('' if name is None else ' ' + _shown(name), shown_op)


def read_json(text, where, symbol_class):
    """The graph of JSON ``text`` as a ``symbol_class`` (``Symbol``; its subgraphs too), checked
    whole; errors start with ``where``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode('utf-8')
        except UnicodeDecodeError as err:
            raise MXNetError('%s: not UTF-8 text: %s' % (where, err)) from None
    if not isinstance(text, str):
        raise TypeError('%s: expected JSON text, got %s' % (where, type(text).__name__))
    try:
        graph = json.loads(text)
    except ValueError as err:
        raise MXNetError('%s: not valid JSON: %s' % (where, err)) from None
    except RecursionError:
        raise MXNetError('%s: JSON nested too deeply' % where) from None
    sym = _GraphReader(where, symbol_class).symbol(graph)
    if is_np_shape() and not _written_with_np_shape(graph):
        _shapes_to_numpy_semantics(sym)
    return sym


def _written_with_np_shape(graph):
    flag = graph.get('attrs', {}).get('is_np_shape') if isinstance(graph.get('attrs'), dict) else None
    return isinstance(flag, list) and len(flag) == 2 and flag[1] in (1, '1')


def _shapes_to_numpy_semantics(sym):
    """A file written without NumPy shape semantics read with them on, as MXNet does: the
    variables' ``__shape__`` become NumPy shapes, unknown dimensions 0 -> -1 and the unknown
    shape ``()`` -> ``None``, written as MXNet writes them (``[128,-1]``)."""
    for node in sym._nodes():
        text = node.attrs.get('__shape__') if node.is_variable else None
        if text is None or text == 'None':
            continue
        shape = registry.SHAPE.parse(text)
        node.attrs['__shape__'] = ('[%s]' % ','.join(str(-1 if d == 0 else d) for d in shape)) if shape else 'None'


def read_file(fname, symbol_class):
    """The graph saved in JSON file ``fname`` (checked as :func:`read_json` does; errors
    name the file)."""
    with _fileio.open_for_read(fname) as f:
        data = f.read()
    return read_json(data, 'symbol file %s' % fname, symbol_class)
