"""A/B of the cost ``autograd.record()`` adds in eager Gluon training, between neomx trees.

Runs bench_gluon's MLP training step (Dense 64-64-10, batch 32, recorded forward, backward,
SGD step) with each tree given on the command line, in fresh processes taking turns, and
reports per tree:

* the CPU time of the stepping thread per step (``time.thread_time``; the best of the
  rounds, so that load from other processes hits every tree alike), and
* the Python function calls per step (cProfile's count): deterministic, so a difference
  there is work a change added, whatever the machine's load.

Usage::

    python3 benchmarks/ab_record_overhead.py /work/main .        # baseline tree first
"""
import json
import os
import subprocess
import sys

_CHILD = r'''
import cProfile, json, pstats, sys, time
sys.path.insert(0, sys.argv[1] + '/benchmarks')
import neomx as mx
import bench_gluon
net = bench_gluon._mlp()
x = mx.nd.random.uniform(shape=(32, 100))
y = mx.nd.array([i % 10 for i in range(32)])
step = bench_gluon.neomx_train_step(net, x, y)
for _ in range(100):
    step()
best = float('inf')
for _ in range(int(sys.argv[2])):
    start = time.thread_time()
    for _ in range(200):
        step()
    best = min(best, (time.thread_time() - start) / 200)
profile = cProfile.Profile()
profile.enable()
for _ in range(50):
    step()
profile.disable()
print(json.dumps({'step_us': best * 1e6, 'calls': pstats.Stats(profile).total_calls / 50,
                  'neomx': mx.__file__}))
'''


def measure(tree, rounds):
    """One child process on ``tree``: its best thread time per step and calls per step."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    # run in the tree: ``python -c`` puts the working directory first on the path
    out = subprocess.run([sys.executable, '-c', _CHILD, os.path.abspath(tree), str(rounds)], env=env,
                         cwd=os.path.abspath(tree), check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(trees, turns=3, rounds=5):
    best = {}
    for _ in range(turns):          # the trees take turns
        for tree in trees:
            result = measure(tree, rounds)
            previous = best.get(tree)
            if previous is None or result['step_us'] < previous['step_us']:
                best[tree] = result
    for tree in trees:
        r = best[tree]
        print('%-30s %8.1f us/step (thread time, best)  %6.1f Python calls/step  (%s)'
              % (tree, r['step_us'], r['calls'], r['neomx']))


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:])
