"""``mx.sym.sparse``: the ``_sparse_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""


def __getattr__(name):
    # sparse arrays are stored densely, so every other operator is its mx.sym version
    if name.startswith('__'):
        raise AttributeError(name)
    from . import op
    try:
        return getattr(op, name)
    except AttributeError:
        raise AttributeError("module 'mx.sym.sparse' has no attribute %r" % (name,)) from None
