"""MXNet's NumPy interface against raw torch and against the same work written with ``mx.nd``.

* Per call: every ``mx.npx`` operator function, and ``mx.np``'s element-wise functions, on
  small inputs against the operator's own torch implementation on the same tensors (as
  ``bench_op_overhead.py`` does for ``mx.nd``); target 1.5x.
* Training steps: an MLP and the seed's LeNet written in NumPy style (``npx.set_np()``,
  ``mx.np`` arrays, LeNet as a ``forward`` of ``mx.np``/``mx.npx`` calls) against the same
  models written with ``mx.nd`` (``hybrid_forward``), eager and hybridized; target 1.05x.
  The "torch" column of these rows is the ``mx.nd`` model's time.

    python benchmarks/bench_numpy.py          # prints every row
    python benchmarks/run.py bench_numpy      # RESULTS.md rows (run on a quiet machine)
"""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_cases  # noqa: E402
from bench_op_overhead import _time_pair  # noqa: E402
from common import Result, compare  # noqa: E402

import neomx as mx  # noqa: E402
from neomx import autograd, gluon, np, npx  # noqa: E402
from neomx.context import current_context  # noqa: E402
from neomx.operator import np_elemwise, registry  # noqa: E402
from neomx.operator.npx import NPX_FUNCTIONS, registered  # noqa: E402

CALL_TARGET = 1.5
STEP_TARGET = 1.05


# ---------------------------------------------------------------- per call
def _npx_calls(func_name, op_name):
    """(npx call, torch call) of the operator's small case from op_cases."""
    spec = registry.get(op_name)
    arrays, kwargs = op_cases.case(op_name, spec)
    arrays = [a.as_np_ndarray() for a in arrays]
    function = getattr(npx, func_name)
    attrs = spec.parse_attrs(dict(kwargs))
    if spec.ctx_attrs:
        attrs = dict(attrs, ctx=attrs.get('ctx') or current_context())
    tensors = [a._t for a in arrays] + [None] * (len(spec.inputs) - len(arrays))
    impl = spec.impl
    if spec.nd_impl is not impl:        # a view of the input: torch code copies it
        return (lambda: function(*arrays, **kwargs)), (lambda: impl(*tensors, **attrs).clone())
    return (lambda: function(*arrays, **kwargs)), (lambda: impl(*tensors, **attrs))


# functions of integers only (NumPy's too): timed on int32 arrays
_INTEGER_FUNCTIONS = ('bitwise_not', 'invert', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'lcm', 'gcd',
                      'left_shift', 'right_shift')


def _np_elementwise_calls():
    """{name: (mx.np call, torch call)} of mx.np's unary and binary functions on (4, 5) floats
    (int32 arrays for the integer-only ones)."""
    floats = np.ones((4, 5)) * 0.5, np.ones((4, 5)) * 0.25
    ints = np.full((4, 5), 6, dtype='int32'), np.full((4, 5), 4, dtype='int32')
    calls = {}
    for name, (op, _impl) in np_elemwise.NP_UNARY.items():
        impl = registry.get(op).impl
        x = ints[0] if name in _INTEGER_FUNCTIONS else floats[0]
        calls['np.' + name] = (lambda f=getattr(np, name), x=x: f(x), lambda i=impl, x=x: i(x._t))
    for name, entry in np_elemwise.NP_BINARY.items():
        impl = registry.get(entry[0]).impl
        x, y = ints if name in _INTEGER_FUNCTIONS else floats
        calls['np.' + name] = (lambda f=getattr(np, name), x=x, y=y: f(x, y), lambda i=impl, x=x, y=y: i(x._t, y._t))
    return calls


def measure_calls():
    """({name: (neomx seconds, torch seconds)}, {name: why skipped})."""
    times, skipped = {}, {}
    for func_name, op_name in registered(NPX_FUNCTIONS).items():
        try:
            calls = _npx_calls(func_name, op_name)
            calls[0](), calls[1]()
        except KeyError as err:
            skipped['npx.' + func_name] = err.args[0]
            continue
        except Exception as err:  # pylint: disable=broad-except  # op_cases' generic case does not fit
            skipped['npx.' + func_name] = '%s: %s' % (type(err).__name__, str(err)[:80])
            continue
        times['npx.' + func_name] = _time_pair(*calls)
    for name, calls in _np_elementwise_calls().items():
        try:
            calls[0](), calls[1]()
        except Exception as err:  # pylint: disable=broad-except  # a case that does not fit the function
            skipped[name] = '%s: %s' % (type(err).__name__, str(err)[:80])
            continue
        times[name] = _time_pair(*calls)
    return times, skipped


def bench_numpy_functions():
    times, skipped = measure_calls()
    ratio = {n: a / b for n, (a, b) in times.items()}
    over = sorted((n for n in times if ratio[n] > CALL_TARGET), key=ratio.get, reverse=True)
    worst = max(times, key=ratio.get)
    note = ('%d functions timed, %d over %.1fx; skipped: %s'
            % (len(times), len(over), CALL_TARGET, '; '.join('%s (%s)' % kv for kv in sorted(skipped.items())) or 'none'))
    rows = [Result('mx.npx / mx.np functions on small inputs: worst (%s)' % worst,
                   times[worst][0], times[worst][1], CALL_TARGET, note)]
    rows += [Result('%s, small inputs' % n, times[n][0], times[n][1], CALL_TARGET,
                    "torch column: the operator's own implementation") for n in over]
    return rows


# ---------------------------------------------------------------- training steps
class _NumpyLeNet(gluon.HybridBlock):
    """The seed's LeNet as MXNet 2.0 writes it: ``forward`` with mx.np/mx.npx."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.conv1 = gluon.nn.Conv2D(20, 5)
            self.conv2 = gluon.nn.Conv2D(50, 5)
            self.fc1 = gluon.nn.Dense(500)
            self.fc2 = gluon.nn.Dense(10)

    def forward(self, x):
        x = npx.pooling(npx.relu(self.conv1(x)), kernel=(2, 2), stride=(2, 2), pool_type='max')
        x = npx.pooling(npx.relu(self.conv2(x)), kernel=(2, 2), stride=(2, 2), pool_type='max')
        return self.fc2(npx.relu(self.fc1(npx.batch_flatten(x))))


def _legacy_lenet():
    nn = gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(20, 5, activation='relu'), nn.MaxPool2D(2, 2), nn.Conv2D(50, 5, activation='relu'),
            nn.MaxPool2D(2, 2), nn.Flatten(), nn.Dense(500, activation='relu'), nn.Dense(10))
    return net


def _mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation='relu'), gluon.nn.Dense(256, activation='relu'), gluon.nn.Dense(10))
    return net


def _step(make_net, shape, numpy_style, hybrid):
    """One SGD training step of ``make_net()`` on a batch of ``shape``, NumPy style or mx.nd."""
    if numpy_style:
        npx.set_np()
    try:
        mx.random.seed(0)
        net = make_net()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        array = np if numpy_style else mx.nd
        x = array.random.uniform(size=shape) if numpy_style else mx.nd.random.uniform(shape=shape)
        y = array.array([i % 10 for i in range(shape[0])])
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05})
    finally:
        npx.reset_np()

    def step():
        previous = mx.util.is_np_array()
        if numpy_style and not previous:
            npx.set_np()
        try:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(shape[0])
            mx.nd.waitall()
        finally:
            if numpy_style and not previous:
                npx.reset_np()
    step()
    return step


def _training_rows(name, numpy_net, legacy_net, shape):
    rows = []
    for hybrid in (False, True):
        label = '%s training step, NumPy style vs mx.nd, %s' % (name, 'hybridized' if hybrid else 'eager')
        # both sides run the same torch kernels, so the ratio is the Python around them (1-2%
        # by instruction counts: ir_steps.py) under +-5% of timing noise at this size: the
        # median of 9 interleaved rounds, not the best of 3
        rows.append(compare(label, _step(numpy_net, shape, True, hybrid), _step(legacy_net, shape, False, hybrid),
                            STEP_TARGET, 'torch column: the same model written with mx.nd; medians of 9 '
                            'interleaved rounds (best of 3 each)', rounds=9, statistic=statistics.median,
                            repeat=3))
    return rows


def bench_numpy_mlp_steps():
    return _training_rows('MLP 784-256-256-10, batch 64', _mlp, _mlp, (64, 784))


def bench_numpy_lenet_steps():
    return _training_rows('LeNet, batch 64', _NumpyLeNet, _legacy_lenet, (64, 1, 28, 28))


BENCHMARKS = [bench_numpy_functions, bench_numpy_mlp_steps, bench_numpy_lenet_steps]


if __name__ == '__main__':
    torch.set_num_threads(1)
    for bench in BENCHMARKS:
        for row in bench():
            print('%-75s %10.2f us %10.2f us  %5.2f%s' % (row.name, row.neomx_s * 1e6, row.torch_s * 1e6, row.ratio,
                                                        '' if row.ok else '  OVER'))
