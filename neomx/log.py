"""``mx.log``: loggers with MXNet's compact, coloured line format
(``W0505 00:29:47 3525 file.py:func:12] message``)."""
import logging
import warnings

__all__ = ['CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG', 'NOTSET', 'getLogger', 'get_logger']

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: 'C', ERROR: 'E', WARNING: 'W', INFO: 'I', DEBUG: 'D'}


class _Formatter(logging.Formatter):
    """One letter for the level, then date, process, place and message; red for warnings
    and worse, green for info, blue below."""

    def __init__(self):
        super().__init__(datefmt='%m%d %H:%M:%S')

    @staticmethod
    def _color(level):
        if level >= WARNING:
            return '\x1b[31m'
        return '\x1b[32m' if level >= INFO else '\x1b[34m'

    def format(self, record):
        self._style._fmt = (self._color(record.levelno) + _LABELS.get(record.levelno, 'U') +
                            '%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m'
                            ' %(message)s')
        return super().format(record)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """A logger named ``name``; the first call for a name gives it a handler (a file
    ``filename`` opened with ``filemode``, default 'a', else the coloured console format)
    and sets its ``level``.

    >>> import neomx as mx
    >>> logger = mx.log.get_logger('neomx.doc', level=mx.log.INFO)
    >>> logger.level == mx.log.INFO
    True
    """
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, '_init_done', None):
        logger._init_done = True
        if filename:
            handler = logging.FileHandler(filename, filemode or 'a')
        else:
            handler = logging.StreamHandler()
            handler.setFormatter(_Formatter())
        logger.addHandler(handler)
        logger.setLevel(level)
    return logger


def getLogger(name=None, filename=None, filemode=None, level=WARNING):
    """Deprecated spelling of :func:`get_logger`."""
    warnings.warn('getLogger is deprecated, Use get_logger instead.', DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)
