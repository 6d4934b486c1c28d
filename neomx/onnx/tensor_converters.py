"""MXNet operator -> ONNX nodes for shape, indexing, sorting and creation operators.

Same converter contract as :mod:`neomx.onnx.converters`.
"""
import numpy as np

from ..base import MXNetError
from .converters import converts, _tuple, _int, _float, _bool, _out, _tensor_type

_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


def _unsupported(node, why):
    return MXNetError("export_model: operator '%s' (node '%s'): %s" % (node['op'], node['name'], why))


def _dim(ctx, data, axis, base):
    """The length of ``data`` along ``axis`` as a 1-element int64 tensor."""
    shape = ctx.step('Shape', [data], base + '_shape')
    return ctx.step('Gather', [shape, ctx.const(base + '_axis', [axis])], base + '_dim', axis=0)


def _scalar_dim(ctx, data, axis, base):
    """The length of ``data`` along ``axis`` (``None``: its size) as an int64 scalar."""
    shape = ctx.step('Shape', [data], base + '_shape')
    if axis is None:
        return ctx.step('ReduceProd', [shape], base + '_size', keepdims=0)
    return ctx.step('Gather', [shape, ctx.const(base + '_axis', axis)], base + '_dim', axis=0)


def _flatten_all(ctx, data, base):
    return ctx.step('Reshape', [data, ctx.const(base + '_flat', [-1])], base + '_flat')


def _sort_axis(a):
    """The axis attribute of the sorting operators: -1 when absent, None (the flattened array) when 'None'."""
    return None if a.get('axis') == 'None' else _int(a, 'axis', -1)


def _cast_to(ctx, name, dtype, out):
    return ctx.add('Cast', [name], out, to=_tensor_type(dtype))


@converts('topk')
def _topk(node, inputs, ctx):
    a = node['attrs']
    axis = _sort_axis(a)
    k = _int(a, 'k', 1)
    ret_typ = a.get('ret_typ', 'indices')
    if ret_typ == 'mask':
        raise _unsupported(node, "ret_typ='mask' has no ONNX converter")
    base = _out(node)
    data = inputs[0]
    if axis is None:
        data, axis = _flatten_all(ctx, data, base), 0
    kk = _dim(ctx, data, axis, base) if k <= 0 else ctx.const(base + '_k', [k])
    values, indices = ctx.fresh(base + '_values'), ctx.fresh(base + '_indices')
    ctx.add('TopK', [data, kk], ctx.fresh(base), outputs=[values, indices], axis=axis,
            largest=int(not _bool(a, 'is_ascend')), sorted=1)
    dtype = np.dtype(a.get('dtype', 'float32'))
    if ret_typ == 'value':
        return ctx.add('Identity', [values], base)
    if ret_typ == 'indices':
        return _cast_to(ctx, indices, dtype, base)
    return ctx.add('Identity', [values], base) + _cast_to(ctx, indices, dtype, ctx.fresh(base + '_idx'))


def _full_sort(node, inputs, ctx):
    """(values, indices, base name) of a TopK over the whole sorted axis (``argsort``,
    ``sort``; no axis: the flattened data)."""
    a = node['attrs']
    axis = _sort_axis(a)
    base = _out(node)
    data = inputs[0]
    if axis is None:
        data, axis = _flatten_all(ctx, data, base), 0
    values, indices = ctx.fresh(base + '_values'), ctx.fresh(base + '_indices')
    ctx.add('TopK', [data, _dim(ctx, data, axis, base)], ctx.fresh(base), outputs=[values, indices],
            axis=axis, largest=int(not _bool(a, 'is_ascend', True)), sorted=1)
    return values, indices, base


@converts('argsort')
def _argsort(node, inputs, ctx):
    _, indices, base = _full_sort(node, inputs, ctx)
    return _cast_to(ctx, indices, np.dtype(node['attrs'].get('dtype', 'float32')), base)


@converts('sort')
def _sort(node, inputs, ctx):
    values, _, base = _full_sort(node, inputs, ctx)
    return ctx.add('Identity', [values], base)


def _arange_values(ctx, count, start, step, repeat, dtype, base):
    """``start + (i // repeat) * step`` for i in [0, count) (``count`` an int64 scalar), in ``dtype``."""
    i = ctx.step('Range', [ctx.const(base + '_0', 0), count, ctx.const(base + '_1', 1)], base + '_range')
    if repeat != 1:
        i = ctx.step('Div', [i, ctx.const(base + '_repeat', repeat)], base + '_rep')
    i = ctx.step('Cast', [i], base + '_cast', to=_tensor_type(dtype))
    i = ctx.step('Mul', [i, ctx.const(base + '_step', step, dtype)], base + '_mul')
    return ctx.step('Add', [i, ctx.const(base + '_start', start, dtype)], base + '_add')


@converts('_contrib_arange_like', '_npx_arange_like')
def _arange_like(node, inputs, ctx):
    a = node['attrs']
    axis = _int(a, 'axis')
    repeat = _int(a, 'repeat', 1)
    dtype = ctx.dtype_of(inputs[0])
    base = _out(node)
    values = _arange_values(ctx, _scalar_dim(ctx, inputs[0], axis, base), _float(a, 'start', 0.0),
                            _float(a, 'step', 1.0), repeat, dtype, base)
    if axis is not None:
        return ctx.add('Identity', [values], base)
    return ctx.add('Reshape', [values, ctx.step('Shape', [inputs[0]], base + '_shape')], base)


@converts('repeat')
def _repeat(node, inputs, ctx):
    a = node['attrs']
    axis = _int(a, 'axis')
    repeats = _int(a, 'repeats')
    base = _out(node)
    data = inputs[0]
    if axis is None:
        data, axis, rank = _flatten_all(ctx, data, base), 0, 1
    else:
        rank = ctx.rank_of(data, node)
        axis %= rank
    # each element i along axis becomes repeats copies: a new axis after it, tiled, then merged
    expanded = ctx.step('Unsqueeze', [data, ctx.const(base + '_ax', [axis + 1])], base + '_unsq')
    reps = [1] * (rank + 1)
    reps[axis + 1] = repeats
    tiled = ctx.step('Tile', [expanded, ctx.const(base + '_reps', reps)], base + '_tile')
    factor = [1] * rank
    factor[axis] = repeats
    shape = ctx.step('Mul', [ctx.step('Shape', [data], base + '_shape'), ctx.const(base + '_factor', factor)],
                     base + '_newshape')
    return ctx.add('Reshape', [tiled, shape], base)


@converts('take')
def _take(node, inputs, ctx):
    a = node['attrs']
    axis = _int(a, 'axis', 0)
    mode = a.get('mode', 'clip')
    base = _out(node)
    data = inputs[0]
    indices = ctx.step('Cast', [inputs[1]], base + '_idx', to=7)
    if mode != 'raise':
        length = _scalar_dim(ctx, data, axis, base)
        if mode == 'clip':
            last = ctx.step('Sub', [length, ctx.const(base + '_one', 1)], base + '_last')
            indices = ctx.step('Max', [indices, ctx.const(base + '_zero', 0)], base + '_lo')
            indices = ctx.step('Min', [indices, last], base + '_hi')
        else:       # wrap: Python's modulo, the divisor's sign
            indices = ctx.step('Mod', [indices, length], base + '_wrap', fmod=0)
    return ctx.add('Gather', [data, indices], base, axis=axis)


@converts('one_hot')
def _one_hot(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    dtype = np.dtype(a.get('dtype', 'float32'))
    indices = ctx.step('Cast', [inputs[0]], base + '_idx', to=7)
    values = ctx.const(base + '_values', [_float(a, 'off_value', 0.0), _float(a, 'on_value', 1.0)], np.float32)
    # MXNet leaves an index outside [0, depth) all off; ONNX counts a negative one from the end
    inside = ctx.step('GreaterOrEqual', [indices, ctx.const(base + '_zero', 0)], base + '_ge0')
    indices = ctx.step('Where', [inside, indices, ctx.const(base + '_out', _INT64_MAX // 2)], base + '_pos')
    hot = ctx.step('OneHot', [indices, ctx.const(base + '_depth', [_int(a, 'depth')]), values], base + '_hot',
                   axis=-1)
    return _cast_to(ctx, hot, dtype, base)


def _axes(a, key, rank=None):
    axes = _tuple(a, key)
    return [ax % rank for ax in axes] if rank is not None else list(axes)


@converts('reverse', 'flip')
def _reverse(node, inputs, ctx):
    axes = _axes(node['attrs'], 'axis')
    n = len(axes)
    base = _out(node)
    return ctx.add('Slice', [inputs[0], ctx.const(base + '_b', [-1] * n), ctx.const(base + '_e', [_INT64_MIN] * n),
                             ctx.const(base + '_a', axes), ctx.const(base + '_s', [-1] * n)], base)


@converts('SwapAxis', 'swapaxes')
def _swap_axis(node, inputs, ctx):
    a = node['attrs']
    rank = ctx.rank_of(inputs[0], node)
    perm = list(range(rank))
    d1, d2 = _int(a, 'dim1', 0) % rank, _int(a, 'dim2', 0) % rank
    perm[d1], perm[d2] = perm[d2], perm[d1]
    return ctx.add('Transpose', inputs[:1], _out(node), perm=perm)


@converts('slice', 'crop')
def _slice(node, inputs, ctx):
    a = node['attrs']
    begin, end = _tuple(a, 'begin'), _tuple(a, 'end')
    step = _tuple(a, 'step') or (None,) * len(begin)
    starts, ends, steps = [], [], []
    for b, e, s in zip(begin, end, step):
        s = 1 if s is None else s
        starts.append((0 if s > 0 else -1) if b is None else b)
        ends.append((_INT64_MAX if s > 0 else _INT64_MIN) if e is None else e)
        steps.append(s)
    base = _out(node)
    return ctx.add('Slice', [inputs[0], ctx.const(base + '_b', starts), ctx.const(base + '_e', ends),
                             ctx.const(base + '_a', list(range(len(starts)))), ctx.const(base + '_s', steps)], base)


@converts('slice_like')
def _slice_like(node, inputs, ctx):
    axes = _axes(node['attrs'], 'axes')
    base = _out(node)
    if not axes:
        axes = list(range(ctx.rank_of(inputs[1], node)))
    shape = ctx.step('Shape', [inputs[1]], base + '_shape')
    ends = ctx.step('Gather', [shape, ctx.const(base + '_axes_i', axes)], base + '_ends', axis=0)
    return ctx.add('Slice', [inputs[0], ctx.const(base + '_b', [0] * len(axes)), ends,
                             ctx.const(base + '_a', axes)], base)


@converts('gather_nd')
def _gather_nd(node, inputs, ctx):
    base = _out(node)
    rank = ctx.rank_of(inputs[1], node)
    # MXNet indexes with the first axis of indices, ONNX with the last
    indices = ctx.step('Cast', [inputs[1]], base + '_idx', to=7)
    indices = ctx.step('Transpose', [indices], base + '_idxT', perm=list(range(1, rank)) + [0])
    return ctx.add('GatherND', [inputs[0], indices], base)


def _split_outputs(node, ctx, data, axis, sizes, squeeze, base):
    outs = [base] + [ctx.fresh('%s_out%d' % (base, i)) for i in range(1, len(sizes))]
    parts = outs if not squeeze else [ctx.fresh('%s_part%d' % (base, i)) for i in range(len(sizes))]
    split_inputs = [data] + ([ctx.const(base + '_sizes', sizes)] if sizes is not None else [])
    ctx.add('Split', split_inputs, ctx.fresh(base + '_split'), outputs=parts, axis=axis)
    if squeeze:
        axes = ctx.const(base + '_sq', [axis])
        for part, out in zip(parts, outs):
            ctx.add('Squeeze', [part, axes], out)
    return outs


@converts('SliceChannel', 'split')
def _slice_channel(node, inputs, ctx):
    a = node['attrs']
    n = _int(a, 'num_outputs')
    axis = _int(a, 'axis', 1)
    length = ctx.static_shape(inputs[0], node)[axis]
    return _split_outputs(node, ctx, inputs[0], axis, [length // n] * n, _bool(a, 'squeeze_axis'), _out(node))


@converts('_split_v2')
def _split_v2(node, inputs, ctx):
    a = node['attrs']
    axis = _int(a, 'axis', 0)
    length = ctx.static_shape(inputs[0], node)[axis]
    sections = _int(a, 'sections', 0)
    if sections:
        sizes = [length // sections] * sections
    else:
        bounds = list(_tuple(a, 'indices')) + [length]
        if bounds[0] != 0:
            bounds = [0] + bounds
        sizes = [e - b for b, e in zip(bounds, bounds[1:])]
    return _split_outputs(node, ctx, inputs[0], axis, sizes, _bool(a, 'squeeze_axis'), _out(node))


@converts('_rnn_param_concat')
def _rnn_param_concat(node, inputs, ctx):
    return ctx.add('Concat', inputs, _out(node), axis=_int(node['attrs'], 'dim', 1))


@converts('norm')
def _norm(node, inputs, ctx):
    a = node['attrs']
    order = _int(a, 'ord', 2)
    if order not in (1, 2):
        raise _unsupported(node, 'ord=%s has no ONNX converter (1 and 2 do)' % order)
    axes = _tuple(a, 'axis')
    return ctx.add('ReduceL1' if order == 1 else 'ReduceL2', inputs[:1], _out(node),
                   keepdims=int(_bool(a, 'keepdims')), **({'axes': list(axes)} if axes else {}))


@converts('broadcast_axis', 'broadcast_axes')
def _broadcast_axis(node, inputs, ctx):
    a = node['attrs']
    rank = ctx.rank_of(inputs[0], node)
    target = [1] * rank
    for axis, size in zip(_tuple(a, 'axis'), _tuple(a, 'size')):
        target[axis % rank] = size
    return ctx.add('Expand', [inputs[0], ctx.const(_out(node) + '_shape', target)], _out(node))


@converts('sum_axis')
def _sum_axis(node, inputs, ctx):
    a = node['attrs']
    axes = _tuple(a, 'axis')
    ins = [inputs[0]] + ([ctx.const(_out(node) + '_axes', list(axes))] if axes else [])
    return ctx.add('ReduceSum', ins, _out(node), keepdims=int(_bool(a, 'keepdims')))


@converts('_linalg_gemm2', 'linalg_gemm2')
def _linalg_gemm2(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    ins = list(inputs[:2])
    for i, key in ((0, 'transpose_a'), (1, 'transpose_b')):
        if _bool(a, key):
            rank = ctx.rank_of(ins[i], node)
            ins[i] = ctx.step('Transpose', [ins[i]], base + '_T', perm=list(range(rank - 2)) + [rank - 1, rank - 2])
    product = ctx.step('MatMul', ins, base + '_mm')
    alpha = ctx.const(base + '_alpha', _float(a, 'alpha', 1.0), ctx.dtype_of(inputs[0]))
    return ctx.add('Mul', [product, alpha], base)


@converts('_arange', '_full', '_eye', '_linspace')
def _creation(node, inputs, ctx):  # pylint: disable=unused-argument
    """An operator without inputs makes a constant: neomx computes it once, the model stores it."""
    value = ctx.evaluate(node)
    return ctx.add('Identity', [ctx.const(_out(node) + '_value', value, value.dtype)], _out(node))


@converts('_random_normal', '_random_uniform')
def _random(node, inputs, ctx):  # pylint: disable=unused-argument
    a = node['attrs']
    dtype = np.dtype(a.get('dtype', 'float32') if a.get('dtype', 'None') != 'None' else 'float32')
    attrs = dict(shape=list(_tuple(a, 'shape')), dtype=int(_tensor_type(dtype)))
    if node['op'] == '_random_normal':
        return ctx.add('RandomNormal', [], _out(node), mean=_float(a, 'loc', 0.0), scale=_float(a, 'scale', 1.0),
                       **attrs)
    return ctx.add('RandomUniform', [], _out(node), low=_float(a, 'low', 0.0), high=_float(a, 'high', 1.0), **attrs)


@converts('_random_normal_like', '_random_uniform_like')
def _random_like(node, inputs, ctx):
    a = node['attrs']
    if node['op'] == '_random_normal_like':
        return ctx.add('RandomNormalLike', inputs[:1], _out(node), mean=_float(a, 'loc', 0.0),
                       scale=_float(a, 'scale', 1.0))
    return ctx.add('RandomUniformLike', inputs[:1], _out(node), low=_float(a, 'low', 0.0),
                   high=_float(a, 'high', 1.0))


@converts('_sample_multinomial')
def _sample_multinomial(node, inputs, ctx):
    a = node['attrs']
    if _bool(a, 'get_prob'):
        raise _unsupported(node, 'get_prob=True has no ONNX converter')
    shape = _tuple(a, 'shape')
    count = int(np.prod(shape)) if shape else 1
    base = _out(node)
    rank = ctx.rank_of(inputs[0], node)
    probs = inputs[0]
    if rank == 1:
        probs = ctx.step('Unsqueeze', [probs, ctx.const(base + '_ax0', [0])], base + '_2d')
    logits = ctx.step('Log', [ctx.step('Cast', [probs], base + '_f', to=1)], base + '_log')
    dtype = np.dtype(a.get('dtype', 'int32'))
    samples = ctx.step('Multinomial', [logits], base + '_samples', sample_size=count, dtype=7)
    out_shape = list(ctx.static_shape(inputs[0], node)[:-1]) + list(shape)
    samples = ctx.step('Reshape', [samples, ctx.const(base + '_shape', out_shape)], base + '_shaped')
    return _cast_to(ctx, samples, dtype, base)
