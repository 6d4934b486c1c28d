"""Sparse arrays: ``dot(csr, dense)`` against ``torch.sparse.mm`` (and MXNet 1.9.1 where
installed), and the bytes ``row_sparse_pull`` moves under ``dist_async``.

    python benchmarks/bench_sparse.py            # every figure below, printed
    python benchmarks/run.py bench_sparse        # the torch ratio, into RESULTS.md

1. ``dot(csr, dense)``: a batch of 1,024 rows of 1,000,001 features, about 15 non-zeros a
   row (the shape of the sparse linear example's batches), times a dense (1,000,001, 1)
   weight; neomx's ``mx.nd.dot`` against ``torch.sparse.mm`` on the same csr tensor. With
   ``MXNET_PYTHON`` (default ``~/mxref/bin/python``) the same matrices are timed in MXNet.
   ``main`` runs everything on one thread (torch and MXNet's OpenMP alike): a batch this
   small is tens of microseconds of work, which a busy machine's thread pools swamp.
2. ``row_sparse_pull`` of 1% of the rows of a (1,000,001, 64) weight between two workers
   (``dist_async``, started through ``neomx.launch``): the bytes received against the
   weight's size; under ``dist_sync`` (every worker holds the value), the bytes a row_sparse
   push of those rows passes to the all-gathers.
With ``--instructions`` (needs valgrind): item 1 counted in instructions under callgrind
(``benchmarks/ir_calls.py``'s method), which a busy machine does not move: the Python
neomx adds around the kernel shows exactly.

3. With ``--epoch``: one training epoch of ``examples/sparse_linear.py`` on its generated
   file (``--data``, made if missing) against MXNet 1.9.1 training the same model as MXNet's
   ``example/sparse/linear_classification`` does (Module, csr data, row_sparse weight pulled
   with ``sparse_row_id_fn``, FTRL) on the same file: on a local KVStore, then with 2 workers
   under ``dist_async`` (neomx through ``neomx.launch``, MXNet with ps-lite's scheduler, 2
   servers and 2 workers on this machine); and MXNet's Module program itself run by neomx.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import neomx as mx  # noqa: E402
from benchmarks.common import best_time, compare  # noqa: E402

FEATURES = 1000001
BATCH = 1024
NNZ = 15
MXNET_PYTHON = os.environ.get('MXNET_PYTHON', os.path.expanduser('~/mxref/bin/python'))


def csr_batch(seed=0):
    """(data, indices, indptr) of a random batch: NNZ distinct sorted columns a row."""
    rng = np.random.RandomState(seed)
    cols = [np.unique(rng.randint(0, FEATURES, size=NNZ)) for _ in range(BATCH)]
    indptr = np.concatenate([[0], np.cumsum([len(c) for c in cols])]).astype(np.int64)
    indices = np.concatenate(cols).astype(np.int64)
    return rng.uniform(0, 1, size=len(indices)).astype(np.float32), indices, indptr


def bench_dot_csr_dense():
    data, indices, indptr = csr_batch()
    x = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(BATCH, FEATURES))
    w = mx.nd.random.normal(shape=(FEATURES, 1))
    x_t, w_t = x._sparse(), w._t
    return compare('dot(csr 1024x1000001 ~15 nnz/row, dense (1000001, 1))', lambda: mx.nd.dot(x, w),
                   lambda: torch.sparse.mm(x_t, w_t), target=1.2, note='torch.sparse.mm on the same csr tensor')


_MXNET_DOT = '''
import json, sys, time
import numpy as np
import mxnet as mx
d = np.load(sys.argv[1])
x = mx.nd.sparse.csr_matrix((d['data'], d['indices'], d['indptr']), shape=tuple(d['shape']))
w = mx.nd.array(d['w'])
def run():
    mx.nd.dot(x, w).wait_to_read()
run()
best = 1e9
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(50):
        run()
    best = min(best, (time.perf_counter() - t0) / 50)
print(json.dumps({'mxnet_s': best}))
'''


def dot_against_mxnet():
    """(neomx seconds, MXNet seconds) per dot(csr, dense), or None without MXNet."""
    if not os.path.exists(MXNET_PYTHON):
        return None
    data, indices, indptr = csr_batch()
    w = np.random.RandomState(1).normal(size=(FEATURES, 1)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'batch.npz')
        np.savez(path, data=data, indices=indices, indptr=indptr, w=w, shape=np.array([BATCH, FEATURES]))
        out = subprocess.run([MXNET_PYTHON, '-c', _MXNET_DOT, path], capture_output=True, text=True, check=True,
                             env=dict(os.environ, OMP_NUM_THREADS=str(torch.get_num_threads())))
    mxnet_s = json.loads(out.stdout.strip().splitlines()[-1])['mxnet_s']
    x = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(BATCH, FEATURES))
    wn = mx.nd.array(w)
    neomx_s = best_time(lambda: mx.nd.dot(x, wn).wait_to_read())
    return neomx_s, mxnet_s


def row_sparse_pull_bytes(kind='dist_async', rows=FEATURES):
    """{'rows', 'weight', 'push_sent', 'pull_received'} of worker 0 of 2 pushing a row_sparse
    gradient of 1% of the rows of a (rows, 64) weight and pulling those rows under ``kind``
    (tests/dist_workers/sparse_pull_bytes.py, which also asserts the exact byte counts)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
               KV_KIND=kind, ROWS=str(rows))
    out = subprocess.run([sys.executable, '-m', 'neomx.launch', '-n', '2', '--launcher', 'local', sys.executable,
                          os.path.join(ROOT, 'tests', 'dist_workers', 'sparse_pull_bytes.py')],
                         capture_output=True, text=True, env=env, timeout=600)
    for line in out.stdout.splitlines():
        if 'BYTES ' in line:
            # the other worker's output may follow on the same line: read one JSON value
            return json.JSONDecoder().raw_decode(line.split('BYTES ', 1)[1])[0]
    raise RuntimeError('the workers printed no result:\n%s\n%s' % (out.stdout, out.stderr[-2000:]))


_MXNET_EPOCH = '''
import sys, time
import mxnet as mx     # a parameter server's or the scheduler's process serves here and exits
path, features, batch_size, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
kv = mx.kv.create(kind)
x = mx.sym.var('data', stype='csr')
weight = mx.sym.var('weight', shape=(features, 1), init=mx.init.Normal(sigma=0.01), stype='row_sparse')
bias = mx.sym.var('bias', shape=(1,))
pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, weight), bias)
model = mx.sym.LogisticRegressionOutput(pred, mx.sym.var('softmax_label'))
train = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch_size,
                         num_parts=kv.num_workers, part_index=kv.rank)
mod = mx.mod.Module(symbol=model, data_names=['data'], label_names=['softmax_label'])
mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
mod.init_params()
mod.init_optimizer(optimizer=mx.optimizer.create('ftrl', learning_rate=0.1,
                                                 rescale_grad=1.0 / batch_size / kv.num_workers), kvstore=kv)
metric = mx.metric.create('acc')     # nll_loss needs two columns; neomx's example computes both
for epoch in range(3):
    train.reset()
    metric.reset()
    tic = time.time()
    for batch in train:
        mod.prepare(batch, sparse_row_id_fn=lambda b: {'weight': b.data[0].indices})
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    mx.nd.waitall()
    print('EPOCH %d %.3f rank %d' % (epoch, time.time() - tic, kv.rank), flush=True)
'''


def _neomx_epochs(path, features, batch_size, workers, env):
    argv = [sys.executable, os.path.join(ROOT, 'examples', 'sparse_linear.py'), '--data', path,
            '--num-features', str(features), '--batch-size', str(batch_size), '--epochs', '3']
    if workers > 1:
        argv = [sys.executable, '-m', 'neomx.launch', '-n', str(workers), '--launcher', 'local'] + argv + \
            ['--kvstore', 'dist_async']
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, timeout=1800)
    # "worker R epoch 2: ..., S s, peak memory ..."
    last = [ln for ln in (out.stdout + out.stderr).splitlines() if ' epoch 2:' in ln]
    return max(float(ln.split(' s, ')[0].rsplit(', ', 1)[1]) for ln in last)


def _mxnet_epochs(path, features, batch_size, workers, env, python=MXNET_PYTHON):
    """The third epoch's seconds of MXNet's Module program (the slowest worker's); with
    ``python`` this interpreter, the same program run by neomx (``import neomx as mx``)."""
    program = _MXNET_EPOCH if python == MXNET_PYTHON else _MXNET_EPOCH.replace('import mxnet as mx',
                                                                               'import neomx as mx')
    argv = [python, '-c', program, path, str(features), str(batch_size),
            'local' if workers == 1 else 'dist_async']
    if workers == 1:
        out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, timeout=1800).stdout
    else:
        # MXNet's parameter server on this machine: a scheduler, one server and one worker per
        # rank (ps-lite's roles, as MXNet's tools/launch.py --launcher local sets them)
        ps = dict(env, DMLC_PS_ROOT_URI='127.0.0.1', DMLC_PS_ROOT_PORT=str(_free_port()),
                  DMLC_NUM_SERVER=str(workers), DMLC_NUM_WORKER=str(workers))
        roles = ['scheduler'] + ['server'] * workers + ['worker'] * workers
        procs = [subprocess.Popen(argv, env=dict(ps, DMLC_ROLE=r), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True) for r in roles]
        out = ''
        try:
            for p in procs:
                out += p.communicate(timeout=1800)[0]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
    return max(float(ln.split()[2]) for ln in out.splitlines() if ln.startswith('EPOCH 2 '))


def _free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def epoch_against_mxnet(path, features=FEATURES, batch_size=BATCH, workers=1):
    """(neomx seconds, MXNet seconds) of the third training epoch on ``path`` (the first ones
    warm up; with ``workers`` > 1 under dist_async, the slowest worker's), MXNet None without
    MXNet. MXNet runs first, then neomx, then MXNet again, keeping its faster run (a shared
    machine: the order would otherwise favour one)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
               OMP_NUM_THREADS=str(torch.get_num_threads()))
    if not os.path.exists(MXNET_PYTHON):
        return _neomx_epochs(path, features, batch_size, workers, env), None
    mxnet_s = _mxnet_epochs(path, features, batch_size, workers, env)
    neomx_s = _neomx_epochs(path, features, batch_size, workers, env)
    mxnet_s = min(mxnet_s, _mxnet_epochs(path, features, batch_size, workers, env))
    return neomx_s, mxnet_s


_DOT_CALLGRIND = r'''
import sys
sys.path.insert(0, {root!r})
import torch
torch.set_num_threads(1)
from benchmarks.bench_sparse import BATCH, FEATURES, csr_batch
import neomx as mx
data, indices, indptr = csr_batch()
x = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(BATCH, FEATURES))
w = mx.nd.random.normal(shape=(FEATURES, 1))
x_t, w_t = x._sparse(), w._t
for name, fn in [('neomx', lambda: mx.nd.dot(x, w)), ('torch', lambda: torch.sparse.mm(x_t, w_t)),
                 ('loop', lambda: None)]:
    count(name, fn, {n}, warm=30)
'''


def dot_instructions(n=100):
    """Instructions per ``dot(csr, dense)`` call of item 1: (neomx, torch.sparse.mm), the
    cost of the timing loop itself taken off both."""
    from benchmarks.ir_calls import run_counted
    counts = {case: total / n for (case, _), total in
              run_counted(_DOT_CALLGRIND.format(root=ROOT, n=n), 'bench_sparse_').items()}
    return counts['neomx'] - counts['loop'], counts['torch'] - counts['loop']


BENCHMARKS = [bench_dot_csr_dense]


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description='sparse benchmarks (see the module docstring)')
    ap.add_argument('--epoch', action='store_true', help='also time a training epoch against MXNet')
    ap.add_argument('--data', default=os.path.join(ROOT, 'data', 'sparse_linear.libsvm'))
    ap.add_argument('--instructions', action='store_true',
                    help='only count the instructions of dot(csr, dense) under callgrind')
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    if a.instructions:
        ours, theirs = dot_instructions()
        print('dot(csr, dense) instructions per call: neomx %.0f, torch.sparse.mm %.0f, ratio %.3f'
              % (ours, theirs, ours / theirs))
        return
    res = bench_dot_csr_dense()
    print('%s: neomx %.3f ms, torch.sparse.mm %.3f ms, ratio %.2f (target <= %.1f)'
          % (res.name, res.neomx_s * 1e3, res.torch_s * 1e3, res.ratio, res.target))
    mx_times = dot_against_mxnet()
    if mx_times is None:
        print('MXNet not found at %s: no MXNet figure' % MXNET_PYTHON)
    else:
        print('dot(csr, dense) same batch: neomx %.3f ms, MXNet 1.9.1 %.3f ms, neomx/MXNet %.2f'
              % (mx_times[0] * 1e3, mx_times[1] * 1e3, mx_times[0] / mx_times[1]))
    for kind in ('dist_async', 'dist_sync'):
        got = row_sparse_pull_bytes(kind)
        moved, how = ((got['pull_received'], 'row_sparse_pull received') if kind == 'dist_async' else
                      (got['push_sent'], 'row_sparse push sent (its row_sparse_pull reads the local copy)'))
        print('%s, 1%% of the rows (%d of %d x 64 float32): %s %d bytes of %d (%.2f%%)'
              % (kind, got['rows'], FEATURES, how, moved, got['weight'], 100.0 * moved / got['weight']))
    if a.epoch:
        if not os.path.exists(a.data):
            sys.path.insert(0, os.path.join(ROOT, 'examples'))
            from sparse_linear import generate_libsvm
            os.makedirs(os.path.dirname(a.data), exist_ok=True)
            generate_libsvm(a.data, 100000, FEATURES, NNZ)
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
                   OMP_NUM_THREADS='1')
        if os.path.exists(MXNET_PYTHON):
            mxnet_s = _mxnet_epochs(a.data, FEATURES, BATCH, 1, env)
            neomx_s = _mxnet_epochs(a.data, FEATURES, BATCH, 1, env, python=sys.executable)
            print("MXNet's Module program itself (local): neomx %.2f s, MXNet 1.9.1 %.2f s, neomx/MXNet %.2f"
                  % (neomx_s, mxnet_s, neomx_s / mxnet_s))
        for workers in (1, 2):
            neomx_s, mxnet_s = epoch_against_mxnet(a.data, workers=workers)
            versus = '' if mxnet_s is None else ', MXNet 1.9.1 %.2f s, neomx/MXNet %.2f' % (mxnet_s, neomx_s / mxnet_s)
            print('training epoch on %s (%s): neomx %.2f s%s'
                  % (a.data, 'local' if workers == 1 else '%d workers, dist_async' % workers, neomx_s, versus))


if __name__ == '__main__':
    main()
