"""Small valid calls of every registry operator, for ``bench_op_overhead``.

:func:`case` builds, for one :class:`~neomx.operator.registry.OpSpec`, the positional
input arrays and the keyword attributes of a call on small inputs. Generic inputs come
from the operator's declaration: its required attributes get a small value of their
kind, its data input a small float32 array, and its other inputs the shapes the
operator's ``infer_args`` gives (the data's shape where it has none). ``OVERRIDES``
gives the calls whose inputs the declaration cannot tell (indices, matched shapes,
square matrices); ``SKIPPED`` lists the operators no standalone call can exercise, each
with the reason.
"""
import numpy as np

import neomx as mx
from neomx.operator import registry

_F32 = 'float32'


def _u(*shape, low=-1.0, high=1.0, dtype=_F32):
    """A uniform array of fixed values (seeded by its shape, so both sides get the same)."""
    rng = np.random.RandomState(sum(shape) + len(shape))
    return mx.nd.array(rng.uniform(low, high, size=shape), dtype=dtype)


def _pos(*shape):
    return _u(*shape, low=0.5, high=1.5)


def _idx(values, dtype=_F32):
    return mx.nd.array(np.asarray(values), dtype=dtype)


def _spd(n):
    """A symmetric positive definite n x n matrix."""
    a = np.random.RandomState(n).uniform(-1, 1, size=(n, n))
    return mx.nd.array(a @ a.T + n * np.eye(n), dtype=_F32)


def _lower(n):
    return mx.nd.array(np.tril(np.random.RandomState(n).uniform(0.5, 1.5, size=(n, n))), dtype=_F32)


def _rnn_params(mode, layers, input_size, hidden):
    gates = {'rnn_relu': 1, 'rnn_tanh': 1, 'gru': 3, 'lstm': 4}[mode]
    n = 0
    for layer in range(layers):
        n += gates * hidden * ((input_size if layer == 0 else hidden) + hidden + 2)
    return _u(n)


# Operator -> () returning (inputs, attributes): where generic inputs do not fit.
OVERRIDES = {
    # mx.npx's own operators
    '_npx_reshape': lambda: ([_u(3, 4)], dict(newshape=(-2, 2, -1))),
    '_npx_constraint_check': lambda: ([_idx([1, 1, 1], 'bool')], dict(msg='bad')),
    '_npi_normal_n': lambda: ([_u(4), _pos(4)], dict(loc=None, scale=None, size=(2,))),
    '_npi_uniform_n': lambda: ([_u(4), _pos(4)], dict(low=None, high=None, size=(2,))),
    'Correlation': lambda: ([_u(1, 3, 8, 8), _u(1, 3, 8, 8)], dict(max_displacement=1, pad_size=1)),
    '_histogram': lambda: ([_u(16, low=0.0, high=1.0)], dict(bin_cnt=5, range=(0.0, 1.0))),
    '_contrib_quantize': lambda: ([_u(4, 4), _idx([-1.0]), _idx([1.0])], {}),
    '_contrib_dequantize': lambda: ([_idx(np.arange(16).reshape(4, 4), 'uint8'), _idx([-1.0]), _idx([1.0])], {}),
    '_contrib_PSROIPooling': lambda: ([_u(1, 8, 8, 8), _idx([[0, 0, 0, 7, 7], [0, 2, 2, 5, 5]])],
                                      dict(spatial_scale=1.0, output_dim=2, pooled_size=2)),
    '_contrib_RROIAlign': lambda: ([_u(1, 3, 8, 8), _idx([[0, 4, 4, 4, 3, 30], [0, 3, 5, 2, 2, -15]])],
                                   dict(pooled_size=(2, 2), spatial_scale=1.0)),
    '_contrib_Proposal': lambda: ([_pos(1, 24, 4, 4), _u(1, 48, 4, 4, low=-0.1, high=0.1), _idx([[64, 64, 1]])],
                                  dict(rpn_pre_nms_top_n=50, rpn_post_nms_top_n=10, rpn_min_size=1)),
    '_contrib_MultiProposal': lambda: ([_pos(2, 24, 4, 4), _u(2, 48, 4, 4, low=-0.1, high=0.1),
                                        _idx([[64, 64, 1], [64, 64, 1]])],
                                       dict(rpn_pre_nms_top_n=50, rpn_post_nms_top_n=10, rpn_min_size=1)),
    'Convolution': lambda: ([_u(1, 3, 8, 8), _u(4, 3, 3, 3), _u(4)], dict(kernel=(3, 3), num_filter=4, pad=(1, 1))),
    # MXNet's Deconvolution defaults to no_bias=True (Convolution to False): the bias needs it off
    'Deconvolution': lambda: ([_u(1, 3, 8, 8), _u(3, 4, 3, 3), _u(4)],
                              dict(kernel=(3, 3), num_filter=4, no_bias=False)),
    '_contrib_DeformableConvolution': lambda: (
        [_u(1, 3, 8, 8), _u(1, 18, 8, 8, low=-0.5, high=0.5), _u(4, 3, 3, 3), _u(4)],
        dict(kernel=(3, 3), num_filter=4, pad=(1, 1))),
    '_contrib_ModulatedDeformableConvolution': lambda: (
        [_u(1, 3, 8, 8), _u(1, 18, 8, 8, low=-0.5, high=0.5), _pos(1, 9, 8, 8), _u(4, 3, 3, 3), _u(4)],
        dict(kernel=(3, 3), num_filter=4, pad=(1, 1))),
    'FullyConnected': lambda: ([_u(8, 16), _u(4, 16), _u(4)], dict(num_hidden=4)),
    'Pooling': lambda: ([_u(1, 3, 8, 8)], dict(kernel=(2, 2), stride=(2, 2), pool_type='max')),
    'Pooling_v1': lambda: ([_u(1, 3, 8, 8)], dict(kernel=(2, 2), stride=(2, 2), pool_type='max')),
    'BatchNorm': lambda: ([_u(2, 3, 4, 4), _pos(3), _u(3), _u(3), _pos(3)], {}),
    'BatchNorm_v1': lambda: ([_u(2, 3, 4, 4), _pos(3), _u(3), _u(3), _pos(3)], {}),
    '_contrib_SyncBatchNorm': lambda: ([_u(2, 3, 4, 4), _pos(3), _u(3), _u(3), _pos(3)], dict(key='b')),
    'InstanceNorm': lambda: ([_u(2, 3, 4, 4), _pos(3), _u(3)], {}),
    'LayerNorm': lambda: ([_u(2, 3, 4), _pos(4), _u(4)], {}),
    'GroupNorm': lambda: ([_u(2, 4, 4, 4), _pos(2), _u(2)], dict(num_groups=2)),
    'Embedding': lambda: ([_idx([[0, 2], [1, 3]]), _u(5, 4)], dict(input_dim=5, output_dim=4)),
    'one_hot': lambda: ([_idx([0, 2, 1])], dict(depth=4)),
    '_onehot_encode': lambda: ([_idx([0, 2, 1]), _u(3, 4)], {}),
    'take': lambda: ([_u(5, 4), _idx([0, 2, 4])], {}),
    'batch_take': lambda: ([_u(3, 4), _idx([0, 2, 3])], {}),
    'pick': lambda: ([_u(3, 4), _idx([0, 2, 3])], {}),
    'gather_nd': lambda: ([_u(3, 4), _idx([[0, 2], [1, 3]])], {}),
    'scatter_nd': lambda: ([_u(2), _idx([[0, 2], [1, 3]])], dict(shape=(3, 4))),
    '_scatter_set_nd': lambda: ([_u(3, 4), _u(2), _idx([[0, 2], [1, 3]])], dict(shape=(3, 4))),
    '_ravel_multi_index': lambda: ([_idx([[0, 2], [1, 3]])], dict(shape=(3, 4))),
    '_unravel_index': lambda: ([_idx([1, 7, 11])], dict(shape=(3, 4))),
    'fill_element_0index': lambda: ([_u(3, 4), _u(3), _idx([0, 2, 3])], {}),
    '_contrib_index_copy': lambda: ([_u(5, 4), _idx([0, 2]), _u(2, 4)], {}),
    '_contrib_boolean_mask': lambda: ([_u(4, 3), _idx([1, 0, 1, 1])], {}),
    'where': lambda: ([_idx([[1, 0], [0, 1]]), _u(2, 2), _u(2, 2)], {}),
    'SequenceMask': lambda: ([_u(4, 2, 3), _idx([2, 4])], dict(use_sequence_length=True)),
    'SequenceLast': lambda: ([_u(4, 2, 3), _idx([2, 4])], dict(use_sequence_length=True)),
    'SequenceReverse': lambda: ([_u(4, 2, 3), _idx([2, 4])], dict(use_sequence_length=True)),
    'SoftmaxOutput': lambda: ([_u(4, 5), _idx([0, 1, 2, 4])], {}),
    'softmax_cross_entropy': lambda: ([_u(4, 5), _idx([0, 1, 2, 4])], {}),
    '_softmax_cross_entropy_per_position': lambda: ([_u(4, 5), _idx([0, 1, 2, 4])], {}),
    'SVMOutput': lambda: ([_u(4, 5), _idx([0, 1, 2, 4])], {}),
    'CTCLoss': lambda: ([_u(6, 2, 4), _idx([[1, 2], [3, 1]])], {}),
    'Reshape': lambda: ([_u(2, 3, 4)], dict(shape=(6, 4))),
    'reshape_like': lambda: ([_u(2, 6), _u(3, 4)], {}),
    'broadcast_to': lambda: ([_u(1, 4)], dict(shape=(3, 4))),
    'broadcast_axis': lambda: ([_u(1, 4)], dict(axis=0, size=3)),
    'broadcast_like': lambda: ([_u(1, 4), _u(3, 4)], {}),
    'slice': lambda: ([_u(4, 4)], dict(begin=(1, 0), end=(3, 2))),
    'slice_axis': lambda: ([_u(4, 4)], dict(axis=0, begin=1, end=3)),
    'slice_like': lambda: ([_u(4, 4), _u(2, 3)], {}),
    '_slice_assign': lambda: ([_u(4, 4), _u(2, 2)], dict(begin=(1, 0), end=(3, 2))),
    '_slice_assign_scalar': lambda: ([_u(4, 4)], dict(begin=(1, 0), end=(3, 2), scalar=1.0)),
    'Crop': lambda: ([_u(1, 3, 8, 8)], dict(num_args=1, h_w=(4, 4))),
    'Pad': lambda: ([_u(1, 3, 4, 4)], dict(mode='constant', pad_width=(0, 0, 0, 0, 1, 1, 1, 1))),
    'SliceChannel': lambda: ([_u(2, 4, 3)], dict(num_outputs=2)),
    '_split_v2': lambda: ([_u(2, 4, 3)], dict(indices=(2,), axis=1)),
    'tile': lambda: ([_u(3, 4)], dict(reps=(2, 1))),
    'repeat': lambda: ([_u(3, 4)], dict(repeats=2)),
    'depth_to_space': lambda: ([_u(1, 4, 2, 2)], dict(block_size=2)),
    'space_to_depth': lambda: ([_u(1, 1, 4, 4)], dict(block_size=2)),
    'im2col': lambda: ([_u(1, 3, 4, 4)], dict(kernel=(2, 2))),
    'col2im': lambda: ([_u(1, 12, 9)], dict(output_size=(4, 4), kernel=(2, 2))),
    'UpSampling': lambda: ([_u(1, 3, 4, 4)], dict(scale=2, sample_type='nearest', num_args=1)),
    '_contrib_BilinearResize2D': lambda: ([_u(1, 3, 4, 4)], dict(height=8, width=8)),
    '_contrib_AdaptiveAvgPooling2D': lambda: ([_u(1, 3, 4, 4)], dict(output_size=(2, 2))),
    'ROIPooling': lambda: ([_u(1, 3, 8, 8), _idx([[0, 0, 0, 4, 4], [0, 2, 2, 7, 7]])],
                           dict(pooled_size=(2, 2), spatial_scale=1.0)),
    '_contrib_ROIAlign': lambda: ([_u(1, 3, 8, 8), _idx([[0, 0, 0, 4, 4], [0, 2, 2, 7, 7]])],
                                  dict(pooled_size=(2, 2), spatial_scale=1.0)),
    'GridGenerator': lambda: ([_u(1, 6)], dict(transform_type='affine', target_shape=(4, 4))),
    'BilinearSampler': lambda: ([_u(1, 3, 4, 4), _u(1, 2, 4, 4)], {}),
    'SpatialTransformer': lambda: ([_u(1, 3, 4, 4), _u(1, 6)],
                                   dict(target_shape=(4, 4), transform_type='affine', sampler_type='bilinear')),
    'L2Normalization': lambda: ([_u(2, 3, 4)], {}),
    'LRN': lambda: ([_u(1, 4, 3, 3)], dict(nsize=3)),
    'RNN': lambda: ([_u(3, 2, 4), _rnn_params('lstm', 1, 4, 5), _u(1, 2, 5), _u(1, 2, 5)],
                    dict(mode='lstm', state_size=5, num_layers=1, state_outputs=True)),
    '_rnn_param_concat': lambda: ([_u(4, 3), _u(2, 3)], dict(dim=0, num_args=2)),
    'batch_dot': lambda: ([_u(2, 3, 4), _u(2, 4, 5)], {}),
    'dot': lambda: ([_u(4, 5), _u(5, 3)], {}),
    'khatri_rao': lambda: ([_u(2, 3), _u(4, 3)], {}),
    '_linalg_gemm': lambda: ([_u(3, 4), _u(4, 5), _u(3, 5)], {}),
    '_linalg_gemm2': lambda: ([_u(3, 4), _u(4, 5)], {}),
    '_linalg_potrf': lambda: ([_spd(4)], {}),
    '_linalg_potri': lambda: ([_lower(4)], {}),
    '_linalg_inverse': lambda: ([_spd(4)], {}),
    '_linalg_det': lambda: ([_spd(4)], {}),
    '_linalg_slogdet': lambda: ([_spd(4)], {}),
    '_linalg_syevd': lambda: ([_spd(4)], {}),
    '_linalg_trmm': lambda: ([_lower(4), _u(4, 3)], {}),
    '_linalg_trsm': lambda: ([_lower(4), _u(4, 3)], {}),
    '_linalg_sumlogdiag': lambda: ([_spd(4)], {}),
    '_linalg_gelqf': lambda: ([_u(3, 4)], {}),
    '_linalg_makediag': lambda: ([_u(4)], {}),
    '_linalg_maketrian': lambda: ([_u(6)], {}),
    'diag': lambda: ([_u(4, 4)], {}),
    'transpose': lambda: ([_u(2, 3, 4)], dict(axes=(2, 0, 1))),
    'SwapAxis': lambda: ([_u(2, 3, 4)], dict(dim1=0, dim2=2)),
    'expand_dims': lambda: ([_u(3, 4)], dict(axis=1)),
    'squeeze': lambda: ([_u(3, 1, 4)], {}),
    'stack': lambda: ([_u(3, 4), _u(3, 4)], dict(num_args=2)),
    'Concat': lambda: ([_u(3, 4), _u(3, 4)], dict(num_args=2)),
    'add_n': lambda: ([_u(3, 4), _u(3, 4)], dict(num_args=2)),
    'amp_multicast': lambda: ([_u(3, 4), _u(3, 4)], dict(num_outputs=2)),
    'amp_cast': lambda: ([_u(3, 4)], dict(dtype='float16')),
    'Cast': lambda: ([_u(3, 4)], dict(dtype='float16')),
    'topk': lambda: ([_u(3, 6)], dict(k=2)),
    'moments': lambda: ([_u(3, 4)], dict(axes=(0,))),
    'arccosh': lambda: ([_u(3, 4, low=1.5, high=3.0)], {}),
    'arctanh': lambda: ([_u(3, 4, low=-0.5, high=0.5)], {}),
    'erfinv': lambda: ([_u(3, 4, low=-0.5, high=0.5)], {}),
    'multi_all_finite': lambda: ([_u(3, 4), _u(5)], dict(num_arrays=2)),
    'multi_sum_sq': lambda: ([_u(3, 4), _u(5)], dict(num_arrays=2)),
    'reset_arrays': lambda: ([_u(3, 4), _u(5)], dict(num_arrays=2)),
    '_sample_multinomial': lambda: ([_idx([[0.2, 0.3, 0.5], [0.5, 0.25, 0.25]])], {}),
    '_random_randint': lambda: ([], dict(low=0, high=10, shape=(3, 4))),
    **{n: (lambda: ([], dict(shape=(3, 4)))) for n in (
        '_random_exponential', '_random_gamma', '_random_generalized_negative_binomial',
        '_random_negative_binomial', '_random_normal', '_random_poisson', '_random_uniform')},
    '_eye': lambda: ([], dict(N=4)),
    '_arange': lambda: ([], dict(start=0, stop=12)),
    '_linspace': lambda: ([], dict(start=0, stop=1, num=12)),
    '_contrib_box_nms': lambda: ([_idx([[0, 0.9, 0, 0, 2, 2], [0, 0.8, 0.1, 0.1, 2, 2], [1, 0.7, 3, 3, 4, 4]])], {}),
    '_contrib_box_iou': lambda: ([_idx([[0, 0, 2, 2], [1, 1, 3, 3]]), _idx([[0, 0, 1, 1], [1, 1, 2, 2]])], {}),
    '_contrib_bipartite_matching': lambda: ([_u(3, 4, low=0, high=1)], dict(threshold=0.1)),
    '_contrib_box_encode': lambda: (
        [_idx([[1, 0]]), _idx([[0, 1]]), _idx([[[0, 0, 2, 2], [1, 1, 3, 3]]]),
         _idx([[[0, 0, 2, 2], [1, 1, 3, 3]]]), _idx([0, 0, 0, 0]), _idx([0.1, 0.1, 0.2, 0.2])], {}),
    '_contrib_box_decode': lambda: ([_u(1, 2, 4), _idx([[[0, 0, 2, 2], [1, 1, 3, 3]]])], {}),
    '_contrib_MultiBoxPrior': lambda: ([_u(1, 3, 4, 4)], dict(sizes=(0.5,), ratios=(1.0,))),
    # class scores (batch, classes, anchors), offsets (batch, anchors * 4), anchors (1, anchors, 4)
    '_contrib_MultiBoxDetection': lambda: (
        [_u(1, 2, 4, low=0, high=1), _u(1, 16, low=-0.1, high=0.1),
         _idx([[[0, 0, .5, .5], [.5, 0, 1, .5], [0, .5, .5, 1], [.5, .5, 1, 1]]])], {}),
    # anchors, labels (batch, objects, [class, box]), class scores (batch, classes, anchors)
    '_contrib_MultiBoxTarget': lambda: (
        [_idx([[[0, 0, .5, .5], [.5, 0, 1, .5], [0, .5, .5, 1], [.5, .5, 1, 1]]]),
         _idx([[[0, .1, .1, .4, .4]]]), _u(1, 2, 4, low=0, high=1)], {}),
    '_contrib_interleaved_matmul_selfatt_qk': lambda: ([_u(4, 2, 3 * 2 * 4)], dict(heads=2)),
    '_contrib_interleaved_matmul_selfatt_valatt': lambda: ([_u(4, 2, 3 * 2 * 4), _u(4, 4, 4)], dict(heads=2)),
    '_contrib_interleaved_matmul_encdec_qk': lambda: ([_u(4, 2, 8), _u(5, 2, 16)], dict(heads=2)),
    '_contrib_interleaved_matmul_encdec_valatt': lambda: ([_u(5, 2, 16), _u(4, 4, 5)], dict(heads=2)),
    '_image_to_tensor': lambda: ([_u(4, 4, 3, low=0, high=255, dtype='uint8')], {}),
    '_image_normalize': lambda: ([_u(3, 4, 4)], dict(mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2))),
    '_image_crop': lambda: ([_u(6, 6, 3)], dict(x=1, y=1, width=3, height=3)),
    '_image_resize': lambda: ([_u(6, 6, 3, low=0, high=255, dtype='uint8')], dict(size=(4, 4))),
    '_contrib_bipartite_matching': lambda: ([_u(1, 3, 4, low=0, high=1)], dict(threshold=0.1)),
    'khatri_rao': lambda: ([_u(2, 3), _u(4, 3)], dict(num_args=2)),
    '_linalg_extracttrian': lambda: ([_u(4, 4)], {}),
    'lamb_update_phase2': lambda: ([_u(3, 4), _u(3, 4), _pos(1), _pos(1)], dict(lr=0.01)),
    'mp_lamb_update_phase2': lambda: ([_u(3, 4), _u(3, 4), _pos(1), _pos(1), _u(3, 4)], dict(lr=0.01)),
    'multi_sgd_update': lambda: ([_u(3, 4), _u(3, 4), _u(5), _u(5)], dict(lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2)),
    'multi_sgd_mom_update': lambda: ([_u(3, 4), _u(3, 4), _u(3, 4), _u(5), _u(5), _u(5)],
                                     dict(lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2)),
    'multi_mp_sgd_update': lambda: ([_u(3, 4), _u(3, 4), _u(3, 4), _u(5), _u(5), _u(5)],
                                    dict(lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2)),
    'multi_mp_sgd_mom_update': lambda: ([_u(3, 4), _u(3, 4), _u(3, 4), _u(3, 4), _u(5), _u(5), _u(5), _u(5)],
                                        dict(lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2)),
    '_image_random_brightness': lambda: ([_u(4, 4, 3, low=0, high=1)], dict(min_factor=0.5, max_factor=1.5)),
    '_image_random_contrast': lambda: ([_u(4, 4, 3, low=0, high=1)], dict(min_factor=0.5, max_factor=1.5)),
    '_image_random_saturation': lambda: ([_u(4, 4, 3, low=0, high=1)], dict(min_factor=0.5, max_factor=1.5)),
    '_image_random_hue': lambda: ([_u(4, 4, 3, low=0, high=1)], dict(min_factor=-0.1, max_factor=0.1)),
    '_image_random_color_jitter': lambda: ([_u(4, 4, 3, low=0, high=1)],
                                           dict(brightness=0.1, contrast=0.1, saturation=0.1, hue=0.1)),
    '_image_adjust_lighting': lambda: ([_u(4, 4, 3)], dict(alpha=(0.1, 0.1, 0.1))),
}
for _name in ('_image_flip_left_right', '_image_flip_top_bottom', '_image_random_brightness',
              '_image_random_contrast', '_image_random_saturation', '_image_random_hue',
              '_image_random_color_jitter', '_image_random_lighting',
              '_image_random_flip_left_right', '_image_random_flip_top_bottom'):
    OVERRIDES.setdefault(_name, lambda: ([_u(4, 4, 3, low=0, high=1)], {}))
for _name in ('_random_normal_like', '_random_uniform_like', '_random_exponential_like',
              '_random_gamma_like', '_random_poisson_like', '_random_negative_binomial_like',
              '_random_generalized_negative_binomial_like'):
    OVERRIDES.setdefault(_name, lambda: ([_u(3, 4)], {}))
for _name in ('_sample_normal', '_sample_uniform', '_sample_gamma'):
    OVERRIDES.setdefault(_name, lambda: ([_pos(3), _pos(3) + 1], {}))
for _name in ('_sample_exponential', '_sample_poisson'):
    OVERRIDES.setdefault(_name, lambda: ([_pos(3)], {}))
OVERRIDES.setdefault('_sample_negative_binomial', lambda: ([_idx([2, 3, 4]), _idx([0.3, 0.5, 0.7])], {}))
OVERRIDES.setdefault('_sample_generalized_negative_binomial', lambda: ([_pos(3), _pos(3)], {}))

# Operators that no standalone call on arrays exercises, with the reason.
SKIPPED = {
    'Custom': 'runs a user-registered CustomOp; no operator of its own to time',
    '_foreach': 'control flow: its body is a subgraph, called through mx.nd.contrib.foreach',
    '_while_loop': 'control flow: its body is a subgraph, called through mx.nd.contrib.while_loop',
    '_cond': 'control flow: its branches are subgraphs, called through mx.nd.contrib.cond',
}

# Required attributes filled generically, by name first, then by kind.
_ATTR_BY_NAME = {'num_hidden': 4, 'num_filter': 4, 'axis': 0, 'scalar': 2.0, 'shape': (3, 4),
                 'lr': 0.01, 'num_outputs': 2, 'depth': 4, 'kernel': (2, 2), 'block_size': 2,
                 'input_dim': 5, 'output_dim': 4, 'size': 3}
_ATTR_BY_KIND = {'int': 2, 'float': 0.5, 'boolean': False, 'Shape(tuple)': (2, 2), 'tuple of float': (0.5,),
                 'string': 'a', 'dtype': 'float32'}


def _attrs(spec):
    out = {}
    for name in spec.required:
        attr = spec.attrs[name]
        if attr.choices:
            out[name] = attr.choices[0]
        elif name in _ATTR_BY_NAME:
            out[name] = _ATTR_BY_NAME[name]
        elif attr.kind in _ATTR_BY_KIND:
            out[name] = _ATTR_BY_KIND[attr.kind]
    return out


def _generic(spec):
    attrs = _attrs(spec)
    if spec.variadic:
        return [_u(3, 4), _pos(3, 4)], attrs
    names = spec.input_names(spec.parse_attrs(attrs))
    if not names:
        return [], attrs
    data_shape = (3, 4)
    shapes = {n: None for n in names}
    shapes[names[0]] = data_shape
    if spec.infer_args is not None:
        shapes.update(spec.infer_args(dict(shapes), spec.parse_attrs(attrs)) or {})
    # Second and later inputs are positive: divisors, exponents, states such as variances.
    arrays = [_u(*shapes[names[0]])] + [_pos(*(shapes[n] or data_shape)) for n in names[1:]]
    return arrays, attrs


def case(name, spec):
    """(inputs, attributes) of a small valid call of operator ``name``; raises KeyError for
    operators in :data:`SKIPPED`."""
    if name in SKIPPED:
        raise KeyError(SKIPPED[name])
    make = OVERRIDES.get(name)
    return make() if make is not None else _generic(spec)


def nd_function(name):
    """The ``mx.nd`` function generated for operator ``name`` (``mx.nd._internal`` holds them all)."""
    return getattr(mx.nd, name, None) or getattr(mx.nd._internal, name)


def all_operators():
    """{name: OpSpec} of every registered operator, without aliases, sorted by name."""
    return dict(sorted((spec.name, spec) for spec in registry.all_ops().values()))
