"""``mx.kv``: key-value stores for summing gradients across devices and workers and updating
weights.

``kv = mx.kv.create('local')`` (or ``'device'``, ``'nccl'``, ``'dist_sync'``,
``'dist_device_sync'``, ``'dist_async'``, ``'horovod'``...); ``kv.init(key, value)``,
``kv.push(key, values)``, ``kv.pull(key, out=arrays)``. Distributed stores find their place
in the job from the environment (:mod:`neomx.kvstore.placement`).

A process started with ``DMLC_ROLE=server`` or ``DMLC_ROLE=scheduler`` (as MXNet's
``tools/launch.py`` does) serves the job when neomx is imported and exits when it ends.
"""
import os as _os

from .base import KVStoreBase, TestStore
from .kvstore import KVStore, LocalKVStore, DeviceKVStore, NCCLKVStore
from . import base as _base
from .factory import create
from .kvstore_server import KVStoreServer

# MXNet also offers the factory as mxnet.kvstore.base.create; the base module cannot import the
# stores built on it, so the name is placed there from above.
_base.create = create

__all__ = ['KVStore', 'KVStoreBase', 'LocalKVStore', 'DeviceKVStore', 'NCCLKVStore', 'TestStore', 'create',
           'KVStoreServer']

if _os.environ.get('DMLC_ROLE') in ('server', 'scheduler'):
    from .server_role import serve_and_exit
    serve_and_exit()
