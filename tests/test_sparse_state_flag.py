"""Sparse gradients in a process that made no sparse array before (neomx._sparse_state).

The gradient hooks and Executor.backward look at a gradient's layout only once a sparse
tensor was made; an Embedding with ``sparse_grad`` makes its weight's gradient sparse, so
it must raise the flag itself. The suite's process has sparse arrays already: these run in
a fresh interpreter."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_EMBEDDING_GRADIENTS = r'''
import neomx as mx
from neomx._sparse_state import SPARSE_MADE
assert not SPARSE_MADE[0]
idx = mx.nd.array([1, 1, 3])
w = mx.nd.ones((4, 2))
w.attach_grad()
with mx.autograd.record():
    y = mx.nd.Embedding(idx, w, input_dim=4, output_dim=2, sparse_grad=True)
y.backward()
print(w.grad.stype, w.grad.asnumpy().tolist())
sym = mx.sym.Embedding(mx.sym.var('data'), mx.sym.var('weight'), input_dim=4, output_dim=2, sparse_grad=True)
grad = mx.nd.zeros((4, 2))      # a dense buffer given
ex = sym.bind(mx.cpu(), args={'data': idx, 'weight': mx.nd.ones((4, 2))}, args_grad={'weight': grad})
ex.forward(is_train=True)
ex.backward(mx.nd.ones((3, 2)))
print(grad.stype, grad.asnumpy().tolist())
'''


@pytest.mark.slow
def test_sparse_embedding_gradient_into_dense_buffers_in_a_fresh_process():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, '-c', _EMBEDDING_GRADIENTS], env=env, capture_output=True, text=True,
                         timeout=300, check=True).stdout.split('\n')
    expected = [[0.0, 0.0], [2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    assert out[0] == 'default %s' % expected
    assert out[1] == 'default %s' % expected
