"""Leaving MXNet: the PyTorch bridge and ONNX (issue 25).

    python benchmarks/bench_bridge.py            # the rows below, printed
    python benchmarks/run.py bench_bridge        # into RESULTS.md

1. A Gluon ResNet-18 (hybridized, batch 8 of 3x64x64) bridged by ``mx.bridge.to_torch``: one
   forward and backward through the ``torch.nn.Module`` against the same step through the
   block itself (``autograd.record()`` + ``backward()``); target within 1.05x.
2. onnxruntime on the ResNet-18 ``mx.onnx.export_model`` wrote, against neomx's hybridized
   inference of the same network (batch 1 of 3x224x224); target: onnxruntime at least as
   fast (ratio <= 1).
3. ``mx.onnx.export_model`` of ResNet-50 (symbol and parameters in memory, to a file): its
   time against the 10 s the issue allows (ratio <= 1).
"""
import os
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import neomx as mx  # noqa: E402
from benchmarks.common import Result, best_time, compare  # noqa: E402


def _zoo(name, shape):
    net = mx.gluon.model_zoo.vision.get_model(name)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=shape)
    net(x)
    return net, x


def bench_bridged_forward_backward():
    net, x = _zoo('resnet18_v1', (8, 3, 64, 64))
    module = mx.bridge.to_torch(net)
    xt = x.as_torch()

    def bridged():
        module.zero_grad(set_to_none=True)
        module(xt).sum().backward()

    def own():
        with mx.autograd.record():
            y = net(x)
        y.backward()
        mx.nd.waitall()

    return compare('to_torch(resnet18_v1) forward+backward, batch 8x3x64x64', bridged, own, target=1.05,
                   note="baseline: the hybridized block's own record()+backward()", repeat=3, min_time=0.5)


def _resnet18_onnx(directory, shape):
    net, x = _zoo('resnet18_v1', shape)
    sym = net(mx.sym.var('data'))
    params = {p.name: p.data() for p in net.collect_params().values()}
    path = mx.onnx.export_model(sym, params, [shape], np.float32, os.path.join(directory, 'resnet18.onnx'))
    return net, x, path


def bench_onnxruntime_vs_hybridized():
    import onnxruntime as ort   # pylint: disable=import-outside-toplevel
    shape = (1, 3, 224, 224)
    with tempfile.TemporaryDirectory() as directory:
        net, x, path = _resnet18_onnx(directory, shape)
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()   # the same threads as torch
        session = ort.InferenceSession(path, options, providers=['CPUExecutionProvider'])
        feed = {'data': x.asnumpy()}

        def neomx_inference():
            net(x).wait_to_read()

        return compare('onnxruntime on exported resnet18_v1, batch 1x3x224x224', lambda: session.run(None, feed),
                       neomx_inference, target=1.0, note="baseline: neomx's hybridized inference; ratio <= 1: "
                       'onnxruntime at least as fast', repeat=3, min_time=0.5)


def bench_export_resnet50():
    net, _ = _zoo('resnet50_v1', (1, 3, 224, 224))
    sym = net(mx.sym.var('data'))
    params = {p.name: p.data() for p in net.collect_params().values()}
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, 'resnet50.onnx')
        seconds = best_time(lambda: mx.onnx.export_model(sym, params, [(1, 3, 224, 224)], np.float32, path),
                            repeat=3, min_time=0.0)
    return Result('mx.onnx.export_model(resnet50_v1) to a file', seconds, 10.0, 1.0,
                  note='baseline: the 10 s budget of the issue (seconds: the neomx column)')


BENCHMARKS = [bench_bridged_forward_backward, bench_onnxruntime_vs_hybridized, bench_export_resnet50]


def main():
    for bench in BENCHMARKS:
        start = time.perf_counter()
        res = bench()
        print('%-60s %9.4f s %9.4f s  ratio %.3f (target %.2f) %s  [%.0f s]'
              % (res.name, res.neomx_s, res.torch_s, res.ratio, res.target, res.note, time.perf_counter() - start))


if __name__ == '__main__':
    main()
