"""mx.sym: composition, naming, lists, attributes, shape/type inference.

Expected names, attributes and shapes are MXNet 1.9.1's, recorded with the oracle.
"""
import json

import numpy as np
import pytest

import neomx as mx


def _mlp():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    act = mx.sym.Activation(fc, act_type='relu', name='relu1')
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(fc2, name='softmax')


def _last_node(sym):
    node = json.loads(sym.tojson())['nodes'][-1]
    return node['op'], node['name'], node.get('attrs', {})


# ------------------------------------------------------------------ composition
def test_variable_attributes():
    v = mx.sym.var('v', shape=(2, 3), dtype='float16', lr_mult=0.5, init=mx.init.One())
    assert v.list_attr() == {'__dtype__': '2', '__init__': '["one", {}]', '__lr_mult__': '0.5',
                             '__shape__': '(2, 3)', 'lr_mult': '0.5'}
    assert v.name == 'v' and v.list_arguments() == ['v'] and v.list_outputs() == ['v']
    assert mx.sym.var('w', stype='csr').list_attr() == {'__storage_type__': '2'}
    with pytest.raises(ValueError, match='double underscores'):
        mx.sym.var('x', mood='calm')


def test_operator_creates_missing_inputs_with_op_attrs():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
    assert fc.list_arguments() == ['data', 'fc_weight', 'fc_bias']
    assert fc.get_internals()['fc_weight'].list_attr() == {'num_hidden': '4'}
    no_bias = mx.sym.FullyConnected(data, num_hidden=4, no_bias=True, name='nb')
    assert no_bias.list_arguments() == ['data', 'nb_weight']
    f = mx.sym.FullyConnected(num_hidden=2, name='f')
    assert f.list_arguments() == ['f_data', 'f_weight', 'f_bias']


def test_batchnorm_auxiliary_states():
    bn = mx.sym.BatchNorm(mx.sym.Convolution(mx.sym.var('data'), kernel=(3, 3), num_filter=2, name='conv'),
                          name='bn')
    assert bn.list_arguments() == ['data', 'conv_weight', 'conv_bias', 'bn_gamma', 'bn_beta']
    assert bn.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert bn.list_inputs() == ['data', 'conv_weight', 'conv_bias', 'bn_gamma', 'bn_beta',
                                'bn_moving_mean', 'bn_moving_var']
    assert bn.list_outputs() == ['bn_output']
    assert bn.attr_dict()['bn_moving_var'] == {'__init__': '["one", {}]'}
    stats = mx.sym.BatchNorm(mx.sym.var('x'), output_mean_var=True, name='b2')
    assert stats.list_outputs() == ['b2_output', 'b2_mean', 'b2_var']
    assert stats[1].name == 'b2' and stats[1].list_outputs() == ['b2_mean']


def test_automatic_names_and_prefix():
    with mx.name.NameManager():
        x = mx.sym.var('x')
        a = mx.sym.FullyConnected(x, num_hidden=2)
        b = mx.sym.Activation(a, act_type='tanh')
        c = mx.sym.exp((b + 1) * 2) - x
        gemm = mx.sym.linalg.gemm2(x, x)
        resize = mx.sym.contrib.BilinearResize2D(x, height=2, width=2)
        sp = mx.sym.split(x, num_outputs=2)
    assert [a.name, b.name, c.name, gemm.name, resize.name, sp.name] == \
        ['fullyconnected0', 'activation0', '_minus0', 'gemm20', 'bilinearresize2d0', 'split0']
    assert _last_node(gemm)[0] == '_linalg_gemm2' and _last_node(sp)[0] == 'SliceChannel'
    with mx.name.Prefix('net_'):
        fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, name='fc')
        auto = mx.sym.Activation(fc, act_type='relu')
    assert fc.list_arguments() == ['x', 'net_fc_weight', 'net_fc_bias']
    assert (fc.name, auto.name) == ('net_fc', 'net_activation0')


@pytest.mark.parametrize('make, op, name, attrs', [
    (lambda a, b: a + b, 'elemwise_add', '_plus0', {}),
    (lambda a, b: a - b, 'elemwise_sub', '_minus0', {}),
    (lambda a, b: a * b, 'elemwise_mul', '_mul0', {}),
    (lambda a, b: a / b, 'elemwise_div', '_div0', {}),
    (lambda a, b: a ** b, '_power', '_power0', {}),
    (lambda a, b: a % b, '_mod', '_mod0', {}),
    (lambda a, b: 1 + a, '_plus_scalar', '_plusscalar0', {'scalar': '1'}),
    (lambda a, b: 1 - a, '_rminus_scalar', '_rminusscalar0', {'scalar': '1'}),
    (lambda a, b: 1 / a, '_rdiv_scalar', '_rdivscalar0', {'scalar': '1'}),
    (lambda a, b: 2 ** a, '_rpower_scalar', '_rpower_scalar0', {'scalar': '2'}),
    (lambda a, b: 3 % a, '_rmod_scalar', '_rmodscalar0', {'scalar': '3'}),
    (lambda a, b: a ** 2, '_power_scalar', '_powerscalar0', {'scalar': '2'}),
    (lambda a, b: a + 1.5, '_plus_scalar', '_plusscalar0', {'scalar': '1.5'}),
    (lambda a, b: -a, '_mul_scalar', '_mulscalar0', {'scalar': '-1.0'}),
    (lambda a, b: abs(a), 'abs', 'abs0', {}),
    (lambda a, b: a == b, '_equal', '_equal0', {}),
    (lambda a, b: a != b, '_not_equal', '_not_equal0', {}),
    (lambda a, b: a <= b, '_lesser_equal', '_lesser_equal0', {}),
    (lambda a, b: a > 1, '_greater_scalar', '_greater_scalar0', {'scalar': '1'}),
])
def test_python_operators_map_to_mxnet_ops(make, op, name, attrs):
    with mx.name.NameManager():
        sym = make(mx.sym.var('a'), mx.sym.var('b'))
    assert _last_node(sym) == (op, name, attrs)


def test_python_operator_values():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    c = (a + b) * 2 - a / b + a ** 2 - 1 / b
    out = c.eval(ctx=mx.cpu(), a=mx.nd.array([1, 2, 4]), b=mx.nd.array([2, 4, 8]))
    np.testing.assert_allclose(out[0].asnumpy(), [6.0, 15.25, 39.375])
    cmp = (a >= b).eval(a=mx.nd.array([1, 5]), b=mx.nd.array([2, 5]))[0]
    assert cmp.dtype == np.float32 and cmp.asnumpy().tolist() == [0, 1]
    with pytest.raises(TypeError):
        a + 'x'


def test_attribute_values_are_stored_as_given():
    x = mx.sym.var('x')
    assert _last_node(mx.sym.sum(x, axis=[0, 1], keepdims=True))[2] == {'axis': '[0, 1]', 'keepdims': 'True'}
    assert _last_node(mx.sym.Cast(x, dtype=np.float16))[2] == {'dtype': 'float16'}
    assert _last_node(mx.sym.Pooling(x, kernel=(2, 2)))[2] == {'kernel': '(2, 2)'}
    assert _last_node(mx.sym.concat(x, x, dim=0))[2] == {'dim': '0', 'num_args': '2'}
    op, _, attrs = _last_node(mx.sym.random.uniform(0, 1, shape=(2,)))
    assert (op, attrs) == ('_random_uniform', {'high': '1', 'low': '0', 'shape': '(2,)'})
    with pytest.raises(mx.base.MXNetError, match='FullyConnected'):
        mx.sym.FullyConnected(x, num_hidden=2, bogus=1)


def test_group_indexing_iteration():
    x = mx.sym.var('x')
    g = mx.sym.Group([mx.sym.exp(x, name='e'), mx.sym.sin(x, name='s')])
    assert g.list_outputs() == ['e_output', 's_output'] and len(g) == 2
    assert g.name is None and g[0].name == 'e' and g['s_output'].name == 's'
    assert [s.name for s in g] == ['e', 's']
    assert repr(g) == '<Symbol group [e, s]>' and repr(g[0]) == '<Symbol e>'
    with pytest.raises(ValueError):
        g['nope']
    with pytest.raises(TypeError):
        mx.sym.Group([])
    split = mx.sym.split(x, num_outputs=3, name='sp')
    assert split.name == 'sp' and split.list_outputs() == ['sp_output0', 'sp_output1', 'sp_output2']
    with pytest.raises(mx.base.MXNetError, match='outputs'):
        mx.sym.exp(split)


def test_internals_and_children():
    net = _mlp()
    internals = net.get_internals()
    assert internals.list_outputs() == ['data', 'fc1_weight', 'fc1_bias', 'fc1_output', 'relu1_output',
                                        'fc2_weight', 'fc2_bias', 'fc2_output', 'softmax_label',
                                        'softmax_output']
    fc1 = internals['fc1_output']
    assert fc1.list_arguments() == ['data', 'fc1_weight', 'fc1_bias']
    assert fc1.infer_shape(data=(2, 5))[1] == [(2, 4)]
    assert net.get_children().list_outputs() == ['fc2_output', 'softmax_label']
    assert mx.sym.var('x').get_children() is None
    # the outputs of one node have its inputs as children once; distinct nodes each theirs
    sliced = mx.sym.SliceChannel(mx.sym.var('data'), num_outputs=3, name='slice')
    assert sliced.get_children().list_outputs() == ['data']
    a, b = mx.sym.var('a'), mx.sym.var('b')
    assert mx.sym.Group([a + b, a * b]).get_children().list_outputs() == ['a', 'b', 'a', 'b']
    with pytest.raises(ValueError):
        mx.sym.var('x').get_internals()['nope']


def test_attr_scope_and_hidden_keys():
    x = mx.sym.var('x', attr={'mood': 'calm'})
    with mx.AttrScope(ctx_group='g1'):
        y = mx.sym.FullyConnected(x, num_hidden=2, name='fc')
    z = mx.sym.FullyConnected(x, num_hidden=3, name='fz', attr={'__mood__': 'busy'})
    group = {'__ctx_group__': 'g1', 'ctx_group': 'g1', 'num_hidden': '2'}
    assert (x.attr('mood'), y.attr('ctx_group'), y.attr('nothing')) == ('calm', 'g1', None)
    assert y.attr_dict() == {'x': {'mood': 'calm'}, 'fc_weight': group, 'fc_bias': group, 'fc': group}
    assert z.list_attr() == {'__mood__': 'busy', 'num_hidden': '3'}
    assert z.attr_dict()['fz_weight'] == {'__mood__': 'busy', 'num_hidden': '3'}
    w = mx.sym.var('w', attr={'lr_mult': '2'})
    assert w.list_attr() == {'__lr_mult__': '2', 'lr_mult': '2'}
    assert json.loads(w.tojson())['nodes'][0]['attrs'] == {'__lr_mult__': '2'}
    w._set_attr(wd_mult='0')
    assert w.attr('wd_mult') == '0'


def test_compose_replaces_variables():
    with mx.name.NameManager():
        s = mx.sym.sin(mx.sym.var('x'))
        k = mx.sym.var('k')
        composed = s(x=k)
        positional = s(k)
    assert composed.list_arguments() == ['k'] == positional.list_arguments()
    assert s.list_arguments() == ['x']
    np.testing.assert_allclose(composed.eval(k=mx.nd.array([1.0]))[0].asnumpy(), np.sin([1.0]), rtol=1e-6)
    with pytest.raises(mx.base.MXNetError):
        s(nope=k)


def test_symbol_methods_and_creation_functions():
    x = mx.sym.var('x')
    values = mx.nd.array([1.0, 4.0, 9.0, 16.0])
    assert x.sum().eval(x=values)[0].asnumpy().tolist() == [30.0]
    assert x.reshape((2, 2)).eval(x=values)[0].shape == (2, 2)
    assert x.sqrt().eval(x=values)[0].asnumpy().tolist() == [1, 2, 3, 4]
    assert x.astype('int32').eval(x=values)[0].dtype == np.int32
    assert mx.sym.zeros((2, 2)).eval()[0].asnumpy().tolist() == [[0, 0], [0, 0]]
    assert mx.sym.full((2,), 3).eval()[0].asnumpy().tolist() == [3, 3]
    assert mx.sym.arange(0, 6, 2, repeat=2).eval()[0].asnumpy().tolist() == [0, 0, 2, 2, 4, 4]
    assert _last_node(mx.sym.arange(0, 6, 2))[2] == {'dtype': 'float32', 'infer_range': 'False', 'repeat': '1',
                                                     'start': '0', 'step': '2', 'stop': '6'}


# ------------------------------------------------------------------- inference
def test_infer_shape_complete():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1), name='conv')
    flat = mx.sym.flatten(mx.sym.Pooling(mx.sym.BatchNorm(conv, name='bn'), kernel=(2, 2), stride=(2, 2),
                                         pool_type='max'))
    arg, out, aux = flat.infer_shape(data=(2, 3, 8, 8))
    assert dict(zip(flat.list_arguments(), arg)) == {
        'data': (2, 3, 8, 8), 'conv_weight': (4, 3, 3, 3), 'conv_bias': (4,), 'bn_gamma': (4,), 'bn_beta': (4,)}
    assert out == [(2, 16)] and aux == [(4,), (4,)]
    assert flat.infer_shape((2, 3, 8, 8)) == (arg, out, aux)


def test_infer_shape_partial_and_unknown():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    z = mx.sym.FullyConnected(x, num_hidden=3, name='fc') + y
    assert z.infer_shape_partial(y=(2, 3)) == ([(), (), (), (2, 3)], [(2, 3)], [])
    with pytest.warns(UserWarning, match='x'):
        assert z.infer_shape(y=(2, 3)) == (None, None, None)
    shaped = mx.sym.FullyConnected(mx.sym.var('x', shape=(4, 3)), num_hidden=2, name='fc')
    assert shaped.infer_shape() == ([(4, 3), (2, 3), (2,)], [(4, 2)], [])


def test_infer_shape_inconsistent_raises():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    with pytest.raises(mx.base.MXNetError, match='elemwise_add'):
        (x + y).infer_shape(x=(2, 3), y=(4, 5))


def test_infer_type():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    z = mx.sym.FullyConnected(x, num_hidden=3, name='fc') + y
    assert z.infer_type(y='float16') == ([np.float16] * 4, [np.float16], [])
    assert z.infer_type() == (None, None, None)
    assert mx.sym.Cast(x, dtype='float16').infer_type(x='float32') == ([np.float32], [np.float16], [])
    net = mx.sym.SoftmaxOutput(x, name='s')
    assert net.infer_type(x='float64') == ([np.float64, np.float64], [np.float64], [])
    assert mx.sym.argmax(x, axis=0).infer_type(x='int32') == ([np.int32], [np.int32], [])


def test_symbol_ufuncs_and_creation_functions():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    x, y = mx.nd.array([1.0, 5.0]), mx.nd.array([3.0, 4.0])
    with mx.name.NameManager():
        cases = [(mx.sym.maximum(a, b), '_maximum0', [3, 5]), (mx.sym.minimum(1.5, a), '_minimumscalar0', [1, 1.5]),
                 (mx.sym.power(a, 2), '_powerscalar0', [1, 25]), (mx.sym.pow(2, a), '_rpowerscalar0', [2, 32]),
                 (mx.sym.hypot(a, b), '_hypot0', [np.hypot(1, 3), np.hypot(5, 4)])]
    for sym, name, want in cases:
        assert sym.name == name
        args = {k: v for k, v in (('a', x), ('b', y)) if k in sym.list_arguments()}
        np.testing.assert_allclose(sym.eval(**args)[0].asnumpy(), want, rtol=1e-6)
    assert mx.sym.maximum(2, 3) == 3
    np.testing.assert_array_equal(mx.sym.eye(3, k=1).eval()[0].asnumpy(), np.eye(3, k=1))
    np.testing.assert_allclose(mx.sym.linspace(0, 1, 5).eval()[0].asnumpy(), np.linspace(0, 1, 5))
    assert mx.sym.zeros((2, 3), name='z').name == 'z'


def test_split_into_one_part_is_one_numbered_output_in_graphs():
    # recorded from MXNet 1.9.1: one output named output0, the squeezed array itself
    parts = mx.sym.split(mx.sym.var('x'), num_outputs=1, axis=1, squeeze_axis=True, name='split')
    assert parts.list_outputs() == ['split_output0']
    x = mx.nd.array(np.arange(6).reshape(2, 1, 3))
    out = (parts * 2).bind(mx.cpu(), {'x': x}).forward()[0]
    np.testing.assert_array_equal(out.asnumpy(), np.arange(6).reshape(2, 3) * 2)
    assert mx.nd.split(x, num_outputs=1, axis=1).shape == (2, 1, 3)


def test_symbol_split_v2_writes_mxnets_attributes():
    equal = json.loads(mx.sym.split_v2(mx.sym.var('x'), 3, axis=0).tojson())['nodes'][1]['attrs']
    at = json.loads(mx.sym.split_v2(mx.sym.var('x'), (2, 4), axis=1, squeeze_axis=True).tojson())['nodes'][1]['attrs']
    # recorded from MXNet 1.9.1
    assert equal == {'axis': '0', 'indices': '[]', 'sections': '3', 'squeeze_axis': 'False'}
    assert at == {'axis': '1', 'indices': '[0, 2, 4]', 'sections': '0', 'squeeze_axis': 'True'}
    parts = mx.sym.split_v2(mx.sym.var('x'), (2, 4), axis=0)
    outs = parts.bind(mx.cpu(), {'x': mx.nd.arange(6)}).forward()
    assert [o.asnumpy().tolist() for o in outs] == [[0, 1], [2, 3], [4, 5]]


def test_symbols_pickle_through_their_json():
    import pickle
    net = _mlp()
    copy = pickle.loads(pickle.dumps([net, net.get_internals()['fc1_output']]))
    assert copy[0].tojson() == net.tojson()
    assert copy[1].list_outputs() == ['fc1_output']
    assert copy[0].infer_shape(data=(2, 5))[1] == [(2, 3)]


def test_gen_atomic_symbol_keeps_operator_and_attributes_only():
    rnn = mx.sym.RNN(mx.sym.var('data'), mx.sym.var('param'), mx.sym.var('h0'), mx.sym.var('h1'),
                     state_size=10, num_layers=2, bidirectional=True, state_outputs=True, mode='lstm',
                     name='rnn')
    atomic = rnn._gen_atomic_symbol()
    assert atomic.list_arguments() == []
    assert atomic.list_outputs() == ['output', 'state_output', 'statecell_output']
    assert atomic.list_attr() == {'bidirectional': 'True', 'mode': 'lstm', 'num_layers': '2',
                                  'state_outputs': 'True', 'state_size': '10'}
    with pytest.raises(mx.base.MXNetError):
        mx.sym.var('x')._gen_atomic_symbol()


def test_infer_type_partial_leaves_unknown_as_none():
    data = mx.sym.var('data')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Cast(data, dtype='float32'), num_hidden=8,
                                                     name='fc1'), name='softmax')
    arg, out, aux = net.infer_type_partial()
    assert arg == [None, np.float32, np.float32, np.float32]
    assert (out, aux) == ([np.float32], [])
