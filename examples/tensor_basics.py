"""The third seed document's tensor examples, done the MXNet way, plus a first autograd step.

    python examples/tensor_basics.py

Element-wise operations on two 3x3 matrices, ``abs``, reductions over everything and
along axis 0 (MXNet returns ``min``/``max`` values and ``argmin``/``argmax`` separately),
then the gradient of a small function.
"""
import os
import sys

try:
    import neomx as mx
except ImportError:      # running from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    import neomx as mx

nd = mx.nd


def show(label, value):
    print('>>> %s%s' % (label, value))


def main():
    a = nd.array([[1, 2, 3], [5, 6, 7], [8, 9, 10]])
    b = nd.array([[-1, -2, -3], [-10, -20, -30], [-100, -200, -300]])
    show('a + b', a + b)
    show('a * -1', a * -1)
    show('a.abs()', a.abs())
    show('a.sum()', a.sum())
    show('a.min()', a.min())
    show('a.max()', a.max())
    show('a.sum(0)', a.sum(0))
    show('a.min(axis=0)', a.min(axis=0))
    show('a.argmin(axis=0)', a.argmin(axis=0))
    show('a.max(axis=0)', a.max(axis=0))
    show('a.argmax(axis=0)', a.argmax(axis=0))

    x = nd.array([0.5, 1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = (nd.sin(x) * x).sum()
    y.backward()
    show('d/dx sum(sin(x) * x) at x = [0.5, 1, 2]', x.grad)


if __name__ == '__main__':
    main()
