"""Every ``>>>`` example in neomx's docstrings runs and prints what it shows.

Each docstring with examples is one test, named by its doctest name (e.g.
``neomx.gluon.nn.basic_layers.Dense``). Examples see ``mx`` (neomx) and ``np`` (numpy)
besides their module's globals, and compare with ELLIPSIS and NORMALIZE_WHITESPACE.
``neomx.compat`` (it rewires ``import mxnet``) and ``__main__`` modules are not collected.
"""
import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import neomx

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _skipped(module_name):
    parts = module_name.split('.')
    return parts[:2] == ['neomx', 'compat'] or parts[-1] == '__main__'


def _module_names():
    names = ['neomx']
    for info in pkgutil.walk_packages(neomx.__path__, 'neomx.'):
        if not _skipped(info.name):
            names.append(info.name)
    return names


def _collect():
    finder = doctest.DocTestFinder()
    tests = {}
    for name in _module_names():
        module = importlib.import_module(name)
        for test in finder.find(module, name, extraglobs={'mx': neomx, 'np': np}):
            if test.examples:
                tests.setdefault(test.name, test)
    return [tests[name] for name in sorted(tests)]


DOCTESTS = _collect()


def test_examples_were_found():
    # walk_packages found the package; a broken walk would make the suite below empty
    assert len(DOCTESTS) >= 24


@pytest.mark.parametrize('test', DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_example(test):
    report = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    with neomx.cpu(0):          # the examples show arrays on cpu(0), whatever --default-context says
        result = runner.run(test, out=report.append, clear_globs=False)
    test.globs.clear()
    assert result.failed == 0, ''.join(report)
