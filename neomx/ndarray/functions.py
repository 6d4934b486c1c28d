"""MXNet's Python-level NDArray functions that choose an operator by argument type.

``mx.nd.add(a, b)`` picks ``broadcast_add`` for two arrays and ``_plus_scalar`` for an
array and a number (``_rminus_scalar`` etc. when the number comes first), as MXNet does.
"""
import inspect
import numbers
import warnings

import numpy as np

from .._image_decode import buffer_bytes
from . import op
from .ndarray import NDArray, array

__all__ = ['add', 'subtract', 'multiply', 'divide', 'true_divide', 'modulo', 'power', 'maximum',
           'minimum', 'hypot', 'equal', 'not_equal', 'greater', 'greater_equal', 'lesser',
           'lesser_equal', 'logical_and', 'logical_or', 'logical_xor', 'concatenate', 'moveaxis',
           'onehot_encode', 'linspace', 'eye', 'imdecode', 'histogram', 'split_v2']


def make_ufunc(name, array_type, array_op, scalar_op, rscalar_op, py_fn, params=('lhs', 'rhs')):
    """A function of two operands choosing the operator by their types, as MXNet's ``mx.nd``
    and ``mx.sym`` helpers do: ``array_op`` for two arrays (NDArrays or Symbols, per
    ``array_type``), ``scalar_op``/``rscalar_op`` when the scalar comes second/first, and
    ``py_fn`` for two numbers. ``params`` are MXNet's names of the two operands
    (``power(base, exp)``), which callers may pass by keyword."""
    first, second = params

    def ufunc(*args, **kwargs):
        if kwargs or len(args) != 2:
            args = _named_operands(name, params, args, kwargs)
        lhs, rhs = args
        if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
            return py_fn(lhs, rhs)
        if isinstance(lhs, array_type) and isinstance(rhs, array_type):
            return array_op(lhs, rhs)
        if isinstance(lhs, array_type):
            return scalar_op(lhs, scalar=rhs)
        if isinstance(rhs, array_type):
            return rscalar_op(rhs, scalar=lhs)
        raise TypeError('type %s and %s not supported' % (type(lhs).__name__, type(rhs).__name__))
    ufunc.__name__ = name
    ufunc.__doc__ = ('%s of two %ss (%s) or of one and a scalar.'
                     % (name, array_type.__name__, array_op.__name__))
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    ufunc.__signature__ = inspect.Signature([inspect.Parameter(first, kind), inspect.Parameter(second, kind)])
    return ufunc


def _named_operands(name, params, args, kwargs):
    """The two operands of a call passing some by keyword, in order; TypeError as Python's."""
    bound = list(args)
    for pname in params[len(args):]:
        if pname not in kwargs:
            raise TypeError("%s() missing required argument '%s'" % (name, pname))
        bound.append(kwargs.pop(pname))
    if kwargs or len(bound) != 2:
        raise TypeError('%s() takes the 2 arguments %s, got %d positional and keywords %s'
                        % (name, '/'.join(params), len(args), sorted(kwargs)))
    return bound


def _make(name, array_op, scalar_op, rscalar_op, py_fn, params=('lhs', 'rhs')):
    return make_ufunc(name, NDArray, getattr(op, array_op), getattr(op, scalar_op),
                      getattr(op, rscalar_op), py_fn, params)


add = _make('add', 'broadcast_add', '_plus_scalar', '_plus_scalar', lambda a, b: a + b)
subtract = _make('subtract', 'broadcast_sub', '_minus_scalar', '_rminus_scalar', lambda a, b: a - b)
multiply = _make('multiply', 'broadcast_mul', '_mul_scalar', '_mul_scalar', lambda a, b: a * b)
divide = _make('divide', 'broadcast_div', '_div_scalar', '_rdiv_scalar', lambda a, b: a / b)
true_divide = divide
modulo = _make('modulo', 'broadcast_mod', '_mod_scalar', '_rmod_scalar', lambda a, b: a % b)
power = _make('power', 'broadcast_power', '_power_scalar', '_rpower_scalar', lambda a, b: a ** b, ('base', 'exp'))
maximum = _make('maximum', 'broadcast_maximum', '_maximum_scalar', '_maximum_scalar', max)
minimum = _make('minimum', 'broadcast_minimum', '_minimum_scalar', '_minimum_scalar', min)
hypot = _make('hypot', 'broadcast_hypot', '_hypot_scalar', '_hypot_scalar', np.hypot)
equal = _make('equal', 'broadcast_equal', '_equal_scalar', '_equal_scalar', lambda a, b: a == b)
not_equal = _make('not_equal', 'broadcast_not_equal', '_not_equal_scalar', '_not_equal_scalar',
                  lambda a, b: a != b)
greater = _make('greater', 'broadcast_greater', '_greater_scalar', '_lesser_scalar', lambda a, b: a > b)
greater_equal = _make('greater_equal', 'broadcast_greater_equal', '_greater_equal_scalar',
                      '_lesser_equal_scalar', lambda a, b: a >= b)
lesser = _make('lesser', 'broadcast_lesser', '_lesser_scalar', '_greater_scalar', lambda a, b: a < b)
lesser_equal = _make('lesser_equal', 'broadcast_lesser_equal', '_lesser_equal_scalar',
                     '_greater_equal_scalar', lambda a, b: a <= b)
logical_and = _make('logical_and', 'broadcast_logical_and', '_logical_and_scalar',
                    '_logical_and_scalar', lambda a, b: a and b)
logical_or = _make('logical_or', 'broadcast_logical_or', '_logical_or_scalar', '_logical_or_scalar',
                   lambda a, b: a or b)
logical_xor = _make('logical_xor', 'broadcast_logical_xor', '_logical_xor_scalar',
                    '_logical_xor_scalar', lambda a, b: bool(a) != bool(b))


def concatenate(arrays, axis=0, always_copy=True):
    """Join arrays along an existing axis (deprecated MXNet helper; use ``concat``)."""
    return op.concat(*arrays, dim=axis)


def moveaxis(tensor, source, destination):
    """Move axes ``source`` (an int or a list of ints) to positions ``destination`` (a copy)."""
    ndim = tensor.ndim
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise ValueError('moveaxis: source %s and destination %s differ in length' % (source, destination))
    for a in src + dst:
        if not -ndim <= a < ndim:
            raise ValueError('moveaxis: axis %d is out of bounds for an array of %d dims' % (a, ndim))
    src, dst = [a % ndim for a in src], [a % ndim for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError('moveaxis: repeated axis in %s or %s' % (source, destination))
    order = [a for a in range(ndim) if a not in src]
    for d, a in sorted(zip(dst, src)):
        order.insert(d, a)
    return op.transpose(tensor, axes=tuple(order))


def onehot_encode(indices, out):
    """One-hot encode ``indices`` into ``out`` (depth = out.shape[1])."""
    return op.one_hot(indices, depth=out.shape[1], out=out, dtype=out.dtype)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """``num`` evenly spaced values from start to stop."""
    return array(np.linspace(start, stop, num, endpoint=endpoint), ctx=ctx, dtype=dtype)


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):
    """2-D array with ones on diagonal ``k``."""
    return array(np.eye(N, M or N, k), ctx=ctx, dtype=dtype)


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Decode an image into a (channels, height, width) float32 array (deprecated in MXNet
    for ``mx.image.imdecode``, whose HWC uint8 result this rearranges).

    Parameters
    ----------
    str_img : bytes
        The encoded image.
    clip_rect : tuple of 4 int
        ``(x0, y0, x1, y1)``: keep only this rectangle; all zeros keeps the whole image.
    out : NDArray, optional
        Where to write: shaped (C, H, W), or (N, C, H, W) with ``index`` choosing the slice.
    channels : int
        3 for colour (RGB), 1 for grey.
    mean : NDArray, optional
        Subtracted from the image (broadcast over (C, H, W)).

    Returns
    -------
    NDArray
        ``out`` when given.
    """
    if mean is None:        # MXNet passes an empty array: nothing to subtract
        mean = array([], ctx=out.context if out is not None else None)
    str_img = buffer_bytes(str_img)
    result = op._imdecode(mean, index, clip_rect[0], clip_rect[1], clip_rect[2], clip_rect[3], channels,
                          len(str_img), str_img=str_img)
    if out is None:
        return result
    target = out[index] if out.ndim == 4 else out
    target[:] = result
    return out


def histogram(a, bins=10, range=None):  # pylint: disable=redefined-builtin
    """Histogram of ``a``: (counts, bin edges).

    ``bins`` is an NDArray of edges, or a number of equal bins over ``range``. As in MXNet,
    a number of bins without ``range`` takes numpy's answer over ``a``'s own span (float32
    counts and edges, with a warning); otherwise the counts are int64 (the ``_histogram``
    operator).
    """
    if isinstance(bins, NDArray):
        return op._histogram(data=a, bins=bins)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            warnings.warn("range is not specified, using numpy's result to ensure consistency with numpy")
            counts, edges = np.histogram(a.asnumpy(), bins=bins)
            return array(counts, ctx=a.context), array(edges, ctx=a.context)
        return op._histogram(data=a, bin_cnt=bins, range=range)
    raise ValueError('bins argument should be either an integer or an NDArray')


def split_v2_attrs(indices_or_sections):
    """``_split_v2``'s attributes for ``split_v2``'s ``indices_or_sections``, spelled as MXNet
    passes them (so Symbol JSON matches): ``sections`` for an int, the section starts for a
    tuple."""
    if isinstance(indices_or_sections, int):
        return {'indices': [], 'sections': indices_or_sections}
    if isinstance(indices_or_sections, tuple):
        return {'indices': [0] + list(indices_or_sections), 'sections': 0}
    raise ValueError('indices_or_sections must be an int or a tuple of ints, got %s'
                     % type(indices_or_sections).__name__)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices (a tuple).

    Parameters
    ----------
    ary : NDArray
    indices_or_sections : int or tuple of int
        The number of equal sections, or the positions where new sections start
        (``(2, 5)`` gives ``ary[:2], ary[2:5], ary[5:]`` along ``axis``).
    axis : int
    squeeze_axis : bool
        Drop ``axis`` from every part (each must have size 1 along it).

    Returns
    -------
    list of NDArray, or one NDArray when there is a single part.
    """
    attrs = split_v2_attrs(indices_or_sections)
    if attrs['sections'] and ary.shape[axis] % attrs['sections']:
        raise ValueError('array split does not result in an equal division: axis %d of size %d '
                         'into %d sections' % (axis, ary.shape[axis], attrs['sections']))
    return op._split_v2(ary, axis=axis, squeeze_axis=squeeze_axis, **attrs)
