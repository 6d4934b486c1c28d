"""Small contrib/utility operators (neomx/operator/contrib_misc.py). Literals were recorded
from MXNet 1.9.1; the interleaved attention layouts were checked against it with the numpy
references below."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import assert_almost_equal, check_numeric_gradient

nd = mx.nd
C = nd.contrib
X = np.array([[1.5, -2.5, 0.4], [-0.6, 0, 3.7]], dtype=np.float32)
HEAD = np.arange(1, 7, dtype=np.float32).reshape(2, 3)


def _grad(fn, *values, head=None):
    arrays = [nd.array(v) for v in values]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        out = fn(*arrays)
    out.backward(None if head is None else nd.array(head))
    return [a.grad.asnumpy() for a in arrays]


def test_finiteness_and_sums_of_squares():
    x = nd.array(X)
    assert nd.all_finite(x).asnumpy().tolist() == [1.0] and nd.all_finite(x).dtype == np.float32
    assert nd.all_finite(nd.array([1, np.nan])).asnumpy().tolist() == [0.0]
    assert nd.multi_all_finite(x, nd.array([np.inf]), num_arrays=2).asnumpy().tolist() == [0.0]
    with pytest.raises(mx.base.MXNetError, match='floating'):
        nd.all_finite(nd.array([1], dtype='int32'))
    sums = nd.multi_sum_sq(x, nd.array([1, 2], dtype='float16'), num_arrays=2)
    assert sums.dtype == np.float32
    assert_almost_equal(sums, np.array([22.71, 5.0], np.float32))
    with pytest.raises(mx.base.MXNetError, match='num_arrays'):
        nd.multi_sum_sq(x, x, num_arrays=None)


def test_reset_arrays_and_amp_multicast():
    a, b = nd.ones((2,)), nd.ones((3,), dtype='float64')
    assert nd.reset_arrays(a, b, num_arrays=2) == []
    assert a.asnumpy().tolist() == [0, 0] and b.asnumpy().tolist() == [0, 0, 0]
    half, single, double = nd.ones(2, dtype='float16'), nd.ones(2), nd.ones(2, dtype='float64')
    wide = nd.amp_multicast(double, single, half, num_outputs=3)
    assert [o.dtype for o in wide] == [np.float64, np.float32, np.float32]
    narrow = nd.amp_multicast(double, single, half, num_outputs=3, cast_narrow=True)
    assert [o.dtype for o in narrow] == [np.float64, np.float16, np.float16]
    assert [o.dtype for o in nd.amp_multicast(nd.ones(2, dtype='int32'), half, num_outputs=2)] == [np.int32, np.float16]
    grads = _grad(lambda p, q: nd.amp_multicast(p, q.astype('float16'), num_outputs=2)[1] * 2, np.ones(2), np.ones(2))
    assert grads[0].tolist() == [0, 0] and grads[1].tolist() == [2, 2]


def test_arange_like_div_sqrt_dim_quadratic_allclose():
    x = nd.array(X)
    assert C.arange_like(x, start=2, step=0.5, repeat=2).asnumpy().tolist() == [[2, 2, 2.5], [2.5, 3, 3]]
    assert C.arange_like(x, start=1, axis=-2, repeat=2).asnumpy().tolist() == [1, 1]
    assert C.arange_like(nd.array([[1, 2]], dtype='int32')).dtype == np.int32
    assert C.div_sqrt_dim(nd.ones((2, 4), dtype='int32') * 5).asnumpy().tolist() == [[2] * 4] * 2
    assert_almost_equal(C.div_sqrt_dim(nd.ones((2, 3, 4))), np.full((2, 3, 4), 0.5, np.float32))
    assert_almost_equal(C.quadratic(x, a=1, b=2, c=3), X * X + 2 * X + 3)
    assert C.quadratic(nd.array([1, 2], dtype='int32'), 1.5, 2, 0.5).asnumpy().tolist() == [4, 10]
    check_numeric_gradient(lambda d: C.quadratic(d, 1.5, -2, 3), [X])
    check_numeric_gradient(lambda d: C.div_sqrt_dim(d), [X])
    close = C.allclose(nd.array([1.0]), nd.array([1.1]), rtol=0.1, atol=0)
    assert close.dtype == np.uint8 and close.shape == () and int(close.asscalar()) == 1
    assert int(C.allclose(nd.array([1.1]), nd.array([1.0]), rtol=0.1, atol=0).asscalar()) == 0
    assert int(C.allclose(nd.array([np.nan]), nd.array([np.nan])).asscalar()) == 1
    assert int(C.allclose(nd.array([np.nan]), nd.array([np.nan]), equal_nan=False).asscalar()) == 0
    with pytest.raises(mx.base.MXNetError):
        C.allclose(x, nd.ones((3,)))


def test_index_array():
    out = C.index_array(nd.array(X))
    assert out.dtype == np.int64 and out.shape == (2, 3, 2)
    assert out.asnumpy().reshape(-1, 2).tolist() == [[i, j] for i in range(2) for j in range(3)]
    picked = C.index_array(nd.ones((2, 3, 4)), axes=(2, 0)).asnumpy()
    assert picked.shape == (2, 3, 4, 2) and picked[1, 2, 3].tolist() == [3, 1]


def test_index_array_of_a_0d_array_and_of_no_axes():
    with mx.np_shape():
        out = C.index_array(nd.ones(()))
        assert out.shape == (0,) and out.dtype == np.int64
        assert C.index_array(nd.ones((0, 0, 0, 0)), axes=(2, 1)).shape == (0, 0, 0, 0, 2)
    assert C.index_array(nd.ones((2, 3)), axes=()).shape == (2, 3, 0)


def test_straight_through_estimators_and_gradient_multiplier():
    x = nd.array(X)
    assert C.round_ste(nd.array([0.5, 1.5, 2.5, -0.5, -1.5])).asnumpy().tolist() == [1, 2, 3, -1, -2]
    assert C.sign_ste(x).asnumpy().tolist() == [[1, -1, 1], [-1, 0, 1]]
    for op in (C.round_ste, C.sign_ste):    # MXNet passes the head gradient through unchanged
        assert _grad(lambda d: op(d) * nd.array(HEAD), X)[0].tolist() == HEAD.tolist()
    assert C.gradientmultiplier(x, scalar=3).asnumpy().tolist() == X.tolist()
    assert (_grad(lambda d: C.gradientmultiplier(d, -0.5), X)[0] == -0.5).all()


def test_adaptive_avg_pooling():
    x = nd.array(np.arange(2 * 2 * 5 * 7).reshape(2, 2, 5, 7) % 11)
    out = C.AdaptiveAvgPooling2D(x, output_size=(4, 6))
    assert_almost_equal(out.asnumpy().ravel()[:12], np.array([4, 5, 6, 4.25, 2.5, 3.5, 5.5, 6.5, 7.5, 5.75, 4, 5],
                                                              np.float32))
    assert C.AdaptiveAvgPooling2D(x).shape == (2, 2, 1, 1)
    assert C.AdaptiveAvgPooling2D(x, output_size=3).shape == (2, 2, 3, 3)
    assert_almost_equal(C.AdaptiveAvgPooling2D(x, output_size=(1,)).asnumpy().ravel()[:2], [4.742857, 4.857143])
    grad = _grad(lambda d: C.AdaptiveAvgPooling2D(d, output_size=(3, 4)), np.arange(35.).reshape(1, 1, 5, 7),
                 head=np.ones((1, 1, 3, 4)))[0]
    assert_almost_equal(grad.ravel()[:12], [0.25, 0.4166667, 0.1666667, 0.3333333, 0.1666667, 0.4166667, 0.25,
                                           0.4166667, 0.6944445, 0.2777778, 0.5555556, 0.2777778])
    check_numeric_gradient(lambda d: C.AdaptiveAvgPooling2D(d, output_size=(2, 3)),
                           [np.random.RandomState(0).randn(1, 2, 5, 4)])
    with pytest.raises(mx.base.MXNetError, match='N, C, H, W'):
        C.AdaptiveAvgPooling2D(nd.ones((2, 5, 7)), output_size=2)


def test_im2col_col2im():
    x = nd.array(np.arange(40.).reshape(1, 2, 4, 5))
    cols = nd.im2col(x, kernel=(2, 3), stride=(2, 1), pad=(1, 1), dilate=(1, 2))
    assert cols.shape == (1, 12, 9)
    assert cols.asnumpy().ravel()[:12].tolist() == [0, 0, 0, 0, 5, 6, 0, 15, 16, 0, 0, 0]
    assert nd.im2col(x, kernel=(2, 2)).asnumpy().ravel()[:12].tolist() == [0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13]
    back = nd.col2im(nd.ones((1, 8, 12)), output_size=(4, 5), kernel=(2, 2))
    assert back.shape == (1, 2, 4, 5)
    assert back.asnumpy().ravel()[:12].tolist() == [1, 2, 2, 2, 1, 2, 4, 4, 4, 2, 2, 4]
    with pytest.raises(mx.base.MXNetError, match='does not match'):
        nd.col2im(nd.ones((1, 12, 10)), output_size=(4, 5), kernel=(2, 3), stride=(2, 1), pad=(1, 1), dilate=(1, 2))
    rs = np.random.RandomState(0)
    check_numeric_gradient(lambda d: nd.im2col(d, kernel=(2, 2), stride=(2, 1), pad=(1, 0)), [rs.randn(1, 1, 4, 5)])
    check_numeric_gradient(lambda d: nd.col2im(d, output_size=(3, 3), kernel=(2, 2)), [rs.randn(1, 4, 4)])


def test_crop():
    x = nd.array(np.arange(2 * 2 * 5 * 6).reshape(2, 2, 5, 6))
    assert nd.Crop(x, num_args=1, h_w=(3, 4), offset=(1, 2)).asnumpy()[0, 0, 0].tolist() == [8, 9, 10, 11]
    centred = nd.Crop(x, nd.ones((1, 1, 2, 3)), num_args=2, center_crop=True, offset=(1, 1))
    assert centred.shape == (2, 2, 2, 3) and centred.asnumpy()[0, 0].tolist() == [[7, 8, 9], [13, 14, 15]]
    assert nd.Crop(x, h_w=(3, 4)).shape == (2, 2, 3, 4)
    with pytest.raises(mx.base.MXNetError, match='does not fit'):
        nd.Crop(x, num_args=1, h_w=(3, 4), offset=(3, 0))
    with pytest.raises(mx.base.MXNetError, match='positive'):
        nd.Crop(x, num_args=1)
    check_numeric_gradient(lambda d: nd.Crop(d, num_args=1, h_w=(2, 2), offset=(1, 1)),
                           [np.random.RandomState(0).randn(1, 1, 3, 4)])


def _heads(packed, heads, parts):
    length, batch, _ = packed.shape
    split = packed.reshape(length, batch, heads, parts, -1)
    return [split[:, :, :, p].transpose(1, 2, 0, 3).reshape(batch * heads, length, -1) for p in range(parts)]


def _merge(out, heads):
    bh, length, dim = out.shape
    return out.reshape(bh // heads, heads, length, dim).transpose(2, 0, 1, 3).reshape(length, bh // heads, -1)


def test_interleaved_attention():
    rs = np.random.RandomState(0)
    L, Lk, B, H, D = 3, 5, 2, 2, 4
    qkv = rs.randn(L, B, H * 3 * D).astype(np.float32)
    q, k, v = _heads(qkv, H, 3)
    scores = C.interleaved_matmul_selfatt_qk(nd.array(qkv), heads=H)
    assert_almost_equal(scores, q @ k.transpose(0, 2, 1) / np.sqrt(D))
    att = rs.rand(B * H, L, L).astype(np.float32)
    assert_almost_equal(C.interleaved_matmul_selfatt_valatt(nd.array(qkv), nd.array(att), heads=H), _merge(att @ v, H))
    queries = rs.randn(L, B, H * D).astype(np.float32)
    kv = rs.randn(Lk, B, H * 2 * D).astype(np.float32)
    k, v = _heads(kv, H, 2)
    qh = _heads(queries, H, 1)[0]
    assert_almost_equal(C.interleaved_matmul_encdec_qk(nd.array(queries), nd.array(kv), heads=H),
                        qh @ k.transpose(0, 2, 1) / np.sqrt(D))
    att = rs.rand(B * H, L, Lk).astype(np.float32)
    assert_almost_equal(C.interleaved_matmul_encdec_valatt(nd.array(kv), nd.array(att), heads=H), _merge(att @ v, H))
    with pytest.raises(mx.base.MXNetError, match='multiple'):
        C.interleaved_matmul_selfatt_qk(nd.ones((3, 2, 10)), heads=2)
    small = [rs.randn(2, 1, 2 * 3 * 2), rs.rand(2, 2, 2), rs.randn(2, 1, 2 * 2), rs.randn(3, 1, 2 * 2 * 2),
             rs.rand(2, 2, 3)]
    check_numeric_gradient(lambda a: C.interleaved_matmul_selfatt_qk(a, heads=2), [small[0]])
    check_numeric_gradient(lambda a, b: C.interleaved_matmul_selfatt_valatt(a, b, heads=2), small[:2])
    check_numeric_gradient(lambda a, b: C.interleaved_matmul_encdec_qk(a, b, heads=2), small[2:4])
    check_numeric_gradient(lambda a, b: C.interleaved_matmul_encdec_valatt(a, b, heads=2), small[3:])


SVM_DATA = np.array([[-0.5693120360374451, 0.26990434527397156, -0.4668455421924591],
                     [-1.4169061183929443, 0.8689634799957275, 0.276871919631958],
                     [-0.9711045622825623, 0.3148171901702881, 0.8215857148170471],
                     [0.005292646121233702, 0.8005648255348206, 0.07826017588376999]], np.float32)
SVM_LABEL = np.array([0, 2, 1, 2], np.float32)


@pytest.mark.parametrize('use_linear, margin, reg, expected', [
    (False, 0.5, 2.0, [[-4.277248382568359, 3.079617500305176, 0.13261783123016357],
                       [0.0, 5.47585391998291, -0.892512321472168], [0.0, -0.7407312393188477, 5.286342620849609],
                       [2.0211706161499023, 5.202259063720703, -1.6869592666625977]]),
    (True, 1.0, 1.0, [[-1, 1, 1], [0, 1, -1], [1, -1, 1], [1, 1, -1]]),
    (True, 0.5, 2.0, [[-2, 2, 2], [0, 2, -2], [0, -2, 2], [2, 2, -2]]),
])
def test_svm_output(use_linear, margin, reg, expected):
    label = nd.array(SVM_LABEL)
    grad = _grad(lambda d: nd.SVMOutput(d, label, margin=margin, regularization_coefficient=reg,
                                        use_linear=use_linear), SVM_DATA, head=np.full((4, 3), 5.0))[0]
    assert_almost_equal(grad, np.array(expected, np.float32))
    assert_almost_equal(nd.SVMOutput(nd.array(SVM_DATA), label), SVM_DATA)
    sym = mx.sym.SVMOutput(mx.sym.var('data'), name='svm')
    assert sym.list_arguments() == ['data', 'svm_label']
    assert sym.infer_shape(data=(4, 3))[0] == [(4, 3), (4,)]
