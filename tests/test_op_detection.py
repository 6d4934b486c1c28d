"""Detection operators (mx.nd.contrib.box_*, bipartite_matching, ROIAlign, MultiBoxPrior)
against numpy references and MXNet 1.9.1's recorded results."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

contrib = mx.nd.contrib


def _corner_boxes(rng, *shape):
    low = rng.uniform(0, 0.7, shape + (2,))
    return np.concatenate([low, low + rng.uniform(0.05, 0.4, shape + (2,))], -1)


def _iou_reference(lhs, rhs):
    out = np.zeros((len(lhs), len(rhs)))
    for i, a in enumerate(lhs):
        for j, b in enumerate(rhs):
            w = max(0, min(a[2], b[2]) - max(a[0], b[0]))
            h = max(0, min(a[3], b[3]) - max(a[1], b[1]))
            union = np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2]) - w * h
            out[i, j] = w * h / union
    return out


def _center(boxes):
    return np.concatenate([(boxes[..., :2] + boxes[..., 2:]) / 2, boxes[..., 2:] - boxes[..., :2]], -1)


# --------------------------------------------------------------- box_iou
def test_box_iou_documented_example():
    out = contrib.box_iou(mx.nd.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]]),
                          mx.nd.array([[0.25, 0.25, 0.75, 0.75]]))
    np.testing.assert_allclose(out.asnumpy(), [[0.142857], [0.142857]], rtol=1e-5)


@pytest.mark.parametrize('box_format', ['corner', 'center'])
def test_box_iou_random_batches(box_format):
    rng = np.random.RandomState(0)
    lhs, rhs = _corner_boxes(rng, 2, 5), _corner_boxes(rng, 3)
    given = (lhs, rhs) if box_format == 'corner' else (_center(lhs), _center(rhs))
    out = contrib.box_iou(*(mx.nd.array(b, dtype='float64') for b in given), format=box_format)
    assert out.shape == (2, 5, 3) and out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), _iou_reference(lhs.reshape(-1, 4), rhs).reshape(2, 5, 3), atol=1e-12)


def test_box_iou_back_propagates_zeros():
    lhs = mx.nd.array(_corner_boxes(np.random.RandomState(1), 3))
    lhs.attach_grad()
    with mx.autograd.record():
        out = contrib.box_iou(lhs, lhs)
    out.backward()
    np.testing.assert_array_equal(lhs.grad.asnumpy(), np.zeros((3, 4)))


# --------------------------------------------------------------- box_nms
_NMS_BOXES = np.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                       [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8],
                       [0, 0.7, 0.11, 0.1, 0.2, 0.2], [0, 0.01, 0.8, 0.8, 0.9, 0.9]])
_EMPTY = [-1] * 6


@pytest.mark.parametrize('kwargs, expect', [
    # Per class: the class-1 box survives its class-0 twin; the low-scoring far box stays.
    (dict(overlap_thresh=0.1, id_index=0), [[0, 0.7, 0.11, 0.1, 0.2, 0.2], [2, 0.6, 0.5, 0.5, 0.7, 0.8],
                                            [1, 0.4, 0.1, 0.1, 0.2, 0.2], [0, 0.01, 0.8, 0.8, 0.9, 0.9],
                                            _EMPTY, _EMPTY]),
    (dict(overlap_thresh=0.1, id_index=0, force_suppress=True, topk=2),
     [[0, 0.7, 0.11, 0.1, 0.2, 0.2], [2, 0.6, 0.5, 0.5, 0.7, 0.8]] + [_EMPTY] * 4),
    (dict(overlap_thresh=0.1, id_index=0, background_id=0, out_format='center'),
     [[2, 0.6, 0.6, 0.65, 0.2, 0.3], [1, 0.4, 0.15, 0.15, 0.1, 0.1]] + [_EMPTY] * 4),
    (dict(overlap_thresh=0.1, valid_thresh=0.3),
     [[0, 0.7, 0.11, 0.1, 0.2, 0.2], [2, 0.6, 0.5, 0.5, 0.7, 0.8]] + [_EMPTY] * 4),
    (dict(topk=0), _NMS_BOXES),           # MXNet returns the input as it is
])
def test_box_nms_matches_mxnet(kwargs, expect):
    out = contrib.box_nms(mx.nd.array(_NMS_BOXES), **kwargs)
    np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-6, atol=1e-7)


def test_box_nms_alias_batches_and_center_input():
    data = np.stack([_NMS_BOXES, _NMS_BOXES[::-1]])
    centered = data.copy()
    centered[..., 2:] = _center(data[..., 2:])
    out = contrib.box_non_maximum_suppression(mx.nd.array(centered[None]), overlap_thresh=0.1,
                                              in_format='center')
    assert out.shape == (1, 2, 6, 6)
    # Centre input, corner output (the default): the same as corner boxes throughout.
    expect = contrib.box_nms(mx.nd.array(data), overlap_thresh=0.1).asnumpy()
    np.testing.assert_allclose(out.asnumpy()[0], expect, atol=1e-6)


def test_box_nms_gradient_follows_kept_rows():
    data = mx.nd.array(_NMS_BOXES)
    data.attach_grad()
    with mx.autograd.record():
        out = contrib.box_nms(data, overlap_thresh=0.1, id_index=0, out_format='center')
    out.backward(mx.nd.array(np.arange(36).reshape(6, 6)))
    # MXNet's recorded gradient: each kept row's output gradient, unchanged by the conversion.
    expect = np.zeros((6, 6))
    expect[[4, 3, 1, 5]] = np.arange(24).reshape(4, 6)
    np.testing.assert_array_equal(data.grad.asnumpy(), expect)


def test_box_nms_numeric_gradient():
    check_numeric_gradient(lambda d: contrib.box_nms(d, overlap_thresh=0.1), [_NMS_BOXES],
                           numeric_eps=1e-6)


@pytest.mark.parametrize('kwargs, match', [
    (dict(coord_start=3), 'coord_start'), (dict(id_index=3), 'id_index'),
    (dict(score_index=6), 'score_index'), (dict(id_index=1), 'id_index'),
])
def test_box_nms_bad_layout_raises(kwargs, match):
    with pytest.raises(mx.base.MXNetError, match=match):
        contrib.box_nms(mx.nd.array(_NMS_BOXES), **kwargs)


# ------------------------------------------------------ box encode/decode
def test_box_encode_matches_reference():
    rng = np.random.RandomState(2)
    samples = rng.choice([-1.0, 0.0, 1.0], (2, 6))
    matches = rng.randint(0, 3, (2, 6)).astype('float64')
    anchors, refs = _corner_boxes(rng, 2, 6), _corner_boxes(rng, 2, 3)
    means, stds = np.array([0.1, -0.1, 0.05, 0.0]), np.array([0.1, 0.1, 0.2, 0.3])
    targets, masks = contrib.box_encode(*(mx.nd.array(v, dtype='float64')
                                          for v in (samples, matches, anchors, refs, means, stds)))
    gt = _center(np.take_along_axis(refs, matches.astype(int)[..., None], 1))
    anchor = _center(anchors)
    offsets = np.concatenate([(gt[..., :2] - anchor[..., :2]) / anchor[..., 2:],
                              np.log(gt[..., 2:] / anchor[..., 2:])], -1)
    positive = (samples > 0.5)[..., None]
    np.testing.assert_allclose(targets.asnumpy(), np.where(positive, (offsets - means) / stds, 0), atol=1e-12)
    np.testing.assert_array_equal(masks.asnumpy(), np.broadcast_to(positive, (2, 6, 4)))


def _decode_reference(data, anchors, stds, clip):
    offsets = data * stds
    if clip > 0:
        offsets[..., 2:] = np.minimum(offsets[..., 2:], clip)
    center = offsets[..., :2] * anchors[..., 2:] + anchors[..., :2]
    half = np.exp(offsets[..., 2:]) * anchors[..., 2:] / 2
    return np.concatenate([center - half, center + half], -1)


@pytest.mark.parametrize('box_format, clip', [('center', -1.0), ('corner', 0.5)])
def test_box_decode_matches_reference(box_format, clip):
    rng = np.random.RandomState(3)
    data, anchors = rng.normal(0, 1, (2, 5, 4)), _corner_boxes(rng, 1, 5)
    stds = np.array([0.1, 0.2, 1.3, 1.4])
    given = anchors if box_format == 'corner' else _center(anchors)
    out = contrib.box_decode(mx.nd.array(data, dtype='float64'), mx.nd.array(given, dtype='float64'), *stds,
                             clip=clip, format=box_format)
    np.testing.assert_allclose(out.asnumpy(), _decode_reference(data, _center(anchors), stds, clip), atol=1e-12)


def test_box_decode_bad_anchors_raise():
    with pytest.raises(mx.base.MXNetError, match='anchors'):
        contrib.box_decode(mx.nd.ones((2, 5, 4)), mx.nd.ones((2, 5, 4)))


# ---------------------------------------------------- bipartite_matching
_SCORES = np.array([[[0.298579, 0.485922, 0.505053], [0.832873, 0.237837, 0.664591],
                     [0.3742, 0.775483, 0.195774], [0.476627, 0.103559, 0.21199]]])


@pytest.mark.parametrize('kwargs, rows, cols', [
    (dict(threshold=0.2), [2, 0, 1, -1], [1, 2, 0]),
    (dict(threshold=0.5, is_ascend=True), [0, -1, 2, 1], [0, 3, 2]),
    (dict(threshold=0.1, topk=1), [-1, 0, 1, -1], [1, 2, -1]),     # MXNet matches topk + 1 pairs
])
def test_bipartite_matching_matches_mxnet(kwargs, rows, cols):
    row_match, col_match = contrib.bipartite_matching(mx.nd.array(_SCORES), **kwargs)
    assert row_match.dtype == np.float32
    np.testing.assert_array_equal(row_match.asnumpy(), [rows])
    np.testing.assert_array_equal(col_match.asnumpy(), [cols])


def test_bipartite_matching_needs_threshold():
    with pytest.raises(mx.base.MXNetError, match='threshold'):
        contrib.bipartite_matching(mx.nd.array(_SCORES))


# -------------------------------------------------------------- ROIAlign
def _roi_inputs():
    feat = np.random.RandomState(7).normal(0, 1, (2, 4, 5, 6)).astype('float32')
    rois = np.array([[1, -1.5, -1.2, 3.0, 8.0], [0, 0.5, 1.0, 5.0, 4.5], [1, 2.2, 2.1, 2.6, 2.4]], 'float32')
    return feat, rois


# MXNet's results for _roi_inputs(): an ROI partly outside the image, one inside, one smaller
# than a pixel.
_ROI_EXPECT = {
    'adaptive': (dict(pooled_size=(2, 2), spatial_scale=0.9), [
        [[[-0.228491, -0.01452], [-0.329608, -0.141069]], [[-0.165286, -0.185594], [-0.230009, 0.056618]],
         [[-0.073888, -0.054735], [0.02354, 0.109707]], [[-0.360111, -0.072279], [0.109244, 0.30801]]],
        [[[-0.255615, -0.225986], [-0.27174, -0.155019]], [[-0.190583, -0.244363], [0.067199, 0.182006]],
         [[0.507806, 0.173671], [-0.313186, 0.772809]], [[-0.132014, 0.069133], [-0.150702, 0.273499]]],
        [[[-1.136972, -1.376879], [-0.72792, -0.477422]], [[0.453553, 0.79767], [-0.150211, 0.287265]],
         [[-1.099823, 0.859131], [-1.078276, 0.526173]], [[-0.714666, -0.285071], [-0.425396, -0.359586]]]]),
    'aligned': (dict(pooled_size=(1, 2), spatial_scale=1.0, sample_ratio=2, aligned=True), [
        [[[0.034255, 0.175262]], [[-0.231994, 0.050599]], [[-0.253321, 0.074051]], [[-0.202572, -0.032367]]],
        [[[-0.213669, -0.070788]], [[0.330539, 0.13277]], [[-0.323658, 0.449178]], [[0.187584, 0.117587]]],
        [[[-0.404383, -0.565456]], [[0.340404, 0.629535]], [[-1.367796, -1.488613]], [[-0.695184, -0.787264]]]]),
    'position_sensitive': (dict(pooled_size=(2, 1), spatial_scale=1.0, position_sensitive=True, sample_ratio=3), [
        [[[-0.172428], [-0.045867]], [[-0.077683], [0.238493]]],
        [[[-0.262078], [0.066226]], [[0.315013], [0.058125]]],
        [[[-0.98644], [0.038057]], [[0.532203], [-0.365339]]]]),
}


@pytest.mark.parametrize('case', sorted(_ROI_EXPECT))
def test_roi_align_matches_mxnet(case):
    kwargs, expect = _ROI_EXPECT[case]
    out = contrib.ROIAlign(*(mx.nd.array(v) for v in _roi_inputs()), **kwargs)
    np.testing.assert_allclose(out.asnumpy(), expect, atol=2e-6)


def test_roi_align_negative_batch_index_gives_zeros():
    feat, rois = _roi_inputs()
    rois[1, 0] = -1
    out = contrib.ROIAlign(mx.nd.array(feat), mx.nd.array(rois), pooled_size=(2, 2), spatial_scale=0.9)
    np.testing.assert_array_equal(out.asnumpy()[1], np.zeros((4, 2, 2)))
    np.testing.assert_allclose(out.asnumpy()[[0, 2]], np.array(_ROI_EXPECT['adaptive'][1])[[0, 2]], atol=2e-6)


def test_roi_align_shapes_on_symbols():
    sym = mx.sym.contrib.ROIAlign(mx.sym.var('data'), mx.sym.var('rois'), pooled_size=(3, 2), spatial_scale=0.5,
                                  sample_ratio=2, position_sensitive=True)
    assert sym.infer_shape(data=(2, 12, 9, 9), rois=(7, 5))[1] == [(7, 2, 3, 2)]


@pytest.mark.parametrize('kwargs, match', [
    (dict(rois=(3, 4)), 'rois'), (dict(data=(2, 5, 5, 6), position_sensitive=True), 'divisible'),
    (dict(data=(4, 5, 6)), 'data'),
])
def test_roi_align_bad_inputs_raise(kwargs, match):
    shapes = {'data': (2, 4, 5, 6), 'rois': (3, 5)}
    shapes.update({k: v for k, v in kwargs.items() if k in shapes})
    flags = {k: v for k, v in kwargs.items() if k not in shapes}
    with pytest.raises(mx.base.MXNetError, match=match):
        contrib.ROIAlign(mx.nd.ones(shapes['data']), mx.nd.ones(shapes['rois']), pooled_size=(2, 2),
                         spatial_scale=1.0, **flags)


@pytest.mark.parametrize('kwargs', [dict(pooled_size=(2, 2), spatial_scale=0.9),
                                    dict(pooled_size=(2, 1), spatial_scale=1.0, position_sensitive=True,
                                         sample_ratio=3, aligned=True)])
def test_roi_align_numeric_gradient(kwargs):
    feat, rois = _roi_inputs()
    check_numeric_gradient(lambda d: contrib.ROIAlign(d, mx.nd.array(rois, dtype='float64'), **kwargs),
                           [feat[:, :, :4, :5]], numeric_eps=1e-6)


def test_roi_align_rois_get_zero_gradient():
    feat, rois = (mx.nd.array(v) for v in _roi_inputs())
    rois.attach_grad()
    with mx.autograd.record():
        out = contrib.ROIAlign(feat, rois, pooled_size=(2, 2), spatial_scale=1.0)
    out.backward()
    np.testing.assert_array_equal(rois.grad.asnumpy(), np.zeros((3, 5)))


# --------------------------------------------------------- MultiBoxPrior
def _prior_reference(height, width, sizes, ratios, steps, offsets):
    shapes = [(s, ratios[0]) for s in sizes] + [(sizes[0], r) for r in ratios[1:]]
    out = []
    for i in range(height):
        for j in range(width):
            cy, cx = (i + offsets[0]) * steps[0], (j + offsets[1]) * steps[1]
            for size, ratio in shapes:
                half_w, half_h = size * height / width * np.sqrt(ratio) / 2, size / np.sqrt(ratio) / 2
                out.append([cx - half_w, cy - half_h, cx + half_w, cy + half_h])
    return np.array(out)[None]


def test_multibox_prior_documented_layout():
    out = contrib.MultiBoxPrior(mx.nd.zeros((1, 3, 2, 3)), sizes=(0.3, 0.6), ratios=(1, 4))
    assert out.shape == (1, 18, 4) and out.dtype == np.float32
    # MXNet's first location: size 0.3, size 0.6, then size 0.3 with ratio 4.
    np.testing.assert_allclose(out.asnumpy()[0, :3], [[0.066667, 0.1, 0.266667, 0.4],
                                                      [-0.033333, -0.05, 0.366667, 0.55],
                                                      [-0.033333, 0.175, 0.366667, 0.325]], atol=1e-6)


@pytest.mark.parametrize('kwargs, steps, offsets', [
    (dict(sizes=(0.3, 0.6), ratios=(1, 2, 0.5)), (1 / 3, 1 / 5), (0.5, 0.5)),
    (dict(sizes=(0.5,), ratios=(2, 1), steps=(0.2, 0.15), offsets=(0.3, 0.6)), (0.2, 0.15), (0.3, 0.6)),
])
def test_multibox_prior_matches_reference(kwargs, steps, offsets):
    out = contrib.MultiBoxPrior(mx.nd.zeros((2, 3, 3, 5)), **kwargs)
    expect = _prior_reference(3, 5, kwargs['sizes'], kwargs['ratios'], steps, offsets)
    np.testing.assert_allclose(out.asnumpy(), expect, atol=1e-6)
    clipped = contrib.MultiBoxPrior(mx.nd.zeros((2, 3, 3, 5)), clip=True, **kwargs)
    np.testing.assert_allclose(clipped.asnumpy(), np.clip(expect, 0, 1), atol=1e-6)
