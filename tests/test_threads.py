"""neomx and PyTorch in one process, in several threads.

Importing neomx leaves torch's and numpy's global state alone; neomx keeps its recording
state per thread and gives the same results in any thread; plain torch code next to it runs
as it would without neomx.
"""
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import autograd, gluon, nd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SNAPSHOT = r'''
import json, sys, warnings
import numpy as np, torch

def snapshot():
    return {
        'grad': torch.is_grad_enabled(),
        'inference': torch.is_inference_mode_enabled(),
        'dtype': str(torch.get_default_dtype()),
        'threads': torch.get_num_threads(),
        'interop': torch.get_num_interop_threads(),
        'deterministic': torch.are_deterministic_algorithms_enabled(),
        'matmul': torch.get_float32_matmul_precision(),
        'anomaly': torch.is_anomaly_enabled(),
        'rng': torch.get_rng_state().tolist()[:64],
        'warnings': [repr(f) for f in warnings.filters],
        'np_err': np.geterr(),
        'np_print': {k: repr(v) for k, v in np.get_printoptions().items()},
        'np_rng': repr(np.random.get_state()[1][:8].tolist()),
    }

before = snapshot()
import neomx
after = snapshot()
print(json.dumps([before, after]))
'''


def _run_python(code):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_changes_no_global_state_of_torch_or_numpy():
    before, after = _run_python(_SNAPSHOT)
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert not changed, changed
    assert after['grad'] is True


_TORCH_LOOP = r'''
import json, sys
import torch
if sys.argv[1] == 'with':
    import neomx
    from neomx import autograd, nd
    x = nd.ones((2, 2)); x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data, target = torch.randn(16, 4), torch.randn(16, 1)
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(data), target)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(json.dumps(losses))
'''


def test_torch_training_loop_runs_as_without_neomx():
    code = _TORCH_LOOP.replace("sys.argv[1]", "%r")
    without = _run_python(code % 'without')
    with_neomx = _run_python(code % 'with')
    assert with_neomx == without
    assert without[-1] < without[0]


def test_torch_training_in_importing_thread():
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 1)
    before = model.weight.detach().clone()
    loss = model(torch.randn(5, 3)).pow(2).mean()
    assert loss.requires_grad
    loss.backward()
    torch.optim.SGD(model.parameters(), lr=0.5).step()
    assert not torch.equal(model.weight.detach(), before)


def _in_thread(fn):
    """Run ``fn`` in a new thread (where torch's grad mode is on) on the caller's current
    context (a new thread starts on cpu(0), as in MXNet); return or raise its result."""
    box = {}
    ctx = mx.current_context()

    def target():
        try:
            with mx.Context(ctx):       # a copy: a Context keeps the one it replaces
                box['value'] = fn()
        except BaseException as err:  # pylint: disable=broad-except
            box['error'] = err
    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if 'error' in box:
        raise box['error']
    return box['value']


def _dense_net(hybridize=False):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(5, activation='relu', in_units=3), gluon.nn.Dense(2, in_units=5))
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    return net


@pytest.mark.parametrize('hybridize', [False, True])
def test_neomx_in_new_thread(tmp_path, hybridize):
    net = _dense_net(hybridize)
    path = str(tmp_path / 'net.params')
    net.save_parameters(path)
    x = nd.array(np.arange(12).reshape(4, 3) / 10.)

    def work():
        assert torch.is_grad_enabled()
        assert not autograd.is_recording()
        other = _dense_net(hybridize)
        other.load_parameters(path)
        out = other(x)
        assert out._t.requires_grad is False
        weight = other[0].weight
        weight.set_data(weight.data() * 2)
        weight.data()[:] = weight.data() / 2
        bias = other[0].bias.data()
        bias += 0
        trainer = gluon.Trainer(other.collect_params(), 'sgd', {'learning_rate': 0.1})
        with autograd.record():
            loss = other(x).sum()
        loss.backward()
        trainer.step(4)
        assert torch.is_grad_enabled()
        return out.asnumpy(), weight.data().asnumpy()

    out, weight = _in_thread(work)
    np.testing.assert_array_equal(out, net(x).asnumpy())
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}).step(4)
    np.testing.assert_array_equal(weight, net[0].weight.data().asnumpy())


def test_recording_state_is_per_thread():
    seen = {}
    with autograd.record():
        assert autograd.is_recording() and torch.is_grad_enabled()
        seen.update(_in_thread(lambda: {'recording': autograd.is_recording(),
                                        'training': autograd.is_training(),
                                        'grad': torch.is_grad_enabled()}))
        with autograd.pause():
            assert not torch.is_grad_enabled()
        assert torch.is_grad_enabled()
    assert seen == {'recording': False, 'training': False, 'grad': True}
    assert torch.is_grad_enabled()
    with torch.no_grad():
        with autograd.record():
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()


class _Double(autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 2


def test_operations_outside_record_build_no_graph():
    w = nd.ones((3, 3))
    w.attach_grad()
    assert torch.is_grad_enabled()
    for out in (w + 1, w * w, nd.dot(w, w), w[1:], w.reshape((9,)), nd.relu(w), -w, w.T,
                w.astype('float64'), w.copy()):
        assert out._t.grad_fn is None
    assert _Double()(w)._t.grad_fn is None
    w[:] = 2
    w += 1
    nd.ones((3, 3)).copyto(w)
    nd.elemwise_add(w, w, out=w)
    np.testing.assert_array_equal(w.asnumpy(), np.full((3, 3), 2.))
    with autograd.record():
        y = (w * w).sum()
    assert y._t.requires_grad
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((3, 3), 4.))


def _batches(seed, steps):
    rng = np.random.RandomState(seed)
    return [(rng.uniform(-1, 1, (8, 6)).astype(np.float32), rng.uniform(-1, 1, (8, 3)).astype(np.float32))
            for _ in range(steps)]


def _train(hybridize, seed, steps=200):
    """Train a small MLP from fixed values on fixed batches; the final weights."""
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(16, activation='tanh', in_units=6), gluon.nn.Dense(3, in_units=16))
    net.initialize()
    rng = np.random.RandomState(seed + 100)
    for param in net.collect_params().values():
        param.set_data(nd.array(rng.uniform(-0.5, 0.5, param.shape)))
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05, 'momentum': 0.9})
    loss_fn = gluon.loss.L2Loss()
    for data, label in _batches(seed, steps):
        with autograd.record():
            loss = loss_fn(net(nd.array(data)), nd.array(label))
        loss.backward()
        trainer.step(data.shape[0])
    return [p.data().asnumpy() for p in net.collect_params().values()]


def test_two_threads_training_match_sequential_runs():
    jobs = [(False, 1), (True, 2)]
    sequential = [_train(h, s) for h, s in jobs]
    results = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))
    errors = []
    ctx = mx.current_context()      # the sequential runs' (a new thread starts on cpu(0))

    def worker(i, hybridize, seed):
        try:
            barrier.wait()
            with mx.Context(ctx):       # one per thread: a Context keeps the one it replaces
                results[i] = _train(hybridize, seed)
        except BaseException as err:  # pylint: disable=broad-except
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(i,) + job) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for seq, par in zip(sequential, results):
        assert len(seq) == len(par) == 4
        for a, b in zip(seq, par):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(sequential[0][0], sequential[1][0])


class _CountingInit(mx.init.Initializer):
    """Fills with a constant and counts its calls."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self._lock = threading.Lock()

    def _init_weight(self, _, arr):
        with self._lock:
            self.calls += 1
        arr[:] = 0.5


@pytest.mark.parametrize('hybridize', [False, True])
def test_deferred_init_from_several_threads_at_once(hybridize):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(7, activation='relu'), gluon.nn.Dense(3))
    init = _CountingInit()
    net.initialize(init)
    if hybridize:
        net.hybridize()
    x = nd.array(np.arange(20).reshape(4, 5) / 10.)
    n = 6
    barrier = threading.Barrier(n)
    outputs, errors = [None] * n, []

    def worker(i):
        try:
            barrier.wait()
            outputs[i] = net(x).asnumpy()
        except BaseException as err:  # pylint: disable=broad-except
            errors.append(err)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert init.calls == 2                  # each weight once (the biases start at zero)
    expected = np.maximum(x.asnumpy() @ np.full((5, 7), 0.5), 0) @ np.full((7, 3), 0.5)
    for out in outputs:
        np.testing.assert_allclose(out, expected, rtol=1e-6)


class _InitializedWhileLooking(gluon.Parameter):
    """A parameter whose first read of its arrays, from the thread named ``reader``, sees
    them missing and then lets another thread finish the deferred initialization before
    the reader goes on (the interleaving of a first forward pass in several threads)."""

    def __init__(self, *args, **kwargs):
        self.reader = None
        super().__init__(*args, **kwargs)

    @property
    def _data(self):
        arrays = self.__dict__['_arrays']
        if arrays is None and threading.current_thread().name == self.reader:
            self.reader = None
            other = threading.Thread(target=self._finish_deferred_init)
            other.start()
            other.join()
        return arrays

    @_data.setter
    def _data(self, arrays):
        self.__dict__['_arrays'] = arrays


@pytest.mark.parametrize('read', ['data', 'list_data', 'list_ctx'])
def test_parameter_read_while_another_thread_initializes_it(read):
    """Between this thread's reads of a parameter's state another thread completes its
    deferred initialization: the read gives the new arrays (it was 'has not been
    initialized' now and then with six threads running a net's first forward at once)."""
    param = _InitializedWhileLooking('w', shape=(2, 0), allow_deferred_init=True)
    param.initialize(mx.init.One())
    param.shape = (2, 3)
    param.reader = threading.current_thread().name
    got = getattr(param, read)()
    assert param.reader is None            # the other thread did initialize it meanwhile
    if read == 'list_ctx':
        assert got == [mx.cpu()]
    else:
        arrays = got if read == 'list_data' else [got]
        assert len(arrays) == 1 and arrays[0].shape == (2, 3) and (arrays[0].asnumpy() == 1).all()
