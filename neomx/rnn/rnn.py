"""Checkpoints of models built with :mod:`neomx.rnn` cells: files hold the unpacked
(per-gate) weights, memory holds the packed ones the graph uses."""
import warnings

from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ['rnn_unroll', 'save_rnn_checkpoint', 'load_rnn_checkpoint', 'do_rnn_checkpoint']


def _as_list(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else cells


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix='', layout='NTC'):
    """Deprecated: ``cell.unroll(length, inputs, begin_state, layout)``; ``input_prefix`` is
    ignored."""
    del input_prefix  # kept for MXNet's signature; unroll no longer creates inputs
    warnings.warn('rnn_unroll is deprecated. Please call cell.unroll directly.')
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``model.save_checkpoint`` after unpacking the weights of ``cells``.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
        Writes ``prefix-symbol.json`` and ``prefix-%04d.params % epoch``.
    epoch : int
    symbol : Symbol
    arg_params, aux_params : dict of str -> NDArray
    """
    for cell in _as_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``model.load_checkpoint``, then pack the weights of ``cells``.

    Returns
    -------
    symbol : Symbol
    arg_params, aux_params : dict of str -> NDArray
    """
    symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
    for cell in _as_list(cells):
        arg_params = cell.pack_weights(arg_params)
    return symbol, arg_params, aux_params


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback (``Module.fit(epoch_end_callback=...)``) that calls
    :func:`save_rnn_checkpoint` every ``period`` epochs, numbering files from 1."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
