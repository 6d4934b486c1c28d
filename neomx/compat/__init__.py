"""``neomx.compat``: run code written for MXNet on neomx, unmodified.

:func:`install` puts an import hook first on ``sys.meta_path`` that resolves ``mxnet`` to
``neomx`` and every ``mxnet.X`` to ``neomx.X``. The aliases are the very same module
objects, so ``mxnet.nd.NDArray is neomx.nd.NDArray`` and arrays pass ``isinstance``
checks written against either name.

From the command line, ``python -m neomx.compat script.py [args]`` (or ``-m module``)
runs a script as if it had been started directly -- ``sys.argv``, ``sys.path[0]`` and
``__name__ == '__main__'`` as Python sets them -- with the hook installed.

Processes started with the ``spawn`` method (some DataLoader workers) re-import the
main script without the hook; call :func:`install` in the script itself where needed.
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

__all__ = ['install', 'uninstall', 'run_script', 'run_module', 'main']

ALIAS = 'mxnet'
TARGET = 'neomx'


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by importing its target and handing back that same module."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        """Nothing to execute: the target module ran when it was imported."""


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``mxnet`` and ``mxnet.X`` as ``neomx`` and ``neomx.X``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + '.'):
            return None
        target_name = TARGET + fullname[len(ALIAS):]
        target_spec = importlib.util.find_spec(target_name)
        if target_spec is None:
            return None      # the usual "No module named 'mxnet.X'"
        return importlib.util.spec_from_loader(
            fullname, _AliasLoader(target_name),
            is_package=target_spec.submodule_search_locations is not None)


def _installed():
    return [f for f in sys.meta_path if isinstance(f, AliasFinder)]


def install():
    """Make ``import mxnet`` (and ``mxnet.X``) import neomx in this process. Idempotent."""
    if not _installed():
        sys.meta_path.insert(0, AliasFinder())


def uninstall():
    """Remove the hook and forget the ``mxnet`` aliases already imported."""
    for finder in _installed():
        sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + '.')]:
        del sys.modules[name]


def run_script(path, args=()):
    """Run the file ``path`` as ``__main__`` with ``sys.argv = [path, *args]`` and the hook installed."""
    install()
    sys.argv = [path] + list(args)
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    runpy.run_path(path, run_name='__main__')


def run_module(name, args=()):
    """Run module ``name`` as ``python -m name args`` would, with the hook installed."""
    install()
    sys.argv = [name] + list(args)
    sys.path[0] = os.getcwd()
    runpy.run_module(name, run_name='__main__', alter_sys=True)


_USAGE = 'usage: python -m neomx.compat (script.py | -m module) [args...]\n'


def main(argv):
    """Command-line entry point; returns the exit status for usage errors, else 0."""
    if not argv or argv[0] in ('-h', '--help'):
        sys.stderr.write(_USAGE)
        return 0 if argv else 2
    if argv[0] == '-m':
        if len(argv) < 2:
            sys.stderr.write(_USAGE)
            return 2
        run_module(argv[1], argv[2:])
    else:
        run_script(argv[0], argv[1:])
    return 0
