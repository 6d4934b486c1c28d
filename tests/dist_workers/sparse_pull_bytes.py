"""Worker of tests/test_sparse_dist.py and benchmarks/bench_sparse.py: a row_sparse push and a
``row_sparse_pull`` of 1% of the rows of a (ROWS, 64) weight under KV_KIND (dist_async or
dist_sync) move about 1% of the weight's bytes: the bytes this worker passes to the transport
(``kv.traffic``) against the weight's size. Prints ``BYTES {json}`` on rank 0."""
import json
import os

import numpy as np

import neomx as mx

rows, cols = int(os.environ.get('ROWS', 1000001)), 64
kind = os.environ.get('KV_KIND', 'dist_async')
kv = mx.kv.create(kind)
kv.init('w', mx.nd.ones((rows, cols)))
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1.0))
ids = np.sort(np.random.RandomState(kv.rank).choice(rows, size=rows // 100, replace=False))
grad = mx.nd.sparse.row_sparse_array((np.ones((len(ids), cols), np.float32), ids), shape=(rows, cols))
sent = kv.traffic['sent']
kv.push('w', grad)
sent = kv.traffic['sent'] - sent
kv._barrier()
out = mx.nd.sparse.zeros('row_sparse', (rows, cols))
received = kv.traffic['received']
kv.row_sparse_pull('w', out=out, row_ids=mx.nd.array(ids, dtype='int64'))
received = kv.traffic['received'] - received
weight = rows * cols * 4
assert out.indices.asnumpy().tolist() == ids.tolist()
# the rows pushed by this worker moved by 0.1 (both workers' sums where they overlap)
assert np.all(out.data.asnumpy() < 1.0)
row_bytes = cols * 4 + 8          # a row's values and its int64 index
if kind == 'dist_async':
    # pushed: each row to its server once; pulled: just the values of the rows asked for
    assert sent == len(ids) * row_bytes, (sent, len(ids))
    assert received == len(ids) * cols * 4, (received, len(ids))
else:
    # pushed: the row count, then the rows and values all-gathered; pulled: nothing (every
    # worker holds the value)
    assert sent == 8 + len(ids) * row_bytes, (sent, len(ids))
    assert received == 0, received
kv._barrier()
if kv.rank == 0:
    print('BYTES ' + json.dumps({'kind': kind, 'rows': len(ids), 'weight': weight, 'push_sent': sent,
                                 'pull_received': received}))
print('RESULT bytes ok rank %d' % kv.rank)
