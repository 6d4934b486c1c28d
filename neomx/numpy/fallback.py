"""Functions ``mx.np`` hands to official NumPy (MXNet 1.9.1's ``mxnet.numpy.fallback``).

They are NumPy's own functions: called with ``mx.np`` arrays they dispatch back through
``ndarray.__array_function__``, which runs them on NumPy copies and returns ``mx.np``
arrays (refusing while autograd records). The few that NumPy 2 removed are provided here
with NumPy 1.x's behaviour.
"""
import numpy as onp

__all__ = [
    'allclose', 'alltrue', 'apply_along_axis', 'apply_over_axes', 'argpartition', 'argwhere', 'array_equal',
    'array_equiv', 'choose', 'compress', 'corrcoef', 'correlate', 'count_nonzero', 'cov', 'digitize', 'divmod',
    'extract', 'flatnonzero', 'float_power', 'frexp', 'heaviside', 'histogram2d', 'histogram_bin_edges',
    'histogramdd', 'i0', 'in1d', 'interp', 'intersect1d', 'isclose', 'isin', 'ix_', 'lexsort', 'min_scalar_type',
    'mirr', 'modf', 'msort', 'nanargmax', 'nanargmin', 'nancumprod', 'nancumsum', 'nanmax', 'nanmedian', 'nanmin',
    'nanpercentile', 'nanprod', 'nanquantile', 'nanstd', 'nansum', 'nanvar', 'ndim', 'npv', 'partition', 'piecewise',
    'packbits', 'pmt', 'poly', 'polyadd', 'polydiv', 'polyfit', 'polyint', 'polymul', 'polysub', 'positive', 'ppmt',
    'promote_types', 'ptp', 'pv', 'rate', 'real', 'result_type', 'rollaxis', 'roots', 'searchsorted', 'select',
    'setdiff1d', 'setxor1d', 'signbit', 'size', 'spacing', 'take_along_axis', 'trapz', 'tril_indices_from',
    'trim_zeros', 'triu_indices_from', 'union1d', 'unpackbits', 'unwrap', 'vander',
]


# ------------------------------------------------------- removed in NumPy 2
def _alltrue(a, axis=None, out=None, keepdims=False):
    """Whether all elements are true (NumPy 1.x's ``alltrue``, ``all``)."""
    return onp.all(a, axis=axis, out=out, keepdims=keepdims)


def _in1d(ar1, ar2, assume_unique=False, invert=False):
    """Whether each element of the flattened ``ar1`` is in ``ar2`` (NumPy 1.x's ``in1d``)."""
    return onp.isin(onp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert)


def _msort(a):
    """A copy sorted along the first axis (NumPy 1.x's ``msort``)."""
    return onp.sort(a, axis=0)


def _trapz(y, x=None, dx=1.0, axis=-1):
    """Integral by the trapezoidal rule (NumPy 1.x's ``trapz``)."""
    return onp.trapezoid(y, x=x, dx=dx, axis=axis)


def _npv(rate, values):  # pylint: disable=redefined-outer-name
    """Net present value of a cash flow series (NumPy 1.x's ``npv``)."""
    values = onp.atleast_2d(values)
    timestep_array = onp.arange(0, values.shape[1])
    res = (values / (1 + onp.asarray(rate)) ** timestep_array).sum(axis=1)
    return res[0] if onp.ndim(res) and res.shape[0] == 1 and onp.ndim(rate) == 0 else res


def _pmt(rate, nper, pv, fv=0, when='end'):  # pylint: disable=redefined-outer-name
    """Payment against loan principal plus interest (NumPy 1.x's ``pmt``)."""
    when = 1 if when in ('begin', 1) else 0
    rate, nper, pv, fv = map(onp.asarray, (rate, nper, pv, fv))
    temp = (1 + rate) ** nper
    mask = rate == 0
    masked_rate = onp.where(mask, 1, rate)
    fact = onp.where(mask, nper, (1 + masked_rate * when) * (temp - 1) / masked_rate)
    return -(fv + pv * temp) / fact


def _fv(rate, nper, pmt, pv, when):  # pylint: disable=redefined-outer-name
    temp = (1 + rate) ** nper
    fact = onp.where(rate == 0, nper, (1 + rate * when) * (temp - 1) / onp.where(rate == 0, 1, rate))
    return -(pv * temp + pmt * fact)


def _ipmt(rate, per, nper, pv, fv=0, when=0):  # pylint: disable=redefined-outer-name
    total = _pmt(rate, nper, pv, fv, when)
    ipmt = _fv(rate, per - 1, total, pv, when) * rate
    if when == 1:
        ipmt = onp.where(per == 1, 0, ipmt / (1 + rate))
    return ipmt


def _ppmt(rate, per, nper, pv, fv=0, when='end'):  # pylint: disable=redefined-outer-name
    """Payment against loan principal (NumPy 1.x's ``ppmt``)."""
    when = 1 if when in ('begin', 1) else 0
    rate, per, nper, pv, fv = map(onp.asarray, (rate, per, nper, pv, fv))
    return _pmt(rate, nper, pv, fv, when) - _ipmt(rate, per, nper, pv, fv, when)


def _pv(rate, nper, pmt, fv=0, when='end'):  # pylint: disable=redefined-outer-name
    """Present value (NumPy 1.x's ``pv``)."""
    when = 1 if when in ('begin', 1) else 0
    rate, nper, pmt, fv = map(onp.asarray, (rate, nper, pmt, fv))
    temp = (1 + rate) ** nper
    fact = onp.where(rate == 0, nper, (1 + rate * when) * (temp - 1) / onp.where(rate == 0, 1, rate))
    return -(fv + pmt * fact) / temp


def _rate(nper, pmt, pv, fv, when='end', guess=None, tol=None, maxiter=100):  # pylint: disable=redefined-outer-name
    """Interest rate per period, by Newton's iteration (NumPy 1.x's ``rate``)."""
    when = 1 if when in ('begin', 1) else 0
    nper, pmt, pv, fv = map(onp.asarray, (nper, pmt, pv, fv))
    rn = 0.1 if guess is None else guess
    tol = 1e-6 if tol is None else tol
    for _ in range(maxiter):
        t1 = (rn + 1) ** nper
        t2 = (rn + 1) ** (nper - 1)
        g = fv + t1 * pv + pmt * (t1 - 1) * (rn * when + 1) / rn
        gp = (nper * t2 * pv - pmt * (t1 - 1) * (rn * when + 1) / (rn ** 2) + nper * pmt * t2 * (rn * when + 1) / rn
              + pmt * (t1 - 1) * when / rn)
        step = g / gp
        rn = rn - step
        if onp.all(onp.abs(step) < tol):
            return rn
    return onp.nan + rn


def _mirr(values, finance_rate, reinvest_rate):
    """Modified internal rate of return (NumPy 1.x's ``mirr``)."""
    values = onp.asarray(values)
    n = values.size
    if values.dtype.kind not in 'fc':
        values = values.astype(onp.float64)
    pos = values > 0
    neg = values < 0
    if not (pos.any() and neg.any()):
        return onp.nan
    numer = onp.abs(_npv(reinvest_rate, values * pos))
    denom = onp.abs(_npv(finance_rate, values * neg))
    return (numer / denom) ** (1 / (n - 1)) * (1 + reinvest_rate) - 1


_REPLACEMENTS = {'alltrue': _alltrue, 'in1d': _in1d, 'msort': _msort, 'trapz': _trapz, 'npv': _npv, 'pmt': _pmt,
                 'ppmt': _ppmt, 'pv': _pv, 'rate': _rate, 'mirr': _mirr}
for _name in __all__:
    globals()[_name] = getattr(onp, _name, None) or _REPLACEMENTS[_name]
