"""Worker of tests/test_dist_kvstore.py: the program ends while a heartbeat is inside a torch call.

A thread still inside a torch call when the interpreter finalizes aborts the process as it
comes back ("terminate called without an active exception"), so the worker's exit must wait
for its heartbeat. Here every heartbeat first spends BEAT_DELAY seconds in a store call (a
machine too busy to run the heartbeat thread for that long), and tearing the interpreter down
is slow (an object whose ``__del__`` sleeps as the modules are removed): a heartbeat left
running at exit would come back from its call during the teardown.
"""
import sys
import threading
import time
import types
from datetime import timedelta

import torch.distributed as dist

import neomx as mx

BEAT_DELAY = 2.5


class SlowBeats:
    """The heartbeat's store, each ``add`` first waiting BEAT_DELAY s in a torch call (the
    GIL released); ``entered`` is set once a heartbeat is inside it, ``returned`` once
    one came back from it."""

    def __init__(self, store):
        self.store = store
        self.local = dist.HashStore()
        self.entered = threading.Event()
        self.returned = threading.Event()

    def add(self, key, amount):
        self.entered.set()
        try:
            self.local.wait(['never-set'], timedelta(seconds=BEAT_DELAY))
        except RuntimeError:        # DistStoreError: the wait timed out, as meant
            pass
        self.returned.set()
        return self.store.add(key, amount)


class SlowTeardown:
    """Sleeps when collected, until the heartbeat came back from its call (at most
    BEAT_DELAY + 1.5 s): held by a module of its own, it is collected as the interpreter
    removes the modules, after it started finalizing (``__main__``'s namespace may outlive
    that: a running heartbeat's frame holds it)."""

    def __init__(self, beats):
        self.beats = beats

    def __del__(self):
        deadline = time.monotonic() + BEAT_DELAY + 1.5
        while not self.beats.returned.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)


kv = mx.kv.create('dist_sync')
kv.init(3, mx.nd.zeros((2,)))
kv.pushpull(3, mx.nd.ones((2,)), out=mx.nd.zeros((2,)))
group = kv._group
beats = SlowBeats(group._beats)
group._beats = beats
assert beats.entered.wait(30), 'the heartbeat did not beat within 30 s'
holder = types.ModuleType('slow_teardown')
holder.teardown = SlowTeardown(beats)
sys.modules[holder.__name__] = holder
del holder
print('RESULT heartbeat ok rank %d' % kv.rank, flush=True)
