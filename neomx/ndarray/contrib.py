"""``mx.nd.contrib``: operators generated from the registry (filled in by ``neomx.ndarray``)."""

from .contrib_control_flow import foreach, while_loop, cond  # noqa: F401,E402
