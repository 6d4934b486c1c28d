"""Gluon under npx.set_np(): mx.np parameters and outputs, training, data, save/load;
F.np/F.npx in hybrid_forward; MXNet 2.0's forward(self, x) hybridized; MXNet 1.9.1's
NumPy-mode graphs exported and imported both ways."""
import json
import os

import numpy as onp
import pytest

import neomx as mx
from neomx import autograd, gluon, np, npx
from neomx.gluon import nn

from device_tolerance import kernel_tolerance

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'npx')


@pytest.fixture(autouse=True)
def numpy_mode():
    npx.set_np()
    yield
    npx.reset_np()


def _lenet():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, activation='relu'), nn.MaxPool2D(2), nn.Flatten(), nn.Dense(8, activation='relu'),
            nn.BatchNorm(), nn.Dropout(0.1), nn.Dense(3))
    return net


class _Forward(gluon.HybridBlock):
    """MXNet 2.0 style: forward with mx.np/npx, children, and a parameter's data()."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.conv = nn.Conv2D(4, 3)
            self.dense = nn.Dense(3)
            self.scale = self.params.get('scale', shape=(1,), init=mx.init.Constant(2.0))

    def forward(self, x):
        y = npx.pooling(npx.relu(self.conv(x)), kernel=(2, 2), pool_type='max', stride=(2, 2))
        y = self.dense(y) * self.scale.data() + 1
        return np.tanh(y).sum(axis=1)


@pytest.mark.parametrize('hybridize', [False, True])
def test_parameters_outputs_and_training_are_numpy(hybridize):
    mx.random.seed(0)
    net = _lenet()
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    x = np.random.uniform(size=(4, 1, 8, 8))
    y = np.array([0, 1, 2, 1])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    losses = []
    for _ in range(5):
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
        loss.backward()
        trainer.step(4)
        losses.append(float(loss.mean()))
    assert type(out) is np.ndarray and type(loss) is np.ndarray and loss.shape == (4,)
    weight = net[0].weight
    assert type(weight.data()) is np.ndarray and type(weight.grad()) is np.ndarray
    assert losses[-1] < losses[0]


def test_losses_and_metrics_on_numpy_arrays():
    pred, label = np.array([[0.2, 0.8], [0.9, 0.1]]), np.array([1, 0])
    for loss in (gluon.loss.SoftmaxCrossEntropyLoss(), gluon.loss.L2Loss(), gluon.loss.L1Loss(),
                 gluon.loss.SigmoidBinaryCrossEntropyLoss()):
        target = label if isinstance(loss, gluon.loss.SoftmaxCrossEntropyLoss) else np.ones((2, 2))
        out = loss(pred, target)
        assert type(out) is np.ndarray and out.shape == (2,)
    acc = mx.metric.Accuracy()
    acc.update([label], [pred])
    assert acc.get() == ('accuracy', 1.0)


def test_data_pipeline_gives_numpy_batches():
    data = onp.arange(40, dtype='float32').reshape(10, 4)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(data, onp.arange(10)), batch_size=4)
    x, y = next(iter(loader))
    assert type(x) is np.ndarray and type(y) is np.ndarray and x.shape == (4, 4)
    threaded = gluon.data.DataLoader(gluon.data.ArrayDataset(data, onp.arange(10)), batch_size=5,
                                     num_workers=2, thread_pool=True)
    assert [type(b[0]) for b in threaded] == [np.ndarray, np.ndarray]
    parts = gluon.utils.split_and_load(onp.ones((4, 2), dtype='float32'), [mx.cpu(0), mx.cpu(1)])
    assert [type(p) for p in parts] == [np.ndarray, np.ndarray] and parts[1].ctx == mx.cpu(1)
    arrays = [np.ones((2,)) * 3, np.ones((2,)) * 4]
    norm = gluon.utils.clip_global_norm(arrays, 1.0)
    assert abs(float(norm) - onp.sqrt(50)) < 1e-4
    assert abs(float(np.sqrt(sum((a * a).sum() for a in arrays))) - 1.0) < 1e-4
    transform = gluon.data.vision.transforms.Compose([gluon.data.vision.transforms.ToTensor()])
    image = transform(np.array(onp.zeros((4, 4, 3), dtype='uint8')))
    assert type(image) is np.ndarray and image.shape == (3, 4, 4)


def test_save_and_load_parameters(tmp_path):
    net = _lenet()
    net.initialize()
    x = np.ones((2, 1, 8, 8))
    before = net(x)
    path = str(tmp_path / 'net.params')
    net.save_parameters(path)
    other = _lenet()
    other.load_parameters(path, ctx=mx.current_context())      # default: cpu
    assert type(other[0].weight.data()) is np.ndarray
    assert onp.allclose(other(x).asnumpy(), before.asnumpy())


def test_model_zoo_network_in_numpy_mode():
    net = gluon.model_zoo.vision.get_model('mobilenet0.25', classes=5)
    net.initialize()
    net.hybridize()
    out = net(np.ones((1, 3, 32, 32)))
    assert type(out) is np.ndarray and out.shape == (1, 5)


def test_hybrid_forward_with_F_np_exports_mxnet_names(tmp_path):
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__(prefix='net_')
            with self.name_scope():
                self.dense = nn.Dense(3, in_units=4)

        def hybrid_forward(self, F, x):
            y = F.npx.relu(self.dense(x))
            return F.np.sum(y * 2 - 1, axis=1), F.npx.softmax(y)

    net = Net()
    net.initialize()
    net.hybridize()
    x = np.ones((2, 4))
    a, b = net(x)
    assert type(a) is np.ndarray and a.shape == (2,) and b.shape == (2, 3)
    net.export(str(tmp_path / 'net'))
    graph = json.load(open(str(tmp_path / 'net-symbol.json')))
    ops = [n['op'] for n in graph['nodes'] if n['op'] != 'null']
    assert ops == ['FullyConnected', '_npx_relu', '_npi_multiply_scalar', '_npi_subtract_scalar', '_np_sum', 'softmax']
    assert graph['attrs']['is_np_shape'] == ['int', 1]
    loaded = gluon.SymbolBlock.imports(str(tmp_path / 'net-symbol.json'), ['data'], str(tmp_path / 'net-0000.params'),
                                       ctx=mx.current_context())
    la, lb = loaded(x)
    assert type(la) is np.ndarray and onp.allclose(la.asnumpy(), a.asnumpy())


def test_forward_style_block_hybridizes_into_one_graph(tmp_path):
    net = _Forward()
    net.initialize()
    x = np.random.uniform(size=(2, 1, 8, 8))
    eager = net(x)
    assert not net._cached_graphs
    net.hybridize()
    x.attach_grad()
    with autograd.record():
        out = net(x)
    out.backward()
    assert type(out) is np.ndarray and onp.allclose(out.asnumpy(), eager.asnumpy(), atol=1e-6)
    assert len(net._cached_graphs) == 1
    assert net.scale.grad().shape == (1,) and float(np.abs(x.grad).sum()) > 0
    net.export(str(tmp_path / 'fwd'))
    ops = [n['op'] for n in json.load(open(str(tmp_path / 'fwd-symbol.json')))['nodes'] if n['op'] != 'null']
    assert ops == ['Convolution', '_npx_relu', 'Pooling', 'FullyConnected', '_npi_multiply', '_npi_add_scalar',
                   '_npi_tanh', '_np_sum']
    loaded = gluon.SymbolBlock.imports(str(tmp_path / 'fwd-symbol.json'), ['data'], str(tmp_path / 'fwd-0000.params'),
                                       ctx=mx.current_context())
    assert onp.allclose(loaded(x).asnumpy(), out.asnumpy(), atol=1e-6)
    net.hybridize(False)
    assert 'forward' not in net.__dict__


class _Creating(gluon.HybridBlock):
    """MXNet 2.0 style forward that makes arrays with mx.np's creation functions."""

    def forward(self, x):
        offset = np.zeros((2, 3)) + np.ones((2, 3), dtype='float32') + np.full((2, 3), 0.5) + np.empty((2, 3)) * 0
        return x * np.arange(3) + offset + np.eye(3).sum(axis=0) + np.arange(1, 7, 2, dtype='int32').astype('float32')


def test_creation_functions_in_traced_forward_are_graph_nodes(tmp_path):
    net = _Creating()
    x = np.ones((2, 3))
    eager = net(x)
    assert eager.asnumpy().tolist() == [[3.5, 6.5, 9.5]] * 2
    net.hybridize()
    assert net(x).asnumpy().tolist() == eager.asnumpy().tolist()
    net.export(str(tmp_path / 'made'))
    nodes = json.load(open(str(tmp_path / 'made-symbol.json')))['nodes']
    ops = {n['op']: n.get('attrs', {}) for n in nodes}
    assert {'_npi_zeros', '_npi_ones', '_npi_full', '_npi_arange', '_npi_eye'} <= set(ops)
    assert ops['_npi_full']['value'] == '0.5' and 'dtype' not in ops['_npi_zeros']     # float32: the default
    loaded = gluon.SymbolBlock.imports(str(tmp_path / 'made-symbol.json'), ['data'])
    assert loaded(x * 2).asnumpy().tolist() == [[3.5, 7.5, 11.5]] * 2


class _ShapeReading(gluon.HybridBlock):
    """MXNet 2.0 style forward that reads its arrays' shape, ndim and dtype."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.dense = nn.Dense(3)

    def forward(self, x):
        h = self.dense(x)
        offset = np.zeros((x.shape[0], h.shape[1]), dtype=h.dtype) + np.arange(h.shape[-1]) * x.ndim
        return h.reshape((x.shape[0], -1)) + offset + x.size


def test_forward_reading_shapes_hybridizes_one_graph_per_input_shape(tmp_path):
    net = _ShapeReading()
    net.initialize()
    net.hybridize()         # parameters still deferred: the shapes come from the input's
    x = np.ones((2, 4))
    x.attach_grad()
    with autograd.record():
        out = net(x)
    out.backward()
    assert out.shape == (2, 3) and x.grad.shape == (2, 4)
    graph = net._cached_graph
    assert graph.input_shapes == ((2, 4),)
    bigger = np.ones((5, 4))
    assert net(bigger).shape == (5, 3)
    assert list(graph.shape_variants) == [((5, 4),)] and net(x).shape == (2, 3)
    net.hybridize(False)
    onp.testing.assert_allclose(net(bigger).asnumpy(), net.dense(bigger).asnumpy() + onp.arange(3) * 2 + 20, rtol=1e-6)
    with mx.name.NameManager():
        variable = mx.sym.var('x').as_np_ndarray()
    with pytest.raises(AttributeError, match='trace of a hybridized forward'):
        variable.shape      # pylint: disable=pointless-statement  # a Symbol outside a trace has no shape


def test_forward_style_block_outside_numpy_semantics_runs_eagerly():
    npx.reset_np()

    class Legacy(gluon.HybridBlock):
        def forward(self, x):
            return mx.nd.relu(x) + 1

    net = Legacy()
    net.hybridize()
    assert net(mx.nd.array([-1.0, 2.0])).asnumpy().tolist() == [1.0, 3.0]
    assert not net._cached_graphs


def test_graph_exported_by_mxnet_numpy_mode_imports():
    """tests/data/npx: a net exported by MXNet 1.9.1 under npx.set_np() with F.np/F.npx."""
    net = gluon.SymbolBlock.imports(os.path.join(DATA, 'mxnet_np_net-symbol.json'), ['data'],
                                    os.path.join(DATA, 'mxnet_np_net-0000.params'), ctx=mx.current_context())
    x = np.array(onp.load(os.path.join(DATA, 'mxnet_np_net_input.npy')))
    a, b = net(x)
    assert type(a) is np.ndarray
    for got, name in ((a, 'mxnet_np_net_out0.npy'), (b, 'mxnet_np_net_out1.npy')):
        onp.testing.assert_allclose(got.asnumpy(), onp.load(os.path.join(DATA, name)), **kernel_tolerance(1e-5, 1e-5))


def test_export_matches_mxnet_numpy_mode_json(tmp_path):
    """The same net as tests/data/npx's, written by neomx: MXNet 1.9.1's JSON exactly."""
    class Net(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.conv = nn.Conv2D(3, 3, in_channels=1)
                self.bn = nn.BatchNorm(in_channels=3)
                self.dense = nn.Dense(4, in_units=27)

        def hybrid_forward(self, F, x):
            y = F.npx.relu(self.bn(self.conv(x)))
            y = F.npx.pooling(y, kernel=(2, 2), pool_type='max', stride=(2, 2))
            y = self.dense(y)
            y = F.np.tanh(y * 2 + 1) - y / 3
            return F.npx.softmax(y, axis=-1), F.np.sum(y, axis=1)

    net = Net(prefix='npnet_')
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(np.ones((2, 1, 8, 8)))
    net.export(str(tmp_path / 'mine'))
    mine = json.load(open(str(tmp_path / 'mine-symbol.json')))
    theirs = json.load(open(os.path.join(DATA, 'mxnet_np_net-symbol.json')))
    assert mine == theirs


def _both_ways(block, *args):
    """The block's outputs eagerly, then hybridized."""
    eager = block(*args)
    block.hybridize()
    return eager, block(*args)


def test_F_np_creation_internal_and_sampling_in_graphs():
    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, x, mask):
            eye = F.np.identity(2)
            filled = F.np.full((2, 2), x.flatten()[0])
            assigned = F.np._internal.boolean_mask_assign_scalar(x, mask, 5.0, start_axis=0)
            draws = F.npx.random.uniform_n(x, x + 1, batch_shape=(3,))
            return eye + filled, assigned, draws

    x, mask = np.array([1.0, 2.0]), np.array([True, False])
    for (eye, assigned, draws) in _both_ways(Net(), x, mask):
        assert type(eye) is np.ndarray and eye.tolist() == [[2.0, 1.0], [1.0, 2.0]]
        assert assigned.tolist() == [5.0, 2.0]
        assert draws.shape == (3, 2) and bool(((draws >= x) & (draws < x + 1)).all())


def test_outputs_must_be_numpy_under_set_np():
    class Mixed(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() * 2, F.np.multiply(x, x)

    net = Mixed()
    with pytest.raises(TypeError, match='must be of type `mxnet.numpy.ndarray`'):
        net(np.ones(2))
    net.hybridize()
    with pytest.raises(TypeError, match='Found both classic symbol'):
        net(np.ones(2))


def test_recurrent_layers_and_cells_in_numpy_mode():
    layer = gluon.rnn.LSTM(4, layout='NTC')
    cell = gluon.rnn.GRUCell(3)
    layer.initialize()
    cell.initialize()
    for hybridize in (False, True):
        if hybridize:
            layer.hybridize()
            cell.hybridize()
        out = layer(np.ones((2, 5, 3)))
        step, states = cell(np.ones((2, 3)), cell.begin_state(2))
        assert type(out) is np.ndarray and out.shape == (2, 5, 4)
        assert type(step) is np.ndarray and type(states[0]) is np.ndarray and step.shape == (2, 3)


def test_numpy_mode_operator_namespace_generates_names_once():
    """Layers look their operators up in F at every call: generated on first use, then found."""
    F = npx.EAGER_OPERATORS
    fc = F.FullyConnected
    assert F.FullyConnected is fc and 'FullyConnected' in vars(F)
    assert F.contrib is F.contrib and F.npx is mx.nd.npx
    with pytest.raises(AttributeError):
        F.no_such_operator      # pylint: disable=pointless-statement
    assert not hasattr(F, '__array_priority__')
    x = mx.np.ones((2, 3))
    w = mx.np.ones((4, 3))
    out = fc(x, w, no_bias=True, num_hidden=4)
    assert type(out) is mx.np.ndarray and out.asnumpy().tolist() == [[3.0] * 4] * 2
