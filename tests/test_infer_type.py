"""``Symbol.infer_type`` against MXNet 1.9.1, operator by operator.

``infer_type_cases.py`` builds each operator with one or more inputs from Symbol JSON and
asks ``infer_type`` for the first input float64 alone, then with each other input float32
(and the same with float16 data); a single input also float16 and int32.
``data/infer_type_mxnet.json`` holds MXNet's answers, recorded by running
``infer_type_cases.py`` with the oracle: the dtypes of arguments, outputs and auxiliary
states, ``'error'`` for a dtype mismatch, ``'incomplete'``, or ``'crash'`` where MXNet dies.
neomx must give the same answers, except for the differences listed in ``DIFFERENCES``.
"""
import json
import os

import numpy as np
import pytest

import neomx as mx
from neomx.operator import registry
from infer_type_cases import OPERATORS, answer, operator_symbol, questions

with open(os.path.join(os.path.dirname(__file__), 'data', 'infer_type_mxnet.json')) as f:
    MXNET = json.load(f)


def _each(ops, labels):
    return {(op, label) for op in ops for label in labels}


_FLOAT64_ALONE = ['in0=float64']
# (operator, question) -> why neomx answers otherwise, and what it answers
DIFFERENCES = {
    # MXNet has no float64 kernels for these; neomx computes in float64.
    **dict.fromkeys(_each(['Crop', 'InstanceNorm', 'ROIPooling', '_contrib_ROIAlign'], _FLOAT64_ALONE),
                    'float64 works'),
    **dict.fromkeys(_each(['mp_lamb_update_phase1'], ['in0=float64'] + ['in0=float64,in%d=float32' % i
                                                                       for i in (2, 3, 4)]),
                    'float64 works'),
    # MXNet refuses these (no kernels for the dtype, or no type rule); neomx answers.
    **dict.fromkeys(_each(['_contrib_MultiBoxPrior', '_copyto'], ['in0=float64', 'in0=float16', 'in0=int32']),
                    'answers'),
    **dict.fromkeys(_each(['_linalg_det', '_linalg_slogdet'], ['in0=float16', 'in0=int32']), 'answers'),
    # MXNet fails when the indices' dtype is unknown; neomx leaves them unknown.
    **dict.fromkeys(_each(['pick', 'take'], _FLOAT64_ALONE), 'incomplete'),
    # MXNet overwrites the given dtype of these inputs with the data's; neomx keeps it.
    **dict.fromkeys(_each(['_onehot_encode', '_contrib_BilinearResize2D'],
                          ['in0=float64,in1=float32', 'in0=float16,in1=float32']),
                    'keeps the given dtype'),
    **dict.fromkeys(_each(['fill_element_0index'], ['in0=%s,in%d=float32' % (t, i)
                                                    for t in ('float64', 'float16') for i in (1, 2)]),
                    'keeps the given dtype'),
    # MXNet gives up on mismatched distribution parameters; neomx says why.
    **dict.fromkeys(_each(['_sample_gamma', '_sample_generalized_negative_binomial',
                           '_sample_negative_binomial', '_sample_normal', '_sample_uniform'],
                          ['in0=float64,in1=float32', 'in0=float16,in1=float32']), 'error'),
    # MXNet's multi-weight mixed-precision updates leave the float32 states untyped.
    **dict.fromkeys(_each(['multi_mp_sgd_update'], ['in0=float64', 'in0=float64,in2=float32',
                                                    'in0=float16,in2=float32']), 'float32 states'),
    **dict.fromkeys(_each(['multi_mp_sgd_mom_update'], ['in0=float64'] + [
        'in0=%s,in%d=float32' % (t, i) for t in ('float64', 'float16') for i in (2, 3)]), 'float32 states'),
}


# Operators without outputs: the case's head names an output they lack. MXNet loads that
# file (and crashes running it); neomx refuses it when loading.
_NO_OUTPUTS = {'reset_arrays'}


@pytest.mark.parametrize('op', sorted(OPERATORS))
def test_infer_type_is_mxnets(op):
    attrs, num_inputs = OPERATORS[op]
    if op in _NO_OUTPUTS:
        with pytest.raises(mx.base.MXNetError, match="head 0 refers to output 0 of node %d 'op' .*0 outputs"
                           % num_inputs):
            operator_symbol(mx, op, attrs, num_inputs)
        return
    sym = operator_symbol(mx, op, attrs, num_inputs)
    for label, dtypes in questions(num_inputs):
        got, want = answer(mx, sym, dtypes), MXNET[op][label]
        difference = DIFFERENCES.get((op, label))
        if want == 'crash':     # MXNet 1.9.1 dies on this graph (Pooling without a kernel)
            assert isinstance(got, list), (op, label)
        elif difference is None:
            assert got == want, (op, label)
        elif difference == 'error' or difference == 'incomplete':
            assert got == difference, (op, label)
        else:   # a full answer where MXNet fails or answers otherwise
            assert isinstance(got, list) and got != want, (op, label)


def test_every_difference_is_a_question():
    asked = {(op, label) for op, (_, n) in OPERATORS.items() for label, _ in questions(n)}
    assert set(DIFFERENCES) <= asked


def test_float32_states_of_mixed_precision_updates():
    sym = operator_symbol(mx, 'multi_mp_sgd_mom_update', OPERATORS['multi_mp_sgd_mom_update'][0], 4)
    assert sym.list_auxiliary_states() == ['in2', 'in3']
    assert answer(mx, sym, {'in0': 'float16'}) == [['float16', 'float16'], ['float16'], ['float32', 'float32']]


def test_mismatch_names_the_operator_inputs_and_dtypes():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
    with pytest.raises(mx.base.MXNetError) as err:
        net.infer_type(data='float64', fc_weight='float32')
    message = str(err.value)
    for part in ('fc', 'FullyConnected', "input 1 'weight' (fc_weight)", 'float32', 'float64',
                 "input 0 'data' (data)"):
        assert part in message


def test_mismatch_found_across_operators():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    net = mx.sym.relu(a) + mx.sym.sqrt(b)
    with pytest.raises(mx.base.MXNetError, match='_plus'):
        net.infer_type(a='float64', b='float32')
    assert net.infer_type(a='float64')[0] == [np.float64, np.float64]


def test_bind_rejects_mismatched_types():
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
    with pytest.raises(mx.base.MXNetError, match='incompatible dtypes'):
        net.simple_bind(mx.cpu(), data=(2, 3), type_dict={'data': 'float64', 'fc_weight': 'float32'})


def test_half_precision_batch_norm_keeps_float32_statistics():
    net = mx.sym.BatchNorm(mx.sym.var('data'), name='bn')
    args, outs, aux = net.infer_type(data='float16')
    assert args == [np.float16, np.float32, np.float32]
    assert outs == [np.float16] and aux == [np.float32, np.float32]
    with pytest.raises(mx.base.MXNetError, match='bn_gamma'):
        net.infer_type(data='float16', bn_gamma='float16')


def test_update_operators_list_their_states_as_auxiliary():
    # MXNet lists the inputs an operator updates in place as auxiliary states
    cases = {'sgd_mom_update': ['mom'], 'adam_update': ['mean', 'var'], 'mp_sgd_update': ['weight32'],
             'rmspropalex_update': ['n', 'g', 'delta'], 'ftml_update': ['d', 'v', 'z']}
    for op, states in cases.items():
        inputs = registry.get(op).inputs
        sym = getattr(mx.sym, op)(*[mx.sym.var(n) for n in inputs], **OPERATORS[op][0])
        assert sym.list_auxiliary_states() == states, op
        assert sym.list_arguments() == [n for n in inputs if n not in states], op
