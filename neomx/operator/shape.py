"""Shape operators: reshape (with MXNet's special codes), transpose, expand/squeeze,
flatten, concat/stack/split, slicing, tile/repeat/pad/flip and broadcasting.

Operators whose torch counterpart returns a strided view (transpose, broadcast_to...)
return contiguous copies, as MXNet's operators produce new arrays; the reshape family
returns views, which MXNet's reshape also does.
"""
import math

import torch

from ..base import MXNetError
from .registry import BOOL, SHAPE, register


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
            a, b = target[j + 1], target[j + 2]
            if reverse:
                a, b = b, a
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
        raise MXNetError('reshape: target shape size is different from source: cannot reshape %s '
                         '(size %d) to %s (size %d)' % (tuple(src), total, tuple(target), math.prod(out)))
    return tuple(out[::-1]) if reverse else tuple(out)


@register('Reshape', inputs=('data',), attrs=[('shape', SHAPE, ()), ('reverse', BOOL, False)],
          aliases=('reshape',))
def reshape(data, shape, reverse):
    """Reshape with MXNet's special codes (see :func:`infer_reshape`)."""
    return data.reshape(infer_reshape(tuple(data.shape), shape, reverse))
