"""Operator errors reported when a result is read, as MXNet's asynchronous engine reports them.

MXNet checks some operator inputs inside the kernel (``take`` with ``mode='raise'`` and an
out-of-range index): the call returns, and the error is raised by the first ``asnumpy()``,
``asscalar()`` or ``wait_to_read()`` of the result, once. neomx keeps such an error on the
result's tensor (:func:`defer_error`); the NDArray's read methods call
:func:`raise_deferred`. Errors of arguments (shapes, attribute values) stay immediate.
"""
__all__ = ['defer_error', 'raise_deferred']

_ATTR = '_mx_deferred_error'


def defer_error(tensor, error):
    """Have the first read of ``tensor`` raise ``error``; returns ``tensor``."""
    setattr(tensor, _ATTR, error)
    return tensor


def raise_deferred(tensor):
    """Raise the error deferred on ``tensor``, if any, and forget it (MXNet raises it once)."""
    error = tensor.__dict__.pop(_ATTR, None)
    if error is not None:
        raise error
