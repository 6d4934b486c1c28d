"""SequenceMask, SequenceLast and SequenceReverse."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient


def _tnc():
    return np.arange(24, dtype='float32').reshape(4, 2, 3)    # (T, N, C)


def test_sequence_mask_time_major_and_value():
    x = _tnc()
    out = mx.nd.SequenceMask(mx.nd.array(x), mx.nd.array([2, 3]), use_sequence_length=True, value=-1)
    expect = x.copy()
    expect[2:, 0] = -1
    expect[3:, 1] = -1
    np.testing.assert_array_equal(out.asnumpy(), expect)
    np.testing.assert_array_equal(mx.nd.SequenceMask(mx.nd.array(x)).asnumpy(), x)


def test_sequence_mask_batch_major_and_int_value_cast():
    x = mx.nd.array(np.arange(6).reshape(2, 3), dtype='int32')
    out = mx.nd.SequenceMask(x, mx.nd.array([1, 2], dtype='int32'), use_sequence_length=True,
                             axis=1, value=-1.5)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), [[0, -1, -1], [3, 4, -1]])


def test_sequence_last_lengths_truncate_and_axis():
    x = _tnc()
    np.testing.assert_array_equal(mx.nd.SequenceLast(mx.nd.array(x)).asnumpy(), x[-1])
    out = mx.nd.SequenceLast(mx.nd.array(x), mx.nd.array([1.7, 3]), use_sequence_length=True)
    np.testing.assert_array_equal(out.asnumpy(), np.stack([x[0, 0], x[2, 1]]))
    batch_major = x.transpose(1, 0, 2)
    out = mx.nd.SequenceLast(mx.nd.array(batch_major), mx.nd.array([4, 2]), use_sequence_length=True, axis=1)
    np.testing.assert_array_equal(out.asnumpy(), np.stack([x[3, 0], x[1, 1]]))


def test_sequence_reverse_keeps_padding_in_place():
    x = _tnc()
    out = mx.nd.SequenceReverse(mx.nd.array(x), mx.nd.array([2, 4]), use_sequence_length=True)
    expect = x.copy()
    expect[:2, 0] = x[1::-1, 0]
    expect[:, 1] = x[::-1, 1]
    np.testing.assert_array_equal(out.asnumpy(), expect)
    np.testing.assert_array_equal(mx.nd.SequenceReverse(mx.nd.array(x)).asnumpy(), x[::-1])


@pytest.mark.parametrize('op, kwargs', [
    ('SequenceMask', {'value': 2.5}), ('SequenceLast', {}), ('SequenceReverse', {}),
    ('SequenceMask', {'axis': 1}), ('SequenceLast', {'axis': 1}),
])
def test_sequence_numeric_gradients(op, kwargs):
    lengths = mx.nd.array([3, 1, 4] if kwargs.get('axis') == 1 else [3, 1])

    def fn(x):
        return getattr(mx.nd, op)(x, lengths, use_sequence_length=True, **kwargs)
    x = np.random.RandomState(0).uniform(-1, 1, (3, 4, 2) if kwargs.get('axis') == 1 else (4, 2, 3))
    check_numeric_gradient(fn, [x])


def test_sequence_errors():
    x = mx.nd.array(_tnc())
    with pytest.raises(mx.base.MXNetError, match='sequence_length must have shape'):
        mx.nd.SequenceMask(x, mx.nd.array([1, 2, 3]), use_sequence_length=True)
    with pytest.raises(mx.base.MXNetError, match='only axis=0'):
        mx.nd.SequenceReverse(x, mx.nd.array([1, 2, 3, 4]), use_sequence_length=True, axis=1)
    with pytest.raises(mx.base.MXNetError, match='at least 2-D'):
        mx.nd.SequenceLast(mx.nd.arange(4))
    with pytest.raises(mx.base.MXNetError, match='axis must be 0 or 1'):
        mx.nd.SequenceMask(x, axis=2)
