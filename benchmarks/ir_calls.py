"""Per-call cost of ``mx.np``/``mx.npx`` functions against their torch call, in instructions.

``bench_numpy.py`` times each function against the operator's own torch implementation in
thread CPU time; on a busy machine (other processes, a shared cache) those times move by
10% from run to run, more than the overhead being measured. This script counts the
instructions each call executes instead, under valgrind's callgrind, which does not
depend on what else runs: the same cases (``bench_numpy._npx_calls`` and
``_np_elementwise_calls``), the ratio of instruction counts per call. Instructions are not
time (a cache miss costs more than an add), so the ratios come out somewhat below the
timed ones, but a change to the Python around the torch call shows in them exactly.

    python benchmarks/ir_calls.py                          # every function (a few minutes)
    python benchmarks/ir_calls.py npx.activation np.add    # selected ones

Needs ``valgrind`` (with ``callgrind_control``) on the PATH. One interpreter runs under
callgrind with counting off; for each call it turns counting on around ``N`` calls,
then dumps the count (``callgrind_control``), so the start-up is paid once.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
N = 200         # calls per count (counts repeat exactly): the per-call figure is the count over N

# run inside callgrind: warm each call, then count N calls of it between two signals
_CHILD = r'''
import gc, os, subprocess, sys
sys.path.insert(0, {here!r})
import torch
torch.set_num_threads(1)
import bench_numpy
cases = {{}}
for name, op in bench_numpy.registered(bench_numpy.NPX_FUNCTIONS).items():
    try:
        calls = bench_numpy._npx_calls(name, op)
        calls[0](), calls[1]()
    except Exception:  # pylint: disable=broad-except  # no small case fits: bench_numpy skips it too
        continue
    cases['npx.' + name] = calls
for name, calls in bench_numpy._np_elementwise_calls().items():
    try:
        calls[0](), calls[1]()
    except Exception:  # pylint: disable=broad-except
        continue
    cases[name] = calls
wanted = {wanted!r} or sorted(cases)
for name in wanted:
    for fn in cases[name]:      # neomx's call, then torch's
        count(name, fn, {n}, warm=50)
'''

# The counting loop of the scripts run under callgrind (this one's, ir_steps.py's,
# bench_sparse.py's): warm ``fn`` up, count ``n`` calls of it between two signals with the
# garbage collector off, and dump the count under ``name``.
COUNT = r'''
import gc, os, subprocess


def count(name, fn, n, warm):
    pid = str(os.getpid())
    for _ in range(warm):
        fn()
    gc.collect()
    gc.disable()
    subprocess.run(['callgrind_control', '-i', 'on', pid], check=True, capture_output=True)
    for _ in range(n):
        fn()
    subprocess.run(['callgrind_control', '-i', 'off', pid], check=True, capture_output=True)
    subprocess.run(['callgrind_control', '-d', name, pid], check=True, capture_output=True)
    gc.enable()
'''


def _counts(out_dir):
    """{(case, side): instructions} of the dumps callgrind wrote in ``out_dir``: each case
    dumps twice under its name, neomx's count first (in the numbered order of the parts)."""
    dumps = []
    for path in glob.glob(os.path.join(out_dir, 'cg.out.*')):
        case = total = None
        with open(path) as f:
            for line in f:
                if line.startswith('desc: Trigger: dump '):
                    case = line[len('desc: Trigger: dump '):].strip()
                elif line.startswith('totals:'):
                    total = int(line.split()[1])
        if case is not None and total is not None:
            dumps.append((int(path.rsplit('.', 1)[1]), case, total))
    counts = {}
    for _, case, total in sorted(dumps):
        counts[(case, 'torch' if (case, 'neomx') in counts else 'neomx')] = total
    return counts


def run_counted(script, prefix):
    """Run ``script`` (Python source calling :data:`COUNT`'s ``count``) under callgrind with
    counting off; returns :func:`_counts` of its dumps."""
    for tool in ('valgrind', 'callgrind_control'):
        if shutil.which(tool) is None:
            raise SystemExit('%s needs %s on the PATH' % (os.path.basename(sys.argv[0]), tool))
    out_dir = tempfile.mkdtemp(prefix=prefix)
    try:
        # the caller's PYTHONPATH first (the tree to measure), then this checkout
        # (a fixed hash seed: dict and set layouts, and so the counts, repeat from run to run)
        env = dict(os.environ, PYTHONHASHSEED='0', PYTHONPATH=os.pathsep.join(
            [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p] + [os.path.dirname(HERE)]))
        subprocess.run(['valgrind', '--tool=callgrind', '--instr-atstart=no',
                        '--callgrind-out-file=' + os.path.join(out_dir, 'cg.out'),
                        os.path.realpath(sys.executable), '-c', COUNT + script],
                       env=env, check=True, capture_output=True)
        return _counts(out_dir)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def measure(wanted=()):
    """{case: (neomx instructions per call, torch instructions per call)}."""
    counts = run_counted(_CHILD.format(here=HERE, wanted=list(wanted), n=N), 'ir_calls_')
    cases = sorted({case for case, _ in counts})
    return {c: (counts[(c, 'neomx')] / N, counts[(c, 'torch')] / N) for c in cases
            if (c, 'neomx') in counts and (c, 'torch') in counts}


if __name__ == '__main__':
    results = measure(sys.argv[1:])
    for name, (ours, theirs) in sorted(results.items(), key=lambda kv: kv[1][1] / kv[1][0]):
        print('%-26s %9.0f %9.0f  %5.2f' % (name, ours, theirs, ours / theirs))
