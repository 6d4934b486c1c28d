"""``mx.sym.contrib``: the ``_contrib_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""

from .contrib_control_flow import foreach, while_loop, cond  # noqa: F401,E402
