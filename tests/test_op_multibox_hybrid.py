"""An SSD head (MultiBoxPrior, MultiBoxTarget with hard negative mining, MultiBoxDetection)
trains and detects the same eagerly and hybridized."""
import numpy as np

import neomx as mx
from neomx import gluon


class SSDHead(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cls = gluon.nn.Conv2D(3 * 4, 3, padding=1)
        self.loc = gluon.nn.Conv2D(4 * 4, 3, padding=1)

    def hybrid_forward(self, F, x, label):
        anchors = F.contrib.MultiBoxPrior(x, sizes=(0.3, 0.5), ratios=(1, 2, 0.5))
        cls = F.transpose(self.cls(x), (0, 2, 3, 1)).reshape((0, -1, 3))
        loc = F.transpose(self.loc(x), (0, 2, 3, 1)).reshape((0, -1))
        loc_t, loc_m, cls_t = F.contrib.MultiBoxTarget(anchors, label, F.transpose(cls, (0, 2, 1)),
                                                       negative_mining_ratio=3)
        det = F.contrib.MultiBoxDetection(F.softmax(F.transpose(cls, (0, 2, 1)), axis=1), loc, anchors)
        loss = (F.sum(F.smooth_l1((loc - loc_t) * loc_m))
                - F.sum(F.pick(F.log_softmax(cls), F.maximum(cls_t, 0)) * (cls_t >= 0)))
        return loss, det


def test_ssd_head_eager_and_hybridized_agree():
    mx.random.seed(0)
    net = SSDHead()
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(shape=(2, 8, 4, 4))
    label = mx.nd.array([[[1, 0.1, 0.1, 0.5, 0.6], [-1] * 5], [[0, 0.5, 0.5, 0.9, 0.8], [2, 0., 0., .3, .3]]])
    results = []
    for hybridize in (False, True):
        if hybridize:
            net.hybridize()
        with mx.autograd.record():
            loss, det = net(x, label)
        loss.backward()
        results.append((loss.asscalar(), det.asnumpy(), net.cls.weight.grad().asnumpy().copy()))
    (loss0, det0, grad0), (loss1, det1, grad1) = results
    assert det0.shape == (2, 64, 6) and np.isfinite(loss0) and np.abs(grad0).sum() > 0
    np.testing.assert_allclose(loss1, loss0, rtol=1e-5)
    np.testing.assert_allclose(det1, det0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad1, grad0, rtol=1e-4, atol=1e-6)
