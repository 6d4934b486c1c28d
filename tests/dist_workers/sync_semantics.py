"""Worker of tests/test_dist_kvstore.py: dist_sync's semantics, checked with equality.

Arrays live on ``WORKER_CTX`` (default ``cpu(0)``; ``gpu(0)`` on a GPU machine, where every
worker's copies sit on that one GPU).
"""
import os
import sys
import warnings

import numpy as np

import neomx as mx

DEVICE = mx.context.as_context(os.environ.get('WORKER_CTX', 'cpu(0)'))
SECOND = mx.cpu(1) if DEVICE.device_type == 'cpu' else DEVICE      # a worker's second device
mx.test_utils.set_default_context(DEVICE)
kv = mx.kv.create(sys.argv[1] if len(sys.argv) > 1 else 'dist_sync')
rank, n = kv.rank, kv.num_workers
assert n == int(os.environ['EXPECT_WORKERS']), (n, os.environ['EXPECT_WORKERS'])
assert kv.type == (sys.argv[1] if len(sys.argv) > 1 else 'dist_sync')
total = n * (n + 1) / 2          # sum over ranks of (rank + 1)


def pulled(key, shape, dtype='float32'):
    out = mx.nd.zeros(shape, dtype=dtype)
    kv.pull(key, out=out)
    return out.asnumpy()


# init takes rank 0's value on every worker
kv.init('a', mx.nd.ones((2, 3)) * (rank + 1))
assert (pulled('a', (2, 3)) == 1).all()
# without an optimizer the stored value becomes the sum, with no accumulation
for _ in range(2):
    kv.push('a', mx.nd.ones((2, 3)) * (rank + 1))
    assert (pulled('a', (2, 3)) == total).all()
# a worker's devices are summed first
kv.push('a', [mx.nd.ones((2, 3), ctx=DEVICE) * (rank + 1), mx.nd.ones((2, 3), ctx=SECOND)])
assert (pulled('a', (2, 3)) == total + n).all()
# many keys in one push (small ones fused into buckets, a big one alone), pushpull into out
keys = ['k%d' % i for i in range(40)] + ['big']
shapes = [(i + 1, 3) for i in range(40)] + [(1100, 1000)]
kv.init(keys, [mx.nd.zeros(s) for s in shapes])
outs = [mx.nd.zeros(s) for s in shapes]
kv.pushpull(keys, [mx.nd.ones(s) * (rank + 1) * (i + 1) for i, s in enumerate(shapes)], out=outs)
for i, o in enumerate(outs):
    assert (o.asnumpy() == total * (i + 1)).all(), i
# the same arrays pushed and pulled step after step stay the caller's own: writing them after
# a push or a pull changes neither the sums nor the stored values, and a push writes nothing
grads = [mx.nd.zeros(s) for s in shapes]
for step in range(2):
    for g in grads:
        g[:] = (rank + 1) * (step + 1)
    kv.push(keys, grads)
    for g in grads:
        g[:] = 100                  # after the push, before its sums are read
    kv.pull(keys, out=outs)
    for o in outs:
        assert (o.asnumpy() == total * (step + 1)).all(), step
        o[:] = -1
    kv.pull(keys, out=outs)         # the store still holds the sums
    assert all((o.asnumpy() == total * (step + 1)).all() for o in outs), step
    assert all((g.asnumpy() == 100).all() for g in grads), step
# broadcast and row_sparse_pull
b = mx.nd.zeros((3, 2))
kv.broadcast('b', mx.nd.array(np.arange(6).reshape(3, 2) + 10 * rank), out=b)
assert (b.asnumpy() == np.arange(6).reshape(3, 2)).all()
rows = mx.nd.zeros((3, 2)).tostype('row_sparse')
kv.row_sparse_pull('b', out=rows, row_ids=mx.nd.array([2]))
assert (rows.asnumpy() == [[0, 0], [0, 0], [4, 5]]).all()
# pull leaves sparse outputs as they are unless ignore_sparse=False, warning once per key (as
# MXNet's local store); the pull waits for the push in flight
kv.push('b', mx.nd.ones((3, 2)) * (rank + 1))
rows, dense = mx.nd.full((3, 2), -1.0).tostype('row_sparse'), mx.nd.zeros((3, 2))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    kv.pull('b', out=[rows, dense])
    kv.pull('b', out=rows)
assert (rows.asnumpy() == -1).all() and (dense.asnumpy() == total).all()
assert [str(w.message) for w in caught] == [
    "kvstore.pull: the sparse outputs of key 'b' are left as they are (ignore_sparse=True); "
    "pull them with row_sparse_pull and row_ids"], [str(w.message) for w in caught]
kv.pull('b', out=rows, ignore_sparse=False)
assert (rows.asnumpy() == total).all()
kv._barrier()

# the optimizer runs once on the sum (MXNet's 'test' optimizer: weight += rescale * grad)
kv.set_optimizer(mx.optimizer.create('test', rescale_grad=2))
for step in range(3):
    kv.push('a', mx.nd.ones((2, 3)) * (rank + 1))
    assert (pulled('a', (2, 3)) == total + n + 2 * total * (step + 1)).all()

# float16 keys with multi_precision: a float32 master copy (small steps are not lost)
kv.init('h', mx.nd.ones((4,), dtype='float16'))
kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=1.0, multi_precision=True))
master = np.ones(4, dtype=np.float32)
for _ in range(10):
    kv.push('h', mx.nd.ones((4,), dtype='float16') * 1e-4)
    master -= np.float32(n * np.float32(np.float16(1e-4)))
got = pulled('h', (4,), 'float16')
assert (got == master.astype(np.float16)).all() and got[0] != 1.0, (got, master)

# optimizer states are the same on every worker: any worker may save them
fname = os.path.join(os.environ['OUT_DIR'], 'states%d' % rank)
kv.save_optimizer_states(fname)
kv.load_optimizer_states(fname)

# 2-bit compression: {-t, 0, t} with a residual kept on each worker; every rank's gradients
# come from a seed, so each worker can simulate all of them
kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
kv.init('c', mx.nd.zeros((5,)))
kv.set_optimizer(mx.optimizer.create('test', rescale_grad=1))
rngs = [np.random.RandomState(r) for r in range(n)]
residuals = [np.zeros(5, np.float32) for _ in range(n)]
value = np.zeros(5, np.float32)
for _ in range(4):
    grads = [g.uniform(-1, 1, 5).astype(np.float32) for g in rngs]
    kv.push('c', mx.nd.array(grads[rank]))
    for r in range(n):
        mine = grads[r] + residuals[r]
        q = np.where(mine >= 0.5, 0.5, np.where(mine <= -0.5, -0.5, 0)).astype(np.float32)
        residuals[r] = mine - q
        value += q
    assert (pulled('c', (5,)) == value).all(), (pulled('c', (5,)), value)
print('RESULT sync ok rank %d' % rank, flush=True)
