"""Operators: activations, softmax and its relatives, and dropout.

MXNet semantics kept here: activations reject integer inputs; ``LeakyReLU``'s ``prelu``
takes one slope per channel (axis 1) and ``rrelu`` also returns its slope mask, using the
mean slope ``(lower_bound + upper_bound) / 2`` outside training; ``softmax`` with
``use_length`` normalises only the first ``length`` entries along the axis and gives 0
elsewhere; ``SoftmaxActivation``'s ``instance`` mode works on the last axis; ``Dropout``
is an identity (a copy) unless training or ``mode='always'``.
"""
import torch
import torch.nn.functional as F

from .. import autograd
from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, INT, OPT_BOOL, OPT_DTYPE, OPT_FLOAT, SHAPE, check, choice, register


def _check_float(op, data):
    if not data.is_floating_point():    # tested inline: every call would build the shape
        check(False, op, 'only floating point inputs are supported, got %s of shape %s',
              data.dtype, data.shape)


# ---------------------------------------------------------------- Activation
_ACTIVATIONS = {'relu': torch.relu, 'sigmoid': torch.sigmoid, 'softrelu': F.softplus,
                'softsign': F.softsign, 'tanh': torch.tanh}


@register('Activation', inputs=('data',), attrs=[('act_type', choice(*_ACTIVATIONS))], same_shape=True)
def activation(data, act_type):
    """Element-wise ``relu``, ``sigmoid``, ``tanh``, ``softrelu`` (log(1 + e^x)) or ``softsign``
    (x / (1 + |x|)); output has the input's shape and dtype."""
    _check_float('Activation', data)
    return _ACTIVATIONS[act_type](data)


# ----------------------------------------------------------------- LeakyReLU
def _prelu(data, gamma):
    """``x`` where positive, else ``gamma x`` with gamma per channel (axis 1; axis 0 for 1-D),
    or, for a gamma of 2 or more dimensions, gamma matching data's leading dimensions and
    broadcast over the others (MXNet's per-(sample, channel) gamma)."""
    if gamma.dim() > 1:
        check(tuple(gamma.shape) == tuple(data.shape[:gamma.dim()]), 'LeakyReLU',
              'cannot broadcast gamma of shape %s to data of shape %s', gamma.shape,
              data.shape)
        gamma = gamma.reshape(tuple(gamma.shape) + (1,) * (data.dim() - gamma.dim()))
    elif gamma.numel() != 1:
        axis = 1 if data.dim() > 1 else 0
        check(gamma.dim() == 1 and gamma.shape[0] == data.shape[axis], 'LeakyReLU',
              'cannot broadcast gamma of shape %s to data of shape %s', gamma.shape,
              data.shape)
        gamma = gamma.reshape((-1,) + (1,) * (data.dim() - axis - 1))
    return torch.where(data > 0, data, gamma * data)


def _rrelu(data, lower_bound, upper_bound):
    """Random slopes in [lower, upper] when training, their mean otherwise; returns (out, slopes).

    Outside training the mask output is zeros, as in MXNet.
    """
    if autograd.is_training():
        slopes = torch.empty_like(data).uniform_(lower_bound, upper_bound)
        return torch.where(data > 0, data, slopes * data), slopes
    out = F.leaky_relu(data, (lower_bound + upper_bound) / 2)
    return out, torch.zeros_like(data)


_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


class _Selu(torch.autograd.Function):
    """SELU with MXNet 1.9.1's gradient: ``scale (y + alpha)`` where ``y <= 0``.

    The exact derivative there is ``y + scale alpha``; neomx follows MXNet so that training
    gives the same parameters.
    """

    @staticmethod
    def forward(ctx, data):  # pylint: disable=arguments-differ
        out = F.selu(data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):  # pylint: disable=arguments-differ
        out, = ctx.saved_tensors
        return grad * torch.where(out > 0, _SELU_SCALE, _SELU_SCALE * (out + _SELU_ALPHA))


def _leaky_outputs(attrs):
    return 2 if attrs['act_type'] == 'rrelu' else 1


def _leaky_output_names(attrs):
    return ('output', 'mask') if attrs['act_type'] == 'rrelu' else ('output',)


def _leaky_args(shapes, attrs):
    """``prelu``'s gamma: one slope per channel of the data."""
    data = shapes.get('data')
    if attrs['act_type'] != 'prelu' or data is None:
        return {}
    return {'gamma': (data[1] if len(data) > 1 else data[0],)}


@register('LeakyReLU', inputs=('data', 'gamma'),
          attrs=[('act_type', choice('elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu')('leaky')),
                 ('slope', FLOAT, 0.25), ('lower_bound', FLOAT, 0.125), ('upper_bound', FLOAT, 0.334)],
          optional_inputs=lambda attrs: () if attrs['act_type'] == 'prelu' else ('gamma',),
          num_outputs=_leaky_outputs, output_names=_leaky_output_names, infer_args=_leaky_args)
def leaky_relu(data, gamma, act_type, slope, lower_bound, upper_bound):
    """Leaky rectifiers: ``leaky`` (slope x below 0), ``prelu`` (learned gamma per channel),
    ``rrelu`` (random slope), ``elu`` (slope (e^x - 1) below 0), ``selu`` and ``gelu`` (erf form).

    Returns the activation, shaped like ``data``; ``rrelu`` also returns its slopes.
    """
    _check_float('LeakyReLU', data)
    if act_type == 'leaky':
        return F.leaky_relu(data, slope)
    if act_type == 'prelu':
        return _prelu(data, gamma)
    if act_type == 'rrelu':
        return _rrelu(data, lower_bound, upper_bound)
    if act_type == 'elu':
        return F.elu(data, slope)
    if act_type == 'selu':
        return _Selu.apply(data)
    return F.gelu(data)


# -------------------------------------------------------------------- softmax
def _length_mask(op, data, length, axis):
    """True for the first ``length`` positions along ``axis``; length has data's shape minus axis."""
    check(length is not None, op, 'use_length needs a length input')
    # as MXNet, the length's dtype is checked when the operator runs, not when a graph is
    # bound (shape inference runs on meta tensors)
    check(length.is_meta or not (length.is_floating_point() or length.is_complex()), op,
          'use_length needs an integer length input, got %s', length.dtype)
    axis = axis % data.dim()
    expected = data.shape[:axis] + data.shape[axis + 1:]
    check(length.shape == expected, op, 'length shape %s, expected %s for data %s along axis %d',
          length.shape, tuple(expected), data.shape, axis)
    positions = torch.arange(data.shape[axis], device=data.device).reshape(
        (-1,) + (1,) * (data.dim() - axis - 1))
    return positions < length.unsqueeze(axis)


def _normalised(op, fn, data, length, axis, temperature, dtype, use_length):
    """``fn(data / temperature, axis)`` in ``dtype``, restricted to ``length`` when ``use_length``."""
    _check_float(op, data)
    x = data if dtype is None else data.to(dtype)
    if temperature is not None and temperature != 1.0:
        x = x / temperature
    if not use_length:
        return fn(x, axis)
    mask = _length_mask(op, x, length, axis)
    out = fn(x.masked_fill(~mask, torch.finfo(x.dtype).min), axis)
    return out.masked_fill(~mask, 0)


def _softmin(x, axis):
    return torch.softmax(-x, axis)


_SOFTMAX_ATTRS = [('axis', INT, -1), ('temperature', OPT_FLOAT, None), ('dtype', OPT_DTYPE, None),
                  ('use_length', OPT_BOOL, False)]


@register('softmax', inputs=('data', 'length'), attrs=_SOFTMAX_ATTRS, dtypes=DTypeRule(free=('length',)),
          optional_inputs=lambda attrs: () if attrs['use_length'] else ('length',))
def softmax(data, length, axis, temperature, dtype, use_length):
    """``exp(x / T) / sum(exp(x / T))`` along ``axis``; with ``use_length`` only the first
    ``length`` entries (an integer array shaped like data without ``axis``) take part."""
    return _normalised('softmax', torch.softmax, data, length, axis, temperature, dtype, use_length)


def _register_single_input(name, fn, doc):
    """log_softmax and softmin: softmax's attributes, but MXNet 1.9.1 gives them no length input."""
    def normalise(data, axis, temperature, dtype, use_length):
        check(not use_length, name, 'use_length needs a length input, which %s does not take', name)
        return _normalised(name, fn, data, None, axis, temperature, dtype, False)
    normalise.__doc__ = doc
    register(name, inputs=('data',), attrs=_SOFTMAX_ATTRS, same_shape=True)(normalise)


_register_single_input('log_softmax', torch.log_softmax,
                       '``log(softmax(x / T))`` along ``axis``, computed stably.')
_register_single_input('softmin', _softmin, '``softmax(-x / T)`` along ``axis``.')


@register('SoftmaxActivation', inputs=('data',), attrs=[('mode', choice('channel', 'instance')('instance'))],
          same_shape=True)
def softmax_activation(data, mode):
    """Softmax over the last axis (``instance``) or over axis 1 of data with >= 3 dims (``channel``)."""
    if mode == 'instance':
        return torch.softmax(data, -1)
    check(data.dim() >= 3, 'SoftmaxActivation', "mode='channel' needs data with at least 3 dims, got %s",
          data.shape)
    return torch.softmax(data, 1)


# -------------------------------------------------------------------- Dropout
@register('Dropout', inputs=('data',),
          attrs=[('p', FLOAT, 0.5), ('mode', choice('always', 'training')('training')), ('axes', SHAPE, ()),
                 ('cudnn_off', OPT_BOOL, False)],
          hidden_outputs=lambda attrs: 1)     # MXNet's graph also records the dropout mask
def dropout(data, p, mode, axes, cudnn_off):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Active only when training (``autograd.record()``'s train mode) or ``mode='always'``;
    otherwise a copy of the input. ``axes`` share one mask value along those axes. With
    ``p=1`` the output and its gradient are NaN (MXNet scales the all-zero mask by 1/0).
    """
    if p == 0 or (mode == 'training' and not autograd.is_training()):
        return data.clone()
    if p >= 1:
        return data * float('nan')
    if not axes:
        return F.dropout(data, p, training=True)
    mask_shape = [1 if i in axes or i - data.dim() in axes else n for i, n in enumerate(data.shape)]
    keep = torch.empty(mask_shape, dtype=data.dtype, device=data.device).bernoulli_(1 - p)
    return data * keep / (1 - p)
