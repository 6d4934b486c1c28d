"""Sparse arrays: their parts, Parameter access, lazy optimizer updates."""
import numpy as np
import pytest

import neomx as mx


def test_row_sparse_parts_and_retain():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 2]), shape=(4, 2))
    assert a.stype == 'row_sparse' and isinstance(a, mx.nd.sparse.RowSparseNDArray)
    np.testing.assert_array_equal(a.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(a.data.asnumpy(), [[1, 2], [3, 4]])
    kept = mx.nd.sparse.retain(a, mx.nd.array([2]))
    np.testing.assert_array_equal(kept.asnumpy(), [[0, 0], [0, 0], [3, 4], [0, 0]])
    assert (a + 1).stype == 'default' and a.copyto(mx.cpu(1)).stype == 'row_sparse'


def test_csr_parts():
    c = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')
    np.testing.assert_array_equal(c.indptr.asnumpy(), [0, 1, 3])
    np.testing.assert_array_equal(c.indices.asnumpy(), [1, 0, 2])
    np.testing.assert_array_equal(c.data.asnumpy(), [1, 2, 3])
    back = mx.nd.sparse.csr_matrix((c.data, c.indices, c.indptr), shape=(2, 3))
    np.testing.assert_array_equal(back.asnumpy(), c.asnumpy())
    with pytest.raises(ValueError, match='2-D'):       # MXNet's error type
        mx.nd.ones((2, 2, 2)).tostype('csr')


def test_row_sparse_parameter_access():
    p = mx.gluon.Parameter('w', shape=(4, 2), stype='row_sparse', grad_stype='row_sparse')
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(RuntimeError, match='row_sparse_data'):
        p.data()
    with pytest.raises(RuntimeError, match='Trainer'):
        p.row_sparse_data(mx.nd.array([0]))
    mx.gluon.Trainer([p], 'sgd')
    rows = p.row_sparse_data(mx.nd.array([1], ctx=mx.cpu(1)))
    assert rows.stype == 'row_sparse' and rows.context == mx.cpu(1)
    assert rows.asnumpy()[0].tolist() == [0, 0] and p.grad(mx.cpu(0)).stype == 'row_sparse'
    with pytest.raises(AssertionError):
        mx.gluon.Parameter('w', stype='dense')


def test_lazy_update_touches_only_the_gradient_rows():
    weight = mx.nd.ones((3, 2))
    grad = mx.nd.array([[0, 0], [1, 1], [0, 0]]).tostype('row_sparse')
    opt = mx.optimizer.SGD(learning_rate=0.5, wd=0.1)
    opt.update(0, weight, grad, opt.create_state(0, weight))
    np.testing.assert_allclose(weight.asnumpy(), [[1, 1], [0.45, 0.45], [1, 1]], rtol=1e-6)
    dense = mx.nd.ones((3, 2))
    opt = mx.optimizer.SGD(learning_rate=0.5, wd=0.1, lazy_update=False)
    opt.update(0, dense, grad, opt.create_state(0, dense))
    np.testing.assert_allclose(dense.asnumpy()[0], [0.95, 0.95], rtol=1e-6)
