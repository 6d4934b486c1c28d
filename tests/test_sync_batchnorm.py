"""SyncBatchNorm and gluon.contrib.parallel: statistics shared across the contexts of a step.

Inside ``parallel_apply(..., sync=True)`` a SyncBatchNorm on two contexts must behave as a
BatchNorm on the concatenated batch: outputs, input and parameter gradients, and running
statistics (updated in backward, identically on both contexts). Outside a parallel step it
normalizes each context's part alone and never waits. Errors of one context's thread reach
the caller without leaving the others waiting.
"""
import threading
import time

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import autograd, gluon
from neomx.gluon.contrib import parallel
from neomx.gluon.contrib.nn import SyncBatchNorm
from neomx.gluon.contrib.parallel import DataParallelCriterion, DataParallelModel, parallel_apply
from neomx.test_utils import check_numeric_gradient

CONTEXTS = [mx.cpu(0), mx.cpu(1)]


@pytest.fixture(autouse=True)
def _current_context_is_the_first_device():
    """The steps here run on cpu(0) and cpu(1) (two devices any machine has); the arrays a
    test makes without ``ctx`` belong on the first, also under ``--default-context 'gpu(0)'``."""
    with mx.cpu(0):                 # (a Context of its own: CONTEXTS' are entered by the steps)
        yield
CHANNELS = 3
RNG = np.random.RandomState(0)
GAMMA = RNG.uniform(0.5, 1.5, CHANNELS).astype('float32')
BETA = RNG.uniform(-1, 1, CHANNELS).astype('float32')
RUNNING_MEAN = RNG.uniform(-1, 1, CHANNELS).astype('float32')
RUNNING_VAR = RNG.uniform(0.5, 1.5, CHANNELS).astype('float32')


def _layer(cls, ctx, **kwargs):
    """An initialized normalization layer with non-trivial parameters and statistics."""
    layer = cls(in_channels=CHANNELS, **kwargs)
    layer.initialize(ctx=ctx)
    for name, value in (('gamma', GAMMA), ('beta', BETA), ('running_mean', RUNNING_MEAN),
                        ('running_var', RUNNING_VAR)):
        getattr(layer, name).set_data(mx.nd.array(value))
    return layer


def _data(shape, seed=1):
    rng = np.random.RandomState(seed)
    return (rng.normal(2.0, 3.0, shape).astype('float32'),
            rng.normal(size=shape).astype('float32'))      # input and head gradient


def _full_batch(x, head, train=True, **kwargs):
    """BatchNorm on one context: output, input gradient and the layer after backward."""
    layer = _layer(gluon.nn.BatchNorm, mx.cpu(0), **kwargs)
    data = mx.nd.array(x)
    data.attach_grad()
    with autograd.record(train_mode=train):
        out = layer(data)
    out.backward(mx.nd.array(head))
    return out.asnumpy(), data.grad.asnumpy(), layer


def _parallel_step(layer, x, head, split, train=True):
    """``layer`` on the two parts ``x[:split]``, ``x[split:]`` in one parallel step."""
    parts = [mx.nd.array(x[:split], ctx=CONTEXTS[0]), mx.nd.array(x[split:], ctx=CONTEXTS[1])]
    for part in parts:
        part.attach_grad()
    with autograd.record(train_mode=train):
        outs = parallel_apply(layer, [(part,) for part in parts], sync=True)
    autograd.backward([out for (out,) in outs],
                      [mx.nd.array(head[:split], ctx=CONTEXTS[0]),
                       mx.nd.array(head[split:], ctx=CONTEXTS[1])])
    return (np.concatenate([out.asnumpy() for (out,) in outs]),
            np.concatenate([part.grad.asnumpy() for part in parts]))


def _assert_same_layer_state(sync, reference):
    """Summed parameter gradients and each context's running statistics match."""
    for name in ('gamma', 'beta'):
        if getattr(sync, name).grad_req != 'null':
            summed = sum(g.asnumpy() for g in getattr(sync, name).list_grad())
            np.testing.assert_allclose(summed, getattr(reference, name).grad().asnumpy(),
                                       rtol=1e-4, atol=1e-4)
    for name in ('running_mean', 'running_var'):
        expected = getattr(reference, name).data().asnumpy()
        for copy in getattr(sync, name).list_data():
            np.testing.assert_allclose(copy.asnumpy(), expected, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ equivalence
@pytest.mark.parametrize('shape, split', [((8, CHANNELS, 4, 4), 3), ((6, CHANNELS), 4),
                                          ((5, CHANNELS, 7), 2)],
                         ids=['NCHW_unequal_parts', 'NC', 'NCW'])
@pytest.mark.parametrize('scale', [True, False], ids=['scale', 'fixed_gamma'])
def test_parallel_step_equals_batchnorm_on_full_batch(shape, split, scale):
    x, head = _data(shape)
    expected_out, expected_grad, reference = _full_batch(x, head, scale=scale)
    sync = _layer(SyncBatchNorm, CONTEXTS, num_devices=2, scale=scale)
    out, grad = _parallel_step(sync, x, head, split)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-4, atol=1e-5)
    _assert_same_layer_state(sync, reference)


def test_predict_mode_in_parallel_step_uses_running_statistics():
    """Each context normalizes with the running statistics, which stay unchanged. (The
    input gradient is BatchNorm's per context: in predict mode MXNet differentiates the
    statistics as functions of each context's own batch.)"""
    x, head = _data((6, CHANNELS, 2))
    expected_out, _, reference = _full_batch(x, head, train=False)
    sync = _layer(SyncBatchNorm, CONTEXTS)
    out, _ = _parallel_step(sync, x, head, 2, train=False)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)
    _assert_same_layer_state(sync, reference)
    np.testing.assert_array_equal(sync.running_var.data(CONTEXTS[1]).asnumpy(), RUNNING_VAR)


class _TwiceNorm(gluon.HybridBlock):
    """The same normalization layer applied twice in one forward pass."""

    def __init__(self, norm):
        super().__init__()
        with self.name_scope():
            self.norm = norm

    def hybrid_forward(self, F, x):
        return self.norm(F.relu(self.norm(x)))


def test_layer_called_twice_synchronises_each_call():
    x, head = _data((6, CHANNELS, 3))
    expected_out, expected_grad, reference = _full_batch_twice(x, head)
    sync = _layer(SyncBatchNorm, CONTEXTS)
    out, grad = _parallel_step(_TwiceNorm(sync), x, head, 4)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-4, atol=1e-5)
    _assert_same_layer_state(sync, reference)


def _full_batch_twice(x, head):
    norm = _layer(gluon.nn.BatchNorm, mx.cpu(0))
    data = mx.nd.array(x)
    data.attach_grad()
    with autograd.record():
        out = _TwiceNorm(norm)(data)
    out.backward(mx.nd.array(head))
    return out.asnumpy(), data.grad.asnumpy(), norm


def test_gradient_matches_finite_differences():
    sync = SyncBatchNorm(in_channels=CHANNELS)
    statistics = [mx.nd.array(RUNNING_MEAN, dtype='float64'),
                  mx.nd.array(RUNNING_VAR, dtype='float64')]

    def on_context(part, gamma, beta):
        ctx = part.context
        return sync.hybrid_forward(mx.nd, part, gamma.as_in_context(ctx), beta.as_in_context(ctx),
                                   *[s.as_in_context(ctx) for s in statistics])

    def two_contexts(data, gamma, beta):
        parts = [data[:2].as_in_context(CONTEXTS[0]), data[2:].as_in_context(CONTEXTS[1])]
        with autograd.train_mode():
            outs = parallel_apply(on_context, [(p, gamma, beta) for p in parts], sync=True)
        return mx.nd.concat(*[out.as_in_context(CONTEXTS[0]) for (out,) in outs], dim=0)

    x = RNG.uniform(-1, 1, (5, CHANNELS, 2))
    check_numeric_gradient(two_contexts, [x, GAMMA, BETA], rtol=1e-4)


def test_forward_without_backward_leaves_running_statistics():
    sync = _layer(SyncBatchNorm, CONTEXTS)
    x, _ = _data((4, CHANNELS, 2))
    parts = gluon.utils.split_and_load(x, CONTEXTS)
    with autograd.record():
        parallel_apply(sync, [(p,) for p in parts], sync=True)
    with autograd.train_mode():
        parallel_apply(sync, [(p,) for p in parts], sync=True)
    for copy in sync.running_mean.list_data():
        np.testing.assert_array_equal(copy.asnumpy(), RUNNING_MEAN)


# ----------------------------------------------------- outside a parallel step
def _normalize(x, axes, eps=1e-5):
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


@pytest.mark.parametrize('run', ['sequential', 'parallel_apply_without_sync'])
def test_outside_parallel_step_each_context_uses_its_own_statistics(run):
    sync = SyncBatchNorm(in_channels=CHANNELS, num_devices=2)
    sync.initialize(ctx=CONTEXTS)
    x, _ = _data((6, CHANNELS, 2))
    parts = gluon.utils.split_and_load(x, CONTEXTS)
    with autograd.record():
        if run == 'sequential':
            outs = [sync(p) for p in parts]
        else:
            outs = [out for (out,) in parallel_apply(sync, [(p,) for p in parts])]
    for out, part in zip(outs, (x[:3], x[3:])):
        np.testing.assert_allclose(out.asnumpy(), _normalize(part, (0, 2)), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ errors
class _PerContext(gluon.Block):
    """Runs ``before(rank)`` then a SyncBatchNorm unless ``skip(rank)``; the rank is the
    input's context id."""

    def __init__(self, before=lambda rank: None, skip=lambda rank: False, **norm_kwargs):
        super().__init__()
        self._before, self._skip = before, skip
        with self.name_scope():
            self.norm = SyncBatchNorm(in_channels=CHANNELS, **norm_kwargs)

    def forward(self, x):
        rank = x.context.device_id
        self._before(rank)
        return x if self._skip(rank) else self.norm(x)


def _run_two_contexts(block):
    block.initialize(ctx=CONTEXTS)
    x, _ = _data((4, CHANNELS, 2))
    parts = gluon.utils.split_and_load(x, CONTEXTS)
    started = time.monotonic()
    with autograd.record():
        try:
            parallel_apply(block, [(p,) for p in parts], sync=True)
        finally:
            assert time.monotonic() - started < 10        # nobody waited for the timeout


def _fail_on_second_context(rank):
    if rank == 1:
        raise ValueError('bad batch on context 1')


def test_worker_error_reaches_caller_and_releases_other_contexts():
    with pytest.raises(ValueError, match='bad batch on context 1'):
        _run_two_contexts(_PerContext(before=_fail_on_second_context))


def test_context_skipping_the_layer_is_reported():
    block = _PerContext(skip=lambda rank: rank == 1)
    with pytest.raises(mx.base.MXNetError, match=r"SyncBatchNorm '.*syncbatchnorm0_'.*context 1 "
                                                 r'of the parallel step ended'):
        _run_two_contexts(block)


def test_barrier_timeout_names_the_layer(monkeypatch):
    monkeypatch.setattr(parallel, 'SYNC_TIMEOUT', 0.2)
    block = _PerContext(before=lambda rank: time.sleep(rank))
    with pytest.raises(parallel.SyncTimeoutError,
                       match=r"SyncBatchNorm '.*syncbatchnorm0_': context \d waited 0.2 s"):
        _run_two_contexts(block)


def test_num_devices_must_match_the_step():
    with pytest.raises(mx.base.MXNetError, match="layer '.*syncbatchnorm0_' declares ndev=4 but "
                                                 'runs in a parallel step of 2 contexts'):
        _run_two_contexts(_PerContext(num_devices=4))


# ------------------------------------------------------ parallel execution
def test_workers_inherit_the_callers_state():
    seen = {}
    lock = threading.Lock()

    def probe(x):
        with lock:
            seen[x.context] = (autograd.is_recording(), autograd.is_training(),
                               torch.is_grad_enabled(), mx.current_context(),
                               mx.name.NameManager.current)
        return x

    parts = [mx.nd.ones((1,), ctx=ctx) for ctx in CONTEXTS]
    with mx.name.NameManager() as names, mx.cpu(5):
        with autograd.record(train_mode=False):
            parallel_apply(probe, [(p,) for p in parts], sync=True)
        assert set(seen.values()) == {(True, False, True, mx.cpu(5), names)}
        with autograd.train_mode():         # torch's grad mode as the caller has it
            parallel_apply(probe, [(p,) for p in parts], sync=True)
        assert set(seen.values()) == {(False, True, True, mx.cpu(5), names)}
        with autograd.train_mode(), torch.no_grad():
            parallel_apply(probe, [(p,) for p in parts], sync=True)
        assert set(seen.values()) == {(False, True, False, mx.cpu(5), names)}


def test_data_parallel_model_and_criterion_split_the_batch():
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.5))
    model = DataParallelModel(net, CONTEXTS, sync=True)
    criterion = DataParallelCriterion(gluon.loss.L2Loss(), CONTEXTS, sync=True)
    data = mx.nd.array(np.arange(12).reshape(4, 3))
    outputs = model(data)
    assert [type(out) for out in outputs] == [tuple, tuple]
    assert [out[0].context for out in outputs] == CONTEXTS
    np.testing.assert_allclose(np.concatenate([out[0].asnumpy() for out in outputs]),
                               net(data).asnumpy())
    losses = criterion(outputs, mx.nd.zeros((4, 2)))
    assert [loss.shape for loss in losses] == [(2,), (2,)]
    assert [loss.context for loss in losses] == CONTEXTS
    assert net.weight.list_ctx() == CONTEXTS
    unsplit = DataParallelModel(net)
    np.testing.assert_allclose(unsplit(data.as_in_context(CONTEXTS[0])).asnumpy(),
                               net(data).asnumpy())


def test_deferred_shapes_are_completed_before_the_threads_start():
    sync = SyncBatchNorm()                     # in_channels inferred at the first call
    sync.initialize(ctx=CONTEXTS)
    model = DataParallelModel(sync, CONTEXTS, sync=True)
    x, _ = _data((6, CHANNELS, 2))
    with autograd.record():
        outputs = model(mx.nd.array(x))
    np.testing.assert_allclose(np.concatenate([out.asnumpy() for (out,) in outputs]),
                               _normalize(x, (0, 2)), rtol=1e-4, atol=1e-5)
    assert sync.gamma.shape == (CHANNELS,)
