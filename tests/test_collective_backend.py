"""Which torch.distributed backend a job's workers choose for CUDA tensors."""
import pytest
import torch
import torch.distributed as dist

from neomx.base import MXNetError
from neomx.kvstore import rendezvous


def _choose(monkeypatch, hosts, gpus):
    """Every rank's choice when rank r runs on hosts[r], whose machine has gpus[host] GPUs."""
    store = dist.HashStore()
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
    for rank, host in enumerate(hosts):
        store.set('gpus/%d' % rank, '%s %d' % (host, gpus[host]))
    choices = []
    for rank, host in enumerate(hosts):
        monkeypatch.setattr(rendezvous.socket, 'gethostname', lambda host=host: host)
        monkeypatch.setattr(torch.cuda, 'device_count', lambda host=host: gpus[host])
        choices.append(rendezvous.collective_backend(store, rank, len(hosts)))
    return choices


def test_nccl_when_every_worker_can_have_its_own_gpu(monkeypatch):
    monkeypatch.delenv('NEOMX_CUDA_COLLECTIVES', raising=False)
    assert _choose(monkeypatch, ['a', 'a', 'b'], {'a': 2, 'b': 1}) == ['cpu:gloo,cuda:nccl'] * 3


def test_gloo_everywhere_when_one_host_has_more_workers_than_gpus(monkeypatch):
    # host b's two workers would share its GPU (NCCL refuses that): every worker must agree on gloo
    monkeypatch.delenv('NEOMX_CUDA_COLLECTIVES', raising=False)
    assert _choose(monkeypatch, ['a', 'b', 'b'], {'a': 4, 'b': 1}) == ['gloo'] * 3


def test_override_and_bad_override(monkeypatch):
    monkeypatch.setenv('NEOMX_CUDA_COLLECTIVES', 'gloo')
    assert _choose(monkeypatch, ['a', 'a'], {'a': 2}) == ['gloo', 'gloo']
    monkeypatch.setenv('NEOMX_CUDA_COLLECTIVES', 'mpi')
    with pytest.raises(MXNetError, match="NEOMX_CUDA_COLLECTIVES='mpi'"):
        _choose(monkeypatch, ['a'], {'a': 1})


def test_gloo_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    assert rendezvous.collective_backend(dist.HashStore(), 0, 2) == 'gloo'
