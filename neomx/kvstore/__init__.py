"""``mx.kv``: key-value stores for summing gradients across devices and updating weights.

``kv = mx.kv.create('local')`` (or ``'device'``, ``'nccl'``); ``kv.init(key, value)``,
``kv.push(key, values)``, ``kv.pull(key, out=arrays)``.
"""
from .kvstore import KVStore, LocalKVStore, DeviceKVStore, NCCLKVStore, create

KVStoreBase = KVStore

__all__ = ['KVStore', 'KVStoreBase', 'LocalKVStore', 'DeviceKVStore', 'NCCLKVStore', 'create']
