"""The private torch entry points of neomx._torch_private against their public fallbacks."""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx import _torch_private as P
from neomx import autograd

RNG = torch.Generator().manual_seed(0)


def _tensors(*shapes):
    return [torch.randn(s, generator=RNG) for s in shapes]


@pytest.mark.parametrize('name, extra', [
    ('add_', lambda xs: ([t + 1 for t in xs],), ),
    ('mul_', lambda xs: ([2.0, -0.5],)),
    ('addcmul_', lambda xs: ([t * 2 for t in xs], [t - 1 for t in xs])),
    ('addcdiv_', lambda xs: ([t * 2 for t in xs], [t.abs() + 1 for t in xs])),
    ('clamp_min_', lambda xs: (-0.1,)),
    ('maximum_', lambda xs: ([t * 0 for t in xs],)),
    ('lerp_', lambda xs: ([t * 3 for t in xs], 0.25)),
    ('copy_', lambda xs: ([t * 7 for t in xs],)),
    ('sqrt', lambda xs: ()),
    ('norm', lambda xs: ()),
])
def test_foreach_fallback_matches_the_fused_op(name, extra):
    fused = getattr(torch, '_foreach_' + name, None)
    if fused is None:
        pytest.skip('this torch has no _foreach_%s' % name)
    base = [t.abs() if name == 'sqrt' else t for t in _tensors((3,), (2, 2))]
    args = extra(base)
    want, got = [t.clone() for t in base], [t.clone() for t in base]
    kwargs = {'alpha': 0.5} if name == 'add_' else {}
    want_out = fused(want, *args, **kwargs)
    got_out = P.per_tensor(name)(got, *args, **kwargs)
    results = zip(want, got) if name.endswith('_') else zip(want_out, got_out)
    for w, g in results:
        torch.testing.assert_close(g, w)


def test_foreach_resolves_once_and_falls_back_for_missing_names(monkeypatch):
    ops = P._Foreach()
    assert ops.add_ is torch._foreach_add_
    assert 'add_' in vars(ops)                  # kept: no lookup on later calls
    monkeypatch.delattr(torch, '_foreach_sqrt', raising=False)
    assert ops.sqrt.__name__ == 'foreach_sqrt'
    assert [t.tolist() for t in ops.sqrt([torch.tensor([4.0, 9.0])])] == [[2.0, 3.0]]


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('decay', [0.0, 0.25])
def test_momentum_sgd_fused_matches_the_foreach_passes_and_mxnet_formula(monkeypatch, dtype, decay):
    if not P._fused_sgd_runs_on('cpu', dtype):
        pytest.skip('this torch has no CPU fused SGD kernel')
    weights = [t.to(dtype) for t in _tensors((5,), (3, 4))]
    grads = [t.to(dtype) for t in _tensors((5,), (3, 4))]
    moms = [t.to(dtype) for t in _tensors((5,), (3, 4))]
    grads_before = [g.clone() for g in grads]
    want_w = [w + (0.9 * m - 0.05 * (g + decay * w)) for w, g, m in zip(weights, grads, moms)]
    want_m = [0.9 * m - 0.05 * (g + decay * w) for w, g, m in zip(weights, grads, moms)]
    fused = [[t.clone() for t in group] for group in (weights, grads, moms)]
    P.momentum_sgd_(*fused, 0.9, -0.05, decay)
    monkeypatch.setattr(P, '_fused_sgd_runs_on', lambda device, dtype: False)
    passes = [[t.clone() for t in group] for group in (weights, grads, moms)]
    P.momentum_sgd_(*passes, 0.9, -0.05, decay)
    for got in (fused, passes):
        for w, m, ww, wm in zip(got[0], got[2], want_w, want_m):
            torch.testing.assert_close(w, ww)
            torch.testing.assert_close(m, wm)
        assert all(torch.equal(g, b) for g, b in zip(got[1], grads_before))


def test_momentum_sgd_keeps_steps_exact_where_the_kernel_rounds_dampening(monkeypatch):
    # torch's CUDA kernel rounds dampening (1 - step) to float32 before subtracting it from
    # 1: a step it would carry inexactly (0.01, 1e-6) takes the foreach passes there
    if not P._fused_sgd_runs_on('cpu', torch.float32):
        pytest.skip('this torch has no CPU fused SGD kernel')
    kernel, calls = torch._fused_sgd_, []

    def spy(*args, **kwargs):
        calls.append(kwargs['dampening'])
        return kernel(*args, **kwargs)
    monkeypatch.setattr(torch, '_fused_sgd_', spy)
    monkeypatch.setattr(P, '_fused_sgd_rounds_dampening', lambda device_type: True)
    for step, fused in ((-0.01, False), (-1e-6, False), (-0.5, True), (-0.125, True)):
        del calls[:]
        w, g, m = [torch.ones(3)], [torch.ones(3)], [torch.zeros(3)]
        P.momentum_sgd_(w, g, m, 0.9, step, 0.0)
        assert bool(calls) == fused, step
        assert m[0].tolist() == [float(np.float32(step))] * 3, step
    monkeypatch.setattr(P, '_fused_sgd_rounds_dampening', lambda device_type: False)
    del calls[:]
    P.momentum_sgd_([torch.ones(3)], [torch.ones(3)], [torch.zeros(3)], 0.9, -0.01, 0.0)
    assert calls == [1.01]


def test_momentum_sgd_takes_the_passes_for_strided_tensors_or_zero_momentum():
    w = torch.ones(4, 2).t()                       # not contiguous
    g, m = torch.ones(2, 4), torch.zeros(2, 4)
    P.momentum_sgd_([w], [g], [m], 0.5, -1.0, 0.0)
    assert w.tolist() == [[0.0] * 4] * 2 and m.tolist() == [[-1.0] * 4] * 2
    w, m = torch.ones(3), torch.full((3,), 7.0)     # momentum 0: mom = step * grad
    P.momentum_sgd_([w], [torch.ones(3)], [m], 0.0, -0.25, 0.0)
    assert w.tolist() == [0.75] * 3 and m.tolist() == [-0.25] * 3


def _rnn_case(mode, bidirectional, proj):
    torch.manual_seed(1)
    kwargs = {'nonlinearity': mode[4:]} if mode.startswith('rnn_') else {}
    if proj:
        kwargs['proj_size'] = 3
    cls = {'lstm': torch.nn.LSTM, 'gru': torch.nn.GRU}.get(mode, torch.nn.RNN)
    module = cls(4, 5, 2, bidirectional=bidirectional, **kwargs)
    weights = [p.detach().clone().requires_grad_() for p in module.parameters()]
    dirs, out = 2 if bidirectional else 1, 3 if proj else 5
    h = torch.randn(2 * dirs, 3, out)
    hx = (h, torch.randn(2 * dirs, 3, 5)) if mode == 'lstm' else h
    return weights, hx


@pytest.mark.parametrize('mode, bidirectional, proj', [('lstm', False, False), ('lstm', True, True),
                                                       ('gru', True, False), ('rnn_relu', False, False),
                                                       ('rnn_tanh', True, False)])
@pytest.mark.parametrize('packed', [False, True])
def test_rnn_fallback_matches_the_fused_kernel(mode, bidirectional, proj, packed):
    weights, hx = _rnn_case(mode, bidirectional, proj)
    data = torch.randn(6, 3, 4)
    results = []
    for kernel in (P.rnn_kernel(mode), lambda *a: P._rnn_through_module(mode, *a)):
        ws = [w.detach().clone().requires_grad_() for w in weights]
        if packed:
            seq = torch.nn.utils.rnn.pack_padded_sequence(data, torch.tensor([6, 4, 2]))
            out = kernel(seq.data, seq.batch_sizes, hx, ws, True, 2, 0.0, False, bidirectional)
        else:
            out = kernel(data, hx, ws, True, 2, 0.0, False, bidirectional, False)
        sum(o.sum() for o in out).backward()
        results.append(([o.detach() for o in out], [w.grad for w in ws]))
    (want, want_grads), (got, got_grads) = results
    assert len(got) == len(want)
    for g, w in zip(got + got_grads, want + want_grads):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)


def test_backward_without_the_private_engine_entry(monkeypatch):
    monkeypatch.setattr(autograd, '_ENGINE_RUN_BACKWARD', None)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


def test_build_capabilities():
    assert P.has_lapack() is True
    ops = P.onednn_ops()
    assert ops is None or hasattr(ops, '_convolution_pointwise')
    previous = torch.is_grad_enabled()
    P.set_grad_enabled(not previous)
    assert torch.is_grad_enabled() is (not previous)
    P.set_grad_enabled(previous)


def test_inductor_freezing_switch_and_its_absence(monkeypatch):
    import torch._inductor.config as config
    with P.inductor_freezing():
        assert config.freezing is True
    monkeypatch.delattr(config, 'freezing', raising=False)
    with P.inductor_freezing():     # a torch without the switch: compiling goes on without it
        pass


def test_tcp_rpc_options_keep_tensorpipe_to_tcp_and_fall_back_to_the_defaults(monkeypatch):
    from torch.distributed import rpc
    options = P.tcp_rpc_options('neomxkv://', 30)
    assert options.init_method == 'neomxkv://' and options.rpc_timeout == 30
    real, asked = rpc.TensorPipeRpcBackendOptions, []

    def recorded(**kwargs):
        asked.append(kwargs)
        return real(**kwargs)
    monkeypatch.setattr(rpc, 'TensorPipeRpcBackendOptions', recorded)
    P.tcp_rpc_options('neomxkv://', 30)
    assert asked[-1]['_transports'] == ['uv']

    def without_private_arguments(**kwargs):     # a torch release without ``_transports``
        if '_transports' in kwargs:
            raise TypeError('unexpected keyword argument')
        return real(**kwargs)
    monkeypatch.setattr(rpc, 'TensorPipeRpcBackendOptions', without_private_arguments)
    assert P.tcp_rpc_options('neomxkv://', 30).rpc_timeout == 30
