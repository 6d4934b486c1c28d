"""One worker of tests/test_bridge.py's DistributedDataParallel test: a Gluon MLP bridged to
torch, wrapped in DDP over a gloo group, trained 3 SGD steps on this rank's half of each
batch; writes its final parameters to ``<out>/rank<r>.npz``.

Run as ``python bridge_ddp_worker.py RANK WORLD_SIZE PORT OUT``.
"""
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

import neomx as mx
from neomx.bridge import to_torch


def mlp():
    net = mx.gluon.nn.HybridSequential(prefix='mlp_')
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(8, in_units=4, activation='relu'), mx.gluon.nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def batches(steps=3, size=8):
    rng = np.random.RandomState(7)
    return [(rng.randn(size, 4).astype('float32'), rng.randint(0, 3, size=size)) for _ in range(steps)]


def main(rank, world, port, out):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=world)
    mx.random.seed(rank)                 # different initial values: DDP broadcasts rank 0's
    model = torch.nn.parallel.DistributedDataParallel(to_torch(mlp()))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches():
        part = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x[part])), torch.from_numpy(y[part]))
        loss.backward()
        opt.step()
    np.savez(os.path.join(out, 'rank%d.npz' % rank),
             **{n: p.detach().numpy() for n, p in model.module.named_parameters()})
    dist.destroy_process_group()


if __name__ == '__main__':
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
