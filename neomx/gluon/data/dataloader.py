"""DataLoader: batches from a dataset, in the main process or in worker processes.

Worker processes are forked (the dataset is inherited, never pickled) and return each
batch's arrays through shared memory: the worker hands the torch tensors behind its
NDArrays to ``torch.multiprocessing``'s pickler, which moves their storage into shared
memory and sends only a handle; the main process wraps them back into NDArrays on the
``cpu_shared(0)`` context, as MXNet's loader does.
"""
import multiprocessing
import multiprocessing.pool
import threading

import numpy as np
import torch
import torch.multiprocessing  # noqa: F401  (registers shared-memory pickling of tensors)

from ... import ndarray as nd
from ...context import Context, cpu_pinned
from ...ndarray.ndarray import NDArray, _new
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ['DataLoader', 'default_batchify_fn', 'default_mp_batchify_fn']


def default_batchify_fn(data):
    """Stack a list of samples into a batch.

    NDArrays are stacked; tuples are batched element-wise (giving a list); anything else
    goes through ``numpy.asarray`` and keeps numpy's dtype (Python floats give float64).
    """
    first = data[0]
    if isinstance(first, NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype)


default_mp_batchify_fn = default_batchify_fn


class _SharedTensor:
    """An NDArray's tensor on its way from a worker; torch pickles it as a shared-memory handle."""
    __slots__ = ('tensor',)

    def __init__(self, tensor):
        self.tensor = tensor

    def __reduce__(self):
        return _SharedTensor, (self.tensor,)


def _to_shared(batch):
    if isinstance(batch, NDArray):
        return _SharedTensor(batch._t.detach())
    if isinstance(batch, (list, tuple)):
        return type(batch)(_to_shared(b) for b in batch)
    return batch


_SHARED_CTX = Context('cpu_shared', 0)


def _from_shared(batch):
    if isinstance(batch, _SharedTensor):
        return _new(batch.tensor, _SHARED_CTX)
    if isinstance(batch, (list, tuple)):
        return type(batch)(_from_shared(b) for b in batch)
    return batch


def _pin(batch, device_id):
    if isinstance(batch, NDArray):
        return batch.as_in_context(cpu_pinned(device_id))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_pin(b, device_id) for b in batch)
    return batch


# State of a worker process (set once by the pool's initializer; fork passes it without pickling).
_worker_dataset = None
_worker_batchify_fn = None


def _worker_init(dataset, batchify_fn):
    global _worker_dataset, _worker_batchify_fn  # pylint: disable=global-statement
    _worker_dataset, _worker_batchify_fn = dataset, batchify_fn
    torch.set_num_threads(1)        # workers are parallel already; avoid oversubscription
    # Name shared memory by file rather than passing descriptors over sockets: a tensor then
    # costs one shm file instead of a connection to the worker's resource sharer.
    torch.multiprocessing.set_sharing_strategy('file_system')


def _worker_batch(indices):
    """Run in a worker process: one batch, its arrays made shareable."""
    return _to_shared(_worker_batchify_fn([_worker_dataset[i] for i in indices]))


class _ThreadWorker:
    """The batch function for thread pools (the dataset is shared, no copies needed)."""

    def __init__(self, dataset, batchify_fn):
        self._dataset, self._batchify_fn = dataset, batchify_fn

    def __call__(self, indices):
        return self._batchify_fn([self._dataset[i] for i in indices])


class _MultiWorkerIter:
    """Iterates over batches computed by a pool, keeping ``prefetch`` requests in flight."""

    def __init__(self, loader, pool, batch_fn, unpack, batch_sampler, pin_memory, pin_device_id, prefetch,
                 timeout):
        self._loader = loader       # keeps the loader, and so its pool, alive while iterating
        self._pool, self._batch_fn, self._unpack = pool, batch_fn, unpack
        self._pin_memory, self._pin_device_id = pin_memory, pin_device_id
        self._timeout = timeout
        self._iter = iter(batch_sampler)
        self._pending = {}
        self._sent = self._received = 0
        for _ in range(prefetch):
            self._push_next()

    def _push_next(self):
        indices = next(self._iter, None)
        if indices is None:
            return
        self._pending[self._sent] = self._pool.apply_async(self._batch_fn, (indices,))
        self._sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        self._push_next()
        if self._received == self._sent:
            assert not self._pending, 'Data buffer should be empty at this moment'
            raise StopIteration
        result = self._pending.pop(self._received)
        try:
            batch = self._unpack(result.get(self._timeout))
        except multiprocessing.TimeoutError:
            raise multiprocessing.TimeoutError(
                'DataLoader worker timed out after %s seconds: the dataset or its transform is too slow '
                'for this timeout (raise DataLoader(timeout=...))' % self._timeout) from None
        self._received += 1
        return _pin(batch, self._pin_device_id) if self._pin_memory else batch

    next = __next__


def _identity(batch):
    return batch


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
        Worker processes (0: load in the calling thread).
    pin_memory : bool
        Return batches on the ``cpu_pinned(pin_device_id)`` context.
    pin_device_id : int
    prefetch : int, optional
        Batches requested ahead from the workers (default ``2 * num_workers``).
    thread_pool : bool
        Use threads instead of processes.
    timeout : float
        Seconds to wait for a worker's batch.
    try_nopython : bool, optional
        Accepted for compatibility (MXNet's C++ loader for hybridized transforms); ignored.
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, try_nopython=None):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._try_nopython = try_nopython
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError('batch_size must be specified unless batch_sampler is specified')
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

    def _worker_pool(self):
        """The pool, created at the first multi-worker iteration and kept for later epochs."""
        with self._pool_lock:
            if self._pool is None:
                if self._thread_pool:
                    self._pool = multiprocessing.pool.ThreadPool(self._num_workers)
                else:
                    self._pool = multiprocessing.get_context('fork').Pool(
                        self._num_workers, initializer=_worker_init,
                        initargs=(self._dataset, self._batchify_fn))
            return self._pool

    def __iter__(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        pool = self._worker_pool()
        if self._thread_pool:
            batch_fn, unpack = _ThreadWorker(self._dataset, self._batchify_fn), _identity
        else:
            batch_fn, unpack = _worker_batch, _from_shared
        return _MultiWorkerIter(self, pool, batch_fn, unpack, self._batch_sampler, self._pin_memory,
                                self._pin_device_id, self._prefetch, self._timeout)

    def _same_process_iter(self):
        for indices in self._batch_sampler:
            batch = self._batchify_fn([self._dataset[i] for i in indices])
            yield _pin(batch, self._pin_device_id) if self._pin_memory else batch

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        pool = getattr(self, '_pool', None)
        if pool is not None:
            pool.terminate()
