"""Worker of tests/test_dist_kvstore.py: dist_async applies each push as it arrives."""
import os

import numpy as np

import neomx as mx

os.environ['MXNET_KVSTORE_BIGARRAY_BOUND'] = '100'    # keys over 100 values are cut over the servers
kv = mx.kv.create('dist_async')
rank, n = kv.rank, kv.num_workers
assert kv.type == 'dist_async'
kv.init('w', mx.nd.ones((3,)) * (rank + 1))          # rank 0's value wins
out = mx.nd.zeros((3,))
kv.pull('w', out=out)
assert (out.asnumpy() == 1).all()
try:
    kv.push('w', mx.nd.ones((3,)))
    raise AssertionError('a push without optimizer should raise')
except mx.MXNetError as err:
    assert 'Updater needs to be set for async mode' in str(err)
kv._barrier()           # every worker tried before the optimizer arrives
kv.set_optimizer(mx.optimizer.create('test', rescale_grad=1))
if rank == 0:
    # worker 0 pushes and sees its own updates at once, while the others wait at the barrier
    for _ in range(3):
        kv.push('w', mx.nd.ones((3,)))
    kv.pull('w', out=out)
    assert (out.asnumpy() == 4).all(), out
kv._barrier()
if rank != 0:
    kv.push('w', mx.nd.ones((3,)) * 10)
kv._barrier()
kv.pull('w', out=out)
assert (out.asnumpy() == 4 + 10 * (n - 1)).all(), out
# float16 with multi-precision: a float32 master copy on the server
kv.init('h', mx.nd.ones((2,), dtype='float16'))
kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=1.0, multi_precision=True))
for _ in range(10):
    kv.push('h', mx.nd.ones((2,), dtype='float16') * 1e-4)
kv._barrier()
h = mx.nd.zeros((2,), dtype='float16')
kv.pull('h', out=h)
assert h.asnumpy()[0] < 1, h
# any worker fetches the server's optimizer states
fname = os.path.join(os.environ['OUT_DIR'], 'async_states%d' % rank)
kv.save_optimizer_states(fname)
kv.load_optimizer_states(fname)
kv._barrier()
kv.save_optimizer_states(fname)     # after a load each server still holds only its keys' states
kv._barrier()
# a big key is cut into one part per server; every part is updated
kv.init('big', mx.nd.array(np.arange(301)))
kv.push('big', mx.nd.ones((301,)) * (rank + 1))
kv._barrier()
big = mx.nd.zeros((301,))
kv.pull('big', out=big)
assert (big.asnumpy() == np.arange(301) - n * (n + 1) / 2).all(), big     # sgd, learning rate 1
rows = mx.nd.zeros((301,)).tostype('row_sparse')
kv.row_sparse_pull('big', out=rows, row_ids=mx.nd.array([300]))
assert rows.asnumpy()[300] == big.asnumpy()[300] and rows.asnumpy()[:300].sum() == 0
try:
    kv.save_optimizer_states(fname)
    raise AssertionError('states split over servers should not save')
except mx.MXNetError as err:
    assert 'split over servers' in str(err)
kv._barrier()
print('RESULT async ok rank %d' % rank, flush=True)
