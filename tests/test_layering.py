"""Lower layers never import upper ones: the operator registry (``neomx/operator/``) imports
neither NDArray, Symbol nor Gluon, at import time or inside functions; what its operators
need from above is registered by those layers (``neomx.operator.upper_layers``)."""
import ast
import os

import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.operator import upper_layers

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
    with pytest.raises(MXNetError, match='array_from_tensor from neomx.ndarray'):
        upper_layers.get('array_from_tensor')
