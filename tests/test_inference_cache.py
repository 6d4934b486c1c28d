"""What makes binding unrolled RNNs cheap: meta runs cached across inferences, the Module's
one joint shape+dtype inference, the FusedRNN initializer writing in place, and the
comparison helpers' tolerance tables built once."""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.symbol import inference
from neomx.test_utils import default_rtols, get_tols


@pytest.fixture
def meta_calls(monkeypatch):
    """The (op, input shapes) of every meta run actually made, with an empty cache."""
    made = []
    call_on = inference._call_on

    def counting(node, shapes, dtypes, device):
        made.append((node.op, [tuple(s) for s in shapes]))
        return call_on(node, shapes, dtypes, device)
    monkeypatch.setattr(inference, '_call_on', counting)
    monkeypatch.setattr(inference, '_META_RESULTS', {})
    return made


def _lstm(steps, hidden=4, prefix='l_'):
    cell = mx.rnn.LSTMCell(hidden, prefix=prefix)
    outputs, _ = cell.unroll(steps, mx.sym.var('data'), layout='NTC', merge_outputs=True)
    return outputs


def test_repeated_calls_of_an_unrolled_graph_run_once(meta_calls):
    shapes, _ = inference.infer(_lstm(3), {'data': (2, 3, 5)})
    first = len(meta_calls)
    # each step repeats the first one's calls: far fewer runs than operator nodes
    assert first < len([n for n in _lstm(3)._nodes() if not n.is_variable])
    # a new graph of the same operators, attributes and shapes runs nothing
    again, _ = inference.infer(_lstm(3, prefix='other_'), {'data': (2, 3, 5)})
    assert len(meta_calls) == first
    assert sorted(again.values()) == sorted(shapes.values())
    # other shapes are other calls
    inference.infer(_lstm(3), {'data': (7, 3, 5)})
    assert len(meta_calls) > first


def test_the_cache_key_holds_the_semantics_and_skips_subgraph_operators():
    node = [n for n in _lstm(1)._nodes() if n.op == 'FullyConnected'][0]
    key = inference._meta_key(node, [(2, 5), (16, 5), (16,)], [None] * 3)
    with mx.util.np_shape(True):
        assert inference._meta_key(node, [(2, 5), (16, 5), (16,)], [None] * 3) != key
    with mx.autograd.train_mode():
        assert inference._meta_key(node, [(2, 5), (16, 5), (16,)], [None] * 3) != key
    # a foreach node runs its subgraph: never cached
    out, _ = mx.sym.contrib.foreach(lambda x, s: (x * 2, s), mx.sym.var('seq'), [mx.sym.var('s')])
    loop = [n for n in out._nodes() if n.op == '_foreach'][0]
    assert inference._meta_key(loop, [(3, 2), (2,)], [None] * 2) is None
    with pytest.raises(TypeError):
        inference._plain_key([1, object()])
    # 1, 1.0 and True are equal dict keys; as attributes they can make other dtypes
    assert len({inference._plain_key(v) for v in (1, 1.0, True, (1,), [1])}) == 5


def test_a_refused_call_is_cached_and_raised_again(meta_calls):
    node = [n for n in _lstm(1)._nodes() if n.op == 'FullyConnected'][0]
    import torch
    dtypes = [torch.float32] * 3
    for _ in range(2):
        with pytest.raises((MXNetError, RuntimeError)):
            inference._meta_outputs(node, [(2, 5), (16, 6), (16,)], dtypes)
    assert len(meta_calls) == 1
    # an error of the user's graph still names the operator
    bad = mx.sym.FullyConnected(mx.sym.var('x'), mx.sym.var('w'), num_hidden=4, no_bias=True, name='fc')
    for _ in range(2):
        with pytest.raises(MXNetError, match='fc'):
            bad.infer_shape(x=(2, 5), w=(4, 6))


def test_module_binds_with_one_joint_inference(monkeypatch):
    runs = []
    run = inference._Inference.run

    def counting(self):
        runs.append(self)
        return run(self)
    monkeypatch.setattr(inference._Inference, 'run', counting)
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[mx.io.DataDesc('data', (2, 4), dtype='float64')])
    exe = mod._exec_group.execs[0]
    # as MXNet 1.9.1: the weights take the data's dtype
    assert {n: a.dtype for n, a in exe.arg_dict.items()} == {
        'data': np.float64, 'fc_weight': np.float64, 'fc_bias': np.float64}
    assert exe.arg_dict['fc_weight'].shape == (3, 4) and exe.outputs[0].dtype == np.float64
    assert len(runs) == 2       # the group's inference and the executor's outputs
    with pytest.raises(MXNetError, match='cannot bind'):
        mx.mod.Module(mx.sym.broadcast_add(net, mx.sym.var('other')), label_names=None).bind(data_shapes=[('data', (2, 4))])


@pytest.mark.parametrize('mode,bidirectional', [('lstm', True), ('gru', False), ('rnn_tanh', True)])
def test_fused_rnn_initializer_writes_the_pieces_unpack_weights_names(mode, bidirectional):
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=bidirectional, prefix='')
    size = inference.infer(cell.unroll(2, mx.sym.var('data'), layout='TNC')[0],
                           {'data': (2, 1, 4)})[0]
    packed = [s for (n, _), s in size.items() if n.name == 'parameters'][0]
    init = mx.init.FusedRNN(mx.init.Uniform(0.5), 3, 2, mode, bidirectional, forget_bias=2.0)
    mx.random.seed(7)
    arr = mx.nd.zeros(packed)
    # as Module.init_params reaches it: through the variable's __init__ attribute
    mx.init.Zero()(mx.init.InitDesc('parameters', attrs={'__init__': init.dumps()}), arr)
    # the same draws, piece by piece, into unpacked copies
    mx.random.seed(7)
    pieces = cell.unpack_weights({'parameters': mx.nd.zeros(packed)})
    for name, piece in pieces.items():
        if mode == 'lstm' and name.endswith('_f_bias'):
            piece[:] = 2.0
        else:
            mx.init.Uniform(0.5)(mx.init.InitDesc(name), piece)
    np.testing.assert_array_equal(arr.asnumpy(), cell.pack_weights(pieces)['parameters'].asnumpy())
    assert np.count_nonzero(arr.asnumpy()) > arr.size // 2     # the weights drawn (biases are 0)


def test_default_tolerance_tables_are_copies():
    table = default_rtols()
    table[np.dtype(np.float32)] = 0.5
    assert default_rtols()[np.dtype(np.float32)] == 1e-4
    assert get_tols(np.ones(2, np.float32), np.ones(2, np.float16), None, None) == (1e-2, 1e-1)
    assert get_tols(np.ones(2, np.float32), np.ones(2), 0.3, None) == (0.3, 1e-3)
