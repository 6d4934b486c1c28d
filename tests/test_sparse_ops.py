"""Sparse arrays through operators, gradients, optimizers, files and LibSVMIter.

Every expected value and storage type here is what MXNet 1.9.1 gives for the same call (run
on the oracle); the few places where neomx differs on purpose say so.
"""
import binascii
import logging

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _csr():
    return mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')


def _rsp():
    return mx.nd.array([[0, 0], [1, 2], [0, 0], [3, 0]]).tostype('row_sparse')


W0 = [[1., 2.], [3., 4.], [5., 6.]]


def _grad():
    return mx.nd.sparse.row_sparse_array(([[0.5, -1.0]], [1]), shape=(3, 2))


# ------------------------------------------------------------------ storage rules
@pytest.mark.parametrize('call, stype', [
    (lambda c, r: mx.nd.elemwise_add(r, r), 'row_sparse'),
    (lambda c, r: mx.nd.elemwise_add(c, c), 'csr'),
    (lambda c, r: mx.nd.elemwise_add(r, mx.nd.ones((4, 2))), 'default'),
    (lambda c, r: mx.nd.elemwise_mul(r, mx.nd.ones((4, 2))), 'row_sparse'),
    (lambda c, r: mx.nd.elemwise_mul(c, mx.nd.ones((2, 3))), 'csr'),
    (lambda c, r: mx.nd.elemwise_div(r, r), 'default'),
    (lambda c, r: mx.nd.broadcast_mul(c, mx.nd.ones((1, 3))), 'csr'),
    (lambda c, r: mx.nd.broadcast_add(c, mx.nd.ones((1, 3))), 'default'),
    (lambda c, r: mx.nd.sqrt(r), 'row_sparse'),
    (lambda c, r: mx.nd.exp(r), 'default'),
    (lambda c, r: mx.nd.sigmoid(c), 'default'),
    (lambda c, r: mx.nd.clip(c, -1, 1), 'csr'),
    (lambda c, r: r * 2, 'row_sparse'),
    (lambda c, r: r + 0, 'row_sparse'),
    (lambda c, r: r + 1, 'default'),
    (lambda c, r: r > 0.5, 'row_sparse'),
    (lambda c, r: r >= 0, 'default'),
    (lambda c, r: 0 == r, 'default'),
    (lambda c, r: -c, 'csr'),
    (lambda c, r: mx.nd.zeros_like(r), 'row_sparse'),
    (lambda c, r: mx.nd.ones_like(r), 'default'),
    (lambda c, r: mx.nd.sum(c, axis=0), 'default'),
    (lambda c, r: mx.nd.transpose(c), 'default'),
    (lambda c, r: mx.nd.add_n(r, r, r), 'row_sparse'),
])
def test_output_storage_types_are_mxnets(call, stype):
    c, r = _csr(), _rsp()
    out = call(c, r)
    assert out.stype == stype
    dense = call(c.tostype('default'), r.tostype('default'))
    np.testing.assert_allclose(out.asnumpy(), dense.asnumpy())


def test_sparse_results_hold_mxnets_parts():
    c, r = _csr(), _rsp()
    t = mx.nd.dot(c, mx.nd.array([[1., 2.], [3., 4.]]), transpose_a=True)
    assert t.stype == 'row_sparse' and t.indices.asnumpy().tolist() == [0, 1, 2]
    assert t.data.asnumpy().tolist() == [[6, 8], [1, 2], [9, 12]]
    assert mx.nd.dot(c, mx.nd.array([[1.], [2.], [3.]])).asnumpy().tolist() == [[2], [11]]
    s = mx.nd._internal._square_sum(r, axis=1, keepdims=True)
    assert s.stype == 'row_sparse' and s.indices.asnumpy().tolist() == [1, 3]
    assert s.data.asnumpy().tolist() == [[5], [9]]
    assert mx.nd._internal._square_sum(r, axis=0).asnumpy().tolist() == [10, 4]
    kept = mx.nd.sparse.retain(r, mx.nd.array([3, 0]))
    assert kept.indices.asnumpy().tolist() == [3, 0] and kept.data.asnumpy().tolist() == [[3, 0], [0, 0]]
    assert mx.nd.elemwise_mul(r, mx.nd.ones((4, 2)) * 2).data.asnumpy().tolist() == [[2, 4], [6, 0]]
    assert mx.nd.sum(c, axis=1, keepdims=True).asnumpy().tolist() == [[1], [5]]
    sl = mx.nd.slice(c, begin=(1, 1), end=(2, 3))
    assert (sl.stype, sl.indptr.asnumpy().tolist(), sl.indices.asnumpy().tolist(), sl.data.asnumpy().tolist()) \
        == ('csr', [0, 1], [1], [3])
    tk = mx.nd.take(c, mx.nd.array([1, 1, 0]))
    assert tk.indptr.asnumpy().tolist() == [0, 2, 4, 5] and tk.indices.asnumpy().tolist() == [0, 2, 0, 2, 1]
    rows = c[(slice(1, 2),)]        # gluon.utils.split_data's key
    assert rows.stype == 'csr' and rows.asnumpy().tolist() == [[2, 0, 3]]
    assert mx.nd.contrib.getnnz(c).asnumpy().tolist() == [3]
    assert mx.nd.contrib.getnnz(c, axis=1).asnumpy().tolist() == [1, 2]
    with pytest.raises(MXNetError, match='axis = 0 is not supported'):
        mx.nd.contrib.getnnz(c, axis=0)
    assert mx.nd.cast_storage(mx.nd.ones((2, 2)), stype='csr').stype == 'csr'


def test_fallback_logs_mxnets_message(caplog, monkeypatch):
    monkeypatch.setenv('MXNET_STORAGE_FALLBACK_LOG_VERBOSE', '1')
    with caplog.at_level(logging.WARNING, logger='neomx.storage'):
        mx.nd.broadcast_power(mx.nd.ones((2, 3)).tostype('csr'), mx.nd.ones((1, 3)))
    assert 'Storage type fallback detected' in caplog.text and 'operator = broadcast_power' in caplog.text
    caplog.clear()
    monkeypatch.setenv('MXNET_STORAGE_FALLBACK_LOG_VERBOSE', '0')
    with caplog.at_level(logging.WARNING, logger='neomx.storage'):
        mx.nd.broadcast_hypot(mx.nd.ones((2, 3)).tostype('csr'), mx.nd.ones((1, 3)))
    assert 'fallback' not in caplog.text


# ------------------------------------------------------------------ memory
def test_a_million_feature_batch_is_never_dense():
    cols = np.arange(0, 1000001, 100000)
    x = mx.nd.sparse.csr_matrix((np.ones(len(cols), np.float32), cols, [0, len(cols)]), shape=(1, 1000001))
    w = mx.nd.ones((1000001, 1))
    assert mx.nd.dot(x, w).asnumpy().tolist() == [[11.0]]
    assert (x * 2).stype == 'csr' and mx.nd.sum(x, axis=1).asnumpy().tolist() == [11.0]
    assert not x._has_dense()          # no (1, 1000001) array was made along the way


# ------------------------------------------------------------------ check_format
@pytest.mark.parametrize('indices, indptr, message', [
    ([0, 2, 1], [0, 5, 2, 3], 'indptr decreases at position 2'),
    ([2, 1, 1], [0, 2, 2, 3], 'not strictly ascending within row 0 at position 1'),
    ([1, 2, 1], [0, 2, 2, 4], 'indptr does not end at the number of indices'),
    ([0, 2, 1], [0, -2, 2, 3], 'indptr is negative at position 1'),
    ([0, 7, 1], [0, 2, 2, 3], r'column index out of range \[0, 4\) at position 1'),
])
def test_check_format_names_the_array_and_position(indices, indptr, message):
    a = mx.nd.sparse.csr_matrix(([7, 8, 9], indices, indptr), shape=(3, 4))
    with pytest.raises(MXNetError, match=r'check_format: CSRNDArray of shape \(3, 4\).*' + message):
        a.check_format()


def test_row_sparse_check_format():
    for idx, message in (([1, 4], r'out of range \[0, 3\) at position 1'), ([1, 0], 'not strictly ascending'),
                         ([1, -2], 'out of range')):
        a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], idx), shape=(3, 2))
        with pytest.raises(MXNetError, match='RowSparseNDArray.*' + message):
            a.check_format()
    mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 2]), shape=(3, 2)).check_format()


def test_dot_csr_dense_values_and_errors():
    # the unrecorded dot(csr, dense) runs torch's kernel first and names the mistake after
    x = mx.nd.sparse.csr_matrix(([1., 2, 3], [0, 3, 4], [0, 1, 3]), shape=(2, 5))
    w = mx.nd.arange(10).reshape((5, 2))
    out = mx.nd.dot(x, w)
    assert out.stype == 'default' and out.asnumpy().tolist() == [[0, 1], [36, 41]]
    for bad, message in ((mx.nd.ones((4, 1)), r'dot: shape error: \(2, 5\) X \(4, 1\)'),
                         (mx.nd.ones((5, 1), dtype='float64'), 'dot: operands have different dtypes'),
                         (mx.nd.ones((5,)), r'dot: sparse dot only supports 2 dimensional rhs, got shape \(5,\)')):
        with pytest.raises(MXNetError, match=message):
            mx.nd.dot(x, bad)
    with pytest.raises(MXNetError, match='only supports 2 dimensional rhs'):     # MXNet too
        mx.nd.dot(x, mx.nd.array([1., 2]), transpose_a=True)
    out = mx.nd.dot(x, mx.nd.array([[1.], [2]]), transpose_a=True)
    assert out.stype == 'row_sparse' and out.asnumpy().ravel().tolist() == [1, 0, 0, 4, 6]


# ------------------------------------------------------------------ gradients and updates
def test_dot_gives_a_row_sparse_gradient():
    w = mx.nd.ones((5, 2))
    w.attach_grad(stype='row_sparse')
    x = mx.nd.array([[0, 1, 0, 0, 2.]]).tostype('csr')
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    assert w.grad.stype == 'row_sparse' and w.grad.indices.asnumpy().tolist() == [1, 4]
    assert w.grad.data.asnumpy().tolist() == [[1, 1], [2, 2]]


def test_sparse_update_operators_update_the_gradient_rows_only():
    w, h = mx.nd.array(W0), mx.nd.ones((3, 2)) * 0.1
    mx.nd.sparse.adagrad_update(w, _grad(), h, lr=0.1, epsilon=1e-7, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1, 2], [2.915484666824341, 4.095346450805664], [5, 6]], rtol=1e-6)
    np.testing.assert_allclose(h.asnumpy(), [[0.1, 0.1], [0.35, 1.1], [0.1, 0.1]], rtol=1e-6)
    w = mx.nd.array(W0)
    mx.nd.sgd_update(w, _grad(), lr=0.5, wd=0.1, lazy_update=True, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1, 2], [2.6, 4.3], [5, 6]], rtol=1e-6)
    w = mx.nd.array(W0)
    mx.nd.sgd_update(w, _grad(), lr=0.5, wd=0.1, lazy_update=False, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[0.95, 1.9], [2.6, 4.3], [4.75, 5.7]], rtol=1e-6)
    w, m, v = mx.nd.array(W0), mx.nd.zeros((3, 2)), mx.nd.zeros((3, 2))
    mx.nd.adam_update(w, _grad(), m, v, lr=0.1, wd=0.1, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1, 2], [2.68377, 4.31623], [5, 6]], rtol=1e-5)
    w, hist = mx.nd.array(W0), mx.nd.ones((3, 1)) * 0.1
    mx.nd.contrib.group_adagrad_update(w, _grad(), hist, lr=0.1, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1, 2], [2.9412784576416016, 4.117443084716797], [5, 6]], rtol=1e-6)
    np.testing.assert_allclose(hist.asnumpy().ravel(), [0.1, 0.725, 0.1], rtol=1e-6)
    # MXNet 1.9.1's sparse ftrl_update(out=weight) also zeroes the rows the gradient lacks;
    # neomx leaves them as they are (z and n, which MXNet leaves too, say they were not updated)
    w, z, n = mx.nd.array(W0), mx.nd.zeros((3, 2)), mx.nd.zeros((3, 2))
    mx.nd.ftrl_update(w, _grad(), z, n, lr=0.1, wd=0.1, out=w)
    np.testing.assert_allclose(w.asnumpy()[1], [0.9596025943756104, 2.0393035411834717], rtol=1e-6)
    assert z.asnumpy()[1].tolist() == [-14.5, -41.0] and n.asnumpy()[1].tolist() == [0.25, 1.0]


def test_local_kvstore_row_sparse_push_updates_its_rows():
    kv = mx.kv.create('local')
    kv.init('w', mx.nd.array(W0))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, wd=0.1))
    kv.push('w', [_grad(), _grad()])            # two devices' gradients: their rows summed
    out = mx.nd.sparse.zeros('row_sparse', (3, 2))
    kv.row_sparse_pull('w', out=out, row_ids=mx.nd.array([1, 2]))
    assert out.indices.asnumpy().tolist() == [1, 2]
    np.testing.assert_allclose(out.data.asnumpy(), [[2.35, 4.8], [5, 6]], rtol=1e-6)


# ------------------------------------------------------------------ files
# mx.nd.save([csr]) and mx.nd.save([an empty csr]) by MXNet 1.9.1, after the list header
_MXNET_CSR = ('c9fa93f902000000010000000300000000000000020000000200000000000000030000000000000001000000'
              '000000000000000006000000010000000300000000000000060000000100000003000000000000000000803f'
              '00000040000040400000000000000000010000000000000003000000000000000100000000000000000000000'
              '000000002000000000000000000000000000000')


def test_sparse_files_are_mxnets_bytes(tmp_path):
    path = str(tmp_path / 'c.params')
    mx.nd.save(path, [_csr().as_in_context(mx.cpu())])     # the file records the array's device
    with open(path, 'rb') as f:
        assert f.read()[24:] == binascii.unhexlify(_MXNET_CSR)
    back = mx.nd.load(path)[0]
    assert back.stype == 'csr' and back.asnumpy().tolist() == [[0, 1, 0], [2, 0, 3]]


# ------------------------------------------------------------------ LibSVMIter
def test_libsvm_batches_are_csr_as_mxnets(tmp_path):
    data, label = tmp_path / 'data.t', tmp_path / 'label.t'
    data.write_text('1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n')
    label.write_text('1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n')
    it = mx.io.LibSVMIter(data_libsvm=str(data), label_libsvm=str(label), data_shape=(3,), label_shape=(3,),
                          batch_size=3)
    batches = [(b.data[0], b.label[0], b.pad) for b in it]
    assert [(d.stype, l.stype, p) for d, l, p in batches] == [('csr', 'csr', 0), ('csr', 'csr', 2)]
    np.testing.assert_allclose(batches[1][0].asnumpy(), [[0, 0, -1.2], [0.5, 0, 1.2], [0, 0, 0]])
    np.testing.assert_allclose(batches[1][1].asnumpy(), [[0, 1, -1.2], [0, 0, 0], [0.125, 0, 0]])
    parts = [[b.label[0].asnumpy().tolist() for b in mx.io.LibSVMIter(
        data_libsvm=str(data), data_shape=(3,), batch_size=1, num_parts=2, part_index=i)] for i in range(2)]
    assert parts == [[[1.0], [-2.0], [-3.0]], [[4.0]]]          # split by bytes, as MXNet
    it = mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=3)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[1, -2, -3], [4, 1, -2]]
    it.reset()
    assert [(b.label[0].asnumpy().tolist(), b.pad) for b in it] == [([-3, 4, 1], 1)]
    data.write_text('1.0 0:0.5\n-3.0 -1:0.6\n')
    with pytest.raises(MXNetError, match='line 2: feature index -1 out of range'):
        mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=1)
    with pytest.raises(MXNetError, match="doesn't support round_batch == false"):
        mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), round_batch=False)


def test_row_sparse_parameter_step_records_through_sparse_operators():
    """A row_sparse parameter read with row_sparse_data inside record() is differentiable
    through operators that keep sparsity (MXNet's nightly Trainer sparse step, one worker)."""
    import neomx as mx
    x = mx.gluon.Parameter('x', shape=(2, 10), stype='row_sparse', grad_stype='row_sparse')
    x.initialize(ctx=mx.cpu(0), init='ones')
    trainer = mx.gluon.Trainer([x], 'sgd', {'learning_rate': 1.0}, kvstore='local')
    rows = mx.nd.arange(0, 2, ctx=mx.cpu(0))     # row_sparse_data answers on the rows' context
    with mx.autograd.record():
        w = x.row_sparse_data(rows)
        y = 3 * w
    y.backward()
    assert x.grad().stype == 'row_sparse'
    np.testing.assert_array_equal(x.grad().asnumpy(), np.full((2, 10), 3.0))
    trainer.step(1)
    np.testing.assert_array_equal(x.row_sparse_data(rows).asnumpy(), np.full((2, 10), -2.0))


def test_dot_of_csr_and_a_computed_array_differentiates_through_it():
    # the gradient reaching a computed rhs is dense: the operators that made it take it
    dense = np.array([[0, 2, 0], [1, 0, 3]], dtype=np.float32)
    csr = mx.nd.array(dense).tostype('csr')
    v = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(csr, mx.nd._internal._square_sum(v, axis=1, keepdims=True))
    y.backward()
    # d/dv sum_i sum_k dense[i, k] * sum_j v[k, j]^2 = 2 * v * column sums of dense
    np.testing.assert_allclose(v.grad.asnumpy(), 2 * v.asnumpy() * dense.sum(axis=0)[:, None])


def test_distinct_matches_torch_unique():
    from neomx.operator.storage import distinct_ids
    import torch
    ids = torch.tensor([7, 2, 7, 0, 9, 2])
    held, slot = distinct_ids(ids)
    expected_held, expected_slot = torch.unique(ids, return_inverse=True)
    assert held.tolist() == expected_held.tolist() and slot.tolist() == expected_slot.tolist()


@pytest.mark.parametrize('dtype', ['float32', 'int32', 'int64', 'float16'])
def test_sparse_retain_takes_indices_of_any_dtype(dtype):
    rsp = mx.nd.array([[1, 2], [3, 4], [5, 6]]).tostype('row_sparse')
    kept = mx.nd.sparse.retain(rsp, mx.nd.array([0, 2], dtype=dtype))
    assert kept.stype == 'row_sparse' and kept.asnumpy().tolist() == [[1, 2], [0, 0], [5, 6]]


@pytest.mark.parametrize('axis,keepdims,stype', [(0, False, 'default'), (1, False, 'default'),
                                                 (1, True, 'row_sparse')])
def test_square_sum_of_a_row_sparse_array_without_rows(axis, keepdims, stype):
    empty = mx.nd.zeros((4, 3), stype='row_sparse')
    out = mx.nd._internal._square_sum(empty, axis=axis, keepdims=keepdims)
    assert out.stype == stype
    assert out.asnumpy().tolist() == mx.nd.sum(mx.nd.zeros((4, 3)), axis=axis, keepdims=keepdims).asnumpy().tolist()


@pytest.mark.parametrize('sparse_grad', [False, True])
def test_embedding_gradient_stype_follows_sparse_grad_not_the_weight(sparse_grad):
    # MXNet: a row_sparse weight of Embedding(sparse_grad=False) gets a dense gradient
    weight = mx.sym.var('w', stype='row_sparse')
    embed = mx.sym.Embedding(mx.sym.var('data'), weight, input_dim=5, output_dim=2, sparse_grad=sparse_grad)
    exe = embed.simple_bind(mx.cpu(), grad_req={'data': 'null', 'w': 'write'}, data=(3,))
    assert exe.grad_dict['w'].stype == ('row_sparse' if sparse_grad else 'default')


def test_quadratic_keeps_csr_where_c_is_zero():
    x = mx.nd.array([[0, 1], [2, 0]]).tostype('csr')
    y = mx.nd.contrib.quadratic(x, a=1, b=2, c=0)
    assert y.stype == 'csr' and y.asnumpy().tolist() == [[0, 3], [8, 0]]
    assert mx.nd.contrib.quadratic(x, a=1, b=2, c=1).stype == 'default'
    rsp = mx.nd.array([[0, 1], [2, 0]]).tostype('row_sparse')
    assert mx.nd.contrib.quadratic(rsp, a=1, b=2, c=0).stype == 'default'


def test_batch_norm_refuses_sparse_inputs_with_fix_gamma():
    data = mx.sym.var('data', stype='row_sparse')
    args = [mx.nd.ones((2, 3)).tostype('row_sparse'), mx.nd.ones(3).tostype('row_sparse'),
            mx.nd.zeros(3).tostype('row_sparse')]
    aux = [mx.nd.zeros(3), mx.nd.ones(3)]
    grads = [mx.nd.zeros((2, 3)), mx.nd.zeros(3), mx.nd.zeros(3)]
    with pytest.raises(MXNetError, match='fix_gamma=True is not supported for sparse'):
        mx.sym.BatchNorm(data, fix_gamma=True).bind(mx.cpu(), args=args, args_grad=grads, aux_states=aux)
    exe = mx.sym.BatchNorm(data, fix_gamma=False).bind(mx.cpu(), args=args, args_grad=grads, aux_states=aux)
    exe.forward(is_train=True)
    assert exe.outputs[0].shape == (2, 3)


def test_dot_csr_gradient_through_a_reshaped_weight_is_dense_then_reshaped():
    x = mx.nd.array([[1], [0], [2], [0]]).tostype('csr')
    w = mx.nd.arange(48).reshape((12, 4))
    out = mx.sym.sparse.dot(mx.sym.var('x', stype='csr'), mx.sym.reshape(mx.sym.var('w'), (1, 48)))
    grad = mx.nd.zeros((12, 4)).tostype('row_sparse')
    exe = out.bind(mx.cpu(), args={'x': x, 'w': w}, args_grad={'w': grad})
    exe.forward(is_train=True)
    head = exe.outputs[0].copy()
    exe.backward(head)
    expected = mx.nd.dot(x, head, transpose_a=True).asnumpy().reshape(12, 4)
    np.testing.assert_allclose(grad.asnumpy(), expected)
