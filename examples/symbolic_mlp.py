"""The second seed document's symbolic MLP: declare a graph, bind it in a Module, train it.

    python examples/symbolic_mlp.py                    # 300 batches of MNIST, then the test accuracy
    python examples/symbolic_mlp.py --batches 100 --num-ctx 2   # the batches split over 2 contexts

First the snippet itself -- ``mx.symbol.Variable``, ``FullyConnected(num_hidden=128)``,
``SoftmaxOutput``, ``mx.mod.Module``, ``bind``, ``init_params``, one forward and backward --
then ``Module.fit`` on MNIST (the files carried in the repository) for a few hundred
batches, and the accuracy on the test set.
"""
import argparse
import logging
import os
import sys

try:
    import neomx as mx
except ImportError:      # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    import neomx as mx


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--batch-size', type=int, default=100)
    p.add_argument('--batches', type=int, default=300, help='training batches (one epoch of that many)')
    p.add_argument('--num-ctx', type=int, default=1, help='CPU contexts to split each batch over')
    p.add_argument('--lr', type=float, default=0.1)
    return p.parse_args(argv)


def mlp():
    """The seed's network: 784 -> 128 -> 64 -> 10 with ReLUs and a softmax output."""
    data = mx.symbol.Variable('data')
    fc1 = mx.symbol.FullyConnected(data, num_hidden=128)
    act1 = mx.symbol.Activation(fc1, act_type='relu')
    fc2 = mx.symbol.FullyConnected(act1, num_hidden=64)
    act2 = mx.symbol.Activation(fc2, act_type='relu')
    fc3 = mx.symbol.FullyConnected(act2, num_hidden=10)
    return mx.symbol.SoftmaxOutput(fc3, name='softmax')


def one_step(net, batch):
    """The snippet: bind a Module, initialize it, run one forward and backward pass."""
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', batch.data[0].shape)], label_shapes=[('softmax_label', batch.label[0].shape)],
             inputs_need_grad=True)
    mod.init_params()
    mod.forward(batch)
    mod.backward()
    probs, = mod.get_outputs()
    input_grad, = mod.get_input_grads()
    print('one step: outputs %s, gradient w.r.t. the data %s (norm %.4f)'
          % (probs.shape, input_grad.shape, input_grad.norm().asscalar()))


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format='%(message)s')
    mnist = mx.test_utils.get_mnist()
    flat = lambda images: images.reshape(images.shape[0], -1)
    train = mx.io.NDArrayIter(flat(mnist['train_data']), mnist['train_label'], args.batch_size, shuffle=True)
    test = mx.io.NDArrayIter(flat(mnist['test_data']), mnist['test_label'], args.batch_size)
    net = mlp()
    one_step(net, next(iter(train)))
    train.reset()

    contexts = [mx.cpu(i) for i in range(args.num_ctx)]
    mod = mx.mod.Module(net, context=contexts)
    mod.fit(mx.io.ResizeIter(train, args.batches), eval_data=test, num_epoch=1,
            optimizer='sgd', optimizer_params={'learning_rate': args.lr, 'momentum': 0.9},
            initializer=mx.init.Xavier(), batch_end_callback=mx.callback.Speedometer(args.batch_size, 100))
    accuracy = dict(mod.score(test, 'acc'))['accuracy']
    print('test accuracy after %d batches: %.4f' % (args.batches, accuracy))
    return accuracy


if __name__ == '__main__':
    main()
