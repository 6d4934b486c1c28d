"""Signatures of the ``_np_*``/``_npx_*`` operators' Python functions (MXNet 1.9.1's
``mxnet._numpy_op_doc``): each function here documents the ``mx.np``/``mx.npx`` function
of the operator of the same name; :mod:`neomx.numpy_op_signature` gives those functions
these signatures. The functions are never called.
"""
# pylint: disable=unused-argument,redefined-builtin,invalid-name


def _np_all(a, axis=None, keepdims=False, out=None):
    """Whether all elements along ``axis`` are true (``mx.np.all``)."""


def _np_any(a, axis=None, keepdims=False, out=None):
    """Whether any element along ``axis`` is true (``mx.np.any``)."""


def _np_sometrue(a, axis=None, keepdims=False, out=None):
    """Whether any element along ``axis`` is true (``mx.np.sometrue``)."""


def _np_cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (``mx.np.cumsum``)."""


def _npx_nonzero(a):
    """Indices of the non-zero elements, one row per element (``mx.npx.nonzero``)."""


def _np_repeat(a, repeats, axis=None):
    """Elements repeated (``mx.np.repeat``)."""


def _np_transpose(a, axes=None):
    """Axes permuted (``mx.np.transpose``)."""


def _np_dot(a, b, out=None):
    """Dot product (``mx.np.dot``)."""


def _np_sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):
    """Sum along ``axis`` (``mx.np.sum``)."""


def _np_copy(a, out=None):
    """A copy (``mx.np.copy``)."""


def _np_atleast_1d(*arys):
    """Arrays with at least one dim (``mx.np.atleast_1d``)."""


def _np_atleast_2d(*arys):
    """Arrays with at least two dims (``mx.np.atleast_2d``)."""


def _np_atleast_3d(*arys):
    """Arrays with at least three dims (``mx.np.atleast_3d``)."""


def _np_reshape(a, newshape, order='C', out=None):
    """A new shape (``mx.np.reshape``)."""


def _np_roll(a, shift, axis=None):
    """Elements rolled (``mx.np.roll``)."""


def _np_trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along diagonals (``mx.np.trace``)."""


def _np_squeeze(a, axis=None, out=None):
    """Length-1 axes removed (``mx.np.squeeze``)."""


def _np_max(a, axis=None, keepdims=False, out=None):
    """Maximum along ``axis`` (``mx.np.max``)."""


def _np_amax(a, axis=None, keepdims=False, out=None):
    """Maximum along ``axis`` (``mx.np.amax``)."""


def _np_min(a, axis=None, keepdims=False, out=None):
    """Minimum along ``axis`` (``mx.np.min``)."""


def _np_amin(a, axis=None, keepdims=False, out=None):
    """Minimum along ``axis`` (``mx.np.amin``)."""


def _np_prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product along ``axis`` (``mx.np.prod``)."""


def _np_product(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product along ``axis`` (``mx.np.product``)."""


def _np_moveaxis(a, source, destination):
    """Axes moved (``mx.np.moveaxis``)."""


def _np__random_shuffle(x):
    """Shuffle in place along the first axis (``mx.np.random.shuffle``)."""


def _npx_constraint_check(x, msg):
    """Raise with ``msg`` unless all of ``x`` is true (``mx.npx.constraint_check``)."""


def _npx_reshape(a, newshape, reverse=False, order='C'):
    """A new shape with MXNet's special codes (``mx.npx.reshape``)."""


def _np_diag(array, k=0):
    """Diagonal, or diagonal matrix (``mx.np.diag``)."""


def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    """Diagonals (``mx.np.diagonal``)."""


def _np_diagflat(array, k=0):
    """Diagonal matrix of the flattened input (``mx.np.diagflat``)."""
