"""The names under which executor monitors report operators' inputs, as MXNet 1.9.1's.

With ``monitor_all``, MXNet reports before each operator runs, for every input,
``<node>_<input name>`` -- executors first the variable's own name when the input is a
variable (Gluon's op hooks do not). The input
name is the operator's declared one (``conv_data``, ``fc_weight``; ``arg0``... for
variadic operators), except for the operators MXNet registers without input names, which
it names by position (``act_input0``): those listed here, recorded with MXNet 1.9.1.
"""
__all__ = ['input_labels']

# Operators (registry names) whose inputs MXNet's monitor names input0, input1...
POSITIONAL_INPUT_NAMES = frozenset((
    'Activation', 'BlockGrad', 'Cast', 'Flatten', 'Reshape', 'SoftmaxActivation',
    '_contrib_AdaptiveAvgPooling2D', '_contrib_div_sqrt_dim', '_contrib_gradientmultiplier',
    '_contrib_round_ste', '_contrib_sign_ste', '_copy', '_div_scalar', '_equal_scalar',
    '_greater_equal_scalar', '_greater_scalar', '_hypot_scalar', '_lesser_equal_scalar',
    '_lesser_scalar', '_logical_and_scalar', '_logical_or_scalar', '_logical_xor_scalar',
    '_maximum_scalar', '_minimum_scalar', '_minus_scalar', '_mod_scalar', '_mul_scalar',
    '_not_equal_scalar', '_plus_scalar', '_power_scalar', '_rdiv_scalar', '_rminus_scalar',
    '_rmod_scalar', '_rpower_scalar', '_sample_multinomial', '_shuffle', '_slice_assign_scalar',
    'abs', 'amp_cast', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax',
    'argmax_channel', 'argmin', 'argsort', 'broadcast_axis', 'cbrt', 'ceil', 'clip', 'cos',
    'cosh', 'degrees', 'erf', 'erfinv', 'exp', 'expand_dims', 'expm1', 'fix', 'floor', 'gamma',
    'gammaln', 'hard_sigmoid', 'log', 'log10', 'log1p', 'log2', 'logical_not', 'make_loss',
    'max', 'mean', 'min', 'nanprod', 'nansum', 'negative', 'norm', 'ones_like', 'prod',
    'radians', 'rcbrt', 'reciprocal', 'relu', 'rint', 'round', 'rsqrt', 'shape_array',
    'sigmoid', 'sign', 'sin', 'sinh', 'size_array', 'slice', 'smooth_l1', 'softmin', 'softsign',
    'sort', 'sqrt', 'square', 'sum', 'tan', 'tanh', 'topk', 'transpose', 'trunc', 'zeros_like'))


def input_labels(node, with_variables):
    """For each input entry of ``node`` (``node.inputs`` order): the names it is reported
    under; with ``with_variables`` (executors, not Gluon's op hooks), a variable's own name
    first."""
    if node.spec.name in POSITIONAL_INPUT_NAMES:
        names = ['input%d' % i for i in range(len(node.inputs))]
    else:
        names = node.input_names()
    return [([child.name] if with_variables and child.is_variable else []) + ['%s_%s' % (node.name, name)]
            for (child, _), name in zip(node.inputs, names)]
