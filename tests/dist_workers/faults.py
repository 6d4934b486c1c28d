"""Worker of tests/test_dist_kvstore.py: mismatched requests and lost workers.

FAULT=mismatch: shapes, dtypes or keys that differ between workers raise MXNetError on all.
FAULT=die: the last rank exits abruptly; the others must raise MXNetError naming it.
"""
import os
import time

import neomx as mx

kv = mx.kv.create('dist_sync')
rank, n = kv.rank, kv.num_workers
fault = os.environ['FAULT']
kv.init(['s', 't'], [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2), dtype='float16')])
kv.init('u', mx.nd.zeros((4,)))


def expect_error(run, text):
    try:
        run()
    except mx.MXNetError as err:
        assert text in str(err), str(err)
        print('rank %d raised: %s' % (rank, str(err).splitlines()[0]), flush=True)
        return
    raise AssertionError('no error')


if fault == 'mismatch':
    # a key pushed by only some workers
    expect_error(lambda: kv.push('s' if rank == 0 else 'u', mx.nd.ones((2, 2) if rank == 0 else (4,))),
                 'disagree')
    # a barrier against a push
    expect_error(lambda: kv._barrier() if rank == 0 else kv.push('u', mx.nd.ones((4,))), 'disagree')
    # locally wrong shapes are refused before any communication
    expect_error(lambda: kv.push('s', mx.nd.ones((3, 3))), 'stores shape')
    # after the errors the store still works
    kv.push('u', mx.nd.ones((4,)))
    out = mx.nd.zeros((4,))
    kv.pull('u', out=out)
    assert (out.asnumpy() == n).all()
    print('RESULT mismatch ok rank %d' % rank, flush=True)
elif fault == 'die':
    if rank == n - 1:
        os._exit(3)
    start = time.monotonic()
    expect_error(lambda: [kv.push('u', mx.nd.ones((4,))) for _ in range(100)], 'lost rank %d' % (n - 1))
    print('RESULT die ok rank %d after %.1f s' % (rank, time.monotonic() - start), flush=True)
