"""The fast paths of a sparse training step: storage.distinct_ids (the distinct ids of an index
tensor, shared by row_sparse_pull and dot(csr, weight)'s gradient: one sort per step instead of
two) and the direct kernel of a sparse call (dot(csr, dense) is torch.mm, its errors still
MXNet's)."""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.base import MXNetError
from neomx.operator import storage


@pytest.fixture(autouse=True)
def _forget():
    storage._DISTINCT.clear()
    yield
    storage._DISTINCT.clear()


@pytest.mark.parametrize('dtype', [torch.int64, torch.int32])
@pytest.mark.parametrize('n', [0, 1, 9, 5000])
def test_distinct_ids_as_torch_unique(dtype, n):
    ids = torch.randint(0, 40, (n,), dtype=dtype, generator=torch.Generator().manual_seed(n))
    distinct, position = storage.distinct_ids(ids)
    want_distinct, want_position = torch.unique(ids, return_inverse=True)
    assert distinct.dtype == want_distinct.dtype and position.dtype == want_position.dtype == torch.int64
    assert torch.equal(distinct, want_distinct) and torch.equal(position, want_position)


def test_distinct_ids_kept_until_written():
    ids = torch.tensor([5, 3, 5, 9, 3])
    first = storage.distinct_ids(ids)
    assert storage.distinct_ids(ids[:]) is first          # the same memory: asked again, not sorted
    assert storage.distinct_ids(ids[:3])[0].tolist() == [3, 5]      # another length: its own answer
    ids[0] = 7                                          # a write: the kept answer is stale
    assert storage.distinct_ids(ids)[0].tolist() == [3, 5, 7, 9]


def test_pull_then_dot_gradient_rows():
    # row_sparse_pull of a batch's columns, then dot(batch, weight) recorded: both see the
    # batch's distinct columns, and the gradient holds exactly those rows
    batch = mx.nd.sparse.csr_matrix(([1., 2., 3., 4.], [4, 1, 4, 0], [0, 2, 3, 4]), shape=(3, 6))
    kv = mx.kv.create('local')
    kv.init('w', mx.nd.arange(6).reshape((6, 1)))
    pulled = mx.nd.sparse.zeros('row_sparse', (6, 1))
    kv.row_sparse_pull('w', out=pulled, row_ids=batch.indices)
    assert pulled.indices.asnumpy().tolist() == [0, 1, 4]
    assert pulled.data.asnumpy().ravel().tolist() == [0., 1., 4.]
    weight = pulled.tostype('default')
    weight.attach_grad(stype='row_sparse')
    with mx.autograd.record():
        out = mx.nd.dot(batch, weight)
    out.backward()
    assert out.asnumpy().ravel().tolist() == [1 * 4 + 2 * 1, 3 * 4, 4 * 0]
    assert weight.grad.indices.asnumpy().tolist() == [0, 1, 4]
    assert weight.grad.data.asnumpy().ravel().tolist() == [4., 2., 4.]


def _batch():
    return mx.nd.sparse.csr_matrix(([1., 2., 3.], [0, 2, 1], [0, 2, 3]), shape=(2, 3))


def test_dot_csr_dense_kernel_values_and_repeats():
    w = mx.nd.array([[1., 10.], [2., 20.], [3., 30.]])
    for _ in range(3):          # the rule's answer is kept after the first call
        out = mx.nd.dot(_batch(), w)
        assert out.stype == 'default' and out.shape == (2, 2)
        assert out.asnumpy().tolist() == [[7., 70.], [6., 60.]]
    # the same storage types with other attributes: not the kept kernel (csr.T is row_sparse)
    t = mx.nd.dot(_batch(), mx.nd.ones((2, 1)), transpose_a=True)
    assert t.stype == 'row_sparse' and t.asnumpy().ravel().tolist() == [1., 3., 2.]


def test_dot_csr_dense_kernel_errors_are_mxnets():
    with pytest.raises(MXNetError, match=r'dot: shape error: \(2, 3\) X \(4, 1\)'):
        mx.nd.dot(_batch(), mx.nd.ones((4, 1)))
    with pytest.raises(MXNetError, match='different dtypes'):
        mx.nd.dot(_batch(), mx.nd.ones((3, 1), dtype='float64'))


def test_dot_csr_weight_with_gradient_buffer_outside_record():
    # a variable read outside record(): computed untracked, no graph kept on the result
    w = mx.nd.ones((3, 1))
    w.attach_grad()
    out = mx.nd.dot(_batch(), w)
    assert out.asnumpy().ravel().tolist() == [3., 3.]
    assert not out._t.requires_grad


def test_arrive_later_read_brings_the_value_once():
    from neomx.ndarray.sparse_arrays import arrive_later
    calls = []

    def fetch():
        calls.append(1)
        return torch.tensor([1, 3]), torch.tensor([[5.], [6.]])
    out = mx.nd.sparse.zeros('row_sparse', (4, 1))
    assert arrive_later(out, fetch) and calls == []
    assert out.shape == (4, 1) and calls == [1]          # any read brings it
    assert out.indices.asnumpy().tolist() == [1, 3]
    assert (out + 1).asnumpy().ravel().tolist() == [1., 6., 1., 7.]
    assert calls == [1]
    assert not arrive_later(mx.nd.zeros((4, 1)), fetch)  # a dense array is set at once by the caller


def test_arrive_later_write_first_wins_and_errors_repeat():
    from neomx.ndarray.sparse_arrays import arrive_later
    out = mx.nd.sparse.zeros('row_sparse', (3, 2))
    arrive_later(out, lambda: (torch.tensor([0]), torch.ones(1, 2)))
    out[:] = mx.nd.array([[0, 0], [2, 2], [0, 0]]).tostype('row_sparse')
    assert out.indices.asnumpy().tolist() == [1] and out.data.asnumpy().tolist() == [[2., 2.]]
    out2 = mx.nd.sparse.zeros('row_sparse', (3, 2))

    def lost():
        raise MXNetError('kvstore row_sparse_pull: the server in worker 1 is unreachable')
    arrive_later(out2, lost)
    for _ in range(2):
        with pytest.raises(MXNetError, match='unreachable'):
            out2.asnumpy()


def test_waitall_brings_values_still_coming():
    from neomx.ndarray.sparse_arrays import arrive_later
    calls = []

    def fetch():
        calls.append(1)
        return torch.tensor([2]), torch.tensor([[7.]])
    out = mx.nd.sparse.zeros('row_sparse', (3, 1))
    arrive_later(out, fetch)
    mx.nd.waitall()
    assert calls == [1]                                  # waitall waited for it, as MXNet's engine
    assert out.asnumpy().ravel().tolist() == [0., 0., 7.] and calls == [1]
    failing = mx.nd.sparse.zeros('row_sparse', (3, 1))

    def lost():
        raise MXNetError('kvstore row_sparse_pull: the server in worker 1 is unreachable')
    arrive_later(failing, lost)
    mx.nd.waitall()                                      # a failed value: the array keeps waiting
    with pytest.raises(MXNetError, match='unreachable'):
        failing.asnumpy()
