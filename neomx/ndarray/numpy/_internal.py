"""``mx.nd.np._internal``: the ``_npi_*`` functions MXNet exposes by short name
(``boolean_mask_assign_scalar``...), put here by :mod:`neomx.numpy_extension`."""
