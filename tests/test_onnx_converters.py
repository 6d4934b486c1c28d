"""mx.onnx converters beyond the core ones: each exported graph passes onnx.checker and runs in
onnxruntime equal to neomx."""
import numpy as np
import pytest

import neomx as mx

from device_tolerance import kernel_tolerance

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')

_RNG = np.random.RandomState(7)
_A = _RNG.uniform(0, 100, (4, 5, 6)).astype('float32')
_IMG = _RNG.uniform(0, 1, (1, 4, 5, 6)).astype('float32')
_BOXES = np.array([[[0.5, 0.1, 0.1, 0.2, 0.2], [0.4, 0.1, 0.1, 0.2, 0.2], [0.7, 0.5, 0.5, 0.9, 0.9],
                    [0.8, 0.1, 0.9, 0.11, 0.91], [0.001, 0.01, 0.01, 0.02, 0.02]]], 'float32')


def _run(build, arrays, tmp_path, dynamic=False):
    """Export ``build(*variables)`` for ``arrays``; (onnxruntime's outputs, neomx's outputs)."""
    names = ['in%d' % i for i in range(len(arrays))]
    sym = build(*[mx.sym.var(n) for n in names])
    feeds = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, arrays)}
    expected = [o.asnumpy() for o in sym.eval(**feeds)]
    path = mx.onnx.export_model(sym, {}, [a.shape for a in arrays], [a.dtype for a in arrays],
                                str(tmp_path / 'm.onnx'), dynamic=dynamic)
    onnx.checker.check_model(path)
    got = ort.InferenceSession(path).run(None, {n: a for n, a in zip(names, arrays)})
    return got, expected


def _rnn_case(mode, layers, bidirectional):
    gates = {'lstm': 4, 'gru': 3}.get(mode, 1)
    hidden, width, batch, steps = 6, 6, 2, 5
    dirs = 2 if bidirectional else 1
    size = dirs * layers * gates * hidden * (width + hidden + 2)
    arrays = [_RNG.normal(0, 1, (steps, batch, width)), _RNG.normal(0, 0.5, size),
              _RNG.normal(0, 1, (dirs * layers, batch, hidden))]
    if mode == 'lstm':
        arrays.append(_RNG.normal(0, 1, (dirs * layers, batch, hidden)))
    return (lambda *v: mx.sym.RNN(*v, mode=mode, state_size=hidden, num_layers=layers, bidirectional=bidirectional,
                                  state_outputs=True, p=0),
            [a.astype('float32') for a in arrays])


CASES = {
    'topk_both': (lambda x: mx.sym.topk(x, axis=1, k=2, ret_typ='both', dtype='int32'), [_A]),
    'topk_float16_values': (lambda x: mx.sym.topk(x, k=3, ret_typ='value'), [_A.astype('float16')]),
    'topk_ascending_flat': (lambda x: mx.sym.topk(x, axis=None, k=4, is_ascend=True), [_A]),
    'argsort': (lambda x: mx.sym.argsort(x, axis=0, is_ascend=False, dtype='int64'), [_A]),
    'arange_like': (lambda x: mx.sym.contrib.arange_like(x, start=0.5, step=0.25), [_A]),
    'arange_like_axis': (lambda x: mx.sym.contrib.arange_like(x, axis=1, start=1, step=0.5), [_A]),
    'arange': (lambda x: [mx.sym.arange(-5, None, -1, dtype='int32'), x], [_A]),
    'repeat': (lambda x: mx.sym.repeat(x, repeats=3, axis=-2), [_A]),
    'repeat_flat': (lambda x: mx.sym.repeat(x, repeats=2), [_A.astype('int64')]),
    'take_clip': (lambda x, i: mx.sym.take(x, i, axis=-1), [_A, _RNG.randint(-9, 9, (3, 2)).astype('float32')]),
    'take_wrap': (lambda x, i: mx.sym.take(x, i, axis=1, mode='wrap'),
                  [_A, _RNG.randint(-9, 9, (3, 2)).astype('float32')]),
    'one_hot': (lambda x: mx.sym.one_hot(x, depth=4, on_value=3, off_value=-1),
                [np.array([[0, 3, 5], [-1, 2, 1]], 'int64')]),
    'reverse': (lambda x: mx.sym.reverse(x, axis=(0, 2)), [_A]),
    'swapaxis': (lambda x: mx.sym.SwapAxis(x, dim1=0, dim2=2), [_A]),
    'slice': (lambda x: mx.sym.slice(x, begin=(None, 4, 5), end=(None, 1, 0), step=(None, -1, -2)), [_A]),
    'slice_like': (lambda x, y: mx.sym.slice_like(x, y, axes=(0, -1)), [_A, _A[:2, :3, :4]]),
    'gather_nd': (lambda x, i: mx.sym.gather_nd(x, i), [_A, np.array([[0, 3, 1], [4, 0, 2]], 'float32')]),
    'split_squeeze': (lambda x: mx.sym.split(x, num_outputs=5, axis=1, squeeze_axis=True), [_A]),
    'split_v2': (lambda x: mx.sym.split_v2(x, (1, 4), axis=2), [_A]),
    'norm': (lambda x: mx.sym.norm(x, ord=1, axis=1, keepdims=True), [_A]),
    'gemm2': (lambda x, y: mx.sym.linalg.gemm2(x, y, alpha=0.5, transpose_b=True), [_A, _A]),
    'reshape_codes': (lambda x: mx.sym.reshape(x, shape=(-4, 2, -1, -3)), [_A]),
    'reshape_reverse': (lambda x: mx.sym.reshape(x, shape=(-1, 0), reverse=True), [_A]),
    'broadcast_like_axes': (lambda x, y: mx.sym.broadcast_like(x, y, lhs_axes=(1,), rhs_axes=(0,)),
                            [_A[:, :1], _A]),
    'bilinear_resize': (lambda x: mx.sym.contrib.BilinearResize2D(x, scale_height=1.7, scale_width=0.5), [_IMG]),
    'upsampling': (lambda x: mx.sym.UpSampling(x, scale=3, sample_type='nearest', num_args=1), [_IMG]),
    'pad_reflect': (lambda x: mx.sym.pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 2, 3, 1, 4)), [_IMG]),
    'pad_constant': (lambda x: mx.sym.pad(x, mode='constant', constant_value=2.5,
                                          pad_width=(0, 0, 0, 0, 2, 3, 1, 4)), [_IMG]),
    'crop': (lambda x: mx.sym.Crop(x, h_w=(3, 4), offset=(1, 2)), [_IMG]),
    'crop_like': (lambda x, y: mx.sym.Crop(x, y, offset=(2, 1), num_args=2), [_IMG, _IMG[:, :, :2, :3]]),
    'sequence_mask': (lambda x, n: mx.sym.SequenceMask(x, n, use_sequence_length=True, axis=1, value=-5),
                      [_A, np.array([1, 5, 0, 2], 'float32')]),
    'sequence_reverse': (lambda x, n: mx.sym.SequenceReverse(x, n, use_sequence_length=True),
                         [_A, np.array([1, 4, 3, 2, 4], 'float32')]),
    'l2_normalization': (lambda x: mx.sym.L2Normalization(x, mode='spatial'), [_IMG]),
    'layer_norm_axis1': (lambda x, g, b: mx.sym.LayerNorm(x, g, b, axis=1),
                         [_A, _RNG.uniform(size=5).astype('float32'), _RNG.uniform(size=5).astype('float32')]),
    'pooling_full': (lambda x: mx.sym.Pooling(x, kernel=(3, 3), stride=(3, 4), pool_type='max',
                                              pooling_convention='full'), [_RNG.uniform(size=(1, 2, 10, 12))
                                                                           .astype('float32')]),
    'box_nms': (lambda x: mx.sym.contrib.box_nms(x, coord_start=1, score_index=0, force_suppress=True,
                                                 overlap_thresh=0.4, valid_thresh=0.3), [_BOXES]),
    'box_decode': (lambda d, a: mx.sym.contrib.box_decode(d, a, format='center', clip=0.5),
                   [_RNG.uniform(size=(2, 3, 4)).astype('float32'), _RNG.uniform(size=(1, 3, 4)).astype('float32')]),
    'softmax_length': (lambda x, n: mx.sym.softmax(x, n, use_length=True, axis=1, temperature=2.0),
                       [_A / 50, np.array([[1, 0, 5, 2, 3, 4]] * 4, 'int32')]),
    'softmax_output': (lambda x, label: mx.sym.SoftmaxOutput(x, label), [_A / 50, np.zeros((4, 5), 'float32')]),
    'broadcast_mod': (lambda x, y: mx.sym.broadcast_mod(x, y),
                      [np.array([[5, -5, 3, 7]], 'float32'), np.array([[0], [3], [-2]], 'float32')]),
    'broadcast_mod_int': (lambda x, y: mx.sym.broadcast_mod(x, y),
                          [np.array([[5, -5, 3, 7]], 'int64'), np.array([[0], [3], [-2]], 'int64')]),
    'where_rows': (lambda c, x, y: mx.sym.where(c, x, y), [np.array([1, 0, 1, 0], 'float32'), _A, -_A]),
    'tile_more_reps': (lambda x: mx.sym.tile(x, reps=(2, 1, 1, 3)), [_A]),
    'argmax_flat': (lambda x: mx.sym.argmax(x, axis=None, keepdims=True), [_A]),
    'selfatt_qk': (lambda x: mx.sym.contrib.interleaved_matmul_selfatt_qk(x, heads=2),
                   [_RNG.uniform(size=(3, 2, 12)).astype('float32')]),
    'roi_align': (lambda x, r: mx.sym.contrib.ROIAlign(x, r, pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=2),
                  [_RNG.uniform(size=(2, 3, 16, 16)).astype('float32'),
                   np.array([[1, 2, 2, 20, 14], [0, 0, 0, 31, 31], [-1, 0, 0, 4, 4]], 'float32')]),
    'rnn_lstm_bidirectional': _rnn_case('lstm', 1, True),
    'rnn_lstm_2_layers': _rnn_case('lstm', 2, False),
    'rnn_gru_2_layers': _rnn_case('gru', 2, False),
    'rnn_tanh': _rnn_case('rnn_tanh', 1, False),
    'rnn_relu_2_layers': _rnn_case('rnn_relu', 2, False),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_converter_runs_equal_in_onnxruntime(case, tmp_path):
    build, arrays = CASES[case]
    got, expected = _run(lambda *v: mx.sym.Group(build(*v)) if isinstance(build(*v), list) else build(*v),
                         arrays, tmp_path)
    assert len(got) == len(expected)
    # cuDNN's RNNs compute in TF32 on a GPU
    tolerance = kernel_tolerance(1e-4, 1e-4) if case.startswith('rnn_') else dict(rtol=1e-4, atol=1e-4)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype, case
        np.testing.assert_allclose(g, e, **tolerance)


def test_dynamic_export_keeps_plain_reshape_codes(tmp_path):
    got, expected = _run(lambda x: mx.sym.reshape(x, shape=(0, -1)), [_A], tmp_path, dynamic=True)
    np.testing.assert_allclose(got[0], expected[0])


def test_dynamic_export_refuses_shape_dependent_codes_naming_the_node(tmp_path):
    sym = mx.sym.reshape(mx.sym.var('x'), shape=(-3, 0), name='flatten_two')
    with pytest.raises(mx.MXNetError, match="Reshape.*flatten_two.*-3"):
        mx.onnx.export_model(sym, {}, [_A.shape], np.float32, str(tmp_path / 'x.onnx'), dynamic=True)


def test_unsupported_attribute_names_the_operator_and_node(tmp_path):
    sym = mx.sym.topk(mx.sym.var('x'), k=2, ret_typ='mask', name='masked')
    with pytest.raises(mx.MXNetError, match="'topk'.*'masked'.*mask"):
        mx.onnx.export_model(sym, {}, [_A.shape], np.float32, str(tmp_path / 'x.onnx'))


def test_every_converted_operator_is_listed():
    ops = mx.onnx.get_operator_support()
    for op in ('topk', 'RNN', 'Pad', 'Crop', 'UpSampling', '_contrib_box_nms', 'SequenceMask', 'take',
               'one_hot', '_split_v2', 'L2Normalization', 'LogisticRegressionOutput', '_arange'):
        assert op in ops
