"""The blocks of tests/test_layer_graphs.py, written for any MXNet-like module ``mx``.

Run with MXNet 1.9.1's interpreter, this file prints the digests that the test compares
with (``~/mxref/bin/python tests/layer_graph_cases.py``).
"""
import hashlib
import sys


def layer_cases(mx):
    """``[(name, make_block, number of Symbol inputs)]``: layers and losses."""
    nn, loss, cnn = mx.gluon.nn, mx.gluon.loss, mx.gluon.contrib.nn

    def concurrent():
        block = cnn.HybridConcurrent(axis=1)
        block.add(nn.Dense(2))
        block.add(nn.Dense(3))
        return block
    return [
        ('Dense', lambda: nn.Dense(4), 1),
        ('DenseTanhNoFlatten', lambda: nn.Dense(4, activation='tanh', use_bias=False, flatten=False), 1),
        ('Dropout', lambda: nn.Dropout(0.3), 1),
        ('DropoutAxes', lambda: nn.Dropout(0.3, axes=(1,)), 1),
        ('BatchNorm', lambda: nn.BatchNorm(), 1),
        ('BatchNormGlobal', lambda: nn.BatchNorm(axis=3, center=False, scale=False, use_global_stats=True), 1),
        ('InstanceNorm', lambda: nn.InstanceNorm(), 1),
        ('LayerNorm', lambda: nn.LayerNorm(), 1),
        ('GroupNorm', lambda: nn.GroupNorm(2), 1),
        ('Embedding', lambda: nn.Embedding(10, 4), 1),
        ('Flatten', lambda: nn.Flatten(), 1),
        ('HybridLambda', lambda: nn.HybridLambda('tanh'), 1),
        ('Conv1D', lambda: nn.Conv1D(4, 3), 1),
        ('Conv2D', lambda: nn.Conv2D(4, 3, strides=2, padding=1, activation='relu'), 1),
        ('Conv3D', lambda: nn.Conv3D(4, 3), 1),
        ('Conv1DTranspose', lambda: nn.Conv1DTranspose(4, 3), 1),
        ('Conv2DTranspose', lambda: nn.Conv2DTranspose(4, 3, strides=2, output_padding=1), 1),
        ('Conv3DTranspose', lambda: nn.Conv3DTranspose(4, 3), 1),
        ('MaxPool1D', lambda: nn.MaxPool1D(), 1),
        ('MaxPool2D', lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), 1),
        ('MaxPool3D', lambda: nn.MaxPool3D(), 1),
        ('AvgPool1D', lambda: nn.AvgPool1D(), 1),
        ('AvgPool2D', lambda: nn.AvgPool2D(count_include_pad=False), 1),
        ('AvgPool3D', lambda: nn.AvgPool3D(), 1),
        ('GlobalMaxPool2D', lambda: nn.GlobalMaxPool2D(), 1),
        ('GlobalAvgPool1D', lambda: nn.GlobalAvgPool1D(), 1),
        ('GlobalAvgPool3D', lambda: nn.GlobalAvgPool3D(), 1),
        ('ReflectionPad2D', lambda: nn.ReflectionPad2D(2), 1),
        ('Activation', lambda: nn.Activation('softrelu'), 1),
        ('LeakyReLU', lambda: nn.LeakyReLU(0.1), 1),
        ('PReLU', lambda: nn.PReLU(), 1),
        ('ELU', lambda: nn.ELU(), 1),
        ('SELU', lambda: nn.SELU(), 1),
        ('Swish', lambda: nn.Swish(), 1),
        ('GELU', lambda: nn.GELU(), 1),
        ('L2Loss', lambda: loss.L2Loss(), 2),
        ('L1Loss', lambda: loss.L1Loss(), 2),
        ('SigmoidBCELoss', lambda: loss.SigmoidBinaryCrossEntropyLoss(), 2),
        ('SigmoidBCELossFromSigmoid', lambda: loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True), 2),
        ('SoftmaxCELoss', lambda: loss.SoftmaxCrossEntropyLoss(), 2),
        ('SoftmaxCELossDense', lambda: loss.SoftmaxCrossEntropyLoss(sparse_label=False, from_logits=True), 2),
        ('KLDivLoss', lambda: loss.KLDivLoss(), 2),
        ('HuberLoss', lambda: loss.HuberLoss(), 2),
        ('HingeLoss', lambda: loss.HingeLoss(), 2),
        ('SquaredHingeLoss', lambda: loss.SquaredHingeLoss(), 2),
        ('LogisticLoss', lambda: loss.LogisticLoss(), 2),
        ('LogisticLossBinary', lambda: loss.LogisticLoss(label_format='binary'), 2),
        ('TripletLoss', lambda: loss.TripletLoss(), 3),
        ('PoissonNLLLoss', lambda: loss.PoissonNLLLoss(), 2),
        ('CosineEmbeddingLoss', lambda: loss.CosineEmbeddingLoss(), 3),
        ('CTCLoss', lambda: loss.CTCLoss(), 2),
        ('RNN', lambda: mx.gluon.rnn.RNN(4, 2), 1),
        ('LSTMBidirectional', lambda: mx.gluon.rnn.LSTM(4, 1, bidirectional=True, layout='NTC'), 1),
        ('GRUDropout', lambda: mx.gluon.rnn.GRU(4, 1, dropout=0.2), 1),
        ('LSTMProjection', lambda: mx.gluon.rnn.LSTM(4, 1, projection_size=2), 1),
        ('HybridConcurrent', concurrent, 1),
        ('Identity', lambda: cnn.Identity(), 1),
        ('SyncBatchNorm', lambda: cnn.SyncBatchNorm(num_devices=1), 1),
        ('PixelShuffle1D', lambda: cnn.PixelShuffle1D(2), 1),
        ('PixelShuffle2D', lambda: cnn.PixelShuffle2D(2), 1),
        ('PixelShuffle3D', lambda: cnn.PixelShuffle3D(2), 1),
    ]


def cell_cases(mx):
    """``[(name, make_cell)]``: recurrent cells, unrolled over 3 steps."""
    rnn, crnn, nn = mx.gluon.rnn, mx.gluon.contrib.rnn, mx.gluon.nn

    def stack(*cells):
        stacked = rnn.HybridSequentialRNNCell()
        for cell in cells:
            stacked.add(cell)
        return stacked
    return [
        ('RNNCell', lambda: rnn.RNNCell(4)),
        ('RNNCellSoftrelu', lambda: rnn.RNNCell(4, activation='softrelu')),
        ('LSTMCell', lambda: rnn.LSTMCell(4)),
        ('LSTMCellReluSoftsign', lambda: rnn.LSTMCell(4, activation='relu', recurrent_activation='softsign')),
        ('GRUCell', lambda: rnn.GRUCell(4)),
        ('SequentialLSTM', lambda: stack(rnn.LSTMCell(4), rnn.LSTMCell(4))),
        ('SequentialGRUDropout', lambda: stack(rnn.GRUCell(4), rnn.DropoutCell(0.5))),
        ('BidirectionalCell', lambda: rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.GRUCell(3))),
        ('ResidualCell', lambda: rnn.ResidualCell(rnn.GRUCell(5))),
        ('ZoneoutCell', lambda: rnn.ZoneoutCell(rnn.LSTMCell(4), 0.1, 0.2)),
        ('LSTMPCell', lambda: crnn.LSTMPCell(4, 2)),
        ('VariationalDropoutCell', lambda: crnn.VariationalDropoutCell(rnn.GRUCell(4), 0.1, 0.2, 0.3)),
        ('Conv2DRNNCell', lambda: crnn.Conv2DRNNCell((2, 5, 5), 3, (3, 3), (3, 3))),
        ('Conv2DLSTMCell', lambda: crnn.Conv2DLSTMCell((2, 5, 5), 3, (3, 3), (3, 3))),
        ('Conv1DGRUCell', lambda: crnn.Conv1DGRUCell((2, 5), 3, (3,), (3,))),
    ]


# unroll keywords of each variant (``vl``: a Symbol of valid lengths)
UNROLL_VARIANTS = {
    'merged': lambda mx: dict(merge_outputs=True),
    'steps': lambda mx: dict(merge_outputs=False),
    'merged_valid': lambda mx: dict(merge_outputs=True, valid_length=mx.sym.var('vl')),
    'tnc': lambda mx: dict(merge_outputs=True, layout='TNC'),
}


def digest(symbol):
    """Short sha1 of a Symbol's JSON."""
    return hashlib.sha1(symbol.tojson().encode()).hexdigest()[:12]


def layer_graph(mx, make, num_inputs):
    """The block's graph on Symbols ``data``, ``label``, ``extra`` (fresh NameManager)."""
    with mx.name.NameManager():
        out = make()(*[mx.sym.var(n) for n in ('data', 'label', 'extra')[:num_inputs]])
    return mx.sym.Group(list(out)) if isinstance(out, (list, tuple)) else out


def cell_graph(mx, make, variant):
    """The cell unrolled over 3 steps of Symbol ``data``: its outputs, then its states."""
    with mx.name.NameManager():
        outputs, states = make().unroll(3, mx.sym.var('data'), **UNROLL_VARIANTS[variant](mx))
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return mx.sym.Group(outputs + list(states))


if __name__ == '__main__':
    import mxnet  # pylint: disable=import-error
    import warnings
    warnings.simplefilter('ignore')
    print('LAYER_DIGESTS = {')
    for name, make, count in layer_cases(mxnet):
        print("    '%s': '%s'," % (name, digest(layer_graph(mxnet, make, count))))
    print('}\nCELL_DIGESTS = {')
    for variant in UNROLL_VARIANTS:
        for name, make in cell_cases(mxnet):
            print("    ('%s', '%s'): '%s'," % (name, variant, digest(cell_graph(mxnet, make, variant))))
    print('}')
    sys.exit(0)
