"""Module ``__getattr__`` for namespaces that fall back to a sibling ``op`` module.

``mx.nd.sparse`` and ``mx.sym.sparse`` hold only the ``_sparse_*`` operators; since sparse
arrays are stored densely, every other operator is the namespace's ordinary version.
"""
import importlib

__all__ = ['fallback_to_op']


def fallback_to_op(package, public_name):
    """A module ``__getattr__`` looking names up in ``<package>.op`` (imported on first use:
    it is filled in after the namespace module is created)."""
    def __getattr__(name):
        if name.startswith('__'):
            raise AttributeError(name)
        try:
            return getattr(importlib.import_module('.op', package), name)
        except AttributeError:
            raise AttributeError('module %r has no attribute %r' % (public_name, name)) from None
    return __getattr__
