"""Sparse logistic regression on a LibSVM file of 1,000,001 features (MXNet's
``example/sparse/linear_classification``, written imperatively).

Each batch is a CSR matrix from ``mx.io.LibSVMIter`` (never densified); the weight lives in a
KVStore and each batch pulls only the rows its features use (``row_sparse_pull``); the
gradient of ``dot(csr, weight)`` is row_sparse and the push sends only those rows, which the
optimizer (FTRL by default, lazily) updates on the store.

Run from the repository root::

    python examples/sparse_linear.py                         # one process, 'local' store
    python -m neomx.launch -n 2 --launcher local python examples/sparse_linear.py --kvstore dist_async

The data file (``--data``, generated on first use: ``--num-examples`` rows of ``--nnz``
features each, labels from a hidden weight, features long-tailed) is split between the workers.
"""
import argparse
import logging
import os
import resource
import sys
import time

import numpy as np

try:
    import neomx as mx
except ImportError:                     # run from a checkout without installing neomx
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import neomx as mx


def generate_libsvm(path, num_examples, num_features, nnz, seed=0):
    """A LibSVM file whose labels (0/1) follow a logistic model of a hidden weight."""
    rng = np.random.RandomState(seed)
    hidden = rng.normal(0, 1, size=num_features).astype(np.float32)
    tmp = '%s.%d.tmp' % (path, os.getpid())
    with open(tmp, 'w') as f:
        for start in range(0, num_examples, 10000):
            rows = min(10000, num_examples - start)
            lines = []
            for _ in range(rows):
                # features drawn from a long-tailed law, as in click logs: a few are frequent
                cols = np.unique((rng.pareto(0.7, size=nnz) * 10).astype(np.int64) % num_features)
                vals = rng.uniform(0, 1, size=len(cols)).astype(np.float32)
                prob = 1 / (1 + np.exp(-float(np.dot(hidden[cols], vals))))
                label = int(rng.uniform() < prob)
                lines.append('%d %s\n' % (label, ' '.join('%d:%.4f' % cv for cv in zip(cols, vals))))
            f.writelines(lines)
    os.replace(tmp, path)       # workers racing to generate it write the same bytes


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--data', default=os.path.join('data', 'sparse_linear.libsvm'))
    ap.add_argument('--num-features', type=int, default=1000001)
    ap.add_argument('--num-examples', type=int, default=100000)
    ap.add_argument('--nnz', type=int, default=15, help='features per example')
    ap.add_argument('--batch-size', type=int, default=1024)
    ap.add_argument('--epochs', type=int, default=2)
    ap.add_argument('--kvstore', default='local')
    ap.add_argument('--optimizer', default='ftrl')
    ap.add_argument('--lr', type=float, default=0.1)
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format='%(message)s')

    kv = mx.kv.create(a.kvstore)
    if not os.path.exists(a.data):
        os.makedirs(os.path.dirname(a.data) or '.', exist_ok=True)
        generate_libsvm(a.data, a.num_examples, a.num_features, a.nnz)
    kv._barrier()
    train = mx.io.LibSVMIter(data_libsvm=a.data, data_shape=(a.num_features,), batch_size=a.batch_size,
                             num_parts=kv.num_workers, part_index=kv.rank)

    # the model: weight (num_features, 1) in the store, pulled row by row; bias dense
    kv.init('weight', mx.nd.random.normal(0, 0.01, shape=(a.num_features, 1)))
    kv.init('bias', mx.nd.zeros((1,)))
    kv.set_optimizer(mx.optimizer.create(a.optimizer, learning_rate=a.lr, rescale_grad=1.0 / a.batch_size))
    weight = mx.nd.zeros((a.num_features, 1))          # this worker's copy of the rows it uses
    weight.attach_grad(stype='row_sparse')
    pulled = mx.nd.sparse.zeros('row_sparse', (a.num_features, 1))
    bias = mx.nd.zeros((1,))
    bias.attach_grad()
    metric = mx.metric.create(['acc', 'nll_loss'])

    for epoch in range(a.epochs):
        tic = time.time()
        train.reset()
        metric.reset()
        for batch in train:
            data, label = batch.data[0], batch.label[0]
            rows = data.indices                          # the features this batch uses
            kv.row_sparse_pull('weight', out=pulled, row_ids=rows)
            kv.pull('bias', out=bias)       # under dist_async, in one message with the rows' request
            weight[pulled.indices] = pulled.data
            with mx.autograd.record():
                z = mx.nd.dot(data, weight).reshape((-1,)) + bias
                loss = mx.nd.relu(z) - z * label + mx.nd.log1p(mx.nd.exp(-mx.nd.abs(z)))
            loss.backward()
            kv.push('weight', weight.grad)               # row_sparse: only these rows travel
            kv.push('bias', bias.grad)
            prob = mx.nd.sigmoid(z)
            metric.update([label], [mx.nd.stack(1 - prob, prob, axis=1)])
        names, values = metric.get()
        logging.info('worker %d epoch %d: %s, %.2f s, peak memory %.0f MiB', kv.rank, epoch,
                     ', '.join('%s=%.4f' % nv for nv in zip(names, values)), time.time() - tic, peak_rss_mib())
    kv._barrier()


if __name__ == '__main__':
    main()
