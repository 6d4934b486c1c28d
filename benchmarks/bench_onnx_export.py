"""``mx.onnx.export_model`` of the model zoo's ResNet-50 v1 (from its exported ``-symbol.json``
and ``.params`` files, as users export), seconds per export; target under 10 s.

    python benchmarks/bench_onnx_export.py [repeats]
"""
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import neomx as mx  # noqa: E402  (the tree this script lives in)


def main(repeats=3):
    net = mx.gluon.model_zoo.vision.resnet50_v1()
    net.initialize()
    net.hybridize()
    net(mx.nd.random.uniform(shape=(1, 3, 224, 224)))
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, 'resnet50_v1')
        net.export(prefix)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            mx.onnx.export_model(prefix + '-symbol.json', prefix + '-0000.params', [(1, 3, 224, 224)],
                                 np.float32, prefix + '.onnx')
            times.append(time.perf_counter() - start)
    print('ResNet-50 v1 export to ONNX: best %.2f s of %d (target < 10 s)' % (min(times), repeats))


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
