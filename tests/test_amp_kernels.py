"""bfloat16 mixed precision's faster paths give the values and gradients of the plain ones:
few-pixel bfloat16 convolutions as matrix products, and the training pass that lets a
Convolution cast its own filters (1-pixel inputs: only the kernel position that meets them),
and Flatten between casts to float32 and back run in the 16-bit type."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import neomx as mx
from neomx import autograd, gluon
from neomx.contrib import amp
from neomx.contrib.amp import amp as amp_module
from neomx.operator.elemwise import amp_cast
from neomx.operator.nn_conv import convolution, convolution_casting_filters
from neomx.symbol.plan import plan_of
from neomx.symbol.training_passes import (ReshapeInNarrowType, cast_filters_in_convolution,
                                          reshape_without_cast_round_trip)


@pytest.fixture
def amp_bf16():
    """amp.init patches mx.nd and mx.sym for the whole process: undone after the test."""
    amp.init('bfloat16')
    yield
    amp_module._deinit()


def _attrs(kernel, stride, dilate, pad, num_filter, no_bias):
    return dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=num_filter, num_group=1,
                workspace=1024, no_bias=no_bias, cudnn_tune=None, cudnn_off=False, layout=None)


def _grads(fn, *tensors):
    tensors = [t.detach().clone().requires_grad_() for t in tensors]
    out = fn(*tensors)
    head = torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(out.dtype)
    out.backward(head)
    return out, [t.grad for t in tensors]


@pytest.mark.parametrize('shape,kernel,stride,dilate,pad', [((2, 2), (3, 3), (1, 1), (1, 1), (1, 1)),
                                                            ((2, 2), (3, 3), (2, 2), (1, 1), (1, 1)),
                                                            ((2, 2), (3, 3), (1, 1), (2, 2), (2, 2)),
                                                            ((1, 4), (1, 3), (1, 1), (1, 1), (0, 1)),
                                                            ((2, 2), (1, 1), (1, 1), (1, 1), (0, 0)),
                                                            ((4, 4), (3, 3), (2, 2), (1, 1), (1, 1)),
                                                            ((4, 4), (1, 1), (2, 2), (1, 1), (0, 0))])
@pytest.mark.parametrize('bias', [True, False])
def test_few_output_pixel_bfloat16_convolution_is_a_matrix_product_with_convolutions_values(shape, kernel, stride,
                                                                                     dilate, pad, bias):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((4, 6) + shape, generator=gen).bfloat16()
    w = torch.randn((5, 6) + kernel, generator=gen).bfloat16()
    b = torch.randn(5, generator=gen).bfloat16()
    args = (x, w, b) if bias else (x, w)

    def ours(*t):
        return convolution(t[0], t[1], t[2] if bias else None, **_attrs(kernel, stride, dilate, pad, 5, not bias))

    with torch.profiler.profile() as prof:
        out, grads = _grads(ours, *args)
    assert any(e.name == 'aten::im2col' for e in prof.events())        # the matrix-product path ran
    # float64 convolution of the same bfloat16 values: the exact sums
    want, want_grads = _grads(lambda *t: F.conv2d(t[0], t[1], t[2] if bias else None, stride, pad, dilate),
                              *[a.double() for a in args])
    assert out.dtype == torch.bfloat16 and out.shape == want.shape
    torch.testing.assert_close(out.double(), want, rtol=1e-2, atol=5e-2)
    for got, exp in zip(grads, want_grads):
        assert got.dtype == torch.bfloat16 and got.shape == exp.shape
        torch.testing.assert_close(got.double(), exp, rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize('shape,kernel,stride,pad', [((1, 1), (3, 3), (1, 1), (1, 1)),     # one tap: (1, 1)
                                                     ((1, 1), (3, 3), (2, 2), (1, 1)),
                                                     ((2, 2), (3, 3), (1, 1), (1, 1)),     # matrix product
                                                     ((6, 6), (3, 3), (1, 1), (0, 0))])    # oneDNN
def test_convolution_casting_filters_equals_cast_then_convolution(shape, kernel, stride, pad):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((3, 4) + shape, generator=gen).bfloat16()
    w = torch.randn((5, 4) + kernel, generator=gen)              # float32 master filters
    b = torch.randn(5, generator=gen).bfloat16()
    attrs = _attrs(kernel, stride, (1, 1), pad, 5, False)

    def cast(t):
        return amp_cast(t, torch.bfloat16)

    out, grads = _grads(lambda *t: convolution_casting_filters(cast, *t, **attrs), x, w, b)
    want, want_grads = _grads(lambda xx, ww, bb: convolution(xx, cast(ww), bb, **attrs), x, w, b)
    assert torch.equal(out, want)
    assert grads[1].dtype == torch.float32
    for got, exp in zip(grads, want_grads):
        assert torch.equal(got, exp)
    if shape == (1, 1):         # only the centre position meets the pixel: the others' gradients are 0
        assert not grads[1][:, :, 0].any() and grads[1][:, :, 1, 1].abs().sum() > 0


def _conv_symbol(with_other_reader=False):
    data, weight = mx.sym.var('data'), mx.sym.var('weight')
    filters = mx.sym.amp_cast(weight, dtype='bfloat16')
    conv = mx.sym.Convolution(data, filters, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name='conv')
    return mx.sym.Group([conv, filters * 2]) if with_other_reader else conv


def test_pass_moves_the_filter_cast_into_the_convolution():
    sym = _conv_symbol()
    plan = cast_filters_in_convolution(plan_of(sym, mx.cpu(), sym.list_inputs()))
    assert [c.node.op for c in plan.calls] == ['Convolution']
    assert plan.calls[0].args == [('x0', None), ('x1', None), None]    # data, float32 weight, no bias
    shared = _conv_symbol(with_other_reader=True)
    original = plan_of(shared, mx.cpu(), shared.list_inputs())
    assert cast_filters_in_convolution(original) is original            # the cast is read elsewhere too


def _one_pixel_net():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=6), gluon.nn.Activation('relu'),
                gluon.nn.Conv2D(4, 3, padding=1, in_channels=8), gluon.nn.Flatten(), gluon.nn.Dense(3, in_units=4))
    net.initialize(mx.init.Xavier())
    return net


def test_hybridized_amp_training_of_one_pixel_convolutions_matches_eager(amp_bf16):
    x = mx.nd.random.normal(shape=(5, 6, 1, 1))
    results = []
    for hybridize in (False, True):
        mx.random.seed(3)
        net = _one_pixel_net()
        if hybridize:
            net.hybridize(static_alloc=True, static_shape=True)
        with autograd.record():
            loss = (net(x).astype('float32') ** 2).sum()
        loss.backward()
        results.append([loss.asnumpy()] + [p.grad().asnumpy() for p in net.collect_params().values()])
        if hybridize:       # the traced graph (what export writes) keeps MXNet's casts
            ops = [n.op for n in net._cached_graph.symbol._nodes() if not n.is_variable]
            assert ops.count('amp_cast') == 10     # data, filters, bias of each layer; Flatten's
    for eager, hybrid in zip(*results):
        assert hybrid.dtype == np.float32
        np.testing.assert_array_equal(hybrid, eager)


def _flatten_symbol(head=False):
    x = mx.sym.var('x')
    narrow = mx.sym.amp_cast(mx.sym.Flatten(mx.sym.amp_cast(x, dtype='float32')), dtype='bfloat16')
    return narrow if head else mx.sym.relu(narrow)


def test_pass_runs_flatten_between_round_trip_casts_in_the_narrow_type():
    sym = _flatten_symbol()
    plan = reshape_without_cast_round_trip(plan_of(sym, mx.cpu(), ['x']))
    assert [c.node.op for c in plan.calls] == ['amp_cast', 'relu']
    assert isinstance(plan.calls[0].fn, ReshapeInNarrowType) and plan.calls[0].args == [('x0', None)]
    head = _flatten_symbol(head=True)                   # an output may not be a view of an argument
    original = plan_of(head, mx.cpu(), ['x'])
    assert reshape_without_cast_round_trip(original) is original


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float32])
def test_reshape_in_narrow_type_gives_the_casts_values_gradients_and_layouts(dtype):
    call = reshape_without_cast_round_trip(plan_of(_flatten_symbol(), mx.cpu(), ['x'])).calls[0].fn
    x = torch.randn((3, 4, 2, 5), generator=torch.Generator().manual_seed(0)).to(dtype)
    x = x.contiguous(memory_format=torch.channels_last)
    out, (grad,) = _grads(call, x)
    want, (want_grad,) = _grads(lambda t: call.narrow(call.reshape(call.widen(t))), x)
    assert out.dtype == want.dtype == torch.bfloat16 and torch.equal(out, want) and out.is_contiguous()
    assert grad.dtype == dtype and torch.equal(grad, want_grad)
    assert grad.is_contiguous(memory_format=torch.channels_last)       # the data's own layout
