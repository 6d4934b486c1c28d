"""Worker of tests/test_dist_kvstore.py: whatever launched it, the workers find each other.

With KV_TYPE=horovod (or byteps) it checks the allreduce-style store and Trainer with it.
"""
import os

import numpy as np

import neomx as mx

kind = os.environ.get('KV_TYPE', 'dist_sync')
kv = mx.kv.create(kind)
rank, n = kv.rank, kv.num_workers
assert n == int(os.environ['EXPECT_WORKERS']), n
out = mx.nd.zeros((3,))
if 'dist' in kind:
    kv.init(7, mx.nd.zeros((3,)))
else:
    kv.broadcast(7, mx.nd.ones((3,)) * (rank + 1), out=out)
    assert (out.asnumpy() == 1).all() and not kv.is_capable('optimizer')
kv.pushpull(7, mx.nd.ones((3,)) * (rank + 1), out=out)
assert (out.asnumpy() == n * (n + 1) / 2).all(), out
if 'dist' not in kind:
    # Trainer: rank 0's weights broadcast, gradients summed, every worker updates itself
    x = mx.gluon.Parameter('x', shape=(2,))
    x.initialize(init=mx.init.Constant(float(rank + 1)))
    trainer = mx.gluon.Trainer([x], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    with mx.autograd.record():
        y = (x.data() * (rank + 1)).sum()
    y.backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    assert np.array_equal(x.data().asnumpy(), np.full(2, 1.0 - n * (n + 1) / 2, np.float32)), x.data()
print('RESULT env ok rank %d of %d' % (rank, n), flush=True)
