"""``mx.kv.create``: the one place that knows every built-in store.

It sits above the stores (it imports them; none of them imports it), so the stores' base
module stays free of its subclasses.
"""
from .allreduce import AllreduceKVStore
from .base import KVStoreBase
from .dist_async import DistAsyncKVStore
from .dist_sync import DistSyncKVStore
from .kvstore import create_local

__all__ = ['create']


def create(name='local'):
    """A new key-value store of type ``name``.

    Parameters
    ----------
    name : str
        ``'local'``, ``'device'``, ``'nccl'``, ``'dist_sync'``, ``'dist_device_sync'``
        (= ``'dist_sync_device'``), ``'dist_async'``, ``'dist'``, ``'horovod'``,
        ``'byteps'``, or the lower-cased name of a class registered with
        ``KVStoreBase.register``.

    Example
    -------
    >>> kv = mx.kv.create('local')
    >>> kv.type, kv.rank, kv.num_workers
    ('local', 0, 1)
    """
    if not isinstance(name, str):
        raise TypeError('name must be a string')
    lowered = name.lower()
    registered = KVStoreBase.kv_registry.get(lowered)
    if registered is not None:
        return registered()
    if 'dist' in lowered:
        return (DistAsyncKVStore if '_async' in lowered else DistSyncKVStore)(lowered)
    if lowered in ('horovod', 'byteps'):
        return AllreduceKVStore(lowered)
    return create_local(lowered)
