"""Module ``__getattr__`` for namespaces that fall back to a sibling ``op`` module.

``mx.nd.sparse`` and ``mx.sym.sparse`` hold the ``_sparse_*`` operators and a few functions of
their own; every other operator name is the namespace's ordinary version (which handles
sparse arrays through the operators' storage rules), or its internal one (``_contrib_*``).
"""
import importlib

__all__ = ['fallback_to_op']


def fallback_to_op(package, public_name):
    """A module ``__getattr__`` looking names up in ``<package>.op``, then ``<package>._internal``
    (imported on first use: they are filled in after the namespace module is created)."""
    def __getattr__(name):
        if name.startswith('__'):
            raise AttributeError(name)
        for module in ('.op', '._internal'):
            try:
                return getattr(importlib.import_module(module, package), name)
            except AttributeError:
                pass
        raise AttributeError('module %r has no attribute %r' % (public_name, name))
    return __getattr__
