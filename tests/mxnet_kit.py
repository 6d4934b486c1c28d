"""Run MXNet 1.9.1's own unit tests against neomx, bounded in time; fail below the baseline.

    python tests/mxnet_kit.py                  # every file of the four buckets, --jobs 2, ~25 min on 2 cores
    python tests/mxnet_kit.py --files test_loss.py test_metric.py
    python tests/mxnet_kit.py --update-baseline  # record the current count as the new floor
    python tests/mxnet_kit.py --score run.json   # score a kept run (--json) again

The kit lives in ``../shared/mxnet-tests`` beside the repository (or ``$MXNET_KIT``). Without
it the script prints why it skips and exits 0. It counts the tests that passed on MXNet 1.9.1
(the kit's ``reference.json``) and pass on neomx, and exits 1 when that count is below
``min_passing`` in ``tests/data/mxnet_kit_baseline.json`` (the measured count minus a small
margin for tests whose random data sometimes lands outside MXNet's tolerances).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASELINE = os.path.join(HERE, 'data', 'mxnet_kit_baseline.json')
FLAKY_MARGIN = 10   # tests whose random data or timing varies between runs
BUCKET_MARGIN = 5   # the same, within one bucket


def kit_dir():
    return os.environ.get('MXNET_KIT') or os.path.join(ROOT, '..', 'shared', 'mxnet-tests')


def _buckets(kit):
    """The kit's buckets (main, operator, numpy, more): {bucket: [test files]}."""
    names = {}
    spec = importlib.util.spec_from_file_location('mxnet_kit_run', os.path.join(kit, 'run.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for bucket in ('main', 'operator', 'numpy', 'more'):
        names[bucket] = list(module.BUCKETS.get(bucket, []))
    return names


def _threads_per_job(jobs, requested=None, cores=None):
    """OpenMP threads for each of ``jobs`` parallel test processes: the cores' share, or
    the ``requested`` number (OMP_NUM_THREADS) when smaller; at least 1."""
    share = max(1, (cores or os.cpu_count() or 1) // max(1, jobs))
    try:
        return max(1, min(share, int(requested))) if requested else share
    except ValueError:          # not a number: OpenMP's own syntax ("4,2"), left to the share
        return share


def score(run_json, reference):
    """{file: (passing on neomx, passing on MXNet)} over the reference-passing tests."""
    with open(run_json) as f:
        files = json.load(f)['files']
    table = {}
    for name, ref in reference.items():
        tests = files.get(name, {}).get('tests', {})
        passed = sum(tests.get(t, {}).get('out') == 'passed' for t in ref['passed'])
        table[name] = (passed, len(ref['passed']))
    return table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument('--files', nargs='+', default=['all'], help="test files, or 'main', 'operator', 'all'")
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--test-timeout', type=int, default=90, help='seconds per test')
    ap.add_argument('--file-timeout', type=int, default=1080, help='seconds per file')
    ap.add_argument('--json', help='keep the run results here')
    ap.add_argument('--update-baseline', action='store_true')
    ap.add_argument('--score', metavar='RUN_JSON', help='score an earlier run instead of running')
    a = ap.parse_args(argv)
    kit = kit_dir()
    if not os.path.exists(os.path.join(kit, 'run.py')):
        print('SKIPPED: MXNet test kit not found at %s (set MXNET_KIT)' % os.path.abspath(kit))
        return 0
    with open(os.path.join(kit, 'reference.json')) as f:
        reference = json.load(f)['files']
    out = a.score or a.json or os.path.join(tempfile.mkdtemp(prefix='mxnet_kit_'), 'run.json')
    if not a.score:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
        # The files run in --jobs processes at once: each gets at most its share of the
        # cores for torch's OpenMP threads (fewer if OMP_NUM_THREADS says so). Two 2-thread
        # processes on two cores spin-wait on each other: a small oneDNN LSTM step then
        # takes 0.1 s instead of 1 ms, and test_operator's RNN tests run past --test-timeout
        # (test_rnntanh_sym: 156 s with 2 threads, 11 s with 1, on the same loaded machine).
        env['OMP_NUM_THREADS'] = str(_threads_per_job(a.jobs, os.environ.get('OMP_NUM_THREADS')))
        cmd = [sys.executable, os.path.join(kit, 'run.py'), '--python', sys.executable,
               '--module', 'neomx', '--files', *a.files, '--jobs', str(a.jobs),
               '--test-timeout', str(a.test_timeout), '--file-timeout', str(a.file_timeout),
               '--json', out]
        subprocess.run(cmd, env=env, check=True)
    table = score(out, reference)
    with open(out) as f:
        ran_files = json.load(f)['files']
    ran = {name for name in table if name in ran_files}
    total = sum(table[n][0] for n in ran)
    print('%-22s %8s %8s' % ('file', 'neomx', 'MXNet'))
    for name in sorted(ran):
        print('%-22s %8d %8d' % (name, *table[name]))
    print('%-22s %8d %8d' % ('total', total, sum(table[n][1] for n in ran)))
    if a.update_baseline:
        record = {'passing': total, 'min_passing': total - FLAKY_MARGIN,
                  'per_file': {n: table[n][0] for n in sorted(ran)},
                  'note': 'tests/mxnet_kit.py --update-baseline; min_passing allows %d flaky tests'
                          % FLAKY_MARGIN}
        with open(BASELINE, 'w') as f:
            json.dump(record, f, indent=1)
            f.write('\n')
        print('baseline written to', BASELINE)
        return 0
    with open(BASELINE) as f:
        baseline = json.load(f)
    if set(ran) != set(reference):
        print('(a subset of files ran: the baseline applies to every file; not checked)')
        return 0
    # each bucket keeps its own floor too, so a gain in one cannot hide a loss in another
    buckets = _buckets(kit)
    for bucket, names in buckets.items():
        floor = sum(baseline.get('per_file', {}).get(n, 0) for n in names) - BUCKET_MARGIN
        got = sum(table[n][0] for n in names if n in table)
        print('bucket %-9s %4d (floor %d)' % (bucket, got, floor))
        if got < floor:
            print('FAIL: bucket %s: %d reference-passing tests pass, below its floor %d' % (bucket, got, floor))
            return 1
    if total < baseline['min_passing']:
        print('FAIL: %d reference-passing tests pass, below the baseline floor %d'
              % (total, baseline['min_passing']))
        return 1
    print('OK: %d >= floor %d' % (total, baseline['min_passing']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
