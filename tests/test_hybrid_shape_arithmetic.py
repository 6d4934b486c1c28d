"""Graphs that compute with their own shapes (``shape_array`` and integer arithmetic, as
detection decoders do) infer shapes and run hybridized as they do eagerly: shape inference
has no values, so it must not divide by a placeholder zero."""
import numpy as np
import pytest

import neomx as mx
from neomx import gluon
from neomx.base import MXNetError


class StrideDecoder(gluon.HybridBlock):
    """Scales each sample's sum by 64 // H, 64 % W and 64 // W taken from the input's shape."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = gluon.nn.Dense(3)

    def hybrid_forward(self, F, x):
        size = F.slice_axis(F.shape_array(x), axis=0, begin=2, end=4)        # int64 (H, W)
        stride = 64 / size                                                   # _rdiv_scalar
        rest = F.broadcast_mod(F.ones_like(size) * 64, size)
        step = F.broadcast_div(F.ones_like(size) * 64, size)
        factors = F.cast(F.concat(stride, rest, step, dim=0), 'float32')
        total = F.sum(x, axis=(1, 2, 3)).reshape((-1, 1))
        return self.dense(F.broadcast_mul(total, factors.reshape((1, -1))))


def _eager_expected(x):
    h, w = x.shape[2:]
    factors = np.array([64 // h, 64 // w, 64 % h, 64 % w, 64 // h, 64 // w], 'float32')
    return x.sum(axis=(1, 2, 3))[:, None] * factors.sum()      # weights all one, bias 0


@pytest.mark.parametrize('hybridize', [False, True])
def test_shape_arithmetic_runs_and_defers_init(hybridize):
    net = StrideDecoder()
    net.initialize(mx.init.One())
    if hybridize:
        net.hybridize()
    x = np.ones((2, 2, 8, 16), 'float32')
    out = net(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(out, np.repeat(_eager_expected(x), 3, axis=1))
    assert net.dense.weight.shape == (3, 6)


def test_shape_arithmetic_symbol_infers_shapes():
    sym = StrideDecoder()(mx.sym.var('data'))
    args, outs, _ = sym.infer_shape(data=(2, 2, 8, 16))
    assert args == [(2, 2, 8, 16), (3, 6), (3,)] and outs == [(2, 3)]


def test_integer_division_by_a_real_zero_still_raises():
    data = mx.sym.var('data', dtype='int64')
    sym = mx.sym.broadcast_div(mx.sym.ones_like(data) * 7, data)
    exe = sym.bind(mx.cpu(), {'data': mx.nd.array([1, 0], dtype='int64')})
    with pytest.raises(MXNetError, match='division by zero'):
        exe.forward()[0].asnumpy()
