"""dist_async servers run each worker's requests in the order the worker sent them: one that
arrives early is parked and run by the thread that finishes its predecessors (no RPC needed
to check it: ``in_order`` is called directly, as an RPC thread would)."""
import threading

import pytest

from neomx.kvstore import async_server

WORKER = 'test-order-worker'        # a worker id no real job uses


@pytest.fixture
def order_state():
    yield
    with async_server._ORDER:       # leave the module's bookkeeping as it was
        async_server._NEXT.pop(WORKER, None)
        async_server._WAITING.pop(WORKER, None)
        async_server._RUNNING.discard(WORKER)


def test_early_requests_wait_for_their_predecessors_and_run_in_order(order_state):
    ran = []
    record = lambda name: ran.append(name) or name.upper()    # noqa: E731
    later = [async_server.in_order(WORKER, seq, record, ('r%d' % seq,)) for seq in (2, 1)]
    assert ran == [] and not any(f.done() for f in later)     # parked: 0 has not come
    first = async_server.in_order(WORKER, 0, record, ('r0',))
    assert ran == ['r0', 'r1', 'r2']
    assert [f.wait() for f in [first] + later[::-1]] == ['R0', 'R1', 'R2']
    assert async_server._NEXT[WORKER] == 3 and not async_server._WAITING[WORKER]


def test_an_error_reaches_its_caller_and_the_next_request_still_runs(order_state):
    def fail():
        raise ValueError('bad request')
    nxt = async_server.in_order(WORKER, 1, lambda: 'ok', ())
    failed = async_server.in_order(WORKER, 0, fail, ())
    with pytest.raises(ValueError, match='bad request'):
        failed.wait()
    assert nxt.wait() == 'ok'


def test_threads_racing_keep_the_order(order_state):
    ran, lock = [], threading.Lock()

    def record(i):
        with lock:
            ran.append(i)
        return i
    futures = [None] * 200

    def send(seqs):
        for s in seqs:
            futures[s] = async_server.in_order(WORKER, s, record, (s,))
    threads = [threading.Thread(target=send, args=(range(start, 200, 4),)) for start in (3, 1, 2, 0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ran == list(range(200))
    assert [f.wait() for f in futures] == list(range(200))
