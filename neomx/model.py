"""``mx.model``: checkpoints of a Symbol and its parameters, in MXNet's file layout.

``save_checkpoint(prefix, epoch, ...)`` writes ``prefix-symbol.json`` and
``prefix-%04d.params`` (arrays named ``arg:<name>`` and ``aux:<name>``), which MXNet 1.9.1's
``load_checkpoint`` and ``SymbolBlock.imports`` read, and reads them back.
"""
import importlib.util
import logging
import os
from collections import namedtuple

import numpy as np

from . import kvstore as kvs
from . import ndarray as nd
from . import symbol as sym
from .context import Context, cpu
from .initializer import Uniform
from .io import DataDesc
from .ndarray.utils import load_named
from .optimizer import get_updater

# (MXNet's mx.model also re-exports callback.LogValidationMetricsCallback; here mx.callback
# imports this module for save_checkpoint, and the two must not import each other.)
__all__ = ['save_checkpoint', 'load_checkpoint', 'load_params', 'BatchEndParam', 'Context', 'DataDesc',
           'Uniform', 'cpu', 'get_updater']

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])
BatchEndParam.__doc__ = """What batch-end and score-end callbacks receive: the epoch, the batch
number (or the number of batches scored), the metric and the caller's local variables."""

# A 'local' store updates on the host unless a parameter is bigger than this (elements):
# such parameters are then updated on each device instead (MXNet's rule).
_LOCAL_UPDATE_MAX_SIZE = 16 * 1024 * 1024


def create_kvstore(kvstore, num_device, arg_params):
    """``(store or None, update_on_kvstore)`` for a kvstore argument.

    A single device needs no store (unless distributed); the optimizer runs in the store
    (``update_on_kvstore``) unless ``MXNET_UPDATE_ON_KVSTORE=0`` or parameters are huge.
    """
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
    if kvstore is None or isinstance(kvstore, kvs.KVStoreBase):
        store = kvstore
    elif isinstance(kvstore, str):
        store = None if num_device == 1 and 'dist' not in kvstore else kvs.create(kvstore)
        if kvstore == 'local' and arg_params:
            largest = max(int(np.prod(p.shape)) for p in arg_params.values())
            update_on_kvstore = update_on_kvstore and largest <= _LOCAL_UPDATE_MAX_SIZE
    else:
        raise TypeError('kvstore must be a KVStore, a str or None, got %s' % type(kvstore).__name__)
    return store, update_on_kvstore and store is not None and store.is_capable(kvs.KVStoreBase.OPTIMIZER)



def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write a checkpoint: the symbol (unless None) and the parameters of ``epoch``.

    Parameters
    ----------
    prefix : str
        Path prefix of the files.
    epoch : int
        Epoch number, written as ``%04d`` in the parameter file name.
    symbol : Symbol or None
    arg_params, aux_params : dict of str -> NDArray
        Learned parameters and auxiliary states.
    """
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    save_dict = {'arg:%s' % k: v for k, v in arg_params.items()}
    save_dict.update({'aux:%s' % k: v for k, v in aux_params.items()})
    param_name = '%s-%04d.params' % (prefix, epoch)
    nd.save(param_name, save_dict)          # atomic: a partial file never replaces the old one
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    arg_params, aux_params = {}, {}
    for key, value in load_named('%s-%04d.params' % (prefix, epoch)).items():
        kind, _, name = key.partition(':')
        if kind == 'arg':
            arg_params[name] = value
        elif kind == 'aux':
            aux_params[name] = value
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` of a checkpoint written by :func:`save_checkpoint`
    (or by MXNet)."""
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


_create_kvstore = create_kvstore      # MXNet's name


def _create_sparse_kvstore(kvstore):
    """``(store, True)`` for row_sparse parameters, which are always updated in the store."""
    if isinstance(kvstore, kvs.KVStoreBase):
        store = kvstore
    elif isinstance(kvstore, str):
        store = kvs.create(kvstore)
    else:
        raise TypeError("Cannot create '%s' KVStore with row_sparse parameters. The type must be KVStore or str."
                        % (kvstore,))
    assert store.is_capable(kvs.KVStoreBase.OPTIMIZER), \
        'KVStore with sparse weight requires optimizer support. However, type(kv) does not support optimizer.'
    return store, True


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put every parameter into ``kvstore`` (and, when it updates them, onto the devices)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or arg_params[name].stype != 'default':
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Push each parameter's gradients (one per device) and pull the updated weights."""
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        name = param_names[index]
        if grad_list[0].stype == 'default' and arg_list[0].stype == 'default':
            kvstore.pushpull(name, grad_list, out=arg_list, priority=-index)
        else:
            kvstore.push(name, grad_list, priority=-index)
            kvstore.pull(name, out=arg_list, priority=-index)


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None, param_names=None):
    """Sum the gradients through ``kvstore`` (if any), then apply ``updater`` on each device;
    the updater sees index ``i * num_device + k`` for parameter ``i`` on device ``k``."""
    updates = [[] for _ in range(num_device)]
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            name = param_names[index]
            if grad_list[0].stype == 'default' and arg_list[0].stype == 'default':
                kvstore.pushpull(name, grad_list, priority=-index)
            else:
                kvstore.push(name, grad_list, priority=-index)
                kvstore.pull(name, out=grad_list, priority=-index)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((index * num_device + k, g, w))
    for dev_updates in updates:
        if dev_updates:
            indices, grads, weights = zip(*dev_updates)
            updater(list(indices), list(grads), list(weights))


def _multiple_callbacks(callbacks, *args, **kwargs):
    """Call ``callbacks`` (one or a list) with the arguments."""
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
    elif callbacks:
        callbacks(*args, **kwargs)


# MXNet's flag of scikit-learn's presence (found, not imported: neomx imports optional
# packages only where they are used)
SKLEARN_INSTALLED = importlib.util.find_spec('sklearn') is not None
