"""``mx.viz``: look at a Symbol's graph.

``print_summary`` prints a table of the layers (output shape, number of parameters, inputs);
``plot_network`` builds a ``graphviz.Digraph`` of the graph (the ``graphviz`` Python package
is needed, and the Graphviz binaries to render it to a file).
"""
import json
import re
import warnings

import numpy as np

from ._optional import require
from .symbol import Symbol

__all__ = ['print_summary', 'plot_network']

# Learned parameters; with the running statistics, the inputs hidden by ``hide_weights``.
_PARAM_SUFFIXES = ('_weight', '_bias', '_gamma', '_beta')
_WEIGHT_LIKE_SUFFIXES = _PARAM_SUFFIXES + ('_moving_var', '_moving_mean', '_running_var', '_running_mean')

_PALETTE = ('#8dd3c7', '#fb8072', '#ffffb3', '#bebada', '#80b1d3', '#fdb462', '#b3de69', '#fccde5')
_OP_COLORS = {'null': 0, 'Convolution': 1, 'FullyConnected': 1, 'Activation': 2, 'LeakyReLU': 2,
              'BatchNorm': 3, 'Pooling': 4, 'Concat': 5, 'Flatten': 5, 'Reshape': 5, 'Softmax': 6}
_OTHER_OP_COLOR = 7


def _check_symbol(symbol):
    if not isinstance(symbol, Symbol):
        raise TypeError('symbol must be a Symbol, got %s' % type(symbol).__name__)


def _nodes(symbol):
    """The graph's nodes as in its JSON (``op``, ``name``, ``attrs``, ``inputs``)."""
    return json.loads(symbol.tojson())['nodes']


def _by_entry(internals, values):
    """``{(node name, output index): value}`` from values listed per internal output."""
    table, seen = {}, {}
    for i, value in enumerate(values):
        node = internals[i].name
        index = seen.get(node, 0)
        seen[node] = index + 1
        table[(node, index)] = value
    return table


def _entry_shapes(symbol, shape):
    """Shape of every graph entry from the input shapes (None: whatever can be inferred alone).

    Raises
    ------
    ValueError
        When given input shapes do not determine every shape.
    """
    internals = symbol.get_internals()
    if shape is None:
        _, out_shapes, _ = internals.infer_shape_partial()
    else:
        _, out_shapes, _ = internals.infer_shape(**shape)
        if out_shapes is None:
            raise ValueError('Input shape is incomplete: %s' % (shape,))
    return _by_entry(internals, out_shapes)


def _entry_types(symbol, dtype):
    internals = symbol.get_internals()
    _, out_types, _ = internals.infer_type(**dtype)
    if out_types is None:
        raise ValueError('Input type is incomplete: %s' % (dtype,))
    return _by_entry(internals, out_types)


def _known_size(shape):
    """Number of elements of a fully known shape, else 0."""
    if not shape or any(d <= 0 for d in shape):
        return 0
    return int(np.prod(shape))


def _per_sample(shape):
    """A shape without its batch axis, as ``CxHxW`` text (empty when unknown)."""
    return 'x'.join(str(d) for d in shape[1:]) if shape else ''


# --------------------------------------------------------------- print_summary
def _is_input(node):
    """A variable fed with data: not a parameter, running statistic or label."""
    name = node['name']
    return node['op'] == 'null' and not name.endswith(_WEIGHT_LIKE_SUFFIXES) and not name.endswith('_label')


def _row(fields, stops):
    """Fields left-aligned at the column stops, each cut to fit before the next stop."""
    line = ''
    for field, stop in zip(fields, stops):
        line = (line + str(field))[:stop].ljust(stop)
    return line


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Print a table of the layers of ``symbol``: name (type), output shape, parameters, inputs.

    Parameters
    ----------
    symbol : Symbol
    shape : dict of str -> tuple, optional
        Input shapes; without them, shapes and parameter counts show only what the graph
        alone determines.
    line_length : int
        Width of the table.
    positions : sequence of float or int
        Where each of the four columns ends: fractions of ``line_length`` (or characters).

    Raises
    ------
    TypeError
        If ``symbol`` is not a Symbol.
    ValueError
        If ``shape`` does not determine every shape.
    """
    _check_symbol(symbol)
    shapes = _entry_shapes(symbol, shape)
    nodes = _nodes(symbol)
    stops = [int(line_length * p) for p in positions] if positions[-1] <= 1 else list(positions)
    shown = [node for node in nodes if node['op'] != 'null' or _is_input(node)]
    print('_' * line_length)
    print(_row(['Layer (type)', 'Output Shape', 'Param #', 'Previous Layer'], stops))
    print('=' * line_length)
    total = 0
    for i, node in enumerate(shown):
        inputs = [nodes[entry[0]] for entry in node['inputs']]
        params = sum(_known_size(shapes.get((n['name'], 0))) for n in inputs
                     if n['op'] == 'null' and n['name'].endswith(_PARAM_SUFFIXES))
        previous = [n['name'] for n in inputs if n['op'] != 'null' or _is_input(n)] or ['']
        out_shape = _per_sample(shapes.get((node['name'], 0))) if shape is not None else ''
        print(_row(['%s(%s)' % (node['name'], node['op']), out_shape, params, previous[0]], stops))
        for name in previous[1:]:
            print(_row(['', '', '', name], stops))
        print(('=' if i == len(shown) - 1 else '_') * line_length)
        total += params
    print('Total params: %d' % total)
    print('_' * line_length)


# ---------------------------------------------------------------- plot_network
def _numbers(text):
    """``'(3, 3)'`` -> ``'3x3'``."""
    return 'x'.join(re.findall(r'\d+', text))


def _node_label(node):
    """The text of a node: its operator's key settings, or its name."""
    op, attrs = node['op'], node.get('attrs', {})
    if op == 'Convolution':
        stride = _numbers(attrs['stride']) if 'stride' in attrs else '1'
        return 'Convolution\n%s/%s, %s' % (_numbers(attrs['kernel']), stride, attrs['num_filter'])
    if op == 'FullyConnected':
        return 'FullyConnected\n%s' % attrs['num_hidden']
    if op == 'Activation':
        return 'Activation\n%s' % attrs['act_type']
    if op == 'LeakyReLU':
        return 'LeakyReLU\n%s' % attrs.get('act_type', 'Leaky')
    if op == 'Pooling':
        kernel = _numbers(attrs['kernel']) if 'kernel' in attrs else '[]'
        stride = _numbers(attrs['stride']) if 'stride' in attrs else '1'
        return 'Pooling\n%s, %s/%s' % (attrs.get('pool_type', 'max'), kernel, stride)
    if op == 'Custom':
        return attrs['op_type']
    return node['name']


def _warn_repeated_names(nodes):
    names = [node['name'] for node in nodes]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        warnings.warn('There are multiple variables with the same name in your graph, this may result in '
                      'a cyclic graph. Repeated names: %s' % ','.join(repeated), RuntimeWarning)


def _edge_label(entry_name, shapes, types):
    label = _per_sample(shapes[entry_name]) if shapes is not None else ''
    if types is not None:
        label += '(%s)' % np.dtype(types[entry_name]).name
    return label


def plot_network(symbol, title='plot', save_format='pdf', shape=None, dtype=None, node_attrs=None,
                 hide_weights=True):
    """A Graphviz digraph of ``symbol``'s graph; edges point from each layer back to its inputs.

    Parameters
    ----------
    symbol : Symbol
    title : str
        Name of the graph (and of the rendered file).
    save_format : str
        Format ``render()`` writes (``'pdf'``, ``'png'``, ``'svg'``...).
    shape : dict of str -> tuple, optional
        Input shapes: edges are labelled with the per-sample shape they carry.
    dtype : dict of str -> dtype, optional
        Input types: edges are labelled with their type too.
    node_attrs : dict, optional
        Graphviz node attributes overriding the defaults (``{'fixedsize': 'false'}``).
    hide_weights : bool
        Leave out parameter and running-statistic inputs (``*_weight``, ``*_bias``,
        ``*_gamma``, ``*_beta``, ``*_moving_mean``...).

    Returns
    -------
    graphviz.Digraph
        Call ``render()`` or ``view()`` on it (needs the Graphviz binaries).

    Raises
    ------
    ImportError
        Without the ``graphviz`` Python package.
    """
    # The Graphviz binaries are needed too, to render.
    Digraph = require('graphviz', 'viz', 'mx.viz.plot_network').Digraph
    _check_symbol(symbol)
    shapes = _entry_shapes(symbol, shape) if shape is not None else None
    types = _entry_types(symbol, dtype) if dtype is not None else None
    nodes = _nodes(symbol)
    _warn_repeated_names(nodes)
    base_attrs = {'shape': 'box', 'fixedsize': 'true', 'width': '1.3', 'height': '0.8034', 'style': 'filled'}
    base_attrs.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        attrs = dict(base_attrs, fillcolor=_PALETTE[_OP_COLORS.get(node['op'], _OTHER_OP_COLOR)])
        if node['op'] == 'null':
            if hide_weights and node['name'].endswith(_WEIGHT_LIKE_SUFFIXES):
                hidden.add(node['name'])
                continue
            attrs['shape'] = 'oval'
        dot.node(name=node['name'], label=_node_label(node), **attrs)
    for node in nodes:
        for entry in node['inputs']:
            source = nodes[entry[0]]['name']
            if source not in hidden:
                label = _edge_label((source, entry[1]), shapes, types)
                dot.edge(tail_name=node['name'], head_name=source, label=label, dir='back', arrowtail='open')
    return dot
