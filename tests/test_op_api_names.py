"""Operator helpers at MXNet 1.9.1's import paths, with its parameter names and values
recorded from MXNet 1.9.1: the preloaded multi-tensor SGD updates, the two-operand helpers'
keywords, the helpers of mx.nd's ndarray module, mx.contrib.ndarray/symbol."""
import numpy as np
import pytest

import neomx as mx
from neomx.ndarray import ndarray as nd_module


def _weights():
    return [mx.nd.array([1., 2]), mx.nd.array([3.])], [mx.nd.array([.5, .5]), mx.nd.array([1.])]


def test_preloaded_multi_sgd_update_reads_lrs_and_wds_arrays():
    (w0, w1), (g0, g1) = _weights()
    out = [mx.nd.zeros(2), mx.nd.zeros(1)]
    mx.nd.preloaded_multi_sgd_update(w0, g0, w1, g1, mx.nd.array([0.1, 0.2]), mx.nd.array([0.0, 0.5]),
                                     num_weights=2, out=out)
    np.testing.assert_allclose(out[0].asnumpy(), [0.95, 1.95], rtol=1e-6)    # MXNet 1.9.1's values
    np.testing.assert_allclose(out[1].asnumpy(), [2.5], rtol=1e-6)


def test_preloaded_multi_sgd_mom_update_updates_momentum():
    (w0, w1), (g0, g1) = _weights()
    m0, m1 = mx.nd.array([0.1, 0.1]), mx.nd.array([0.2])
    out = [mx.nd.zeros(2), mx.nd.zeros(1)]
    mx.nd.preloaded_multi_sgd_mom_update(w0, g0, m0, w1, g1, m1, mx.nd.array([0.1, 0.2]),
                                         mx.nd.array([0.0, 0.5]), momentum=0.9, num_weights=2, out=out)
    np.testing.assert_allclose(out[0].asnumpy(), [1.04, 2.04], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [2.68], rtol=1e-6)
    np.testing.assert_allclose(m0.asnumpy(), [0.04, 0.04], rtol=1e-5)
    np.testing.assert_allclose(m1.asnumpy(), [-0.32], rtol=1e-5)


def test_preloaded_multi_sgd_update_counts_its_inputs():
    (w0, _), (g0, _) = _weights()
    with pytest.raises(mx.base.MXNetError, match='preloaded_multi_sgd_update'):
        mx.nd.preloaded_multi_sgd_update(w0, g0, mx.nd.array([0.1]), num_weights=1)


def test_two_operand_helpers_take_mxnets_keywords():
    assert mx.nd.power(base=mx.nd.array([2]), exp=3).asnumpy().tolist() == [8.0]
    assert mx.nd.subtract(mx.nd.array([5]), rhs=2).asnumpy().tolist() == [3.0]
    sym = mx.sym.maximum(left=mx.sym.var('a'), right=1)
    assert sym.eval(a=mx.nd.array([0, 3]))[0].asnumpy().tolist() == [1.0, 3.0]
    with pytest.raises(TypeError, match="missing required argument 'rhs'"):
        mx.nd.add(mx.nd.array([1]))


def test_ndarray_module_helpers():
    assert nd_module.add is mx.nd.add and nd_module.onehot_encode is mx.nd.onehot_encode
    assert nd_module._DTYPE_NP_TO_MX[np.int64] == 6 and nd_module._DTYPE_MX_TO_NP[2] is np.float16
    assert nd_module._GRAD_REQ_MAP == {'null': 0, 'write': 1, 'add': 3}
    assert nd_module.get_indexing_dispatch_code((0, slice(None), None)) == 0
    assert nd_module.get_indexing_dispatch_code((0, [1, 2])) == 1
    assert nd_module.get_indexing_dispatch_code(((),)) == -1
    with pytest.raises(ValueError):
        nd_module.get_indexing_dispatch_code((1.5,))
    assert nd_module.get_oshape_of_gather_nd_op((4, 5, 6), (2, 3)) == (3, 6)
    assert isinstance(mx.nd.utils.empty((2, 3), stype='csr'), mx.nd.sparse.CSRNDArray)


def test_contrib_modules_alias_the_contrib_operators():
    import neomx.contrib.ndarray as contrib_nd
    import neomx.contrib.symbol as contrib_sym
    assert contrib_nd.box_nms is mx.nd.contrib.box_nms and mx.contrib.nd is contrib_nd
    assert contrib_sym.MultiBoxTarget is mx.sym.contrib.MultiBoxTarget and mx.contrib.sym is contrib_sym
    assert 'foreach' not in contrib_nd.__all__ and 'MultiBoxDetection' in contrib_nd.__all__


def test_register_and_operator_modules_have_mxnets_names():
    import ctypes
    from neomx.ndarray import register as nd_register
    from neomx.symbol import register as sym_register
    assert nd_register.adamw_update is mx.nd.contrib.adamw_update
    assert sym_register.mp_adamw_update is mx.sym.contrib.mp_adamw_update
    assert isinstance(mx.nd.ones(1), nd_register.NDArrayBase)
    assert isinstance(mx.sym.var('x'), sym_register.SymbolBase)
    with pytest.raises(AttributeError):
        nd_register.no_such_name  # pylint: disable=pointless-statement
    assert mx.operator.NDArray is mx.nd.NDArray and mx.operator.is_np_array() is False
    values = (ctypes.c_float * 6)(*range(6))
    shared = mx.operator.ctypes2numpy_shared(ctypes.cast(values, ctypes.POINTER(ctypes.c_float)), (2, 3))
    values[4] = 40.0
    assert shared.tolist() == [[0., 1., 2.], [3., 40., 5.]]
    with pytest.raises(RuntimeError):
        mx.operator.ctypes2numpy_shared(ctypes.pointer(ctypes.c_int(1)), (1,))


def test_indexing_key_expand_implicit_axes_as_mxnet():
    expand = nd_module.indexing_key_expand_implicit_axes
    every = slice(None)
    assert expand(np.s_[2, 1, 1], (3, 4, 5)) == ((2, 1, 1), -1)
    assert expand(np.s_[0, ...], (3, 4, 5)) == ((0, every, every), -1)
    assert expand(np.s_[:2, None, 0, ...], (3, 4, 5)) == ((slice(None, 2), None, 0, every), -1)
    assert expand(np.s_[True, 0], (3, 4)) == ((0, every), 1)
    assert expand(np.s_[False], (3,)) == ((every,), 0)
    with pytest.raises(IndexError, match='ellipsis'):
        expand(np.s_[..., 0, ...], (3, 4))
    with pytest.raises(ValueError, match='legacy mode'):
        expand((mx.nd.array([1, 0, 1]).astype('bool'),), (3,))


def test_contrib_adamw_update_takes_a_number_or_an_array_as_rescale_grad():
    results = []
    for scale in (2.0, mx.nd.array([2.0])):
        mean, var = mx.nd.zeros(2), mx.nd.zeros(2)
        results.append(mx.nd.contrib.adamw_update(mx.nd.ones(2), mx.nd.ones(2) * 0.5, mean, var,
                                                  rescale_grad=scale, lr=0.1, eta=1.0).asnumpy())
    np.testing.assert_allclose(results[0], [0.68377024] * 2, rtol=1e-5)    # MXNet 1.9.1
    np.testing.assert_array_equal(results[0], results[1])
    w32 = mx.nd.ones(2)
    out = mx.nd.contrib.mp_adamw_update(mx.nd.ones(2, dtype='float16'), mx.nd.ones(2, dtype='float16') * 0.5,
                                        mx.nd.zeros(2), mx.nd.zeros(2), w32, rescale_grad=2.0, lr=0.1, eta=1.0)
    assert out.dtype == np.float16
    np.testing.assert_allclose(w32.asnumpy(), [0.68377024] * 2, rtol=1e-5)


@pytest.mark.parametrize('make, outputs, aux', [
    (lambda v: mx.sym.contrib.MultiBoxTarget(v(0), v(1), v(2)), ['loc_target', 'loc_mask', 'cls_target'], 0),
    (lambda v: mx.sym.contrib.hawkesll(*[v(i) for i in range(8)]), ['output', 'out_state'], 0),
    (lambda v: mx.sym.contrib.quantize_asym(v(0)), ['output', 'scale', 'shift'], 0),
    (lambda v: mx.sym.contrib.quantize_v2(v(0)), ['output0', 'output1', 'output2'], 0),
    (lambda v: mx.sym.contrib.quantized_conv(*[v(i) for i in range(9)], kernel=(1, 1), num_filter=2),
     ['output', 'min_output', 'max_output'], 0),
    (lambda v: mx.sym.contrib.quantized_batch_norm(*[v(i) for i in range(7)]), ['output', 'min_output', 'max_output'],
     2),
    (lambda v: mx.sym.contrib.calibrate_entropy(v(0), v(1)), ['threshold', 'divergence'], 0),
    (lambda v: mx.sym.contrib.DeformablePSROIPooling(v(0), v(1), v(2), spatial_scale=1., output_dim=2, group_size=1,
                                                     pooled_size=2), ['output'], 0),
])
def test_output_names_and_aux_states_as_mxnet(make, outputs, aux):
    sym = make(lambda i: mx.sym.var('v%d' % i))
    names = [n.split('0_', 1)[1] for n in sym.list_outputs()]     # 'multiboxtarget0_loc_target'
    assert names == outputs
    assert len(sym.list_auxiliary_states()) == aux


def test_internal_helpers_zeros_without_dtype_broadcast_backward_cross_device_copy():
    internal = mx.nd._internal
    assert internal._zeros_without_dtype(shape=(2,)).dtype == np.float32
    assert internal._zeros_without_dtype(shape=(2,), dtype=6).dtype == np.int64      # MXNet's type flag
    sym = mx.sym._internal._zeros_without_dtype(shape=(2, 2), dtype=1)
    assert sym.infer_type()[1] == [np.float64] and sym.eval()[0].dtype == np.float64
    with pytest.raises(mx.base.MXNetError, match='type flag'):
        internal._zeros_without_dtype(shape=(2,), dtype=99)
    assert internal._broadcast_backward(mx.nd.ones((2, 3)), axis=1).asnumpy().tolist() == [3., 3.]
    assert internal._CrossDeviceCopy(mx.nd.array([1., 2.])).asnumpy().tolist() == [1., 2.]


def test_split_v2_backward_joins_the_parts_of_split_v2():
    x = mx.nd.arange(12).reshape((2, 6))
    parts = mx.nd.split_v2(x, (2, 5), axis=1)
    joined = mx.nd._internal._split_v2_backward(*parts, indices=(0, 2, 5), axis=1)
    assert joined.asnumpy().tolist() == x.asnumpy().tolist()
    rows = mx.nd.split_v2(x, 2, axis=0, squeeze_axis=True)
    joined = mx.nd._internal._split_v2_backward(*rows, indices=(), sections=2, axis=0, squeeze_axis=True)
    assert joined.asnumpy().tolist() == x.asnumpy().tolist()
    with pytest.raises(mx.base.MXNetError, match='expects 3 gradients'):
        mx.nd._internal._split_v2_backward(*rows, indices=(0, 1, 2), axis=0)
