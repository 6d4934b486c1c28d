"""``mx.sym.zeros/ones/full/arange/eye/linspace``: array-creating operator nodes in a graph.

The operators themselves live in ``neomx/operator/creation.py``; the executor supplies the
context.
"""
__all__ = ['zeros', 'ones', 'full', 'arange', 'eye', 'linspace']


def _create(op, name=None, **kwargs):
    from . import _internal
    return getattr(_internal, op)(name=name, **kwargs)


def zeros(shape, dtype=None, **kwargs):
    """A Symbol of zeros of ``shape`` (float32 by default)."""
    return _create('_zeros', shape=shape, dtype=dtype or 'float32', **kwargs)


def ones(shape, dtype=None, **kwargs):
    """A Symbol of ones of ``shape`` (float32 by default)."""
    return _create('_ones', shape=shape, dtype=dtype or 'float32', **kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A Symbol of ``shape`` filled with ``val`` (float32 by default)."""
    return _create('_full', shape=shape, dtype=dtype or 'float32', value=float(val), **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """A Symbol of evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times.

    Returns
    -------
    Symbol, shape (ceil((stop - start) / step) * repeat,)
    """
    return _create('_arange', name=name, start=start, stop=stop, step=step, repeat=repeat,
                   infer_range=infer_range, dtype=dtype or 'float32')


def eye(N, M=0, k=0, dtype=None, **kwargs):  # pylint: disable=invalid-name
    """A Symbol of shape (N, M or N) with ones on diagonal ``k``."""
    return _create('_eye', N=N, M=M, k=k, dtype=dtype or 'float32', **kwargs)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """A Symbol of ``num`` evenly spaced values from ``start`` to ``stop``."""
    return _create('_linspace', name=name, start=start, stop=stop, num=num, endpoint=endpoint,
                   dtype=dtype or 'float32')
