"""contrib.quantize / dequantize: values recorded from MXNet 1.9.1 (its CPU build)."""
import numpy as np
import pytest

import neomx as mx

C = mx.nd.contrib
VALUES = [-2.5, -1, 0, 0.3, 0.6, 1, 2, 3]


@pytest.mark.parametrize('out_type,lo,hi,expect,range_out', [
    ('int8', -2, 1, [-128, -64, 0, 19, 38, 64, 127, 127], ([-2.0], [2.0])),
    ('int8', 0.5, 2, [-128, -64, 0, 19, 38, 64, 127, 127], ([-2.0], [2.0])),
    ('uint8', -2, 1, [0, 0, 0, 38, 76, 128, 255, 255], ([-2.0], [1.0])),
    ('uint8', 0.5, 2, [0, 0, 0, 38, 76, 128, 255, 255], ([0.5], [2.0])),
])
def test_quantize_values(out_type, lo, hi, expect, range_out):
    q, q_lo, q_hi = C.quantize(mx.nd.array(VALUES), mx.nd.array([lo]), mx.nd.array([hi]), out_type=out_type)
    assert q.dtype == np.dtype(out_type) and q.asnumpy().tolist() == expect
    assert (q_lo.asnumpy().tolist(), q_hi.asnumpy().tolist()) == range_out
    assert q_lo.dtype == q_hi.dtype == np.float32


def test_quantize_default_type_and_dequantize_values():
    a = mx.nd.array([[0.1392, 0.5928], [0.6027, 0.8579]])
    q, lo, hi = C.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]), out_type='int8')
    assert q.asnumpy().tolist() == [[18, 75], [77, 109]]
    np.testing.assert_allclose(C.dequantize(q, lo, hi).asnumpy(), np.array([[18, 75], [77, 109]]) / 127.5,
                               rtol=1e-6)
    assert C.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]))[0].dtype == np.uint8
    back = C.dequantize(mx.nd.array([0, 1, 128, 255], dtype='uint8'), mx.nd.array([0.5]), mx.nd.array([2.0]))
    np.testing.assert_allclose(back.asnumpy(), [0.0, 0.007827789, 1.001957, 1.996086], rtol=1e-6)
    back = C.dequantize(mx.nd.array([-128, -1, 1, 127], dtype='int8'), mx.nd.array([-2.0]), mx.nd.array([1.0]))
    np.testing.assert_allclose(back.asnumpy(), [-2.0078433, -0.015686275, 0.015686275, 1.992157], rtol=1e-6)


def test_quantize_symbols_and_errors():
    data, lo, hi = mx.sym.Variable('d'), mx.sym.Variable('lo'), mx.sym.Variable('hi')
    quant = mx.sym.contrib.quantize(data, lo, hi)
    assert len(quant.list_outputs()) == 3
    assert quant.infer_type(d='float32', lo='float32', hi='float32')[1] == [np.uint8, np.float32, np.float32]
    assert quant.infer_shape(d=(2, 3), lo=(1,), hi=(1,))[1] == [(2, 3), (1,), (1,)]
    dequant = mx.sym.contrib.dequantize(data, lo, hi)
    assert dequant.infer_type(d='int8', lo='float32', hi='float32')[1] == [np.float32]
    with pytest.raises(mx.base.MXNetError, match="out_type"):
        C.quantize(mx.nd.ones(2), mx.nd.array([0]), mx.nd.array([1]), out_type='int32')
    with pytest.raises(mx.base.MXNetError, match='_contrib_dequantize: data must be int8 or uint8'):
        C.dequantize(mx.nd.ones(2), mx.nd.array([0]), mx.nd.array([1]))
