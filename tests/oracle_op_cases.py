"""Operator cases whose expected results were recorded from MXNet 1.9.1.

Run under MXNet's Python to (re)record ``tests/data/oracle_op_cases.json``::

    ~/mxref/bin/python tests/oracle_op_cases.py

Each case names an operator function (``nd.contrib.MultiBoxTarget``), its inputs (small
arrays made here from a fixed seed and stored in the file, so the tests need no MXNet) and
keyword arguments; the file holds MXNet's outputs and, for differentiable cases, the input
gradients for a fixed head gradient. ``tests/test_op_oracle_cases.py`` replays them on neomx.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, 'data', 'oracle_op_cases.json')


def _anchors():
    return np.array([[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.1, 0.1, 0.5, 0.6],
                      [0.12, 0.1, 0.5, 0.62], [0.0, 0.0, 0.3, 0.3], [0.6, 0.6, 0.9, 0.9]]], 'float32')


def _labels():
    pad = [-1] * 5
    return np.array([[[1, 0.1, 0.1, 0.5, 0.6], [0, 0.55, 0.6, 0.9, 0.9], pad],
                     [[2, 0, 0, .3, .3], pad, pad]], 'float32')


def cases():
    """[(case id, function path, inputs, kwargs, gradients to record: False, True for every
    input or a tuple of input indices)]."""
    rng = np.random.RandomState(1)
    out = []
    cls_pred = rng.rand(2, 3, 6).astype('float32')
    for i, kw in enumerate([{}, dict(negative_mining_ratio=1, negative_mining_thresh=0.3),
                            dict(overlap_threshold=0.3, ignore_label=-3, negative_mining_ratio=2,
                                 minimum_negative_samples=2),
                            dict(overlap_threshold=0, variances=(1, 1, 1, 1))]):
        out.append(('multibox_target_%d' % i, 'nd.contrib.MultiBoxTarget', [_anchors(), _labels(), cls_pred], kw,
                    False))
    out.append(('multibox_target_no_labels', 'nd.contrib.MultiBoxTarget',
                [_anchors(), np.full((2, 3, 5), -1, 'float32'), cls_pred], {}, False))
    cls_prob = rng.rand(2, 3, 6).astype('float32')
    cls_prob[:, 1:, 5] = 0.005
    loc_pred = (rng.rand(2, 24).astype('float32') - 0.5)
    for i, kw in enumerate([{}, dict(nms_topk=2), dict(force_suppress=True), dict(nms_threshold=0),
                            dict(clip=False, threshold=0.6), dict(nms_threshold=0.2, variances=(0.2, 0.2, 0.1, 0.1))]):
        out.append(('multibox_detection_%d' % i, 'nd.contrib.MultiBoxDetection', [cls_prob, loc_pred, _anchors()],
                    kw, False))
    out += _pdf_cases(rng)
    out.append(('multi_lars', 'nd.multi_lars', [np.array([0.1, 0.2, 0.3, 0.4], 'float32'),
                                                np.array([4., 0., 9., 2.], 'float32'),
                                                np.array([1., 1., 0.25, 0.], 'float32'),
                                                np.array([0.01, 0.1, 0.5, 0.2], 'float32')],
                dict(eta=0.5, eps=1e-3, rescale_grad=2.0), False))
    out.append(('hawkesll', 'nd.contrib.hawkesll', _hawkes_inputs(), {}, (0, 1, 2, 3)))
    out += _quantized_cases()
    out += _deformable_psroi_cases()
    out += _breadth_cases(np.random.RandomState(7))
    normal = np.histogram(rng.randn(10000), bins=801, range=(-4, 4))
    skewed = np.histogram(rng.randn(5000) ** 2, bins=201, range=(-3, 3))
    for bins, (hist, edges) in ((255, normal), (31, normal), (21, skewed)):
        out.append(('calibrate_entropy_%d' % bins, 'nd.contrib.calibrate_entropy',
                    [hist.astype('float32'), edges.astype('float32')], dict(num_quantized_bins=bins), False))
    return out


def _boxes(rng, *shape):
    low = rng.uniform(0, 0.6, shape + (2,))
    return np.concatenate([low, low + rng.uniform(0.05, 0.4, shape + (2,))], -1).astype('float32')


def _breadth_cases(rng):
    """The other contrib operators real models use, values and gradients."""
    c = 'nd.contrib.'
    f32 = lambda a: np.asarray(a, 'float32')
    scored = np.concatenate([rng.randint(0, 3, (2, 12, 1)), rng.rand(2, 12, 1), _boxes(rng, 2, 12)], -1)
    scored = f32(scored)
    scored[0, 3, 0] = -1
    qkv = f32(rng.randn(5, 2, 3 * 2 * 4))
    att = f32(rng.rand(2 * 2, 5, 5))
    cases = [
        ('box_iou_corner', c + 'box_iou', [_boxes(rng, 3, 2), _boxes(rng, 4)], {}, False),
        ('box_iou_center', c + 'box_iou', [_boxes(rng, 5), _boxes(rng, 2, 2)], dict(format='center'), False),
        ('box_nms_default', c + 'box_nms', [scored], dict(overlap_thresh=0.3), True),
        ('box_nms_per_class', c + 'box_nms', [scored], dict(overlap_thresh=0.2, id_index=0, topk=6,
                                                             valid_thresh=0.1), True),
        ('box_nms_force_center_out', c + 'box_nms', [scored], dict(overlap_thresh=0.25, id_index=0,
                                                                    force_suppress=True, out_format='center'), False),
        ('box_nms_background', c + 'box_nms', [scored], dict(id_index=0, background_id=1), False),
        ('box_encode', c + 'box_encode', [f32(rng.rand(2, 6) > 0.4), f32(rng.randint(0, 3, (2, 6))),
                                          _boxes(rng, 2, 6), _boxes(rng, 2, 3), f32([0, 0, 0, 0]),
                                          f32([0.1, 0.1, 0.2, 0.2])], {}, False),
        ('box_decode', c + 'box_decode', [f32(rng.randn(2, 6, 4) * 0.3), _boxes(rng, 1, 6)],
         dict(std0=0.1, std1=0.1, std2=0.2, std3=0.2, clip=1.0, format='corner'), False),
        ('bipartite_matching', c + 'bipartite_matching', [f32(rng.rand(2, 5, 4))], dict(threshold=0.3, topk=2),
         False),
        ('roi_align', c + 'ROIAlign', [f32(rng.rand(2, 3, 8, 9)), f32([[0, 1.2, 0.5, 6.3, 5.8], [1, 0, 0, 8, 7],
                                                                       [0, 3.3, 2.1, 4.4, 7.9]])],
         dict(pooled_size=(3, 2), spatial_scale=1.0, sample_ratio=2), (0,)),
        ('roi_align_adaptive_aligned', c + 'ROIAlign', [f32(rng.rand(1, 2, 10, 10)), f32([[0, 2.5, 1.5, 9, 6]])],
         dict(pooled_size=(2, 3), spatial_scale=0.5, aligned=True), (0,)),
        ('multibox_prior', c + 'MultiBoxPrior', [f32(rng.rand(1, 2, 3, 4))],
         dict(sizes=(0.3, 0.5), ratios=(1, 2, 0.5), clip=True, steps=(0.3, 0.25), offsets=(0.4, 0.6)), False),
        ('boolean_mask', c + 'boolean_mask', [f32(rng.randn(5, 3)), f32([1, 0, 1, 1, 0])], {}, (0,)),
        ('index_copy', c + 'index_copy', [f32(rng.randn(5, 3)), f32([4, 1]), f32(rng.randn(2, 3))], {}, (0, 2)),
        ('index_array', c + 'index_array', [f32(rng.randn(2, 3, 2))], dict(axes=(2, 0)), False),
        ('arange_like', c + 'arange_like', [f32(rng.randn(3, 4))], dict(start=2, step=0.5, axis=1), False),
        ('allclose', c + 'allclose', [f32([1, 2, 3]), f32([1, 2, 3.00001])], dict(rtol=1e-6, atol=0), False),
        ('div_sqrt_dim', c + 'div_sqrt_dim', [f32(rng.randn(2, 9))], {}, True),
        ('quadratic', c + 'quadratic', [f32(rng.randn(3, 2))], dict(a=1.5, b=-2, c=0.5), True),
        ('gradientmultiplier', c + 'gradientmultiplier', [f32(rng.randn(3))], dict(scalar=-0.7), True),
        ('round_ste', c + 'round_ste', [f32(rng.randn(6) * 2)], {}, True),
        ('sign_ste', c + 'sign_ste', [f32(rng.randn(6))], {}, True),
        ('selfatt_qk', c + 'interleaved_matmul_selfatt_qk', [qkv], dict(heads=2), True),
        ('selfatt_valatt', c + 'interleaved_matmul_selfatt_valatt', [qkv, att], dict(heads=2), True),
        ('encdec_qk', c + 'interleaved_matmul_encdec_qk', [f32(rng.randn(4, 2, 8)), f32(rng.randn(5, 2, 16))],
         dict(heads=2), True),
        ('encdec_valatt', c + 'interleaved_matmul_encdec_valatt', [f32(rng.randn(5, 2, 16)),
                                                                   f32(rng.rand(4, 4, 5))], dict(heads=2), True),
    ]
    return cases


def _bn_inputs():
    f32 = lambda *v: np.array(v, 'float32')
    return [np.arange(-40, 40, 5).reshape(1, 2, 2, 4).astype('int8'), f32(1.0, 0.5), f32(0.1, -0.2),
            f32(0.05, -0.1), f32(0.2, 0.5), f32(-1), f32(1)]


def _deformable_psroi_cases():
    rng = np.random.RandomState(5)
    data = rng.rand(2, 18, 7, 8).astype('float32')
    rois = np.array([[0, 1, 1, 5, 6], [1, 0, 2, 7, 4], [0, 3.4, 0.6, 9, 9]], 'float32')
    base = dict(spatial_scale=1.0, output_dim=2, group_size=3, pooled_size=3)
    name = 'nd.contrib.DeformablePSROIPooling'
    return [
        ('deformable_psroi_no_trans', name, [data, rois], dict(base, no_trans=True), (0,)),
        ('deformable_psroi_parts', name, [data, rois, (rng.rand(3, 4, 2, 2) - 0.5).astype('float32')],
         dict(base, trans_std=0.1, part_size=2, sample_per_part=2), (0, 2)),
        ('deformable_psroi_scaled', name, [data, rois, (rng.rand(3, 2, 3, 3) - 0.5).astype('float32')],
         dict(base, trans_std=0.3, sample_per_part=3, spatial_scale=0.5), (0, 2)),
    ]


def _quantized_cases():
    """int8 inference operators on the inputs MXNet 1.9.1's CPU (oneDNN) kernels accept."""
    f32 = lambda *v: np.array(v, 'float32')
    q8 = np.array([[10, -20, 30, 127], [-128, 5, 0, 64]], 'int8')
    q4 = q8.reshape(1, 2, 2, 2)
    x = f32(0.9, -2.0, 0.1, 0.3, 0.5, -0.5, 0.25, 1.7).reshape(1, 8)
    acc = np.array([[100, -2000000, 30000, 2147483647, 1234567]], 'int32')
    weight = np.array([[1, -2, 3, 4], [5, 6, -7, 8], [0, 0, 1, 1]], 'int8')
    image = (np.arange(36).reshape(2, 2, 3, 3) * 7 % 256).astype('uint8')
    kernel = ((np.arange(24).reshape(3, 2, 2, 2) * 5 % 23) - 11).astype('int8')
    c = 'nd.contrib.'
    return [
        ('quantize_v2_int8', c + 'quantize_v2', [x], dict(out_type='int8'), False),
        ('quantize_v2_int8_calib', c + 'quantize_v2', [x], dict(out_type='int8', min_calib_range=-1.0,
                                                                 max_calib_range=1.5), False),
        ('quantize_v2_uint8', c + 'quantize_v2', [x], dict(out_type='uint8'), False),
        ('quantize_v2_auto_calib', c + 'quantize_v2', [x], dict(out_type='auto', min_calib_range=0.0,
                                                                 max_calib_range=1.2), False),
        ('quantize_v2_auto_negative', c + 'quantize_v2', [x], dict(out_type='auto', min_calib_range=-0.5,
                                                                    max_calib_range=1.2), False),
        ('requantize_calib', c + 'requantize', [acc, f32(-5), f32(5)], dict(min_calib_range=-0.001,
                                                                             max_calib_range=0.002), False),
        ('requantize_calib_asymmetric', c + 'requantize', [acc, f32(-3), f32(1)],
         dict(min_calib_range=-0.01, max_calib_range=0.02), False),
        ('quantized_flatten', c + 'quantized_flatten', [q4, f32(-1), f32(2)], {}, False),
        ('quantized_act', c + 'quantized_act', [q4, f32(-1), f32(2)], dict(act_type='relu'), False),
        ('quantized_pooling_max', c + 'quantized_pooling', [q4, f32(-1), f32(2)],
         dict(kernel=(2, 2), pool_type='max'), False),
        ('quantized_pooling_avg_pad', c + 'quantized_pooling', [q8.reshape(1, 1, 2, 4), f32(-1), f32(2)],
         dict(kernel=(2, 2), pool_type='avg', stride=(1, 1), pad=(1, 1)), False),
        ('quantized_elemwise_add', c + 'quantized_elemwise_add', [q8, q8, f32(-1), f32(2), f32(-0.5), f32(0.5)],
         {}, False),
        ('quantized_elemwise_add_calib', c + 'quantized_elemwise_add',
         [q8, q8, f32(-1), f32(2), f32(-0.5), f32(0.5)], dict(min_calib_range=-2.0, max_calib_range=2.0), False),
        ('quantized_concat', c + 'quantized_concat', [q8, q8, f32(-1), f32(-0.5), f32(2), f32(0.5)],
         dict(num_args=2, dim=1), False),
        ('quantized_fully_connected', c + 'quantized_fully_connected',
         [q8, weight, np.array([1, 2, 3], 'int8'), f32(-1), f32(2), f32(-0.5), f32(0.5), f32(-0.1), f32(0.1)],
         dict(num_hidden=3), False),
        ('quantized_fully_connected_uint8', c + 'quantized_fully_connected',
         [image.reshape(4, 9), np.tile(kernel.reshape(3, 8)[:, :1], (1, 9)), f32(0), f32(3), f32(-0.5), f32(0.4)],
         dict(num_hidden=3, no_bias=True), False),
        ('quantized_conv_uint8', c + 'quantized_conv', [image, kernel, f32(0), f32(3), f32(-0.5), f32(0.4)],
         dict(kernel=(2, 2), num_filter=3, no_bias=True), False),
        ('quantized_batch_norm', c + 'quantized_batch_norm', _bn_inputs(), dict(min_calib_range=-2.0,
                                                                                 max_calib_range=2.0), False),
        ('quantized_batch_norm_fix_gamma', c + 'quantized_batch_norm', _bn_inputs(),
         dict(fix_gamma=True, min_calib_range=-1.5, max_calib_range=1.0), False),
        ('quantized_embedding', c + 'quantized_embedding', [f32(0, 2), weight, f32(-0.5), f32(0.5)],
         dict(input_dim=3, output_dim=4), False),
    ]


def _hawkes_inputs():
    lda = np.tile(np.array([1.5, 2.0, 3.0], 'float32'), (4, 1))
    lags = np.array([[6, 7, 8, 9], [1, 2, 3, 4], [3, 4, 5, 6], [8, 9, 10, 11]], 'float32') / 10
    marks = np.array([[0, 1, 2, 0], [1, 1, 0, 2], [2, 0, 0, 1], [0, 0, 0, 0]], 'int32')
    return [lda, np.array([0.2, 0.3, 0.4], 'float32'), np.array([1.0, 2.0, 3.0], 'float32'),
            (np.arange(12).reshape(4, 3) / 10).astype('float32'), lags, marks,
            np.array([1, 2, 3, 4], 'float32'), np.full(4, 5.0, 'float32')]


def _pdf_cases(rng):
    """Densities (and their gradients) of samples shaped S + (3,) under parameters of shape S."""
    def positive(*shape):
        return rng.uniform(0.5, 2.0, shape).astype('float32')
    counts = rng.randint(0, 5, (2, 3)).astype('float32')
    params = {
        'uniform': ([rng.uniform(0.1, 0.9, (2, 3)).astype('float32')], [np.zeros(2, 'float32'), positive(2) + 1]),
        'normal': ([rng.randn(2, 3).astype('float32')], [rng.randn(2).astype('float32'), positive(2)]),
        'gamma': ([positive(2, 3)], [positive(2), positive(2)]),
        'exponential': ([positive(2, 3)], [positive(2)]),
        'poisson': ([counts], [positive(2)]),
        'negative_binomial': ([counts], [np.array([2, 3], 'float32'), rng.uniform(0.2, 0.8, 2).astype('float32')]),
        'generalized_negative_binomial': ([counts], [positive(2), positive(2)]),
    }
    out = []
    for dist, (sample, dist_params) in sorted(params.items()):
        for is_log in (False, True):
            out.append(('pdf_%s_%s' % (dist, 'log' if is_log else 'density'), 'nd.random_pdf_' + dist,
                        sample + dist_params, dict(is_log=is_log), True))
    sample = rng.dirichlet([1, 2, 3], (2, 2)).astype('float32')
    for is_log in (False, True):
        out.append(('pdf_dirichlet_%s' % ('log' if is_log else 'density'), 'nd.random_pdf_dirichlet',
                    [sample, positive(3)], dict(is_log=is_log), True))
    return out


def _run(mx, func, inputs, kwargs, grad):
    fn = mx
    for part in func.split('.'):
        fn = getattr(fn, part)
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    if not grad:
        res = fn(*arrays, **kwargs)
        res = res if isinstance(res, (list, tuple)) else [res]
        return [r.asnumpy() for r in res], None
    # grad: True for every input, or the indices of the inputs to differentiate
    tracked = arrays if grad is True else [arrays[i] for i in grad]
    for a in tracked:
        a.attach_grad()
    with mx.autograd.record():
        res = fn(*arrays, **kwargs)
        res = res if isinstance(res, (list, tuple)) else [res]
    heads = [mx.nd.array(np.linspace(0.5, 1.5, r.size).reshape(r.shape), dtype=r.dtype) for r in res]
    mx.autograd.backward(list(res), heads)
    return [r.asnumpy() for r in res], [a.grad.asnumpy() for a in tracked]


def _encode(a):
    return {'dtype': str(a.dtype), 'shape': list(a.shape), 'data': a.ravel().tolist()}


def decode(entry):
    return np.array(entry['data'], dtype=entry['dtype']).reshape(entry['shape'])


def run_case(mx, func, inputs, kwargs, grad):
    """Outputs (and input gradients, or None) of one case on ``mx`` (MXNet or neomx)."""
    return _run(mx, func, inputs, kwargs, grad)


def record():
    import mxnet as mx  # pylint: disable=import-error
    table = []
    for case_id, func, inputs, kwargs, grad in cases():
        outs, grads = _run(mx, func, inputs, kwargs, grad)
        table.append({'id': case_id, 'func': func, 'inputs': [_encode(a) for a in inputs],
                      'kwargs': kwargs, 'outputs': [_encode(o) for o in outs],
                      'grads': None if grads is None else [_encode(g) for g in grads],
                      'grad_inputs': grad if isinstance(grad, tuple) else None})
    with open(RECORD, 'w') as f:
        json.dump({'mxnet': mx.__version__, 'cases': table}, f, indent=0)
    print('recorded %d cases in %s' % (len(table), RECORD), file=sys.stderr)


if __name__ == '__main__':
    record()
