"""The state of every random generator a training step draws from, as NDArrays to checkpoint.

Resuming a run where it stopped needs the same random streams: torch's CPU and CUDA
generators (``mx.random``: dropout, initialisers, samplers), NumPy's global generator
(``NDArrayIter`` and ``gluon.data`` shuffles, as in MXNet) and Python's ``random``. They
are stored as integer arrays in MXNet's ``.params`` format (no pickle).
"""
import random

import numpy as np
import torch

from .ndarray.ndarray import array

__all__ = ['capture', 'restore']


def capture():
    """A dict of name to NDArray holding the state of every generator."""
    states = {'torch_cpu': torch.get_rng_state().numpy()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for device, state in enumerate(torch.cuda.get_rng_state_all()):
            states['torch_cuda_%d' % device] = state.numpy()
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    assert kind == 'MT19937'
    states['numpy_keys'] = keys.astype(np.int64)     # MXNet's format has no uint32
    states['numpy_rest'] = np.array([pos, has_gauss, gauss], np.float64)
    version, internal, gauss_next = random.getstate()
    states['python'] = np.array(internal + (version, -1 if gauss_next is None else 1), np.int64)
    states['python_gauss'] = np.array([0.0 if gauss_next is None else gauss_next], np.float64)
    return {name: array(value, dtype=value.dtype) for name, value in states.items()}


def restore(states):
    """Set every generator from a dict made by :func:`capture` (missing CUDA devices are skipped)."""
    torch.set_rng_state(torch.from_numpy(states['torch_cpu'].asnumpy()))
    cuda = sorted((int(name.rsplit('_', 1)[1]), value) for name, value in states.items()
                  if name.startswith('torch_cuda_'))
    if cuda and torch.cuda.is_available():
        for device, value in cuda[:torch.cuda.device_count()]:
            torch.cuda.set_rng_state(torch.from_numpy(value.asnumpy()), device)
    pos, has_gauss, gauss = states['numpy_rest'].asnumpy().tolist()
    np.random.set_state(('MT19937', states['numpy_keys'].asnumpy().astype(np.uint32), int(pos), int(has_gauss),
                         gauss))
    python = states['python'].asnumpy()
    internal = tuple(int(v) for v in python[:-2])
    gauss_next = None if python[-1] < 0 else float(states['python_gauss'].asnumpy()[0])
    random.setstate((int(python[-2]), internal, gauss_next))
