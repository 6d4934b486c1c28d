"""gluon.checkpoint: atomic, complete-or-ignored training checkpoints and resumable data order."""
import json
import os

import numpy as np
import pytest
import torch

import neomx as mx
from neomx.gluon.checkpoint import Checkpointer, EpochShards


def net_and_trainer(seed=0):
    mx.random.seed(seed)
    # A fixed prefix: a resumed run builds its net in a fresh process, with the same names
    # (the Trainer orders parameters, and so optimizer states, by name, as MXNet does).
    net = mx.gluon.nn.HybridSequential(prefix='model_')
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(5, in_units=3, activation='relu'), mx.gluon.nn.Dropout(0.5),
                mx.gluon.nn.Dense(2, in_units=5))
    net.initialize(mx.init.Xavier())
    return net, mx.gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.01})


def step(net, trainer):
    with mx.autograd.record():
        loss = net(mx.nd.random.uniform(shape=(4, 3))).sum()
    loss.backward()
    trainer.step(4)


def weights(net):
    return [p.data().asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize('where', ['local', 'memory'])
def test_restore_continues_exactly(tmp_path, where):
    folder = str(tmp_path) if where == 'local' else 'memory://ckpt-%s' % os.urandom(4).hex()
    net, trainer = net_and_trainer()
    step(net, trainer)
    Checkpointer(folder, net, trainer).save(epoch=1, batch=3, position=96, extra={'acc': 0.5})
    step(net, trainer)                      # draws dropout masks and data after the checkpoint
    expected = weights(net)

    other, other_trainer = net_and_trainer(seed=7)
    meta = Checkpointer(folder, other, other_trainer).restore()
    assert (meta['epoch'], meta['batch'], meta['position'], meta['extra']) == (1, 3, 96, {'acc': 0.5})
    assert other_trainer.optimizer.num_update == 1
    step(other, other_trainer)
    for mine, theirs in zip(expected, weights(other)):
        np.testing.assert_array_equal(mine, theirs)


def test_incomplete_checkpoints_are_ignored_and_old_ones_pruned(tmp_path):
    net, trainer = net_and_trainer()
    ckpt = Checkpointer(str(tmp_path), net, trainer, keep=2)
    for batch in (10, 20, 30):
        ckpt.save(epoch=0, batch=batch, position=batch * 4)
    names = sorted(os.listdir(tmp_path))
    assert [n for n in names if n.endswith('.json')] == ['checkpoint-0000-00000020.json',
                                                        'checkpoint-0000-00000030.json']
    assert not any('00000010' in n for n in names) and not any(n.startswith('.') for n in names)
    # a writer killed before the .json: the checkpoint does not exist for restore
    ckpt.keep = 3
    ckpt.save(epoch=0, batch=40, position=160)
    os.remove(tmp_path / 'checkpoint-0000-00000040.json')
    assert ckpt.latest()['batch'] == 30
    # a data file that does not match the sizes in its .json (truncated behind our back)
    with open(tmp_path / 'checkpoint-0000-00000030.params', 'r+b') as f:
        f.truncate(10)
    assert ckpt.latest()['batch'] == 20
    assert Checkpointer(str(tmp_path / 'none'), net, trainer).restore() is None


def test_only_rank_zero_writes_shared_files(tmp_path):
    net, trainer = net_and_trainer()
    Checkpointer(str(tmp_path), net, trainer, rank=1, num_workers=2).save(0, 5, 40)
    assert os.listdir(tmp_path) == ['checkpoint-0000-00000005.rng1']
    Checkpointer(str(tmp_path), net, trainer, rank=0, num_workers=2).save(0, 5, 40)
    meta = json.loads((tmp_path / 'checkpoint-0000-00000005.json').read_text())
    assert meta['num_workers'] == 2 and sorted(meta['files']) == ['params', 'states']
    assert meta['files']['params']['size'] == os.path.getsize(tmp_path / 'checkpoint-0000-00000005.params')


def test_generators_restored_only_for_the_same_world():
    net, trainer = net_and_trainer()
    folder = 'memory://ckpt-%s' % os.urandom(4).hex()
    Checkpointer(folder, net, trainer, rank=0, num_workers=2).save(0, 1, 8)
    after_save = torch.rand(3)
    Checkpointer(folder, net, trainer, rank=0, num_workers=2).restore()
    assert torch.equal(torch.rand(3), after_save)
    Checkpointer(folder, net, trainer, rank=0, num_workers=1).restore()      # re-sharded run: fresh streams
    assert not torch.equal(torch.rand(3), after_save)


@pytest.mark.parametrize('workers', [1, 2, 3])
def test_epoch_shards_split_and_resume_with_another_world_size(workers):
    shards = EpochShards(103, seed=5)
    parts = [shards.indices(2, r, workers) for r in range(workers)]
    assert sorted(np.concatenate(parts).tolist()) == list(range(103))
    # 2 workers read 4 batches of 8, then the run resumes with `workers` workers
    consumed = 4 * 8 * 2
    seen = np.concatenate([shards.indices(2, r, 2)[:32] for r in range(2)])
    rest = np.concatenate([shards.indices(2, r, workers, start=consumed) for r in range(workers)])
    assert sorted(np.concatenate([seen, rest]).tolist()) == list(range(103))
    assert not np.array_equal(shards.order(2), shards.order(3))
    assert list(EpochShards(5, shuffle=False).indices(0, 1, 2)) == [1, 3]
    with pytest.raises(mx.base.MXNetError, match='rank 2 is not in'):
        shards.indices(0, 2, 2)
