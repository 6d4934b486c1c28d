"""storage.distinct_ids: the distinct ids of an index tensor, shared by row_sparse_pull and
dot(csr, weight)'s gradient (one sort per training step instead of two)."""
import pytest
import torch

import neomx as mx
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
