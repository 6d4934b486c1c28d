"""Gluon parameters with ``grad_stype='row_sparse'`` (``Embedding(sparse_grad=True)``): the
gradient is row_sparse from the start and holds exactly the rows backward used, as MXNet
1.9.1's (values below checked against it); Trainer updates only those rows (lazy updates);
nothing of the weight's size is made for the gradient."""
import numpy as np
import pytest

import neomx as mx


def _embedding(rows=10, dim=3):
    emb = mx.gluon.nn.Embedding(rows, dim, sparse_grad=True)
    emb.initialize(mx.init.Constant(1.0))
    return emb


def _backward(emb, ids, scale=None):
    with mx.autograd.record():
        out = emb(mx.nd.array(ids))
        y = (out * mx.nd.array(scale) if scale is not None else out).sum()
    y.backward()


def test_gradient_holds_the_rows_used_and_nothing_dense():
    emb = _embedding()
    g = emb.weight.grad()
    assert g.stype == 'row_sparse' and g.indices.asnumpy().tolist() == [] and g.data.shape == (0, 3)
    _backward(emb, [[1, 3], [3, 5]])
    g = emb.weight.grad()
    assert isinstance(g, mx.nd.sparse.RowSparseNDArray)
    assert g.indices.asnumpy().tolist() == [1, 3, 5]
    np.testing.assert_array_equal(g.data.asnumpy(), [[1, 1, 1], [2, 2, 2], [1, 1, 1]])
    assert not g._has_dense()          # the (10, 3) dense form was never made
    assert emb.weight.list_grad()[0] is g
    emb.weight.zero_grad()
    g = emb.weight.grad()
    assert g.indices.asnumpy().tolist() == [] and g.data.shape == (0, 3) and not g._has_dense()


def test_a_used_row_with_zero_gradient_is_held():
    emb = _embedding(dim=2)
    _backward(emb, [[1, 3]], scale=[[[1.0, 1.0], [0.0, 0.0]]])
    g = emb.weight.grad()
    assert g.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_array_equal(g.data.asnumpy(), [[1, 1], [0, 0]])


def test_grad_req_add_accumulates_rows():
    emb = _embedding(dim=2)
    emb.weight.grad_req = 'add'
    _backward(emb, [[1, 3]])
    _backward(emb, [[3, 7]])
    g = emb.weight.grad()
    assert g.stype == 'row_sparse' and g.indices.asnumpy().tolist() == [1, 3, 7]
    np.testing.assert_array_equal(g.data.asnumpy(), [[1, 1], [2, 2], [1, 1]])
    assert not g._has_dense()


def test_grad_req_null_then_write_gives_a_row_sparse_gradient():
    p = mx.gluon.Parameter('w', shape=(4, 2), grad_stype='row_sparse', grad_req='null')
    p.initialize()
    p.grad_req = 'write'
    assert p.grad().stype == 'row_sparse' and p.grad().indices.asnumpy().tolist() == []


# MXNet 1.9.1, two steps (rows 1, 3, 5 then rows 2, 3) of an Embedding(8, 2) at 1.0 with
# loss sum(emb(x) * [1, -2]): only the rows a step's gradient holds change (lazy updates)
_MXNET = {
    'adam': ({'learning_rate': 0.1, 'wd': 0.1},
             [[1.0, 1.0], [0.9, 1.1], [0.9256, 1.0744], [0.8062, 1.1928], [1.0, 1.0], [0.9, 1.1], [1.0, 1.0],
              [1.0, 1.0]]),
    'sgd': ({'learning_rate': 0.1, 'wd': 0.1, 'momentum': 0.9},
            [[1.0, 1.0], [0.89, 1.19], [0.89, 1.19], [0.4931, 1.9271], [1.0, 1.0], [0.89, 1.19], [1.0, 1.0],
             [1.0, 1.0]]),
    'adagrad': ({}, [[1.0, 1.0], [0.99, 1.01], [0.99, 1.01], [0.9855, 1.0145], [1.0, 1.0], [0.99, 1.01], [1.0, 1.0],
                     [1.0, 1.0]]),
}


@pytest.mark.parametrize('optimizer', sorted(_MXNET))
def test_trainer_updates_only_the_rows_used(optimizer):
    params, expected = _MXNET[optimizer]
    emb = _embedding(rows=8, dim=2)
    trainer = mx.gluon.Trainer(emb.collect_params(), optimizer, params)
    for ids in ([[1, 3], [3, 5]], [[2, 3]]):
        _backward(emb, ids, scale=[1.0, -2.0])
        trainer.step(1)
    np.testing.assert_allclose(emb.weight.data().asnumpy(), expected, atol=1e-4)
