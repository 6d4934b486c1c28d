"""Symbolic graphs of gluon layers, losses and recurrent cells, byte for byte MXNet 1.9.1's.

Each block of ``layer_graph_cases.py`` is traced on Symbols with a fresh NameManager; the
sha1 of the graph's JSON (what ``export`` writes) must equal the one MXNet 1.9.1 gives
for the same code. The digests below were printed by running ``layer_graph_cases.py``
with the oracle's interpreter.
"""
import pytest

import neomx as mx
from layer_graph_cases import UNROLL_VARIANTS, cell_cases, cell_graph, digest, layer_cases, layer_graph

LAYER_DIGESTS = {
    'Dense': '40fea4766eab',
    'DenseTanhNoFlatten': 'f634af76642c',
    'Dropout': 'b2416592cead',
    'DropoutAxes': '2a8decb00343',
    'BatchNorm': '73e415731af5',
    'BatchNormGlobal': 'aa96e5718a49',
    'InstanceNorm': '37db32dcecec',
    'LayerNorm': '845585fa0131',
    'GroupNorm': '03a1e7399309',
    'Embedding': '6abd4874b8ff',
    'Flatten': '58be531e6efc',
    'HybridLambda': 'd995cdad12b2',
    'Conv1D': '6ea8daa2591d',
    'Conv2D': 'a1fd7ce6a668',
    'Conv3D': '12f639c165a3',
    'Conv1DTranspose': '1e51875d32d8',
    'Conv2DTranspose': 'f5a9a1382aa0',
    'Conv3DTranspose': 'bd9cd82bdb9a',
    'MaxPool1D': 'd57a59322872',
    'MaxPool2D': 'fea9740b0b86',
    'MaxPool3D': '2042f4cbe147',
    'AvgPool1D': '7e74bbbb19a5',
    'AvgPool2D': '3fbf5605b55b',
    'AvgPool3D': '5f760b22fb1d',
    'GlobalMaxPool2D': '197d12226bb4',
    'GlobalAvgPool1D': '174f795c48e7',
    'GlobalAvgPool3D': 'f7becde2669f',
    'ReflectionPad2D': 'f6217488b9b0',
    'Activation': '8378d1843c2c',
    'LeakyReLU': '4ce509eac012',
    'PReLU': 'f36dbd6ba90d',
    'ELU': 'c0f24523e435',
    'SELU': 'f83d5f49ce6a',
    'Swish': '7c36f26640db',
    'GELU': 'a50cd09afc2f',
    'L2Loss': '08ba0fa5e620',
    'L1Loss': '04b69c9696fc',
    'SigmoidBCELoss': '3164d3bf7e5c',
    'SigmoidBCELossFromSigmoid': '558fc73b3c5f',
    'SoftmaxCELoss': 'ebe41d0222ff',
    'SoftmaxCELossDense': '40aa19041c8e',
    'KLDivLoss': '99be792ad384',
    'HuberLoss': '32f0b0bd5b2c',
    'HingeLoss': '617eb2c1019a',
    'SquaredHingeLoss': 'b22dbf6dce5f',
    'LogisticLoss': '7c05dc5a26d2',
    'LogisticLossBinary': '82b667b5d299',
    'TripletLoss': '1ab53b757fbf',
    'PoissonNLLLoss': '0b4300634ffd',
    'CosineEmbeddingLoss': 'd92640ce000e',
    'CTCLoss': 'de96c1c56544',
    'RNN': '99505e4b6b48',
    'LSTMBidirectional': 'c76166e5822e',
    'GRUDropout': '018bf0fb1158',
    'LSTMProjection': '6012a1636183',
    'HybridConcurrent': 'dc854f74f146',
    'Identity': '2b798c785508',
    'SyncBatchNorm': '781f48b82612',
    'PixelShuffle1D': '1f56ddbd6bae',
    'PixelShuffle2D': 'fbe8407d6cd8',
    'PixelShuffle3D': '083ae7a1de83',
}
CELL_DIGESTS = {
    ('RNNCell', 'merged'): 'd6408e4675ce',
    ('RNNCellSoftrelu', 'merged'): '42ecadad2d86',
    ('LSTMCell', 'merged'): '0ffb39306c32',
    ('LSTMCellReluSoftsign', 'merged'): '471e4357e2db',
    ('GRUCell', 'merged'): '2ab888913d8e',
    ('SequentialLSTM', 'merged'): '314beb0a9254',
    ('SequentialGRUDropout', 'merged'): '0b6b76812135',
    ('BidirectionalCell', 'merged'): '4c9574782985',
    ('ResidualCell', 'merged'): 'a64f9364e6bf',
    ('ZoneoutCell', 'merged'): '7cad88447b3b',
    ('LSTMPCell', 'merged'): '3b52462e34af',
    ('VariationalDropoutCell', 'merged'): 'e30d0a740ec4',
    ('Conv2DRNNCell', 'merged'): 'b20f23e26a3a',
    ('Conv2DLSTMCell', 'merged'): '648422acd060',
    ('Conv1DGRUCell', 'merged'): '9b75a6c22edb',
    ('RNNCell', 'steps'): 'f28d748fb09f',
    ('RNNCellSoftrelu', 'steps'): '20c8245935a8',
    ('LSTMCell', 'steps'): '7da8be157627',
    ('LSTMCellReluSoftsign', 'steps'): '3afbbb65cf68',
    ('GRUCell', 'steps'): '470e2f6226e4',
    ('SequentialLSTM', 'steps'): '55e940e9e28d',
    ('SequentialGRUDropout', 'steps'): 'c758ef156815',
    ('BidirectionalCell', 'steps'): 'c2fb21746f5f',
    ('ResidualCell', 'steps'): '1534a6308f10',
    ('ZoneoutCell', 'steps'): '746899e49fb4',
    ('LSTMPCell', 'steps'): '12857752bb77',
    ('VariationalDropoutCell', 'steps'): '84557eeed8b7',
    ('Conv2DRNNCell', 'steps'): 'b2e62228fc3c',
    ('Conv2DLSTMCell', 'steps'): 'ff7a19a3a99e',
    ('Conv1DGRUCell', 'steps'): '3e3e94f590db',
    ('RNNCell', 'merged_valid'): 'ce6c9a0287d6',
    ('RNNCellSoftrelu', 'merged_valid'): 'd41841232118',
    ('LSTMCell', 'merged_valid'): '1913fb24b215',
    ('LSTMCellReluSoftsign', 'merged_valid'): 'b5b41c43416e',
    ('GRUCell', 'merged_valid'): 'c130fb5d155a',
    ('SequentialLSTM', 'merged_valid'): 'dea75c7d03b5',
    ('SequentialGRUDropout', 'merged_valid'): '21fba8a9305e',
    ('BidirectionalCell', 'merged_valid'): 'c189aad43104',
    ('ResidualCell', 'merged_valid'): '5a440736a3ce',
    ('ZoneoutCell', 'merged_valid'): 'f96a700fd515',
    ('LSTMPCell', 'merged_valid'): 'a80f1563fbe7',
    ('VariationalDropoutCell', 'merged_valid'): '59ee0bb6e55a',
    ('Conv2DRNNCell', 'merged_valid'): 'c08b7f94ce0e',
    ('Conv2DLSTMCell', 'merged_valid'): '1e7e8b7d94b5',
    ('Conv1DGRUCell', 'merged_valid'): '871eb2050653',
    ('RNNCell', 'tnc'): '48cfc59a95ee',
    ('RNNCellSoftrelu', 'tnc'): '0303ee7e4298',
    ('LSTMCell', 'tnc'): '792d25ef7329',
    ('LSTMCellReluSoftsign', 'tnc'): '83840bf38089',
    ('GRUCell', 'tnc'): 'c9d8e06dfbb4',
    ('SequentialLSTM', 'tnc'): '1868d20a84e8',
    ('SequentialGRUDropout', 'tnc'): 'f7c687f0148f',
    ('BidirectionalCell', 'tnc'): '5d7f2af8f304',
    ('ResidualCell', 'tnc'): '540915543edd',
    ('ZoneoutCell', 'tnc'): '3f89291d20a1',
    ('LSTMPCell', 'tnc'): '76a308e4f292',
    ('VariationalDropoutCell', 'tnc'): '25851e1517fa',
    ('Conv2DRNNCell', 'tnc'): 'b42a8f29a08f',
    ('Conv2DLSTMCell', 'tnc'): '7dc384afbc3a',
    ('Conv1DGRUCell', 'tnc'): 'a0e90ec89b0b',
}

LAYERS = {name: (make, count) for name, make, count in layer_cases(mx)}
CELLS = dict(cell_cases(mx))


@pytest.mark.parametrize('name', sorted(LAYER_DIGESTS))
def test_layer_graph_is_mxnets(name):
    make, count = LAYERS[name]
    assert digest(layer_graph(mx, make, count)) == LAYER_DIGESTS[name]


@pytest.mark.parametrize('name,variant', sorted(CELL_DIGESTS))
def test_unrolled_cell_graph_is_mxnets(name, variant):
    assert digest(cell_graph(mx, CELLS[name], variant)) == CELL_DIGESTS[name, variant]


def test_every_case_has_a_digest():
    assert set(LAYERS) == set(LAYER_DIGESTS)
    assert {(name, variant) for name in CELLS for variant in UNROLL_VARIANTS} == set(CELL_DIGESTS)
