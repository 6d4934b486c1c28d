"""Training checkpoints a lost worker can resume from, and the data order that makes it exact.

A checkpoint of step ``(epoch, batch)`` is a set of files in one folder (a local path or a
URL): ``<prefix>-<epoch>-<batch>.params`` (the parameters, MXNet's format), ``.states``
(the trainer's optimizer states), ``.rng<rank>`` (each worker's random generators) and last
``.json`` (epoch, batch, position in the epoch's data, world size, the files and their
sizes). Every file is written atomically and the ``.json`` only once the others are
complete, so a checkpoint without its ``.json`` (a writer killed midway) is ignored: the
newest complete one is what :meth:`Checkpointer.restore` loads. Rank 0 writes the shared
files; every rank writes its own generators.

:class:`EpochShards` gives every worker its part of an epoch's shuffled order and can
start the epoch at any position, for any number of workers: a run resumed with fewer (or
more) workers re-shards what is left of the epoch.

Example
-------
>>> import tempfile, neomx as mx
>>> net = mx.gluon.nn.Dense(2, in_units=3)
>>> net.initialize()
>>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
>>> tmp = tempfile.TemporaryDirectory()
>>> Checkpointer(tmp.name, net, trainer).save(epoch=0, batch=5, position=320)
>>> Checkpointer(tmp.name, net, trainer).restore()['position']
320
>>> tmp.cleanup()
"""
import json
import re

import numpy as np

from .. import _fileio, _rng_state
from ..base import MXNetError
from ..ndarray import utils as nd_utils

__all__ = ['Checkpointer', 'EpochShards']

_FORMAT = 1


class EpochShards:
    """Each worker's sample indices of an epoch: a shuffled order shared by all workers.

    Epoch ``e``'s order is a permutation of ``num_samples`` drawn from ``seed + e`` (the
    same on every worker); from global position ``start`` on, worker ``rank`` of
    ``num_workers`` takes every ``num_workers``-th index. After every worker has read ``b``
    batches of ``batch_size``, the epoch's position is ``start + b * batch_size * num_workers``.

    Example
    -------
    >>> shards = EpochShards(10, seed=0)
    >>> a, b = shards.indices(0, rank=0, num_workers=2), shards.indices(0, rank=1, num_workers=2)
    >>> sorted(list(a) + list(b)) == list(range(10))
    True
    >>> list(shards.indices(0, 0, 1, start=4)) == list(shards.order(0)[4:])
    True
    """

    def __init__(self, num_samples, seed=0, shuffle=True):
        self.num_samples = num_samples
        self.seed = seed
        self.shuffle = shuffle

    def order(self, epoch):
        """The epoch's order of all the samples."""
        if not self.shuffle:
            return np.arange(self.num_samples)
        return np.random.RandomState(self.seed + epoch).permutation(self.num_samples)

    def indices(self, epoch, rank=0, num_workers=1, start=0):
        """The indices worker ``rank`` reads in ``epoch`` from global position ``start``."""
        if not 0 <= rank < num_workers:
            raise MXNetError('EpochShards: rank %d is not in [0, num_workers=%d)' % (rank, num_workers))
        return self.order(epoch)[start:][rank::num_workers]


class Checkpointer:
    """Save and restore training checkpoints (see the module docstring for the files).

    Parameters
    ----------
    directory : str
        Folder or URL of the checkpoints (created when local).
    net : Block
    trainer : Trainer, optional
    rank, num_workers : int
        This worker and the world size (``kv.rank``, ``kv.num_workers``).
    prefix : str
    keep : int
        Complete checkpoints kept; rank 0 deletes older ones.

    Example
    -------
    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> net = mx.gluon.nn.Dense(1, in_units=2)
    >>> net.initialize(mx.init.One())
    >>> checkpointer = mx.gluon.checkpoint.Checkpointer(folder.name, net)
    >>> checkpointer.save(epoch=1, batch=10)
    >>> net.weight.set_data(mx.nd.zeros((1, 2)))          # training goes on, then a worker is lost
    >>> meta = checkpointer.restore()
    >>> meta['epoch'], meta['batch']
    (1, 10)
    >>> net.weight.data()
    <BLANKLINE>
    [[1. 1.]]
    <NDArray 1x2 @cpu(0)>
    >>> folder.cleanup()
    """

    def __init__(self, directory, net, trainer=None, rank=0, num_workers=1, prefix='checkpoint', keep=2):
        self.directory = str(directory)
        self.net = net
        self.trainer = trainer
        self.rank = rank
        self.num_workers = num_workers
        self.prefix = prefix
        self.keep = keep
        self._pattern = re.compile(r'%s-(\d+)-(\d+)\.json$' % re.escape(prefix))
        _fileio.makedirs(self.directory)

    def _path(self, epoch, batch, suffix):
        return _fileio.join(self.directory, '%s-%04d-%08d.%s' % (self.prefix, epoch, batch, suffix))

    def save(self, epoch, batch, position=0, extra=None):
        """Checkpoint the state after ``batch`` batches of ``epoch`` (``position`` samples read).

        ``extra`` is a JSON-serialisable dict stored with it (e.g. metrics).
        """
        nd_utils.save(self._path(epoch, batch, 'rng%d' % self.rank), _rng_state.capture())
        if self.rank != 0:
            return
        files = {'params': self._path(epoch, batch, 'params')}
        self.net.save_parameters(files['params'])
        if self.trainer is not None:
            files['states'] = self._path(epoch, batch, 'states')
            self.trainer.save_states(files['states'])
        meta = {'format': _FORMAT, 'epoch': epoch, 'batch': batch, 'position': position,
                'num_workers': self.num_workers, 'extra': extra or {},
                'files': {kind: {'name': path.rsplit('/', 1)[-1], 'size': _fileio.size(path)}
                          for kind, path in files.items()}}
        _fileio.write_atomic(self._path(epoch, batch, 'json'), [json.dumps(meta, indent=1).encode('utf-8')])
        self._prune()

    def _complete(self):
        """(epoch, batch, meta) of the complete checkpoints, newest first."""
        found = []
        for name in _fileio.listdir(self.directory):
            match = self._pattern.match(name)
            if match is None:
                continue
            epoch, batch = int(match.group(1)), int(match.group(2))
            try:
                with _fileio.open_for_read(self._path(epoch, batch, 'json'), 'r') as f:
                    meta = json.load(f)
            except (MXNetError, ValueError):
                continue
            if all(_fileio.size(_fileio.join(self.directory, entry['name'])) == entry['size']
                   for entry in meta.get('files', {}).values()):
                found.append((epoch, batch, meta))
        return sorted(found, key=lambda item: item[:2], reverse=True)

    def _prune(self):
        for epoch, batch, meta in self._complete()[self.keep:]:
            _fileio.remove(self._path(epoch, batch, 'json'))      # first: it marks the checkpoint complete
            for entry in meta['files'].values():
                _fileio.remove(_fileio.join(self.directory, entry['name']))
            for rank in range(max(meta['num_workers'], self.num_workers)):
                _fileio.remove(self._path(epoch, batch, 'rng%d' % rank))

    def latest(self):
        """The metadata of the newest complete checkpoint, or None."""
        complete = self._complete()
        return complete[0][2] if complete else None

    def restore(self, ctx=None):
        """Load the newest complete checkpoint into the net, trainer and generators.

        Returns its metadata (``epoch``, ``batch``, ``position``, ``num_workers``, ``extra``),
        or None when there is no checkpoint. This worker's generators are restored when the
        checkpoint has them (same rank, same world size); otherwise they are left as they are.
        """
        meta = self.latest()
        if meta is None:
            return None
        epoch, batch = meta['epoch'], meta['batch']
        self.net.load_parameters(_fileio.join(self.directory, meta['files']['params']['name']), ctx=ctx)
        if self.trainer is not None and 'states' in meta['files']:
            self.trainer.load_states(_fileio.join(self.directory, meta['files']['states']['name']))
        rng = self._path(epoch, batch, 'rng%d' % self.rank)
        if meta['num_workers'] == self.num_workers and _fileio.exists(rng):
            _rng_state.restore(nd_utils.load(rng))
        return meta
