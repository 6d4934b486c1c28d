"""``mx.kv.KVStoreBase``: the interface every key-value store implements, its plugin registry
and :func:`create`, which turns a type name into a store.

Names are read as MXNet 1.9.1 reads them, by substring: a name containing ``dist`` makes a
distributed store -- asynchronous when it contains ``_async``, synchronous otherwise
(``dist``, ``dist_sync``, ``dist_sync_device``, ``dist_device_sync``), summing on the
devices when it contains ``device``; ``horovod`` and ``byteps`` are allreduce-style
stores; ``nccl`` sums over local GPUs; any other name is a single-process store, on the
devices when it contains ``device``. A class registered with :meth:`KVStoreBase.register`
is found first, by its lower-cased class name.

Example
-------
>>> import neomx as mx
>>> @mx.kv.KVStoreBase.register
... class MyStore(mx.kv.KVStoreBase):
...     pass
>>> type(mx.kv.create('MyStore')).__name__
'MyStore'
"""
import warnings

__all__ = ['KVStoreBase', 'create', 'TestStore']


class KVStoreBase:
    """What a key-value store provides (MXNet 1.9.1's ``kvstore.base.KVStoreBase``).

    A plugin store subclasses this, implements ``broadcast``, ``pushpull``, ``is_capable``,
    ``type``, ``rank`` and ``num_workers`` (and the optimizer-state methods if it can run an
    optimizer), and registers itself with :meth:`register`.

    Example
    -------
    >>> kv = mx.kv.create('local')
    >>> isinstance(kv, mx.kv.KVStoreBase), kv.type, kv.rank, kv.num_workers
    (True, 'local', 0, 1)
    >>> kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)
    True
    >>> kv.broadcast('w', mx.nd.ones(2) * 5, out=mx.nd.zeros(2))
    >>> out = mx.nd.zeros(2)
    >>> kv.pushpull('w', [mx.nd.ones(2), mx.nd.ones(2)], out=out)     # summed over the list
    >>> out
    <BLANKLINE>
    [2. 2.]
    <NDArray 2 @cpu(0)>
    """
    OPTIMIZER = 'optimizer'
    kv_registry = {}

    def broadcast(self, key, value, out, priority=0):
        """Broadcast ``value`` of rank 0 to every worker, into ``out``."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` over devices and workers and write the sum to ``out`` (or ``value``)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` in the store: pushed values are then gradients."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        raise NotImplementedError()

    @property
    def type(self):
        """The type name of the store."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank, in ``[0, num_workers)``."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register ``klass`` so that ``create(klass.__name__)`` (any case) makes one.

        Registering a name again replaces the earlier class, with a warning (as MXNet).
        """
        if not isinstance(klass, type):
            raise AssertionError('KVStoreBase.register expects a class, got %r' % (klass,))
        name = klass.__name__.lower()
        old = KVStoreBase.kv_registry.get(name)
        if old is not None:
            warnings.warn('WARNING: New kvstore %s.%s is overriding existing kvstore %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A single-process store without optimizer support, for tests (MXNet's ``teststore``).

    Example
    -------
    >>> kv = mx.kv.create('teststore')
    >>> type(kv).__name__, kv.is_capable('optimizer')
    ('TestStore', False)
    >>> values = [mx.nd.ones(2), mx.nd.array([1, 2])]
    >>> kv.pushpull(0, values)                  # every value becomes the sum
    >>> values[1]
    <BLANKLINE>
    [2. 3.]
    <NDArray 2 @cpu(0)>
    """

    def broadcast(self, key, value, out, priority=0):
        for o in out if isinstance(out, (list, tuple)) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        if not isinstance(value, (list, tuple)):
            if out is not None:
                for o in out if isinstance(out, (list, tuple)) else [out]:
                    o[:] = value
            return
        ctx = value[0].context
        reduced = value[0].as_in_context(ctx).copy()
        for v in value[1:]:
            reduced += v.as_in_context(ctx)
        targets = value if out is None else (out if isinstance(out, (list, tuple)) else [out])
        for o in targets:
            o[:] = reduced

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError('Unknown capability: {}'.format(capability))

    @property
    def type(self):
        return 'teststore'

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1
