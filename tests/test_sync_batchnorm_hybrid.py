"""The ``_contrib_SyncBatchNorm`` operator, and SyncBatchNorm inside hybridized blocks.

SyncBatchNorm traces to MXNet's ``_contrib_SyncBatchNorm`` operator, which synchronises the
batch statistics itself, so a hybridized network in a two-context parallel step must
behave as the same network run imperatively and as a plain BatchNorm network on the
concatenated batch: outputs, input and parameter gradients, running statistics. Its
exported graph must be MXNet's, byte for byte.
"""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon
from neomx.gluon.contrib.nn import SyncBatchNorm
from neomx.gluon.contrib.parallel import DataParallelModel, parallel_apply
from neomx.operator import registry
from neomx.test_utils import check_numeric_gradient

CONTEXTS = [mx.cpu(0), mx.cpu(1)]


@pytest.fixture(autouse=True)
def _current_context_is_the_first_device():
    """The steps here run on cpu(0) and cpu(1) (two devices any machine has); the arrays a
    test makes without ``ctx`` belong on the first, also under ``--default-context 'gpu(0)'``."""
    with mx.cpu(0):                 # (a Context of its own: CONTEXTS' are entered by the steps)
        yield


SPLIT = 2                                   # unequal parts: 2 and 3 samples


def _net(norm_class, ctx, hybridize, **norm_kwargs):
    """Conv2D -> ``norm_class(in_channels=4, **norm_kwargs)`` -> relu with fixed,
    non-trivial parameters and statistics."""
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, in_channels=3), norm_class(in_channels=4, **norm_kwargs),
                gluon.nn.Activation('relu'))
    net.initialize(ctx=ctx)
    rng = np.random.RandomState(0)
    for param in net.collect_params().values():
        low = 0.5 if param.name.endswith(('gamma', 'running_var')) else -0.5
        param.set_data(mx.nd.array(rng.uniform(low, low + 1, param.shape)))
    if hybridize:
        net.hybridize()
    return net


def _sync_net(hybridize, num_devices=2):
    return _net(SyncBatchNorm, CONTEXTS, hybridize, num_devices=num_devices)


def _data():
    rng = np.random.RandomState(1)
    return (rng.normal(1.0, 2.0, (5, 3, 6, 6)).astype('float32'),
            rng.normal(size=(5, 4, 4, 4)).astype('float32'))    # input and head gradient


def _run(net, ctx_list, x, head, train=True):
    """Forward and backward of ``net`` with the batch split over ``ctx_list`` (one parallel
    step when there are several contexts).

    Returns
    -------
    dict of str -> ndarray
        The output and input gradient (whole batch), the parameter gradients summed over
        the contexts, and each context's running statistics.
    """
    bounds = [0, SPLIT, len(x)] if len(ctx_list) > 1 else [0, len(x)]
    parts = [mx.nd.array(x[a:b], ctx=ctx) for a, b, ctx in zip(bounds, bounds[1:], ctx_list)]
    for part in parts:
        part.attach_grad()
    with autograd.record(train_mode=train):
        outs = [out for (out,) in parallel_apply(net, [(p,) for p in parts], sync=True)]
    autograd.backward(outs, [mx.nd.array(head[a:b], ctx=ctx)
                             for a, b, ctx in zip(bounds, bounds[1:], ctx_list)])
    results = {'output': np.concatenate([out.asnumpy() for out in outs]),
               'data grad': np.concatenate([part.grad.asnumpy() for part in parts])}
    for param in net.collect_params().values():
        key = param.name.split('_', 2)[2]     # 'running_mean' of 'hybridsequential0_batchnorm0_'
        if param.grad_req != 'null':
            results[key + ' grad'] = sum(g.asnumpy() for g in param.list_grad())
        else:
            for ctx, copy in zip(ctx_list, param.list_data()):
                results['%s on %s' % (key, ctx)] = copy.asnumpy()
    return results


def _assert_same(actual, expected):
    """Results of :func:`_run` agree; per-context statistics are compared with context 0's."""
    for key, value in actual.items():
        reference = expected.get(key, expected.get(key.replace('cpu(1)', 'cpu(0)')))
        np.testing.assert_allclose(value, reference, rtol=1e-4, atol=1e-4, err_msg=key)


# ------------------------------------------------------------ equivalence
def test_hybridized_net_equals_imperative_net_and_batchnorm_on_full_batch():
    x, head = _data()
    full_batch = _run(_net(gluon.nn.BatchNorm, [mx.cpu(0)], False),
                      [mx.cpu(0)], x, head)
    imperative = _run(_sync_net(hybridize=False), CONTEXTS, x, head)
    hybridized = _run(_sync_net(hybridize=True), CONTEXTS, x, head)
    assert sorted(hybridized) == sorted(imperative)
    initial = _sync_net(hybridize=False)[1].running_mean.data(CONTEXTS[1]).asnumpy()
    assert not np.allclose(hybridized['running_mean on cpu(1)'], initial)     # updated
    _assert_same(hybridized, imperative)
    _assert_same(hybridized, full_batch)


def test_predict_mode_uses_running_statistics():
    x, _ = _data()
    reference = _net(gluon.nn.BatchNorm, [mx.cpu(0)], False)
    expected = reference(mx.nd.array(x)).asnumpy()
    net = _sync_net(hybridize=True)
    statistics = net[1].running_var.data(CONTEXTS[1]).asnumpy()
    outputs = DataParallelModel(net, CONTEXTS, sync=True)(mx.nd.array(x))
    np.testing.assert_allclose(np.concatenate([out.asnumpy() for (out,) in outputs]), expected,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(net[1].running_var.data(CONTEXTS[1]).asnumpy(), statistics)


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
def test_ndev_other_than_the_step_size_names_the_layer(hybridize):
    x, head = _data()
    with pytest.raises(mx.base.MXNetError, match=r"_contrib_SyncBatchNorm: layer "
                                                 r"'hybridsequential\d+_syncbatchnorm\d+_' "
                                                 r'declares ndev=3 but runs in a parallel '
                                                 r'step of 2 contexts'):
        _run(_sync_net(hybridize, num_devices=3), CONTEXTS, x, head)


# ------------------------------------------------------------------ export
# MXNet 1.9.1's export of _net(SyncBatchNorm, ..., num_devices=2), the first
# blocks of their kinds. MXNet ends every line that ends with a comma with a space too:
# stripped here, restored below.
_MXNET_SYMBOL_JSON = '''{
  "nodes": [
    {
      "op": "null",
      "name": "data",
      "inputs": []
    },
    {
      "op": "null",
      "name": "hybridsequential0_conv0_weight",
      "attrs": {
        "__dtype__": "0",
        "__lr_mult__": "1.0",
        "__shape__": "(4, 3, 3, 3)",
        "__storage_type__": "0",
        "__wd_mult__": "1.0"
      },
      "inputs": []
    },
    {
      "op": "null",
      "name": "hybridsequential0_conv0_bias",
      "attrs": {
        "__dtype__": "0",
        "__init__": "zeros",
        "__lr_mult__": "1.0",
        "__shape__": "(4,)",
        "__storage_type__": "0",
        "__wd_mult__": "1.0"
      },
      "inputs": []
    },
    {
      "op": "Convolution",
      "name": "hybridsequential0_conv0_fwd",
      "attrs": {
        "dilate": "(1, 1)",
        "kernel": "(3, 3)",
        "layout": "NCHW",
        "no_bias": "False",
        "num_filter": "4",
        "num_group": "1",
        "pad": "(0, 0)",
        "stride": "(1, 1)"
      },
      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    },
    {
      "op": "null",
      "name": "hybridsequential0_syncbatchnorm0_gamma",
      "attrs": {
        "__dtype__": "0",
        "__init__": "ones",
        "__lr_mult__": "1.0",
        "__shape__": "(4,)",
        "__storage_type__": "0",
        "__wd_mult__": "1.0"
      },
      "inputs": []
    },
    {
      "op": "null",
      "name": "hybridsequential0_syncbatchnorm0_beta",
      "attrs": {
        "__dtype__": "0",
        "__init__": "zeros",
        "__lr_mult__": "1.0",
        "__shape__": "(4,)",
        "__storage_type__": "0",
        "__wd_mult__": "1.0"
      },
      "inputs": []
    },
    {
      "op": "null",
      "name": "hybridsequential0_syncbatchnorm0_running_mean",
      "attrs": {
        "__dtype__": "0",
        "__init__": "zeros",
        "__lr_mult__": "1.0",
        "__shape__": "(4,)",
        "__storage_type__": "0",
        "__wd_mult__": "1.0"
      },
      "inputs": []
    },
    {
      "op": "null",
      "name": "hybridsequential0_syncbatchnorm0_running_var",
      "attrs": {
        "__dtype__": "0",
        "__init__": "ones",
        "__lr_mult__": "1.0",
        "__shape__": "(4,)",
        "__storage_type__": "0",
        "__wd_mult__": "1.0"
      },
      "inputs": []
    },
    {
      "op": "_contrib_SyncBatchNorm",
      "name": "hybridsequential0_syncbatchnorm0_fwd",
      "attrs": {
        "eps": "1e-05",
        "fix_gamma": "False",
        "key": "hybridsequential0_syncbatchnorm0_",
        "momentum": "0.9",
        "ndev": "2",
        "use_global_stats": "False"
      },
      "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]
    },
    {
      "op": "Activation",
      "name": "hybridsequential0_relu0_fwd",
      "attrs": {"act_type": "relu"},
      "inputs": [[8, 0, 0]]
    }
  ],
  "arg_nodes": [0, 1, 2, 4, 5, 6, 7],
  "node_row_ptr": [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    11,
    12
  ],
  "heads": [[9, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}'''.replace(',\n', ', \n')


def test_export_is_mxnets_graph_and_loads_as_symbol_block(tmp_path):
    with mx.name.NameManager():
        net = _sync_net(hybridize=True)
    x, head = _data()
    net(mx.nd.array(x, ctx=CONTEXTS[0]))
    net.export(str(tmp_path / 'net'))
    assert (tmp_path / 'net-symbol.json').read_text() == _MXNET_SYMBOL_JSON
    loaded = gluon.SymbolBlock.imports(str(tmp_path / 'net-symbol.json'), ['data'],
                                       str(tmp_path / 'net-0000.params'), ctx=CONTEXTS)
    # the key in the graph makes the imported block synchronise as the original does
    _assert_same(_run(loaded, CONTEXTS, x, head), _run(net, CONTEXTS, x, head))


# --------------------------------------------------------------- operator
def test_operator_signature_is_mxnets():
    spec = registry.get('_contrib_SyncBatchNorm')
    assert spec.inputs == ('data', 'gamma', 'beta', 'moving_mean', 'moving_var')
    assert spec.aux == ('moving_mean', 'moving_var')
    assert spec.attr_names == ('eps', 'momentum', 'fix_gamma', 'use_global_stats',
                               'output_mean_var', 'ndev', 'key')
    assert spec.defaults == {'eps': 1e-3, 'momentum': 0.9, 'fix_gamma': True,
                             'use_global_stats': False, 'output_mean_var': False, 'ndev': 1}
    sym = mx.sym.contrib.SyncBatchNorm(mx.sym.var('d'), key='k', name='x')
    assert sym.list_arguments() == ['d', 'x_gamma', 'x_beta']
    assert sym.list_auxiliary_states() == ['x_moving_mean', 'x_moving_var']
    assert sym.list_outputs() == ['x_output']
    assert sym.infer_shape(d=(2, 3, 4)) == ([(2, 3, 4), (3,), (3,)], [(2, 3, 4)], [(3,), (3,)])
    with_stats = mx.sym.contrib.SyncBatchNorm(mx.sym.var('d'), output_mean_var=True, key='k',
                                              name='x')
    assert with_stats.list_outputs() == ['x_output', 'x_mean', 'x_var']
    with pytest.raises(mx.base.MXNetError, match="required argument 'key'"):
        mx.nd.contrib.SyncBatchNorm(mx.nd.ones((2, 2)), mx.nd.ones(2), mx.nd.zeros(2),
                                    mx.nd.zeros(2), mx.nd.ones(2))


def test_operator_outside_a_step_matches_mxnet():
    """Values recorded with MXNet 1.9.1; with ``output_mean_var`` in training the hidden
    outputs are the batch mean and biased variance."""
    x = mx.nd.array([[1, 2], [3, 5]])
    params = [mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2), mx.nd.ones(2)]
    predicted = mx.nd.contrib.SyncBatchNorm(x, *params, key='k')
    np.testing.assert_allclose(predicted.asnumpy(), [[0.9995004, 1.9990008],
                                                     [2.9985013, 4.997502]], rtol=1e-6)
    with autograd.record():
        # positional attributes in MXNet's order: eps ... output_mean_var, ndev, key
        out, mean, var = mx.nd.contrib.SyncBatchNorm(x, *params, 1e-3, 0.9, True, False, True,
                                                     1, 'k')
    np.testing.assert_allclose(out.asnumpy(), [[-0.9995004, -0.99977785],
                                               [0.9995004, 0.99977785]], rtol=1e-6)
    np.testing.assert_allclose(mean.asnumpy(), [2, 3.5])
    np.testing.assert_allclose(var.asnumpy(), [1, 2.25], rtol=1e-5)


def test_operator_gradient_matches_finite_differences():
    rng = np.random.RandomState(2)
    statistics = [mx.nd.array(rng.uniform(-1, 1, 3), dtype='float64'),
                  mx.nd.array(rng.uniform(0.5, 1.5, 3), dtype='float64')]

    def sync_batch_norm(data, gamma, beta):
        with autograd.train_mode():
            return mx.nd.contrib.SyncBatchNorm(data, gamma, beta, *statistics, fix_gamma=False,
                                               key='layer')

    check_numeric_gradient(sync_batch_norm, [rng.normal(size=(4, 3, 2)),
                                             rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)],
                           rtol=1e-4)
