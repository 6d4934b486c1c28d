"""The storage rule inside the generated mx.nd functions (``sparse_arrays.storage_dispatch``).

A dense call pays only a flag test; a call with a sparse input or output goes through the
operator's rule (sparse result, or the dense fallback on densified inputs); ``cast_storage``
of a dense array to ``'default'`` is the dense copy, through the one-input entry. The
result types are MXNet 1.9.1's.
"""
import numpy as np

import neomx as mx

VALUES = np.array([[0, 1], [2, 0]], dtype=np.float32)


def test_cast_storage_dense_to_default_is_a_copy_and_sparse_casts_still_compress():
    a = mx.nd.array(VALUES)
    for _ in range(2):      # the second round hits the remembered keyword sets
        copied = mx.nd.cast_storage(a, stype='default')
        assert type(copied) is mx.nd.NDArray
        np.testing.assert_array_equal(copied.asnumpy(), VALUES)
        copied[:] = 5       # a copy: the source keeps its values
        np.testing.assert_array_equal(a.asnumpy(), VALUES)
        assert type(mx.nd.cast_storage(a, 'default')) is mx.nd.NDArray
        csr = mx.nd.cast_storage(a, stype='csr')
        assert csr.stype == 'csr'
        np.testing.assert_array_equal(csr.asnumpy(), VALUES)
        assert mx.nd.cast_storage(a, 'row_sparse').stype == 'row_sparse'
        back = mx.nd.cast_storage(csr, stype='default')
        assert type(back) is mx.nd.NDArray
        np.testing.assert_array_equal(back.asnumpy(), VALUES)


def test_sparse_inputs_follow_the_rule_and_dense_calls_stay_dense():
    a = mx.nd.array(VALUES)
    csr, rsp = a.tostype('csr'), a.tostype('row_sparse')
    assert mx.nd.elemwise_add(csr, csr).stype == 'csr'      # the sparse implementation
    np.testing.assert_array_equal(mx.nd.elemwise_add(csr, csr).asnumpy(), 2 * VALUES)
    assert mx.nd.add_n(rsp, rsp).stype == 'row_sparse'
    np.testing.assert_array_equal(mx.nd.add_n(rsp, rsp).asnumpy(), 2 * VALUES)
    assert mx.nd.relu(csr).stype == 'csr'
    mixed = mx.nd.elemwise_add(csr, a)     # the dense fallback on the densified input
    assert type(mixed) is mx.nd.NDArray
    np.testing.assert_array_equal(mixed.asnumpy(), 2 * VALUES)
    assert type(mx.nd.add_n(csr, csr)) is mx.nd.NDArray
    np.testing.assert_allclose(mx.nd.exp(csr).asnumpy(), np.exp(VALUES), rtol=1e-6)
    # sparse arrays exist now: dense calls take the dense path, with the same results
    dense = mx.nd.elemwise_add(a, a)
    assert type(dense) is mx.nd.NDArray
    np.testing.assert_array_equal(dense.asnumpy(), 2 * VALUES)
    np.testing.assert_array_equal(mx.nd.add_n(a, a, a).asnumpy(), 3 * VALUES)


def test_a_sparse_out_array_takes_the_rule():
    a = mx.nd.array(VALUES)
    out = mx.nd.zeros((2, 2)).tostype('csr')
    res = mx.nd.cast_storage(a, stype='csr', out=out)
    assert res is out and out.stype == 'csr'
    np.testing.assert_array_equal(out.asnumpy(), VALUES)
