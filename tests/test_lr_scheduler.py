"""mx.lr_scheduler: rates at update counts against MXNet 1.9.1's recorded values, warmup,
statefulness, the optimizer's overwrite of base_lr, and argument checks."""
import math

import pytest

import neomx as mx

L = mx.lr_scheduler
COUNTS = [0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 25]

# recorded with MXNet 1.9.1 (queried in the order of COUNTS)
EXPECTED = {
    'factor_warmup': [0.5, 1.0, 1.5, 2.0, 2.0, 1.0, 1.0, 1.0, 0.5, 0.25, 0.2],
    'multifactor_constant_warmup': [0.1, 0.1, 1.0, 1.0, 1.0, 0.3, 0.3, 0.3, 0.09, 0.027, 0.027],
    'poly_warmup': [0.2, 0.4, 0.6, 0.8, 1.0, 0.781741898, 0.45078125, 0.331481481, 0.085185185, 0.05, 0.05],
    'cosine_warmup': [0.0, 0.2, 0.4, 0.6, 0.8, 0.788074039, 0.697487373, 0.625, 0.275, 0.1, 0.1],
}


def _schedulers():
    return {
        'factor_warmup': L.FactorScheduler(step=4, factor=0.5, stop_factor_lr=0.2, base_lr=2.0, warmup_steps=3,
                                           warmup_begin_lr=0.5),
        'multifactor_constant_warmup': L.MultiFactorScheduler(step=[4, 8, 12], factor=0.3, base_lr=1.0,
                                                              warmup_steps=2, warmup_begin_lr=0.1,
                                                              warmup_mode='constant'),
        'poly_warmup': L.PolyScheduler(max_update=16, base_lr=1.0, pwr=3, final_lr=0.05, warmup_steps=4,
                                       warmup_begin_lr=0.2),
        'cosine_warmup': L.CosineScheduler(max_update=16, base_lr=0.8, final_lr=0.1, warmup_steps=4,
                                           warmup_begin_lr=0.0),
    }


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_matches_mxnet(name):
    sched = _schedulers()[name]
    assert [sched(n) for n in COUNTS] == pytest.approx(EXPECTED[name], rel=1e-7, abs=1e-9)


def test_closed_forms():
    poly = L.PolyScheduler(max_update=10, base_lr=2.0, pwr=2)
    cosine = L.CosineScheduler(max_update=10, base_lr=2.0, final_lr=0.5)
    for n in range(11):
        assert poly(n) == pytest.approx(2.0 * (1 - n / 10) ** 2)
        assert cosine(n) == pytest.approx(0.5 + 1.5 * (1 + math.cos(math.pi * n / 10)) / 2)


def test_factor_scheduler_is_stateful():
    sched = L.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    assert sched(9) == 0.0625
    assert sched(1) == 0.0625            # earlier counts do not undo the decay
    assert sched.base_lr == 0.0625 and sched.count == 8


def test_optimizer_overwrites_base_lr_but_not_warmup_target():
    sched = L.PolyScheduler(max_update=10, base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.0)
    mx.optimizer.SGD(learning_rate=0.5, lr_scheduler=sched)
    assert sched.base_lr == 0.5
    # as in MXNet 1.9.1: warmup still ends at 1.0 and the decay starts from the original rate
    assert [sched(n) for n in [0, 2, 4, 6, 10, 12]] == pytest.approx([0.0, 0.5, 1.0, 0.444444444, 0.0, 0.0])


@pytest.mark.parametrize('make, message', [
    (lambda: L.FactorScheduler(step=0), 'greater or equal than 1'),
    (lambda: L.FactorScheduler(step=2, factor=1.5), 'no more than 1'),
    (lambda: L.MultiFactorScheduler(step=[3, 3]), 'increasing'),
    (lambda: L.MultiFactorScheduler(step=[0, 3]), 'greater or equal than 1'),
    (lambda: L.PolyScheduler(max_update=0), 'strictly positive'),
    (lambda: L.CosineScheduler(max_update=5, warmup_mode='cubic'), 'linear and constant'),
    (lambda: L.CosineScheduler(max_update=5, base_lr=0.1, warmup_begin_lr=0.5), 'higher than warmup_begin_lr'),
    (lambda: L.FactorScheduler(step=1, warmup_steps=-1), 'positive or 0'),
])
def test_bad_arguments_raise_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_non_int_counts_are_rejected():
    with pytest.raises(AssertionError):
        L.PolyScheduler(max_update=5.0)
    with pytest.raises(AssertionError):
        L.FactorScheduler(step=1, warmup_steps=2.0)


def test_base_class_needs_call():
    with pytest.raises(NotImplementedError):
        L.LRScheduler()(0)
