"""DataLoader: batches from a dataset, in the main process or in worker processes.

Worker processes are forked, so they inherit the dataset and ``batchify_fn`` without
pickling. Batches are handed to the workers in turn through one pipe each; a worker writes
the arrays of its batch into one of its few shared-memory buffers (anonymous ``memfd``
files that the worker and the main process both map) and replies with a small message: the
batch's structure with each array replaced by its offset, dtype and shape. The main
process copies the arrays out, which frees the buffer for a later batch, and returns them
on the ``cpu_shared(0)`` context as MXNet's loader does. A batch thus costs two small
messages and one copy, however many arrays it holds; a batch larger than its buffer makes
the worker replace that buffer by a larger one and send its descriptor along.
"""
import collections
import functools
import mmap
import multiprocessing
import multiprocessing.connection
import multiprocessing.pool
import os
import pickle
import random
import signal
import threading
import traceback
import weakref
from multiprocessing import reduction

import numpy as np
import torch

from ... import ndarray as nd
from ...base import MXNetValueError, check_batch_size
from ...context import Context, cpu_pinned
from ...util import is_np_array
from ...ndarray.ndarray import NDArray, wrap_tensor
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ['DataLoader', 'default_batchify_fn', 'default_mp_batchify_fn']


def default_batchify_fn(data):
    """Stack a list of samples into a batch.

    NDArrays are stacked; tuples are batched element-wise (giving a list); anything else
    goes through ``numpy.asarray`` and keeps numpy's dtype (Python floats give float64).
    """
    first = data[0]
    if isinstance(first, NDArray):
        if first._is_np_array:      # mx.np samples: an mx.np batch
            return nd.stack(*[d.as_nd_ndarray() for d in data]).as_np_ndarray()
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    data = np.asarray(data)
    batch = nd.array(data, dtype=data.dtype)
    return batch.as_np_ndarray() if is_np_array() else batch


default_mp_batchify_fn = default_batchify_fn


def _load_batch(dataset, batchify_fn, indices):
    return batchify_fn([dataset[i] for i in indices])


def _map_leaves(batch, leaf_type, fn):
    """``batch`` with ``fn`` applied to its leaves of ``leaf_type``, inside lists and tuples."""
    if isinstance(batch, leaf_type):
        return fn(batch)
    if isinstance(batch, (list, tuple)):
        return type(batch)(_map_leaves(b, leaf_type, fn) for b in batch)
    return batch


def _pin(batch, device_id):
    return _map_leaves(batch, NDArray, lambda a: a.as_in_context(cpu_pinned(device_id)))


# ------------------------------------------------------------------ shared memory
_ALIGN = 64                 # bytes; array offsets in a buffer, so that every dtype can view them
_MIN_BUFFER = 1 << 16       # bytes
_SHARED_CTX = Context('cpu_shared', 0)

# Where a worker put one array of a batch: byte offset and size in its buffer, dtype, shape.
_ArrayPlace = collections.namedtuple('_ArrayPlace', 'offset nbytes dtype shape')


class _SharedBuffer:
    """A shared-memory file (by descriptor) mapped into this process, viewed as tensors."""

    def __init__(self, fd, size):
        self.size = size
        self._map = mmap.mmap(fd, size)     # keeps its own duplicate of fd
        self._bytes = torch.frombuffer(self._map, dtype=torch.uint8)

    @classmethod
    def create(cls, min_size):
        """A new buffer of at least ``min_size`` bytes and its descriptor (for the caller to close).

        Sizes are powers of two, so that a slowly growing batch size reallocates rarely.
        """
        size = max(_MIN_BUFFER, 1 << (min_size - 1).bit_length())
        fd = os.memfd_create('neomx-dataloader', os.MFD_CLOEXEC)   # anonymous: nothing to clean up
        os.ftruncate(fd, size)
        return cls(fd, size), fd

    def view(self, place):
        """The array at ``place``, in this buffer's memory."""
        return self._bytes[place.offset:place.offset + place.nbytes].view(place.dtype).view(place.shape)

    def copy(self, place):
        """A private copy of the array at ``place``.

        numpy copies the bytes: a torch copy this large would run on torch's OpenMP threads,
        which then spin for a while on the cores that the workers need.
        """
        out = torch.empty(place.shape, dtype=place.dtype)
        np.copyto(out.view(-1).view(torch.uint8).numpy(),
                  np.frombuffer(self._map, np.uint8, place.nbytes, place.offset))
        return out


class _Layout:
    """Lays the tensors of one batch out one after another, aligned, from offset 0."""

    def __init__(self):
        self.tensors, self.places, self.nbytes = [], [], 0

    def add(self, tensor):
        place = _ArrayPlace(self.nbytes, tensor.numel() * tensor.element_size(), tensor.dtype,
                            tuple(tensor.shape))
        self.nbytes += -(-place.nbytes // _ALIGN) * _ALIGN
        self.tensors.append(tensor)
        self.places.append(place)
        return place


# ------------------------------------------------------------------ worker processes
class _WorkerBuffers:
    """A worker's shared buffers, filled in turn (the main process empties each before the
    worker comes back to it: it never has more tasks in flight with a worker than buffers)."""

    def __init__(self, count):
        self._buffers = [None] * count
        self._turn = 0

    def send(self, conn, task_id, batch):
        """Write the NDArrays of ``batch`` into the next buffer and tell the main process where."""
        layout = _Layout()
        structure = _map_leaves(batch, NDArray, lambda a: layout.add(a._t))
        slot = self._turn % len(self._buffers)
        buffer, new_fd = self._buffers[slot], None
        if buffer is None or buffer.size < layout.nbytes:
            buffer, new_fd = _SharedBuffer.create(layout.nbytes)
        for tensor, place in zip(layout.tensors, layout.places):
            buffer.view(place).copy_(tensor)
        try:
            conn.send((task_id, slot, structure, None if new_fd is None else buffer.size))
            if new_fd is not None:
                reduction.send_handle(conn, new_fd, os.getppid())
        finally:
            if new_fd is not None:
                os.close(new_fd)
        self._buffers[slot] = buffer
        self._turn += 1


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a DataLoader worker (the cause of the re-raised
    exception in the main process)."""

    def __str__(self):
        return '\n' + self.args[0]


class _WorkerError:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, err):
        self._text = ''.join(traceback.format_exception(err))
        self._summary = '%s: %s' % (type(err).__name__, err)
        try:
            self._pickled = pickle.dumps(err)
        except Exception:                       # pylint: disable=broad-except
            self._pickled = None

    def reraise(self):
        """Raise the worker's exception here (a RuntimeError when it cannot be rebuilt)."""
        try:
            err = pickle.loads(self._pickled)
        except Exception:                       # pylint: disable=broad-except
            err = RuntimeError('DataLoader worker raised %s' % self._summary)
        raise err from WorkerTraceback(self._text)


_ORPHAN_CHECK_S = 1.0       # how often an idle worker checks that the main process is alive


def _seed_worker(index):
    """Give each worker its own random streams, derived from the main process's torch seed
    (forked workers would otherwise repeat each other's random augmentations)."""
    seed = (torch.initial_seed() + index + 1) % (1 << 32)
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def _worker_loop(index, dataset, batchify_fn, conn, buffer_count, parent_pid):
    """A worker process: load the batches asked for on ``conn`` until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is for the main process to handle
    torch.set_num_threads(1)                        # the workers are the parallelism
    # A forked process cannot use CUDA: arrays made here live on the CPU even when the main
    # process works on a GPU (MXNet's workers also batch into CPU memory).
    Context._default.value = Context('cpu', 0)
    _seed_worker(index)
    buffers = _WorkerBuffers(buffer_count)
    while True:
        if not conn.poll(_ORPHAN_CHECK_S):
            if os.getppid() != parent_pid:
                return
            continue
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        task_id, indices = task
        try:
            buffers.send(conn, task_id, _load_batch(dataset, batchify_fn, indices))
        except Exception as err:                # pylint: disable=broad-except
            conn.send((task_id, None, _WorkerError(err), None))


_JOIN_S = 5.0               # seconds a stopping worker gets before it is terminated


class _WorkerProcess:
    """The main process's side of one worker: the process, its pipe, the tasks in flight with
    it and its buffers mapped here."""

    def __init__(self, context, index, dataset, batchify_fn, buffer_count):
        self._conn, worker_end = context.Pipe()
        self._process = context.Process(
            target=_worker_loop, name='neomx-dataloader-worker-%d' % index, daemon=True,
            args=(index, dataset, batchify_fn, worker_end, buffer_count, os.getpid()))
        self._process.start()
        worker_end.close()      # the worker holds the only copy: its exit reads as EOF here
        self._buffers = [None] * buffer_count
        self.in_flight = collections.deque()

    def send(self, task_id, indices):
        try:
            self._conn.send((task_id, indices))
        except OSError:         # a broken pipe: the worker is gone
            raise self._death() from None
        self.in_flight.append(task_id)

    def receive(self, timeout):
        """The next finished task of this worker: ``(task id, batch or _WorkerError)``.

        Raises
        ------
        multiprocessing.TimeoutError
            Nothing came within ``timeout`` seconds.
        RuntimeError
            The worker process died.
        """
        if not self._conn.poll() and not multiprocessing.connection.wait(
                [self._conn, self._process.sentinel], timeout):
            raise multiprocessing.TimeoutError
        try:
            task_id, slot, structure, new_size = self._conn.recv()
            if new_size is not None:
                fd = reduction.recv_handle(self._conn)
                self._buffers[slot] = _SharedBuffer(fd, new_size)
                os.close(fd)
        except (EOFError, OSError):     # end of file, or reset when it died with tasks unread
            raise self._death() from None
        self.in_flight.popleft()
        if slot is None:
            return task_id, structure
        buffer = self._buffers[slot]
        return task_id, _map_leaves(structure, _ArrayPlace,
                                    lambda place: wrap_tensor(buffer.copy(place), _SHARED_CTX))

    def _death(self):
        self._process.join(_JOIN_S)
        return RuntimeError('DataLoader worker (pid %d) exited unexpectedly with code %s'
                            % (self._process.pid, self._process.exitcode))

    def stop(self):
        """End the process: politely when idle, by SIGTERM when its batches are no longer wanted."""
        if self.in_flight:
            self._process.terminate()
        else:
            try:
                self._conn.send(None)
            except OSError:     # already gone
                pass
        self._process.join(_JOIN_S)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._process.close()
        self._conn.close()


class _PendingBatch:
    """A batch submitted to a :class:`_ProcessPool`; dropping it unread abandons it."""
    __slots__ = ('_pool', '_task_id')

    def __init__(self, pool, task_id):
        self._pool, self._task_id = pool, task_id

    def get(self, timeout):
        return self._pool.result(self._task_id, timeout)

    def __del__(self):
        self._pool.abandon(self._task_id)


class _ProcessPool:
    """Forked worker processes computing batches, each task given to the workers in turn.

    Every worker answers in the order it was asked, so a task's result is read from its
    worker's pipe; results of other tasks read on the way are kept for their askers (or
    dropped, for abandoned tasks).
    """

    def __init__(self, dataset, batchify_fn, num_workers, buffers_per_worker, timeout):
        context = multiprocessing.get_context('fork')
        self._workers = [_WorkerProcess(context, i, dataset, batchify_fn, buffers_per_worker)
                         for i in range(num_workers)]
        self._buffers_per_worker = buffers_per_worker
        self._timeout = timeout
        self._submitted = 0
        self._finished = {}         # task id -> result read before it was asked for
        self._abandoned = set()     # tasks in flight whose results nobody will ask for
        self._lock = threading.RLock()    # re-entrant: abandon() runs from __del__, at any time

    def submit(self, indices):
        """Ask the next worker in turn for the batch of ``indices``: a :class:`_PendingBatch`."""
        with self._lock:
            task_id = self._submitted
            worker = self._worker_of(task_id)
            while len(worker.in_flight) >= self._buffers_per_worker:    # its buffers are all full
                self._keep(*worker.receive(self._timeout))
            worker.send(task_id, indices)
            self._submitted += 1
        return _PendingBatch(self, task_id)

    def result(self, task_id, timeout):
        """The batch of task ``task_id``; re-raises the worker's exception if it failed."""
        with self._lock:
            worker = self._worker_of(task_id)
            while task_id not in self._finished:
                self._keep(*worker.receive(timeout))
            result = self._finished.pop(task_id)
        if isinstance(result, _WorkerError):
            result.reraise()
        return result

    def abandon(self, task_id):
        """Forget task ``task_id`` (a no-op once its result was taken)."""
        with self._lock:
            if task_id in self._finished:
                del self._finished[task_id]
            elif task_id in self._worker_of(task_id).in_flight:
                self._abandoned.add(task_id)

    def close(self):
        for worker in self._workers:
            worker.stop()

    def _worker_of(self, task_id):
        return self._workers[task_id % len(self._workers)]

    def _keep(self, task_id, result):
        if task_id in self._abandoned:
            self._abandoned.remove(task_id)
        else:
            self._finished[task_id] = result


class _ThreadPool:
    """Threads computing batches (the dataset is shared, nothing is copied)."""

    def __init__(self, dataset, batchify_fn, num_workers):
        self._pool = multiprocessing.pool.ThreadPool(num_workers)
        self._load = functools.partial(_load_batch, dataset, batchify_fn)

    def submit(self, indices):
        return self._pool.apply_async(self._load, (indices,))

    def close(self):
        self._pool.terminate()


class _MultiWorkerIter:
    """Iterates over batches computed by a pool, keeping ``prefetch`` requests in flight."""

    def __init__(self, loader, pool, batch_sampler, pin_device_id, prefetch, timeout):
        self._loader = loader       # keeps the loader, and so its pool, alive while iterating
        self._pool = pool
        self._pin_device_id = pin_device_id
        self._timeout = timeout
        self._iter = iter(batch_sampler)
        self._np_arrays = is_np_array()
        self._pending = collections.deque()
        for _ in range(prefetch):
            self._push_next()

    def _push_next(self):
        indices = next(self._iter, None)
        if indices is not None:
            self._pending.append(self._pool.submit(indices))

    def __iter__(self):
        return self

    def __next__(self):
        try:
            self._push_next()
            if not self._pending:
                raise StopIteration
            batch = self._pending.popleft().get(self._timeout)
        except multiprocessing.TimeoutError:
            raise multiprocessing.TimeoutError(
                'DataLoader worker timed out after %s seconds: the dataset or its transform is too slow '
                'for this timeout (raise DataLoader(timeout=...))' % self._timeout) from None
        if self._np_arrays:     # workers build legacy arrays; the loader was made under set_np()
            batch = _map_leaves(batch, NDArray, lambda a: a if a._is_np_array else a.as_np_ndarray())
        return batch if self._pin_device_id is None else _pin(batch, self._pin_device_id)

    next = __next__


class DataLoader:
    """Load batches from a dataset.

    Parameters
    ----------
    dataset : Dataset
    batch_size : int
        Required unless ``batch_sampler`` is given.
    shuffle : bool
        Random order each epoch (not with ``sampler``).
    sampler : Sampler, optional
        The order of the samples.
    last_batch : {'keep', 'discard', 'rollover'}, optional
        Handling of the incomplete last batch (default 'keep'); checked when iterated.
    batch_sampler : Sampler, optional
        Yields lists of indices; excludes ``batch_size``, ``shuffle``, ``sampler``, ``last_batch``.
    batchify_fn : callable, optional
        Merges a list of samples into a batch (default: :func:`default_batchify_fn`).
    num_workers : int
        Worker processes (0: load in the calling thread). Each worker has its own random
        streams, seeded from the main process's torch seed and the worker's index.
    pin_memory : bool
        Return batches on the ``cpu_pinned(pin_device_id)`` context.
    pin_device_id : int
    prefetch : int, optional
        Batches requested ahead from the workers (default ``2 * num_workers``).
    thread_pool : bool
        Use threads instead of processes.
    timeout : float
        Seconds to wait for a worker's batch.
    auto_reload : bool
        Start the worker processes at construction rather than at the first iteration (the
        pool serves every epoch either way).
    try_nopython : bool, optional
        Accepted for compatibility (MXNet's C++ loader for hybridized transforms); ignored.

    Notes
    -----
    The workers start at the first iteration and serve every later epoch; they stop when
    the DataLoader is garbage-collected or the interpreter exits. An exception in a worker is
    raised again by the iteration, caused by a :class:`WorkerTraceback` holding the worker's
    traceback.

    Example
    -------
    >>> dataset = mx.gluon.data.ArrayDataset(mx.nd.arange(10).reshape((5, 2)), np.arange(5))
    >>> loader = mx.gluon.data.DataLoader(dataset, batch_size=2, last_batch='keep')
    >>> [(x.shape, y.asnumpy().tolist()) for x, y in loader]
    [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False, try_nopython=None):
        self._dataset = dataset
        self._pin_device_id = pin_device_id if pin_memory else None
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._try_nopython = try_nopython
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError('batch_size must be specified unless batch_sampler is specified')
            check_batch_size(batch_size, 'DataLoader', MXNetValueError)
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError('shuffle must not be specified if sampler is specified')
            batch_sampler = BatchSampler(sampler, batch_size, last_batch if last_batch else 'keep')
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError('batch_size, shuffle, sampler and last_batch must not be specified if '
                             'batch_sampler is specified.')
        self._batch_sampler = batch_sampler
        self._num_workers = max(int(num_workers), 0)
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn = batchify_fn or default_batchify_fn
        self._pool = None
        self._pool_lock = threading.Lock()
        self._auto_reload = auto_reload
        if auto_reload and self._num_workers > 0:
            self._worker_pool()         # MXNet starts the workers right away with auto_reload

    def _worker_pool(self):
        """The pool, created at the first multi-worker iteration and kept for later epochs."""
        with self._pool_lock:
            if self._pool is None:
                if self._thread_pool:
                    self._pool = _ThreadPool(self._dataset, self._batchify_fn, self._num_workers)
                else:
                    # An iteration has at most prefetch + 1 batches in flight, dealt in turn.
                    buffers = -(-(self._prefetch + 1) // self._num_workers)
                    self._pool = _ProcessPool(self._dataset, self._batchify_fn, self._num_workers,
                                              buffers, self._timeout)
                weakref.finalize(self, self._pool.close)
            return self._pool

    def __iter__(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        return _MultiWorkerIter(self, self._worker_pool(), self._batch_sampler, self._pin_device_id,
                                self._prefetch, self._timeout)

    def _same_process_iter(self):
        for indices in self._batch_sampler:
            batch = _load_batch(self._dataset, self._batchify_fn, indices)
            yield batch if self._pin_device_id is None else _pin(batch, self._pin_device_id)

    def __len__(self):
        return len(self._batch_sampler)
