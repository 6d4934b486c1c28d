"""Worker of tests/test_sparse_dist.py: row_sparse push and row_sparse_pull on dist_async (or the
store KV_KIND names, dist_sync) move only the rows involved, and only those rows are updated."""
import os

import numpy as np

import neomx as mx

os.environ['MXNET_KVSTORE_BIGARRAY_BOUND'] = '100'    # the 1000 x 4 key is cut over the servers
kv = mx.kv.create(os.environ.get('KV_KIND', 'dist_async'))
rank, n = kv.rank, kv.num_workers
rows, cols = 1000, 4
kind = os.environ.get('KV_KIND', 'dist_async')
kv.init('w', mx.nd.ones((rows, cols)))
kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, rescale_grad=1.0))
# each worker pushes a gradient holding two rows: one in each server's half, one its own
mine = [10 + rank, 990 - rank]
grad = mx.nd.sparse.row_sparse_array((np.full((2, cols), 0.5, np.float32), mine), shape=(rows, cols))
pushed = kv.traffic['sent']
kv.push('w', grad)
pushed = kv.traffic['sent'] - pushed
if kind == 'dist_async':      # each row to its server: rows as int64, values as float32
    assert pushed == 2 * 8 + 2 * cols * 4, pushed
else:                         # all-gathered: the row count, then the rows and their values
    assert pushed == 8 + 2 * 8 + 2 * cols * 4, pushed
kv._barrier()
out = mx.nd.sparse.zeros('row_sparse', (rows, cols))
asked = mx.nd.array([990, 10, 11, 500, 10])
before = kv.traffic['received']
kv.row_sparse_pull('w', out=out, row_ids=asked)
got = kv.traffic['received'] - before
assert out.stype == 'row_sparse' and out.indices.asnumpy().tolist() == [10, 11, 500, 990], out.indices
expected = {10: 0.5, 11: 0.5 if n > 1 else 1.0, 500: 1.0, 990: 0.5}
for i, r in enumerate(out.indices.asnumpy().tolist()):
    np.testing.assert_allclose(out.data.asnumpy()[i], expected[r])
# dist_async: four rows of four float32 values from the servers, not the whole key;
# dist_sync: every worker holds the value, nothing travels
assert got == (4 * cols * 4 if kind == 'dist_async' else 0), got
dense = mx.nd.zeros((rows, cols))
kv.pull('w', out=dense)                  # all other rows untouched by the lazy updates
changed = sorted(set(np.nonzero(dense.asnumpy()[:, 0] != 1.0)[0].tolist()))
assert changed == sorted({10 + r for r in range(n)} | {990 - r for r in range(n)}), changed
if kind == 'dist_async' and n > 1:
    # several keys in one row_sparse_pull: one request to each server holding rows of them
    import copy
    import itertools
    from neomx.kvstore import async_outbox

    def next_request(server):      # the number this worker's next request to server gets (not taken)
        return next(copy.copy(async_outbox._SEQUENCE.setdefault(server, itertools.count())))
    kv.init('v', mx.nd.ones((rows, cols)) * 3)
    outs = [mx.nd.sparse.zeros('row_sparse', (rows, cols)) for _ in range(2)]
    other = 1 - rank if n == 2 else (rank + 1) % n
    before = next_request(other)
    kv.row_sparse_pull(['w', 'v'], out=outs, row_ids=[mx.nd.array([10, 990]), mx.nd.array([999, 0, 500])])
    # the outputs get their rows when first read (the request goes then at the latest)
    assert outs[0].indices.asnumpy().tolist() == [10, 990]
    assert outs[1].indices.asnumpy().tolist() == [0, 500, 999]
    np.testing.assert_allclose(outs[1].data.asnumpy(), 3.0)
    after = next_request(other)
    assert after - before == 1, (before, after)      # one request for both keys
    # a pull right after a row_sparse_pull: both requests travel in one message
    small = mx.nd.zeros((2,))
    kv.init('small', small)
    server_of_small = kv._layouts['small'][2][0][0]
    before = next_request(server_of_small)
    kv.row_sparse_pull('w', out=outs[0], row_ids=mx.nd.array([0, 999]))    # rows of both servers
    kv.pull('small', out=small)
    assert outs[0].indices.asnumpy().tolist() == [0, 999]
    np.testing.assert_allclose(outs[0].data.asnumpy(), 1.0)
    if server_of_small != rank:
        assert next_request(server_of_small) - before == 1, (before, next_request(server_of_small))
    kv.row_sparse_pull('w', out=outs[1], row_ids=mx.nd.array([1, 998]))
    outs[1][:] = mx.nd.sparse.row_sparse_array((np.full((1, cols), 7, np.float32), [3]), shape=(rows, cols))
    # written before it was read: the write wins over the rows still coming
    assert outs[1].indices.asnumpy().tolist() == [3] and outs[1].data.asnumpy().ravel().tolist() == [7.0] * cols
kv._barrier()
print('RESULT sparse ok rank %d' % rank)
