"""Finite-difference gradient checks for operators whose family tests leave them out: the
same-shape binary forms, modulo, copies and casts, and the differentiable image operators."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils import check_numeric_gradient

RNG = np.random.RandomState(7)
A = RNG.uniform(0.5, 2.0, (2, 3))
B = RNG.uniform(0.5, 2.0, (2, 3))


@pytest.mark.parametrize('name', ['elemwise_add', 'elemwise_sub', 'elemwise_mul', 'elemwise_div',
                                  '_power', '_maximum', '_minimum', '_hypot'])
def test_same_shape_binary(name):
    check_numeric_gradient(getattr(mx.nd, name), [A, B + 0.05])   # +0.05: no ties at max/min


def test_modulo_gradients():
    # d/dx (x mod y) = 1 and d/dy = -floor(x / y), away from the jumps
    x, y = np.array([[2.3, 5.7, 7.1]]), np.array([[1.1, 2.0, 3.3]])
    check_numeric_gradient(mx.nd._mod, [x, y], numeric_eps=1e-5)
    check_numeric_gradient(lambda a: mx.nd._mod_scalar(a, scalar=1.5), [x], numeric_eps=1e-5)
    check_numeric_gradient(lambda a: mx.nd._rmod_scalar(a, scalar=7.3), [y], numeric_eps=1e-5)


@pytest.mark.parametrize('fn', [mx.nd.identity, mx.nd._copy,
                                lambda x: mx.nd.amp_cast(x, dtype='float64'),
                                lambda x: mx.nd.Cast(x, dtype='float64')])
def test_copies_and_casts(fn):
    check_numeric_gradient(fn, [A])


def test_block_grad_has_zero_gradient():
    x = mx.nd.array(A)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.BlockGrad(x) * 3 + x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones_like(A))


IMAGE = RNG.uniform(0, 1, (4, 5, 3))           # (H, W, C), float


@pytest.mark.parametrize('fn', [
    mx.nd.image.to_tensor,
    mx.nd.image.flip_left_right,
    mx.nd.image.flip_top_bottom,
    lambda x: mx.nd.image.crop(x, x=1, y=1, width=3, height=2),
    lambda x: mx.nd.image.resize(x, size=(3, 6)),
    lambda x: mx.nd.image.adjust_lighting(x, alpha=(0.1, -0.2, 0.3)),
])
def test_image_operators(fn):
    check_numeric_gradient(fn, [IMAGE])


def test_image_normalize():
    chw = RNG.uniform(0, 1, (3, 4, 5))
    check_numeric_gradient(lambda x: mx.nd.image.normalize(x, mean=(0.1, 0.2, 0.3), std=(0.5, 0.6, 0.7)),
                           [chw])
