"""MXNet's sparse linear model (csr data, row_sparse weight, sparse_row_id_fn) trained with
Module.fit: the figures are MXNet 1.9.1's for the same script (its random initial weights
differ from neomx's, hence the tolerance)."""
import warnings

import numpy as np

import neomx as mx


def test_module_fit_of_the_sparse_linear_model_matches_mxnet():
    # MXNet's values come from a CPU: the module's parameters (and their random initial values)
    # are made on the current context, as in MXNet
    with mx.cpu():
        np.random.seed(0)
        mx.random.seed(0)
        features, n, batch = 50, 64, 16
        x = mx.nd.sparse.csr_matrix(mx.nd.array((np.random.rand(n, features) < 0.1) * np.random.rand(n, features)))
        y = mx.nd.array((np.random.rand(n) > 0.5).astype('float32'))
        it = mx.io.NDArrayIter({'data': x}, {'softmax_label': y}, batch_size=batch, last_batch_handle='discard')
        data = mx.sym.var('data', stype='csr')
        weight = mx.sym.var('weight', shape=(features, 1), init=mx.init.Normal(sigma=0.01), stype='row_sparse')
        pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), mx.sym.var('bias', shape=(1,)))
        model = mx.sym.LogisticRegressionOutput(pred, mx.sym.var('softmax_label'))
        mod = mx.mod.Module(symbol=model, data_names=['data'], label_names=['softmax_label'])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            mod.fit(it, num_epoch=3, kvstore='local', optimizer='ftrl', optimizer_params={'learning_rate': 0.1},
                    sparse_row_id_fn=lambda b: {'weight': b.data[0].indices}, eval_metric='mse')
        # one device: no store updates the parameters, so MXNet warns that no rows need pulling
        assert any('No need to call sparse_row_id_fn' in str(w.message) for w in caught)
        args, _ = mod.get_params()
        norm = float(np.linalg.norm(args['weight'].asnumpy()))
        np.testing.assert_allclose(norm, 0.07989974319934845, rtol=2e-3)
        np.testing.assert_allclose(mod.score(it, 'mse')[0][1], 0.24664361402392387, rtol=1e-4)


def test_prepare_pulls_the_rows_of_every_row_sparse_parameter():
    # two devices: the store updates the parameters, and prepare pulls the rows each batch
    # uses of both row_sparse weights (one row_sparse_pull for all of them)
    features, batch = 20, 4
    x = mx.nd.sparse.csr_matrix(([1., 2, 3, 4], [1, 5, 5, 17], [0, 1, 2, 3, 4]), shape=(batch, features))
    it = mx.io.NDArrayIter({'data': x}, {'softmax_label': mx.nd.zeros((batch,))}, batch_size=batch,
                           last_batch_handle='discard')
    data = mx.sym.var('data', stype='csr')
    w1, w2 = (mx.sym.var(n, shape=(features, 1), stype='row_sparse', init=mx.init.Constant(0.5)) for n in ('w1', 'w2'))
    pred = mx.sym.sparse.dot(data, w1) + mx.sym.sparse.dot(data, w2)
    model = mx.sym.LogisticRegressionOutput(pred, mx.sym.var('softmax_label'))
    mod = mx.mod.Module(model, data_names=['data'], label_names=['softmax_label'], context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    mod.init_optimizer(kvstore='local', optimizer='sgd')
    batch0 = next(iter(it))
    mod.prepare(batch0, sparse_row_id_fn=lambda b: {'w1': b.data[0].indices, 'w2': b.data[0].indices})
    for name in ('w1', 'w2'):
        for arr in mod._exec_group.param_arrays[mod._exec_group.param_names.index(name)]:
            assert arr.stype == 'row_sparse' and arr.indices.asnumpy().tolist() == [1, 5, 17], (name, arr.indices)
            np.testing.assert_allclose(arr.data.asnumpy(), 0.5)
