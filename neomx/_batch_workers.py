"""Batches of samples prepared by a pool of threads, ahead of the caller, in order.

The image iterators (``mx.io.ImageRecordIter``, ``mx.image.ImageIter``...) describe each batch
as a list of samples; :class:`BatchPipeline` runs ``prepare(sample, slot, batch)`` for every
sample on ``threads`` worker threads and keeps up to ``ahead`` batches in flight, so that
decoding (OpenCV and Pillow release the GIL) and augmentation (numpy and torch release it
too) overlap each other and the caller's training step. Results come back in submission
order whatever the number of threads: each sample carries everything it depends on (its
bytes, its own random seed), nothing is drawn from a shared stream.

With ``threads=0`` everything runs on the caller's thread, when the batch is asked for.
A worker's exception is re-raised by :meth:`BatchPipeline.next` for the batch it belongs to,
and ends the pool's threads; so do :meth:`BatchPipeline.close` and collecting the pipeline.
"""
import collections
import concurrent.futures
import threading
import weakref

__all__ = ['BatchPipeline']


class _Batch:
    """A batch being prepared: its buffers, and one future per sample (None when inline)."""
    __slots__ = ('buffers', 'futures', 'samples', 'extra')

    def __init__(self, buffers, samples, extra):
        self.buffers = buffers
        self.samples = samples
        self.extra = extra
        self.futures = None


def _weak(method):
    """A weak reference to a bound method (the owner's life is not extended by the pool's
    queue or by the pipeline it owns), or a plain callable kept as it is."""
    if hasattr(method, '__self__'):
        return weakref.WeakMethod(method)
    return lambda: method


def _run(prepare_ref, sample, slot, buffers):
    prepare = prepare_ref()
    if prepare is not None:         # else the iterator is gone: nothing to prepare for
        prepare(sample, slot, buffers)


def _shutdown(pool):
    # Called from a finalizer, which may run on any thread, a worker included: never wait.
    pool.shutdown(wait=False, cancel_futures=True)


class BatchPipeline:
    """Prepare batches on worker threads, ``ahead`` of the caller.

    Parameters
    ----------
    prepare : callable
        ``prepare(sample, slot, buffers)`` fills slot ``slot`` of the batch's ``buffers``.
    allocate : callable
        ``allocate()`` returns fresh buffers for one batch (never reused: the caller keeps
        the arrays it was given).

    Bound methods are held weakly, so that an iterator owning the pipeline is freed (and
    closes it) as soon as its user drops it; ``start``'s generator should not hold its
    owner strongly either.
    threads : int
        Worker threads; 0 prepares on the caller's thread.
    ahead : int
        Batches queued beyond the one being read (at least 1 when there are threads).
    name : str
        Prefix of the worker threads' names.
    """

    def __init__(self, prepare, allocate, threads, ahead, name='neomx-batches'):
        self._prepare = _weak(prepare)
        self._allocate = _weak(allocate)
        self._threads = max(0, int(threads))
        self._ahead = max(1, int(ahead)) if self._threads else 0
        self._name = name
        self._pool = None
        self._finalizer = None
        self._queue = collections.deque()
        self._source = iter(())

    def start(self, batches):
        """Begin a new sequence: ``batches`` yields ``(samples, extra)`` per batch. Work left
        from a previous sequence is cancelled."""
        self._cancel()
        self._source = iter(batches)
        self._fill()

    def _ensure_pool(self):
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                self._threads, thread_name_prefix=self._name)
            self._finalizer = weakref.finalize(self, _shutdown, self._pool)

    def _fill(self):
        """Queue batches until ``ahead`` + 1 are in flight (or the sequence ends)."""
        while len(self._queue) <= self._ahead:
            try:
                samples, extra = next(self._source)
            except StopIteration:
                return
            batch = _Batch(self._allocate()(), samples, extra)
            if self._threads:
                self._ensure_pool()
                batch.futures = [self._pool.submit(_run, self._prepare, sample, slot, batch.buffers)
                                 for slot, sample in enumerate(samples)]
            self._queue.append(batch)

    def next(self):
        """(buffers, extra) of the next batch, or None at the end of the sequence.

        An exception raised while preparing one of its samples is raised here (the batches
        queued behind it are dropped).
        """
        if not self._queue:
            self._fill()
            if not self._queue:
                return None
        batch = self._queue.popleft()
        try:
            if batch.futures is None:
                for slot, sample in enumerate(batch.samples):
                    _run(self._prepare, sample, slot, batch.buffers)
            else:
                for future in batch.futures:
                    future.result()
        except BaseException:
            self.close()        # no thread outlives a failed batch (a new start makes new ones)
            raise
        self._fill()
        return batch.buffers, batch.extra

    def _cancel(self, wait=True):
        """Drop the queued batches, waiting (unless ``wait`` is False) for samples already
        running: they write only into their own batch's buffers."""
        while self._queue:
            batch = self._queue.popleft()
            for future in batch.futures or ():
                future.cancel()
            if wait:
                concurrent.futures.wait([f for f in batch.futures or () if not f.cancelled()])

    def close(self):
        """Cancel the queued work and end the worker threads (waiting for them, except on
        a worker: the owner's last reference may be dropped there, by a sample it prepares)."""
        on_worker = threading.current_thread().name.startswith(self._name)
        self._cancel(wait=not on_worker)
        self._source = iter(())
        pool, self._pool = self._pool, None
        if pool is not None:
            self._finalizer.detach()
            pool.shutdown(wait=not on_worker, cancel_futures=True)
