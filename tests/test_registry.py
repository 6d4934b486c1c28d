"""The operator registry: attribute parsing from Python values and MXNet's strings, errors."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry


def test_attribute_parsing_accepts_strings():
    spec = registry.get('Reshape')
    attrs = spec.parse_attrs({'shape': '(2, -1)', 'reverse': 'True'})
    assert (attrs['shape'], attrs['reverse']) == ((2, -1), True)
    given = {k: attrs[k] for k in ('shape', 'reverse')}
    assert spec.format_attrs(given) == {'shape': '(2, -1)', 'reverse': 'True'}
    assert registry.get('_plus_scalar').parse_attrs({'scalar': '1e-3'})['scalar'] == 1e-3


def test_operators_without_attributes_ignore_keywords_as_mxnet():
    # MXNet 1.9.1: nd.broadcast_maximum(a, b, axis=1) and nd.relu(a, foo=1) run, and the
    # Symbol keeps the keyword (its Gluon CosineEmbeddingLoss exports one).
    a, b = mx.nd.array([[1.0, -2.0]]), mx.nd.zeros((1, 1))
    np.testing.assert_array_equal(mx.nd.broadcast_maximum(a, b, axis=1).asnumpy(), [[1.0, 0.0]])
    np.testing.assert_array_equal(mx.nd.relu(a, foo=1).asnumpy(), [[1.0, 0.0]])
    node = json.loads(mx.sym.relu(mx.sym.var('x'), foo=1).tojson())['nodes'][1]
    assert node['attrs'] == {'foo': '1'}


def test_unknown_and_invalid_arguments_name_operator_and_argument():
    with pytest.raises(mx.base.MXNetError, match=r"_plus_scalar: cannot find argument 'foo'"):
        mx.nd._plus_scalar(mx.nd.ones((2,)), scalar=1, foo=3)
    with pytest.raises(mx.base.MXNetError, match=r"Reshape: invalid value .* 'reverse'"):
        mx.nd.Reshape(mx.nd.ones((2,)), shape=(2,), reverse='maybe')
    with pytest.raises(TypeError, match=r'clip: argument data must be an NDArray'):
        mx.nd.clip([1, 2], 0, 1)


def test_an_input_the_attributes_leave_out_is_refused_not_dropped():
    # MXNet 1.9.1: "Operator Convolution expects 2 inputs, but got 3 instead" (nd) and
    # "Keyword argument name bias not found" (sym); Deconvolution's no_bias defaults to True
    x, w, b = mx.nd.ones((1, 3, 8, 8)), mx.nd.ones((4, 3, 3, 3)), mx.nd.ones((4,))
    for _ in range(2):      # the second call goes through the remembered-keywords path
        assert mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True).shape == (1, 4, 6, 6)
        with pytest.raises(mx.base.MXNetError, match=r'^Convolution: expects 2 inputs for these attributes '
                                                      r'\(data, weight\), but got 3'):
            mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, no_bias=True)
    with pytest.raises(mx.base.MXNetError, match=r'^FullyConnected: expects 2 inputs'):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), bias=mx.nd.ones((4,)), num_hidden=4, no_bias=True)
    with pytest.raises(mx.base.MXNetError, match=r'^Deconvolution: expects 2 inputs'):
        mx.nd.Deconvolution(x, mx.nd.ones((3, 4, 3, 3)), b, kernel=(3, 3), num_filter=4)
    y = mx.nd.Deconvolution(x, mx.nd.ones((3, 4, 3, 3)), b, kernel=(3, 3), num_filter=4, no_bias=False)
    assert y.shape == (1, 4, 10, 10) and y.asnumpy()[0, 0, 0, 0] == 3 + 1     # the bias is added
    with pytest.raises(mx.base.MXNetError, match=r'^Deconvolution: no input named bias for these attributes'):
        mx.sym.Deconvolution(mx.sym.var('x'), bias=mx.sym.var('b'), kernel=(3, 3), num_filter=4)
    assert mx.sym.Convolution(mx.sym.var('x'), None, None, kernel=(3, 3), num_filter=4, no_bias=True,
                              name='conv').list_arguments() == ['x', 'conv_weight']


def test_aliases_share_one_spec():
    assert registry.get('elemwise_add') is registry.get('_plus')
    assert mx.nd.broadcast_plus.spec is mx.nd.broadcast_add.spec


def test_out_argument_writes_into_given_array():
    a = mx.nd.array([1.0, 4.0])
    out = mx.nd.zeros((2,))
    r = mx.nd.sqrt(a, out=out)
    assert r is out and out.asnumpy().tolist() == [1.0, 2.0]


def test_reshape_codes():
    from neomx.operator.shape import infer_reshape
    assert infer_reshape((2, 3, 4), (-4, 1, 2, -2)) == (1, 2, 3, 4)
    assert infer_reshape((2, 3, 4), (0, 0, -4, 2, -1)) == (2, 3, 2, 2)
    assert infer_reshape((10, 5, 4), (-1, 0), reverse=True) == (50, 4)
    with pytest.raises(mx.base.MXNetError, match='one and only one'):
        infer_reshape((2, 3), (-1, -1))
    with pytest.raises(mx.base.MXNetError, match=r'cannot reshape \(2, 3\)'):
        infer_reshape((2, 3), (4, 2))


def test_parsed_attributes_are_cached_only_when_the_type_cannot_matter():
    from neomx.ndarray.register import make_function
    seen = []

    def impl(data, value):
        seen.append(value)
        return data.clone()
    fn = make_function(registry.OpSpec('_test_any', impl, inputs=('data',), attrs=[('value', registry.ANY, None)]),
                       '_test_any')
    x = mx.nd.ones((1,))
    for value in (1, 1.0, True, '1'):        # equal as dict keys, different as values
        fn(x, value=value)
    assert [type(v) for v in seen] == [int, float, bool, int]    # '1' parses to the int 1
