"""Shape inference with partly known shapes: MXNet's 0 (legacy) or -1 (NumPy shapes) for an
unknown dimension, carried forwards through operators and solved backwards from known
outputs. Every expected value was recorded with MXNet 1.9.1."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

S = mx.sym


def _x():
    return S.var('x', shape=(0, 3))


def _concat_with_itself(dim):
    x = _x()
    return S.Concat(x, x, dim=dim)


# (label, symbol, infer_shape_partial's result)
PARTIAL = [
    ('full sum', lambda: S.sum(_x()), ([(0, 3)], [(1,)], [])),
    ('sum over the known axis', lambda: S.sum(_x(), axis=1), ([(0, 3)], [(0,)], [])),
    ('slice_axis of the unknown axis', lambda: S.slice_axis(_x(), axis=0, begin=0, end=2), ([(0, 3)], [(0, 3)], [])),
    ('FullyConnected', lambda: S.FullyConnected(_x(), num_hidden=5), ([(0, 3), (5, 3), (5,)], [(0, 5)], [])),
    ('transpose', lambda: S.transpose(_x()), ([(0, 3)], [(3, 0)], [])),
    ('reshape to -1', lambda: S.reshape(_x(), shape=(-1,)), ([(0, 3)], [(0,)], [])),
    ('concat on the known axis', lambda: _concat_with_itself(1), ([(0, 3)], [(0, 6)], [])),
    ('concat on the unknown axis', lambda: _concat_with_itself(0), ([(0, 3)], [(0, 3)], [])),
    ('two partial shapes meet', lambda: _x() + S.var('y', shape=(2, 0)), ([(2, 3), (2, 3)], [(2, 3)], [])),
    ('convolution weight through a cast',
     lambda: S.Convolution(S.cast(S.var('data', shape=(1, 0, 0, 0)), dtype='float16'),
                           S.cast(S.var('w'), dtype='float16'), pad=(3, 3), num_filter=64, stride=(2, 2),
                           no_bias=True, kernel=(7, 7)),
     ([(1, 0, 0, 0), (64, 0, 7, 7)], [(1, 64, 0, 0)], [])),
    ('slice with steps', lambda: S.slice(S.var('d', shape=(0, 20)), begin=(2, 3), end=(None, 10), step=(3, 3)),
     ([(0, 20)], [(0, 3)], [])),
    ('reshape input from its output',
     lambda: S.elemwise_add(S.reshape(S.var('d', shape=(2, 0, 5, 5)), shape=(0, -1)), S.ones((2, 75))),
     ([(2, 3, 5, 5)], [(2, 75)], [])),
    ('transpose input from its output', lambda: S.ones((2, 3)) + S.transpose(S.var('t', shape=(0, 0))),
     ([(3, 2)], [(2, 3)], [])),
    ('relu between two partial shapes', lambda: S.relu(S.var('r', shape=(0, 4))) + S.var('q', shape=(5, 0)),
     ([(5, 4), (5, 4)], [(5, 4)], [])),
]


@pytest.mark.parametrize('label,make,expected', PARTIAL, ids=[c[0] for c in PARTIAL])
def test_partial_shapes_are_mxnets(label, make, expected):
    sym = make()
    assert sym.infer_shape_partial() == expected
    complete = all(0 not in s for group in expected for s in group)
    assert sym.infer_shape() == (expected if complete else (None, None, None))


def test_unknown_shapes_under_numpy_semantics():
    with mx.util.np_shape(True):
        x = S.var('x', shape=(-1, 20))
        assert S.slice(x, begin=(None, 3), end=(None, 10)).infer_shape_partial()[1] == [(-1, 7)]
        assert S.slice_axis(S.var('x', shape=(10, -1)), axis=1, begin=0, end=5).infer_shape_partial()[1] == \
            [(10, -1)]
        # a shape not known at all is None; 0 is a real size
        fc = S.FullyConnected(S.var('d'), S.var('w'), num_hidden=4, no_bias=True)
        assert fc.infer_shape_partial() == ([None, None], [None], [])
        assert S.relu(S.var('z', shape=(0, 3))).infer_shape() == ([(0, 3)], [(0, 3)], [])


def test_arrays_created_with_unknown_dims_take_them_from_readers():
    # (2, -1) + transpose((3, -1)): each knows the dimension the other lacks
    out = S.ones(shape=[2, -1]) + S.transpose(S.ones(shape=[3, -1]))
    assert out.bind(mx.cpu(), args={}).forward()[0].shape == (2, 3)
    out = S.ones(shape=[2, 3]) + S.transpose(S.ones(shape=[-1, -1]))
    assert out.bind(mx.cpu(), args={}).forward()[0].shape == (2, 3)


def test_partial_shapes_that_contradict_raise():
    with pytest.raises(mx.base.MXNetError, match='elemwise_add|_plus'):
        (S.var('a', shape=(2, 0)) + S.var('b', shape=(3, 0))).infer_shape_partial()


def test_reshape_reverse_splits_in_reversed_order():
    # recorded from MXNet 1.9.1
    assert S.reshape(S.var('x'), shape=(16, 4, -4), reverse=True).infer_shape(x=(64,))[1] == [(16, 4)]
    assert S.reshape(S.var('x'), shape=(-2, -1, 16, -4), reverse=True).infer_shape(x=(1, 2, 3, 64))[1] == \
        [(1, 2, 3, 4, 16)]
    assert mx.nd.zeros((64, 2)).reshape((16, -1, -4, 0), reverse=True).shape == (16, 4, 2)


def test_arange_with_infer_range_takes_its_length_from_readers():
    # MXNet 1.9.1's test_operator.py::test_arange_inferstop, and a step, a repeat and a variable
    s = mx.sym.elemwise_add(mx.sym.arange(start=0, stop=None, infer_range=True), mx.sym.zeros(shape=[5]))
    exe = s.bind(ctx=mx.current_context(), args={})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [0, 1, 2, 3, 4])
    s = mx.sym.elemwise_add(mx.sym.arange(start=2, step=0.5, repeat=2, infer_range=True), mx.sym.zeros(shape=[6]))
    assert s.infer_shape() == ([], [(6,)], [])
    exe = s.bind(ctx=mx.current_context(), args={})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [2, 2, 2.5, 2.5, 3, 3])     # as MXNet
    x = mx.sym.var('x')
    exe = (x + mx.sym.arange(start=1, step=0.1, infer_range=True)).bind(mx.current_context(), {'x': mx.nd.zeros((30,))})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), 1 + 0.1 * np.arange(30), rtol=1e-6)
    with pytest.raises(MXNetError, match='cannot infer the shapes'):
        mx.sym.arange(start=0, infer_range=True).bind(mx.current_context(), args={}).forward()
    with pytest.raises(MXNetError, match='not a multiple of repeat=2'):
        mx.sym.elemwise_add(mx.sym.arange(start=0, repeat=2, infer_range=True),
                            mx.sym.zeros(shape=[5])).bind(mx.current_context(), args={}).forward()


@pytest.mark.parametrize('product', [lambda a, b: a.dot(b), lambda a, b: mx.sym.np.dot(a, b),
                                     lambda a, b: mx.sym.np.matmul(a, b)])
def test_np_product_fills_the_contracted_axis_of_a_partial_weight(product):
    # MXNet's shape rule gives a (-1, 100) weight the data's last size; probing alone, whose
    # sizes never equal 1000, could not (Gluon's deferred init of np-mode weights relies on it)
    mx.npx.set_np()
    try:
        a = mx.sym.var('a').as_np_ndarray()
        b = mx.sym.var('b', shape=(-1, 100)).as_np_ndarray()
        args, outs, _ = product(a, b).infer_shape_partial(a=(64, 1000))
    finally:
        mx.npx.reset_np()
    assert args == [(64, 1000), (1000, 100)] and outs == [(64, 100)]


def test_np_mode_hybridized_block_completes_a_deferred_dot_weight():
    class Regression(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get('w', shape=(0, 3), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return x.dot(w)

    mx.npx.set_np()
    try:
        net = Regression()
        net.initialize(mx.init.One())
        net.hybridize()
        out = net(mx.np.ones((2, 5)))
        assert net.w.shape == (5, 3) and out.shape == (2, 3)
        assert out.asnumpy().tolist() == [[5.0] * 3] * 2
    finally:
        mx.npx.reset_np()
