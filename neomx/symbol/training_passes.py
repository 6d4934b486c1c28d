"""Graph rewrites for training on CPUs: the same values and gradients, cheaper kernels.

Hybridized blocks run their graph through these passes (default backend, CPU contexts)
for every call but predict-mode inference outside ``autograd.record()``, which runs the
inference rewrites of :mod:`neomx.symbol.passes`. Each rewrite is exact in every mode
(recorded or not, training or predict mode):

* :func:`pool_before_relu`: ``max-pool(relu(x))`` runs as ``relu(max-pool(x))``. relu is
  monotone, so both give the same values, and the same gradient: both pass the output's
  gradient to the window's (first) maximum where it is positive and nowhere else. relu
  and its backward then touch the pooled array, a quarter of the size or less. Only for
  the ``valid`` convention, whose windows all hold some input (a ``full`` window past the
  input gives the dtype's lowest value, which relu would turn into 0).
* :func:`channels_last_before_max_pool`: a 2-D convolution whose output only a max
  pooling reads takes its data channels-last, so its output comes channels-last, the
  layout torch's max pooling is fast on (see ``neomx.operator.nn_conv``), instead of
  being copied there after the convolution. This pays where the data has no more channels
  than the output (checked when it runs); a 1-channel image is channels-last as it is.
* :func:`cast_filters_in_convolution`: under mixed precision a Convolution reads its
  filters through an ``amp_cast``; where only one kernel position meets the data (1-pixel
  inputs), only that position's filters need the cast, and their gradient alone the cast
  back (see ``neomx.operator.nn_conv.convolution_casting_filters``).
* :func:`reshape_without_cast_round_trip`: mixed precision runs Flatten and Reshape in
  float32, so a bfloat16 network's Flatten before a dense layer reads an ``amp_cast`` to
  float32 and is read by one back to bfloat16. Widening is exact and the values narrowed
  back are the widened ones, so when the data already has the narrow dtype both casts are
  the identity (forward and backward) and the reshape runs on the data itself.
"""
import functools

import torch

from ..operator.layout import as_channels_last, as_layout
from ..operator.nn_conv import convolution, convolution_casting_filters
from .passes import _is_bound, _is_relu
from .plan import Call, Plan

__all__ = ['PoolThenRelu', 'ChannelsLastInput', 'pool_before_relu', 'channels_last_before_max_pool',
           'cast_filters_in_convolution', 'ReshapeInNarrowType', 'reshape_without_cast_round_trip',
           'TRAINING_PASSES']


def _is_max_pool(call):
    return call.node.op == 'Pooling' and call.node.params['pool_type'] == 'max'


class PoolThenRelu:
    """relu of a max pooling: the call replacing ``pooling(relu(x))``.

    Parameters
    ----------
    pooling, relu : functools.partial
        The bound Pooling and relu implementations.
    """

    def __init__(self, pooling, relu):
        self.pooling, self.relu = pooling, relu

    def __call__(self, data):
        return self.relu(self.pooling(data))


class ChannelsLastInput:
    """A 2-D convolution run on channels-last data when the data has at most as many
    channels as the output (the copy is then the cheaper one).

    Parameters
    ----------
    convolution : functools.partial
        The bound Convolution implementation.
    """

    def __init__(self, convolution):
        self.convolution = convolution

    def __call__(self, data, weight, *rest):
        if data.dim() == 4 and data.device.type == 'cpu' and data.shape[1] <= weight.shape[0]:
            data = as_channels_last(data)
        return self.convolution(data, weight, *rest)


def _sole_reads(plan):
    """``{value name: the one call reading it}`` for values read once, by one call, and
    through a single-output reference (no heads, no side outputs)."""
    uses = plan.use_counts()
    readers = {}
    for call in plan.calls:
        for arg in call.args:
            if arg is not None and uses.get(arg[0]) == 1 and arg[1] is None:
                readers[arg[0]] = call
    return readers


def pool_before_relu(plan):
    """Swap each relu read by a max Pooling alone for a relu after it (see the module doc).

    Returns
    -------
    Plan
        ``plan`` itself when nothing applies.
    """
    readers = _sole_reads(plan)
    swapped, dropped = {}, set()
    for call in plan.calls:
        reader = readers.get(call.out)
        if (_is_relu(call) and reader is not None and _is_max_pool(reader) and _is_bound(call, reader)
                and reader.node.params['pooling_convention'] == 'valid' and reader.args[0] == (call.out, None)):
            swapped[reader.out] = Call(PoolThenRelu(reader.fn, call.fn), list(call.args), reader.out, reader.node)
            dropped.add(call.out)
    if not swapped:
        return plan
    return Plan(plan.inputs, [swapped.get(c.out, c) for c in plan.calls if c.out not in dropped], plan.heads)


def channels_last_before_max_pool(plan):
    """Give each 2-D channels-first Convolution read by a max Pooling alone (after
    :func:`pool_before_relu`) channels-last data (see the module doc).

    Returns
    -------
    Plan
        ``plan`` itself when nothing applies.
    """
    readers = _sole_reads(plan)
    changed = {}
    for call in plan.calls:
        reader = readers.get(call.out)
        if (call.node.op == 'Convolution' and len(call.node.params['kernel']) == 2
                and call.node.params['layout'] in (None, 'NCHW') and reader is not None
                and (_is_max_pool(reader) or isinstance(reader.fn, PoolThenRelu)) and _is_bound(call)):
            changed[call.out] = Call(ChannelsLastInput(call.fn), call.args, call.out, call.node)
    if not changed:
        return plan
    return Plan(plan.inputs, [changed.get(c.out, c) for c in plan.calls], plan.heads)


def cast_filters_in_convolution(plan):
    """Give each Convolution whose filters are an ``amp_cast`` read by it alone the cast to
    make itself (see the module doc); the ``amp_cast`` call goes.

    Returns
    -------
    Plan
        ``plan`` itself when nothing applies.
    """
    readers = _sole_reads(plan)
    casts = {c.out: c for c in plan.calls if c.node.op == 'amp_cast' and _is_bound(c)}
    changed, dropped = {}, set()
    for call in plan.calls:
        if call.node.op != 'Convolution' or not _is_bound(call) or call.fn.func is not convolution:
            continue
        weight = call.args[1]
        cast = casts.get(weight[0]) if weight is not None and weight[1] is None else None
        if cast is None or readers.get(cast.out) is not call:
            continue
        fn = functools.partial(convolution_casting_filters, cast.fn, **call.fn.keywords)
        changed[call.out] = Call(fn, [call.args[0], cast.args[0]] + call.args[2:], call.out, call.node)
        dropped.add(cast.out)
    if not changed:
        return plan
    return Plan(plan.inputs, [changed.get(c.out, c) for c in plan.calls if c.out not in dropped], plan.heads)


class ReshapeInNarrowType:
    """``narrow(reshape(widen(data)))``, where ``widen`` is an ``amp_cast`` to float32 and
    ``narrow`` one to a 16-bit type: ``reshape(data)`` when ``data`` has that type already
    (the casts cancel exactly, see the module doc). The data is made channels-first first, as
    the widening cast and the reshape would copy it, and its gradient comes back in the data's
    own layout, as the widening cast gives it.

    Parameters
    ----------
    widen, reshape, narrow : functools.partial
        The bound ``amp_cast``, Flatten or Reshape, and ``amp_cast`` implementations.

    Shape
    -----
    data: any shape the reshape takes; output: the reshape's.

    Examples
    --------
    >>> from neomx.operator.elemwise import amp_cast
    >>> from neomx.operator.shape import flatten
    >>> call = ReshapeInNarrowType(functools.partial(amp_cast, dtype=torch.float32), functools.partial(flatten),
    ...                            functools.partial(amp_cast, dtype=torch.bfloat16))
    >>> out = call(torch.arange(12.).reshape(1, 3, 2, 2).to(torch.bfloat16))
    >>> out.dtype, out.tolist()
    (torch.bfloat16, [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]])
    """

    def __init__(self, widen, reshape, narrow):
        self.widen, self.reshape, self.narrow = widen, reshape, narrow

    def __call__(self, data):
        if data.dtype is self.narrow.keywords['dtype']:
            return self.reshape(as_layout(data, torch.contiguous_format))
        return self.narrow(self.reshape(self.widen(data)))


_RESHAPES = ('Flatten', 'Reshape')
_NARROW_TYPES = (torch.bfloat16, torch.float16)


def _is_amp_cast_to(call, dtypes):
    return call.node.op == 'amp_cast' and _is_bound(call) and call.fn.keywords['dtype'] in dtypes


def reshape_without_cast_round_trip(plan):
    """Run each Flatten or Reshape between an ``amp_cast`` to float32 and one back to a 16-bit
    type (each read by the next alone) as :class:`ReshapeInNarrowType` (see the module doc).

    Returns
    -------
    Plan
        ``plan`` itself when nothing applies.
    """
    readers = _sole_reads(plan)
    # an output must not share its memory with an argument (the heads' copying implementations)
    heads = {name for name, _ in plan.heads}
    changed, dropped = {}, set()
    for widen in plan.calls:
        reshape = readers.get(widen.out)
        narrow = readers.get(reshape.out) if reshape is not None else None
        if (narrow is None or narrow.out in heads or not _is_amp_cast_to(widen, (torch.float32,))
                or reshape.node.op not in _RESHAPES or not _is_bound(reshape)
                or not _is_amp_cast_to(narrow, _NARROW_TYPES)):
            continue
        changed[narrow.out] = Call(ReshapeInNarrowType(widen.fn, reshape.fn, narrow.fn), widen.args, narrow.out,
                                   narrow.node)
        dropped.update((widen.out, reshape.out))
    if not changed:
        return plan
    return Plan(plan.inputs, [changed.get(c.out, c) for c in plan.calls if c.out not in dropped], plan.heads)


TRAINING_PASSES = (cast_filters_in_convolution, reshape_without_cast_round_trip, pool_before_relu,
                   channels_last_before_max_pool)
