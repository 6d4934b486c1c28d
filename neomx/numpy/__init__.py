"""Placeholder for MXNet's NumPy-compatible interface (``mx.np``), which neomx does not provide.

The module imports, so code that imports it but uses only the legacy ``mx.nd`` interface runs;
any use of one of its names raises an AttributeError that says so.
"""


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise AttributeError('neomx has no NumPy interface: mx.numpy.%s (mx.np) is not available; '
                         'use the mx.nd interface' % name)
