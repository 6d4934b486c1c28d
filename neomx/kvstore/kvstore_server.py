"""``mx.kvstore.kvstore_server``: :class:`KVStoreServer`, the server side of a distributed job.

In MXNet a process started with ``DMLC_ROLE=server`` (or ``scheduler``) builds a
``KVStoreServer`` when ``mxnet`` is imported and runs it until the job ends. neomx does the
same on import (see :mod:`neomx.kvstore.server_role`); the class is the controller that
does it, for code that drives a server process itself.
"""
import logging
import pickle

from ..base import MXNetError
from .placement import find_place
from .server_role import serve

__all__ = ['KVStoreServer']


class KVStoreServer:
    """The key-value store server of a distributed job.

    Parameters
    ----------
    kvstore : KVStore
        The store whose server role this process plays; server commands (an optimizer sent
        by ``set_optimizer``) are applied to it.

    Example
    -------
    >>> server = mx.kvstore.KVStoreServer(mx.kv.create('local'))
    >>> server.init_logginig = True     # (else the first command configures the root logger)
    >>> control = server._controller()
    >>> import pickle
    >>> control(0, pickle.dumps(mx.optimizer.SGD(learning_rate=0.5)), None)
    >>> server.kvstore._updater.optimizer.lr
    0.5
    """

    def __init__(self, kvstore):
        self.kvstore = kvstore
        self.handle = getattr(kvstore, 'handle', None)
        self.init_logginig = False      # (MXNet's spelling)

    def _controller(self):
        """The function that applies a server command: ``(cmd_id, cmd_body, _)``; command 0
        sets the store's optimizer from its pickled form (sent by a worker of this job)."""
        def server_controller(cmd_id, cmd_body, _):
            if not self.init_logginig:
                head = '%(asctime)-15s Server[' + str(self.kvstore.rank) + '] %(message)s'
                logging.basicConfig(level=logging.DEBUG, format=head)
                self.init_logginig = True
            if cmd_id == 0:
                self.kvstore.set_optimizer(pickle.loads(cmd_body))
            else:
                print('server %d, unknown command (%d, %s)' % (self.kvstore.rank, cmd_id, cmd_body))
        return server_controller

    def run(self):
        """Serve as this process's role (``DMLC_ROLE`` server or scheduler) until every worker
        of the job has finished; returns the exit status (0, or 1 when workers died)."""
        place = find_place()
        if place.role not in ('server', 'scheduler'):
            raise MXNetError('KVStoreServer.run: this process is a %s (DMLC_ROLE=%s); only a server or '
                             'scheduler process serves' % (place.role, place.role if place.source == 'dmlc' else
                                                          'unset'))
        return serve(place)
