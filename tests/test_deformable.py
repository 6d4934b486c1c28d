"""Deformable convolutions: the v1/v2 operators and gluon.contrib.cnn's layers.

Reference values in tests/data/deformable_* were recorded with MXNet 1.9.1 (CPU): operator
outputs and v1 gradients for random inputs drawn by ``np.random.RandomState(0)``, and two
hybridized layers (inputs from seed 1, parameters from seed 2) with their exported graphs.
"""
import inspect
import json
import os

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.contrib import cnn
from neomx.test_utils import check_numeric_gradient

DATA = os.path.join(os.path.dirname(__file__), 'data')
REF = np.load(os.path.join(DATA, 'deformable_mxnet.npz'))
GEOMETRY = dict(kernel=(3, 3), stride=(1, 2), dilate=(2, 1), pad=(1, 1), num_filter=6, num_group=2,
                num_deformable_group=2)


def _recorded_inputs():
    """The inputs MXNet's reference values were computed from (same draws, same order)."""
    rng = np.random.RandomState(0)
    x = rng.randn(2, 4, 5, 6).astype('f4')
    offset = (rng.randn(2, 36, 3, 3) * 2).astype('f4')
    mask = rng.rand(2, 18, 3, 3).astype('f4')
    weight = rng.randn(6, 2, 3, 3).astype('f4')
    bias = rng.randn(6).astype('f4')
    head = rng.randn(2, 6, 3, 3).astype('f4')
    return x, offset, mask, weight, bias, head


# ------------------------------------------------------------------ operators
def test_outputs_match_mxnet_with_groups_and_out_of_bounds_offsets():
    x, offset, mask, weight, bias, _ = _recorded_inputs()
    nd = mx.nd.array
    v1 = mx.nd.contrib.DeformableConvolution(nd(x), nd(offset), nd(weight), nd(bias), **GEOMETRY)
    v2 = mx.nd.contrib.ModulatedDeformableConvolution(nd(x), nd(offset), nd(mask), nd(weight), nd(bias),
                                                       **GEOMETRY)
    assert v1.shape == (2, 6, 3, 3) and v1.dtype == np.float32
    np.testing.assert_allclose(v1.asnumpy(), REF['op_v1'], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v2.asnumpy(), REF['op_v2'], rtol=1e-5, atol=1e-5)


def test_v1_gradients_match_mxnet():
    x, offset, _, weight, bias, head = _recorded_inputs()
    inputs = [mx.nd.array(a) for a in (x, offset, weight, bias)]
    for a in inputs:
        a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.DeformableConvolution(*inputs, **GEOMETRY)
    out.backward(mx.nd.array(head))
    for name, a in zip(('data', 'offset', 'weight', 'bias'), inputs):
        np.testing.assert_allclose(a.grad.asnumpy(), REF['op_v1_grad_' + name], rtol=1e-5, atol=1e-5,
                                   err_msg=name)


# A 1x4 image sampled by a 1x1 kernel moved along x by ``dx``: MXNet's results at the borders.
_ROW = np.array([1, 10, 100, 1000], dtype='f4').reshape(1, 1, 1, 4)
_BORDER_CASES = [  # dx, v1 output, v2 output
    (-1.5, [0, 0, 5.5, 55], [0, 0.5, 5.5, 55]),
    (-0.75, [0, 3.25, 32.5, 325], [0.25, 3.25, 32.5, 325]),
    (0.25, [3.25, 32.5, 325, 1000], [3.25, 32.5, 325, 750]),
    (2.5, [550, 1000, 0, 0], [550, 500, 0, 0]),
    (3.25, [1000, 0, 0, 0], [750, 0, 0, 0]),
    (4.0, [0, 0, 0, 0], [0, 0, 0, 0]),
]


@pytest.mark.parametrize('dx, v1_expected, v2_expected', _BORDER_CASES)
def test_border_sampling_rules(dx, v1_expected, v2_expected):
    offset = np.zeros((1, 2, 1, 4), 'f4')
    offset[0, 1] = dx
    args = dict(kernel=(1, 1), num_filter=1, no_bias=True)
    data, offset, weight = mx.nd.array(_ROW), mx.nd.array(offset), mx.nd.ones((1, 1, 1, 1))
    v1 = mx.nd.contrib.DeformableConvolution(data, offset, weight, **args)
    v2 = mx.nd.contrib.ModulatedDeformableConvolution(data, offset, mx.nd.ones((1, 1, 1, 4)), weight, **args)
    np.testing.assert_allclose(v1.asnumpy().ravel(), v1_expected, rtol=1e-6)
    np.testing.assert_allclose(v2.asnumpy().ravel(), v2_expected, rtol=1e-6)


def test_v1_gradient_is_clamped_at_the_last_column():
    """Past the last column v1 reads the border pixel whole: its offset gets no gradient (MXNet's)."""
    offset = np.zeros((1, 2, 1, 4), 'f4')
    offset[0, 1, 0, 0] = 3.25
    data, offset = mx.nd.array(_ROW), mx.nd.array(offset)
    data.attach_grad()
    offset.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.DeformableConvolution(data, offset, mx.nd.ones((1, 1, 1, 1)), kernel=(1, 1),
                                                  num_filter=1, no_bias=True)
        first = out[0, 0, 0, 0]
    first.backward()
    np.testing.assert_array_equal(data.grad.asnumpy().ravel(), [0, 0, 0, 1])
    np.testing.assert_array_equal(offset.grad.asnumpy()[0, :, 0, 0], [0, 0])


def test_zero_offsets_give_a_plain_convolution():
    rng = np.random.RandomState(3)
    x, weight, bias = rng.randn(2, 4, 6, 5), rng.randn(4, 2, 3, 3), rng.randn(4)
    geometry = dict(kernel=(3, 3), stride=(2, 1), pad=(1, 2), dilate=(1, 2), num_filter=4, num_group=2)
    expected = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(weight), mx.nd.array(bias), **geometry)
    offset = mx.nd.zeros((2, 18) + expected.shape[2:])
    v1 = mx.nd.contrib.DeformableConvolution(mx.nd.array(x), offset, mx.nd.array(weight), mx.nd.array(bias),
                                             **geometry)
    mask = mx.nd.ones((2, 9) + expected.shape[2:])
    v2 = mx.nd.contrib.ModulatedDeformableConvolution(mx.nd.array(x), offset, mask, mx.nd.array(weight),
                                                      mx.nd.array(bias), **geometry)
    np.testing.assert_allclose(v1.asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v2.asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-5)


def test_float64_and_no_bias():
    x = mx.nd.ones((1, 2, 4, 4), dtype='float64')
    out = mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 8, 3, 3), dtype='float64'),
                                              mx.nd.ones((3, 2, 2, 2), dtype='float64'), kernel=(2, 2),
                                              num_filter=3, no_bias=True)
    assert out.dtype == np.float64 and out.shape == (1, 3, 3, 3)
    np.testing.assert_array_equal(out.asnumpy(), 8.0)


def test_symbol_infers_weight_and_bias_shapes():
    sym = mx.sym.contrib.DeformableConvolution(mx.sym.var('data'), mx.sym.var('offset'), kernel=(3, 3),
                                               num_filter=6, num_group=2, name='dc')
    assert sym.list_arguments() == ['data', 'offset', 'dc_weight', 'dc_bias']
    args, outs, _ = sym.infer_shape(data=(2, 4, 5, 5), offset=(2, 18, 3, 3))
    assert args == [(2, 4, 5, 5), (2, 18, 3, 3), (6, 2, 3, 3), (6,)] and outs == [(2, 6, 3, 3)]
    sym = mx.sym.contrib.ModulatedDeformableConvolution(mx.sym.var('data'), mx.sym.var('offset'),
                                                        mx.sym.var('mask'), kernel=(3, 3), num_filter=6,
                                                        no_bias=True, name='dc')
    assert sym.list_arguments() == ['data', 'offset', 'mask', 'dc_weight']


@pytest.mark.parametrize('change, message', [
    (dict(offset=(2, 17, 3, 3)), 'offset shape'),
    (dict(offset=(2, 18, 4, 3)), 'offset shape'),
    (dict(weight=(6, 4, 3, 3)), 'weight shape'),
    (dict(attrs=dict(num_deformable_group=3), offset=(2, 54, 3, 3)), 'num_deformable_group'),
    (dict(attrs=dict(layout='NHWC')), 'layout'),
])
def test_shape_and_attribute_errors(change, message):
    shapes = dict(offset=(2, 18, 3, 3), weight=(6, 2, 3, 3))
    shapes.update((k, v) for k, v in change.items() if k != 'attrs')
    attrs = dict(kernel=(3, 3), num_filter=6, num_group=2, **change.get('attrs', {}))
    with pytest.raises(mx.base.MXNetError, match=message):
        mx.nd.contrib.DeformableConvolution(mx.nd.ones((2, 4, 5, 5)), mx.nd.zeros(shapes['offset']),
                                            mx.nd.ones(shapes['weight']), mx.nd.ones((6,)), **attrs)


def test_modulated_errors():
    x, offset, weight = mx.nd.ones((3, 4, 5, 5)), mx.nd.zeros((3, 18, 3, 3)), mx.nd.ones((6, 4, 3, 3))
    with pytest.raises(mx.base.MXNetError, match='mask shape'):
        mx.nd.contrib.ModulatedDeformableConvolution(x, offset, mx.nd.ones((3, 8, 3, 3)), weight, kernel=(3, 3),
                                                     num_filter=6, no_bias=True)
    with pytest.raises(mx.base.MXNetError, match='im2col_step'):
        mx.nd.contrib.ModulatedDeformableConvolution(x, offset, mx.nd.ones((3, 9, 3, 3)), weight, kernel=(3, 3),
                                                     num_filter=6, no_bias=True, im2col_step=2)
    with pytest.raises(mx.base.MXNetError, match='2-D kernels'):
        mx.nd.contrib.DeformableConvolution(mx.nd.ones((1, 2, 5)), mx.nd.zeros((1, 6, 3)), mx.nd.ones((1, 2, 3)),
                                            kernel=(3,), num_filter=1, no_bias=True)


def _tiny_inputs(with_mask):
    """Fractional random offsets (away from the kinks at integer coordinates) on a 4x4 image."""
    rng = np.random.RandomState(5)
    inputs = [rng.randn(1, 2, 4, 4), rng.uniform(-1.4, 1.4, (1, 16, 3, 3))]
    if with_mask:
        inputs.append(rng.uniform(0.2, 1.5, (1, 8, 3, 3)))
    return inputs + [rng.randn(2, 1, 2, 2), rng.randn(2)]


def test_v1_numeric_gradient():
    attrs = dict(kernel=(2, 2), pad=(1, 1), stride=(2, 2), num_filter=2, num_group=2, num_deformable_group=2)
    check_numeric_gradient(lambda *a: mx.nd.contrib.DeformableConvolution(*a, **attrs), _tiny_inputs(False))


def test_v2_numeric_gradient():
    attrs = dict(kernel=(2, 2), pad=(1, 1), stride=(2, 2), num_filter=2, num_group=2, num_deformable_group=2)
    check_numeric_gradient(lambda *a: mx.nd.contrib.ModulatedDeformableConvolution(*a, **attrs),
                           _tiny_inputs(True))


# ---------------------------------------------------------------------- Gluon
def test_layer_signatures_match_mxnet():
    common = ("(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, "
              "num_deformable_group=1, layout='NCHW', use_bias=True, in_channels=0, activation=None, "
              "weight_initializer=None, bias_initializer='zeros', offset_weight_initializer='zeros', "
              "offset_bias_initializer='zeros', offset_use_bias=True, op_name='%s', adj=None, prefix=None, "
              "params=None)")
    for cls in (cnn.DeformableConvolution, cnn.ModulatedDeformableConvolution):
        assert str(inspect.signature(cls.__init__)) == common % cls.__name__


def _param_table(block):
    return [(name, tuple(p.shape)) for name, p in block.collect_params().items()]


def test_parameters_names_order_and_repr():
    with mx.name.NameManager():
        v1 = cnn.DeformableConvolution(4, kernel_size=(3, 3), padding=(1, 1))
        v2 = cnn.ModulatedDeformableConvolution(4, kernel_size=3, in_channels=2, use_bias=False,
                                                offset_use_bias=False)
    assert _param_table(v1) == [('deformable_conv0_offset_weight', (18, 0, 3, 3)),
                                ('deformable_conv0_offset_bias', (18,)),
                                ('deformable_conv0_deformable_conv_weight', (4, 0, 3, 3)),
                                ('deformable_conv0_deformable_conv_bias', (4,))]
    assert repr(v1) == 'DeformableConvolution(None -> 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))'
    assert _param_table(v2) == [('modulated_deformable_conv0_deformable_conv_weight', (4, 0, 3, 3)),
                                ('modulated_deformable_conv0_offset_weight', (27, 2, 3, 3))]
    v2.initialize()
    assert v2(mx.nd.ones((1, 2, 5, 5))).shape == (1, 4, 3, 3)
    assert v2.deformable_conv_weight.shape == (4, 2, 3, 3)
    with pytest.raises(AssertionError):
        cnn.DeformableConvolution(4, layout='NCW')


@pytest.mark.parametrize('cls, name, channels, kwargs', [
    (cnn.DeformableConvolution, 'v1', 3, dict(activation='relu')),
    (cnn.ModulatedDeformableConvolution, 'v2', 4, dict(groups=2, num_deformable_group=2, offset_use_bias=False)),
])
def test_layers_match_mxnet_outputs_and_exported_graph(tmp_path, cls, name, channels, kwargs):
    with mx.name.NameManager():     # fresh layer counters: the graph names 'deformable_conv0_...'
        net = cls(channels, kernel_size=3, padding=1, **kwargs)
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(1).randn(2, 4, 5, 5).astype('f4'))
    net(x)
    rng = np.random.RandomState(2)
    for param in sorted(net.collect_params().values(), key=lambda p: p.name):
        param.set_data(mx.nd.array((rng.randn(*param.shape) * 0.3).astype('f4')))
    np.testing.assert_allclose(net(x).asnumpy(), REF['gluon_' + name], rtol=1e-5, atol=1e-5)
    net.export(str(tmp_path / name))
    with open(str(tmp_path / name) + '-symbol.json') as ours, \
            open(os.path.join(DATA, 'deformable_%s-symbol.json' % name)) as mxnet:
        assert json.load(ours) == json.load(mxnet)


def test_layer_trains_its_offsets():
    """With zero-initialised offsets the layer starts as a plain convolution, yet the offset
    convolution receives gradient and moves the samples after one step."""
    net = cnn.DeformableConvolution(2, kernel_size=3, padding=1, weight_initializer='ones')
    net.initialize()
    x = mx.nd.array(np.random.RandomState(4).randn(1, 1, 5, 5))
    before = net(x).asnumpy()
    np.testing.assert_allclose(before, mx.nd.Convolution(x, mx.nd.ones((2, 1, 3, 3)), mx.nd.zeros(2),
                                                         kernel=(3, 3), pad=(1, 1), num_filter=2).asnumpy(),
                               rtol=1e-5, atol=1e-5)
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with mx.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    trainer.step(1)
    assert np.abs(net.offset_weight.data().asnumpy()).sum() > 0
