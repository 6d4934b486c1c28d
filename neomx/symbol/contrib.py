"""``mx.sym.contrib``: the ``_contrib_*`` operators as Symbol functions (filled in by ``neomx.symbol``)."""

from .contrib_control_flow import foreach, while_loop, cond  # noqa: F401,E402


def rand_zipfian(true_classes, num_sampled, range_max):
    """The Symbol form of :func:`neomx.nd.contrib.rand_zipfian`: candidate classes drawn from
    the log-uniform (Zipfian) distribution and the expected counts of the true and the
    sampled classes (three outputs)."""
    from . import op, random    # pylint: disable=import-outside-toplevel  (filled in after this module)
    from ..ndarray.contrib import zipfian_candidates    # pylint: disable=import-outside-toplevel
    return zipfian_candidates(random.uniform, op, true_classes, num_sampled, range_max, {})
