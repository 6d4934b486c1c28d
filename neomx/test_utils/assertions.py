"""Comparing arrays the way MXNet's tests do: tolerances by dtype, worst element reported."""
import numpy as np

from .tolerances import as_numpy, get_etol, get_tols

__all__ = ['almost_equal', 'assert_almost_equal', 'assert_almost_equal_with_err',
           'assert_almost_equal_ignore_nan', 'assert_allclose', 'same', 'same_array',
           'same_symbol_structure', 'assert_exception', 'checkShapes', 'locationError',
           'find_max_violation', 'compare_ndarray_tuple', 'collapse_sum_like', 'np_reduce',
           'assign_each', 'assign_each2']


def _violations(a, b, rtol, atol):
    """How many times over the tolerance each element is (0 where exactly equal)."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    diff = np.abs(a64 - b64)
    tol = atol + rtol * np.abs(b64)
    with np.errstate(divide='ignore', invalid='ignore'):
        ratio = np.where(diff == 0, 0.0, diff / tol)
    return np.nan_to_num(ratio, nan=np.inf)


def find_max_violation(a, b, rtol, atol):
    """(index, ratio) of the element farthest outside ``atol + rtol * |b|``."""
    ratio = np.broadcast_to(_violations(a, b, rtol, atol), np.broadcast(a, b).shape)
    if ratio.size == 0:
        return (), 0.0
    idx = np.unravel_index(np.argmax(ratio), ratio.shape)
    return idx, float(ratio[idx])


_find_max_violation = find_max_violation


def checkShapes(a, b):
    """Raise AssertionError unless ``a`` and ``b`` have one shape."""
    if a.shape != b.shape:
        raise AssertionError('Items are not equal: a.shape = %s and b.shape = %s are not equal'
                             % (a.shape, b.shape))


def locationError(a, b, index, names, maxError=False):
    """Text naming the element at ``index`` of both arrays."""
    prefix = 'Location of maximum error: ' if maxError else 'Location of error: '
    return '%s%s, %s=%.8f, %s=%.8f' % (prefix, str(index), names[0], a[index], names[1], b[index])


def _prepare(a, b):
    a, b = as_numpy(a), as_numpy(b)
    if a.dtype == np.bool_:
        a = a.astype(np.int32)
    if b.dtype == np.bool_:
        b = b.astype(np.int32)
    return a, b


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether ``a`` and ``b`` (NDArrays, numpy arrays or numbers) agree within tolerances.

    Tolerances default by dtype (``default_rtols``/``default_atols``), the looser of the two.
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _prepare(a, b)
    if not use_broadcast and a.shape != b.shape:
        return False
    try:
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        return False


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError, naming the worst element, unless ``a`` and ``b`` are close.

    Example
    -------
    >>> assert_almost_equal(np.ones(3), np.ones(3) + 1e-9)
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _prepare(a, b)
    if not use_broadcast:
        checkShapes(a, b)
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    if equal_nan:
        both_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
        a, b = np.where(both_nan, 0, a), np.where(both_nan, 0, b)
    index, rel = find_max_violation(a, b, rtol, atol)
    a_b, b_b = np.broadcast_arrays(a, b)
    bad = ~np.isclose(a_b, b_b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    raise AssertionError(
        '\nItems are not equal:\nError %f exceeds tolerance rtol=%e, atol=%e (mismatch %f%%).\n%s'
        '\n ACTUAL: %r\n DESIRED: %r' % (rel, rtol, atol, 100.0 * bad.mean(),
                                         locationError(a_b, b_b, index, names, maxError=True),
                                         a, b))


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=('a', 'b'),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like ``assert_almost_equal``, but a fraction ``etol`` of elements may differ."""
    etol = get_etol(etol)
    if etol <= 0:
        return assert_almost_equal(a, b, rtol, atol, names, equal_nan, mismatches=mismatches)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _prepare(a, b)
    checkShapes(a, b)
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bad.mean() > etol:
        index, rel = find_max_violation(a, b, rtol, atol)
        raise AssertionError('\nToo many items differ: %f%% > etol=%f%%; error %f at %s'
                             % (100.0 * bad.mean(), 100.0 * etol, rel,
                                locationError(a, b, index, names, maxError=True)))
    return None


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """``assert_almost_equal`` on the elements where neither array is NaN."""
    a, b = np.copy(as_numpy(a)), np.copy(as_numpy(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """numpy's ``assert_allclose`` that also takes NDArrays."""
    np.testing.assert_allclose(as_numpy(a), as_numpy(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def same(a, b):
    """Exact equality of values and shapes."""
    return np.array_equal(as_numpy(a), as_numpy(b))


def same_array(array1, array2):
    """Whether two NDArrays share memory: writing to one changes the other."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def same_symbol_structure(sym1, sym2):
    """Whether two symbols have one graph of operators (names of variables may differ)."""
    import json
    nodes1 = json.loads(sym1.tojson())['nodes']
    nodes2 = json.loads(sym2.tojson())['nodes']
    if len(nodes1) != len(nodes2):
        return False
    for n1, n2 in zip(nodes1, nodes2):
        if n1['op'] != n2['op'] or n1.get('inputs') != n2.get('inputs'):
            return False
        if n1['op'] != 'null' and n1.get('attrs', {}) != n2.get('attrs', {}):
            return False
    return True


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError('%s did not raise %s' % (getattr(f, '__name__', f), exception_type.__name__))


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Compare two (possibly nested) tuples of NDArrays element by element."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def collapse_sum_like(a, shape):
    """Sum ``a`` over the axes that broadcasting to it expanded from ``shape``."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    axes = []
    lead = len(a.shape) - len(shape)
    for i in range(len(a.shape)):
        if i < lead or shape[i - lead] == 1 and a.shape[i] != 1:
            axes.append(i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` with a one-axis numpy reduction over each of ``axis`` (int, tuple or None)."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret


def assign_each(the_input, function):
    """``function`` applied to each element of an array, as a float64 array of its shape (as
    MXNet's; an empty array gives an empty result)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float64])(the_input)


def assign_each2(input1, input2, function):
    """``function`` applied to each pair of elements of two arrays of one shape (float64, as
    :func:`assign_each`)."""
    if function is None:
        return np.array(input1)
    return np.vectorize(function, otypes=[np.float64])(input1, input2)

