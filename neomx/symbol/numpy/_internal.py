"""``mx.sym.np._internal``: the ``_npi_*`` functions MXNet exposes by short name, recording
Symbol nodes; put here by :mod:`neomx.numpy_extension`."""
