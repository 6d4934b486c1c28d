"""mx.test_utils: MXNet's helpers for testing, checked against values worked out by hand."""
import numpy as np
import pytest

import neomx as mx
from neomx import test_utils as tu


def test_tolerances_follow_the_looser_dtype():
    assert tu.get_tols(np.ones(2, np.float16), np.ones(2), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(mx.nd.ones(2), 1.0, None, None) == (1e-4, 1e-3)
    assert tu.get_tols(np.ones(2, np.int32), np.ones(2, np.int32), None, None) == (0, 0)
    assert tu.default_numeric_eps()[np.dtype(np.float32)] == 1.0 / 2 ** 9


def test_assert_almost_equal_reports_the_worst_element():
    a, b = np.ones((2, 3)), np.ones((2, 3))
    b[1, 2] = 2
    with pytest.raises(AssertionError, match=r'Location of maximum error: \(.*1.*2.*\)'):
        tu.assert_almost_equal(a, b)
    tu.assert_almost_equal(mx.nd.ones((2, 3)), np.ones((2, 3)) + 1e-6)
    assert tu.almost_equal(np.ones((2, 3)), np.ones(3))                  # broadcasts, as MXNet
    with pytest.raises(AssertionError, match='shape'):
        tu.assert_almost_equal(np.ones((2, 3)), np.ones(3), use_broadcast=False)
    tu.assert_almost_equal(np.zeros((0, 0, 2)), np.zeros((0, 0, 0, 0, 2)))  # empty ones too, as MXNet
    with pytest.raises(ValueError):
        tu.assert_almost_equal(np.zeros(0), np.zeros(3))


def test_np_reduce_and_random_helpers():
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(tu.np_reduce(x, (0,), True, np.sum), [[3, 5, 7]])
    np.testing.assert_array_equal(tu.np_reduce(x, 1, False, np.sum), [3, 12])
    shape = tu.rand_shape_nd(3, dim=4)
    assert len(shape) == 3 and all(1 <= d <= 4 for d in shape)
    arr = tu.random_arrays((2, 3))
    assert arr.shape == (2, 3) and arr.dtype == np.float32
    assert len(tu.random_arrays((1,), (2,))) == 2
    # random_uniform_arrays returns a list even for one shape (MXNet's tests index it: [0])
    one = tu.random_uniform_arrays((2, 3), low=-0.5, high=0.5)
    assert isinstance(one, list) and len(one) == 1 and one[0].shape == (2, 3)
    assert np.all(np.abs(one[0]) <= 0.5)


def test_symbolic_forward_backward_and_numeric_gradient():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    s = x * y
    xv, yv = np.random.rand(2, 3), np.random.rand(2, 3)
    out = tu.check_symbolic_forward(s, [xv, yv], [xv * yv])
    assert isinstance(out[0], mx.nd.NDArray)
    grads = tu.check_symbolic_backward(s, [xv, yv], [np.ones((2, 3))], {'x': yv, 'y': xv})
    assert isinstance(grads['x'], mx.nd.NDArray)      # the gradient buffers, as MXNet returns them
    np.testing.assert_allclose(grads['x'].asnumpy(), yv, rtol=1e-5)
    tu.check_numeric_gradient(s, {'x': xv, 'y': yv})
    with pytest.raises(AssertionError, match='EXPECTED'):
        tu.check_symbolic_forward(s, [xv, yv], [xv + yv])
    with pytest.raises(AssertionError, match='NUMERICAL_x'):
        tu.check_numeric_gradient(mx.sym.BlockGrad(x) * y, [xv, yv])


def test_check_consistency_across_dtypes():
    data = mx.sym.var('data')
    sym = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    ctx_list = [{'ctx': mx.cpu(), 'data': (2, 4), 'type_dict': {'data': np.float64}},
                {'ctx': mx.cpu(), 'data': (2, 4), 'type_dict': {'data': np.float32}}]
    gt = tu.check_consistency(sym, ctx_list)
    assert gt['fc_output'].dtype == np.float64 and 'fc_weight' in gt


def test_compare_optimizer_and_generator_checks():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.1),
                         (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2),
                             (3, 4), np.float32)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 5)
    tu.verify_generator(lambda n: np.random.uniform(size=n), buckets, probs, nsamples=20000)
    with pytest.raises(AssertionError):
        tu.verify_generator(lambda n: np.random.uniform(size=n) ** 2, buckets, probs, nsamples=20000)


def test_namespace_is_mxnets():
    names = {}
    exec('from neomx.test_utils import *', names)      # noqa: S102  (a fixed string)
    for name in ('mx', 'np', 'rnd', 'NDArray', 'assert_almost_equal', 'default_context',
                 'set_default_context', 'discard_stderr', 'effective_dtype', 'retry'):
        assert name in names, name
    assert mx.base.py_str(b'ab') == 'ab' and mx.base.mx_real_t is np.float32
    assert mx.base._as_list(1) == [1] and mx.base._as_list([1]) == [1]


def test_check_symbolic_backward_binds_gradients_of_grad_stypes_for_expected_args_only():
    # MXNet: gradient buffers only for the arguments of `expected`, of the storage types of
    # grad_stypes (empty sparse arrays), returned as the bound NDArrays
    x, y = mx.sym.var('x'), mx.sym.var('y')
    xv = mx.nd.array([[0, 1], [2, 0]]).tostype('row_sparse')
    grads = tu.check_symbolic_backward(mx.sym.elemwise_add(x, y), {'x': xv, 'y': np.ones((2, 2))},
                                       [np.ones((2, 2))], {'x': np.ones((2, 2))},
                                       grad_stypes={'x': 'row_sparse'})
    assert list(grads) == ['x'] and grads['x'].stype == 'row_sparse'
    np.testing.assert_allclose(grads['x'].asnumpy(), np.ones((2, 2)))
