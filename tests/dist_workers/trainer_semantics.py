"""Worker of tests/test_dist_kvstore.py: Gluon Trainer and Module on dist_sync / dist_async."""
import os

import numpy as np

import neomx as mx

kind = os.environ.get('KV_TYPE', 'dist_sync')
kv = mx.kv.create(kind)
rank, n = kv.rank, kv.num_workers

# rank 0's initial weights reach every worker; gradients are summed over workers, scaled 1/bs
x = mx.gluon.Parameter('x', shape=(4,))
x.initialize(ctx=mx.cpu(0), init=mx.init.Constant(float(rank + 1)))
trainer = mx.gluon.Trainer([x], 'sgd', {'learning_rate': 0.5}, kvstore=kv)
for step in range(2):
    with mx.autograd.record():
        y = (x.data() * (rank + 1)).sum()
    y.backward()
    trainer.step(2)
expected = 1.0 - 2 * 0.5 * (n * (n + 1) / 2) / 2
if 'async' in kind:      # pushes land as they come: once everyone pushed, the server holds all
    kv._barrier()
    kv.pull(0, out=x.data())
assert trainer._update_on_kvstore is True
assert np.allclose(x.data().asnumpy(), expected) and (x.data().asnumpy() == x.data().asnumpy()[0]).all(), \
    (x.data().asnumpy(), expected)
# the weights are the same everywhere: Trainer states saved by any worker
trainer.save_states(os.path.join(os.environ['OUT_DIR'], 'trainer%d.states' % rank))
# a distributed store holding the weights cannot be reset
try:
    x.set_data(mx.nd.zeros((4,)))
    raise AssertionError('set_data should raise')
except RuntimeError as err:
    assert 'Cannot reset distributed KVStore' in str(err)

# MXNet's update_on_kvstore table
p = mx.gluon.Parameter('p', shape=(3,))
p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
t = mx.gluon.Trainer([p], 'sgd', {'learning_rate': 0.1}, kvstore=kv, update_on_kvstore=False)
if 'async' in kind:
    try:
        t._init_kvstore()
        raise AssertionError('async with update_on_kvstore=False should raise')
    except ValueError as err:
        assert 'update_on_kvstore=True' in str(err)
else:
    t._init_kvstore()
    assert t._update_on_kvstore is False

# Module divides by batch_size * num_workers for the synchronous stores
if 'async' not in kind:
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(data_shapes=[('data', (5, 3))], label_shapes=[('softmax_label', (5,))])
    mod.init_params(initializer=mx.init.Uniform(0.1 * (rank + 1)))
    mkv = mx.kv.create(kind)      # string keys: a store of its own (MXNet forbids mixing key types)
    mod.init_optimizer(kvstore=mkv, optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    assert mod._optimizer.rescale_grad == 1.0 / (5 * n), mod._optimizer.rescale_grad
    batch = mx.io.DataBatch([mx.nd.ones((5, 3)) * (rank + 1)], [mx.nd.zeros((5,))])
    mod.forward_backward(batch)
    mod.update()
    w = mod.get_params()[0]['fc_weight'].asnumpy()
    out = mx.nd.array(w)
    mkv.init('fc_check', mx.nd.zeros(w.shape))
    mkv._set_updater(None)
    mkv.pushpull('fc_check', out)       # the sum of every worker's weights is n times rank 0's
    assert np.array_equal(out.asnumpy(), n * w), (out.asnumpy(), w)
print('RESULT trainer ok rank %d' % rank, flush=True)
