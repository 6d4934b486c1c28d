"""``mx.executor``: :class:`Executor`, a Symbol bound to arrays (``Symbol.bind``,
``Symbol.simple_bind``); defined with the Symbol in ``neomx.symbol.executor``."""
from .base import c_array_buf, c_handle_array, c_str_array, check_call, py_str  # noqa: F401
from .ndarray import NDArray  # noqa: F401
from .symbol.executor import Executor

__all__ = ['Executor']
