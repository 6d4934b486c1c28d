"""dot, batch_dot and the ``mx.nd.linalg`` operators.

Values against numpy references (and MXNet 1.9.1's recorded conventions: packing order,
eigenvector signs, output shapes); finite-difference gradient checks for every operator.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

RNG = np.random.RandomState(0)
SPD = np.array([[4.0, 2.0], [2.0, 3.0]])
LOWER = np.array([[2.0, 0.0], [1.0, 4.0]])
la = mx.nd.linalg


def _nd(values):
    return mx.nd.array(values)


# ------------------------------------------------------------------------ dot
def test_dot_matrices_and_transposes():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(mx.nd.dot(_nd(a), _nd(b)).asnumpy(), a @ b)
    np.testing.assert_array_equal(mx.nd.dot(_nd(a), _nd(a), transpose_a=True).asnumpy(), a.T @ a)
    np.testing.assert_array_equal(mx.nd.dot(_nd(a), _nd(a), transpose_b=True).asnumpy(), a @ a.T)
    np.testing.assert_array_equal(mx.nd.dot(_nd(b), _nd(a), True, True).asnumpy(), b.T @ a.T)


def test_dot_vectors():
    v = np.array([1.0, 2.0, 3.0])
    out = mx.nd.dot(_nd(v), _nd(v))
    assert out.shape == (1,) and out.asnumpy().tolist() == [14]
    assert mx.nd.dot(_nd(np.ones((2, 3))), _nd(v)).asnumpy().tolist() == [6, 6]
    assert mx.nd.dot(_nd(v), _nd(np.ones((2, 3))), transpose_b=True).asnumpy().tolist() == [6, 6]
    with pytest.raises(mx.base.MXNetError, match='dot: .*transpose vectors'):
        mx.nd.dot(_nd(v), _nd(v), transpose_a=True)


def test_dot_nd_tensors_contract_one_axis():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(mx.nd.dot(_nd(a), _nd(np.arange(40.0).reshape(4, 2, 5))).asnumpy(),
                                  np.tensordot(a, np.arange(40.0).reshape(4, 2, 5), axes=1))
    out = mx.nd.dot(_nd(a), _nd(np.arange(10.0).reshape(2, 5)), transpose_a=True)
    np.testing.assert_array_equal(out.asnumpy(), np.tensordot(a, np.arange(10.0).reshape(2, 5), axes=(0, 0)))
    c = np.arange(120.0).reshape(5, 6, 4)
    out = mx.nd.dot(_nd(a), _nd(c), transpose_b=True)
    assert out.shape == (2, 3, 5, 6)
    np.testing.assert_array_equal(out.asnumpy(), np.tensordot(a, c, axes=(2, 2)))


def test_dot_errors_name_the_shapes():
    with pytest.raises(mx.base.MXNetError, match=r'dot: .*\(2, 3\) X \(2, 3\)'):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    with pytest.raises(mx.base.MXNetError, match='dot: .*dtypes'):
        mx.nd.dot(mx.nd.ones((2, 2), dtype='float64'), mx.nd.ones((2, 2)))


def test_batch_dot():
    a, b = np.arange(12.0).reshape(2, 2, 3), np.arange(12.0).reshape(2, 3, 2) / 2
    np.testing.assert_allclose(mx.nd.batch_dot(_nd(a), _nd(b)).asnumpy(), a @ b)
    np.testing.assert_allclose(mx.nd.batch_dot(_nd(a), _nd(a), transpose_a=True).asnumpy(),
                               a.transpose(0, 2, 1) @ a)
    four_d = np.arange(24.0).reshape(2, 2, 2, 3)
    assert mx.nd.batch_dot(_nd(four_d), _nd(four_d), transpose_b=True).shape == (2, 2, 2, 2)
    with pytest.raises(mx.base.MXNetError, match='batch_dot: .*N >= 3'):
        mx.nd.batch_dot(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    with pytest.raises(mx.base.MXNetError, match='batch_dot: .*batch'):
        mx.nd.batch_dot(mx.nd.ones((2, 2, 3)), mx.nd.ones((3, 3, 4)))


@pytest.mark.parametrize('transpose_a', [False, True])
@pytest.mark.parametrize('transpose_b', [False, True])
def test_dot_gradients(transpose_a, transpose_b):
    # The contracted axis (size 3) is lhs' first with transpose_a, rhs' last with transpose_b.
    lhs = RNG.randn(3, 2, 2) if transpose_a else RNG.randn(2, 2, 3)
    rhs = RNG.randn(4, 3) if transpose_b else RNG.randn(3, 4)
    flags = dict(transpose_a=transpose_a, transpose_b=transpose_b)
    check_numeric_gradient(lambda a, b: mx.nd.dot(a, b, **flags), [lhs, rhs])
    check_numeric_gradient(lambda a, b: mx.nd.batch_dot(a, b, **flags),
                           [RNG.randn(2, 3, 3), RNG.randn(2, 3, 3)])


def test_khatri_rao():
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = np.einsum('ik,jk->ijk', a, b).reshape(6, 2)
    np.testing.assert_array_equal(mx.nd.khatri_rao(_nd(a), _nd(b)).asnumpy(), expected)
    with pytest.raises(mx.base.MXNetError, match='khatri_rao: .*columns'):
        mx.nd.khatri_rao(_nd(a), mx.nd.ones((2, 3)))
    check_numeric_gradient(lambda *m: mx.nd.khatri_rao(*m), [a, b, RNG.randn(2, 2)])


# --------------------------------------------------------------------- linalg
def test_gemm_and_gemm2():
    a = SPD
    np.testing.assert_allclose(la.gemm2(_nd(a), _nd(a), transpose_b=True, alpha=0.5).asnumpy(), 0.5 * a @ a.T)
    np.testing.assert_allclose(la.gemm(_nd(a), _nd(a), _nd(a), alpha=2, beta=3, transpose_a=True).asnumpy(),
                               2 * a.T @ a + 3 * a)
    # axis=1: rows along axis 1, columns along the last axis, the other axes are a batch.
    x, w = np.arange(120.0).reshape(2, 3, 4, 5), np.arange(120.0).reshape(2, 5, 4, 3)
    expected = np.einsum('brkc,bckd->brkd', x, w)
    np.testing.assert_allclose(la.gemm2(_nd(x), _nd(w), axis=1).asnumpy(), expected, rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match='linalg_gemm2: .*incompatible'):
        la.gemm2(_nd(x), _nd(x))


def test_gemm_gradients():
    a, b, c = RNG.randn(2, 3, 2), RNG.randn(2, 3, 4), RNG.randn(2, 2, 4)
    check_numeric_gradient(lambda *m: la.gemm(*m, transpose_a=True, alpha=0.7, beta=1.3), [a, b, c])
    check_numeric_gradient(lambda *m: la.gemm2(*m, transpose_b=True, alpha=2.0), [b, b])


def test_cholesky_family():
    L = la.potrf(_nd(SPD)).asnumpy()
    np.testing.assert_allclose(L, np.linalg.cholesky(SPD), rtol=1e-6)
    np.testing.assert_allclose(la.potri(_nd(L)).asnumpy(), np.linalg.inv(SPD), rtol=1e-5)
    with pytest.raises(mx.base.MXNetError, match='linalg_potrf'):
        la.potrf(_nd([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(mx.base.MXNetError, match='linalg_det: .*float32 and float64'):
        la.det(mx.nd.array([[1, 2], [3, 4]], dtype='int32'))


def test_cholesky_upper_factor_reads_the_upper_triangle():
    upper = np.linalg.cholesky(SPD).T
    junk_below = np.triu(SPD) + np.tril(np.full_like(SPD, 7.0), -1)
    np.testing.assert_allclose(la.potrf(_nd(junk_below), lower=False).asnumpy(), upper, rtol=1e-6)
    junk_below = upper + np.tril(np.full_like(SPD, 5.0), -1)
    np.testing.assert_allclose(la.potri(_nd(junk_below), lower=False).asnumpy(), np.linalg.inv(SPD), rtol=1e-5)
    check_numeric_gradient(lambda a: la.potrf(la.syrk(a, transpose=True), lower=False), [RNG.randn(3, 2)])
    check_numeric_gradient(lambda a: la.potri(a, lower=False), [LOWER.T + 0.5 * np.eye(2)])


def test_triangular_ops_read_one_triangle():
    full = np.array([[2.0, 9.0], [1.0, 4.0]])
    b = np.array([[2.0, 4.0], [6.0, 8.0]])
    np.testing.assert_allclose(la.trsm(_nd(full), _nd(b), alpha=2).asnumpy(), np.linalg.solve(LOWER, 2 * b))
    np.testing.assert_allclose(la.trsm(_nd(full), _nd(b), transpose=True, rightside=True).asnumpy(),
                               b @ np.linalg.inv(LOWER.T))
    np.testing.assert_allclose(la.trmm(_nd(full), _nd(b), lower=False).asnumpy(), np.triu(full) @ b)
    np.testing.assert_allclose(la.trmm(_nd(full), _nd(b), transpose=True, rightside=True, alpha=3).asnumpy(),
                               3 * b @ LOWER.T)


def test_linalg_aliases():
    # MXNet also exposes the linalg operators as mx.nd.linalg_<name>.
    np.testing.assert_allclose(mx.nd.linalg_gemm2(_nd(SPD), _nd(SPD)).asnumpy(), SPD @ SPD)
    np.testing.assert_allclose(mx.nd.linalg_potrf(_nd(SPD)).asnumpy(), np.linalg.cholesky(SPD), rtol=1e-6)


def test_syrk_inverse_det():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_allclose(la.syrk(_nd(a)).asnumpy(), a @ a.T)
    np.testing.assert_allclose(la.syrk(_nd(a), transpose=True, alpha=2).asnumpy(), 2 * a.T @ a)
    np.testing.assert_allclose(la.inverse(_nd([[1.0, 2.0], [3.0, 4.0]])).asnumpy(), [[-2, 1], [1.5, -0.5]],
                               rtol=1e-6)
    det = la.det(_nd(SPD))
    assert det.shape == (1,) and np.allclose(det.asnumpy(), [8])
    assert la.det(_nd(np.stack([SPD, LOWER]))).asnumpy().tolist() == [8, 8]
    sign, logdet = la.slogdet(_nd([[1.0, 2.0], [3.0, 4.0]]))
    assert sign.asnumpy().tolist() == [-1] and np.allclose(logdet.asnumpy(), [np.log(2)])
    np.testing.assert_allclose(la.sumlogdiag(_nd(SPD)).asnumpy(), [np.log(12)], rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match='linalg_det: .*last two dims'):
        la.det(mx.nd.ones((2, 3)))


def test_diagonals():
    assert la.extractdiag(_nd(SPD), 1).asnumpy().tolist() == [2]
    assert la.extractdiag(_nd(np.arange(18.0).reshape(2, 3, 3)), -1).asnumpy().tolist() == [[3, 7], [12, 16]]
    assert la.makediag(_nd([1.0, 2.0]), 1).asnumpy().tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]


# (offset, lower) -> MXNet's packing of np.arange(16).reshape(4, 4): lower triangles row by
# row, upper triangles column by column.
PACKED = {(0, True): [0, 4, 5, 8, 9, 10, 12, 13, 14, 15], (0, False): [0, 1, 5, 2, 6, 10, 3, 7, 11, 15],
          (1, True): [1, 2, 6, 3, 7, 11], (-1, False): [4, 8, 9, 12, 13, 14], (2, True): [2, 3, 7]}


@pytest.mark.parametrize('offset, lower', sorted(PACKED))
def test_triangle_packing_round_trips(offset, lower):
    square = np.arange(16.0).reshape(4, 4)
    packed = la.extracttrian(_nd(square), offset=offset, lower=lower)
    assert packed.asnumpy().tolist() == PACKED[offset, lower]
    unpacked = la.maketrian(packed, offset=offset, lower=lower).asnumpy()
    keep = unpacked != 0
    keep[0, 0] = offset == 0     # the packed 0 of square[0, 0] unpacks to a zero
    np.testing.assert_array_equal(unpacked[keep], square[keep])
    assert np.count_nonzero(unpacked) + (offset == 0) == len(PACKED[offset, lower])


def test_maketrian_rejects_non_triangular_sizes():
    with pytest.raises(mx.base.MXNetError, match='linalg_maketrian'):
        la.maketrian(_nd(np.arange(5.0)))


def test_syevd_and_gelqf():
    u, lam = la.syevd(_nd(SPD))
    # MXNet's sign convention: each eigenvector's largest-magnitude element is positive.
    np.testing.assert_allclose(u.asnumpy(), [[-0.6154122, 0.7882054], [0.7882054, 0.6154122]], rtol=1e-5)
    np.testing.assert_allclose(lam.asnumpy(), [1.4384471, 5.561553], rtol=1e-5)
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    q, low = la.gelqf(_nd(a))
    np.testing.assert_allclose(low.asnumpy() @ q.asnumpy(), a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q.asnumpy() @ q.asnumpy().T, np.eye(2), atol=1e-6)
    assert low.asnumpy()[0, 1] == 0


LINALG_GRADIENTS = {
    # Symmetric inputs are built with syrk: these operators read one triangle only.
    'potrf': (lambda a: la.potrf(la.syrk(a)), [RNG.randn(2, 3)]),
    'potri': (lambda a: la.potri(a), [LOWER + 0.5 * np.eye(2)]),
    'trsm': (lambda a, b: la.trsm(a, b, alpha=1.5), [LOWER + np.eye(2), RNG.randn(2, 3)]),
    'trmm': (lambda a, b: la.trmm(a, b, rightside=True, lower=False), [RNG.randn(3, 3), RNG.randn(2, 3)]),
    'syrk': (lambda a: la.syrk(a, alpha=0.5), [RNG.randn(2, 3)]),
    'inverse': (lambda a: la.inverse(a), [SPD]),
    'det': (lambda a: la.det(a), [RNG.randn(2, 3, 3)]),
    'slogdet': (lambda a: la.slogdet(a)[1], [SPD]),
    'sumlogdiag': (lambda a: la.sumlogdiag(a), [SPD]),
    'extractdiag': (lambda a: la.extractdiag(a, offset=1), [RNG.randn(3, 3)]),
    'makediag': (lambda a: la.makediag(a, offset=-1), [RNG.randn(2, 3)]),
    'extracttrian': (lambda a: la.extracttrian(a, lower=False), [RNG.randn(3, 3)]),
    'maketrian': (lambda a: la.maketrian(a, offset=1), [RNG.randn(3)]),
    'syevd': (lambda a: la.syevd(la.syrk(a))[1], [RNG.randn(2, 3)]),
    'gelqf': (lambda a: la.gelqf(a)[1], [RNG.randn(2, 3)]),
}


@pytest.mark.parametrize('name', sorted(LINALG_GRADIENTS))
def test_linalg_gradient(name):
    fn, inputs = LINALG_GRADIENTS[name]
    check_numeric_gradient(fn, inputs)
