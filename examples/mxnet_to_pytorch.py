"""Moving an MXNet model to PyTorch: a model-zoo network and an MXNet-saved ``.params`` file
become a ``torch.nn.Module``, which trains on in plain PyTorch and is saved and exported with
torch's own tools; the logits stay those of the MXNet model.

Run from the repository root::

    python examples/mxnet_to_pytorch.py                                  # writes a .params first
    python examples/mxnet_to_pytorch.py --params resnet18_v1-0000.params # a file MXNet 1.9.1 saved

``--params`` takes what MXNet's ``net.save_parameters(...)`` (or ``net.export``'s ``-0000.params``)
wrote; without it the script saves the network's initial values in the same format first.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch

try:
    import neomx as mx
except ImportError:                     # run from a checkout without installing neomx
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import neomx as mx


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--model', default='resnet18_v1', help='a gluon.model_zoo.vision network')
    parser.add_argument('--params', help="an MXNet .params file of that network (net.save_parameters)")
    parser.add_argument('--size', type=int, default=32, help='input height and width')
    parser.add_argument('--steps', type=int, default=5, help='training steps in PyTorch')
    parser.add_argument('--out', default=tempfile.mkdtemp(), help='where the torch files go')
    args = parser.parse_args()

    # 1. The MXNet model, as MXNet code builds it: model zoo + .params file.
    net = mx.gluon.model_zoo.vision.get_model(args.model)
    params = args.params
    if params is None:                  # stand-in for a file MXNet wrote (same format, byte for byte)
        net.initialize(mx.init.Xavier(), ctx=mx.cpu())
        net(mx.nd.zeros((1, 3, args.size, args.size)))
        params = os.path.join(args.out, '%s.params' % args.model)
        net.save_parameters(params)
        net = mx.gluon.model_zoo.vision.get_model(args.model)
    net.load_parameters(params, ctx=mx.cpu())
    net.hybridize()
    x = np.random.RandomState(0).uniform(-1, 1, (4, 3, args.size, args.size)).astype('float32')
    mx_logits = net(mx.nd.array(x)).asnumpy()
    print('MXNet model: %s, %d parameters from %s' % (args.model, len(net.collect_params()), params))

    # 2. The same model as a torch.nn.Module: parameters are the block's own memory, Gluon-named.
    module = mx.bridge.to_torch(net)
    names = [n for n, _ in module.named_parameters()]
    print('torch module: %d tensors, first %s, last %s' % (len(names), names[0], names[-1]))
    module.eval()
    with torch.no_grad():
        torch_logits = module(torch.from_numpy(x)).numpy()
    print('logits, MXNet vs torch.nn.Module: max |difference| = %.3g' % np.abs(mx_logits - torch_logits).max())
    print('first logits: %s' % np.array2string(torch_logits[0, :4], precision=5))

    # 3. Train on in plain PyTorch: optimizer, loss and loop are torch's.
    module.train()
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.RandomState(1)
    images = torch.from_numpy(rng.uniform(-1, 1, (16, 3, args.size, args.size)).astype('float32'))
    labels = torch.from_numpy(rng.randint(0, mx_logits.shape[1], 16))
    for step in range(args.steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(module(images), labels)
        loss.backward()
        optimizer.step()
        print('step %d: loss %.4f' % (step, loss.item()))

    # 4. The trained weights are the Gluon block's too: both give the same logits.
    module.eval()
    with torch.no_grad():
        trained = module(torch.from_numpy(x)).numpy()
    print('after training, Gluon block vs torch module: max |difference| = %.3g'
          % np.abs(net(mx.nd.array(x)).asnumpy() - trained).max())

    # 5. Saved with torch's tools: a state_dict any torch code loads, and a torch.export program.
    state_path = os.path.join(args.out, '%s.pt' % args.model)
    torch.save(module.state_dict(), state_path)
    program = mx.bridge.export(net, (torch.from_numpy(x),))
    program_path = os.path.join(args.out, '%s-program.pt2' % args.model)
    torch.export.save(program, program_path)
    with torch.no_grad():
        served = torch.export.load(program_path).module()(torch.from_numpy(x)).numpy()
    print('saved %s and %s; exported program vs module: max |difference| = %.3g'
          % (state_path, program_path, np.abs(served - trained).max()))


if __name__ == '__main__':
    main()
