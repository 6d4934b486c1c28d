"""Worker of tests/test_dist_kvstore.py: no thread of gloo is left once the store's exit hooks ran.

``destroy_process_group`` at exit ends gloo's threads only if nothing else holds the group:
torch.distributed.nn.functional, imported after the group exists (torch._dynamo imports it),
would hold it in its functions' defaults.
"""
import atexit
import os

import neomx as mx


def report_threads():
    names = [open('/proc/self/task/%s/comm' % t).read().strip() for t in os.listdir('/proc/self/task')]
    left = sorted(n for n in names if 'gloo' in n)
    print('RESULT exit threads %s rank %s' % (','.join(left) or 'none', os.environ['RANK']), flush=True)


atexit.register(report_threads)     # before the store's hooks: runs after them
kv = mx.kv.create('dist_sync')
import torch.distributed.nn.functional  # noqa: E402,F401  (after the group exists)
out = mx.nd.zeros((2,))
kv.init(3, mx.nd.zeros((2,)))
kv.pushpull(3, mx.nd.ones((2,)), out=out)
assert (out.asnumpy() == kv.num_workers).all(), out
