"""Compiled graphs pass operator attributes by position where the implementation allows it."""
import functools

import numpy as np

import neomx as mx
from neomx.symbol.codegen import _positional_attributes
from neomx.symbol.graph import compiled


def _impl(data, weight, num_hidden, flatten=True, no_bias=False):
    return (data, weight, num_hidden, flatten, no_bias)


def _impl_with_kwargs(data, **attrs):
    return data, attrs


def test_keywords_become_the_parameters_after_the_inputs_in_signature_order():
    fn, values = _positional_attributes(functools.partial(_impl, no_bias=True, num_hidden=4, flatten=False), 2)
    assert fn is _impl and values == [4, False, True]
    assert fn('x', 'w', *values) == _impl('x', 'w', num_hidden=4, flatten=False, no_bias=True)


def test_calls_that_positions_cannot_express_keep_their_partial():
    assert _positional_attributes(functools.partial(_impl, 'x', num_hidden=4), 1) is None      # bound input
    assert _positional_attributes(functools.partial(_impl, num_hidden=4, no_bias=True), 2) is None  # gap
    assert _positional_attributes(functools.partial(_impl_with_kwargs, axis=1), 1) is None
    assert _positional_attributes(_impl, 2) is None                     # no partial
    assert _positional_attributes(functools.partial(max, key=abs), 1) is None


def test_a_compiled_graph_calls_plain_implementations_and_matches_the_operators():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    sym = mx.sym.Activation(fc, act_type='tanh', name='act')
    rng = np.random.default_rng(0)
    arrays = {'data': rng.normal(size=(2, 5)), 'fc_weight': rng.normal(size=(3, 5)), 'fc_bias': rng.normal(size=3)}
    arrays = {k: mx.nd.array(v) for k, v in arrays.items()}
    graph = compiled(sym, mx.current_context())
    ops = [v for k, v in graph._namespace.items() if k.startswith('op')]
    assert ops and not any(isinstance(op, functools.partial) for op in ops)
    out = graph([arrays[n]._t for n in graph.input_names])[0]
    expected = mx.nd.Activation(mx.nd.FullyConnected(arrays['data'], arrays['fc_weight'], arrays['fc_bias'],
                                                     num_hidden=3), act_type='tanh')
    np.testing.assert_allclose(out.cpu().numpy(), expected.asnumpy(), rtol=1e-6)


def test_the_attribute_order_is_remembered_per_function_and_keyword_set():
    # read once per (function, inputs, keywords): later calls with other values reuse it,
    # another keyword set of the same function gets its own answer
    for values in ((4, True, False), (8, False, True)):
        fn, got = _positional_attributes(functools.partial(_impl, flatten=values[1], num_hidden=values[0],
                                                           no_bias=values[2]), 2)
        assert fn is _impl and got == list(values)
    assert _positional_attributes(functools.partial(_impl, num_hidden=4, no_bias=True), 2) is None
    fn, got = _positional_attributes(functools.partial(_impl, num_hidden=4, flatten=False), 2)
    assert got == [4, False]
