"""neomx.bridge: Gluon blocks as torch modules and back, sharing memory, values and gradients."""
import io
import json
import os
import socket
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import neomx as mx
from neomx.bridge import from_torch, to_torch

from device_tolerance import kernel_tolerance

sys.path.insert(0, os.path.dirname(__file__))   # bridge_ddp_worker

# A hybridized block predicting folds BatchNorm into the preceding convolution's filters: on a
# GPU, whose convolutions run in TF32, that differs from the unfolded computation by ~1e-4.
_FOLDED = kernel_tolerance(1e-5, 1e-6)


def _torch_name(name):
    return name.replace('.', '_')


def _device():
    """The torch device of the current context (the suite's ``--default-context``): torch
    modules and tensors go there, as Gluon's arrays do."""
    return mx.current_context().torch_device


def _mlp(hybridize=False, prefix=None):
    net = mx.gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(8, in_units=4, activation='relu'), mx.gluon.nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier(), force_reinit=True)
    if hybridize:
        net.hybridize()
    return net


def _cnn():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=2), mx.gluon.nn.BatchNorm(in_channels=4),
            mx.gluon.nn.Activation('relu'), mx.gluon.nn.GlobalAvgPool2D(), mx.gluon.nn.Dense(3, in_units=4))
    net.initialize(mx.init.Xavier())
    return net


@pytest.mark.parametrize('hybridize', [False, True])
def test_to_torch_values_gradients_and_shared_memory(hybridize):
    mx.random.seed(0)
    net = _mlp(hybridize)
    x = np.random.RandomState(0).randn(5, 4).astype('float32')
    module = to_torch(net)
    names = [n for n, _ in module.named_parameters()]
    assert names == [n for n in net.collect_params().keys()]
    for (_, tp), gp in zip(module.named_parameters(), net.collect_params().values()):
        assert tp.data_ptr() == gp.data().as_torch().data_ptr()
    out = module(torch.from_numpy(x).to(_device()))
    xn = mx.nd.array(x)
    with mx.autograd.record():
        ref = net(xn)
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.asnumpy(), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    ref.backward(mx.nd.ones_like(ref))
    for (_, tp), gp in zip(module.named_parameters(), net.collect_params().values()):
        np.testing.assert_allclose(tp.grad.cpu().numpy(), gp.grad().asnumpy(), rtol=1e-5, atol=1e-6)
    # writes through torch change the block
    with torch.no_grad():
        next(module.parameters()).fill_(0.5)
    assert (net.collect_params().values().__iter__().__next__().data().asnumpy() == 0.5).all()


def test_ten_sgd_steps_in_torch_equal_ten_in_neomx():
    rng = np.random.RandomState(1)
    xs = [rng.randn(6, 4).astype('float32') for _ in range(10)]
    ys = [rng.randint(0, 3, size=6) for _ in range(10)]
    mx.random.seed(3)
    a = _mlp()
    b = _mlp()
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        pb.set_data(pa.data().copy())
    # neomx
    trainer = mx.gluon.Trainer(a.collect_params(), 'sgd', {'learning_rate': 0.1})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    for x, y in zip(xs, ys):
        with mx.autograd.record():
            loss = loss_fn(a(mx.nd.array(x)), mx.nd.array(y)).mean()
        loss.backward()
        trainer.step(1)
    # plain torch on the bridged copy
    module = to_torch(b)
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(module(torch.from_numpy(x).to(_device())),
                                                 torch.from_numpy(y).to(_device()))
        loss.backward()
        opt.step()
    for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
        np.testing.assert_allclose(pa.data().asnumpy(), pb.data().asnumpy(), rtol=1e-5, atol=1e-6)


def test_to_torch_train_and_eval_select_gluon_modes():
    net = _cnn()
    module = to_torch(net)
    x = torch.randn(2, 2, 5, 5).to(_device())
    running = net[1].running_mean.data().asnumpy().copy()
    module.eval()
    with torch.no_grad():
        y_eval = module(x)
    np.testing.assert_array_equal(net[1].running_mean.data().asnumpy(), running)
    with torch.no_grad():
        ref = net(mx.nd.array(x.cpu().numpy()))
    np.testing.assert_allclose(y_eval.cpu().numpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    module.train()
    module(x).sum().backward()
    assert not np.array_equal(net[1].running_mean.data().asnumpy(), running)
    conv_weight = next(module.parameters())
    assert conv_weight.grad is not None and conv_weight.grad.abs().sum() > 0


def test_to_torch_state_dict_round_trips_through_torch_save():
    net = _mlp(prefix='mlp_')
    module = to_torch(net)
    buf = io.BytesIO()
    torch.save(module.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf)
    assert sorted(state) == sorted(net.collect_params().keys())
    other = _mlp(prefix='mlp_')   # the same Gluon names
    to_torch(other).load_state_dict(state)
    for pa, pb in zip(net.collect_params().values(), other.collect_params().values()):
        np.testing.assert_array_equal(pa.data().asnumpy(), pb.data().asnumpy())


def test_to_torch_refuses_deferred_and_non_blocks():
    net = mx.gluon.nn.Dense(3)
    net.initialize()
    with pytest.raises(mx.MXNetError, match='deferred'):
        to_torch(net)
    with pytest.raises(mx.MXNetError, match='Block'):
        to_torch(torch.nn.Linear(2, 2))


def test_from_torch_values_gradients_and_trainer():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2)).to(_device())
    block = from_torch(module)
    params = block.collect_params()
    assert sorted(params.keys()) == sorted(block.prefix + n.replace('.', '_') for n, _ in module.named_parameters())
    x = np.random.RandomState(2).randn(3, 4).astype('float32')
    xn = mx.nd.array(x)
    xn.attach_grad()
    with mx.autograd.record():
        out = block(xn)
    out.backward(mx.nd.ones_like(out))
    xt = torch.from_numpy(x).to(_device()).requires_grad_()
    ref = module(xt)
    ref.sum().backward()
    np.testing.assert_allclose(out.asnumpy(), ref.detach().cpu().numpy(), rtol=1e-6)
    np.testing.assert_allclose(xn.grad.asnumpy(), xt.grad.cpu().numpy(), rtol=1e-5)
    np.testing.assert_allclose(params[block.prefix + '0_weight'].grad().asnumpy(),
                               module[0].weight.grad.cpu().numpy(), rtol=1e-5)
    before = module[0].weight.detach().clone()
    trainer = mx.gluon.Trainer(params, 'sgd', {'learning_rate': 1.0})
    trainer.step(1)
    expected = before - params[block.prefix + '0_weight'].grad().as_torch()
    torch.testing.assert_close(module[0].weight.detach(), expected)   # the module's own tensor moved


def test_from_torch_buffers_and_training_mode():
    module = torch.nn.Sequential(torch.nn.BatchNorm1d(3)).to(_device())
    block = from_torch(module)
    params = block.collect_params()
    assert params[block.prefix + '0_running_mean'].grad_req == 'null'
    x = mx.nd.array(np.random.RandomState(0).randn(8, 3) + 5)
    with mx.autograd.record():
        block(x)
    assert module[0].running_mean.abs().sum() > 0         # training mode updated the statistics
    assert module.training
    block(x)                                            # predict mode: eval
    assert not module.training


def test_from_torch_refuses_non_modules():
    with pytest.raises(mx.MXNetError, match='torch.nn.Module'):
        from_torch(mx.gluon.nn.Dense(2))


@pytest.mark.slow
def test_to_torch_under_torch_compile():
    net = _mlp()
    module = to_torch(net)
    x = torch.randn(2, 4).to(_device())
    compiled = torch.compile(module)
    out = compiled(x)
    torch.testing.assert_close(out, module(x))
    out.sum().backward()
    assert next(module.parameters()).grad is not None


class _Residual(torch.nn.Module):
    """Leaf layers, functions and tensor methods that hybridize() translates."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, padding='same', bias=False)
        self.pool = torch.nn.AvgPool2d(2)
        self.fc = torch.nn.Linear(4 * 4 * 4, 5)
        self.act = torch.nn.GELU()

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = self.pool(self.conv2(y) + y) * 0.5 - 1
        y = y.view(y.size(0), -1)
        return torch.cat([self.act(self.fc(y)), torch.sigmoid(y.mean(dim=1, keepdim=True))], dim=1)


def _residual_block():
    torch.manual_seed(0)
    module = _Residual().to(_device())
    with torch.no_grad():
        module.bn.running_mean.uniform_(-0.5, 0.5)
        module.bn.running_var.uniform_(0.5, 1.5)
    return module, from_torch(module)


def test_from_torch_hybridizes_to_mxnet_operators_and_exports_json(tmp_path):
    module, block = _residual_block()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 8, 8))
    eager = block(x).asnumpy()
    block.hybridize()
    np.testing.assert_allclose(block(x).asnumpy(), eager, **_FOLDED)
    block.export(str(tmp_path / 'net'))
    with open(str(tmp_path / 'net-symbol.json')) as f:
        ops = {n['op'] for n in json.load(f)['nodes']}
    assert {'Convolution', 'BatchNorm', 'Pooling', 'FullyConnected', 'Concat', 'LeakyReLU'} <= ops
    loaded = mx.gluon.SymbolBlock.imports(str(tmp_path / 'net-symbol.json'), ['data'],
                                          str(tmp_path / 'net-0000.params'), ctx=mx.current_context())
    np.testing.assert_allclose(loaded(x).asnumpy(), eager, **_FOLDED)
    # training through the graph: values and input gradients as the module's own
    xn = x.copy()
    xn.attach_grad()
    with mx.autograd.record():
        out = block(xn)
    head = mx.nd.arange(out.size).reshape(out.shape)
    out.backward(head)
    module.train()
    xt = torch.from_numpy(x.asnumpy()).to(_device()).requires_grad_()
    ref = module(xt)
    (ref * torch.from_numpy(head.asnumpy()).to(_device())).sum().backward()
    np.testing.assert_allclose(out.asnumpy(), ref.detach().cpu().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xn.grad.asnumpy(), xt.grad.cpu().numpy(), rtol=1e-4, atol=1e-5)


def test_from_torch_hybridized_trainer_updates_the_module():
    module, block = _residual_block()
    block.hybridize()
    before = module.fc.weight.detach().clone()
    trainer = mx.gluon.Trainer(block.collect_params(), 'sgd', {'learning_rate': 0.5})
    with mx.autograd.record():
        loss = block(mx.nd.ones((2, 3, 8, 8))).sum()
    loss.backward()
    trainer.step(1)
    grad = block.collect_params()[block.prefix + 'fc_weight'].grad().as_torch()
    assert grad.abs().sum() > 0
    torch.testing.assert_close(module.fc.weight.detach(), before - 0.5 * grad)


class _TopK(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, x):
        return torch.topk(self.fc(x), 2)[0]


class _WritesWeight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, x):
        self.fc.weight.mul_(0.5)
        return self.fc(x)


class _ViewOfParameter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4, 3))
        self.register_buffer('top', self.w.data[:2])

    def forward(self, x):
        return x * self.top.sum()


def test_from_torch_hybridize_names_the_first_unmapped_operation():
    block = from_torch(_TopK().to(_device()))
    with pytest.raises(mx.MXNetError, match=r"function 'torch.topk' \(node 'topk'\) maps to no MXNet operator"):
        block.hybridize()
    block(mx.nd.ones((2, 3)))           # imperatively it runs
    with pytest.raises(mx.MXNetError, match=r"layer 'rnn' \(GRU\)"):
        from_torch(torch.nn.Sequential(OrderedDict(rnn=torch.nn.GRU(3, 3)))).hybridize()


def test_from_torch_refuses_in_place_aliases_naming_the_parameter():
    with pytest.raises(mx.MXNetError, match=r"'Tensor.mul_'.*in place into the module's tensor 'fc.weight'"):
        from_torch(_WritesWeight()).hybridize()
    block = from_torch(_WritesWeight().to(_device()))
    with pytest.raises(mx.MXNetError, match=r"'Tensor.mul_'.*in place into the module's tensor 'fc.weight'"):
        with mx.autograd.record():
            block(mx.nd.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match=r"tensor 'top' shares memory with 'w'"):
        from_torch(_ViewOfParameter())


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_to_torch_under_distributed_data_parallel_two_gloo_processes(tmp_path):
    import bridge_ddp_worker as worker
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(mx.__file__)), os.environ.get('PYTHONPATH', '')]))
    script = os.path.join(os.path.dirname(__file__), 'bridge_ddp_worker.py')
    procs = [subprocess.Popen([sys.executable, script, str(r), '2', str(port), str(tmp_path)], env=env)
             for r in range(2)]
    assert [p.wait(timeout=240) for p in procs] == [0, 0]
    ranks = [dict(np.load(str(tmp_path / ('rank%d.npz' % r)))) for r in range(2)]
    # one process on the whole batch from rank 0's initial values: the same parameters
    mx.random.seed(0)
    single = to_torch(worker.mlp())
    opt = torch.optim.SGD(single.parameters(), lr=0.1)
    for x, y in worker.batches():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(single(torch.from_numpy(x).to(_device())),
                                          torch.from_numpy(y).to(_device())).backward()
        opt.step()
    for name, p in single.named_parameters():
        np.testing.assert_allclose(ranks[0][name], ranks[1][name], rtol=0, atol=0)
        np.testing.assert_allclose(ranks[0][name], p.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_to_torch_whole_module_round_trips_through_torch_save():
    net = _mlp(hybridize=True)
    module = to_torch(net)
    x = torch.randn(2, 4).to(_device())
    y = module(x)
    buf = io.BytesIO()
    torch.save(module, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    torch.testing.assert_close(loaded(x), y)
    first = next(loaded.parameters())
    with torch.no_grad():
        first.fill_(2.0)                  # still one memory with its block
    assert (next(iter(loaded.block.collect_params().values())).data().asnumpy() == 2.0).all()


def test_torch_export_of_a_hybridized_block_is_an_exported_program(tmp_path):
    net = _cnn()
    net.hybridize()
    x = torch.randn(2, 2, 5, 5).to(_device())
    program = mx.bridge.export(net, (x,))
    assert isinstance(program, torch.export.ExportedProgram)
    assert list(program.graph_signature.parameters) == [_torch_name(n) for n in net.collect_params().keys()]
    with torch.no_grad():
        ref = net(mx.nd.array(x.cpu().numpy())).asnumpy()
        np.testing.assert_allclose(program.module()(x).cpu().numpy(), ref, **_FOLDED)   # exported unfolded
    torch.export.save(program, str(tmp_path / 'net.pt2'))
    code = ("import sys, torch; p = torch.export.load(sys.argv[1]); x = torch.load(sys.argv[2]);"
            "torch.save(p.module()(x).detach(), sys.argv[3]); assert 'neomx' not in sys.modules")
    torch.save(x, str(tmp_path / 'x.pt'))
    subprocess.run([sys.executable, '-c', code, str(tmp_path / 'net.pt2'), str(tmp_path / 'x.pt'),
                    str(tmp_path / 'y.pt')], check=True, timeout=300)
    np.testing.assert_allclose(torch.load(str(tmp_path / 'y.pt')).cpu().numpy(), ref, **_FOLDED)


@pytest.mark.slow
def test_aoti_package_runs_without_neomx(tmp_path):
    net = _cnn()
    net.hybridize()
    x = torch.randn(2, 2, 5, 5)
    path = mx.bridge.aoti_package(net, (x,), str(tmp_path / 'net.pt2'))
    with torch.no_grad():
        ref = net(mx.nd.array(x.cpu().numpy())).asnumpy()
    torch.save(x, str(tmp_path / 'x.pt'))
    code = ("import sys, torch, torch._inductor; m = torch._inductor.aoti_load_package(sys.argv[1]);"
            "out = m(torch.load(sys.argv[2])); torch.save(out[0] if isinstance(out, (list, tuple)) else out,"
            " sys.argv[3]); assert 'neomx' not in sys.modules")
    subprocess.run([sys.executable, '-c', code, path, str(tmp_path / 'x.pt'), str(tmp_path / 'y.pt')],
                   check=True, timeout=300)
    np.testing.assert_allclose(torch.load(str(tmp_path / 'y.pt')).cpu().numpy(), ref,
                               **kernel_tolerance(1e-5, 1e-5))      # unfolded (see _FOLDED)


def test_from_torch_block_inside_a_hybridized_gluon_network():
    torch.manual_seed(1)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(6, in_units=4, activation='relu'),
            from_torch(torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh()).to(_device())),
            mx.gluon.nn.Dense(2, in_units=5))
    net[0].initialize(mx.init.Xavier())
    net[2].initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(3).randn(3, 4))
    eager = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    assert 'FullyConnected' in net(mx.sym.var('data')).tojson()
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    assert net[1].collect_params()[net[1].prefix + '0_weight'].grad().abs().sum().asscalar() > 0


@pytest.mark.slow
def test_example_mxnet_to_pytorch_runs(tmp_path):
    script = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'examples', 'mxnet_to_pytorch.py')
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(mx.__file__)))
    out = subprocess.run([sys.executable, script, '--model', 'mobilenet0.25', '--steps', '3', '--out', str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    assert 'logits, MXNet vs torch.nn.Module: max |difference| = 0\n' in out
    assert 'after training, Gluon block vs torch module: max |difference| = 0\n' in out
    losses = [float(line.split('loss ')[1]) for line in out.splitlines() if line.startswith('step ')]
    assert len(losses) == 3 and losses[-1] < losses[0]


def test_to_torch_of_a_symbol_block_loaded_from_mxnet_files(tmp_path):
    net = _cnn()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 2, 5, 5))
    ref = net(x).asnumpy()
    net.export(str(tmp_path / 'cnn'))
    loaded = mx.gluon.SymbolBlock.imports(str(tmp_path / 'cnn-symbol.json'), ['data'],
                                          str(tmp_path / 'cnn-0000.params'), ctx=mx.current_context())
    module = to_torch(loaded).eval()
    with torch.no_grad():
        np.testing.assert_allclose(module(x.as_torch()).cpu().numpy(), ref, rtol=1e-5, atol=1e-6)
    module.train()
    module(x.as_torch()).sum().backward()
    assert all(p.grad is not None for p in module.parameters() if p.requires_grad)


class _BasicBlock(torch.nn.Module):
    """torchvision's ResNet block, as written there (in-place ReLU, `out += identity`)."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.relu = torch.nn.ReLU(inplace=True)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                  torch.nn.BatchNorm2d(cout))
    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)
class _TinyResNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(8),
                                        torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, 2, 1))
        self.layer1 = _BasicBlock(8, 8)
        self.layer2 = _BasicBlock(8, 16, 2)
        self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(16, 10)
    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def test_from_torch_torchvision_style_resnet_hybridizes():
    torch.manual_seed(2)
    module = _TinyResNet().to(_device()).eval()
    block = from_torch(module)
    x = mx.nd.random.uniform(shape=(2, 3, 32, 32))
    with torch.no_grad():
        ref = module(x.as_torch()).cpu().numpy()
    block.hybridize()
    np.testing.assert_allclose(block(x).asnumpy(), ref, **_FOLDED)


_LEAF_LAYERS = [
    (lambda: torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1), (2, 3, 5, 5)),
    (lambda: torch.nn.Conv1d(3, 4, 3, dilation=2, groups=1), (2, 3, 9)),
    (lambda: torch.nn.MaxPool2d(3, 2, ceil_mode=True), (2, 3, 8, 8)),
    (lambda: torch.nn.AvgPool2d(3, 2, 1, count_include_pad=False), (2, 3, 8, 8)),
    (lambda: torch.nn.AdaptiveMaxPool2d(1), (2, 3, 5, 5)), (lambda: torch.nn.LayerNorm(8), (2, 3, 8)),
    (lambda: torch.nn.BatchNorm1d(3), (4, 3)), (lambda: torch.nn.PReLU(), (2, 5)),
    (lambda: torch.nn.ELU(0.5), (2, 5)), (lambda: torch.nn.LeakyReLU(0.2), (2, 5)),
    (lambda: torch.nn.Softplus(), (2, 5)), (lambda: torch.nn.SELU(), (2, 5)), (lambda: torch.nn.GELU(), (2, 5)),
    (lambda: torch.nn.Softmax(dim=1), (2, 5)), (lambda: torch.nn.LogSoftmax(dim=1), (2, 5)),
    (lambda: torch.nn.Flatten(), (2, 3, 4)), (lambda: torch.nn.Dropout(0.5), (2, 5)),
]


@pytest.mark.parametrize('make,shape', _LEAF_LAYERS)
def test_from_torch_leaf_layers_hybridize_to_equal_values(make, shape):
    torch.manual_seed(0)
    module = torch.nn.Sequential(make()).to(_device()).eval()
    block = from_torch(module)
    x = mx.nd.random.normal(shape=shape)
    with torch.no_grad():
        ref = module(x.as_torch()).cpu().numpy()
    block.hybridize()
    np.testing.assert_allclose(block(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_from_torch_embedding_hybridizes():
    torch.manual_seed(0)
    module = torch.nn.Embedding(10, 4).to(_device())
    block = from_torch(module)
    idx = mx.nd.array([[1, 2], [9, 0]], dtype='int64')
    block.hybridize()
    np.testing.assert_allclose(block(idx).asnumpy(), module(idx.as_torch()).detach().cpu().numpy(), rtol=1e-6)


class _Attention(torch.nn.Module):
    """Matrix products as attention computes them (3-D by 3-D, batch by weight)."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        q = self.q(x)
        scores = torch.softmax(q @ x.transpose(1, 2), dim=-1)
        return torch.matmul(torch.bmm(scores, x), self.w)


def test_from_torch_matrix_products_hybridize():
    torch.manual_seed(0)
    module = _Attention().to(_device())
    block = from_torch(module)
    x = mx.nd.random.normal(shape=(2, 5, 4))
    with torch.no_grad():
        ref = module(x.as_torch()).cpu().numpy()
    block.hybridize()
    np.testing.assert_allclose(block(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


class _Functional(torch.nn.Module):
    """Functional pooling, chunk and nearest upsampling, as U-Net-like code writes them."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        a, b = torch.chunk(self.conv(x), 2, dim=1)
        down = F.max_pool2d(a, 2) + F.avg_pool2d(b, 2, 2)
        return torch.cat([F.interpolate(down, scale_factor=2, mode='nearest'), x.float()], dim=1)


def test_from_torch_functional_pooling_chunk_and_upsampling_hybridize():
    torch.manual_seed(0)
    module = _Functional().to(_device())
    block = from_torch(module)
    x = mx.nd.random.normal(shape=(2, 4, 6, 6))
    with torch.no_grad():
        ref = module(x.as_torch()).cpu().numpy()
    block.hybridize()
    np.testing.assert_allclose(block(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
