"""float16 AMP on a CUDA GPU: a ResNet-50 v1 training step (batch 64, 224x224, hybridized,
SGD with momentum) with ``amp.init('float16')`` + ``amp.init_trainer`` + ``amp.scale_loss``,
against the same step in float32, and against plain torch (``torch.autocast`` +
``torch.amp.GradScaler``) on the same architecture (Gluon's ResNet-50 v1 written in ``torch.nn``:
the stride on the first 1x1 convolution, biased 1x1 convolutions).

``amp.init`` changes the process for good, so each measurement runs in a fresh interpreter:

    python benchmarks/amp_gpu.py                     # the rows, printed as RESULTS.md rows
    python benchmarks/amp_gpu.py worker neomx fp16   # one measurement: seconds per step
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

BATCH, SHAPE, CLASSES, STEPS, ROUNDS = 64, (3, 224, 224), 1000, 10, 5


def _seconds_per_step(step, synchronize):
    for _ in range(5):
        step()
    synchronize()
    best = float('inf')
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(STEPS):
            step()
        synchronize()
        best = min(best, (time.perf_counter() - t0) / STEPS)
    return best


def neomx_step(precision):
    import neomx as mx
    from neomx.contrib import amp
    if precision == 'fp16':
        amp.init('float16')
    ctx = mx.gpu(0)
    net = mx.gluon.model_zoo.vision.resnet50_v1(classes=CLASSES)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9})
    if precision == 'fp16':
        amp.init_trainer(trainer)
    x = mx.nd.random.normal(shape=(BATCH,) + SHAPE, ctx=ctx)
    y = mx.nd.array([i % CLASSES for i in range(BATCH)], ctx=ctx)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
            if precision == 'fp16':
                with amp.scale_loss(loss, trainer) as scaled:
                    mx.autograd.backward(scaled)
        if precision != 'fp16':
            loss.backward()
        trainer.step(BATCH)
    return step, mx.nd.waitall


def _torch_resnet50_v1():
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            width = cout // 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, stride), nn.BatchNorm2d(width), nn.ReLU(),
                nn.Conv2d(width, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                nn.Conv2d(width, cout, 1, 1), nn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for blocks, cout, stride in ((3, 256, 1), (4, 512, 2), (6, 1024, 2), (3, 2048, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, cout, stride if i == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, CLASSES)]
    return nn.Sequential(*layers)


def torch_step(precision):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    model = _torch_resnet50_v1().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
    scaler = torch.amp.GradScaler('cuda', enabled=precision == 'fp16')
    x = torch.randn((BATCH,) + SHAPE, device='cuda')
    y = torch.arange(BATCH, device='cuda') % CLASSES

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast('cuda', dtype=torch.float16, enabled=precision == 'fp16'):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step, torch.cuda.synchronize


def _measure(framework, precision):
    out = subprocess.run([sys.executable, __file__, 'worker', framework, precision], check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main():
    import torch
    card = torch.cuda.get_device_name(0)
    # Interleave the interpreters so that a slow phase of the card touches every variant alike.
    times = {}
    for _ in range(int(os.environ.get('AMP_GPU_PASSES', '1'))):
        for key in (('neomx', 'fp32'), ('neomx', 'fp16'), ('torch', 'fp32'), ('torch', 'fp16')):
            times.setdefault(key, []).append(_measure(*key))
    best = {k: min(v) for k, v in times.items()}
    rows = [('GPU ResNet-50 v1 b64 training step, amp float16 vs float32, hybridized [%s]' % card,
             best['neomx', 'fp16'], best['neomx', 'fp32'], 0.6,
             'second column: the same neomx step in float32'),
            ('GPU ResNet-50 v1 b64 training step, amp float16 vs torch autocast+GradScaler [%s]' % card,
             best['neomx', 'fp16'], best['torch', 'fp16'], 1.05,
             'torch.nn ResNet-50 v1 (same layers), torch.autocast float16 + GradScaler, SGD momentum'),
            ('GPU ResNet-50 v1 b64 training step, float32 vs torch float32 [%s]' % card,
             best['neomx', 'fp32'], best['torch', 'fp32'], 1.05, 'the same torch model in float32')]
    for name, ours, theirs, target, note in rows:
        ratio = ours / theirs
        print('| amp_gpu | %s | %.2f | %.2f | %.2f | <= %.2f | %s | %s |' % (
            name, ours * 1e6, theirs * 1e6, ratio, target, 'yes' if ratio <= target else '**no**', note))


if __name__ == '__main__':
    if sys.argv[1:2] == ['worker']:
        fw, prec = sys.argv[2], sys.argv[3]
        step_fn, sync = (neomx_step if fw == 'neomx' else torch_step)(prec)
        print(_seconds_per_step(step_fn, sync))
    else:
        main()
