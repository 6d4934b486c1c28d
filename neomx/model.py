"""``mx.model``: checkpoints of a Symbol and its parameters, in MXNet's file layout.

``save_checkpoint(prefix, epoch, ...)`` writes ``prefix-symbol.json`` and
``prefix-%04d.params`` (arrays named ``arg:<name>`` and ``aux:<name>``), which MXNet 1.9.1's
``load_checkpoint`` and ``SymbolBlock.imports`` read, and reads them back.
"""
import logging

from . import ndarray as nd
from . import symbol as sym
from .ndarray.utils import load_named

__all__ = ['save_checkpoint', 'load_checkpoint', 'load_params']


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
