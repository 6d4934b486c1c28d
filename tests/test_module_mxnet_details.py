"""Module details MXNet 1.9.1 code relies on: any batch object with ``data``, BaseModule's
concrete set_params, gradients shared between buckets, executor groups built from
(name, shape) pairs sharing their input arrays."""
from collections import namedtuple

import numpy as np

import neomx as mx
from neomx.module.executor_group import DataParallelExecutorGroup


def test_forward_takes_any_batch_with_data_and_reshapes():
    Batch = namedtuple('Batch', ['data'])
    mod = mx.mod.Module(mx.sym.var('data') * 2, label_names=None)
    mod.bind(data_shapes=[('data', (1, 10))])
    mod.init_params()
    assert mod._grad_req == 'write'
    mod.forward(Batch([mx.nd.ones((3, 5))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((3, 5), 2))


def test_base_module_set_params_goes_through_init_params():
    calls = []

    class Recording(mx.mod.BaseModule):
        def init_params(self, initializer=None, arg_params=None, aux_params=None,
                        allow_missing=False, force_init=False, allow_extra=False):
            calls.append((initializer, arg_params, aux_params, allow_missing, force_init, allow_extra))

    Recording().set_params({'w': 1}, {}, allow_extra=True)
    assert calls == [(None, {'w': 1}, {}, False, True, True)]
    base = mx.mod.BaseModule()
    try:
        base.forward(None)
    except NotImplementedError:
        pass
    else:
        raise AssertionError('BaseModule.forward must raise NotImplementedError')


def test_buckets_share_gradients_so_add_accumulates():
    def sym_gen(_):
        data = mx.sym.var('data')
        weight = mx.sym.var('a', shape=(1,), init=mx.init.One())
        return mx.sym.make_loss(mx.sym.broadcast_mul(data, weight)), ('data',), None

    mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[['data', (2,)]], for_training=True, grad_req='add')
    mod.init_params()
    for key in (10, 5):
        mod.forward_backward(mx.io.DataBatch(
            data=[mx.nd.ones((2,))], label=None, bucket_key=key,
            provide_data=[mx.io.DataDesc(name='data', shape=(2,), layout='N')]))
    assert mod._curr_module._grad_req == 'add'
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == 4


def test_executor_groups_share_input_arrays_and_gradients():
    def net(layers):
        x = mx.sym.var('data')
        for i in range(layers):
            x = mx.sym.FullyConnected(x, num_hidden=3, name='fc%d' % i)
        return mx.sym.LinearRegressionOutput(x, name='out')

    contexts = [mx.cpu(0), mx.cpu(1)]
    shared_names = ['fc0_weight', 'fc0_bias']
    first = DataParallelExecutorGroup(net(1), contexts, [1, 1], [('data', (4, 3))], [('out_label', (4, 3))],
                                      shared_names, for_training=True, inputs_need_grad=False)
    assert sorted(first.shared_data_arrays[0]) == ['data', 'out_label']
    second = DataParallelExecutorGroup(net(2), contexts, [1, 1], [('data', (4, 3))], [('out_label', (4, 3))],
                                       shared_names, for_training=True, inputs_need_grad=False,
                                       shared_group=first)
    assert second.shared_data_arrays is first.shared_data_arrays
    assert sorted(first.shared_data_arrays[1]) == ['data', 'fc1_bias', 'fc1_weight', 'out_label']
    for mine, theirs in zip(first.execs, second.execs):
        assert mine.arg_dict['data'] is theirs.arg_dict['data']
        assert mine.arg_dict['fc0_weight'] is theirs.arg_dict['fc0_weight']
        assert mine.grad_dict['fc0_weight'] is theirs.grad_dict['fc0_weight']


def test_every_bucket_symbol_is_named_afresh():
    def sym_gen(seq_len):
        data = mx.sym.var('data')
        embed = mx.sym.Embedding(data, input_dim=20, output_dim=4)
        out = mx.sym.FullyConnected(mx.sym.Reshape(embed, shape=(-1, 4)), num_hidden=3)
        return mx.sym.make_loss(mx.sym.sum(out)), ('data',), None

    mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=6)
    mod.bind([('data', (2, 6))])
    mod.init_params()
    assert mod.symbol.list_arguments()[1] == 'embedding0_weight'
    mod.switch_bucket(3, [('data', (2, 3))])
    assert mod._curr_module.symbol.list_arguments()[1] == 'embedding0_weight'
    before = mod._buckets[6]._total_exec_bytes
    assert isinstance(before, int) and before >= 0
    assert mx.mod.Module(mx.sym.var('data'))._total_exec_bytes == 0


def test_group2ctxs_one_context_serves_every_device():
    with mx.AttrScope(ctx_group='dev1'):
        a = mx.sym.var('a') * 2
    with mx.AttrScope(ctx_group='dev2'):
        out = a + mx.sym.var('b')
    shape = (2, 5)
    grads = []
    for group2ctxs in ({'dev1': mx.cpu(2), 'dev2': [mx.cpu(3)]}, None):
        mod = mx.mod.Module(out, context=[mx.cpu(0), mx.cpu(1)], data_names=['a', 'b'], label_names=None,
                            group2ctxs=group2ctxs)
        mod.bind(data_shapes=[['a', shape], ['b', shape]], inputs_need_grad=True)
        mod.init_params()
        mod.forward(mx.io.DataBatch(data=[mx.nd.ones(shape), mx.nd.ones(shape)]), is_train=True)
        mod.backward([mx.nd.ones(shape)])
        grads.append([g.asnumpy() for g in mod.get_input_grads()])
    np.testing.assert_array_equal(grads[0][0], np.full(shape, 2))
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
    bad = mx.mod.Module(out, context=[mx.cpu(0), mx.cpu(1)], data_names=['a', 'b'], label_names=None,
                        group2ctxs={'dev1': [mx.cpu(1)] * 3, 'dev2': mx.cpu(2)})
    try:
        bad.bind(data_shapes=[['a', shape], ['b', shape]])
    except ValueError as err:
        assert "group 'dev1' has 3 contexts for 2 devices" in str(err)
    else:
        raise AssertionError('3 contexts for 2 devices must be refused')
