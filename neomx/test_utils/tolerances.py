"""Default tolerances and finite-difference steps of MXNet's test helpers, by dtype."""
import numbers

import numpy as np

from ..base import bfloat16
from ..ndarray.ndarray import NDArray

_INTEGER_DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def default_dtype():
    """The dtype test data is made in (float32)."""
    return np.float32


def _table(f16, f32, f64):
    table = {np.dtype(np.float16): f16, np.dtype(np.float32): f32, np.dtype(np.float64): f64}
    table.update({np.dtype(t): 0 for t in _INTEGER_DTYPES})
    return table


# the tables every comparison reads (built once: a test compares thousands of times);
# the public functions below hand out copies, which callers may change
_RTOLS = _table(1e-2, 1e-4, 1e-5)
_ATOLS = _table(1e-1, 1e-3, 1e-20)


def default_rtols():
    """Relative tolerance of comparisons by dtype (integers compare exactly)."""
    return dict(_RTOLS)


def default_atols():
    """Absolute tolerance of comparisons by dtype (integers compare exactly)."""
    return dict(_ATOLS)


def default_numeric_eps():
    """Finite-difference step of numeric gradients by dtype (powers of two, exact in the dtype)."""
    return {np.dtype(np.float16): 1.0 / 2**6, np.dtype(np.float32): 1.0 / 2**9,
            np.dtype(np.float64): 1.0 / 2**14}


def effective_dtype(dat):
    """The dtype whose tolerances apply to ``dat``: bfloat16 data is compared like float16."""
    dtype = np.dtype(getattr(dat, 'dtype', np.asarray(dat).dtype))
    if dtype == bfloat16:
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat, tol, default_tol):
    """``tol`` if given, else the default for ``dat``'s dtype from the table ``default_tol``."""
    if tol is not None:
        return tol
    return default_tol.get(effective_dtype(dat), default_tol[np.dtype(np.float64)])


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing ``x`` with ``y``: the looser default of their two dtypes."""
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    if rtol is None:
        rtol = max(get_tolerance(x, None, _RTOLS), get_tolerance(y, None, _RTOLS))
    if atol is None:
        atol = max(get_tolerance(x, None, _ATOLS), get_tolerance(y, None, _ATOLS))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype``."""
    return _ATOLS[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype``."""
    return _RTOLS[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol`` (fraction of elements allowed to differ), 0 by default."""
    return 0 if etol is None else etol


def as_numpy(x):
    """numpy view of an NDArray, numpy array or number."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    return np.asarray(x)
