"""dist_async's outbox (neomx.kvstore.async_outbox): a push waits to travel with the worker's
next request to the same server, in order, and goes on its own after FLUSH_AFTER at the latest.
The RPC itself is replaced by a recorder here (tests/test_dist_kvstore.py runs the real one)."""
import time

import pytest

from neomx.kvstore import async_outbox


@pytest.fixture
def posted(monkeypatch):
    sent = []

    def post(self, server, calls):
        sent.append((server, [call for _, call in calls]))
        return 'future-%d' % len(sent)
    monkeypatch.setattr(async_outbox.Outbox, '_post', post)
    return sent


def test_pushes_travel_with_the_next_request_to_their_server(posted):
    box = async_outbox.Outbox(rank=0)
    try:
        box.defer(1, 'push', ('push_rows', 'a'))
        box.defer(2, 'push', ('push', 'b'))
        box.defer(1, 'push', ('push', 'c'))
        assert posted == []
        whats, fut = box.send(1, 'row_sparse_pull', ('pull_rows', 'd'))
        assert whats == ['push', 'push', 'row_sparse_pull'] and fut == 'future-1'
        assert posted == [(1, [('push_rows', 'a'), ('push', 'c'), ('pull_rows', 'd')])]
        assert list(box.deferred) == [2]            # server 2's push still waits
        whats, _ = box.send(1, 'pull', ('pull', 'e'))
        assert whats == ['pull'] and posted[-1] == (1, [('pull', 'e')])
    finally:
        box.close()
    assert posted[-1] == (2, [('push', 'b')])       # sent at close
    assert [entry[1] for entry in box.in_flight] == [2]


def test_a_waiting_push_goes_on_its_own_after_flush_after(posted):
    box = async_outbox.Outbox(rank=0)
    try:
        box.defer(3, 'push', ('push', 'x'))
        deadline = time.monotonic() + 10
        while not posted and time.monotonic() < deadline:
            time.sleep(async_outbox.FLUSH_AFTER / 4)
        assert posted == [(3, [('push', 'x')])]
        assert box.deferred == {} and len(box.in_flight) == 1
    finally:
        box.close()


def test_flush_sends_everything_kept(posted):
    box = async_outbox.Outbox(rank=0)
    try:
        box.defer(1, 'push', ('push', 'a'))
        box.defer(0, 'push', ('push', 'b'))
        assert box.flush() is None
        assert sorted(posted) == [(0, [('push', 'b')]), (1, [('push', 'a')])]
    finally:
        box.close()
