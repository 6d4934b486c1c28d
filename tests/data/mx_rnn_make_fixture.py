"""Records MXNet 1.9.1's ``mx.rnn`` results for tests/test_mx_rnn.py:

    ~/mxref/bin/python tests/data/mx_rnn_make_fixture.py   # writes mx_rnn_oracle.json

``graphs``: ``tojson()`` of unrolled cells (parsed); ``outputs``: forward results of unrolled
graphs whose arguments are filled by :func:`deterministic`; ``fused_init``: a packed LSTM
vector filled by the ``FusedRNN`` initializer.  Every builder takes the library as ``mx``:
the test runs the same builders with neomx and compares.
"""
import json
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def deterministic(shape, seed):
    """Values in [-0.5, 0.5] that depend only on the shape and ``seed``."""
    return (np.sin(np.arange(int(np.prod(shape))) * 0.7 + seed) * 0.5).reshape(shape).astype('float32')


def group(mx, outputs, states):
    """One symbol of the outputs (a symbol or a list) followed by the states."""
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    return mx.sym.Group(outputs + states)


def graph_builders(mx):
    """Functions making the recorded graphs, by key; call each in a fresh NameManager."""
    rnn = mx.rnn
    data = mx.sym.Variable('data')

    def unroll(cell, merge, layout):
        return lambda: group(mx, *cell.unroll(2, data, layout=layout, merge_outputs=merge))

    def fused(mode, next_state, unfuse=False):
        cell = rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=True,
                                get_next_state=next_state, dropout=0.5)
        if unfuse:
            outputs, states = cell.unfuse().unroll(2, data, merge_outputs=True)
            return group(mx, outputs, sum(states, []))
        return group(mx, *cell.unroll(2, data, merge_outputs=True))

    def bidirectional():
        bi = rnn.BidirectionalCell(rnn.LSTMCell(2, prefix='a_'), rnn.GRUCell(2, prefix='b_'))
        outputs, states = bi.unroll(3, [mx.sym.Variable('x%d' % i) for i in range(3)])
        return group(mx, outputs, states[0] + states[1])

    return {
        'rnn_True_NTC': unroll(rnn.RNNCell(3), True, 'NTC'),
        'lstm_None_TNC': unroll(rnn.LSTMCell(3, forget_bias=2.0), None, 'TNC'),
        'gru_False_NTC': unroll(rnn.GRUCell(3), False, 'NTC'),
        'fused_lstm_True': lambda: fused('lstm', True),
        'fused_gru_False': lambda: fused('gru', False),
        'unfused_lstm_True': lambda: fused('lstm', True, unfuse=True),
        'bi_None': bidirectional,
        'seq_True': lambda: group(mx, *sequential_cell(mx).unroll(3, data, merge_outputs=True)),
        'beginvar': lambda: mx.sym.Group(
            rnn.LSTMCell(2, prefix='v_').begin_state(func=mx.sym.Variable)),
    }


def graph_json(mx, builder):
    """The parsed ``tojson()`` of ``builder()``'s graph, auto-named from fresh counters."""
    with mx.name.NameManager():
        return json.loads(builder().tojson())


def sequential_cell(mx):
    """LSTM, dropout, residual GRU and zoneout RNN cells stacked."""
    rnn = mx.rnn
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.LSTMCell(3, prefix='l0_'))
    seq.add(rnn.DropoutCell(0.3))
    seq.add(rnn.ResidualCell(rnn.GRUCell(3, prefix='g1_')))
    seq.add(rnn.ZoneoutCell(rnn.RNNCell(3, prefix='r2_'), 0.2, 0.3))
    return seq


def forward(mx, sym, data_shape):
    arg_shapes, _, _ = sym.infer_shape(data=data_shape)
    args = {name: mx.nd.array(deterministic(shape, seed), ctx=mx.cpu())      # bound on the CPU
            for seed, (name, shape) in enumerate(zip(sym.list_arguments(), arg_shapes))}
    return [out.asnumpy().round(6).tolist() for out in sym.bind(mx.cpu(), args).forward()]


def output_builders(mx):
    """Functions making the recorded outputs, by key."""
    rnn = mx.rnn
    data = mx.sym.Variable('data')

    def unrolled(cell):
        return lambda: forward(mx, group(mx, *cell.unroll(3, data, merge_outputs=True)), (2, 3, 4))

    def fused(mode):
        cell = rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=True, get_next_state=True)
        return lambda: forward(mx, group(mx, *cell.unroll(3, data, layout='TNC', merge_outputs=True)),
                               (3, 2, 4))

    def bidirectional():
        bi = rnn.BidirectionalCell(rnn.LSTMCell(2, prefix='a_'), rnn.GRUCell(2, prefix='b_'))
        outputs, states = bi.unroll(3, data, merge_outputs=True)
        return forward(mx, group(mx, outputs, states[0] + states[1]), (2, 3, 4))

    def residual():
        res = rnn.ResidualCell(rnn.GRUCell(4, prefix='g_'))
        return forward(mx, group(mx, *res.unroll(3, data, merge_outputs=False)), (2, 3, 4))

    return {'rnn': unrolled(rnn.RNNCell(3, activation='relu')), 'lstm': unrolled(rnn.LSTMCell(3)),
            'gru': unrolled(rnn.GRUCell(3)), 'fused_lstm': fused('lstm'), 'fused_gru': fused('gru'),
            'fused_rnn_tanh': fused('rnn_tanh'), 'bi': bidirectional, 'res': residual}


def fused_init(mx, fused_rnn):
    """Packed vectors filled by the ``fused_rnn`` initializer class (``mx.init.FusedRNN``)."""
    size = 4 * 2 * (3 + 2 + 2)  # LSTM, 2 hidden, 3 inputs
    by_global = mx.nd.zeros((size,))
    attrs = {'__init__': fused_rnn(None, 2, 1, 'lstm', False, 3.0).dumps()}
    mx.init.Constant(0.5)(mx.init.InitDesc('parameters', attrs=attrs), by_global)
    by_inner = mx.nd.zeros((size,))
    fused_rnn(mx.init.Constant(0.25), 2, 1, 'lstm', False, 3.0)._init_weight(
        mx.init.InitDesc('parameters'), by_inner)
    return {'global': by_global.asnumpy().tolist(), 'inner': by_inner.asnumpy().tolist()}


if __name__ == '__main__':
    import mxnet
    warnings.simplefilter('ignore')
    record = {'graphs': {key: graph_json(mxnet, build)
                         for key, build in graph_builders(mxnet).items()},
              'outputs': {key: build() for key, build in output_builders(mxnet).items()},
              'fused_init': fused_init(mxnet, mxnet.init.FusedRNN)}
    with open(os.path.join(HERE, 'mx_rnn_oracle.json'), 'w') as f:
        json.dump(record, f, separators=(',', ':'))
