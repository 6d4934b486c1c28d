"""Malformed Symbol JSON fails when it is loaded, with MXNetError naming the node at fault.

Every loading path is covered: ``mx.sym.load_json``, ``mx.sym.load``, ``SymbolBlock.imports``,
``mx.model.load_checkpoint`` and ``Module.load``.
"""
import copy
import json

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _fc_graph():
    """JSON object of ``FullyConnected(x, num_hidden=2, name='fc')``: nodes x, fc_weight,
    fc_bias, fc."""
    return json.loads(mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, name='fc').tojson())


def _with(change):
    graph = _fc_graph()
    change(graph)
    return json.dumps(graph)


def _set(path, value):
    def change(graph):
        target = graph
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(path):
    def change(graph):
        target = graph
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


FC = "node 3 'fc' \\(FullyConnected\\)"
CASES = {
    # not a graph at all
    'not json': ('{"nodes": [', 'not valid JSON'),
    'array': ('[1, 2]', 'the graph is a list, not an object'),
    'no nodes': (_with(_delete(['nodes'])), "the graph has no list of nodes \\('nodes'\\)$"),
    'nodes not a list': (_with(_set(['nodes'], {'0': 1})), 'the graph has no list of nodes'),
    'empty nodes': (_with(_set(['nodes'], [])), 'the graph has no list of nodes'),
    'no heads': (_with(_delete(['heads'])), "the graph has no list of outputs \\('heads'\\)$"),
    'empty heads': (_with(_set(['heads'], [])), 'the graph has no list of outputs'),
    'deep nesting': ('[' * 100000 + ']' * 100000, 'JSON nested too deeply'),
    # nodes of the wrong shape
    'node not object': (_with(_set(['nodes', 1], 'fc_weight')), 'node 1: is a str, not an object'),
    'no op': (_with(_delete(['nodes', 3, 'op'])), "node 3 'fc': needs a string 'op' and 'name'"),
    'name not string': (_with(_set(['nodes', 3, 'name'], 7)), "node 3 7 \\(FullyConnected\\): needs a string 'op' and 'name'"),
    'attrs not object': (_with(_set(['nodes', 3, 'attrs'], ['num_hidden'])), FC + ": 'attrs' is a list"),
    'attr value list': (_with(_set(['nodes', 3, 'attrs', 'num_hidden'], [2])), FC + ": attribute 'num_hidden' is a list"),
    'inputs not list': (_with(_set(['nodes', 3, 'inputs'], 0)), FC + ": 'inputs' is a int, not a list"),
    'entry too short': (_with(_set(['nodes', 3, 'inputs', 0], [0])), FC + ': input 0 is \\[0\\], not \\[node, output'),
    'entry too long': (_with(_set(['nodes', 3, 'inputs', 0], [0, 0, 0, 0])), FC + ': input 0 is'),
    'entry of strings': (_with(_set(['nodes', 3, 'inputs', 1], ['1', 0, 0])), FC + ': input 1 is'),
    'entry of floats': (_with(_set(['nodes', 3, 'inputs', 1], [1.0, 0, 0])), FC + ': input 1 is'),
    'entry of booleans': (_with(_set(['nodes', 3, 'inputs', 1], [True, 0, 0])), FC + ': input 1 is'),
    # references
    'negative node': (_with(_set(['nodes', 3, 'inputs', 0], [-1, 0, 0])),
                      FC + ': input 0 refers to node -1, which is not a node index'),
    'self reference': (_with(_set(['nodes', 3, 'inputs', 2], [3, 0, 0])),
                       FC + ': input 2 refers to node 3, which does not come before node 3 \\(a cycle or a forward'),
    'forward reference': (_with(_set(['nodes', 1, 'inputs'], [[3, 0, 0]])),
                          "node 1 'fc_weight' \\(null\\): input 0 refers to node 3, which does not come before node 1"),
    'node out of range': (_with(_set(['nodes', 3, 'inputs', 0], [40, 0, 0])), FC + ': input 0 refers to node 40'),
    'output out of range': (_with(_set(['nodes', 3, 'inputs', 0], [0, 1, 0])),
                            FC + ": input 0 refers to output 1 of node 0 'x' \\(null\\), which has 1 output$"),
    'negative output': (_with(_set(['nodes', 3, 'inputs', 0], [0, -1, 0])), FC + ': input 0 refers to output -1'),
    'head out of range': (_with(_set(['heads'], [[4, 0, 0]])),
                          'head 0 refers to node 4, out of range \\(the graph has 4 nodes\\)'),
    'head output out of range': (_with(_set(['heads'], [[3, 1, 0]])),
                                 "head 0 refers to output 1 of node 3 'fc' \\(FullyConnected\\), which has 1 output"),
    'head malformed': (_with(_set(['heads'], [3])), 'head 0 is 3, not \\[node, output'),
    'variable with inputs': (_with(_set(['nodes', 1, 'inputs'], [[0, 0, 0]])),
                             "node 1 'fc_weight' \\(null\\): a variable takes no inputs"),
    # operators
    'unknown op': (_with(_set(['nodes', 3, 'op'], 'NoSuchOp')),
                   "node 3 'fc' \\(NoSuchOp\\): operator 'NoSuchOp' is not registered$"),
    'long unknown op': (_with(_set(['nodes', 3, 'op'], 'Op' * 50000)),
                        "node 3 'fc' \\((Op){30}\\.\\.\\.\\): operator '(Op){29}O\\.\\.\\. is not registered$"),
    'missing input': (_with(_set(['nodes', 3, 'inputs'], [[0, 0, 0], [1, 0, 0]])),
                      FC + ': takes 3 inputs \\(data, weight, bias\\), the file gives 2'),
    'extra input': (_with(_set(['nodes', 3, 'inputs'], [[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 0, 0]])),
                    FC + ': takes 3 inputs \\(data, weight, bias\\), the file gives 4'),
    'missing required attribute': (_with(_delete(['nodes', 3, 'attrs', 'num_hidden'])),
                                   FC + ": FullyConnected: required argument 'num_hidden' is missing"),
    'bad attribute value': (_with(_set(['nodes', 3, 'attrs', 'num_hidden'], 'two')),
                            FC + ": FullyConnected: invalid value 'two' for argument 'num_hidden'"),
    'unknown attribute': (_with(_set(['nodes', 3, 'attrs', 'num_hiden'], '2')),
                          FC + ": FullyConnected: cannot find argument 'num_hiden'"),
    # annotations of variables
    'bad __shape__': (_with(_set(['nodes', 0, 'attrs'], {'__shape__': 'abc'})),
                      "node 0 'x' \\(null\\): __shape__ 'abc' is not a shape"),
    'negative __shape__': (_with(_set(['nodes', 0, 'attrs'], {'__shape__': '(2, -5)'})), "node 0 'x' \\(null\\): __shape__ '\\(2, -5\\)' has a negative dimension"),
    'bad __dtype__': (_with(_set(['nodes', 0, 'attrs'], {'__dtype__': '99'})),
                      "node 0 'x' \\(null\\): __dtype__ '99' is not a type flag"),
    'huge __dtype__': (_with(_set(['nodes', 0, 'attrs'], {'__dtype__': '9' * 5000})), "node 0 'x' \\(null\\): __dtype__ '9{59}\\.\\.\\. is not a type flag"),
    'bad __storage_type__': (_with(_set(['nodes', 0, 'attrs'], {'__storage_type__': 'csr'})),
                             "node 0 'x' \\(null\\): __storage_type__ 'csr' is not a type flag"),
    'bad __lr_mult__': (_with(_set(['nodes', 1, 'attrs'], {'__lr_mult__': 'fast'})),
                        "node 1 'fc_weight' \\(null\\): __lr_mult__ 'fast' is not a number"),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_malformed_json_is_refused_naming_the_node(case):
    text, message = CASES[case]
    with pytest.raises(MXNetError, match='^load_json: ' + message):
        mx.sym.load_json(text)


def test_the_unmodified_graph_loads():
    """The cases above differ from a valid graph only by their fault."""
    sym = mx.sym.load_json(json.dumps(_fc_graph()))
    out = sym.eval(x=mx.nd.ones((1, 3)), fc_weight=mx.nd.ones((2, 3)), fc_bias=mx.nd.array([1, 2]))[0]
    np.testing.assert_allclose(out.asnumpy(), [[4, 5]])


def test_long_names_are_shortened_in_messages():
    graph = _fc_graph()
    graph['nodes'][3]['name'] = 'n' * 100000
    graph['nodes'][3]['inputs'] = graph['nodes'][3]['inputs'][:2]
    with pytest.raises(MXNetError) as info:
        mx.sym.load_json(json.dumps(graph))
    assert len(str(info.value)) < 300 and "node 3 'nnnn" in str(info.value)


def test_variadic_operators_check_their_count():
    x = mx.sym.var('x')
    graph = json.loads(mx.sym.concat(x, x, x, dim=0, name='c').tojson())
    graph['nodes'][1]['inputs'] = graph['nodes'][1]['inputs'][:2]
    with pytest.raises(MXNetError, match="node 1 'c' \\(Concat\\): takes 3 inputs \\(arg0, arg1, arg2\\), "
                                         "the file gives 2"):
        mx.sym.load_json(json.dumps(graph))
    # UpSampling's bilinear weight and multi_sgd_update's gradients count besides num_args
    bilinear = mx.sym.UpSampling(x, mx.sym.var('w'), scale=2, sample_type='bilinear', num_filter=1, num_args=1,
                                 name='u')
    assert mx.sym.load_json(bilinear.tojson()).list_arguments() == ['x', 'w']
    graph = json.loads(bilinear.tojson())
    graph['nodes'][2]['inputs'] = graph['nodes'][2]['inputs'][:1]
    with pytest.raises(MXNetError, match="node 2 'u' \\(UpSampling\\): takes 2 inputs"):
        mx.sym.load_json(json.dumps(graph))
    update = mx.sym.multi_sgd_update(x, x, x, x, lrs=(0.1, 0.1), wds=(0, 0), num_weights=2, name='m')
    assert mx.sym.load_json(update.tojson()).tojson() == update.tojson()


def test_subgraph_faults_name_the_path():
    def body(data, states):
        return data * 2, [states[0] + data]
    outs, states = mx.sym.contrib.foreach(body, mx.sym.var('seq'), [mx.sym.var('init')])
    graph = json.loads(mx.sym.Group([outs] + states).tojson())
    loop = next(i for i, n in enumerate(graph['nodes']) if n['op'] == '_foreach')
    sub = graph['nodes'][loop]['subgraphs'][0]
    bad = copy.deepcopy(graph)
    bad['nodes'][loop]['subgraphs'][0]['heads'] = [[len(sub['nodes']), 0, 0]]
    with pytest.raises(MXNetError, match="^load_json: subgraph 0 of node %d '[^']+': head 0 refers to node %d"
                                         % (loop, len(sub['nodes']))):
        mx.sym.load_json(json.dumps(bad))
    nested = copy.deepcopy(graph)
    for _ in range(40):
        nested = {'nodes': [copy.deepcopy(n) for n in graph['nodes'][:loop]]
                  + [dict(graph['nodes'][loop], subgraphs=[nested])], 'heads': [[loop, 0, 0]]}
    with pytest.raises(MXNetError, match='subgraphs nest deeper than 32 levels'):
        mx.sym.load_json(json.dumps(nested))


def _write_model(tmp_path, text):
    prefix = str(tmp_path / 'net')
    with open(prefix + '-symbol.json', 'w', encoding='utf-8') as f:
        f.write(text)
    mx.nd.save(prefix + '-0000.params', {'arg:fc_weight': mx.nd.ones((2, 3)), 'arg:fc_bias': mx.nd.ones(2)})
    return prefix


@pytest.mark.parametrize('case', ['self reference', 'missing input', 'head out of range', 'bad __dtype__'])
def test_every_loader_refuses_at_load_time(tmp_path, case):
    text, message = CASES[case]
    prefix = _write_model(tmp_path, text)
    where = '^symbol file %s-symbol.json: ' % prefix
    with pytest.raises(MXNetError, match=where + message):
        mx.sym.load(prefix + '-symbol.json')
    with pytest.raises(MXNetError, match=where + message):
        mx.gluon.SymbolBlock.imports(prefix + '-symbol.json', ['x'], prefix + '-0000.params')
    with pytest.raises(MXNetError, match=where + message):
        mx.model.load_checkpoint(prefix, 0)
    with pytest.raises(MXNetError, match=where + message):
        mx.mod.Module.load(prefix, 0, data_names=['x'], label_names=None)


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / 'bad-symbol.json'
    path.write_bytes(b'{"nodes": "\xff\xfe"}')
    with pytest.raises(MXNetError, match='not UTF-8 text'):
        mx.sym.load(str(path))
