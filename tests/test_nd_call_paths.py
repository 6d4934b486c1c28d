"""mx.nd functions remember the attributes of calls with positional inputs (to skip argument
handling on repeated calls): every call must still give what a first call gives."""
import inspect

import numpy as np
import pytest
import torch

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
        assert mx.nd.zeros((2, 3)).context == mx.current_context()
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


# ------------------------------------------------ lean entries (fast_entries) and the general path
def test_lean_and_general_calls_agree():
    """The same operator call through its lean entry (positional array, keywords) and
    through the general function (inputs by name, attributes by position, out=)."""
    x = _arr(3, 4)
    ref = np.maximum(x.asnumpy(), 0)
    for _ in range(2):
        np.testing.assert_allclose(mx.nd.relu(x).asnumpy(), ref)
        np.testing.assert_allclose(mx.nd.relu(data=x).asnumpy(), ref)
        np.testing.assert_allclose(mx.nd.Activation(x, act_type='relu').asnumpy(), ref)
        np.testing.assert_allclose(mx.nd.Activation(data=x, act_type='relu').asnumpy(), ref)
        np.testing.assert_allclose(mx.nd.clip(x, 0.0, 0.5).asnumpy(), np.clip(x.asnumpy(), 0, 0.5))
        np.testing.assert_allclose(mx.nd.clip(x, a_min=0.0, a_max=0.5).asnumpy(), np.clip(x.asnumpy(), 0, 0.5))
        y = mx.nd.zeros((3, 4))
        assert mx.nd.relu(x, out=y) is y
        np.testing.assert_allclose(y.asnumpy(), ref)
        assert mx.nd.Cast(x, dtype='int32').dtype == np.int32
        assert mx.nd.Cast(x, dtype='float16').dtype == np.float16


def test_lean_calls_with_several_outputs():
    x = _arr(3, 6)
    for _ in range(2):
        values, indices = mx.nd.topk(x, k=2, ret_typ='both')
        np.testing.assert_allclose(values.asnumpy(), -np.sort(-x.asnumpy(), axis=-1)[:, :2])
        assert indices.shape == (3, 2)
        parts = mx.nd.split(x, num_outputs=3, axis=1)
        assert [p.shape for p in parts] == [(3, 2)] * 3


def test_keyword_values_whose_equality_is_an_array():
    """A lean entry compares a call's keywords with the last call's: values whose == gives
    an array (numpy arrays) must not break that comparison."""
    for _ in range(2):
        assert mx.nd._internal._zeros(shape=(2, 3)).shape == (2, 3)
        # refused as MXNet 1.9.1 refuses it, not by numpy's "truth value is ambiguous"
        with pytest.raises(mx.base.MXNetError, match=r"_zeros: invalid value array\(\[2, 3\]\) for argument 'shape'"):
            mx.nd._internal._zeros(shape=np.array([2, 3]))
        assert mx.nd._internal._zeros(shape=np.array([6])).shape == (6,)
    x = mx.nd.array([[-1, 2], [3, -4]])
    for _ in range(2):
        np.testing.assert_allclose(mx.nd.clip(x, a_min=0.0, a_max=2.5).asnumpy(), [[0, 2], [2.5, 0]])
        np.testing.assert_allclose(mx.nd.clip(x, a_min=np.float32(0), a_max=np.array(2.5)).asnumpy(),
                                   [[0, 2], [2.5, 0]])


def test_lean_calls_record_and_build_no_graph_outside_record():
    x = _arr(3, 4)
    x.attach_grad()
    for _ in range(2):
        y = mx.nd.relu(x)       # outside record(): no graph, even on an array with a gradient
        assert not y._t.requires_grad
        with mx.autograd.record():
            z = mx.nd.Activation(x, act_type='relu') * 2 + mx.nd.BlockGrad(x)
        z.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), 2.0 * (x.asnumpy() > 0))


def test_lean_creation_calls_take_context_strings_and_dtypes():
    for _ in range(2):
        assert mx.nd.zeros((2, 3), ctx='cpu(1)').context == mx.cpu(1)
        assert mx.nd.zeros((2, 3), ctx=mx.cpu(0)).context == mx.cpu(0)
        assert mx.nd.full((2, 3), 7, dtype='int32').asnumpy().tolist() == [[7] * 3] * 2
        with mx.Context('cpu', 2):
            assert mx.nd.ones((2,)).context == mx.cpu(2)
    for _ in range(2):
        with pytest.raises(MXNetError, match="_zeros: invalid value 'float33' for argument 'dtype'"):
            mx.nd._internal._zeros(shape=(2, 3), dtype='float33')
        with pytest.raises(MXNetError, match=r'^_zeros: .*non-negative.*\(inputs: none\)$'):
            mx.nd._internal._zeros(shape=(2, -3))


def test_variadic_lean_calls():
    a, b = mx.nd.ones((2, 2)), mx.nd.ones((3,))
    for _ in range(2):
        assert mx.nd.reset_arrays(a, b, num_arrays=2) == []     # as MXNet: no outputs
        assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0
        a[:] = 1
        b[:] = 1
    for _ in range(2):
        assert mx.nd.add_n(a, a).asnumpy().sum() == 8
        with pytest.raises(MXNetError, match=r'^add_n: all inputs must have the same shape, got \(2, 2\) and \(3,\)$'):
            mx.nd.add_n(a, b)


def test_lean_call_errors_name_the_operator_and_inputs():
    x = _arr(1, 1, 2, 2)
    for _ in range(2):
        assert mx.nd.im2col(x, kernel=(2, 2)).shape == (1, 4, 1)
        with pytest.raises(MXNetError, match=r'^im2col: .*\(inputs: data=\(1, 1, 2, 2\)\)$'):
            mx.nd.im2col(x, kernel=(3, 3))


def test_arrays_given_by_keyword_are_not_kept_alive():
    """Calls remember their keywords; inputs given by name must not stay alive through that."""
    import gc
    import weakref
    refs = []
    for _ in range(3):
        x = _arr(2, 2)
        np.testing.assert_allclose(mx.nd.relu(data=x).asnumpy(), np.maximum(x.asnumpy(), 0))
        np.testing.assert_allclose(mx.nd.Activation(data=x, act_type='tanh').asnumpy(), np.tanh(x.asnumpy()),
                                   rtol=1e-6)
        np.testing.assert_allclose(mx.nd.add_n(x, x, num_args=2).asnumpy(), 2 * x.asnumpy())
        refs.append(weakref.ref(x))
        del x
    gc.collect()
    assert all(r() is None for r in refs)


def test_out_and_name_follow_the_attributes_by_position_as_in_mxnet():
    # MXNet's generated signatures: relu(data, out, name), Activation(data, act_type, out, name)
    x = mx.nd.array([-1.0, 2.0])
    y = mx.nd.zeros(2)
    assert mx.nd.relu(x, y) is y and y.asnumpy().tolist() == [0.0, 2.0]
    z = mx.nd.zeros(2)
    assert mx.nd.Activation(x, 'relu', z, 'act') is z and z.asnumpy().tolist() == [0.0, 2.0]
    with pytest.raises(TypeError, match=r'relu\(\) takes from 0 to 3 positional arguments but 4 were given'):
        mx.nd.relu(x, y, 'name', 3)
    with pytest.raises(TypeError, match="multiple values for argument 'out'"):
        mx.nd.relu(x, y, out=y)
    assert x.asnumpy().tolist() == [-1.0, 2.0]


def test_out_and_name_by_keyword_on_every_entry():
    # the entries take out/name in **kwargs: out goes to the general function, name is ignored
    x = mx.nd.array([-1.0, 2.0])
    for _ in range(2):
        y = mx.nd.zeros(2)
        assert mx.nd.Activation(x, act_type='relu', out=y) is y and y.asnumpy().tolist() == [0.0, 2.0]
        assert mx.nd.Activation(x, act_type='relu', name='a1').asnumpy().tolist() == [0.0, 2.0]
        assert mx.nd.Activation(x, act_type='relu', name='a2').asnumpy().tolist() == [0.0, 2.0]
        z = mx.nd.ones((2,))
        assert mx.nd.zeros((2,), out=z) is z and z.asnumpy().tolist() == [0.0, 0.0]
        assert mx.nd.zeros((2,), name='zeros').shape == (2,)
        s = mx.nd.zeros(2)
        assert mx.nd.add_n(x, x, out=s) is s and s.asnumpy().tolist() == [-2.0, 4.0]
        assert mx.nd.add_n(x, x, name='sum').asnumpy().tolist() == [-2.0, 4.0]
        w, b = mx.nd.ones((3, 2)), mx.nd.zeros(3)
        o = mx.nd.zeros((1, 3))
        assert mx.nd.FullyConnected(x.reshape((1, 2)), w, b, num_hidden=3, out=o, name='fc') is o
        assert o.asnumpy().tolist() == [[1.0, 1.0, 1.0]]


def test_generated_functions_show_out_and_name_in_their_signature():
    for fn in (mx.nd.relu, mx.nd.Activation, mx.nd.FullyConnected, mx.nd.add_n, mx.npx.activation):
        params = inspect.signature(fn).parameters
        assert list(params) == ['args', 'out', 'name', 'kwargs'], fn.__name__
        assert params['out'].default is None and params['name'].default is None


def test_bound_implementations_match_keyword_calls():
    # remembered keyword sets call the implementation with its attributes bound as defaults
    from neomx.ndarray import fast_entries
    from neomx.operator import registry
    spec = registry.get('LeakyReLU')
    attrs = spec.parse_attrs({'act_type': 'leaky', 'slope': 0.5})
    bound = fast_entries.impl_with_attrs(spec, spec.impl, attrs)
    t = mx.nd.array([-2.0, 3.0])._t
    assert bound(t, None).tolist() == spec.impl(t, None, **attrs).tolist() == [-1.0, 3.0]
    assert spec.impl.__defaults__ is None or len(spec.impl.__defaults__) < len(spec.attr_names)
    one = fast_entries.bound_call(registry.get('Activation').impl, ('sigmoid',))
    assert one(t).tolist() == torch.sigmoid(t).tolist()
    assert fast_entries.bound_call(abs, ()) is abs
    assert fast_entries.with_defaults(abs, 1, (2,)) is None      # a builtin: no copy
    x = mx.nd.array([-2.0, 3.0])
    for slope in (0.5, 0.25, 0.5):
        assert mx.nd.LeakyReLU(x, act_type='leaky', slope=slope).asnumpy().tolist() == [-2.0 * slope, 3.0]


def test_remembered_calls_of_view_operators_give_new_memory():
    # reshape_like's implementation returns a view: remembered calls copy it, as the first does
    x, like = _arr(2, 6), _arr(3, 4, seed=1)
    for _ in range(3):
        y = mx.nd.reshape_like(x, like)
        assert y.shape == (3, 4)
        y[:] = 7
        assert x.asnumpy().max() < 7
    xs = x.as_np_ndarray()
    for _ in range(2):
        z = mx.npx.reshape_like(xs, like.as_np_ndarray())
        z[...] = 7
        assert xs.asnumpy().max() < 7


def test_lean_calls_of_operators_with_several_inputs():
    """FullyConnected, broadcast_add... (fast_entries.inputs_entry): graph-free calls take the
    lean entry; recording, sparse inputs, the other interface's arrays and errors go as before."""
    x, w, b = _arr(2, 3), _arr(4, 3, seed=1), _arr(4, seed=2)
    plain_w = w.copy()
    expected = x.asnumpy() @ w.asnumpy().T + b.asnumpy()
    w.attach_grad()
    for _ in range(2):
        for weight in (plain_w, w):     # the lean entry, then the general function (a gradient)
            y = mx.nd.FullyConnected(x, weight, b, num_hidden=4)     # outside record(): no graph
            assert not y._t.requires_grad and type(y) is mx.nd.NDArray
            np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5)
        with mx.autograd.record():
            z = mx.nd.FullyConnected(x, w, b, num_hidden=4)
        z.backward()
        np.testing.assert_allclose(w.grad.asnumpy(), np.tile(x.asnumpy().sum(axis=0), (4, 1)), rtol=1e-5)
        np.testing.assert_allclose(mx.nd.broadcast_add(x, b[:3].reshape((1, 3))).asnumpy(),
                                   x.asnumpy() + b.asnumpy()[:3], rtol=1e-6)
        with pytest.raises(MXNetError, match=r'^broadcast_add: .*\(2, 3\).*\(4,\)'):
            mx.nd.broadcast_add(x, b)
        with pytest.raises(TypeError, match='legacy operator'):
            mx.nd.broadcast_add(x, x.as_np_ndarray())
        csr = mx.nd.array([[1, 0, 0], [0, 2, 0]]).tostype('csr')
        assert mx.nd.dot(csr, w.T).shape == (2, 4)     # the storage rule takes the sparse input
    xs, ws, bs = x.as_np_ndarray(), plain_w.as_np_ndarray(), b.as_np_ndarray()
    for _ in range(2):
        y = mx.npx.fully_connected(xs, ws, bs, num_hidden=4)
        assert type(y) is mx.np.ndarray
        np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5)
        assert mx.npx.fully_connected(xs, ws, num_hidden=4, no_bias=True).shape == (2, 4)
