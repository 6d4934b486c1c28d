"""Sequence operators on padded batches: SequenceMask, SequenceLast, SequenceReverse.

Data is time-major ``(T, N, ...)`` (``axis=0``) or, where MXNet allows it, batch-major
``(N, T, ...)`` (``axis=1``). ``sequence_length`` holds one length per sample; MXNet reads it
as integers by truncation (a length of 2.7 is 2). Without ``use_sequence_length`` every
sequence spans all T steps.
"""
import torch

from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, INT, check, register


def _no_length_input(attrs):
    return () if attrs['use_sequence_length'] else ('sequence_length',)


def _sequence_op(name, attrs):
    """Register a sequence operator: inputs (data, sequence_length), the latter optional."""
    return register(name, inputs=('data', 'sequence_length'),
                    attrs=[('use_sequence_length', BOOL, False)] + attrs,
                    optional_inputs=_no_length_input, dtypes=DTypeRule(soft=('sequence_length',)))


def _lengths(op, data, sequence_length, use_sequence_length, axis):
    """Per-sample lengths as int64 (N,), or None when every sequence is full length."""
    check(data.dim() >= 2, op, 'data must be at least 2-D, got shape %s', data.shape)
    if not use_sequence_length:
        return None
    batch = data.shape[1 - axis]
    check(sequence_length is not None, op, 'use_sequence_length=True needs sequence_length')
    check(tuple(sequence_length.shape) == (batch,), op,
          'sequence_length must have shape (%d,) for data of shape %s with axis=%d, got %s',
          batch, data.shape, axis, sequence_length.shape)
    return sequence_length.to(torch.int64)


def _steps(data, axis):
    """The time steps of data along ``axis`` as a column (T, 1), to compare with (N,) lengths."""
    return torch.arange(data.shape[axis], device=data.device)[:, None]


def _per_position(mask, data):
    """Broadcast a (T, N) or (N, T) mask over data's trailing feature axes."""
    return mask.reshape(mask.shape + (1,) * (data.dim() - 2))


@_sequence_op('SequenceMask', [('value', FLOAT, 0.0), ('axis', INT, 0)])
def sequence_mask(data, sequence_length, use_sequence_length, value, axis):
    """Set the steps past each sequence's length to ``value`` (cast to data's dtype).

    Parameters
    ----------
    data : Tensor, shape (T, N, ...) for axis=0 or (N, T, ...) for axis=1
    sequence_length : Tensor, shape (N,), or None
    """
    check(axis in (0, 1), 'SequenceMask', 'axis must be 0 or 1, got %d', axis)
    lengths = _lengths('SequenceMask', data, sequence_length, use_sequence_length, axis)
    if lengths is None:
        return data.clone()
    keep = _steps(data, axis) < lengths.to(data.device)
    if axis == 1:
        keep = keep.T
    fill = torch.tensor(value, dtype=torch.float64).to(data.dtype)
    return torch.where(_per_position(keep, data), data, fill)


@_sequence_op('SequenceLast', [('axis', INT, 0)])
def sequence_last(data, sequence_length, use_sequence_length, axis):
    """The last valid step of each sequence.

    Parameters
    ----------
    data : Tensor, shape (T, N, ...) for axis=0 or (N, T, ...) for axis=1
    sequence_length : Tensor, shape (N,), or None
        Lengths outside [1, T] are clamped into it (MXNet reads out of bounds there).

    Returns
    -------
    Tensor, shape (N, ...)
    """
    check(axis in (0, 1), 'SequenceLast', 'axis must be 0 or 1, got %d', axis)
    lengths = _lengths('SequenceLast', data, sequence_length, use_sequence_length, axis)
    if lengths is None:
        return data.select(axis, -1).clone()
    last = (lengths.clamp(1, data.shape[axis]) - 1).to(data.device)
    batch_first = data.movedim(axis, 1)
    return batch_first[torch.arange(batch_first.shape[0], device=data.device), last]


@_sequence_op('SequenceReverse', [('axis', INT, 0)])
def sequence_reverse(data, sequence_length, use_sequence_length, axis):
    """Reverse the first ``length`` steps of each sequence; the padding stays in place.

    Parameters
    ----------
    data : Tensor, shape (T, N, ...); MXNet only supports axis=0
    sequence_length : Tensor, shape (N,), or None
    """
    check(axis == 0, 'SequenceReverse', 'only axis=0 is supported, got axis=%d', axis)
    lengths = _lengths('SequenceReverse', data, sequence_length, use_sequence_length, axis)
    if lengths is None:
        return data.flip(0)
    steps = _steps(data, 0)
    lengths = lengths.to(data.device)
    source = torch.where(steps < lengths, lengths - 1 - steps, steps)
    return data[source, torch.arange(data.shape[1], device=data.device)]
