"""``mx.rnn``: symbolic cells (graphs and outputs against MXNet 1.9.1's recordings),
weight packing, the bucketing sentence iterator, checkpoints and bucketed training."""
import json
import os
import sys
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.rnn.rnn_cell import FusedRNN

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
sys.path.insert(0, DATA)
import mx_rnn_make_fixture as fixture  # noqa: E402  (the oracle's builders, run here with neomx)

with open(os.path.join(DATA, 'mx_rnn_oracle.json')) as _f:
    ORACLE = json.load(_f)

@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        yield


@pytest.mark.parametrize('key', sorted(ORACLE['graphs']))
def test_unrolled_graph_json_equals_mxnet(key):
    expected = ORACLE['graphs'][key]
    made = fixture.graph_json(mx, fixture.graph_builders(mx)[key])
    assert made == expected


@pytest.mark.parametrize('key', sorted(ORACLE['outputs']))
def test_unrolled_outputs_equal_mxnet(key):
    made = fixture.output_builders(mx)[key]()
    expected = ORACLE['outputs'][key]
    assert len(made) == len(expected)
    for got, want in zip(made, expected):
        np.testing.assert_allclose(got, want, atol=2e-5)


def test_fused_rnn_initializer_equals_mxnet():
    made = fixture.fused_init(mx, FusedRNN)
    np.testing.assert_allclose(made['global'], ORACLE['fused_init']['global'])
    np.testing.assert_allclose(made['inner'], ORACLE['fused_init']['inner'])
    assert FusedRNN(None, 4, 1, 'lstm').dumps() == (
        '["fusedrnn", {"init": null, "num_hidden": 4, "num_layers": 1, "mode": "lstm", '
        '"bidirectional": false, "forget_bias": 1.0}]')


def test_parameter_names_state_info_and_begin_state():
    data = mx.sym.Variable('data')
    cell = mx.rnn.LSTMCell(5, prefix='enc_')
    outputs, states = cell.unroll(3, data, merge_outputs=True)
    assert outputs.list_arguments() == ['data', 'enc_i2h_weight', 'enc_i2h_bias',
                                        'enc_h2h_weight', 'enc_h2h_bias']
    assert sorted(cell.params._params) == ['enc_h2h_bias', 'enc_h2h_weight',
                                           'enc_i2h_bias', 'enc_i2h_weight']
    assert cell.state_info == [{'shape': (0, 5), '__layout__': 'NC'}] * 2
    assert cell.state_shape == [(0, 5), (0, 5)]
    _, out_shapes, _ = outputs.infer_shape(data=(2, 3, 7))
    assert out_shapes == [(2, 3, 5)]
    assert [s.name for s in states] == ['enc_t2_out', 'enc_t2_state']
    begin = mx.rnn.GRUCell(4, prefix='g_').begin_state(func=mx.sym.Variable)
    assert [s.name for s in begin] == ['g_begin_state_0']
    fused = mx.rnn.FusedRNNCell(4, num_layers=3, bidirectional=True, mode='gru')
    assert fused.state_info == [{'shape': (6, 0, 4), '__layout__': 'LNC'}]


def test_shared_params_and_modifier_rules():
    params = mx.rnn.RNNParams('shared_')
    first, second = mx.rnn.RNNCell(3, params=params), mx.rnn.RNNCell(3, prefix='b_', params=params)
    data = mx.sym.Variable('data')
    out = mx.sym.Group([first.unroll(2, data)[0][-1], second.unroll(2, data)[0][-1]])
    assert out.list_arguments() == ['data', 'shared_i2h_weight', 'shared_i2h_bias',
                                    'shared_h2h_weight', 'shared_h2h_bias']
    stack = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams('s_'))
    with pytest.raises(AssertionError, match='not both'):
        stack.add(mx.rnn.LSTMCell(3))
    base = mx.rnn.LSTMCell(3)
    zoneout = mx.rnn.ZoneoutCell(base, zoneout_states=0.5)
    with pytest.raises(AssertionError, match='modifier cell'):
        base.begin_state()
    assert len(zoneout.begin_state()) == 2
    with pytest.raises(AssertionError, match='unfuse'):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(3))
    with pytest.raises(NotImplementedError, match='unroll'):
        mx.rnn.FusedRNNCell(3)(data, [])
    with pytest.raises(AssertionError, match='inputs=None'):
        base.unroll(2, None)


def _random_args(sym, data_shape, seed=0):
    arg_shapes, _, _ = sym.infer_shape(data=data_shape)
    rng = np.random.RandomState(seed)
    return {name: mx.nd.array(rng.uniform(-0.5, 0.5, shape), ctx=mx.cpu())     # bound on the CPU
            for name, shape in zip(sym.list_arguments(), arg_shapes)}


def test_lstm_unpack_pack_roundtrip():
    cell = mx.rnn.LSTMCell(2, prefix='l_')
    packed = {'l_i2h_weight': mx.nd.arange(24).reshape((8, 3)), 'l_i2h_bias': mx.nd.arange(8),
              'l_h2h_weight': mx.nd.arange(16).reshape((8, 2)), 'l_h2h_bias': mx.nd.arange(8),
              'other': mx.nd.ones((1,))}
    unpacked = cell.unpack_weights(packed)
    assert sorted(unpacked) == sorted(['other'] + ['l_%s_%s_%s' % (g, gate, kind)
                                                   for g in ('i2h', 'h2h') for gate in 'ifco'
                                                   for kind in ('weight', 'bias')])
    np.testing.assert_array_equal(unpacked['l_i2h_f_weight'].asnumpy(),
                                  np.arange(6, 12).reshape(2, 3))
    np.testing.assert_array_equal(unpacked['l_h2h_o_bias'].asnumpy(), [6, 7])
    repacked = cell.pack_weights(unpacked)
    assert sorted(repacked) == sorted(packed)
    for name, arr in packed.items():
        np.testing.assert_array_equal(repacked[name].asnumpy(), arr.asnumpy())


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn_relu'])
def test_fused_cell_equals_its_unfused_stack(mode):
    data = mx.sym.Variable('data')
    fused = mx.rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=True, prefix='f_')
    fused_out = fused.unroll(4, data, layout='TNC', merge_outputs=True)[0]
    unfused = fused.unfuse()
    unfused_out = unfused.unroll(4, data, layout='TNC', merge_outputs=True)[0]
    args = _random_args(fused_out, (4, 2, 5))
    # Both share the per-gate names; each cell of the stack packs its own gates again.
    unpacked = fused.unpack_weights(args)
    assert unfused.unpack_weights(unfused.pack_weights(unpacked)).keys() == unpacked.keys()
    cell_args = unfused.pack_weights(unpacked)
    assert sorted(cell_args) == sorted(unfused_out.list_arguments())
    expected = fused_out.bind(mx.cpu(), args).forward()[0].asnumpy()
    got = unfused_out.bind(mx.cpu(), cell_args).forward()[0].asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    repacked = fused.pack_weights(unpacked)['f_parameters']
    np.testing.assert_array_equal(repacked.asnumpy(), args['f_parameters'].asnumpy())


def test_encode_sentences():
    encoded, vocab = mx.rnn.encode_sentences([['a', 'b', 'a'], ['c']], invalid_label=1,
                                             start_label=0)
    assert encoded == [[0, 2, 0], [3]]
    assert vocab == {'\n': 1, 'a': 0, 'b': 2, 'c': 3}
    encoded, vocab = mx.rnn.encode_sentences([['a', 'z']], vocab={'a': 5}, unknown_token='<unk>',
                                             start_label=7)
    assert encoded == [[5, 7]] and vocab == {'a': 5, '<unk>': 7}
    with pytest.raises(AssertionError, match='Unknown token z'):
        mx.rnn.encode_sentences([['z']], vocab={'a': 0})


def _sentences(count, seed=0):
    rng = np.random.RandomState(seed)
    return [list(rng.randint(1, 6, size=rng.randint(2, 7))) for _ in range(count)]


def test_bucket_sentence_iter_batches():
    sentences = _sentences(40) + [[1] * 20]  # the long one is discarded
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=4, buckets=[3, 6], invalid_label=0)
    assert it.default_bucket_key == 6 and it.buckets == [3, 6]
    assert it.provide_data[0].name == 'data' and it.provide_data[0].shape == (4, 6)
    assert it.provide_label[0].name == 'softmax_label'
    batches = list(it)
    expected_batches = sum(len(rows) // 4 for rows in it.data)
    assert len(batches) == expected_batches
    for batch in batches:
        data, label = batch.data[0].asnumpy(), batch.label[0].asnumpy()
        assert data.shape == (4, batch.bucket_key) and data.dtype == np.float32
        assert batch.provide_data[0].shape == data.shape and batch.pad == 0
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        np.testing.assert_array_equal(label[:, -1], 0)
    it.reset()
    assert len(list(it)) == expected_batches
    time_major = mx.rnn.BucketSentenceIter(sentences, 4, buckets=[3, 6], layout='TN')
    assert time_major.provide_data[0].shape == (6, 4)
    assert next(time_major).data[0].shape[1] == 4
    with pytest.raises(ValueError, match='Invalid layout'):
        mx.rnn.BucketSentenceIter(sentences, 4, buckets=[3, 6], layout='TC')


def test_bucket_sentence_iter_default_buckets_skip_rare_lengths():
    sentences = [[1, 2]] * 3 + [[1, 2, 3]] * 2 + [[1, 2, 3, 4]] * 3
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=3)
    # Length 3 has fewer than batch_size sentences: no bucket; they pad into bucket 4.
    assert it.buckets == [2, 4]
    assert [len(rows) for rows in it.data] == [3, 5]
    np.testing.assert_array_equal(sorted(it.data[1][:, 3]), [-1, -1, 4, 4, 4])


def test_rnn_checkpoint_saves_unpacked_weights(tmp_path):
    cell = mx.rnn.FusedRNNCell(2, mode='gru', prefix='f_')
    out = cell.unroll(3, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)[0]
    args = _random_args(out, (3, 2, 4))
    del args['data']
    prefix = str(tmp_path / 'model')
    mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)(1, out, args, {})
    saved = mx.nd.load(prefix + '-0002.params')
    assert sorted(saved) == sorted('arg:f_l0_%s_%s_%s' % (group, gate, kind)
                                   for group in ('i2h', 'h2h') for gate in 'rzo'
                                   for kind in ('weight', 'bias'))
    sym, loaded, aux = mx.rnn.load_rnn_checkpoint([cell], prefix, 2)
    assert sym.tojson() == out.tojson() and aux == {}
    np.testing.assert_array_equal(loaded['f_parameters'].asnumpy(), args['f_parameters'].asnumpy())


def _language_model(vocab_size, hidden):
    cell = mx.rnn.SequentialRNNCell()
    cell.add(mx.rnn.LSTMCell(hidden, prefix='lstm_l0_'))

    def sym_gen(length):
        data, label = mx.sym.Variable('data'), mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=vocab_size, output_dim=hidden, name='embed')
        cell.reset()
        outputs, _ = cell.unroll(length, inputs=embed, merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, hidden)),
                                     num_hidden=vocab_size, name='pred')
        pred = mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name='softmax')
        return pred, ('data',), ('softmax_label',)
    return sym_gen


def test_bucketing_module_trains_lstm_language_model():
    mx.random.seed(0)
    np.random.seed(0)
    # Each sentence counts up modulo 6 from a random start: the next token is predictable.
    starts = np.random.randint(0, 6, size=48)
    sentences = [[int(v) for v in (s + np.arange(n)) % 6 + 1] for s, n in zip(starts, [4, 6] * 24)]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=8, buckets=[4, 6], invalid_label=0)
    module = mx.mod.BucketingModule(_language_model(7, 16), default_bucket_key=it.default_bucket_key)
    module.bind(it.provide_data, it.provide_label)
    module.init_params(mx.init.Xavier())
    module.init_optimizer(optimizer='adam', optimizer_params={'learning_rate': 0.05})
    metric = mx.metric.Perplexity(ignore_label=0)
    perplexities = []
    for _ in range(4):
        it.reset()
        metric.reset()
        for batch in it:
            module.forward_backward(batch)
            module.update()
            module.update_metric(metric, batch.label)
        perplexities.append(metric.get()[1])
    assert sorted(module._buckets) == [4, 6]
    assert perplexities[-1] < perplexities[0] * 0.6, perplexities


def test_fused_rnn_initializer_is_mx_init_fused_rnn():
    assert mx.init.FusedRNN is mx.rnn.rnn_cell.FusedRNN
    init = mx.init.FusedRNN(None, 4, 1, 'lstm')
    assert json.loads(init.dumps())[0] == 'fusedrnn'


def test_embedding_weight_takes_the_dtype_attribute():
    # recorded from MXNet 1.9.1
    embed = mx.sym.Embedding(mx.sym.var('x'), input_dim=3, output_dim=2, dtype='float16')
    assert embed.infer_type(x='float64') == ([np.float64, np.float16], [np.float16], [])
    plain = mx.sym.Embedding(mx.sym.var('x'), input_dim=3, output_dim=2)
    assert plain.infer_type(x='int32') == ([np.int32, np.float32], [np.float32], [])


def test_dropout_records_its_mask_output_like_mxnet():
    graph = json.loads(mx.sym.Dropout(mx.sym.var('x'), p=0.5).tojson())
    assert graph['node_row_ptr'] == [0, 1, 3]           # recorded from MXNet 1.9.1


def test_zoneout_first_step_zeros_take_their_shape_from_where():
    # MXNet's zoneout reads zeros((0, 0)) as the output before the first step; the shape
    # comes from ``where`` at inference, and binding runs it
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(6, prefix='rnn_'), zoneout_outputs=0.5, zoneout_states=0.5)
    outputs, _ = cell.unroll(2, [mx.sym.var('x0'), mx.sym.var('x1')])
    group = mx.sym.Group(outputs)
    assert group.infer_shape(x0=(3, 4), x1=(3, 4))[1] == [(3, 6), (3, 6)]
    exe = group.simple_bind(mx.cpu(), x0=(3, 4), x1=(3, 4))
    assert [o.shape for o in exe.forward(is_train=True)] == [(3, 6), (3, 6)]


@pytest.mark.parametrize('cls, states', [('ConvRNNCell', 1), ('ConvLSTMCell', 2), ('ConvGRUCell', 1)])
def test_conv_cells_names_shapes_and_run(cls, states):
    cell = getattr(mx.rnn, cls)(input_shape=(2, 3, 6, 5), num_hidden=4, i2h_stride=(2, 1), prefix='c_')
    outs, last = cell.unroll(2, [mx.sym.var('c_t0_data'), mx.sym.var('c_t1_data')])
    group = mx.sym.Group(outs)
    assert len(last) == states and group.list_outputs() == ['c_t0_out_output', 'c_t1_out_output']
    assert sorted(cell.params._params) == ['c_h2h_bias', 'c_h2h_weight', 'c_i2h_bias', 'c_i2h_weight']
    shapes = dict(c_t0_data=(2, 3, 6, 5), c_t1_data=(2, 3, 6, 5))
    assert group.infer_shape(**shapes)[1] == [(2, 4, 3, 5)] * 2       # the i2h stride halves H
    exe = group.simple_bind(mx.cpu(), **shapes)
    for arr in exe.arg_arrays:
        arr[:] = 0.1
    assert np.isfinite(exe.forward()[1].asnumpy()).all()
    with pytest.raises(AssertionError, match='odd'):
        getattr(mx.rnn, cls)(input_shape=(2, 3, 6, 5), num_hidden=4, h2h_kernel=(2, 3))
