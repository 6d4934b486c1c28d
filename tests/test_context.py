"""Contexts: several logical CPUs, default-context scopes, GPU availability errors."""
import pytest

import neomx as mx


def test_context_identity_and_strings():
    assert mx.cpu() == mx.cpu(0) and mx.cpu(1) != mx.cpu(0)
    assert str(mx.cpu(3)) == 'cpu(3)' and mx.cpu(3).device_type == 'cpu' and mx.cpu(3).device_id == 3
    assert mx.Context(mx.gpu(2)) == mx.gpu(2)
    assert len({mx.cpu(0), mx.cpu(0), mx.cpu(1)}) == 2


def test_default_context_scope_nests_and_restores():
    outer = mx.current_context()        # cpu(0), or the suite's --default-context
    assert mx.nd.zeros((1,)).context == outer
    with mx.cpu(2):
        assert mx.nd.zeros((1,)).context == mx.cpu(2)
        with mx.Context('cpu', 5):
            assert mx.context.current_context() == mx.cpu(5)
        assert mx.current_context() == mx.cpu(2)
    assert mx.current_context() == outer


@pytest.mark.skipif(mx.context.num_gpus() > 0, reason='checks the no-GPU error')
def test_missing_gpu_is_a_clear_error():
    with pytest.raises(mx.base.MXNetError, match=r'gpu\(0\) is not available'):
        mx.nd.zeros((2,), ctx=mx.gpu(0))


def test_unknown_device_type():
    with pytest.raises(mx.base.MXNetError, match='unknown device type'):
        mx.Context('tpu', 0)
