"""Replays on neomx the operator cases recorded from MXNet 1.9.1 (``tests/oracle_op_cases.py``):
outputs and input gradients must match MXNet's."""
import json

import numpy as np
import pytest

import neomx as mx
from oracle_op_cases import RECORD, decode, run_case

with open(RECORD) as _f:
    _CASES = json.load(_f)['cases']


@pytest.mark.parametrize('case', _CASES, ids=[c['id'] for c in _CASES])
def test_matches_mxnet(case):
    inputs = [decode(e) for e in case['inputs']]
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case['kwargs'].items()}
    grad = case['grads'] is not None and (tuple(case['grad_inputs']) if case.get('grad_inputs') else True)
    outs, grads = run_case(mx, case['func'], inputs, kwargs, grad)
    expected = [decode(e) for e in case['outputs']]
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    if case['grads'] is not None:
        for got, want in zip(grads, case['grads']):
            np.testing.assert_allclose(got, decode(want), rtol=1e-4, atol=1e-5)
