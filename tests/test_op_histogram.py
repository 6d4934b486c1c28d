"""histogram (the ``_histogram`` operator) against numpy, and its Symbol form as MXNet 1.9.1 gives it."""
import json
import warnings

import numpy as np
import pytest

import neomx as mx


def _data():
    return np.array([0.1, 0.7, 3.0, -3.0, 60.0, 2.0, 4.5, -1.0, 2.5, -2.5, 1.25])


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_histogram_equal_bins_over_a_range(dtype):
    x = _data()
    for bins in (1, 3, 4, 7):
        counts, edges = mx.nd.histogram(mx.nd.array(x, dtype=dtype), bins=bins, range=(-2.5, 2.5))
        expect_counts, expect_edges = np.histogram(x.astype(dtype), bins, range=(-2.5, 2.5))
        assert counts.dtype == np.int64 and edges.dtype == np.dtype(dtype)
        assert counts.asnumpy().tolist() == expect_counts.tolist()
        np.testing.assert_allclose(edges.asnumpy(), expect_edges, rtol=1e-6)


def test_histogram_given_edges_and_random_data():
    x = np.random.RandomState(0).uniform(-3, 3, size=(4, 5, 6))
    edges = np.array([-1.0, 0.5, 2.0, 4.5, 50.0])
    counts, out_edges = mx.nd.histogram(mx.nd.array(x, dtype='float64'), bins=mx.nd.array(edges, dtype='float64'))
    assert counts.asnumpy().tolist() == np.histogram(x, edges)[0].tolist()
    assert out_edges.asnumpy().tolist() == edges.tolist()
    # values on the last edge count in the last bin, values outside do not count
    small = mx.nd.array([-1.0, 50.0, 51.0, -2.0, 0.5], dtype='float64')
    assert mx.nd.histogram(small, bins=mx.nd.array(edges, dtype='float64'))[0].asnumpy().tolist() == [1, 1, 0, 1]


def test_histogram_without_range_is_numpys_answer_in_float32():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        counts, edges = mx.nd.histogram(mx.nd.array(_data()), bins=3)
    assert caught and 'range is not specified' in str(caught[0].message)
    assert counts.dtype == np.float32 and counts.asnumpy().tolist() == [10.0, 0.0, 1.0]
    assert edges.asnumpy().tolist() == [-3.0, 18.0, 39.0, 60.0]
    with pytest.raises(ValueError, match='bins argument'):
        mx.nd.histogram(mx.nd.array(_data()), bins=2.5)


def test_histogram_symbol():
    data, bins = mx.sym.Variable('data'), mx.sym.Variable('bins')
    equal = mx.sym.histogram(a=data, bins=3, range=(0, 1))
    given = mx.sym.histogram(a=data, bins=bins)
    assert given.list_arguments() == ['data', 'bins'] and equal.list_arguments() == ['data']
    assert len(equal.list_outputs()) == 2
    # as MXNet 1.9.1: shapes, dtypes (the edges have the data's dtype) and the JSON node
    assert equal.infer_shape(data=(3, 4))[1] == [(3,), (4,)]
    assert given.infer_shape(data=(3, 4), bins=(5,))[1] == [(4,), (5,)]
    assert given.infer_type(data='float64', bins='float32')[1] == [np.int64, np.float64]
    node = json.loads(equal.tojson())['nodes'][1]
    assert node['op'] == '_histogram' and node['attrs'] == {'bin_cnt': '3', 'range': '(0, 1)'}
    exe = given.bind(mx.cpu(), {'data': mx.nd.array([[0.2, 0.6], [0.7, 3.0]]), 'bins': mx.nd.array([0, 0.5, 1])})
    assert exe.forward()[0].asnumpy().tolist() == [1, 2]
    with pytest.raises(ValueError, match='null range'):
        mx.sym.histogram(a=data, bins=3)


def test_histogram_errors():
    with pytest.raises(mx.base.MXNetError, match='_histogram: bins must be a 1-D array'):
        mx.nd.histogram(mx.nd.ones((3,)), bins=mx.nd.ones((2, 2)))
    with pytest.raises(mx.base.MXNetError, match='_histogram: bin_cnt must be positive'):
        mx.nd.histogram(mx.nd.ones((3,)), bins=0, range=(0, 1))
