"""MXNet operator -> ONNX nodes for neural-network operators beyond the core ones: recurrent
layers, resizing, padding and cropping, sequence masks, normalizations, detection.

Same converter contract as :mod:`neomx.onnx.converters`.
"""
import numpy as np

from ..base import MXNetError
from .converters import converts, _tuple, _int, _float, _bool, _out

# MXNet's gate blocks (as torch's) in the order ONNX wants them
_ONNX_GATE_ORDER = {'lstm': [0, 3, 1, 2],      # i f g o -> i o f c
                    'gru': [1, 0, 2],          # r z n -> z r h
                    'rnn_tanh': [0], 'rnn_relu': [0]}
_ONNX_RNN_OP = {'lstm': 'LSTM', 'gru': 'GRU', 'rnn_tanh': 'RNN', 'rnn_relu': 'RNN'}


def _unsupported(node, why):
    return MXNetError("export_model: operator '%s' (node '%s'): %s" % (node['op'], node['name'], why))


class _FlatParameters:
    """Reads consecutive blocks out of MXNet's flat RNN parameter vector with ONNX Slice nodes."""

    def __init__(self, ctx, flat, base):
        self.ctx, self.flat, self.base, self.offset = ctx, flat, base, 0

    def take(self, gates, rows, cols):
        """The next ``gates*rows*cols`` values of the vector (flat)."""
        ctx, base = self.ctx, self.base
        size = gates * rows * cols
        block = ctx.step('Slice', [self.flat, ctx.const(base + '_b', [self.offset]),
                                   ctx.const(base + '_e', [self.offset + size])], base + '_slice')
        self.offset += size
        return block


def _reorder(ctx, block, gates, rows, cols, order, base):
    """``block`` (flat) as (1, gates*rows, cols) (or (1, gates*rows) when cols is None), gate blocks in ``order``."""
    shape = [gates, rows] + ([cols] if cols is not None else [])
    block = ctx.step('Reshape', [block, ctx.const(base + '_gshape', shape)], base + '_gates')
    if order != list(range(gates)):
        block = ctx.step('Gather', [block, ctx.const(base + '_order', order)], base + '_reorder', axis=0)
    out_shape = [1, gates * rows] + ([cols] if cols is not None else [])
    return ctx.step('Reshape', [block, ctx.const(base + '_oshape', out_shape)], base + '_block')


@converts('RNN')
def _rnn(node, inputs, ctx):
    a = node['attrs']
    mode = a.get('mode')
    if mode not in _ONNX_GATE_ORDER:
        raise _unsupported(node, "mode=%s has no ONNX converter" % mode)
    if _int(a, 'projection_size') or _bool(a, 'use_sequence_length') or \
            _float(a, 'lstm_state_clip_min') is not None:
        raise _unsupported(node, 'projection_size, use_sequence_length and lstm_state_clip have no ONNX converter')
    base = _out(node)
    layers = _int(a, 'num_layers', 1)
    dirs = 2 if _bool(a, 'bidirectional') else 1
    hidden = _int(a, 'state_size')
    order = _ONNX_GATE_ORDER[mode]
    gates = len(order)
    input_size = ctx.static_shape(inputs[0], node)[2]
    data, flat, state = inputs[0], inputs[1], inputs[2]
    cell = inputs[3] if mode == 'lstm' else None
    params = _FlatParameters(ctx, flat, base)
    # all weights first (layer by layer, direction by direction), then all biases
    weights = []
    for layer in range(layers):
        layer_input = input_size if layer == 0 else dirs * hidden
        for _ in range(dirs):
            w = _reorder(ctx, params.take(gates, hidden, layer_input), gates, hidden, layer_input, order, base + '_W')
            r = _reorder(ctx, params.take(gates, hidden, hidden), gates, hidden, hidden, order, base + '_R')
            weights.append((w, r))
    biases = []
    for _ in range(layers * dirs):
        b_ih = _reorder(ctx, params.take(gates, hidden, 1), gates, hidden, None, order, base + '_Bi')
        b_hh = _reorder(ctx, params.take(gates, hidden, 1), gates, hidden, None, order, base + '_Bh')
        biases.append(ctx.step('Concat', [b_ih, b_hh], base + '_B', axis=1))
    extra = {}
    if mode == 'gru':
        extra['linear_before_reset'] = 1
    elif mode != 'lstm':
        extra['activations'] = ['Tanh' if mode == 'rnn_tanh' else 'Relu'] * dirs
    hs, cs = [], []
    for layer in range(layers):
        own = slice(layer * dirs, (layer + 1) * dirs)

        def stack(parts, axis=0):
            return parts[0] if len(parts) == 1 else ctx.step('Concat', parts, base + '_cat', axis=axis)
        w = stack([wr[0] for wr in weights[own]])
        r = stack([wr[1] for wr in weights[own]])
        b = stack(biases[own])
        bounds = [ctx.const(base + '_lb', [layer * dirs]), ctx.const(base + '_le', [(layer + 1) * dirs])]
        h0 = ctx.step('Slice', [state] + bounds, base + '_h0')
        ins = [data, w, r, b, '', h0]
        outs = [ctx.fresh(base + '_Y'), ctx.fresh(base + '_Yh')]
        if mode == 'lstm':
            ins.append(ctx.step('Slice', [cell] + bounds, base + '_c0'))
            outs.append(ctx.fresh(base + '_Yc'))
        ctx.add(_ONNX_RNN_OP[mode], ins, ctx.fresh(base + '_layer'), outputs=outs,
                direction='bidirectional' if dirs == 2 else 'forward', hidden_size=hidden, **extra)
        # Y is (T, directions, N, H); the next layer and MXNet want (T, N, directions*H)
        y = ctx.step('Transpose', [outs[0]], base + '_yT', perm=[0, 2, 1, 3])
        data = ctx.step('Reshape', [y, ctx.const(base + '_yshape', [0, 0, -1])], base + '_y')
        hs.append(outs[1])
        if mode == 'lstm':
            cs.append(outs[2])
    result = ctx.add('Identity', [data], base)
    if not _bool(a, 'state_outputs'):
        return result
    result += ctx.add('Concat', hs, ctx.fresh(base + '_hy'), axis=0) if len(hs) > 1 else \
        ctx.add('Identity', hs, ctx.fresh(base + '_hy'))
    if mode == 'lstm':
        result += ctx.add('Concat', cs, ctx.fresh(base + '_cy'), axis=0) if len(cs) > 1 else \
            ctx.add('Identity', cs, ctx.fresh(base + '_cy'))
    return result


def _resize(ctx, node, data, sizes, mode, transform):
    base = _out(node)
    return ctx.add('Resize', [data, '', '', ctx.const(base + '_sizes', list(sizes))], base, mode=mode,
                   coordinate_transformation_mode=transform, nearest_mode='floor')


@converts('UpSampling')
def _upsampling(node, inputs, ctx):
    a = node['attrs']
    if a.get('sample_type', 'nearest') != 'nearest' or len(inputs) != 1:
        raise _unsupported(node, 'only sample_type=nearest with one input has an ONNX converter')
    scale = _int(a, 'scale')
    n, c, h, w = ctx.static_shape(inputs[0], node)
    return _resize(ctx, node, inputs[0], [n, c, h * scale, w * scale], 'nearest', 'asymmetric')


@converts('_contrib_BilinearResize2D')
def _bilinear_resize(node, inputs, ctx):
    a = node['attrs']
    mode = a.get('mode', 'size')
    if mode != 'size' or len(inputs) != 1:
        raise _unsupported(node, "mode='%s' has no ONNX converter (mode='size' does)" % mode)
    out = ctx.out_shapes[0]
    if out is None or ctx.dynamic:
        ctx.static_shape(inputs[0], node)      # raises the static-shapes error
    transform = 'align_corners' if _bool(a, 'align_corners', True) else 'half_pixel'
    return _resize(ctx, node, inputs[0], out, 'linear', transform)


@converts('Pad', 'pad')
def _pad(node, inputs, ctx):
    a = node['attrs']
    widths = _tuple(a, 'pad_width')
    pads = list(widths[0::2]) + list(widths[1::2])
    base = _out(node)
    mode = a.get('mode', 'constant')
    ins = [inputs[0], ctx.const(base + '_pads', pads)]
    if mode == 'constant':
        ins.append(ctx.const(base + '_value', _float(a, 'constant_value', 0.0), ctx.dtype_of(inputs[0])))
    return ctx.add('Pad', ins, base, mode=mode)


@converts('Crop')
def _crop(node, inputs, ctx):
    a = node['attrs']
    if _bool(a, 'center_crop'):
        raise _unsupported(node, 'center_crop=True has no ONNX converter')
    base = _out(node)
    oy, ox = _tuple(a, 'offset', (0, 0))
    out = ctx.out_shapes[0]
    if out is None or ctx.dynamic:
        ctx.static_shape(inputs[0], node)
    h, w = out[2], out[3]
    return ctx.add('Slice', [inputs[0], ctx.const(base + '_b', [oy, ox]), ctx.const(base + '_e', [oy + h, ox + w]),
                             ctx.const(base + '_a', [2, 3])], base)


def _sequence_lengths(ctx, lengths, base):
    return ctx.step('Cast', [lengths], base + '_len', to=7)


@converts('SequenceMask')
def _sequence_mask(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    if not _bool(a, 'use_sequence_length'):
        return ctx.add('Identity', inputs[:1], base)
    axis = _int(a, 'axis', 0)
    if axis not in (0, 1):
        raise _unsupported(node, 'axis=%d: MXNet masks along axis 0 or 1' % axis)
    rank = ctx.rank_of(inputs[0], node)
    data = inputs[0]
    lengths = _sequence_lengths(ctx, inputs[1], base)
    shape = ctx.step('Shape', [data], base + '_shape')
    steps = ctx.step('Gather', [shape, ctx.const(base + '_ax', axis)], base + '_T', axis=0)
    t = ctx.step('Range', [ctx.const(base + '_0', 0), steps, ctx.const(base + '_1', 1)], base + '_t')
    # mask[t, n] (axis 0) or mask[n, t] (axis 1): step t is kept while t < length[n]
    t = ctx.step('Unsqueeze', [t, ctx.const(base + '_tax', [1 - axis])], base + '_t2')
    lengths = ctx.step('Unsqueeze', [lengths, ctx.const(base + '_lax', [axis])], base + '_l2')
    keep = ctx.step('Less', [t, lengths], base + '_keep')
    if rank > 2:
        keep = ctx.step('Unsqueeze', [keep, ctx.const(base + '_rest', list(range(2, rank)))], base + '_keepnd')
    value = ctx.const(base + '_value', _float(a, 'value', 0.0), ctx.dtype_of(inputs[0]))
    return ctx.add('Where', [keep, data, value], base)


@converts('SequenceReverse')
def _sequence_reverse(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    if _int(a, 'axis', 0) != 0:
        raise _unsupported(node, 'axis=%s: only axis 0 has an ONNX converter' % a.get('axis'))
    if not _bool(a, 'use_sequence_length'):
        return ctx.add('Slice', [inputs[0], ctx.const(base + '_b', [-1]),
                                 ctx.const(base + '_e', [np.iinfo(np.int64).min]), ctx.const(base + '_a', [0]),
                                 ctx.const(base + '_s', [-1])], base)
    return ctx.add('ReverseSequence', [inputs[0], _sequence_lengths(ctx, inputs[1], base)], base,
                   batch_axis=1, time_axis=0)


@converts('L2Normalization')
def _l2_normalization(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    mode = a.get('mode', 'instance')
    rank = ctx.rank_of(inputs[0], node)
    axes = {'instance': list(range(1, rank)), 'channel': [1], 'spatial': list(range(2, rank))}[mode]
    squares = ctx.step('Mul', [inputs[0], inputs[0]], base + '_sq')
    total = ctx.step('ReduceSum', [squares, ctx.const(base + '_axes', axes)], base + '_sum', keepdims=1)
    total = ctx.step('Add', [total, ctx.const(base + '_eps', _float(a, 'eps', 1e-10), ctx.dtype_of(inputs[0]))],
                     base + '_eps')
    return ctx.add('Div', [inputs[0], ctx.step('Sqrt', [total], base + '_norm')], base)


@converts('LogisticRegressionOutput')
def _logistic_regression_output(node, inputs, ctx):
    return ctx.add('Sigmoid', inputs[:1], _out(node))


@converts('LinearRegressionOutput', 'MAERegressionOutput', 'MakeLoss', 'make_loss')
def _regression_output(node, inputs, ctx):
    # at inference these output their data; the label only shapes the gradient
    return ctx.add('Identity', inputs[:1], _out(node))


@converts('LayerNorm')
def _layer_norm(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    rank = ctx.rank_of(inputs[0], node)
    axis = _int(a, 'axis', -1) % rank
    dtype = ctx.dtype_of(inputs[0])
    mean = ctx.step('ReduceMean', [inputs[0]], base + '_mean', axes=[axis], keepdims=1)
    centered = ctx.step('Sub', [inputs[0], mean], base + '_c')
    var = ctx.step('ReduceMean', [ctx.step('Mul', [centered, centered], base + '_c2')], base + '_var',
                   axes=[axis], keepdims=1)
    std = ctx.step('Sqrt', [ctx.step('Add', [var, ctx.const(base + '_eps', _float(a, 'eps', 1e-5), dtype)],
                                     base + '_veps')], base + '_std')
    normed = ctx.step('Div', [centered, std], base + '_n')
    # gamma and beta lie along ``axis``
    trailing = list(range(1, rank - axis))
    gamma, beta = inputs[1], inputs[2]
    if trailing:
        axes = ctx.const(base + '_gax', trailing)
        gamma = ctx.step('Unsqueeze', [gamma, axes], base + '_g')
        beta = ctx.step('Unsqueeze', [beta, axes], base + '_b')
    return ctx.add('Add', [ctx.step('Mul', [normed, gamma], base + '_scaled'), beta], base)


@converts('ROIPooling')
def _roi_pooling(node, inputs, ctx):
    a = node['attrs']
    return ctx.add('MaxRoiPool', inputs[:2], _out(node), pooled_shape=list(_tuple(a, 'pooled_size')),
                   spatial_scale=_float(a, 'spatial_scale', 1.0))


@converts('_contrib_AdaptiveAvgPooling2D')
def _adaptive_avg_pooling(node, inputs, ctx):
    size = _tuple(node['attrs'], 'output_size') or (1,)
    if any(s != 1 for s in size):
        raise _unsupported(node, 'output_size=%s: only output_size 1 has an ONNX converter' % (size,))
    return ctx.add('GlobalAveragePool', inputs[:1], _out(node))


@converts('_contrib_box_decode')
def _box_decode(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    dtype = ctx.dtype_of(inputs[0])
    data, anchors = inputs[0], inputs[1]

    def part(x, i, tag):
        return ctx.step('Slice', [x, ctx.const(base + '_b', [i]), ctx.const(base + '_e', [i + 1]),
                                  ctx.const(base + '_a', [-1])], base + tag)

    def const(v):
        return ctx.const(base + '_k', v, dtype)

    def op(op_type, *xs):
        return ctx.step(op_type, list(xs), base + '_' + op_type.lower())
    a0, a1, a2, a3 = (part(anchors, i, '_a%d' % i) for i in range(4))
    if a.get('format', 'center') == 'corner':
        aw, ah = op('Sub', a2, a0), op('Sub', a3, a1)
        ax = op('Add', a0, op('Mul', aw, const(0.5)))
        ay = op('Add', a1, op('Mul', ah, const(0.5)))
    else:
        ax, ay, aw, ah = a0, a1, a2, a3
    stds = [_float(a, 'std%d' % i, 1.0) for i in range(4)]
    d = [op('Mul', part(data, i, '_d%d' % i), const(stds[i])) for i in range(4)]
    ox = op('Add', op('Mul', d[0], aw), ax)
    oy = op('Add', op('Mul', d[1], ah), ay)
    dw, dh = d[2], d[3]
    clip = _float(a, 'clip', -1.0)
    if clip > 0:
        dw, dh = op('Min', dw, const(clip)), op('Min', dh, const(clip))
    half_w = op('Mul', op('Mul', op('Exp', dw), aw), const(0.5))
    half_h = op('Mul', op('Mul', op('Exp', dh), ah), const(0.5))
    corners = [op('Sub', ox, half_w), op('Sub', oy, half_h), op('Add', ox, half_w), op('Add', oy, half_h)]
    return ctx.add('Concat', corners, base, axis=-1)


@converts('_contrib_box_nms', '_contrib_box_non_maximum_suppression')
def _box_nms(node, inputs, ctx):
    a = node['attrs']
    base = _out(node)
    in_format, out_format = a.get('in_format', 'corner'), a.get('out_format', 'corner')
    if in_format != out_format:
        raise _unsupported(node, "in_format='%s' with out_format='%s' has no ONNX converter" % (in_format, out_format))
    if _int(a, 'background_id', -1) != -1:
        raise _unsupported(node, 'background_id != -1 has no ONNX converter')
    if _int(a, 'id_index', -1) != -1 or not _bool(a, 'force_suppress'):
        # ONNX's NonMaxSuppression would suppress across classes where MXNet does not
        raise _unsupported(node, 'suppression within classes (id_index, force_suppress=False) has no ONNX converter')
    dtype = ctx.dtype_of(inputs[0])
    topk = _int(a, 'topk', -1)
    coord, score = _int(a, 'coord_start', 2), _int(a, 'score_index', 1)
    data_shape = ctx.step('Shape', inputs[:1], base + '_shape')
    rank = ctx.rank_of(inputs[0], node)
    # (batch, N, K) with every leading axis in batch
    data = ctx.step('Reshape', [inputs[0], ctx.step('Concat', [ctx.const(base + '_m1', [-1]), ctx.step(
        'Slice', [data_shape, ctx.const(base + '_r2', [rank - 2]), ctx.const(base + '_r', [rank])], base + '_nk')],
        base + '_3dshape', axis=0)], base + '_3d')

    def columns(begin, end, tag):
        return ctx.step('Slice', [data, ctx.const(base + '_cb', [begin]), ctx.const(base + '_ce', [end]),
                                  ctx.const(base + '_ca', [2])], base + tag)
    boxes = columns(coord, coord + 4, '_boxes')
    scores = ctx.step('Transpose', [columns(score, score + 1, '_score')], base + '_scores', perm=[0, 2, 1])
    selected = ctx.step('NonMaxSuppression', [
        boxes, scores, ctx.const(base + '_topk', [topk if topk > 0 else np.iinfo(np.int32).max]),
        ctx.const(base + '_iou', [_float(a, 'overlap_thresh', 0.5)], np.float32),
        ctx.const(base + '_valid', [_float(a, 'valid_thresh', 0.0)], np.float32)],
        base + '_nms', center_point_box=int(in_format == 'center'))
    # selected rows are (batch, class, box), by batch then decreasing score: candidate i is row i
    where = ctx.step('Gather', [selected, ctx.const(base + '_bb', [0, 2])], base + '_where', axis=1)
    candidates = ctx.step('GatherND', [data, where], base + '_cand')
    # one more candidate, a row of -1, for every box MXNet leaves out
    candidates = ctx.step('Pad', [candidates, ctx.const(base + '_pad', [0, 0, 1, 0]),
                                  ctx.const(base + '_fill', -1, dtype)], base + '_padded')
    count = ctx.step('Gather', [ctx.step('Shape', [selected], base + '_sshape'), ctx.const(base + '_z', 0)],
                     base + '_count', axis=0)
    order = ctx.step('Range', [ctx.const(base + '_0', 0), count, ctx.const(base + '_1', 1)], base + '_order')
    batch_boxes = ctx.step('Slice', [ctx.step('Shape', [scores], base + '_bshape'), ctx.const(base + '_b0', [0]),
                                     ctx.const(base + '_b3', [3]), ctx.const(base + '_b0a', [0]),
                                     ctx.const(base + '_b2', [2])], base + '_bn')
    # pick[b, j] = the candidate kept as box j of batch b, or the -1 row
    pick = ctx.step('ScatterND', [ctx.step('Expand', [ctx.step('Unsqueeze', [count, ctx.const(base + '_u', [0])],
                                                               base + '_c1'), batch_boxes], base + '_base'),
                                  where, order], base + '_pick')
    boxes_per_batch = ctx.step('Slice', [batch_boxes, ctx.const(base + '_n1', [1]), ctx.const(base + '_n2', [2])],
                               base + '_n')
    ordered = ctx.add('TopK', [pick, boxes_per_batch], ctx.fresh(base + '_topk'),
                      outputs=[ctx.fresh(base + '_sorted'), ctx.fresh(base + '_unused')],
                      largest=0, axis=-1, sorted=1)[0]
    rows = ctx.step('Gather', [candidates, ordered], base + '_rows', axis=0)
    return ctx.add('Reshape', [rows, data_shape], base)


def _interleaved_part(ctx, node, qkv, which, base):
    """Query (0), key (1) or value (2) of MXNet's interleaved (seq, batch, heads*3*d) projection,
    as (batch*heads, seq, d)."""
    seq, batch, width = ctx.static_shape(qkv, node)
    heads = _int(node['attrs'], 'heads')
    d = width // (3 * heads)
    split = ctx.step('Reshape', [qkv, ctx.const(base + '_5d', [seq, batch, heads, 3, d])], base + '_5d')
    part = ctx.step('Gather', [split, ctx.const(base + '_which', which)], base + '_part', axis=3)
    part = ctx.step('Transpose', [part], base + '_bhsd', perm=[1, 2, 0, 3])
    return ctx.step('Reshape', [part, ctx.const(base + '_3d', [batch * heads, seq, d])], base + '_3d'), d


@converts('_contrib_interleaved_matmul_selfatt_qk')
def _selfatt_qk(node, inputs, ctx):
    base = _out(node)
    q, d = _interleaved_part(ctx, node, inputs[0], 0, base + '_q')
    k, _ = _interleaved_part(ctx, node, inputs[0], 1, base + '_k')
    q = ctx.step('Mul', [q, ctx.const(base + '_scale', 1 / np.sqrt(d), ctx.dtype_of(inputs[0]))], base + '_qs')
    return ctx.add('MatMul', [q, ctx.step('Transpose', [k], base + '_kT', perm=[0, 2, 1])], base)


@converts('_contrib_interleaved_matmul_selfatt_valatt')
def _selfatt_valatt(node, inputs, ctx):
    base = _out(node)
    seq, batch, width = ctx.static_shape(inputs[0], node)
    heads = _int(node['attrs'], 'heads')
    v, d = _interleaved_part(ctx, node, inputs[0], 2, base + '_v')
    out = ctx.step('MatMul', [inputs[1], v], base + '_av')
    out = ctx.step('Reshape', [out, ctx.const(base + '_4d', [batch, heads, seq, d])], base + '_4d')
    out = ctx.step('Transpose', [out], base + '_sbhd', perm=[2, 0, 1, 3])
    return ctx.add('Reshape', [out, ctx.const(base + '_shape', [seq, batch, heads * d])], base)


@converts('_contrib_ROIAlign')
def _roi_align(node, inputs, ctx):
    a = node['attrs']
    if _bool(a, 'position_sensitive') or _bool(a, 'aligned'):
        raise _unsupported(node, 'position_sensitive and aligned have no ONNX converter (opset 13)')
    base = _out(node)
    rois = inputs[1]

    def columns(begin, end, tag):
        return ctx.step('Slice', [rois, ctx.const(base + '_b', [begin]), ctx.const(base + '_e', [end]),
                                  ctx.const(base + '_a', [1])], base + tag)
    batch = ctx.step('Cast', [ctx.step('Squeeze', [columns(0, 1, '_bcol'), ctx.const(base + '_sq', [1])],
                                       base + '_bidx')], base + '_batch', to=7)
    height, width = _tuple(a, 'pooled_size')
    # a negative batch index marks an unused roi: onnxruntime refuses it, MXNet gives zeros
    zero = ctx.const(base + '_zero', 0)
    unused = ctx.step('Less', [batch, zero], base + '_unused')
    pooled = ctx.step('RoiAlign', [inputs[0], columns(1, 5, '_boxes'), ctx.step('Max', [batch, zero], base + '_b0')],
                      base + '_pooled', mode='avg', output_height=height, output_width=width,
                      sampling_ratio=_int(a, 'sample_ratio', 0), spatial_scale=_float(a, 'spatial_scale', 1.0))
    unused = ctx.step('Unsqueeze', [unused, ctx.const(base + '_ax', [1, 2, 3])], base + '_unused4d')
    return ctx.add('Where', [unused, ctx.const(base + '_fill', 0, ctx.dtype_of(inputs[0])), pooled], base)
