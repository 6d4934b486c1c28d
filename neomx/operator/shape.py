"""Shape operators: reshape (with MXNet's special codes), transpose, expand/squeeze,
flatten, concat/stack/split, slicing, tile/repeat/pad/flip and broadcasting.

Operators whose torch counterpart returns a strided view (transpose, broadcast_to...)
return contiguous copies, as MXNet's operators produce new arrays; the reshape family
returns views, which MXNet's reshape also does.
"""
import math

import torch

from ..base import MXNetError
from ..util import is_np_shape
from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, INT, OPT_INT, OPT_SHAPE, SHAPE, OpSpec, check, choice, register, variadic_name


class ReshapeSizeError(MXNetError, ValueError):
    """A reshape to a different number of elements: MXNet raises it as a ValueError."""


def infer_reshape(src, target, reverse=False):
    """Output shape of reshaping ``src`` to ``target`` with MXNet's codes.

    ``0`` copies the input dim, ``-1`` infers one dim, ``-2`` copies all remaining dims,
    ``-3`` merges two consecutive input dims, ``-4, a, b`` splits one input dim into
    ``a x b`` (one of them may be -1). ``reverse`` matches the codes right to left.
    """
    src, target = list(src), list(target)
    if reverse:
        src, target = src[::-1], target[::-1]
    out, i, j, infer = [], 0, 0, None
    while j < len(target):
        v = target[j]
        if v > 0:
            out.append(v)
            i += 1
        elif v == 0:
            if i >= len(src):
                raise MXNetError('reshape: code 0 at position %d has no input dim to copy (input %s, '
                                 'shape %s)' % (j, tuple(src), tuple(target)))
            out.append(src[i])
            i += 1
        elif v == -1:
            if infer is not None:
                raise MXNetError('reshape: one and only one dim can be inferred (-1), got shape %s '
                                 'for input %s' % (tuple(target), tuple(src)))
            infer = len(out)
            out.append(1)
            i += 1
        elif v == -2:
            out.extend(src[i:])
            i = len(src)
        elif v == -3:
            if i + 1 >= len(src):
                raise MXNetError('reshape: code -3 needs two input dims at position %d (input %s)'
                                 % (i, tuple(src)))
            out.append(src[i] * src[i + 1])
            i += 2
        elif v == -4:
            if j + 2 >= len(target):
                raise MXNetError('reshape: code -4 must be followed by two dims (shape %s)' % (tuple(target),))
            # with reverse, the pair is read in the reversed codes' order too: (16, 4, -4)
            # splits the last dim into 16 x 4
            a, b = target[j + 1], target[j + 2]
            d = src[i]
            if a == -1:
                a = d // b if b else 0
            if b == -1:
                b = d // a if a else 0
            if a * b != d:
                raise MXNetError('reshape: code -4 cannot split dim %d into %d x %d (input %s)'
                                 % (d, a, b, tuple(src)))
            out.extend([a, b])
            i += 1
            j += 2
        else:
            raise MXNetError('reshape: invalid code %d in shape %s' % (v, tuple(target)))
        j += 1
    total = math.prod(src)
    if infer is not None:
        known = math.prod(out)
        if known == 0 or total % known:
            raise MXNetError('reshape: cannot infer the -1 dim when reshaping %s to %s'
                             % (tuple(src), tuple(target)))
        out[infer] = total // known
    if math.prod(out) != total:
        raise ReshapeSizeError('reshape: target shape size is different from source: cannot reshape %s '
                         '(size %d) to %s (size %d)' % (tuple(src), total, tuple(target), math.prod(out)))
    return tuple(out[::-1]) if reverse else tuple(out)


@register('Reshape', shares_input=True, inputs=('data',),
          attrs=[('shape', SHAPE, ()), ('reverse', BOOL, False), ('target_shape', SHAPE, ()),
                 ('keep_highest', BOOL, False)],
          aliases=('reshape',))
def reshape(data, shape, reverse, target_shape, keep_highest):
    """Reshape with MXNet's special codes (see :func:`infer_reshape`).

    The deprecated ``target_shape`` applies only without ``shape``: its one 0 is inferred, and
    ``keep_highest`` keeps the input's first dim in place of the target's.
    """
    if not shape and target_shape:
        target = (data.shape[0],) + target_shape[1:] if keep_highest else target_shape
        shape = tuple(-1 if d == 0 else d for d in target)
    return data.reshape(infer_reshape(tuple(data.shape), shape, reverse))


# ------------------------------------------------------------------ helpers
def copy_of(tensor):
    """A contiguous copy: MXNet's operators write new arrays, never views of their inputs."""
    return tensor.clone(memory_format=torch.contiguous_format)


def normalize_axis(axis, ndim, op, name='axis'):
    """``axis`` in ``[-ndim, ndim)`` as a non-negative int; MXNetError naming ``op`` otherwise."""
    check(-ndim <= axis < ndim, op, '%s %d is out of range for an array of %d dims', name, axis, ndim)
    return axis % ndim


def flip_negative_steps(key, shape):
    """Rewrite the negative-step slices of an index tuple for torch, which has no negative strides.

    A slice with a negative step along dim ``d`` picks the same elements, in the same order,
    as a positive-step slice of the tensor flipped along ``d``.

    Parameters
    ----------
    key : tuple
        Index items: ints, slices, ``None``, ``Ellipsis``, index tensors.
    shape : tuple of int
        Shape of the indexed tensor.

    Returns
    -------
    dims : list of int
        The dims of the tensor to flip.
    key : tuple
        The same index with those slices rewritten for the flipped tensor.
    """
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    dims, out, dim = [], [], 0
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - consumed
        elif k is not None:
            if isinstance(k, slice) and k.step is not None and k.step < 0:
                n = shape[dim]
                start, stop, step = k.indices(n)
                k = slice(n - 1 - start, n - 1 - stop, -step)
                dims.append(dim)
            dim += 1
        out.append(k)
    return dims, tuple(out)


def strided_slice(tensor, key):
    """``tensor[key]`` for a basic index whose slices may have negative steps (a copy then)."""
    if any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in key):
        dims, key = flip_negative_steps(key, tuple(tensor.shape))
        tensor = tensor.flip(dims)
    return tensor[key]


def _broadcast(op, data, target):
    """``data`` expanded to ``target`` (same ndim; each dim equal or 1 in ``data``), as a copy."""
    src = tuple(data.shape)
    check(len(src) == len(target) and all(s in (t, 1) for s, t in zip(src, target)), op,
          'an array of shape %s cannot be broadcast to %s', src, tuple(target))
    return copy_of(data.expand(*target))


# -------------------------------------------------------- axes and layout
@register('transpose', inputs=('data',), attrs=[('axes', SHAPE, ())])
def transpose(data, axes):
    """Permute the axes of ``data``; no ``axes`` reverses them. Output: ``data.shape`` permuted."""
    ndim = data.dim()
    if not axes:
        axes = tuple(range(ndim - 1, -1, -1))
    axes = tuple(normalize_axis(a, ndim, 'transpose', 'axes entry') for a in axes)
    check(sorted(axes) == list(range(ndim)), 'transpose', 'axes %s are not a permutation of the %d '
          'dims of an array of shape %s', axes, ndim, data.shape)
    return copy_of(data.permute(axes))


@register('SwapAxis', inputs=('data',), attrs=[('dim1', INT, 0), ('dim2', INT, 0)],
          aliases=('swapaxes',))
def swap_axis(data, dim1, dim2):
    """Exchange axes ``dim1`` and ``dim2`` of ``data``."""
    ndim = data.dim()
    return copy_of(data.transpose(normalize_axis(dim1, ndim, 'SwapAxis', 'dim1'),
                                  normalize_axis(dim2, ndim, 'SwapAxis', 'dim2')))


@register('expand_dims', shares_input=True, inputs=('data',), attrs=[('axis', INT)])
def expand_dims(data, axis):
    """Insert a dim of size 1 at ``axis`` (in ``[-ndim-1, ndim]``); a view."""
    return data.unsqueeze(normalize_axis(axis, data.dim() + 1, 'expand_dims'))


@register('squeeze', shares_input=True, inputs=('data',), attrs=[('axis', OPT_SHAPE, None)])
def squeeze(data, axis):
    """Remove the size-1 dims listed in ``axis`` (all of them for None); a view.

    MXNet keeps one dim: squeezing every dim of ``(1, 1)`` gives shape ``(1,)``.
    """
    shape = tuple(data.shape)
    if axis is None:
        axis = [d for d, n in enumerate(shape) if n == 1]
    else:
        axis = [normalize_axis(a, len(shape), 'squeeze') for a in axis]
        check(all(shape[a] == 1 for a in axis), 'squeeze', 'cannot squeeze axes %s of shape %s: '
              'their size is not 1', tuple(axis), shape)
    out = tuple(n for d, n in enumerate(shape) if d not in axis)
    return data.reshape(out or (1,))


@register('Flatten', shares_input=True, inputs=('data',), aliases=('flatten',))
def flatten(data):
    """Collapse all dims but the first: ``(n, d1, d2...)`` -> ``(n, d1*d2*...)``.

    A 1-D input of shape ``(n,)`` becomes ``(n, 1)``; the result is a view.
    """
    return data.reshape(data.shape[0], math.prod(data.shape[1:]))


@register('depth_to_space', inputs=('data',), attrs=[('block_size', INT)])
def depth_to_space(data, block_size):
    """Move depth blocks to space: ``(N, C*b*b, H, W)`` -> ``(N, C, H*b, W*b)``.

    Channels are read block-row, block-column, then channel (MXNet's order, the "DCR" mode).
    """
    b = block_size
    _check_block('depth_to_space', data, b)
    check(data.dim() == 4 and data.shape[1] % (b * b) == 0, 'depth_to_space',
          'expects a 4-D input whose dim 1 is a multiple of block_size^2 = %d, got shape %s',
          b * b, data.shape)
    n, c, h, w = data.shape
    blocks = data.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return blocks.reshape(n, c // (b * b), h * b, w * b)


def _check_block(op, data, block_size):
    check(block_size > 0, op, 'block_size must be positive, got %d', block_size)
    # legacy shape semantics read a 0 dimension as unknown: MXNet refuses it here
    check(is_np_shape() or all(d > 0 for d in data.shape), op, 'input shape %s has a zero dimension',
          data.shape)


@register('space_to_depth', inputs=('data',), attrs=[('block_size', INT)])
def space_to_depth(data, block_size):
    """Inverse of :func:`depth_to_space`: ``(N, C, H*b, W*b)`` -> ``(N, C*b*b, H, W)``."""
    b = block_size
    _check_block('space_to_depth', data, b)
    check(data.dim() == 4 and data.shape[2] % b == 0 and data.shape[3] % b == 0, 'space_to_depth',
          'expects a 4-D input whose dims 2 and 3 are multiples of block_size %d, got shape %s',
          b, data.shape)
    n, c, h, w = data.shape
    blocks = data.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return blocks.reshape(n, c * b * b, h // b, w // b)


@register('reverse', inputs=('data',), attrs=[('axis', SHAPE)], aliases=('flip',), same_shape=True)
def reverse(data, axis):
    """Reverse the order of elements along each axis in ``axis``."""
    return torch.flip(data, [normalize_axis(a, data.dim(), 'reverse') for a in axis])


# ----------------------------------------------------------- join / split
def _check_joinable(op, arrays, axis, same_axis):
    """All ``arrays`` share dtype, ndim and every dim (but ``axis`` unless ``same_axis``)."""
    first = arrays[0]
    shape, dtype = first.shape, first.dtype
    head, tail = shape[:axis], shape[axis + 1:]
    for a in arrays[1:]:
        s = a.shape
        if a.dtype is dtype and (s == shape if same_axis else
                                 (len(s) == len(shape) and s[:axis] == head and s[axis + 1:] == tail)):
            continue
        check(a.dtype == dtype, op, 'inputs have different dtypes %s and %s', dtype, a.dtype)
        check(False, op, 'input shapes %s and %s do not match (axis %d)', tuple(shape), tuple(s), axis)


@register('Concat', variadic='num_args', attrs=[('num_args', INT), ('dim', INT, 1)],
          aliases=('concat',))
def concat(*arrays, num_args, dim):
    """Join arrays along existing axis ``dim``; other dims must match."""
    dim = normalize_axis(dim, arrays[0].dim(), 'Concat', 'dim')
    _check_joinable('Concat', arrays, dim, same_axis=False)
    return torch.cat(arrays, dim)


# Gluon's RNN layers join their flattened weights with it (MXNet's graphs name it so).
register('_rnn_param_concat', variadic='num_args', attrs=[('num_args', INT), ('dim', INT, 1)])(concat)


@register('stack', variadic='num_args', attrs=[('axis', INT, 0), ('num_args', INT)])
def stack(*arrays, axis, num_args):
    """Join arrays of the same shape along a new axis ``axis`` (in ``[-ndim-1, ndim]``)."""
    axis = normalize_axis(axis, arrays[0].dim() + 1, 'stack')
    _check_joinable('stack', arrays, axis, same_axis=True)
    return torch.stack(arrays, axis)


def _split_at(op, data, bounds, axis, squeeze_axis):
    """Copies of ``data`` between consecutive ``bounds`` along ``axis``, optionally squeezed."""
    parts = [data.narrow(axis, lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])]
    if squeeze_axis:
        check(all(p.shape[axis] == 1 for p in parts), op, 'squeeze_axis needs parts of size 1 along '
              'axis %d, got sizes %s', axis, [p.shape[axis] for p in parts])
        parts = [p.squeeze(axis) for p in parts]
    parts = tuple(copy_of(p) for p in parts)
    return parts if len(parts) > 1 else parts[0]    # one output: the array itself, as any op


def _numbered_outputs(count):
    """``output_names`` of splits: ``output0``, ``output1``... even for a single part, as MXNet."""
    return lambda attrs: tuple('output%d' % i for i in range(count(attrs)))


@register('SliceChannel', inputs=('data',),
          attrs=[('num_outputs', INT), ('axis', INT, 1), ('squeeze_axis', BOOL, False)],
          aliases=('split',), num_outputs=lambda a: a['num_outputs'],
          output_names=_numbered_outputs(lambda a: a['num_outputs']))
def slice_channel(data, num_outputs, axis, squeeze_axis):
    """Split ``data`` into ``num_outputs`` equal parts along ``axis`` (a list of arrays)."""
    axis = normalize_axis(axis, data.dim(), 'SliceChannel')
    size = data.shape[axis]
    check(num_outputs > 0 and size % num_outputs == 0, 'SliceChannel', 'cannot split axis %d of '
          'size %d into %d equal parts (shape %s)', axis, size, num_outputs, data.shape)
    step = size // num_outputs
    return _split_at('SliceChannel', data, range(0, size + 1, step), axis, squeeze_axis)


@register('_split_v2', inputs=('data',),
          attrs=[('indices', SHAPE), ('axis', INT, 1), ('squeeze_axis', BOOL, False),
                 ('sections', INT, 0)],
          num_outputs=lambda a: a['sections'] or len(a['indices']))
def split_v2(data, indices, axis, squeeze_axis, sections):
    """Split along ``axis`` into ``sections`` equal parts, or at the start positions ``indices``."""
    axis = normalize_axis(axis, data.dim(), '_split_v2')
    size = data.shape[axis]
    if sections:
        check(size % sections == 0, '_split_v2', 'cannot split axis %d of size %d into %d equal '
              'sections', axis, size, sections)
        indices = range(0, size, size // sections)
    bounds = tuple(indices) + (size,)
    check(all(0 <= lo <= hi for lo, hi in zip(bounds[:-1], bounds[1:])), '_split_v2',
          'indices %s must be increasing and within the size %d of axis %d', tuple(indices), size, axis)
    return _split_at('_split_v2', data, bounds, axis, squeeze_axis)


# ---------------------------------------------------------------- slicing
@register('slice', inputs=('data',),
          attrs=[('begin', SHAPE), ('end', SHAPE), ('step', OPT_SHAPE, ())], aliases=('crop',))
def slice_op(data, begin, end, step):
    """``data[b0:e0:s0, b1:e1:s1, ...]`` for the leading dims; None entries take the defaults
    (``step=None`` too, as MXNet reads it)."""
    step = step or ()
    check(len(begin) == len(end) and len(begin) <= data.dim() and len(step) in (0, len(begin)),
          'slice', 'begin %s, end %s and step %s must have one entry per sliced dim (input shape %s)',
          begin, end, step, data.shape)
    check(0 not in step, 'slice', 'step cannot be 0 (step %s)', step)
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin)))
    return copy_of(strided_slice(data, key))


@register('slice_axis', inputs=('data',), attrs=[('axis', INT), ('begin', INT), ('end', OPT_INT)])
def slice_axis(data, axis, begin, end):
    """Elements ``begin:end`` of ``data`` along ``axis`` (negative values count from the end)."""
    axis = normalize_axis(axis, data.dim(), 'slice_axis')
    size = data.shape[axis]
    lo = begin + size if begin < 0 else begin
    hi = size if end is None else (end + size if end < 0 else end)
    check(0 <= lo < hi <= size, 'slice_axis', 'invalid range begin=%d, end=%s for axis %d of size %d',
          begin, end, axis, size)
    return copy_of(data.narrow(axis, lo, hi - lo))


@register('slice_like', inputs=('data', 'shape_like'), attrs=[('axes', SHAPE, ())],
          dtypes=DTypeRule(free=('shape_like',)))
def slice_like(data, shape_like, axes):
    """The leading part of ``data`` with the sizes of ``shape_like`` along ``axes`` (all if empty)."""
    if not axes:
        check(data.dim() == shape_like.dim(), 'slice_like', 'data %s and shape_like %s must have '
              'the same number of dims when axes is empty', data.shape, shape_like.shape)
        axes = range(data.dim())
    key = [slice(None)] * data.dim()
    for a in axes:
        d = normalize_axis(a, data.dim(), 'slice_like', 'axes entry')
        like = shape_like.shape[normalize_axis(a, shape_like.dim(), 'slice_like', 'axes entry')]
        check(like <= data.shape[d], 'slice_like', 'shape_like %s is larger than data %s along axis %d',
              shape_like.shape, data.shape, a)
        key[d] = slice(0, like)
    return copy_of(data[tuple(key)])


@register('diag', inputs=('data',), attrs=[('k', INT, 0), ('axis1', INT, 0), ('axis2', INT, 1)])
def diag(data, k, axis1, axis2):
    """1-D input: a square matrix with ``data`` on diagonal ``k``. N-D input: diagonal ``k`` of
    the ``(axis1, axis2)`` planes, appended as the last dim (numpy's ``diagonal``)."""
    check(data.dim() >= 1, 'diag', 'input must have at least 1 dim, got shape %s', data.shape)
    if data.dim() == 1:
        return torch.diag(data, k)
    ndim = data.dim()
    d1, d2 = normalize_axis(axis1, ndim, 'diag', 'axis1'), normalize_axis(axis2, ndim, 'diag', 'axis2')
    check(-data.shape[d1] < k < data.shape[d2], 'diag', 'diagonal %d does not exist in an array of '
          'shape %s (axes %d, %d)', k, data.shape, d1, d2)
    return copy_of(torch.diagonal(data, k, d1, d2))


# ---------------------------------------------------------------- repeats
@register('tile', inputs=('data',), attrs=[('reps', SHAPE)])
def tile(data, reps):
    """Repeat the whole array ``reps[i]`` times along each dim (numpy's ``tile``)."""
    # a 0 repeat is allowed only in NumPy shape semantics (legacy shapes read 0 as unknown)
    check(all(r > 0 or (r == 0 and is_np_shape()) for r in reps), 'tile',
          'reps %s must be positive (0 only with NumPy shape semantics)', tuple(reps))
    return torch.tile(data, reps) if reps else copy_of(data)


@register('repeat', inputs=('data',), attrs=[('repeats', INT), ('axis', OPT_INT, None)])
def repeat(data, repeats, axis):
    """Repeat each element ``repeats`` times along ``axis``; None repeats the flattened array."""
    check(repeats >= 0, 'repeat', 'repeats must be non-negative, got %d', repeats)
    if axis is None:
        return data.reshape(-1).repeat_interleave(repeats)
    return data.repeat_interleave(repeats, normalize_axis(axis, data.dim(), 'repeat'))


_PAD_MODES = {'constant': 'constant', 'edge': 'replicate', 'reflect': 'reflect'}


@register('Pad', inputs=('data',),
          attrs=[('mode', choice('constant', 'edge', 'reflect')), ('pad_width', SHAPE),
                 ('constant_value', FLOAT, 0.0)], aliases=('pad',))
def pad(data, mode, pad_width, constant_value):
    """Pad the spatial dims of a 4-D or 5-D array.

    ``pad_width`` holds ``(before, after)`` for every dim; those of the first two dims (batch
    and channel) must be 0. ``edge`` repeats the border value, ``reflect`` mirrors without it.
    """
    ndim = data.dim()
    check(ndim in (4, 5), 'Pad', 'only 4-D and 5-D inputs are supported, got shape %s', data.shape)
    check(len(pad_width) == 2 * ndim, 'Pad', 'pad_width %s must have 2 entries per dim of shape %s',
          pad_width, data.shape)
    check(not any(pad_width[:4]), 'Pad', 'padding of the first two axes must be 0, got pad_width %s',
          pad_width)
    # torch lists (before, after) pairs from the last dim backwards.
    torch_pads = [w for d in range(ndim - 1, 1, -1) for w in pad_width[2 * d:2 * d + 2]]
    if mode == 'constant':
        return torch.nn.functional.pad(data, torch_pads, 'constant', constant_value)
    if mode == 'reflect':
        check(all(pad_width[2 * d] < data.shape[d] and pad_width[2 * d + 1] < data.shape[d]
                  for d in range(2, ndim)), 'Pad', 'reflect padding must be smaller than the input '
              'size: pad_width %s, shape %s', pad_width, data.shape)
    return torch.nn.functional.pad(data, torch_pads, _PAD_MODES[mode])


# ------------------------------------------------------------ broadcasting
@register('broadcast_to', inputs=('data',), attrs=[('shape', SHAPE, ())])
def broadcast_to(data, shape):
    """Expand the size-1 dims of ``data`` to ``shape``; a 0 in ``shape`` keeps that dim."""
    target = tuple(s if t == 0 else t for s, t in zip(data.shape, shape)) + tuple(shape[data.dim():])
    return _broadcast('broadcast_to', data, target)


@register('broadcast_like', inputs=('lhs', 'rhs'), dtypes=DTypeRule(free=('rhs',)),
          attrs=[('lhs_axes', OPT_SHAPE, None), ('rhs_axes', OPT_SHAPE, None)])
def broadcast_like(lhs, rhs, lhs_axes, rhs_axes):
    """Broadcast ``lhs`` to the shape of ``rhs``, or only its ``lhs_axes`` to the sizes of
    ``rhs_axes`` of ``rhs`` (both given, non-empty; with one missing the whole shape, as
    MXNet)."""
    if lhs_axes is None or rhs_axes is None:
        return _broadcast('broadcast_like', lhs, tuple(rhs.shape))
    check(len(lhs_axes) > 0 and len(rhs_axes) > 0, 'broadcast_like',
          'empty axes tuple is not allowed (lhs_axes %s, rhs_axes %s)', lhs_axes, rhs_axes)
    check(len(lhs_axes) == len(rhs_axes),
          'broadcast_like', 'lhs_axes %s and rhs_axes %s must have the same length', lhs_axes, rhs_axes)
    target = list(lhs.shape)
    for la, ra in zip(lhs_axes, rhs_axes):
        target[normalize_axis(la, lhs.dim(), 'broadcast_like', 'lhs_axes entry')] = \
            rhs.shape[normalize_axis(ra, rhs.dim(), 'broadcast_like', 'rhs_axes entry')]
    return _broadcast('broadcast_like', lhs, target)


@register('broadcast_axis', inputs=('data',), attrs=[('axis', SHAPE, ()), ('size', SHAPE, ())],
          aliases=('broadcast_axes',))
def broadcast_axis(data, axis, size):
    """Expand each size-1 dim ``axis[i]`` of ``data`` to ``size[i]``."""
    check(len(axis) == len(size), 'broadcast_axis', 'axis %s and size %s must have the same length',
          axis, size)
    target = list(data.shape)
    for a, n in zip(axis, size):
        d = normalize_axis(a, data.dim(), 'broadcast_axis')
        check(target[d] == 1, 'broadcast_axis', 'axis %d to broadcast must have size 1, shape is %s',
              a, data.shape)
        target[d] = n
    return _broadcast('broadcast_axis', data, target)


# -------------------------------------------------------------- metadata
@register('shape_array', inputs=('data',), dtypes=DTypeRule(output='int64'))
def shape_array(data):
    """The shape of ``data`` as a 1-D int64 array."""
    return torch.tensor(tuple(data.shape), dtype=torch.int64, device=data.device)


@register('size_array', inputs=('data',), dtypes=DTypeRule(output='int64'))
def size_array(data):
    """The number of elements of ``data`` as an int64 array of shape (1,)."""
    return torch.tensor((data.numel(),), dtype=torch.int64, device=data.device)


class _SplitBackwardSpec(OpSpec):
    """``_split_v2_backward``'s entry: one input per output of the split it reverses."""

    def input_names(self, attrs, num_args=None):
        count = (attrs['sections'] or len(attrs['indices'])) if num_args is None else num_args
        return tuple(variadic_name(i) for i in range(count))


@register('_split_v2_backward', variadic=True, spec_class=_SplitBackwardSpec,
          attrs=[('indices', SHAPE), ('axis', INT, 1), ('squeeze_axis', BOOL, False), ('sections', INT, 0)])
def split_v2_backward(*grads, indices, axis, squeeze_axis, sections):
    """The gradient pass of ``_split_v2`` (same attributes): the gradients of its outputs
    joined back along ``axis`` (restored first where ``squeeze_axis`` removed it)."""
    count = sections or len(indices)
    check(len(grads) == count, '_split_v2_backward', 'expects %d gradients (one per part of the split), got %d',
          count, len(grads))
    if squeeze_axis:
        axis = normalize_axis(axis, grads[0].dim() + 1, '_split_v2_backward')
        grads = [g.unsqueeze(axis) for g in grads]
    else:
        axis = normalize_axis(axis, grads[0].dim(), '_split_v2_backward')
    return torch.cat(grads, dim=axis)
