"""``mx.np._internal``: functions of the registry's ``_npi_*`` operators MXNet exposes under
their short names (``boolean_mask_assign_scalar``...), taking ``mx.np`` arrays."""
from ._invoke import run

__all__ = ['boolean_mask_assign_scalar', 'boolean_mask_assign_tensor']


def boolean_mask_assign_scalar(data, mask, value=None, start_axis=0, out=None):
    """``data`` with ``value`` where ``mask`` is true (``out=data`` writes in place)."""
    return run('_npi_boolean_mask_assign_scalar', (data, mask), (value, start_axis), out)


def boolean_mask_assign_tensor(data, mask, value, start_axis=0, out=None):
    """``data`` with the entries of ``value`` where ``mask`` is true."""
    return run('_npi_boolean_mask_assign_tensor', (data, mask, value), (start_axis,), out)
