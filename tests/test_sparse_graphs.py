"""Sparse storage kept inside recorded nd calls and executor graphs (as MXNet's executors):
``dot(csr, weight)`` never densifies its csr batch, and the weight's gradient is row_sparse,
holding the rows the batch uses; values as the dense computation."""
import numpy as np

import neomx as mx


def _batch(rows=8, features=1000, seed=0):
    rng = np.random.RandomState(seed)
    dense = (rng.rand(rows, features) < 0.01) * rng.rand(rows, features)
    dense[0, 3] = 0.5       # at least one entry
    return dense.astype('float32')


def test_recorded_dot_keeps_the_batch_sparse_and_gives_the_used_rows():
    dense = _batch()
    x = mx.nd.sparse.csr_matrix(dense)
    w = mx.nd.array(np.random.RandomState(1).rand(dense.shape[1], 2).astype('float32'))
    w.attach_grad(stype='row_sparse')
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward(mx.nd.ones_like(y))
    np.testing.assert_allclose(y.asnumpy(), dense @ w.asnumpy(), rtol=1e-5)
    assert not x._has_dense()       # the batch was never densified
    assert w.grad.stype == 'row_sparse'
    used = sorted(set(np.nonzero(dense)[1].tolist()))
    assert w.grad.indices.asnumpy().tolist() == used
    np.testing.assert_allclose(w.grad.asnumpy(), dense.T @ np.ones((dense.shape[0], 2), 'float32'), rtol=1e-5)


def test_executor_with_csr_data_and_row_sparse_weight_stays_sparse():
    dense = _batch()
    data = mx.sym.var('data', stype='csr')
    weight = mx.sym.var('weight', stype='row_sparse')
    out = mx.sym.sparse.dot(data, weight)
    exe = out.simple_bind(mx.cpu(), data=dense.shape, weight=(dense.shape[1], 3),
                          grad_req={'data': 'null', 'weight': 'write'})
    assert exe.arg_dict['data'].stype == 'csr' and exe.grad_dict['weight'].stype == 'row_sparse'
    w = np.random.RandomState(2).rand(dense.shape[1], 3).astype('float32')
    exe.arg_dict['weight'][:] = mx.nd.array(w).tostype('row_sparse')
    x = mx.nd.sparse.csr_matrix(dense)
    exe.forward(is_train=True, data=x)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), dense @ w, rtol=1e-5)
    head = np.random.RandomState(3).rand(dense.shape[0], 3).astype('float32')
    exe.backward(mx.nd.array(head))
    assert not exe.arg_dict['data']._has_dense()
    grad = exe.grad_dict['weight']
    assert grad.stype == 'row_sparse'
    assert grad.indices.asnumpy().tolist() == sorted(set(np.nonzero(dense)[1].tolist()))
    np.testing.assert_allclose(grad.asnumpy(), dense.T @ head, rtol=1e-5, atol=1e-6)
    # inference too: the same values, the batch still compressed
    exe.forward(is_train=False, data=x)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), dense @ w, rtol=1e-5)
    assert not exe.arg_dict['data']._has_dense()


def test_executor_falls_back_to_dense_where_mxnet_does():
    dense = _batch()
    data = mx.sym.var('data', stype='csr')
    out = mx.sym.exp(data)          # no sparse rule for csr exp: MXNet computes it densely
    exe = out.simple_bind(mx.cpu(), data=dense.shape, grad_req='null')
    exe.forward(data=mx.nd.sparse.csr_matrix(dense))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), np.exp(dense), rtol=1e-6)


def test_module_binds_sparse_arguments_and_pulls_rows():
    """MXNet's example/sparse/linear_classification loop with an explicit local store: the
    weight is bound row_sparse, so ``prepare`` pulls only the batch's rows into it."""
    dense = _batch(rows=16, features=200)
    labels = (np.arange(16) % 2).astype('float32')
    it = mx.io.NDArrayIter({'data': mx.nd.sparse.csr_matrix(dense)}, {'softmax_label': mx.nd.array(labels)},
                           batch_size=8, last_batch_handle='discard')
    data = mx.sym.var('data', stype='csr')
    weight = mx.sym.var('weight', shape=(200, 1), init=mx.init.Normal(sigma=0.01), stype='row_sparse')
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), mx.sym.var('bias', shape=(1,)))
    model = mx.sym.LogisticRegressionOutput(pred, mx.sym.var('softmax_label'))
    mod = mx.mod.Module(symbol=model, data_names=['data'], label_names=['softmax_label'])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 1.0}, kvstore=mx.kv.create('local'))
    before = mod.get_params()[0]['weight'].asnumpy()
    batch = next(iter(it))
    mod.prepare(batch, sparse_row_id_fn=lambda b: {'weight': b.data[0].indices})
    bound = mod._exec_group.execs[0]
    assert bound.arg_dict['data'].stype == 'csr' and bound.arg_dict['weight'].stype == 'row_sparse'
    mod.forward_backward(batch)
    grad = bound.grad_dict['weight']
    used = sorted(set(np.nonzero(dense[:8])[1].tolist()))
    assert grad.stype == 'row_sparse' and grad.indices.asnumpy().tolist() == used
    mod.update()
    mod.prepare(None, sparse_row_id_fn=lambda b: {'weight': mx.nd.arange(200)})
    after = mod.get_params()[0]['weight'].asnumpy()
    changed = np.nonzero((after != before).ravel())[0].tolist()
    assert changed == used          # the lazy update touched the batch's rows only


class _SparseLinear(mx.gluon.HybridBlock):
    def __init__(self, features, **kwargs):
        super().__init__(**kwargs)
        self.weight = self.params.get('weight', shape=(features, 2), grad_stype='row_sparse')

    def hybrid_forward(self, F, x, weight):
        return F.broadcast_add(F.sparse.dot(x, weight), F.sum(F.exp(x * 0), axis=1, keepdims=True))


def test_hybridized_block_keeps_csr_data_sparse_and_matches_imperative():
    dense = _batch(features=300)
    results = []
    for hybridize in (False, True):
        net = _SparseLinear(300)
        net.initialize(mx.init.Constant(0.5))
        if hybridize:
            net.hybridize()
        x = mx.nd.sparse.csr_matrix(dense)
        with mx.autograd.record():
            y = net(x)
        y.backward()
        grad = net.weight.grad()
        results.append((y.asnumpy(), grad.stype, grad.asnumpy()))
        if hybridize:
            # dot stays sparse; ``x * 0`` keeps csr (MXNet's rule), exp of csr falls back to dense
            assert not x._has_dense()
            with mx.autograd.predict_mode():
                np.testing.assert_allclose(net(x).asnumpy(), results[0][0], rtol=1e-5)
    (y0, stype0, g0), (y1, stype1, g1) = results
    np.testing.assert_allclose(y1, dense @ np.full((300, 2), 0.5, 'float32') + 300, rtol=1e-5)
    np.testing.assert_allclose(y1, y0, rtol=1e-5)
    assert stype0 == stype1 == 'row_sparse'
    np.testing.assert_allclose(g1, g0, rtol=1e-5)
    np.testing.assert_allclose(g1, dense.T @ np.ones((dense.shape[0], 2), 'float32'), rtol=1e-5)


def test_embedding_sparse_grad_gives_the_rows_looked_up():
    """Embedding(sparse_grad=True): torch's sparse gradient, row_sparse in an executor (rows
    1 and 2 only), dense values in a dense buffer; repeated indices sum."""
    idx = mx.nd.array([1, 1, 2])
    w = mx.nd.ones((10, 3))
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Embedding(idx, w, input_dim=10, output_dim=3, sparse_grad=True)
    y.backward()
    expected = np.zeros((10, 3), 'float32')
    expected[1], expected[2] = 2, 1
    assert w.grad.stype == 'default'
    np.testing.assert_array_equal(w.grad.asnumpy(), expected)
    emb = mx.sym.Embedding(mx.sym.var('d'), input_dim=10, output_dim=3, sparse_grad=True, name='emb')
    exe = emb.simple_bind(mx.cpu(), d=(3,), grad_req={'d': 'null', 'emb_weight': 'write'})
    exe.forward(is_train=True, d=idx)
    exe.backward(mx.nd.ones((3, 3)))
    grad = exe.grad_dict['emb_weight']
    assert grad.stype == 'row_sparse' and grad.indices.asnumpy().tolist() == [1, 2]
    np.testing.assert_array_equal(grad.asnumpy(), expected)
