"""The operators MXNet's Python frontend puts into graphs (mx.nd._internal / mx.sym._internal):
_CustomFunction, _NoGradient, _Native, _NDArray, and the legacy image decoder _imdecode."""
import json
import os
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

DATA = os.path.join(os.path.dirname(__file__), 'data')


def test_placeholders_make_symbols_and_refuse_to_run():
    sym = mx.sym._internal._NoGradient()
    assert json.loads(sym.tojson())['nodes'][0]['op'] == '_NoGradient'
    with pytest.raises(MXNetError, match='_NoGradient'):
        mx.nd._internal._NoGradient()
    node = mx.sym._internal._CustomFunction(mx.sym.var('x'), mx.sym.var('y'))
    assert node.list_arguments() == ['x', 'y']
    with pytest.raises(MXNetError, match='_CustomFunction.*Function'):
        mx.nd._internal._CustomFunction(mx.nd.ones(2))


class _Square(mx.operator.NumpyOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] ** 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]


class _Twice(mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] * 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] * 2


@pytest.mark.parametrize('op_class, internal, value, grad', [
    (_Square, '_Native', [1.0, 4.0, 9.0], [2.0, 4.0, 6.0]),
    (_Twice, '_NDArray', [2.0, 4.0, 6.0], [2.0, 2.0, 2.0])])
def test_native_and_ndarray_run_the_python_operator_info_names(op_class, internal, value, grad):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)        # NumpyOp/NDArrayOp are deprecated
        op = op_class()
        op.get_symbol(mx.sym.var('x'))      # registers it; info_ names it
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd._internal, internal)(x, info=op.info_)
    y.backward()
    assert y.asnumpy().tolist() == value and x.grad.asnumpy().tolist() == grad
    sym = getattr(mx.sym._internal, internal)(mx.sym.var('x'), info=op.info_)
    assert sym.list_arguments() == ['x'] and len(sym.list_outputs()) == 1
    assert sym.eval(x=x)[0].asnumpy().tolist() == value
    with pytest.raises(MXNetError):
        getattr(mx.nd._internal, internal)(x, info='no_such_operator')


def test_imdecode_decodes_clips_and_subtracts_the_mean():
    with open(os.path.join(DATA, 'image_rgb.png'), 'rb') as f:
        encoded = f.read()
    hwc = mx.image.imdecode(encoded).asnumpy().astype(np.float32)
    empty = mx.nd.array([])
    whole = mx.nd._internal._imdecode(empty, 0, 0, 0, 0, 0, 3, len(encoded), str_img=encoded)
    assert whole.dtype == np.float32
    np.testing.assert_array_equal(whole.asnumpy(), hwc.transpose(2, 0, 1))
    clipped = mx.nd._internal._imdecode(mx.nd.ones((3, 1, 1)), 0, 1, 2, 5, 6, 3, len(encoded), str_img=encoded)
    np.testing.assert_array_equal(clipped.asnumpy(), hwc[2:6, 1:5].transpose(2, 0, 1) - 1)
    grey = mx.nd._internal._imdecode(empty, 0, 0, 0, 0, 0, 1, len(encoded), str_img=encoded)
    assert grey.shape == (1,) + hwc.shape[:2]
    with pytest.raises(MXNetError, match='_imdecode'):
        mx.nd._internal._imdecode(empty, 0, 0, 0, 0, 0, 2, len(encoded), str_img=encoded)
    with pytest.raises(MXNetError, match='_imdecode'):
        mx.nd._internal._imdecode(empty, 0, 0, 0, 0, 0, 3, len(encoded) + 1, str_img=encoded)
    sym = mx.sym._internal._imdecode(mx.sym.var('mean'), index=0, x0=0, y0=0, x1=0, y1=0, c=3,
                                     size=len(encoded), str_img=encoded)
    assert sym.list_arguments() == ['mean'] and json.loads(sym.tojson())['nodes'][1]['op'] == '_imdecode'
