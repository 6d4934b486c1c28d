"""Operators whose inputs MXNet 1.9.1 leaves unnamed for monitors.

MXNet's operator hooks (``HybridBlock.register_op_hook``, ``Executor.set_monitor_callback``
with ``monitor_all``) name an operator's inputs ``<node>_<input name>`` when the operator
declares its input names (``FullyConnected``: ``data``, ``weight``, ``bias``), and
``<node>_input0``, ``<node>_input1``... when it does not. These are the operators that do
not, as MXNet 1.9.1's monitors reported them, operator by operator (element-wise unary and
scalar operators, reductions, ``Activation``, ``Cast``, most optimizer updates...); every
other operator's inputs keep the names of its registry entry.
"""

__all__ = ['UNNAMED_INPUTS', 'monitor_input_names']

UNNAMED_INPUTS = frozenset((
    'Activation', 'BlockGrad', 'Cast', 'Flatten', 'Reshape', 'SoftmaxActivation',
    '_adamw_update', '_contrib_AdaptiveAvgPooling2D', '_contrib_arange_like',
    '_contrib_bipartite_matching', '_contrib_box_nms', '_contrib_div_sqrt_dim',
    '_contrib_gradientmultiplier', '_contrib_round_ste', '_contrib_sign_ste', '_copy',
    '_div_scalar', '_equal_scalar', '_greater_equal_scalar', '_greater_scalar',
    '_hypot_scalar', '_lesser_equal_scalar', '_lesser_scalar', '_logical_and_scalar',
    '_logical_or_scalar', '_logical_xor_scalar', '_maximum_scalar', '_minimum_scalar',
    '_minus_scalar', '_mod_scalar', '_mp_adamw_update', '_mul_scalar', '_not_equal_scalar',
    '_plus_scalar', '_power_scalar', '_random_exponential_like', '_random_gamma_like',
    '_random_generalized_negative_binomial_like', '_random_negative_binomial_like',
    '_random_normal_like', '_random_poisson_like', '_random_uniform_like', '_rdiv_scalar',
    '_rminus_scalar', '_rmod_scalar', '_rpower_scalar', '_sample_multinomial', '_shuffle',
    '_slice_assign_scalar', 'abs', 'amp_cast', 'arccos', 'arccosh', 'arcsin', 'arcsinh',
    'arctan', 'arctanh', 'argmax', 'argmax_channel', 'argmin', 'argsort', 'broadcast_axis',
    'cbrt', 'ceil', 'clip', 'cos', 'cosh', 'degrees', 'erf', 'erfinv', 'exp', 'expand_dims',
    'expm1', 'fix', 'floor', 'ftml_update', 'ftrl_update', 'gamma', 'gammaln', 'hard_sigmoid',
    'lamb_update_phase1', 'lamb_update_phase2', 'log', 'log10', 'log1p', 'log2', 'logical_not',
    'make_loss', 'max', 'mean', 'min', 'mp_lamb_update_phase2', 'mp_nag_mom_update',
    'mp_sgd_mom_update', 'mp_sgd_update', 'nag_mom_update', 'nanprod', 'nansum', 'negative',
    'norm', 'ones_like', 'prod', 'radians', 'rcbrt', 'reciprocal', 'relu', 'rint',
    'rmsprop_update', 'rmspropalex_update', 'round', 'rsqrt', 'sgd_mom_update', 'sgd_update',
    'shape_array', 'sigmoid', 'sign', 'signsgd_update', 'signum_update', 'sin', 'sinh',
    'size_array', 'slice', 'slice_axis', 'smooth_l1', 'softmin', 'softsign', 'sort', 'sqrt',
    'square', 'sum', 'tan', 'tanh', 'topk', 'transpose', 'trunc', 'zeros_like',
))


def monitor_input_names(spec, names):
    """The names MXNet's monitors give the inputs of operator ``spec`` (``names``: the
    registry's names for them)."""
    if spec.name in UNNAMED_INPUTS:
        return ['input%d' % i for i in range(len(names))]
    return list(names)
