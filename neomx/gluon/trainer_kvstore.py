"""How ``gluon.Trainer`` picks its KVStore and ``update_on_kvstore``: MXNet 1.9.1's table.

* sparse weights: a store is required and the store updates (``update_on_kvstore=False``
  raises ``ValueError``);
* sparse gradients, dense weights: the store updates when it is distributed
  (``update_on_kvstore=False`` then raises ``ValueError``), otherwise the given value holds;
* dense: the store updates (``MXNET_UPDATE_ON_KVSTORE``, default 1) unless told otherwise;
  ``dist_async`` always updates on the store (``update_on_kvstore=False`` raises
  ``ValueError``); a store without optimizer support cannot (``ValueError`` if asked).
"""
import os

from .. import kvstore as kvs

__all__ = ['choose_kvstore']


def _has_sparse(params):
    weights = any(p._stype != 'default' for p in params)
    grads = any(getattr(p, '_grad_stype', 'default') != 'default' for p in params)
    return weights, grads


def _create(kvstore, num_device):
    """MXNet's ``model._create_kvstore``: (store or None, update_on_kvstore)."""
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
    if kvstore is None:
        store = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        store = kvstore
    elif isinstance(kvstore, str):
        store = None if num_device == 1 and 'dist' not in kvstore else kvs.create(kvstore)
    else:
        raise TypeError('kvstore must be KVStore, str or None')
    if store is None:
        return None, False
    return store, update_on_kvstore and store.is_capable(kvs.KVStoreBase.OPTIMIZER)


def choose_kvstore(kvstore, update_on_kvstore, num_device, params):
    """``(store, update_on_kvstore)`` as MXNet 1.9.1's ``Trainer._init_kvstore`` decides."""
    sparse_weight, sparse_grad = _has_sparse(params)
    if sparse_weight:
        if isinstance(kvstore, kvs.KVStoreBase):
            store = kvstore
        elif isinstance(kvstore, str):
            store = kvs.create(kvstore)
        else:
            raise TypeError("Cannot create '%s' KVStore with row_sparse parameters. The type must be "
                            "KVStore or str." % (kvstore,))
        assert store.is_capable(kvs.KVStoreBase.OPTIMIZER), \
            'KVStore with sparse weight requires optimizer support. However, type(kv) does not support ' \
            'optimizer. Please consider other kvstore backends (e.g. dist_device) instead.'
        if update_on_kvstore is False:
            raise ValueError('Cannot set update_on_kvstore=False when sparse weights are present.')
        return store, True
    if sparse_grad:
        store, _ = _create(kvstore, num_device)
        distributed = store is not None and 'dist' in store.type
        update = distributed
        if update_on_kvstore is not None:
            if update_on_kvstore is False and distributed:
                raise ValueError('Cannot set update_on_kvstore=False on dist kvstore when sparse gradients '
                                 'are present.')
            update = update_on_kvstore
        if store is not None and not isinstance(store, kvs.KVStore):
            raise ValueError('Cannot use {} for multi-device training with sparse gradients'.format(type(store)))
        return store, update
    store, update = _create(kvstore, num_device)
    if store is None:
        return None, False
    if 'dist' in store.type and 'async' in store.type:
        update = True
        if update_on_kvstore is False:
            raise ValueError('Please set update_on_kvstore=True when training in async mode.')
    if update_on_kvstore is not None:
        update = update_on_kvstore
    if update and not store.is_capable(kvs.KVStoreBase.OPTIMIZER):
        if update_on_kvstore:
            raise ValueError('Please set update_on_kvstore=False when training with {}'.format(type(store)))
        update = False
    return store, update
