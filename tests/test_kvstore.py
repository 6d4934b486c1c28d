"""mx.kv: local/device/nccl stores, aggregation, updaters, optimizers on the store, state
files, errors that leave the store untouched, and the seed walkthrough example."""
import os
import runpy

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

SHAPE = (2, 3)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pulled(kv, key, shape=SHAPE, ctx=None):
    out = mx.nd.zeros(shape, ctx)
    kv.pull(key, out=out)
    return out.asnumpy()


@pytest.mark.parametrize('kind', ['local', 'device'])
def test_properties(kind):
    kv = mx.kv.create(kind)
    assert (kv.type, kv.rank, kv.num_workers) == (kind, 0, 1)
    assert kv.is_capable('optimizer') is True
    with pytest.raises(ValueError, match='Unknown capability'):
        kv.is_capable('teleport')
    kv._barrier()


@pytest.mark.parametrize('kind', ['local', 'device'])
def test_push_sums_devices_and_pull_copies_to_each(kind):
    kv = mx.kv.create(kind)
    kv.init('w', mx.nd.zeros(SHAPE, mx.cpu(1)))
    kv.push('w', [mx.nd.ones(SHAPE, mx.cpu(i)) * (i + 1) for i in range(4)])
    outs = [mx.nd.zeros(SHAPE, mx.cpu(i)) for i in range(3)]
    kv.pull('w', out=outs)
    for i, o in enumerate(outs):
        assert o.context == mx.cpu(i)
        np.testing.assert_array_equal(o.asnumpy(), np.full(SHAPE, 10.0))


def test_lists_of_keys_each_with_device_lists():
    kv = mx.kv.create('local')
    kv.init([1, 2], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2])
    kv.push([1, 2], [[mx.nd.ones(SHAPE, mx.cpu(i)) for i in range(2)], mx.nd.ones(SHAPE) * 7])
    outs = [[mx.nd.zeros(SHAPE, mx.cpu(i)) for i in range(2)], mx.nd.zeros(SHAPE)]
    kv.pull([1, 2], out=outs)
    assert [o.asnumpy()[0, 0] for o in outs[0]] == [2.0, 2.0] and outs[1].asnumpy()[0, 0] == 7.0


def test_updater_gets_summed_value_and_key_forms():
    kv = mx.kv.create('local')
    seen = []

    def update(key, merged, stored):
        seen.append((key, merged.asnumpy().tolist()))
        stored += merged * 2

    kv.set_updater(update)                   # the public alias of _set_updater
    kv.init(['a'], [mx.nd.zeros((2,))])
    kv.push('a', [mx.nd.array([1, 2]), mx.nd.array([3, 4], ctx=mx.cpu(2))])
    assert seen == [(b'a', [4.0, 6.0])]     # str keys reach the updater as bytes (MXNet 1.9.1)
    assert _pulled(kv, 'a', (2,)).tolist() == [8.0, 12.0]
    kv_int = mx.kv.create('local')
    kv_int._set_updater(lambda key, merged, stored: seen.append(key))
    kv_int.init(4, mx.nd.zeros((2,)))
    kv_int.push(4, mx.nd.ones((2,)))
    assert seen[-1] == 4 and type(seen[-1]) is int


def test_raising_updater_leaves_value_and_propagates():
    kv = mx.kv.create('local')
    kv.init(0, mx.nd.ones((2,)))

    def broken(key, merged, stored):
        stored += 100
        raise KeyError('boom')

    kv._set_updater(broken)
    with pytest.raises(KeyError, match='boom'):
        kv.push(0, mx.nd.ones((2,)))
    assert _pulled(kv, 0, (2,)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize('action, message', [
    (lambda kv: kv.push(7, mx.nd.ones(SHAPE)), 'has not been initialized'),
    (lambda kv: kv.pull(7, out=mx.nd.zeros(SHAPE)), 'has not been initialized'),
    (lambda kv: kv.init(1, mx.nd.ones(SHAPE)), 'duplicate init of key 1'),
    (lambda kv: kv.init('s', mx.nd.ones(SHAPE)), 'mixed key types'),
    (lambda kv: kv.push(1, mx.nd.ones((3,))), r'key 1 stores shape \(2, 3\) but got \(3,\)'),
    (lambda kv: kv.push([1, 2], [mx.nd.ones(SHAPE)]), '2 keys need a list of 2 values'),
    (lambda kv: kv.push([1, 2], [mx.nd.ones(SHAPE) * 9, mx.nd.ones((1,))]), 'key 2 stores shape'),
    (lambda kv: kv.push(1.5, mx.nd.ones(SHAPE)), 'keys must be int or str'),
    (lambda kv: kv.push(1, [np.ones(SHAPE)]), 'needs an NDArray'),
    (lambda kv: kv.pull(1), 'out is required'),
])
def test_bad_requests_raise_and_leave_store_untouched(action, message):
    kv = mx.kv.create('local')
    kv.init([1, 2], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2])
    with pytest.raises(MXNetError, match=message):
        action(kv)
    assert _pulled(kv, 1)[0, 0] == 1.0 and _pulled(kv, 2)[0, 0] == 2.0


def test_set_optimizer_momentum_and_state_files(tmp_path):
    def make():
        kv = mx.kv.create('local')
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        return kv

    kv = make()
    kv.init(0, mx.nd.array([1.0, 1.0]))
    kv.push(0, [mx.nd.array([0.5, -1.0]), mx.nd.array([0.5, -1.0], ctx=mx.cpu(1))])   # summed: [1, -2]
    np.testing.assert_allclose(_pulled(kv, 0, (2,)), [0.9, 1.2], rtol=1e-6)
    fname = str(tmp_path / 'kv.states')
    kv.save_optimizer_states(fname)
    with open(fname, 'rb') as f:
        assert f.read(8) == b'NEOMXOS1'      # pickle-free
    kv.push(0, mx.nd.array([1.0, -2.0]))
    restored = make()
    restored.init(0, mx.nd.array([0.9, 1.2]))
    restored.load_optimizer_states(fname)
    restored.push(0, mx.nd.array([1.0, -2.0]))
    # momentum carried over: mom = 0.9 * [-0.1, 0.2] - 0.1 * [1, -2]
    np.testing.assert_allclose(_pulled(restored, 0, (2,)), _pulled(kv, 0, (2,)), rtol=1e-6)
    np.testing.assert_allclose(_pulled(kv, 0, (2,)), [0.71, 1.58], rtol=1e-6)


def test_optimizer_state_files_need_an_optimizer(tmp_path):
    with pytest.raises(MXNetError, match='no optimizer is set'):
        mx.kv.create('local').save_optimizer_states(str(tmp_path / 'x'))


def test_pushpull_broadcast_and_row_sparse_pull():
    kv = mx.kv.create('local')
    kv.broadcast(0, mx.nd.array([[1, 2], [3, 4], [5, 6]]), out=[mx.nd.zeros((3, 2)), mx.nd.zeros((3, 2), mx.cpu(1))])
    with pytest.raises(MXNetError, match='duplicate init'):
        kv.broadcast(0, mx.nd.zeros((3, 2)), out=mx.nd.zeros((3, 2)))
    rows = mx.nd.full((3, 2), -1.0).tostype('row_sparse')
    kv.row_sparse_pull(0, out=rows, row_ids=mx.nd.array([2, 0]))
    assert rows.asnumpy().tolist() == [[1, 2], [0, 0], [5, 6]]
    with pytest.raises(MXNetError, match='row_sparse_pull: key 0: out must be row_sparse'):
        kv.row_sparse_pull(0, out=mx.nd.zeros((3, 2)), row_ids=mx.nd.array([1]))
    values = [mx.nd.ones((3, 2)), mx.nd.ones((3, 2), mx.cpu(1))]
    kv.pushpull(0, values)                  # out defaults to the pushed arrays
    assert values[1].asnumpy()[0].tolist() == [2.0, 2.0]


def test_device_store_spreads_keys_over_devices():
    kv = mx.kv.create('device')
    kv.init([0, 1], [mx.nd.zeros((1000,)), mx.nd.zeros((1000,))])
    for key in (0, 1):
        kv.push(key, [mx.nd.ones((1000,), mx.cpu(i)) for i in (1, 2)])
    homes = {kv._store[k].context for k in (0, 1)}
    assert homes == {mx.cpu(1), mx.cpu(2)}
    assert _pulled(kv, 1, (1000,))[0] == 2.0
    kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})


def test_store_kinds():
    with pytest.raises(MXNetError, match='not supported for this type'):
        mx.kv.create('local').set_gradient_compression({'type': '2bit'})
    assert mx.kv.create('TestStore').type == 'teststore'       # MXNet's registered test store
    # MXNet reports the name a store was created with
    assert mx.kv.create('local_allreduce_device').type == 'local_allreduce_device'
    assert isinstance(mx.kv.create('local_allreduce_device'), mx.kv.DeviceKVStore)
    assert mx.kv.create('local_allreduce_cpu').type == 'local_allreduce_cpu'
    with pytest.raises(MXNetError, match='unknown kvstore type'):
        mx.kv.create('bogus')
    assert mx.kv.create().type == 'local'
    if mx.context.num_gpus() == 0:
        with pytest.raises(MXNetError, match='needs CUDA GPUs'):
            mx.kv.create('nccl')


def test_walkthrough_example_prints_the_seed_values(capsys):
    runpy.run_path(os.path.join(ROOT, 'examples', 'kvstore_walkthrough.py'), run_name='__main__')
    out = capsys.readouterr().out
    firsts = [line.split()[0].strip('[]') for line in out.splitlines() if line.startswith('[[')]
    assert firsts == ['2.', '8.', '4.', '4.', '6.', '6.', '3.', '11.']
    assert out.count('update on key: 3') == 1 and out.count('update on key: 9') == 2


def test_pull_ignores_sparse_outputs_unless_asked():
    kv = mx.kv.create('local')
    kv.init(['a', 'b'], [mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 3])
    sparse = (mx.nd.ones((2, 3)) * 2).tostype('row_sparse')
    dense = mx.nd.zeros((2, 3))
    with pytest.warns(UserWarning, match=r"^kvstore.pull: the sparse outputs of key 'a' are left as they "
                      r"are \(ignore_sparse=True\); pull them with row_sparse_pull") as caught:
        kv.pull(['a', 'b'], out=[sparse, dense])
        kv.pull('a', out=[sparse, mx.nd.zeros((2, 3)).tostype('csr')])   # once per key, as MXNet
    assert len(caught) == 1
    assert sparse.asnumpy().tolist() == [[2] * 3] * 2 and dense.asnumpy().tolist() == [[3] * 3] * 2
    kv.pull('a', out=sparse, ignore_sparse=False)
    assert sparse.asnumpy().tolist() == [[1] * 3] * 2


def test_row_sparse_pull_takes_row_ids_nested_like_out():
    kv = mx.kv.create('local')
    kv.init(['a', 'b'], [mx.nd.array([[1, 1], [2, 2], [3, 3]])] * 2)
    outs = [[mx.nd.zeros((3, 2), mx.cpu(i)).tostype('row_sparse') for i in range(2)]
            for _ in range(2)]
    row_ids = [[mx.nd.array([0]), mx.nd.array([2])], [mx.nd.array([1]), mx.nd.array([0, 1])]]
    kv.row_sparse_pull(['a', 'b'], out=outs, row_ids=row_ids)
    assert [o.asnumpy()[:, 0].tolist() for per_key in outs for o in per_key] == [
        [1, 0, 0], [0, 0, 3], [0, 2, 0], [1, 2, 0]]
    with pytest.raises(MXNetError, match='one NDArray per output'):
        kv.row_sparse_pull(['a', 'b'], out=outs, row_ids=[mx.nd.array([0])] * 3)
