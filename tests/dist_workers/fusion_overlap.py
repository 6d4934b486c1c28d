"""Worker of tests/test_dist_kvstore.py: buckets and pushes started from backward change nothing.

* push+pull of many keys with float values: fused into buckets (the default), one key per
  bucket (``NEOMX_KVSTORE_FUSION_BYTES=0``) and a single bucket give the exact float32 sums
  that every worker computes from every rank's seeded values;
* a pull of a subset of the keys while later buckets are in flight, then the rest;
* Gluon training with the Trainer's pushes started from backward gives bit-identical weights
  to pushes at the step (``NEOMX_TRAINER_OVERLAP=0``), with ``update_on_kvstore`` True and
  False, two backward passes before a step, a parameter without gradient and another
  network's parameters created on one worker only.
"""
import os

import numpy as np

import neomx as mx
from neomx import autograd, gluon

kv = mx.kv.create('dist_sync')
rank, n = kv.rank, kv.num_workers
assert n == int(os.environ['EXPECT_WORKERS'])

# ------------------------------------------------------------ bucketing exactness
shapes = [(7,), (300, 200), (3, 5, 5), (1200, 1000), (64,), (2000, 700), (1,)]
keys = list(range(len(shapes)))
kv.init(keys, [mx.nd.zeros(s) for s in shapes])


def values_of(r, step):
    rng = np.random.RandomState(1000 * step + r)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


for step, fusion in enumerate(['', '0', str(1 << 30), '4096']):
    os.environ['NEOMX_KVSTORE_FUSION_BYTES'] = fusion
    every = [values_of(r, step) for r in range(n)]
    outs = [mx.nd.zeros(s) for s in shapes]
    kv.push(keys, [mx.nd.array(v) for v in every[rank]])
    assert kv._pending or n == 1, 'push waited for its sums'
    kv.pull(keys[:2], out=outs[:2])        # the first buckets, while the others travel
    kv.pull(keys[2:], out=outs[2:])
    assert not kv._pending
    for i, o in enumerate(outs):
        total = np.sum(np.stack([v[i] for v in every]), axis=0, dtype=np.float32)
        if n == 2:         # a + b is exact whatever the order: bit equality
            assert np.array_equal(o.asnumpy(), every[0][i] + every[1][i]), (fusion, i)
        assert np.allclose(o.asnumpy(), total, rtol=1e-5, atol=1e-5), (fusion, i)
os.environ.pop('NEOMX_KVSTORE_FUSION_BYTES')


# ------------------------------------------------------------ overlap with backward
def train(overlap, update_on_kvstore, steps=6):
    os.environ['NEOMX_TRAINER_OVERLAP'] = '1' if overlap else '0'
    mx.random.seed(7)
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Conv2D(8, 3, activation='relu'), gluon.nn.Flatten(),      # dense weights: 1.3 MB, 0.3 MB
            gluon.nn.Dense(400, activation='relu'), gluon.nn.Dense(200, activation='relu'), gluon.nn.Dense(10))
    unused = gluon.nn.Dense(3, in_units=2)          # never in a backward pass: stale gradient
    net.initialize(mx.init.Xavier())
    unused.initialize()
    params = net.collect_params()
    params.update(unused.collect_params())
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.05, 'momentum': 0.9}, kvstore='dist_sync',
                            update_on_kvstore=update_on_kvstore)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(rank)
    started_in_backward = 0
    for step in range(steps):
        x = mx.nd.array(rng.standard_normal((8, 1, 12, 12)).astype(np.float32))
        y = mx.nd.array(rng.randint(0, 10, 8))
        for _ in range(2 if step == 4 else 1):      # step 4: backward twice, the second counts
            with autograd.record():
                loss = loss_fn(net(x * (1 + _)), y)
            loss.backward()
        if step == 3 and rank == 0:     # another network's parameters appear on one worker only
            gluon.Parameter('other', shape=(2,)).initialize()
        started_in_backward += bool(trainer._overlap is not None and trainer._overlap.pushes.started > 0)
        trainer.step(8 * n, ignore_stale_grad=True)
    os.environ.pop('NEOMX_TRAINER_OVERLAP')
    used = trainer._overlap is not None
    return [p.data().asnumpy() for p in params.values()], used, started_in_backward


for update_on_kvstore, fusion in [(True, ''), (False, ''), (True, '65536')]:     # 64 KB: many buckets
    os.environ['NEOMX_KVSTORE_FUSION_BYTES'] = fusion
    plain, used, early = train(False, update_on_kvstore)
    assert not used and early == 0
    overlapped, used, early = train(True, update_on_kvstore)
    assert used and early >= 3, (used, early)        # pushes started from backward at steps 2 to 5
    for a, b in zip(plain, overlapped):
        assert np.array_equal(a, b), (update_on_kvstore, fusion, np.abs(a - b).max())
    os.environ.pop('NEOMX_KVSTORE_FUSION_BYTES')
print('RESULT fusion ok rank %d' % rank, flush=True)
