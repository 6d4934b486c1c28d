"""Optional packages, imported where they are used.

``import neomx`` needs only numpy and torch. A feature that needs another package imports
it through :func:`require` when it is called, so a missing package fails there, with an
error that names the package and the ``pip install`` that brings it:

>>> from neomx._optional import require
>>> require('math', 'test', 'an example').sqrt(4.0)
2.0
>>> require('no_such_package_xyz', 'viz', 'mx.viz.plot_network')
Traceback (most recent call last):
...
neomx._optional.MissingDependencyError: mx.viz.plot_network needs the Python package 'no_such_package_xyz': pip install "neomx[viz]"
"""
import importlib

from .base import MXNetError

__all__ = ['MissingDependencyError', 'require']

# The package that provides each importable module, where the names differ.
_DISTRIBUTIONS = {'PIL': 'Pillow', 'yaml': 'PyYAML'}


class MissingDependencyError(MXNetError, ImportError):
    """An optional package is not installed.

    Both an :class:`~neomx.base.MXNetError` and an ``ImportError``, so code that guards
    an optional feature with either keeps working.
    """


def require(module, extra, feature):
    """Import and return ``module``, or raise :class:`MissingDependencyError`.

    Parameters
    ----------
    module : str
        The module to import (``'PIL.Image'``, ``'graphviz'``).
    extra : str
        The extra of neomx's ``pyproject.toml`` that installs it (``'vision'``, ``'viz'``).
    feature : str
        What needs it, for the message (``'mx.image.imdecode'``).
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split('.')[0]
        package = _DISTRIBUTIONS.get(top, top)
        raise MissingDependencyError(
            '%s needs the Python package %r: pip install "neomx[%s]"'
            % (feature, package, extra)) from None
