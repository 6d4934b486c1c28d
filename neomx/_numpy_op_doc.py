"""Signatures of MXNet's built-in ``_np_*`` / ``_npx_*`` operators as ``mx.np`` / ``mx.npx``
expose them (MXNet 1.9.1's ``mxnet._numpy_op_doc``): :mod:`neomx.numpy_op_signature` gives
each operator's function the signature of its entry here."""
# pylint: disable=unused-argument,redefined-builtin,too-many-arguments


def _np_all(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.all``."""


def _np_any(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.any``."""


def _np_sometrue(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.sometrue``."""


def _np_cumsum(a, axis=None, dtype=None, out=None):
    """The signature of ``mx.np.cumsum``."""


def _npx_nonzero(a):
    """The signature of ``mx.npx.nonzero``."""


def _np_repeat(a, repeats, axis=None):
    """The signature of ``mx.np.repeat``."""


def _np_transpose(a, axes=None):
    """The signature of ``mx.np.transpose``."""


def _np_dot(a, b, out=None):
    """The signature of ``mx.np.dot``."""


def _np_sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):
    """The signature of ``mx.np.sum``."""


def _np_copy(a, out=None):
    """The signature of ``mx.np.copy``."""


def _np_atleast_1d(*arys):
    """The signature of ``mx.np.atleast_1d``."""


def _np_atleast_2d(*arys):
    """The signature of ``mx.np.atleast_2d``."""


def _np_atleast_3d(*arys):
    """The signature of ``mx.np.atleast_3d``."""


def _np_reshape(a, newshape, order='C', out=None):
    """The signature of ``mx.np.reshape``."""


def _np_roll(a, shift, axis=None):
    """The signature of ``mx.np.roll``."""


def _np_trace(a, offset=0, axis1=0, axis2=1, out=None):
    """The signature of ``mx.np.trace``."""


def _np_squeeze(a, axis=None, out=None):
    """The signature of ``mx.np.squeeze``."""


def _np_max(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.max``."""


def _np_amax(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.amax``."""


def _np_min(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.min``."""


def _np_amin(a, axis=None, keepdims=False, out=None):
    """The signature of ``mx.np.amin``."""


def _np_prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """The signature of ``mx.np.prod``."""


def _np_product(a, axis=None, dtype=None, out=None, keepdims=False):
    """The signature of ``mx.np.product``."""


def _np_moveaxis(a, source, destination):
    """The signature of ``mx.np.moveaxis``."""


def _np__random_shuffle(x):
    """The signature of ``mx.np.random.shuffle``."""


def _npx_constraint_check(x, msg):
    """The signature of ``mx.npx.constraint_check``."""


def _npx_reshape(a, newshape, reverse=False, order='C'):
    """The signature of ``mx.npx.reshape``."""


def _np_diag(array, k=0):
    """The signature of ``mx.np.diag``."""


def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    """The signature of ``mx.np.diagonal``."""


def _np_diagflat(array, k=0):
    """The signature of ``mx.np.diagflat``."""
