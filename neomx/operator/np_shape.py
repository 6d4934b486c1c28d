"""Shape operators of MXNet's NumPy interface: reshape, transposes, joins and splits, flips,
rolls, tiles, diagonals, padding, insert/delete, diff, take and boolean masks.

Results are new arrays (``shares_input`` marks those that may return an input's view,
copied by ``mx.nd``); NumPy's errors where NumPy raises (ValueError for shapes that do not
fit, AxisError for axes out of range).
"""
import numpy as _np
import torch

from .dtype_rules import DTypeRule
from .np_reduce import OPT_AXES, axis_index, axes_of
from .registry import ANY, BOOL, INT, OPT_FLOAT, OPT_INT, SHAPE, Attr, register

__all__ = ['split_bounds']

_SHAPE_OR_INT = Attr('Shape(tuple)', lambda v: ANY.parse(v) if isinstance(v, str) else v)


def _shape_tuple(v):
    if isinstance(v, (int, _np.integer)):
        return (int(v),)
    return tuple(int(d) for d in v)


@register('_np_reshape', inputs=('a',), attrs=[('newshape', _SHAPE_OR_INT), ('order', Attr('str', str, 'C'))],
          shares_input=True)
def reshape(a, newshape, order):
    """``a`` with shape ``newshape`` (one dim may be -1)."""
    if order != 'C':
        raise NotImplementedError('reshape: only order=\'C\' is supported, got %r' % (order,))
    shape = _shape_tuple(newshape)
    try:
        return a.reshape(shape)
    except RuntimeError:
        raise ValueError('cannot reshape array of size %d into shape %s' % (a.numel(), shape)) from None


@register('_np_transpose', inputs=('a',), attrs=[('axes', OPT_AXES)], shares_input=True)
def transpose(a, axes):
    """``a`` with its axes permuted (reversed by default)."""
    if a.dim() == 0:
        return a
    if axes is None:
        return a.permute(*range(a.dim() - 1, -1, -1))
    axes = _shape_tuple(axes)
    if len(axes) != a.dim():
        raise ValueError("transpose: axes don't match array (axes %s, %d dims)" % (axes, a.dim()))
    return a.permute(*axes_of(axes, a.dim(), 'transpose'))


@register('_npi_swapaxes', inputs=('data',), attrs=[('dim1', INT, 0), ('dim2', INT, 0)], shares_input=True)
def swapaxes(data, dim1, dim2):
    """``data`` with axes ``dim1`` and ``dim2`` interchanged."""
    return data.transpose(axis_index(dim1, data.dim(), 'swapaxes'), axis_index(dim2, data.dim(), 'swapaxes'))


@register('_np_moveaxis', inputs=('a',), attrs=[('source', _SHAPE_OR_INT), ('destination', _SHAPE_OR_INT)],
          shares_input=True)
def moveaxis(a, source, destination):
    """``a`` with axes ``source`` moved to ``destination``."""
    src = axes_of(_shape_tuple(source), a.dim(), 'moveaxis')
    dst = axes_of(_shape_tuple(destination), a.dim(), 'moveaxis')
    if len(src) != len(dst):
        raise ValueError('`source` and `destination` arguments must have the same number of elements')
    return torch.movedim(a, src, dst)


@register('_npi_expand_dims', inputs=('data',), attrs=[('axis', INT)], shares_input=True)
def expand_dims(data, axis):
    """``data`` with a new axis of length 1 at ``axis``."""
    return data.unsqueeze(axis_index(axis, data.dim() + 1, 'expand_dims'))


@register('_np_squeeze', inputs=('a',), attrs=[('axis', OPT_AXES)], shares_input=True)
def squeeze(a, axis):
    """``a`` without its length-1 axes (those in ``axis`` only, when given)."""
    if axis is None:
        return a.reshape([d for d in a.shape if d != 1])
    dims = axes_of(axis, a.dim(), 'squeeze')
    if a.dim() == 0:
        return a
    for d in dims:
        if a.shape[d] != 1:
            raise ValueError('cannot select an axis to squeeze out which has size not equal to one')
    return a.reshape([n for i, n in enumerate(a.shape) if i not in dims])


@register('_npi_flip', inputs=('data',), attrs=[('axis', OPT_AXES)])
def flip(data, axis):
    """``data`` reversed along ``axis`` (all axes for None)."""
    return torch.flip(data, axes_of(axis, data.dim(), 'flip'))


@register('_np_roll', inputs=('data',), attrs=[('shift', _SHAPE_OR_INT), ('axis', OPT_AXES)])
def roll(data, shift, axis):
    """Elements rolled by ``shift`` along ``axis`` (the flattened array for None)."""
    if axis is None:
        s = _shape_tuple(shift)
        if len(s) != 1:
            raise ValueError('roll: shift must be an int when axis is None')
        return torch.roll(data.reshape(-1), s[0]).reshape(data.shape)
    dims = axes_of(axis, data.dim(), 'roll')
    shifts = _shape_tuple(shift)
    if len(shifts) == 1 and len(dims) > 1:
        shifts = shifts * len(dims)
    if len(dims) == 1 and len(shifts) > 1:
        dims = dims * len(shifts)
    if len(shifts) != len(dims):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length")
    return torch.roll(data, shifts, dims)


@register('_npi_rot90', inputs=('data',), attrs=[('k', INT, 1), ('axes', OPT_AXES)])
def rot90(data, k, axes):
    """``data`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    axes = (0, 1) if axes is None else _shape_tuple(axes)
    if len(axes) != 2:
        raise ValueError('len(axes) must be 2.')
    if data.dim() < 2:
        raise ValueError('rot90: the array needs at least 2 dims, got shape %s' % (tuple(data.shape),))
    a0, a1 = axes_of(axes, data.dim(), 'rot90')
    if a0 == a1:
        raise ValueError('Axes must be different.')
    return torch.rot90(data, k, (a0, a1))


@register('_npi_tile', inputs=('data',), attrs=[('reps', _SHAPE_OR_INT)])
def tile(data, reps):
    """``data`` repeated ``reps`` times along each axis."""
    reps = _shape_tuple(reps)
    if any(r < 0 for r in reps):
        raise ValueError('tile: reps must be non-negative, got %s' % (reps,))
    if len(reps) < data.dim():
        reps = (1,) * (data.dim() - len(reps)) + reps
    if not reps:
        return data.clone()
    return data.reshape((1,) * (len(reps) - data.dim()) + tuple(data.shape)).repeat(*reps)


@register('_np_repeat', inputs=('data',), attrs=[('repeats', ANY), ('axis', OPT_INT, None)])
def repeat(data, repeats, axis):
    """Each element repeated ``repeats`` times (an int or one count per element) along ``axis``."""
    reps = repeats if isinstance(repeats, int) else torch.as_tensor(_np.asarray(repeats), device=data.device)
    if isinstance(reps, int) and reps < 0:
        raise ValueError('repeat: repeats may not contain negative values')
    if axis is None:
        return torch.repeat_interleave(data.reshape(-1), reps)
    return torch.repeat_interleave(data, reps, dim=axis_index(axis, data.dim(), 'repeat'))


def _joined(op, arrays):
    """``arrays`` promoted to one dtype (NumPy's rule for joins)."""
    dt = arrays[0].dtype
    for a in arrays[1:]:
        dt = torch.promote_types(dt, a.dtype)
    return [a if a.dtype is dt else a.to(dt) for a in arrays]


def _check_join(op, arrays, axis, stack):
    first = arrays[0].shape
    for i, a in enumerate(arrays[1:], 1):
        if a.dim() != len(first):
            raise ValueError('%s: all the input arrays must have same number of dimensions, but the array at '
                             'index 0 has %d dimension(s) and the array at index %d has %d dimension(s)'
                             % (op, len(first), i, a.dim()))
        for d, (m, n) in enumerate(zip(first, a.shape)):
            if m != n and (stack or d != axis):
                raise ValueError('%s: all the input array dimensions except for the concatenation axis must '
                                 'match exactly, but along dimension %d, the array at index 0 has size %d and '
                                 'the array at index %d has size %d' % (op, d, m, i, n))


_JOIN = DTypeRule(free=lambda attrs: tuple('arg%d' % i for i in range(attrs.get('num_args', 0))))


@register('_npi_concatenate', variadic='num_args', attrs=[('num_args', INT), ('dim', OPT_INT, 0)],
          dtypes=_JOIN)
def concatenate(*data, num_args, dim):  # pylint: disable=unused-argument
    """The arrays joined along axis ``dim`` (flattened first for None)."""
    if dim is None:
        return torch.cat(_joined('concatenate', [a.reshape(-1) for a in data]))
    if data[0].dim() == 0:
        raise ValueError('zero-dimensional arrays cannot be concatenated')
    axis = axis_index(dim, data[0].dim(), 'concatenate')
    _check_join('concatenate', data, axis, False)
    return torch.cat(_joined('concatenate', data), axis)


@register('_npi_stack', variadic='num_args', attrs=[('axis', INT, 0), ('num_args', INT)], dtypes=_JOIN)
def stack(*data, axis, num_args):   # pylint: disable=unused-argument
    """The arrays (of one shape) joined along a new axis ``axis``."""
    if not data:
        raise ValueError('need at least one array to stack')
    _check_join('stack', data, 0, True)
    return torch.stack(_joined('stack', data), axis_index(axis, data[0].dim() + 1, 'stack'))


@register('_npi_vstack', variadic='num_args', attrs=[('num_args', INT)], dtypes=_JOIN)
def vstack(*data, num_args):    # pylint: disable=unused-argument
    """The arrays (1-D ones as rows) joined along axis 0."""
    return torch.cat(_joined('vstack', [torch.atleast_2d(a) for a in data]), 0)


@register('_npi_hstack', variadic='num_args', attrs=[('num_args', INT), ('dim', INT, 1)], dtypes=_JOIN)
def hstack(*data, num_args, dim):   # pylint: disable=unused-argument
    """The arrays joined along axis 1 (axis 0 for 1-D arrays)."""
    arrays = [torch.atleast_1d(a) for a in data]
    return torch.cat(_joined('hstack', arrays), 0 if arrays[0].dim() == 1 else 1)


@register('_npi_dstack', variadic='num_args', attrs=[('num_args', INT), ('dim', INT, 1)], dtypes=_JOIN)
def dstack(*data, num_args, dim):   # pylint: disable=unused-argument
    """The arrays (made at least 3-D) joined along axis 2."""
    return torch.cat(_joined('dstack', [torch.atleast_3d(a) for a in data]), 2)


@register('_npi_column_stack', variadic='num_args', attrs=[('num_args', INT)], dtypes=_JOIN)
def column_stack(*data, num_args):  # pylint: disable=unused-argument
    """1-D arrays as columns (2-D ones as they are) joined along axis 1."""
    return torch.cat(_joined('column_stack', [a.reshape(-1, 1) if a.dim() < 2 else a for a in data]), 1)


def _atleast(n, fn):
    def impl(*arys, num_args):  # pylint: disable=unused-argument
        res = tuple(fn(a) for a in arys)
        return res
    impl.__doc__ = 'Each array with at least %d dims.' % n
    return impl


for _n, _fn in ((1, torch.atleast_1d), (2, torch.atleast_2d), (3, torch.atleast_3d)):
    register('_np_atleast_%dd' % _n, variadic='num_args', attrs=[('num_args', INT)], shares_input=True,
             num_outputs=lambda attrs: attrs['num_args'], dtypes=_JOIN)(_atleast(_n, _fn))


def split_bounds(length, indices, sections, op):
    """The split points of an axis of ``length``: ``sections`` equal parts (ValueError where
    they cannot be equal) or at ``indices``."""
    if sections:
        if length % sections:
            raise ValueError('array split does not result in an equal division')
        step = length // sections
        return [i * step for i in range(sections + 1)]
    return [0] + [min(max(int(i), 0), length) for i in indices] + [length]


def _split_count(attrs):
    return attrs['sections'] if attrs['sections'] else len(attrs['indices']) + 1


@register('_npi_split', inputs=('data',),
          attrs=[('indices', _SHAPE_OR_INT, ()), ('axis', INT, 1), ('squeeze_axis', BOOL, False),
                 ('sections', INT, 0)], num_outputs=_split_count, shares_input=True)
def split(data, indices, axis, squeeze_axis, sections):
    """``data`` cut along ``axis`` into ``sections`` equal parts or at ``indices``."""
    axis = axis_index(axis, data.dim(), 'split')
    bounds = split_bounds(data.shape[axis], _shape_tuple(indices) if indices else (), sections, 'split')
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        part = data.narrow(axis, lo, max(hi - lo, 0)) if hi >= lo else data.narrow(axis, lo, 0)
        parts.append(part.squeeze(axis) if squeeze_axis else part)
    return tuple(parts) if len(parts) != 1 else parts[0]     # one output: a tensor, as the graph counts it


@register('_npi_array_split', inputs=('data',),
          attrs=[('indices', _SHAPE_OR_INT, ()), ('axis', INT, 0), ('sections', INT, 0)],
          num_outputs=lambda attrs: attrs['sections'] if attrs['sections'] else len(attrs['indices']) + 1,
          shares_input=True)
def array_split(data, indices, axis, sections):
    """``data`` cut along ``axis`` into ``sections`` nearly equal parts or at ``indices``."""
    axis = axis_index(axis, data.dim(), 'array_split')
    n = data.shape[axis]
    if sections:
        size, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in _shape_tuple(indices)] + [n]
    parts = tuple(data.narrow(axis, lo, max(hi - lo, 0)) if hi >= lo else data.narrow(axis, min(lo, n), 0)
                  for lo, hi in zip(bounds[:-1], bounds[1:]))
    return parts if len(parts) != 1 else parts[0]      # one output: a tensor, as the graph counts it


@register('_npi_broadcast_to', inputs=('array',), attrs=[('shape', _SHAPE_OR_INT, ())], shares_input=True)
def broadcast_to(array, shape):
    """``array`` broadcast to ``shape`` (a read-only view in NumPy; here a new array)."""
    shape = _shape_tuple(shape)
    if -2 in shape:     # MXNet's code -2: the input's own size in that dim (counted from the right)
        offset = len(shape) - array.dim()
        shape = tuple(array.shape[i - offset] if d == -2 and i >= offset else d for i, d in enumerate(shape))
    try:
        return torch.broadcast_to(array, shape)
    except RuntimeError:
        raise ValueError('operands could not be broadcast together with remapped shapes [original->remapped]: '
                         '%s and requested shape %s' % (tuple(array.shape), shape)) from None


@register('_np_diag', inputs=('data',), attrs=[('k', INT, 0)])
def diag(data, k):
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with a 1-D array on it."""
    if data.dim() not in (1, 2):
        raise ValueError('Input must be 1- or 2-d.')
    return torch.diag(data, k)


@register('_np_diagflat', inputs=('data',), attrs=[('k', INT, 0)])
def diagflat(data, k):
    """A 2-D array with the flattened input on its ``k``-th diagonal."""
    return torch.diagflat(data, k)


@register('_np_diagonal', inputs=('data',), attrs=[('offset', INT, 0), ('axis1', INT, 0), ('axis2', INT, 1)],
          shares_input=True)
def diagonal(data, offset, axis1, axis2):
    """The diagonal at ``offset`` of the planes of ``axis1`` and ``axis2``, as the last axis."""
    if data.dim() < 2:
        raise ValueError('diag requires an array of at least two dimensions')
    a1, a2 = axis_index(axis1, data.dim(), 'diagonal'), axis_index(axis2, data.dim(), 'diagonal')
    if a1 == a2:
        raise ValueError('axis1 and axis2 cannot be the same')
    return torch.diagonal(data, offset, a1, a2)


@register('_np_trace', inputs=('data',), attrs=[('offset', INT, 0), ('axis1', INT, 0), ('axis2', INT, 1)])
def trace(data, offset, axis1, axis2):
    """Sum of the diagonal at ``offset`` of the planes of ``axis1`` and ``axis2``."""
    return diagonal(data, offset, axis1, axis2).sum(-1).to(data.dtype)


@register('_npi_tril', inputs=('data',), attrs=[('k', INT, 0)])
def tril(data, k):
    """The lower triangle (at and below the ``k``-th diagonal) of the last two axes."""
    if data.dim() == 1:
        data = data.unsqueeze(0).expand(data.shape[0], data.shape[0])
    return torch.tril(data, k)


@register('_npi_triu', inputs=('data',), attrs=[('k', INT, 0)])
def triu(data, k):
    """The upper triangle (at and above the ``k``-th diagonal) of the last two axes."""
    if data.dim() == 1:
        data = data.unsqueeze(0).expand(data.shape[0], data.shape[0])
    return torch.triu(data, k)


_PAD_MODES = ('constant', 'edge', 'reflect', 'symmetric', 'maximum', 'minimum')


@register('_npi_pad', inputs=('data',),
          attrs=[('pad_width', ANY), ('mode', Attr('str', str, 'constant', _PAD_MODES)),
                 ('constant_value', OPT_FLOAT, 0.0), ('reflect_type', Attr('str', str, 'even'))])
def pad(data, pad_width, mode, constant_value, reflect_type):  # pylint: disable=unused-argument
    """``data`` padded by ``pad_width`` ((before, after) per axis) in ``mode``."""
    host = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64).reshape(-1, 2) if _np.ndim(pad_width) else
                            _np.asarray(pad_width), (data.dim(), 2)) if data.dim() else _np.zeros((0, 2), _np.int64)
    widths = [(int(a), int(b)) for a, b in host]
    if any(a < 0 or b < 0 for a, b in widths):
        raise ValueError("index can't contain negative values")
    if mode == 'constant':
        flat = [w for a, b in reversed(widths) for w in (a, b)]
        return torch.nn.functional.pad(data, flat, value=constant_value or 0)
    res = data
    for d, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        n = res.shape[d]
        if mode == 'edge':
            idx = torch.cat([torch.zeros(before, dtype=torch.long), torch.arange(n),
                             torch.full((after,), n - 1, dtype=torch.long)])
        elif mode in ('reflect', 'symmetric'):
            period = torch.cat([torch.arange(n), torch.arange(n - 1 - (mode == 'reflect'), 0 - (mode == 'symmetric'),
                                                               -1)]) if n > 1 else torch.zeros(1, dtype=torch.long)
            if mode == 'symmetric':
                period = torch.cat([torch.arange(n), torch.arange(n - 1, -1, -1)])
            m = period.numel()
            idx = period[torch.remainder(torch.arange(-before, n + after), m)]
        else:
            fn = torch.amax if mode == 'maximum' else torch.amin
            ext = fn(res, dim=d, keepdim=True)
            res = torch.cat([ext.expand(*res.shape[:d], before, *res.shape[d + 1:]), res,
                             ext.expand(*res.shape[:d], after, *res.shape[d + 1:])], d)
            continue
        res = torch.index_select(res, d, idx.to(res.device))
    return res


@register('_npi_diff', inputs=('a',), attrs=[('n', INT, 1), ('axis', INT, -1)])
def diff(a, n, axis):
    """The ``n``-th discrete difference along ``axis``."""
    if n < 0:
        raise ValueError('order must be non-negative but got %d' % n)
    if n == 0:
        return a.clone()
    axis = axis_index(axis, a.dim(), 'diff')
    src = a if a.dtype is not torch.bool else a.to(torch.int8)
    res = torch.diff(src, n=n, dim=axis)
    return res if a.dtype is not torch.bool else res.bool()


@register('_npi_ediff1d', inputs=('input1', 'input2', 'input3'),
          attrs=[('to_begin_arr_given', BOOL, False), ('to_end_arr_given', BOOL, False),
                 ('to_begin_scalar', OPT_FLOAT, None), ('to_end_scalar', OPT_FLOAT, None)],
          optional_inputs=lambda attrs: tuple(n for n, given in (('input2', attrs['to_begin_arr_given']),
                                                                 ('input3', attrs['to_end_arr_given'])) if not given))
def ediff1d(input1, input2, input3, to_begin_arr_given, to_end_arr_given,  # pylint: disable=unused-argument
            to_begin_scalar, to_end_scalar):
    """Differences of consecutive elements of the flattened array, with values before and after."""
    flat = input1.reshape(-1)
    parts = []
    if input2 is not None:
        parts.append(input2.reshape(-1).to(flat.dtype))
    elif to_begin_scalar is not None:
        parts.append(torch.tensor([to_begin_scalar], dtype=flat.dtype, device=flat.device))
    parts.append(flat[1:] - flat[:-1])
    if input3 is not None:
        parts.append(input3.reshape(-1).to(flat.dtype))
    elif to_end_scalar is not None:
        parts.append(torch.tensor([to_end_scalar], dtype=flat.dtype, device=flat.device))
    return torch.cat(parts)


@register('_npi_take', inputs=('a', 'indices'),
          attrs=[('axis', OPT_INT, None), ('mode', Attr('str', str, 'raise', ('raise', 'wrap', 'clip')))],
          dtypes=DTypeRule(free=('indices',)))
def take(a, indices, axis, mode):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array for None)."""
    src = a.reshape(-1) if axis is None else a
    axis = 0 if axis is None else axis_index(axis, a.dim(), 'take')
    n = src.shape[axis]
    idx = indices.to(torch.int64)
    if mode == 'raise':
        if idx.numel() and (bool((idx >= n).any()) or bool((idx < -n).any())):
            raise IndexError('take: index out of bounds for axis %d with size %d' % (axis, n))
        idx = torch.remainder(idx, n) if n else idx
    elif mode == 'wrap':
        idx = torch.remainder(idx, n)
    else:
        idx = idx.clamp(0, n - 1)
    res = torch.index_select(src, axis, idx.reshape(-1))
    return res.reshape(src.shape[:axis] + idx.shape + src.shape[axis + 1:])


@register('_npi_boolean_mask', inputs=('data', 'index'), attrs=[('axis', INT, 0)],
          dtypes=DTypeRule(free=('index',)))
def boolean_mask(data, index, axis):
    """The entries of ``data`` along ``axis`` where ``index`` is true."""
    axis = axis_index(axis, data.dim(), 'boolean_mask')
    mask = index.bool().reshape(-1)
    return torch.index_select(data, axis, torch.nonzero(mask).reshape(-1))


@register('_npi_delete', inputs=('arr', 'obj'),
          attrs=[('start', OPT_INT, None), ('stop', OPT_INT, None), ('step', OPT_INT, None),
                 ('int_ind', OPT_INT, None), ('axis', OPT_INT, None)],
          optional_inputs=lambda attrs: ('obj',) if attrs['int_ind'] is not None or attrs['start'] is not None
          or attrs['stop'] is not None or attrs['step'] is not None else (),
          dtypes=DTypeRule(free=('obj',)))
def delete(arr, obj, start, stop, step, int_ind, axis):
    """``arr`` without the entries ``obj`` (indices, a slice or an int) along ``axis``."""
    src = arr.reshape(-1) if axis is None else arr
    axis = 0 if axis is None else axis_index(axis, arr.dim(), 'delete')
    n = src.shape[axis]
    keep = torch.ones(n, dtype=torch.bool)
    if int_ind is not None:
        if not -n <= int_ind < n:
            raise IndexError('index %d is out of bounds for axis %d with size %d' % (int_ind, axis, n))
        keep[int_ind % n] = False
    elif obj is not None:
        idx = obj.to(torch.int64).reshape(-1).cpu() if obj.dtype is not torch.bool else \
            torch.nonzero(obj.reshape(-1).cpu()).reshape(-1)
        keep[idx[(idx >= 0) & (idx < n)]] = False     # as MXNet: indices outside [0, n) are ignored
    else:
        host = keep.numpy()
        host[slice(start, stop, step)] = False      # numpy: negative steps too
        keep = torch.from_numpy(host)
    return torch.index_select(src, axis, torch.nonzero(keep).reshape(-1).to(src.device))


@register('_npi_insert', inputs=('arr', 'values', 'obj'),
          attrs=[('val', OPT_FLOAT, None), ('start', OPT_INT, None), ('stop', OPT_INT, None), ('step', OPT_INT, None),
                 ('int_ind', OPT_INT, None), ('axis', OPT_INT, None)],
          optional_inputs=lambda attrs: (('values',) if attrs['val'] is not None else ()) + (
              ('obj',) if attrs['int_ind'] is not None or attrs['start'] is not None or attrs['stop'] is not None
              or attrs['step'] is not None else ()),
          dtypes=DTypeRule(free=('values', 'obj')))
def insert(arr, values, obj, val, start, stop, step, int_ind, axis):
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis`` (NumPy's
    ``insert``: an int index inserts the values as they are, a sequence one value per index)."""
    host = arr.detach().cpu().numpy()
    if values is not None:
        vals = values.detach().cpu().numpy()
    else:
        vals = val
    if int_ind is not None:
        index = int_ind
    elif obj is not None:
        index = obj.detach().cpu().numpy()
    else:
        index = slice(start, stop, step)
    res = _np.insert(host, index, vals, axis=axis)
    return torch.from_numpy(_np.ascontiguousarray(res)).to(device=arr.device, dtype=arr.dtype)


@register('_npi_diag_indices_from', inputs=('data',), dtypes=DTypeRule(free=('data',), output='int64'))
def diag_indices_from(data):
    """The indices of the main diagonal of a square array: one row per axis."""
    if data.dim() < 2:
        raise ValueError('input array must be at least 2-d')
    if len(set(data.shape)) != 1:
        raise ValueError('All dimensions of input must be of equal length')
    idx = torch.arange(data.shape[0], device=data.device)
    return idx.unsqueeze(0).expand(data.dim(), -1).clone()


@register('_npi_share_memory', inputs=('a', 'b'), dtypes=DTypeRule(free=('a', 'b'), output='bool'))
def share_memory(a, b):
    """Whether the two arrays' memory overlaps (a zero-dim bool)."""
    if a.numel() == 0 or b.numel() == 0:
        return torch.tensor(False)
    sa = a.untyped_storage().data_ptr()
    if sa != b.untyped_storage().data_ptr():
        return torch.tensor(False)
    def extent(t):
        lo = t.storage_offset()
        hi = lo + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1
        return lo * t.element_size(), hi * t.element_size()
    (alo, ahi), (blo, bhi) = extent(a), extent(b)
    return torch.tensor(alo < bhi and blo < ahi)


def _mask_assign(data, mask, value, start_axis):
    res = data.clone()
    axis = axis_index(start_axis, data.dim(), 'boolean_mask_assign')
    index = (slice(None),) * axis + (mask.bool(),)
    res[index] = value
    return res


@register('_npi_boolean_mask_assign_scalar', inputs=('data', 'mask'),
          attrs=[('value', OPT_FLOAT, None), ('start_axis', INT, 0)], dtypes=DTypeRule(free=('mask',)))
def boolean_mask_assign_scalar(data, mask, value, start_axis):
    """``data`` with ``value`` where ``mask`` (over the axes from ``start_axis``) is true."""
    return _mask_assign(data, mask, value if data.dtype.is_floating_point else int(value), start_axis)


@register('_npi_boolean_mask_assign_tensor', inputs=('data', 'mask', 'value'), attrs=[('start_axis', INT, 0)],
          dtypes=DTypeRule(free=('mask',)))
def boolean_mask_assign_tensor(data, mask, value, start_axis):
    """``data`` with the entries of ``value`` where ``mask`` (from ``start_axis``) is true."""
    return _mask_assign(data, mask, value.to(data.dtype), start_axis)


@register('_npi_hsplit', inputs=('data',),
          attrs=[('indices', _SHAPE_OR_INT, ()), ('axis', INT, 1), ('squeeze_axis', BOOL, False),
                 ('sections', INT, 0)], num_outputs=_split_count, shares_input=True)
def hsplit(data, indices, axis, squeeze_axis, sections):    # pylint: disable=unused-argument
    """``data`` cut along axis 1 (axis 0 for 1-D arrays) into ``sections`` or at ``indices``."""
    if data.dim() == 0:
        raise ValueError('hsplit only works on arrays of 1 or more dimensions')
    return split(data, indices, 1 if data.dim() > 1 else 0, squeeze_axis, sections)


@register('_npi_resize_fallback', inputs=('a',), attrs=[('new_shape', _SHAPE_OR_INT)])
def resize(a, new_shape):
    """``a``'s elements repeated (or cut) in order to fill ``new_shape`` (NumPy's ``resize``)."""
    dims = _shape_tuple(new_shape)
    if any(d < 0 for d in dims):
        raise ValueError('all elements of `new_shape` must be non-negative')
    total = 1
    for d in dims:
        total *= d
    flat = a.reshape(-1)
    if total == 0 or flat.numel() == 0:
        return torch.zeros(dims, dtype=a.dtype, device=a.device)
    reps = -(-total // flat.numel())
    return flat.repeat(reps)[:total].reshape(dims)
