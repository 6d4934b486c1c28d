"""Operators with one or more inputs, and the dtype questions tests/test_infer_type.py asks
of them, written for any MXNet-like module ``mx``.

Each operator is built from Symbol JSON (variables ``in0``, ``in1``... then the operator), so
MXNet and neomx load the same graph without naming its Python function. Run with MXNet
1.9.1's interpreter, this file prints MXNet's answers as JSON
(``~/mxref/bin/python tests/infer_type_cases.py > tests/data/infer_type_mxnet.json``).
"""
import json
import sys

_LR = {'lr': '0.1'}
_MULTI = {'lrs': '(0.1,)', 'wds': '(0.0,)', 'num_weights': '1'}
_BINARY = ['_equal', '_greater', '_greater_equal', '_hypot', '_lesser', '_lesser_equal',
           '_logical_and', '_logical_or', '_logical_xor', '_maximum', '_minimum', '_mod',
           '_not_equal', '_power', 'batch_dot', 'broadcast_add', 'broadcast_div',
           'broadcast_equal', 'broadcast_greater', 'broadcast_greater_equal', 'broadcast_hypot',
           'broadcast_lesser', 'broadcast_lesser_equal', 'broadcast_like', 'broadcast_logical_and',
           'broadcast_logical_or', 'broadcast_logical_xor', 'broadcast_maximum',
           'broadcast_minimum', 'broadcast_mod', 'broadcast_mul', 'broadcast_not_equal',
           'broadcast_power', 'broadcast_sub', 'dot', 'elemwise_add', 'elemwise_div',
           'elemwise_mul', 'elemwise_sub', 'reshape_like', 'slice_like', '_contrib_allclose',
           '_contrib_box_iou', '_identity_with_attr_like_rhs', '_linalg_gemm2', '_linalg_trmm',
           '_linalg_trsm', '_onehot_encode']

# operators with one input; those with required attributes get them in _ONE_INPUT_ATTRS
_ONE_INPUT = (
    'Activation', 'BlockGrad', 'Cast', 'Dropout', 'Flatten', 'GridGenerator', 'L2Normalization',
    'LRN', 'MakeLoss', 'Pad', 'Pooling', 'Pooling_v1', 'Reshape', 'SliceChannel',
    'SoftmaxActivation', 'SwapAxis', '_contrib_AdaptiveAvgPooling2D', '_contrib_MultiBoxPrior',
    '_contrib_arange_like', '_contrib_bipartite_matching', '_contrib_box_nms',
    '_contrib_div_sqrt_dim', '_contrib_gradientmultiplier', '_contrib_index_array',
    '_contrib_interleaved_matmul_selfatt_qk', '_contrib_quadratic', '_contrib_round_ste',
    '_contrib_sign_ste', '_copy', '_copyto', '_div_scalar', '_equal_scalar',
    '_greater_equal_scalar', '_greater_scalar', '_hypot_scalar', '_image_adjust_lighting',
    '_image_crop', '_image_flip_left_right', '_image_flip_top_bottom', '_image_normalize',
    '_image_random_brightness', '_image_random_color_jitter', '_image_random_contrast',
    '_image_random_flip_left_right', '_image_random_flip_top_bottom', '_image_random_hue',
    '_image_random_lighting', '_image_random_saturation', '_image_resize', '_image_to_tensor',
    '_lesser_equal_scalar', '_lesser_scalar', '_linalg_det', '_linalg_extractdiag',
    '_linalg_extracttrian', '_linalg_gelqf', '_linalg_inverse', '_linalg_makediag',
    '_linalg_maketrian', '_linalg_potrf', '_linalg_potri', '_linalg_slogdet', '_linalg_sumlogdiag',
    '_linalg_syevd', '_linalg_syrk', '_logical_and_scalar', '_logical_or_scalar',
    '_logical_xor_scalar', '_maximum_scalar', '_minimum_scalar', '_minus_scalar', '_mod_scalar',
    '_mul_scalar', '_not_equal_scalar', '_np_cumsum', '_plus_scalar', '_power_scalar',
    '_random_exponential_like', '_random_gamma_like', '_random_generalized_negative_binomial_like',
    '_random_negative_binomial_like', '_random_normal_like', '_random_poisson_like',
    '_random_uniform_like', '_ravel_multi_index', '_rdiv_scalar', '_rminus_scalar', '_rmod_scalar',
    '_rpower_scalar', '_sample_exponential', '_sample_multinomial', '_sample_poisson', '_shuffle',
    '_slice_assign_scalar', '_split_v2', '_unravel_index', 'abs', 'all_finite', 'amp_cast',
    'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax', 'argmax_channel',
    'argmin', 'argsort', 'broadcast_axis', 'broadcast_to', 'cbrt', 'ceil', 'clip', 'col2im', 'cos',
    'cosh', 'degrees', 'depth_to_space', 'diag', 'erf', 'erfinv', 'exp', 'expand_dims', 'expm1',
    'fix', 'floor', 'gamma', 'gammaln', 'hard_sigmoid', 'im2col', 'log', 'log10', 'log1p', 'log2',
    'log_softmax', 'logical_not', 'make_loss', 'max', 'mean', 'min', 'moments', 'nanprod',
    'nansum', 'negative', 'norm', 'one_hot', 'ones_like', 'prod', 'radians', 'rcbrt', 'reciprocal',
    'relu', 'repeat', 'reverse', 'rint', 'round', 'rsqrt', 'shape_array', 'sigmoid', 'sign', 'sin',
    'sinh', 'size_array', 'slice', 'slice_axis', 'smooth_l1', 'softmin', 'softsign', 'sort',
    'space_to_depth', 'sqrt', 'square', 'squeeze', 'sum', 'tan', 'tanh', 'tile', 'topk',
    'transpose', 'trunc', 'zeros_like',
)
_ONE_INPUT_ATTRS = {
    'Activation': {'act_type': 'relu'},
    'Cast': {'dtype': 'float16'},
    'GridGenerator': {'transform_type': 'affine', 'target_shape': '(2, 2)'},
    'LRN': {'nsize': '3'},
    'Pad': {'mode': 'constant', 'pad_width': '(0, 0, 0, 0, 1, 1, 1, 1)'},
    'SliceChannel': {'num_outputs': '2'},
    '_contrib_bipartite_matching': {'threshold': '0.5'},
    '_contrib_interleaved_matmul_selfatt_qk': {'heads': '2'},
    '_slice_assign_scalar': {'begin': '(0,)', 'end': '(1,)'},
    '_image_adjust_lighting': {'alpha': '(0.1, 0.1, 0.1)'},
    '_image_crop': {'x': '0', 'y': '0', 'width': '2', 'height': '2'},
    '_image_random_brightness': {'min_factor': '0.5', 'max_factor': '1.5'},
    '_image_random_color_jitter': {'brightness': '0.1', 'contrast': '0.1', 'saturation': '0.1', 'hue': '0.1'},
    '_image_random_contrast': {'min_factor': '0.5', 'max_factor': '1.5'},
    '_image_random_hue': {'min_factor': '0.5', 'max_factor': '1.5'},
    '_image_random_saturation': {'min_factor': '0.5', 'max_factor': '1.5'},
    '_ravel_multi_index': {'shape': '(2, 3)'},
    '_split_v2': {'indices': '(0, 1)'},
    '_unravel_index': {'shape': '(2, 3)'},
    'amp_cast': {'dtype': 'float16'},
    'clip': {'a_min': '0', 'a_max': '1'},
    'col2im': {'output_size': '(4, 4)', 'kernel': '(2, 2)'},
    'slice': {'begin': '(0,)', 'end': '(1,)'},
    'depth_to_space': {'block_size': '2'},
    'expand_dims': {'axis': '0'},
    'reverse': {'axis': '0'},
    'im2col': {'kernel': '(2, 2)'},
    'one_hot': {'depth': '3'},
    'repeat': {'repeats': '2'},
    'slice_axis': {'axis': '0', 'begin': '0', 'end': '1'},
    'space_to_depth': {'block_size': '2'},
    'tile': {'reps': '(2,)'},
}

# operator -> (attributes, number of inputs)
OPERATORS = dict(
    {name: (_ONE_INPUT_ATTRS.get(name, {}), 1) for name in _ONE_INPUT},
    **{name: ({}, 2) for name in _BINARY},
    BatchNorm=({}, 5),
    BilinearSampler=({}, 2),
    CTCLoss=({'use_data_lengths': 'True', 'use_label_lengths': 'True'}, 4),
    Concat=({'num_args': '2'}, 2),
    Convolution=({'kernel': '(3, 3)', 'num_filter': '4'}, 3),
    Crop=({'num_args': '2'}, 2),
    Deconvolution=({'kernel': '(3, 3)', 'num_filter': '4', 'no_bias': 'False'}, 3),
    Embedding=({'input_dim': '10', 'output_dim': '4'}, 2),
    FullyConnected=({'num_hidden': '4'}, 3),
    GroupNorm=({}, 3),
    InstanceNorm=({}, 3),
    LayerNorm=({}, 3),
    LeakyReLU=({'act_type': 'prelu'}, 2),
    LinearRegressionOutput=({}, 2),
    LogisticRegressionOutput=({}, 2),
    MAERegressionOutput=({}, 2),
    RNN=({'state_size': '4', 'num_layers': '1', 'mode': 'lstm'}, 4),
    ROIPooling=({'pooled_size': '(2, 2)', 'spatial_scale': '1.0'}, 2),
    SVMOutput=({}, 2),
    SequenceLast=({'use_sequence_length': 'True'}, 2),
    SequenceMask=({'use_sequence_length': 'True'}, 2),
    SequenceReverse=({'use_sequence_length': 'True'}, 2),
    SoftmaxOutput=({}, 2),
    SpatialTransformer=({'transform_type': 'affine', 'sampler_type': 'bilinear',
                         'target_shape': '(2, 2)'}, 2),
    UpSampling=({'scale': '2', 'sample_type': 'bilinear', 'num_args': '2', 'num_filter': '3'}, 2),
    _adamw_update=(dict(_LR, eta='1.0'), 5),
    _contrib_BilinearResize2D=({'mode': 'like'}, 2),
    _contrib_DeformableConvolution=({'kernel': '(3, 3)', 'num_filter': '4'}, 4),
    _contrib_ModulatedDeformableConvolution=({'kernel': '(3, 3)', 'num_filter': '4'}, 5),
    _contrib_ROIAlign=({'pooled_size': '(2, 2)', 'spatial_scale': '1.0'}, 2),
    _contrib_SyncBatchNorm=({'key': 'k'}, 5),
    _contrib_boolean_mask=({}, 2),
    _contrib_box_decode=({}, 2),
    _contrib_box_encode=({}, 6),
    _contrib_index_copy=({}, 3),
    _contrib_interleaved_matmul_encdec_qk=({'heads': '2'}, 2),
    _contrib_interleaved_matmul_encdec_valatt=({'heads': '2'}, 2),
    _contrib_interleaved_matmul_selfatt_valatt=({'heads': '2'}, 2),
    _linalg_gemm=({}, 3),
    _mp_adamw_update=(dict(_LR, eta='1.0'), 6),
    _rnn_param_concat=({'num_args': '2'}, 2),
    _sample_gamma=({}, 2),
    _sample_generalized_negative_binomial=({}, 2),
    _sample_negative_binomial=({}, 2),
    _sample_normal=({}, 2),
    _sample_uniform=({}, 2),
    _scatter_set_nd=({'shape': '(2, 3)'}, 3),
    _slice_assign=({'begin': '(0,)', 'end': '(1,)'}, 2),
    adam_update=(_LR, 4),
    add_n=({'num_args': '2'}, 2),
    amp_multicast=({'num_outputs': '2'}, 2),
    batch_take=({}, 2),
    fill_element_0index=({}, 3),
    ftml_update=(dict(_LR, t='1'), 5),
    ftrl_update=(_LR, 4),
    gather_nd=({}, 2),
    khatri_rao=({'num_args': '2'}, 2),
    lamb_update_phase1=({'t': '1', 'wd': '0.0'}, 4),
    lamb_update_phase2=(_LR, 4),
    mp_lamb_update_phase1=({'t': '1', 'wd': '0.0'}, 5),
    mp_lamb_update_phase2=(_LR, 5),
    mp_nag_mom_update=(_LR, 4),
    mp_sgd_mom_update=(_LR, 4),
    mp_sgd_update=(_LR, 3),
    multi_all_finite=({'num_arrays': '2'}, 2),
    multi_mp_sgd_mom_update=(_MULTI, 4),
    multi_mp_sgd_update=(_MULTI, 3),
    multi_sgd_mom_update=(_MULTI, 3),
    multi_sgd_update=(_MULTI, 2),
    multi_sum_sq=({'num_arrays': '2'}, 2),
    nag_mom_update=(_LR, 3),
    pick=({}, 2),
    reset_arrays=({'num_arrays': '2'}, 2),
    rmsprop_update=(_LR, 3),
    rmspropalex_update=(_LR, 5),
    scatter_nd=({'shape': '(2, 3)'}, 2),
    sgd_mom_update=(_LR, 3),
    sgd_update=(_LR, 2),
    signsgd_update=(_LR, 2),
    signum_update=(_LR, 3),
    softmax=({'use_length': 'True'}, 2),
    softmax_cross_entropy=({}, 2),
    stack=({'num_args': '2'}, 2),
    take=({}, 2),
    where=({}, 3),
)


def questions(num_inputs):
    """``[(label, {variable: dtype})]``: the first input float64 alone, then with each other
    input float32, then float16 data with each other input float32; a single input also
    float16 and int32."""
    cases = [('in0=float64', {'in0': 'float64'})]
    if num_inputs == 1:
        cases += [('in0=float16', {'in0': 'float16'}), ('in0=int32', {'in0': 'int32'})]
    for first in ('float64', 'float16'):
        for i in range(1, num_inputs):
            cases.append(('in0=%s,in%d=float32' % (first, i), {'in0': first, 'in%d' % i: 'float32'}))
    return cases


def operator_symbol(mx, op, attrs, num_inputs):
    """The operator applied to variables ``in0``... ``in<num_inputs - 1>``, loaded from JSON."""
    nodes = [{'op': 'null', 'name': 'in%d' % i, 'inputs': []} for i in range(num_inputs)]
    nodes.append({'op': op, 'name': 'op', 'attrs': attrs,
                  'inputs': [[i, 0, 0] for i in range(num_inputs)]})
    graph = {'nodes': nodes, 'arg_nodes': list(range(num_inputs)),
             'node_row_ptr': list(range(num_inputs + 2)), 'heads': [[num_inputs, 0, 0]],
             'attrs': {'mxnet_version': ['int', 10901]}}
    return mx.sym.load_json(json.dumps(graph))


def answer(mx, sym, dtypes):
    """What ``sym.infer_type(**dtypes)`` gives: ``'error'``, ``'incomplete'``, or the names of
    the argument, output and auxiliary types."""
    try:
        result = sym.infer_type(**dtypes)
    except mx.base.MXNetError:
        return 'error'
    if result[0] is None:
        return 'incomplete'
    return [[__import__('numpy').dtype(t).name for t in group] for group in result]


def answers(mx, op):
    """``{question label: answer}`` for one operator."""
    attrs, num_inputs = OPERATORS[op]
    sym = operator_symbol(mx, op, attrs, num_inputs)
    return {label: answer(mx, sym, dtypes) for label, dtypes in questions(num_inputs)}


def _oracle_table():
    """``{operator: answers}`` from MXNet, each operator in a child process: MXNet 1.9.1
    crashes on some questions (Deconvolution with a float32 bias for float64 data), which
    are then recorded as ``'crash'``."""
    import subprocess
    table = {}
    for op, (_, num_inputs) in sorted(OPERATORS.items()):
        run = subprocess.run([sys.executable, __file__, op], capture_output=True, text=True)
        if run.returncode == 0:
            table[op] = json.loads(run.stdout.splitlines()[-1])  # MXNet prints warnings first
        else:
            table[op] = {label: 'crash' for label, _ in questions(num_inputs)}
    return table


if __name__ == '__main__':
    if len(sys.argv) > 1:
        import mxnet
        json.dump(answers(mxnet, sys.argv[1]), sys.stdout)
    else:
        json.dump(_oracle_table(), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write('\n')
