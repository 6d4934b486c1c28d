"""Common-subexpression elimination over Symbol graphs (MXNet's MXNET_ELIMINATE_COMMON_EXPR).

Executors run the graph with operator nodes merged where two compute the same thing: the
same operator with the same attributes on the same inputs. As MXNet does, nodes whose
result is not a function of their inputs are never merged -- random operators, Dropout,
RNN (its dropout), custom operators (user code) -- nor those that update their inputs
(BatchNorm's running statistics) or run subgraphs. An output that ends up given twice is
given again through a ``_copy``, so that the executor's outputs stay distinct arrays.
``Executor.get_optimized_symbol`` shows the result.
"""
import os

from ..operator import registry
from .nodes import _Node

__all__ = ['elimination_requested', 'eliminate_common_expr']

# Operators whose outputs are not a function of their inputs and attributes alone.
_NOT_FUNCTIONS = frozenset(('Dropout', 'RNN', 'Custom', '_shuffle'))
_RANDOM_MODULE = 'neomx.operator.random'


def elimination_requested():
    """``MXNET_ELIMINATE_COMMON_EXPR`` (on unless ``'0'``, as in MXNet 1.9.1), read at bind time."""
    return os.environ.get('MXNET_ELIMINATE_COMMON_EXPR', '1') != '0'


def _mergeable(node):
    spec = node.spec
    return not (spec.name in _NOT_FUNCTIONS or getattr(spec.impl, '__module__', None) == _RANDOM_MODULE
                or node.subgraphs or node.mutated_inputs())


def eliminate_common_expr(sym):
    """``sym`` with its common subexpressions merged, computed once per Symbol; ``sym``
    itself when nothing merges and no output repeats."""
    cached = sym._cache.get('common_expr')
    if cached is None:
        cached = sym._cache['common_expr'] = _eliminate(sym)
    return cached


def _eliminate(sym):
    kept = {}           # node -> the node standing for it (itself, a copy over merged inputs, or its twin)
    by_key = {}         # (op, attributes, inputs) -> node
    merged = False
    for node in sym._nodes():
        if node.is_variable:
            kept[node] = node
            continue
        inputs = tuple((kept[child], i) for child, i in node.inputs)
        key = (node.spec.name, tuple(sorted(node.attrs.items())), tuple((id(c), i) for c, i in inputs))
        if _mergeable(node) and key in by_key:
            kept[node] = by_key[key]
            merged = True
            continue
        kept[node] = node if inputs == node.inputs else _Node(node.op, node.name, dict(node.attrs), inputs,
                                                               node.spec, node.params, node.subgraphs)
        if _mergeable(node):
            by_key[key] = kept[node]
    heads = [(kept[node], i) for node, i in sym._heads]
    repeated = len(set(heads)) != len(heads)
    if not merged and not repeated:
        return sym
    return type(sym)(_distinct_outputs(heads))


def _distinct_outputs(heads):
    """The outputs with each repeat of an output given through a new ``_copy`` node."""
    copy = registry.get('_copy')
    seen, distinct = set(), []
    for node, i in heads:
        if (node, i) in seen:
            copied = _Node('_copy', '%s_copy%d' % (node.name, len(distinct)), {}, [(node, i)], copy,
                           copy.parse_attrs({}))
            distinct.append((copied, 0))
        else:
            seen.add((node, i))
            distinct.append((node, i))
    return distinct
