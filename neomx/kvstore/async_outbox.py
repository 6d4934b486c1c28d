"""The worker side of ``dist_async``'s transport: requests to the other workers' servers.

Every request to a server travels as one ``torch.distributed.rpc`` call of
:func:`async_server.in_order` carrying a list of calls, which that server runs in the order
this worker made them. A server lives in another worker's process and competes for that
process's GIL with its training loop, so each message costs the server a wait for the GIL:
the fewer messages, the sooner the answers.

Pushes are therefore not sent on their own at once: a push to a server waits here and
travels in the same message as this worker's next request to that server (a training step's
gradient push goes with the next step's ``pull`` or ``row_sparse_pull``: one round trip for
both, as ``pushpull`` asks), and at the latest ``FLUSH_AFTER`` seconds after it was made (a
background thread sends what is left), or when the store settles (barriers,
``set_optimizer``, exit). A worker's later pull always sees its earlier pushes: they run
before it on the server. Pushes to this worker's own shard never wait (they are applied in
the caller's thread).

A ``row_sparse_pull`` into a RowSparseNDArray waits here the same way (``defer(...,
reply=True)`` gives a :class:`Reply`): its array gets the rows at its first read, which sends
the request if no other request has taken it along first.
"""
import collections
import itertools
import threading
import time

from . import async_server

__all__ = ['Outbox', 'Reply', 'FLUSH_AFTER', 'server_name']

FLUSH_AFTER = 0.02      # seconds a push may wait for a request to travel with
# per server: the number of this process's next message, shared by its stores (the servers
# count each worker's messages, whichever store sent them: see async_server.in_order); the
# lock keeps numbering and sending in one order when the flushing thread sends too
_SEQUENCE = {}
_SEND_LOCK = threading.Lock()


def server_name(server):
    """The RPC name of the server shard in worker ``server``."""
    return 'neomx-kvstore-%d' % server


class Reply:
    """Where the answer of a kept request will be: ``message`` (``(whats, future)``) and the
    request's ``position`` in it, once sent. :meth:`wait` sends it first if it is still kept."""

    def __init__(self, outbox, server):
        self.outbox, self.server = outbox, server
        self.message = self.position = None

    def wait(self):
        """``(whats, future, position)`` of the sent request (sending it now if still kept)."""
        if self.message is None:
            self.outbox.send_kept(self.server)
        whats, future = self.message
        return whats, future, self.position


class Outbox:
    """The requests of one store (worker ``rank``) to the other workers' servers.

    ``defer`` keeps a push for later; ``send`` sends a request with the pushes kept for its
    server (a future of the request's answer); ``flush`` sends every kept push. Messages sent
    without waiting for their answer stay in ``in_flight`` until :meth:`collect` checks them.
    """

    def __init__(self, rank):
        self.rank = rank
        self.deferred = {}          # server: [(what, (fn, args))], oldest first
        self.replies = {}           # server: [(position in deferred[server], Reply)]: answers awaited
        self.due = {}               # server: when its oldest kept push must go at the latest
        self.in_flight = collections.deque()     # (whats, server, future): sent, answer not checked
        self._wake = threading.Event()
        self._stop = False
        self._thread = None

    def _post(self, server, calls):
        """Send ``calls`` ([(what, (fn, args))]) to ``server`` as one message (under the lock)."""
        from torch.distributed import rpc
        seq = next(_SEQUENCE.setdefault(server, itertools.count()))
        return rpc.rpc_async(server_name(server), async_server.in_order,
                             args=(self.rank, seq, [call for _, call in calls]))

    def defer(self, server, what, call, reply=False):
        """Keep ``call`` (``(fn, args)``, a push) for the next request to ``server``; with
        ``reply``, a :class:`Reply` to its answer (a request whose answer is read later)."""
        answer = Reply(self, server) if reply else None
        with _SEND_LOCK:
            if server not in self.deferred:
                self.due[server] = time.monotonic() + FLUSH_AFTER
            kept = self.deferred.setdefault(server, [])
            if answer is not None:
                self.replies.setdefault(server, []).append((len(kept), answer))
            kept.append((what, call))
            self._wake.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._flush_late, name='neomx-kvstore-outbox', daemon=True)
            self._thread.start()
        return answer

    def _post_kept(self, server, extra=()):
        """Send the calls kept for ``server`` and ``extra`` as one message (under the lock);
        ``(whats, future)``; the replies of the kept calls learn where their answers are."""
        calls = self.deferred.pop(server, []) + list(extra)
        self.due.pop(server, None)
        whats = [w for w, _ in calls]
        future = self._post(server, calls)
        for position, answer in self.replies.pop(server, ()):
            answer.message, answer.position = (whats, future), position
        return whats, future

    def send(self, server, what, call):
        """Send ``call`` with the calls kept for ``server``: ``(whats, future)``; the future's
        answer is the list of the calls' results, ``call``'s last."""
        with _SEND_LOCK:
            return self._post_kept(server, [(what, call)])

    def send_kept(self, server):
        """Send the calls kept for ``server`` now (a reply is awaited): they join ``in_flight``."""
        with _SEND_LOCK:
            if server in self.deferred:
                whats, future = self._post_kept(server)
                self.in_flight.append((whats, server, future))

    def flush(self, now=None):
        """Send the kept pushes now (with ``now``, those due by then); their answers join
        ``in_flight``. The time the next kept push is due, or None."""
        with _SEND_LOCK:
            for server in [s for s, due in self.due.items() if now is None or due <= now]:
                whats, future = self._post_kept(server)
                self.in_flight.append((whats, server, future))
            if not self.deferred:
                self._wake.clear()
                return None
            return min(self.due.values())

    def _flush_late(self):
        due = None
        while not self._stop:
            if due is None:
                self._wake.wait()
                due = time.monotonic() + FLUSH_AFTER
            # the worker's next request to a server usually takes its pushes first
            time.sleep(max(0.0, due - time.monotonic()))
            if not self._stop:
                due = self.flush(time.monotonic())

    def close(self):
        """Send what is kept and stop the flushing thread (at exit, before RPC shuts down)."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            # until it ends (within FLUSH_AFTER): a thread left inside an RPC call when the
            # interpreter finalizes would abort the process
            self._thread.join()
        self.flush()
