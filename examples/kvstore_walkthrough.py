"""The KVStore walkthrough of MXNet's documentation (seed 000), step by step.

Run from the repository root: ``python examples/kvstore_walkthrough.py``. The four
devices are GPUs when the machine has any (spread over them: with fewer than four, a GPU
holds several of the copies), else ``mx.cpu(0..3)``: distinct logical devices on the host,
so aggregation across devices runs (and prints) the same.
"""
import os
import sys

try:
    import neomx as mx
except ImportError:                     # run from a checkout without installing neomx
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import neomx as mx


def show(title, array):
    print('>>> ' + title)
    print(array.asnumpy())


def main():
    kv = mx.kv.create('local')          # create a local kv store.
    shape = (2, 3)
    gpus = mx.context.num_gpus()
    devices = [mx.gpu(i % gpus) if gpus else mx.cpu(i) for i in range(4)]
    print('devices: %s' % devices)

    # Initialization: one (int, NDArray) pair, then pull the value out.
    kv.init(3, mx.nd.ones(shape) * 2)
    a = mx.nd.zeros(shape)
    kv.pull(3, out=a)
    show('kv.init(3, ones * 2); kv.pull(3, out=a)', a)

    # Push a new value for the key.
    kv.push(3, mx.nd.ones(shape) * 8)
    kv.pull(3, out=a)
    show('kv.push(3, ones * 8)', a)

    # Values pushed from several devices are summed first.
    b = [mx.nd.ones(shape, dev) for dev in devices]
    kv.push(3, b)
    kv.pull(3, out=a)
    show('kv.push(3, [ones on each of 4 devices])', a)

    # A custom updater replaces the default assignment.
    def update(key, input, stored):
        print('update on key: %d' % key)
        stored += input * 2

    kv._set_updater(update)
    kv.pull(3, out=a)
    show('kv._set_updater(update); kv.pull(3, out=a)', a)
    print('>>> kv.push(3, ones)')
    kv.push(3, mx.nd.ones(shape))
    kv.pull(3, out=a)
    show('kv.pull(3, out=a)', a)

    # Pull to several devices in one call.
    b = [mx.nd.ones(shape, dev) for dev in devices]
    kv.pull(3, out=b)
    show('kv.pull(3, out=b); b[1]', b[1])

    # Lists of key-value pairs, on a single device...
    keys = [5, 7, 9]
    kv.init(keys, [mx.nd.ones(shape)] * len(keys))
    print('>>> kv.push(keys, [ones] * 3)')
    kv.push(keys, [mx.nd.ones(shape)] * len(keys))
    b = [mx.nd.zeros(shape)] * len(keys)
    kv.pull(keys, out=b)
    show('kv.pull(keys, out=b); b[1]', b[1])

    # ... and on several devices.
    b = [[mx.nd.ones(shape, dev) for dev in devices]] * len(keys)
    print('>>> kv.push(keys, [[ones on each device]] * 3)')
    kv.push(keys, b)
    kv.pull(keys, out=b)
    show('kv.pull(keys, out=b); b[1][1]', b[1][1])


if __name__ == '__main__':
    main()
