"""Correlation (FlowNet's patch matching) against a direct numpy loop; shapes and errors as
MXNet 1.9.1 gives them."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient


def _reference(d1, d2, k, md, s1, s2, pad, multiply):
    p1 = np.pad(d1, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p2 = np.pad(d2, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    border = md + (k - 1) // 2
    top_h = -(-(p1.shape[2] - 2 * border) // s1)
    top_w = -(-(p1.shape[3] - 2 * border) // s1)
    radius = md // s2
    grid = 2 * radius + 1
    out = np.zeros((d1.shape[0], grid * grid, top_h, top_w))
    for c in range(grid * grid):
        dy, dx = (c // grid - radius) * s2, (c % grid - radius) * s2
        for i in range(top_h):
            for j in range(top_w):
                y, x = i * s1 + md, j * s1 + md
                a = p1[:, :, y:y + k, x:x + k]
                b = p2[:, :, y + dy:y + dy + k, x + dx:x + dx + k]
                out[:, c, i, j] = (a * b if multiply else np.abs(a - b)).sum((1, 2, 3))
    return out / (k * k * d1.shape[1])


@pytest.mark.parametrize('shape,k,md,s1,s2,pad,multiply', [
    ((2, 3, 7, 6), 1, 2, 1, 1, 2, True),
    ((1, 2, 7, 7), 3, 2, 2, 2, 1, False),
    ((2, 1, 9, 8), 3, 1, 2, 1, 2, True),
    ((1, 2, 6, 6), 1, 1, 2, 1, 0, False),
])
def test_correlation_values(shape, k, md, s1, s2, pad, multiply):
    rng = np.random.RandomState(1)
    d1, d2 = rng.rand(*shape), rng.rand(*shape)
    out = mx.nd.Correlation(mx.nd.array(d1), mx.nd.array(d2), kernel_size=k, max_displacement=md,
                            stride1=s1, stride2=s2, pad_size=pad, is_multiply=multiply)
    np.testing.assert_allclose(out.asnumpy(), _reference(d1, d2, k, md, s1, s2, pad, multiply),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('multiply', [True, False])
def test_correlation_gradients(multiply):
    rng = np.random.RandomState(2)
    d1, d2 = rng.rand(1, 2, 5, 5), rng.rand(1, 2, 5, 5)
    check_numeric_gradient(lambda a, b: mx.nd.Correlation(a, b, kernel_size=3, max_displacement=1,
                                                          pad_size=1, is_multiply=multiply),
                           [d1, d2], rtol=1e-2, atol=1e-3)


def test_correlation_absolute_difference_gradient_at_ties():
    # MXNet's sign is +1 towards data1 where the two are equal
    a, b = mx.nd.ones((1, 1, 3, 3)), mx.nd.ones((1, 1, 3, 3))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Correlation(a, b, max_displacement=0, is_multiply=False)
    out.backward()
    assert a.grad.asnumpy().tolist() == np.ones((1, 1, 3, 3)).tolist()
    assert b.grad.asnumpy().tolist() == (-np.ones((1, 1, 3, 3))).tolist()


def test_correlation_shapes_types_and_graph():
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    corr = mx.sym.Correlation(a, b)
    assert len(corr.list_outputs()) == 1 and corr.list_arguments() == ['a', 'b']
    _, out_shapes, _ = corr.infer_shape(a=(2, 3, 10, 10), b=(2, 3, 10, 10))
    assert out_shapes == [(2, 9, 8, 8)]
    _, out_types, _ = corr.infer_type(b='float16')
    assert out_types == [np.float16]
    # MXNet records three outputs per node (two of them the padded maps)
    assert json.loads(corr.tojson())['node_row_ptr'] == [0, 1, 2, 5]
    # values recorded from MXNet 1.9.1
    for sh, kw, expect in [((1, 1, 7, 7), dict(max_displacement=1, stride1=2), (1, 9, 3, 3)),
                           ((1, 1, 9, 9), dict(kernel_size=3, max_displacement=3, stride2=2), (1, 9, 1, 1)),
                           ((1, 1, 28, 28), dict(kernel_size=9), (1, 9, 18, 18))]:
        assert mx.nd.Correlation(mx.nd.ones(sh), mx.nd.ones(sh), **kw).shape == expect
    half = mx.nd.Correlation(mx.nd.ones((1, 2, 5, 5), dtype='float16'), mx.nd.ones((1, 2, 5, 5), dtype='float16'))
    assert half.dtype == np.float16 and float(half.asnumpy().max()) == 1.0


@pytest.mark.parametrize('kwargs,shape2,message', [
    (dict(kernel_size=28), None, 'do not fit'),
    (dict(kernel_size=27), None, 'do not fit'),
    (dict(kernel_size=2), None, 'kernel_size must be odd'),
    (dict(stride1=0), None, 'must be positive'),
    ({}, (1, 1, 28, 27), 'of one shape'),
])
def test_correlation_errors(kwargs, shape2, message):
    with pytest.raises(mx.base.MXNetError, match='Correlation.*' + message):
        mx.nd.Correlation(mx.nd.ones((1, 1, 28, 28)), mx.nd.ones(shape2 or (1, 1, 28, 28)), **kwargs)
