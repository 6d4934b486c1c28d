"""Lower layers never import upper ones: the operator registry (``neomx/operator/``) and
autograd import neither NDArray, Symbol nor Gluon, at import time or inside functions; what
they need from above is registered by those layers (``neomx.upper_layers``)."""
import ast
import os

import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx import upper_layers

PACKAGE = os.path.dirname(os.path.abspath(mx.__file__))
ABOVE_OPERATORS = ('ndarray', 'symbol', 'gluon', 'module', 'model', 'kvstore', 'io', 'contrib', 'rnn')


def _imported_modules(path, package):
    """Every module an ``import`` statement of the file names (anywhere in it), absolute."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            parts = package.split('.')
            anchor = parts[:len(parts) - node.level + 1] if node.level else []   # '..' is the parent
            base = '.'.join(anchor + ([node.module] if node.module else []))
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, base + '.' + alias.name


def test_operators_import_nothing_from_the_layers_above():
    folder = os.path.join(PACKAGE, 'operator')
    bad = []
    for name in sorted(os.listdir(folder)):
        if name.endswith('.py'):
            for line, module in _imported_modules(os.path.join(folder, name), 'neomx.operator'):
                if module.split('.')[:2] in (['neomx', above] for above in ABOVE_OPERATORS):
                    bad.append('%s:%d imports %s' % (name, line, module))
    assert not bad, bad


def test_autograd_imports_nothing_from_the_layers_above():
    bad = [(line, module) for line, module in _imported_modules(os.path.join(PACKAGE, 'autograd.py'), 'neomx')
           if module.split('.')[:2] in (['neomx', above] for above in ABOVE_OPERATORS)]
    assert not bad, bad


def test_autograd_hands_user_code_ndarrays_through_the_registration():
    class Double(mx.autograd.Function):
        def forward(self, x):
            assert isinstance(x, mx.nd.NDArray)
            return x * 2

        def backward(self, dy):
            assert isinstance(dy, mx.nd.NDArray)
            return dy * 2

    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    assert isinstance(x.grad, mx.nd.NDArray)
    with mx.autograd.record():
        y = Double()(x)
    assert isinstance(y, mx.nd.NDArray)
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]
    with mx.autograd.record():
        z = (x * x).sum()
    dx, = mx.autograd.grad(z, [x])
    assert isinstance(dx, mx.nd.NDArray) and dx.asnumpy().tolist() == [2.0, 4.0]


def _package_imports():
    """{top-level part of neomx: the other parts its files import, anywhere in them}."""
    edges = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if not name.endswith('.py'):
                continue
            path = os.path.join(folder, name)
            parts = ['neomx'] + os.path.relpath(path, PACKAGE)[:-3].split(os.sep)
            package = '.'.join(parts[:-1] if name != '__init__.py' else parts[:-1])
            part = parts[1] if name != '__init__.py' or len(parts) > 2 else ''
            for _, module in _imported_modules(path, package):
                pieces = module.split('.')
                if pieces[0] == 'neomx' and len(pieces) > 1 and pieces[1] != part and part:
                    if os.path.exists(os.path.join(PACKAGE, pieces[1])) or \
                            os.path.exists(os.path.join(PACKAGE, pieces[1] + '.py')):
                        edges.setdefault(part.replace('.py', ''), set()).add(pieces[1])
    return edges


def test_no_two_parts_of_neomx_import_each_other():
    edges = _package_imports()
    both_ways = sorted((a, b) for a, targets in edges.items() for b in targets
                       if a < b and a in edges.get(b, ()))
    assert not both_ways, both_ways
    assert 'operator' in edges['ndarray'] and 'ndarray' in edges['gluon']     # the scan sees imports


def test_the_import_scanner_sees_function_level_and_relative_imports(tmp_path):
    path = tmp_path / 'probe.py'
    path.write_text('from .. import autograd\n\ndef f():\n    from ..symbol.graph import compiled\n'
                    '    from .. import ndarray\n')
    found = [m for _, m in _imported_modules(str(path), 'neomx.operator')]
    assert 'neomx.symbol.graph' in found and 'neomx.ndarray' in found and 'neomx.autograd' in found


def test_what_the_layers_above_register_and_a_missing_one_is_named(monkeypatch):
    assert upper_layers.get('array_from_tensor') is mx.nd.ndarray._new
    assert upper_layers.get('custom_symbol') is mx.sym.Custom
    monkeypatch.setattr(upper_layers, '_REGISTERED', {})
    with pytest.raises(MXNetError, match='array_from_tensor is needed from neomx.ndarray'):
        upper_layers.get('array_from_tensor')
