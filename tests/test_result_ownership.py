"""Operator results are the caller's own arrays, as in MXNet 1.9.1: writing to the result of
``mx.nd.reshape(x)``, ``BlockGrad(x)``, a cast to ``x``'s own dtype... never changes ``x``
(MXNet's operators write new arrays), while NDArray's view methods (``x.reshape``,
``x[0]``, ``x.detach()``) share memory as MXNet's do. Compiled graphs run the sharing
implementations inside, and copy only results that leave the graph."""
import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry

# (name, call) -> whether the result shares x's memory in MXNet 1.9.1 (checked there)
CALLS = [
    ('nd.reshape', lambda x: mx.nd.reshape(x, shape=(3, 2)), False),
    ('nd.Reshape', lambda x: mx.nd.Reshape(x, shape=(3, 2)), False),
    ('nd.flatten', lambda x: mx.nd.flatten(x), False),
    ('nd.Flatten', lambda x: mx.nd.Flatten(x), False),
    ('nd.expand_dims', lambda x: mx.nd.expand_dims(x, axis=0), False),
    ('nd.squeeze', lambda x: mx.nd.squeeze(mx.nd.expand_dims(x, axis=0)), False),
    ('nd.BlockGrad', lambda x: mx.nd.BlockGrad(x), False),
    ('nd.stop_gradient', lambda x: mx.nd.stop_gradient(x), False),
    ('nd.Cast to own dtype', lambda x: mx.nd.Cast(x, dtype='float32'), False),
    ('nd.amp_cast to own dtype', lambda x: mx.nd.amp_cast(x, dtype='float32'), False),
    ('nd.amp_multicast', lambda x: mx.nd.amp_multicast(x, num_outputs=1)[0], False),
    ('nd.reshape_like', lambda x: mx.nd.reshape_like(x, mx.nd.zeros((3, 2))), False),
    ('nd.identity', lambda x: mx.nd.identity(x), False),
    ('nd.transpose', lambda x: mx.nd.transpose(x), False),
    ('astype own dtype', lambda x: x.astype('float32'), False),
    ('astype copy=False', lambda x: x.astype('float32', copy=False), True),
    ('x.reshape', lambda x: x.reshape((3, 2)), True),
    ('x[0]', lambda x: x[0], True),
    ('x.detach', lambda x: x.detach(), True),
    ('x.flatten', lambda x: x.flatten(), False),
]


@pytest.mark.parametrize('name, call, shares', CALLS, ids=[c[0] for c in CALLS])
def test_writing_a_result_changes_its_input_exactly_where_mxnet_does(name, call, shares):
    x = mx.nd.ones((2, 3))
    y = call(x)
    y[:] = 5
    assert (x.asnumpy()[0, 0] == 5) == shares, name
    assert y.asnumpy().ravel()[0] == 5


def test_operators_returning_views_are_declared_and_copy_only_then():
    declared = {spec.name for spec in registry.all_ops().values() if spec.impl is not None
                and spec.nd_impl is not spec.impl}
    assert {'Reshape', 'Flatten', 'expand_dims', 'squeeze', 'BlockGrad', 'Cast', 'reshape_like',
            '_linalg_extractdiag', 'mp_sgd_update', 'multi_mp_sgd_update'} <= declared
    assert 'elemwise_add' not in declared and 'relu' not in declared
    spec = registry.get('Reshape')
    x = mx.nd.arange(6)._t
    assert spec.impl(x, shape=(2, 3), reverse=False, target_shape=(), keep_highest=False)._base is x
    fresh = spec.nd_impl(x.flip(0), shape=(2, 3), reverse=False, target_shape=(), keep_highest=False)
    assert fresh.tolist() == [[5, 4, 3], [2, 1, 0]]


def test_extracted_diagonal_and_mixed_precision_update_results_are_new_arrays():
    a = mx.nd.array(np.arange(9.0).reshape(3, 3))
    d = mx.nd.linalg.extractdiag(a, offset=1)
    d[:] = -1
    assert a.asnumpy()[0, 1] == 1 and d.asnumpy().tolist() == [-1, -1]
    w, g, w32 = mx.nd.ones(3), mx.nd.ones(3), mx.nd.ones(3)
    new = mx.nd.mp_sgd_update(w, g, w32, lr=0.5)
    assert w32.asnumpy().tolist() == [0.5] * 3          # the master weight is updated in place
    new[:] = 7
    assert w32.asnumpy().tolist() == [0.5] * 3          # the result is not it


def test_gradients_flow_through_the_copied_results():
    x = mx.nd.array([[1.0, 2.0, 3.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = (mx.nd.reshape(x, shape=(3,)) * mx.nd.array([1.0, 2.0, 3.0])).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1.0, 2.0, 3.0]]


class _Reshaping(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        flat = F.flatten(x)                      # inside the graph: a view, no copy needed
        return F.reshape(flat, shape=(3, 2)), F.BlockGrad(x), x


@pytest.mark.parametrize('options', [{}, {'static_alloc': True, 'static_shape': True}])
def test_hybridized_outputs_are_new_arrays_unless_they_are_the_input(options):
    net = _Reshaping()
    net.hybridize(**options)
    x = mx.nd.ones((2, 3))
    reshaped, blocked, same = net(x)
    reshaped[:] = 5
    blocked[:] = 6
    assert x.asnumpy().tolist() == [[1.0] * 3] * 2
    same[:] = 7                                  # MXNet's graph returns its input itself
    assert x.asnumpy()[0, 0] == 7


def test_executor_outputs_are_new_arrays():
    data = mx.sym.var('data')
    x = mx.nd.ones((2, 3))
    for sym in (mx.sym.Reshape(data, shape=(3, 2)), mx.sym.BlockGrad(data)):
        out = sym.bind(mx.cpu(), {'data': x}).forward()[0]
        out[:] = 9
        assert x.asnumpy()[0, 0] == 1
