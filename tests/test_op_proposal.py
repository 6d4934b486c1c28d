"""contrib.Proposal / MultiProposal: values recorded from MXNet 1.9.1, zero gradients, shapes, errors."""
import json

import numpy as np
import pytest

import neomx as mx

A, H, W = 9, 5, 6
RNG = np.random.RandomState(0)
CLS = RNG.rand(2, 2 * A, H, W)
BBOX = (RNG.rand(2, 4 * A, H, W) - 0.5) * 0.4
INFO = np.array([[70, 90, 1.0], [60, 50, 0.8]])
COMMON = dict(feature_stride=16, scales=(2, 4, 8), ratios=(0.5, 1, 2))

# MXNet 1.9.1: Proposal of image 0, rpn_pre_nms_top_n=50, rpn_post_nms_top_n=12, threshold=0.5
ROIS_0 = [[0, 12.881, 0, 30.4866, 30.1821], [0, 0, 0, 89, 64.2599], [0, 41.7412, 31.6485, 83.4866, 56.719],
          [0, 0, 0, 24.7851, 15.2205], [0, 25.4538, 0, 70.5549, 59.4398], [0, 39.8451, 0, 88.353, 16.202],
          [0, 55.1096, 35.8164, 86.8337, 69], [0, 57.9448, 0, 76.5322, 31.9032], [0, 0, 20.2408, 44.8244, 69],
          [0, 44.333, 30.8497, 63.8616, 69], [0, 0, 12.7304, 19.6238, 34.6932], [0, 0, 0, 41.7328, 23.3033]]
SCORES_0 = [0.992, 0.9903, 0.9818, 0.9775, 0.9678, 0.9616, 0.9519, 0.951, 0.9453, 0.9426, 0.9414, 0.9066]
# MultiProposal of both, rpn_pre_nms_top_n=300, rpn_post_nms_top_n=40, rpn_min_size=8: rows 0-2, 38-41, 79
MULTI_ROWS = [[0, 12.881, 0, 30.4866, 30.1821], [0, 0, 0, 89, 64.2599], [0, 0, 0, 45.7598, 69],
              [0, 0.6986, 42.902, 48.2311, 69], [0, 12.6687, 31.6871, 44.9916, 59.0004],
              [1, 0, 3.9219, 49, 59], [1, 0, 17.2576, 22.6928, 55.2773], [1, 31.8732, 8.9173, 49, 30.6678]]


def _nd(*arrays):
    return [mx.nd.array(a) for a in arrays]


def test_proposal_values():
    rois, score = mx.nd.contrib.Proposal(*_nd(CLS[:1], BBOX[:1], INFO[:1]), rpn_pre_nms_top_n=50,
                                         rpn_post_nms_top_n=12, threshold=0.5, rpn_min_size=16,
                                         output_score=True, **COMMON)
    np.testing.assert_allclose(rois.asnumpy(), ROIS_0, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(score.asnumpy().ravel(), SCORES_0, atol=1e-4)


def test_multi_proposal_values_and_agreement_with_proposal():
    rois = mx.nd.contrib.MultiProposal(*_nd(CLS, BBOX, INFO), rpn_pre_nms_top_n=300, rpn_post_nms_top_n=40,
                                       threshold=0.7, rpn_min_size=8, **COMMON)
    assert rois.shape == (80, 5)
    np.testing.assert_allclose(rois.asnumpy()[[0, 1, 2, 38, 39, 40, 41, 79]], MULTI_ROWS, rtol=1e-4, atol=1e-3)
    single = mx.nd.contrib.Proposal(*_nd(CLS[1:], BBOX[1:], INFO[1:]), rpn_pre_nms_top_n=300,
                                    rpn_post_nms_top_n=40, threshold=0.7, rpn_min_size=8, **COMMON)
    np.testing.assert_allclose(single.asnumpy()[:, 1:], rois.asnumpy()[40:, 1:])
    # fewer kept boxes than asked for repeat cyclically
    few = mx.nd.contrib.Proposal(*_nd(CLS[:1], BBOX[:1], INFO[:1]), rpn_pre_nms_top_n=3, rpn_post_nms_top_n=7,
                                 **COMMON).asnumpy()
    np.testing.assert_array_equal(few[3:6], few[:3])


def test_proposal_gradients_are_zero_and_symbol():
    args = _nd(CLS, BBOX, INFO)
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.MultiProposal(*args, rpn_post_nms_top_n=10, **COMMON)
    out.backward()
    assert all(float(a.grad.abs().sum().asscalar()) == 0 for a in args)
    sym = mx.sym.contrib.MultiProposal(mx.sym.Variable('c'), mx.sym.Variable('b'), mx.sym.Variable('i'),
                                       output_score=True)
    assert [n.split('_')[-1] for n in sym.list_outputs()] == ['output', 'score']
    assert sym.infer_shape(c=(2, 24, 5, 6), b=(2, 48, 5, 6), i=(2, 3))[1] == [(600, 5), (600, 1)]
    plain = mx.sym.contrib.Proposal(mx.sym.Variable('c'), mx.sym.Variable('b'), mx.sym.Variable('i'))
    assert len(plain.list_outputs()) == 1
    assert json.loads(plain.tojson())['node_row_ptr'] == [0, 1, 2, 3, 5]


def test_proposal_errors():
    with pytest.raises(mx.base.MXNetError, match='_contrib_Proposal: takes one image'):
        mx.nd.contrib.Proposal(*_nd(CLS, BBOX, INFO), **COMMON)
    with pytest.raises(mx.base.MXNetError, match=r'cls_prob must have shape \(batch, 2 \* 12 anchors'):
        mx.nd.contrib.MultiProposal(*_nd(CLS, BBOX, INFO))
    with pytest.raises(mx.base.MXNetError, match='im_info must have shape'):
        mx.nd.contrib.MultiProposal(*_nd(CLS, BBOX, INFO[:1]), **COMMON)


def test_blocked_suppression_matches_plain_greedy():
    import torch
    from neomx.operator.proposal import _greedy_keep
    rng = np.random.RandomState(3)
    corners = rng.rand(700, 2) * 200
    boxes = np.concatenate([corners, corners + rng.rand(700, 2) * 60 + 1], axis=1)

    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + 1)
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
        area = lambda c: (c[2] - c[0] + 1) * (c[3] - c[1] + 1)  # noqa: E731
        return w * h / (area(a) + area(b) - w * h)

    expect = []
    for i, box in enumerate(boxes):
        if all(iou(boxes[k], box) <= 0.5 for k in expect):
            expect.append(i)
    tensor = torch.tensor(boxes, dtype=torch.float64)
    assert _greedy_keep(tensor, 0.5, 10000) == expect
    assert _greedy_keep(tensor, 0.5, 300) == expect[:300]
