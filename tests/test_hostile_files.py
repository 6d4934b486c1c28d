"""Symbol files are data: nothing written in one runs, whatever its names and attributes hold.

Each hostile graph is loaded and run through every path that takes a model file
(``load_json`` + ``eval``, ``Executor`` with monitors and mirroring, ``SymbolBlock.imports``
hybridized, ``mx.model.load_checkpoint`` with ``Module``). A payload that ran would create a
marker file; every case checks that it does not exist and that the graph either computes
the right values or raises ``MXNetError``.
"""
import json
import os
import random
import re

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.symbol.codegen import check_source
from neomx.symbol.graph import compiled


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / 'payload-ran'
    yield path
    assert not path.exists(), 'a string from a symbol file ran as code'


def _payload(marker):
    return "__import__('pathlib').Path(%r).touch()" % str(marker)


def _injections(marker):
    """Names crafted to break out of a generated line, a comment or a string literal."""
    code = _payload(marker)
    return ["relu\n    %s\n#" % code,
            "relu\r    %s\r#" % code,
            "relu\u2028    %s" % code,
            "relu\\\n    %s" % code,
            "x')\n    %s\n#" % code,
            'x")\n    %s\n#' % code,
            "x'''\n    %s\n'''" % code,
            "x\x0c\n    %s\n" % code,
            "%s\n" % code,
            "x\x00\n    %s" % code]


def _relu_plus_graph(variable, relu, add, attrs=None):
    """JSON of ``relu(x) + x`` with these node names (and attributes on the variable)."""
    x = mx.sym.var('x')
    graph = json.loads(mx.sym.elemwise_add(mx.sym.relu(x, name='r'), x, name='a').tojson())
    graph['nodes'][0]['name'] = variable
    graph['nodes'][1]['name'] = relu
    graph['nodes'][2]['name'] = add
    if attrs:
        graph['nodes'][0]['attrs'] = attrs
    return json.dumps(graph)


_X = np.array([[-1.5, 0.0, 2.0], [3.0, -0.25, 1.0]], dtype=np.float32)
_WANT = np.maximum(_X, 0) + _X


def _run_eval(text, variable):
    sym = mx.sym.load_json(text)
    assert sym.list_inputs() == [variable]
    out = sym.eval(**{variable: mx.nd.array(_X)})[0]     # by keyword: any string may be a name
    np.testing.assert_allclose(out.asnumpy(), _WANT)


def _run_monitored_and_mirrored(text, variable, monkeypatch):
    sym = mx.sym.load_json(text)
    seen = []
    exe = sym.bind(mx.current_context(), {variable: mx.nd.array(_X)}, args_grad={variable: mx.nd.zeros(_X.shape)})
    exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(_X.shape))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), _WANT)
    relu_node = json.loads(text)['nodes'][1]['name']
    assert any(n == relu_node + '_output' or n == (relu_node + '_output').encode() for n in seen)
    monkeypatch.setenv('MXNET_BACKWARD_DO_MIRROR', '1')
    graph = compiled(mx.sym.load_json(text), mx.current_context(), mirror=True)
    np.testing.assert_allclose(graph([mx.nd.array(_X)._t])[0].detach().cpu().numpy(), _WANT)


def _save_model(tmp_path, text):
    prefix = str(tmp_path / 'model')
    with open(prefix + '-symbol.json', 'w', encoding='utf-8') as f:
        f.write(text)
    mx.nd.save(prefix + '-0000.params', {'arg:unused': mx.nd.zeros(1)})
    return prefix


def _run_imports_and_checkpoint(tmp_path, text, variable):
    prefix = _save_model(tmp_path, text)
    block = mx.gluon.SymbolBlock.imports(prefix + '-symbol.json', [variable])
    block.hybridize()
    np.testing.assert_allclose(block(mx.nd.array(_X)).asnumpy(), _WANT)
    sym, args, aux = mx.model.load_checkpoint(prefix, 0)
    mod = mx.mod.Module(sym, data_names=[variable], label_names=None)
    mod.bind([(variable, _X.shape)], for_training=False)
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.array(_X)]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), _WANT)


def test_node_names_cannot_run_code(marker, tmp_path, monkeypatch):
    for k, name in enumerate(_injections(marker)):
        text = _relu_plus_graph(name + 'x', name, name + 'a')
        _run_eval(text, name + 'x')
        _run_monitored_and_mirrored(text, name + 'x', monkeypatch)
        monkeypatch.delenv('MXNET_BACKWARD_DO_MIRROR')
        case = tmp_path / str(k)
        case.mkdir()
        _run_imports_and_checkpoint(case, text, name + 'x')


def test_attribute_text_cannot_run_code(marker):
    """Crafted values in operator attributes are refused; on an operator without
    attributes and in annotations they stay data."""
    code = _payload(marker)
    for hostile in _injections(marker) + [code, '(%s,)' % code, '[%s]' % code]:
        x = mx.sym.var('x')
        for op_sym, key in ((mx.sym.Activation(x, act_type='relu', name='act'), 'act_type'),
                            (mx.sym.sum(x, axis=1, name='s'), 'axis'),
                            (mx.sym.Reshape(x, shape=(3, 2), name='r'), 'shape'),
                            (mx.sym._plus_scalar(x, scalar=1.0, name='p'), 'scalar')):
            graph = json.loads(op_sym.tojson())
            graph['nodes'][1]['attrs'][key] = hostile
            with pytest.raises(MXNetError, match=r"node 1 '\w+' \(\w+\): .*'%s'" % key):
                mx.sym.load_json(json.dumps(graph))
        graph = json.loads(mx.sym.relu(x, name='r').tojson())
        graph['nodes'][1]['attrs'] = {hostile: hostile, '__%s__' % hostile: hostile}
        graph['nodes'][0]['attrs'] = {'__init__': hostile, '__layout__': hostile}
        sym = mx.sym.load_json(json.dumps(graph))
        assert sym.attr_dict()['r'][hostile] == hostile
        np.testing.assert_allclose(sym.eval(x=mx.nd.array(_X))[0].asnumpy(), np.maximum(_X, 0))


# Pieces that are special somewhere: in Python source, comments, strings, JSON, names.
_PIECES = ['\n', '\r', '\r\n', '\u2028', '\u2029', '\x0b', '\x0c', '\x85', '\t', '\x00', '\x1b',
           '#', "'", '"', '"""', "'''", '\\', '\\n', '(', ')', ':', ';', ',', '=', '.', '[', ']',
           '{', '}', '%s', '%r', '{0}', ' ', '    ', 'import os', 'def', 'class', 'lambda', 'return',
           'None', 'True', 'if', 'for', 'yield', 'await', 'graph', 'monitor', 'recompute', 'op0', 'v0',
           'x0', 'c0', 'seg0', '__builtins__', '__class__', '__import__', '__init__', '__dict__',
           '__shape__', '__dtype__', 'ctx_group', 'é', 'ß', '漢字', '\U0001F600', '\u202e', '\ufeff',
           '\udcff', 'null', '$', '_output', 'x']


def _hostile_name(rng, marker):
    if rng.random() < 0.1:
        return rng.choice(_injections(marker))
    if rng.random() < 0.05:
        return rng.choice(_PIECES) * rng.randint(1000, 20000)     # very long
    return ''.join(rng.choice(_PIECES) for _ in range(rng.randint(0, 8)))


def test_random_names_and_attributes(marker):
    """A few hundred graphs with names and annotation attributes drawn from pieces that mean
    something in Python, JSON or Unicode (a fixed seed): each runs and gives relu(x) + x."""
    rng = random.Random(20261125)
    for _ in range(300):
        names = [_hostile_name(rng, marker) for _ in range(3)]
        variable = names[0] + '_var'         # distinct from the operator nodes' names
        attrs = {'__%s__' % _hostile_name(rng, marker): _hostile_name(rng, marker)
                 for _ in range(rng.randint(0, 3))}
        attrs.pop('__shape__', None)
        attrs.pop('__dtype__', None)
        text = _relu_plus_graph(variable, names[1], names[2], attrs)
        sym = mx.sym.load_json(text)
        # as MXNet 1.9.1, an operator node without a name has outputs named by the suffix alone
        assert sym.list_outputs() == [names[2] + '_output' if names[2] else 'output']
        assert mx.sym.load_json(sym.tojson()).tojson() == sym.tojson()
        _run_eval(text, variable)


def test_random_operator_attribute_values(marker):
    """Random text in typed operator attributes either parses to a valid value or raises
    MXNetError naming the node, never another exception."""
    rng = random.Random(7)
    x = mx.sym.var('x')
    templates = [(mx.sym.sum(x, axis=1, name='s'), 'axis'), (mx.sym.Reshape(x, shape=(3, 2), name='r'), 'shape'),
                 (mx.sym._plus_scalar(x, scalar=1.0, name='p'), 'scalar'),
                 (mx.sym.clip(x, a_min=0, a_max=1, name='c'), 'a_max'),
                 (mx.sym.Activation(x, act_type='relu', name='a'), 'act_type')]
    numbers = ['1', '-2', '0', '(1,)', '(2, 3)', '1e3', '0x10', '1_000', 'True', 'nan', '-inf', '()']
    outcomes = {'loaded': 0, 'refused': 0}
    for _ in range(300):
        sym, key = rng.choice(templates)
        if rng.random() < 0.4:
            value = rng.choice(numbers + ['relu', 'tanh'])
        else:
            value = ''.join(rng.choice(_PIECES + numbers) for _ in range(rng.randint(1, 4)))
        graph = json.loads(sym.tojson())
        graph['nodes'][1]['attrs'][key] = value
        try:
            loaded = mx.sym.load_json(json.dumps(graph))
        except MXNetError as err:
            assert str(err).startswith('load_json: node 1 '), err
            outcomes['refused'] += 1
            continue
        outcomes['loaded'] += 1
        try:
            loaded.eval(x=mx.nd.array(_X))
        except MXNetError:
            pass
    assert outcomes['loaded'] > 10 and outcomes['refused'] > 10, outcomes


@pytest.mark.parametrize('text', ['-' * 200000 + '1', '(' * 100 + '1' + ')' * 100, '-' * 60000 + '1',
                                  '(' + '1, ' * 30000 + ')', '1' * 100000, '[' * 5000])
def test_huge_or_deep_attribute_text_is_refused_quickly(text):
    graph = json.loads(mx.sym.Reshape(mx.sym.var('x'), shape=(3, 2), name='r').tojson())
    graph['nodes'][1]['attrs']['shape'] = text
    with pytest.raises(MXNetError, match="node 1 'r' \\(Reshape\\): .*'shape'"):
        mx.sym.load_json(json.dumps(graph))


def test_generated_source_holds_only_generated_tokens():
    sym = mx.sym.load_json(_relu_plus_graph('d"\'\\\n#', 'r\u2028#', 'a\n'))
    graph = compiled(sym, mx.cpu(), monitor='all')
    check_source(graph.source)
    assert '#' not in graph.source and "'" not in graph.source and '"' not in graph.source
    assert graph.calls() == [('relu', 'r\u2028#'), ('elemwise_add', 'a\n')]
    assert "# relu 'r\\u2028#'" in graph.listing()
    for source in ['def graph(x0):\n    return (x0.__class__,)\n', "def graph(x0):\n    return ('a',)\n",
                   'def graph(x0):\n    return (x0,)  # note\n', 'def graph(x0):\n    return (os,)\n',
                   'def graph(x0):\n    return (x0 + 1.5,)\n', 'def graph(x0):\n    return (x0 @ x0,)\n',
                   'def graph(x0):\n    return (lambda: x0,)\n', 'def graph(x0):\n    return (x0,); x0.y\n']:
        with pytest.raises(MXNetError, match='unexpected token'):
            check_source(source)


def test_failing_operator_is_named_without_running_its_name():
    graph = json.loads(mx.sym.one_hot(mx.sym.var('x'), depth=-3, name='h').tojson())
    graph['nodes'][1]['name'] = "h\n    raise SystemExit\n#"
    sym = mx.sym.load_json(json.dumps(graph))
    with pytest.raises(MXNetError, match=r"graph execution failed in one_hot h\n    raise SystemExit\n#: "):
        compiled(sym, mx.cpu())([mx.nd.array([1.0, 0.0])._t])


_DYNAMIC_CODE = re.compile(r'(?<![\w.])(?<!def )(exec|eval|compile|__import__)\s*\(')


def test_no_exec_or_eval_outside_the_graph_compiler():
    """The package's one ``exec`` (and ``compile``) runs text that ``check_source`` has passed."""
    root = os.path.dirname(mx.__file__)
    found = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith('.py'):
                with open(os.path.join(folder, name), encoding='utf-8') as f:
                    for number, line in enumerate(f, 1):
                        if _DYNAMIC_CODE.search(line.split('#')[0]):
                            found.append('%s:%d' % (os.path.relpath(os.path.join(folder, name), root), number))
    assert found == [os.path.join('symbol', 'graph.py') + ':%d' % _exec_line()], found


def _exec_line():
    import inspect
    from neomx.symbol.graph import CompiledGraph
    lines, start = inspect.getsourcelines(CompiledGraph.fresh_fn)
    return start + next(i for i, line in enumerate(lines) if 'exec(' in line)
