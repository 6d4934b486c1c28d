"""mx.monitor.Monitor and Executor.set_monitor_callback (MXNet 1.9.1's debugging API)."""
import logging

import numpy as np
import pytest

import neomx as mx


def _bound_mlp():
    data = mx.sym.var('data')
    out = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=3, name='fc'), act_type='relu', name='act')
    exe = out.simple_bind(mx.cpu(), data=(2, 4))
    rng = np.random.RandomState(0)
    for array in exe.arg_arrays:
        array[:] = rng.uniform(-1, 1, array.shape)
    return exe


def _rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def test_monitor_collects_outputs_then_arguments_by_mxnet_names():
    exe = _bound_mlp()
    mon = mx.mon.Monitor(1)
    mon.install(exe)
    mon.tic()
    out = exe.forward(is_train=False)[0].asnumpy()
    results = mon.toc()
    # names and order recorded from MXNet 1.9.1
    assert [name for _, name, _ in results] == ['fc_output', 'act_output', 'data', 'fc_weight', 'fc_bias']
    assert all(step == 1 for step, _, _ in results)
    stats = {name: float(text.strip()) for _, name, text in results}
    np.testing.assert_allclose(stats['act_output'], _rms(out), rtol=1e-5)
    np.testing.assert_allclose(stats['fc_weight'], _rms(exe.arg_dict['fc_weight'].asnumpy()), rtol=1e-5)


def test_monitor_interval_pattern_sort_and_inputs():
    exe = _bound_mlp()
    mon = mx.monitor.Monitor(2, stat_func=lambda x: x.max(), pattern='.*(output|data|input0)',
                             sort=True, monitor_all=True)
    mon.install(exe)
    collected = []
    for _ in range(3):
        mon.tic()
        exe.forward()
        collected.append(mon.toc())
    assert [len(c) for c in collected] == [6, 0, 6]
    # recorded from MXNet 1.9.1: the variable input 'data' as itself, then as an argument;
    # Activation (registered without input names) names its input by position
    assert [name for _, name, _ in collected[0]] == ['act_input0', 'act_output', 'data', 'data', 'fc_data',
                                                     'fc_output']
    assert collected[2][0][0] == 3


def test_monitor_callback_names_are_mxnets():
    # recorded from MXNet 1.9.1: a variable input as itself and as <node>_<input>; Activation
    # (registered in MXNet without input names) by position
    names = []
    exe = _bound_mlp()
    exe.set_monitor_callback(lambda name, array: names.append(name), monitor_all=True)
    exe.forward()
    assert names == [b'data', b'fc_data', b'fc_weight', b'fc_weight', b'fc_bias', b'fc_bias', b'fc_output',
                     b'act_input0', b'act_output']
    names.clear()
    data = mx.sym.var('data', shape=(2, 3))
    exe = mx.sym.concat(data, data, dim=0, name='concat').simple_bind(mx.cpu(), grad_req='null')
    exe.set_monitor_callback(lambda name, array: names.append(name.decode()), monitor_all=True)
    exe.forward()
    assert names == ['data', 'concat_arg0', 'data', 'concat_arg1', 'concat_output']
    names.clear()
    exe.set_monitor_callback(lambda name, array: names.append(name.decode()))
    exe.forward()
    assert names == ['concat_output']


def test_module_fit_with_monitor_logs_batches(caplog):
    data = mx.sym.var('data')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name='fc'), name='softmax')
    x = np.random.RandomState(1).uniform(-1, 1, (8, 3)).astype(np.float32)
    train = mx.io.NDArrayIter(x, np.arange(8) % 2, batch_size=4)
    module = mx.mod.Module(net, context=mx.cpu())
    with caplog.at_level(logging.INFO):
        module.fit(train, num_epoch=1, monitor=mx.mon.Monitor(1, pattern='fc_output'))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith('Batch:')]
    assert len(lines) == 2 and all('fc_output' in line for line in lines)


def test_monitor_survives_new_input_shapes_and_hands_mxnet_style_handles():
    import ctypes
    from neomx.operator import NDArrayHandle
    seen = {}

    def callback(name, arr):
        # what MXNet code does with the raw handle it is given
        array = mx.nd.NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
        seen[name.decode()] = array.shape

    data = mx.sym.var('data', shape=(1, 3, 10, 10))
    module = mx.mod.Module(mx.sym.Convolution(data, kernel=(1, 1), num_filter=1, name='conv'), label_names=None)
    module.bind(for_training=False, data_shapes=[('data', (1, 3, 10, 10))])
    module.init_params()
    module._exec_group.execs[0].set_monitor_callback(callback, monitor_all=True)
    module.forward(mx.io.DataBatch([mx.nd.ones((1, 3, 10, 14))]), is_train=False)
    assert seen == {'data': (1, 3, 10, 14), 'conv_data': (1, 3, 10, 14), 'conv_weight': (1, 3, 1, 1),
                    'conv_bias': (1,), 'conv_output': (1, 1, 10, 14)}
    exe = module._exec_group.execs[0].reshape(allow_up_sizing=True, data=(2, 3, 10, 10))
    seen.clear()
    exe.forward()
    assert seen['conv_output'] == (2, 1, 10, 10)
    with pytest.raises(mx.base.MXNetError, match='no live NDArray'):
        mx.nd.NDArray(ctypes.c_void_p(1))
