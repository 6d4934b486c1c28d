"""Lower layers never import upper ones: the operator registry (``neomx/operator/``) and
autograd import neither NDArray, Symbol nor Gluon, at import time or inside functions; what
they need from above is registered by those layers (``neomx.upper_layers``). No two parts of
neomx import each other, no circle of files of any length exists inside them (imports inside
functions count), and no part uses another part's private members (``from ..x import _y``,
``x._y``, a private module ``x._m``); neomx's own private modules (``neomx/_fileio.py``...)
are shared by all parts."""
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


# ----------------------------------------------------------------- circles of files
def _modules(root_folder, root_name='neomx'):
    """{dotted module name: path} of every file under ``root_folder`` (a package is its __init__)."""
    found = {}
    for folder, _, files in os.walk(root_folder):
        for name in files:
            if name.endswith('.py'):
                parts = [root_name] + os.path.relpath(os.path.join(folder, name), root_folder)[:-3].split(os.sep)
                if parts[-1] == '__init__':
                    parts = parts[:-1]
                found['.'.join(parts)] = os.path.join(folder, name)
    return found


def _module_imports(modules):
    """{module: {module it imports (anywhere in the file, relative or absolute): line}}.

    ``from pkg import name`` imports module ``pkg.name`` when there is one, else ``pkg``;
    ``import a.b.c`` the deepest of them that is a module of the package.
    """
    def resolve(name):
        parts = name.split('.')
        for end in range(len(parts), 0, -1):
            if '.'.join(parts[:end]) in modules:
                return '.'.join(parts[:end])
        return None

    graph = {}
    for module, path in modules.items():
        package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
        targets = graph.setdefault(module, {})
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                parts = package.split('.')
                anchor = parts[:len(parts) - node.level + 1] if node.level else []
                base = '.'.join(anchor + ([node.module] if node.module else []))
                names = [base + '.' + alias.name if base + '.' + alias.name in modules else base
                         for alias in node.names]
            else:
                continue
            for name in names:
                target = resolve(name)
                if target is not None and target != module:
                    targets.setdefault(target, node.lineno)
    return graph


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_circle_of_files_inside_neomx():
    graph = _module_imports(_modules(PACKAGE))
    circles = _circles(graph)
    shown = ['%s: %s' % (' <-> '.join(c), ', '.join('%s -> %s (line %d)' % (a, b, graph[a][b])
                                                     for a in c for b in graph[a] if b in c))
             for c in circles]
    assert not circles, '\n'.join(shown)
    assert 'neomx.ndarray.ndarray' in graph['neomx.ndarray.utils']      # the scan sees imports


def test_the_circle_finder_sees_function_level_and_long_circles(tmp_path):
    package = tmp_path / 'probe'
    package.mkdir()
    (package / '__init__.py').write_text('')
    (package / 'a.py').write_text('from . import b\n')
    (package / 'b.py').write_text('import probe.c\n')
    (package / 'c.py').write_text('def f():\n    from .a import name\n')
    (package / 'd.py').write_text('from .a import name\n')
    graph = _module_imports(_modules(str(package), 'probe'))
    assert _circles(graph) == [['probe.a', 'probe.b', 'probe.c']]


# ------------------------------------------------------- private members across packages
def _part(module):
    """The top-level piece of neomx a module belongs to (``neomx.gluon.nn.basic_layers`` ->
    ``gluon``). neomx's own private modules (``neomx/_fileio.py``...) are shared by all."""
    pieces = module.split('.')
    return pieces[1] if len(pieces) > 1 else ''


def _is_private(name):
    return name.startswith('_') and not name.startswith('__')


def _private_uses(modules):
    """``path:line what`` for each private member of one part that a file of another uses."""
    found = []
    for module, path in sorted(modules.items()):
        package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
        mine = _part(module)

        def foreign(target):
            return target.startswith('neomx.') and _part(target) != mine and not _is_private(_part(target))

        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                parts = package.split('.')
                anchor = parts[:len(parts) - node.level + 1] if node.level else []
                base = '.'.join(anchor + ([node.module] if node.module else []))
                for alias in node.names:
                    target = base + '.' + alias.name
                    if target in modules:
                        aliases[alias.asname or alias.name] = target
                    elif foreign(base) and _is_private(alias.name):
                        found.append('%s:%d from %s import %s' % (path, node.lineno, base, alias.name))
                    if foreign(target) and any(_is_private(p) for p in target.split('.')[2:-1] +
                                               ([alias.name] if target in modules else [])):
                        found.append('%s:%d imports the private module %s' % (path, node.lineno, target))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name):
                target = aliases.get(node.value.id)
                if target is not None and foreign(target):
                    found.append('%s:%d %s.%s' % (path, node.lineno, target, node.attr))
    return found


def test_no_part_of_neomx_uses_private_members_of_another():
    found = _private_uses(_modules(PACKAGE))
    assert not found, '\n'.join(found)


def test_the_private_member_scan_sees_each_way_of_reaching_in(tmp_path):
    root = tmp_path / 'neomx'
    for folder in ('low', 'high'):
        (root / folder).mkdir(parents=True)
        (root / folder / '__init__.py').write_text('')
    (root / '__init__.py').write_text('')
    (root / '_shared.py').write_text('_X = 1\n')
    (root / 'low' / 'core.py').write_text('_hidden = 1\nshown = 2\n')
    (root / 'low' / '_inner.py').write_text('')
    (root / 'high' / 'user.py').write_text(
        'from ..low.core import _hidden, shown\nfrom ..low import core, _inner\nfrom .._shared import _X\n'
        'def f():\n    return core._hidden + core.shown\n')
    (root / 'low' / 'mate.py').write_text('from .core import _hidden\n')    # same part: its own business
    found = [line.split(' ', 1)[1] for line in _private_uses(_modules(str(root)))]
    assert found == ['from neomx.low.core import _hidden', 'imports the private module neomx.low._inner',
                     'neomx.low.core._hidden'], found
