"""mx.nd functions remember the attributes of calls with positional inputs (to skip argument
handling on repeated calls): every call must still give what a first call gives."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _arr(*shape, seed=0):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, size=shape))


def test_repeated_calls_alternating_keywords_match_first_calls():
    x = _arr(3, 4)
    expected = {axis: np.exp(x.asnumpy()) / np.exp(x.asnumpy()).sum(axis=axis, keepdims=True)
                for axis in (0, 1, -1)}
    for _ in range(3):
        np.testing.assert_allclose(mx.nd.softmax(x).asnumpy(), expected[-1], rtol=1e-6)
        np.testing.assert_allclose(mx.nd.softmax(x, axis=0).asnumpy(), expected[0], rtol=1e-6)
        np.testing.assert_allclose(mx.nd.softmax(x, axis=1).asnumpy(), expected[1], rtol=1e-6)
        assert mx.nd.expand_dims(x, 0).shape == (1, 3, 4)      # an attribute by position
        assert mx.nd.expand_dims(x, axis=1).shape == (3, 1, 4)


def test_optional_inputs_given_or_absent_in_turn():
    x, w, b = _arr(2, 3), _arr(4, 3, seed=1), _arr(4, seed=2)
    with_bias = x.asnumpy() @ w.asnumpy().T + b.asnumpy()
    without = x.asnumpy() @ w.asnumpy().T
    for _ in range(3):
        np.testing.assert_allclose(mx.nd.FullyConnected(x, w, b, num_hidden=4).asnumpy(), with_bias, rtol=1e-5)
        np.testing.assert_allclose(mx.nd.FullyConnected(x, w, num_hidden=4, no_bias=True).asnumpy(),
                                   without, rtol=1e-5)
        np.testing.assert_allclose(mx.nd.FullyConnected(x, w, None, num_hidden=4, no_bias=True).asnumpy(),
                                   without, rtol=1e-5)
        np.testing.assert_allclose(mx.nd.FullyConnected(data=x, weight=w, bias=b, num_hidden=4).asnumpy(),
                                   with_bias, rtol=1e-5)


def test_softmax_length_input_after_calls_without_it():
    x = _arr(2, 4)
    mx.nd.softmax(x)
    out = mx.nd.softmax(x, mx.nd.array([2, 4], dtype='int32'), use_length=True).asnumpy()
    assert np.all(out[0, 2:] == 0) and np.isclose(out[0, :2].sum(), 1) and np.isclose(out[1].sum(), 1)


def test_variadic_calls_with_changing_counts():
    a = mx.nd.ones((2, 2))
    for n in (2, 3, 2, 4, 3):
        assert mx.nd.add_n(*[a] * n).asnumpy()[0, 0] == n
        assert mx.nd.add_n([a] * n).asnumpy()[0, 0] == n
        assert mx.nd.concat(*[a] * n, dim=0).shape == (2 * n, 2)


def test_errors_after_remembered_calls():
    x = _arr(2, 3)
    mx.nd.relu(x)
    with pytest.raises(TypeError, match='relu: argument data must be an NDArray, got int'):
        mx.nd.relu(5)
    mx.nd.expand_dims(x, axis=1)
    with pytest.raises(MXNetError, match='expand_dims'):
        mx.nd.expand_dims(x, axis=7)
    with pytest.raises(MXNetError, match="cannot find argument 'axes'"):
        mx.nd.expand_dims(x, axes=1)


def test_creation_operators_follow_the_current_context():
    for _ in range(2):
        assert mx.nd.zeros((2, 3)).context == mx.cpu(0)
        with mx.Context('cpu', 1):
            assert mx.nd.zeros((2, 3)).context == mx.cpu(1)
            assert mx.nd.zeros((2, 3), ctx=mx.cpu(0)).context == mx.cpu(0)


def test_results_are_fresh_arrays_without_gradient():
    x = _arr(2, 3)
    a, b = mx.nd.relu(x), mx.nd.relu(x)
    assert a is not b and a.grad is None
    a[:] = 0
    assert b.asnumpy().max() > 0


def test_check_formats_its_message_only_on_failure():
    import torch
    from neomx.operator.registry import check, lazy
    calls = []

    def text():
        calls.append(1)
        return 'costly'
    check(True, 'op', 'got %s and %s', torch.Size([2, 3]), lazy(text))
    assert not calls
    with pytest.raises(MXNetError, match=r'^op: got \(2, 3\) and costly, 4$'):
        check(False, 'op', 'got %s and %s, %d', torch.Size([2, 3]), lazy(text), 4)
    assert calls == [1]
